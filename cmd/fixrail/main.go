// Command fixrail takes untrusted bug reports to draft pull requests through
// rails an agent cannot step around. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fixrail/fixrail/internal/cli"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

func main() {
	// Inside a sandbox, fixrail runs as the agent's egress forwarder.
	egress.MaybeForward()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
