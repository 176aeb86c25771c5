// Command fixrail-hook is `fixrail hook` alone: the same flags and decisions,
// in a binary that links only the hook engine, so the agent CLI's per-call
// start-up stays small. Register it with `fixrail hook install --print
// --bin /path/to/fixrail-hook`.
package main

import (
	"os"

	"github.com/fixrail/fixrail/internal/cli/hookcmd"
	_ "github.com/fixrail/fixrail/internal/hookstart" // one processor, one stack growth, first
)

func main() {
	os.Exit(hookcmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
