// Package cli is fixrail's command line: the command table, flag parsing,
// rendering and the one mapping from outcomes to exit codes. Commands write
// only to the injected streams.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fixrail/fixrail/internal/untrusted"
)

// Stdio is the three streams a command may use.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// command is one subcommand, in the manner of cmd/go's base.Command.
type command struct {
	Name  string
	Usage string // arguments after the name
	Short string
	Long  string
	// Flags builds the command's flag set, for help output; nil if none.
	Flags func() *flag.FlagSet
	Run   func(ctx context.Context, io Stdio, args []string) error
}

func commands() []*command {
	return []*command{cmdRun, cmdDemo, cmdScan, cmdDoctor, cmdBudget, cmdRedact, cmdHook, cmdMCP, cmdApprove, cmdReceipts, cmdUnpoison, cmdClose, cmdVerify, cmdResolveVersion, cmdLint, cmdInit, cmdVersion}
}

// Main runs fixrail with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	// What a person reads goes through one escape: no line, error or
	// warning carries a raw control to the terminal, wherever it was
	// formatted. A stream that is data (redact's text, the hook's and the
	// MCP server's protocol) is passed through untouched.
	errw := untrusted.NewWriter(stdio.Stderr)
	defer errw.Flush()
	stdio.Stderr = errw
	if len(args) == 0 || !dataStdout[args[0]] {
		outw := untrusted.NewWriter(stdio.Stdout)
		defer outw.Flush()
		stdio.Stdout = outw
	}
	if len(args) == 0 {
		usage(stdio.Stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				commandHelp(stdio.Stdout, c)
				return exitOK
			}
		}
		usage(stdio.Stdout)
		return exitOK
	case "-version", "--version":
		args = []string{"version"}
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stdio.Stderr, "fixrail: unknown command %q\n\n", args[0])
		usage(stdio.Stderr)
		return exitUsage
	}
	if len(args) > 1 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help") {
		// The whole help, even for a command whose first argument is a
		// subcommand (receipts, hook install).
		commandHelp(stdio.Stdout, c)
		return exitOK
	}
	err := c.Run(ctx, stdio, args[1:])
	code := exitCode(err)
	if msg := errorMessage(err); msg != "" {
		fmt.Fprintf(stdio.Stderr, "fixrail %s: %s\n", c.Name, msg)
		if code == exitUsage && errors.As(err, new(*usageError)) {
			fmt.Fprintf(stdio.Stderr, "run 'fixrail help %s' for usage\n", c.Name)
		}
	}
	return code
}

// dataStdout are the commands whose stdout is data or a protocol, not text
// for a person: it is not escaped.
var dataStdout = map[string]bool{"redact": true, "hook": true, "mcp": true}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `fixrail takes an untrusted bug report to a draft pull request through
rails the agent cannot step around, and ends every run in one honest state.

Usage:
  fixrail <command> [flags]

Commands:
`)
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.Name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Short)
	}
	fmt.Fprint(w, `
Run 'fixrail help <command>' for a command's flags.

Exit codes:
  0  success / DRAFT-PR     3  HALT        5  ESCALATE / found something
  1  internal error         4  NOT-REPRO
  2  usage error / hook blocks the call
`)
}

func commandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: fixrail %s %s\n\n%s\n", c.Name, c.Usage, strings.TrimSpace(c.Long))
	if c.Flags != nil {
		fs := c.Flags()
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// parseFlags parses args with fs, reporting errors as usage errors and
// sending -h output to the right stream.
func parseFlags(fs *flag.FlagSet, stdio Stdio, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdio.Stdout)
			fmt.Fprintf(stdio.Stdout, "Usage of fixrail %s:\n", fs.Name())
			fs.PrintDefaults()
			return errHelpShown
		}
		return &usageError{err.Error()}
	}
	return nil
}
