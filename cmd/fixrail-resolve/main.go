// Command fixrail-resolve is `fixrail resolve-version` alone: the same
// arguments, output and exit codes, in a binary that links only the version
// decision and its OSV and deps.dev clients, for a caller that starts one
// process per package. See `fixrail help resolve-version`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := resolvecmd.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
