package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
)

// resolve-version lives in resolvecmd, which the slim cmd/fixrail-resolve
// binary shares; this is its place in fixrail's command table.
var cmdResolveVersion = &command{
	Name:  "resolve-version",
	Usage: resolvecmd.Usage,
	Short: resolvecmd.Short,
	Long:  resolvecmd.Long,
	Flags: func() *flag.FlagSet { fs, _ := resolvecmd.Flags(); return fs },
	Run:   runResolveVersion,
}

func runResolveVersion(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := resolvecmd.Flags()
	pos, err := resolvecmd.Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdio.Stdout)
		fmt.Fprintf(stdio.Stdout, "Usage of fixrail %s:\n", fs.Name())
		fs.PrintDefaults()
		return errHelpShown
	}
	if err == nil {
		err = resolvecmd.Run(ctx, o, pos, stdio.Stdout, stdio.Stderr)
	}
	return resolveUsage(err)
}

// resolveUsage makes resolvecmd's usage mistake fixrail's, so Main points
// at 'fixrail help resolve-version'; its other errors carry their own exit
// codes, the numbers of the one table (TestResolveExitCodes).
func resolveUsage(err error) error {
	if ue, ok := errors.AsType[*resolvecmd.UsageError](err); ok {
		return &usageError{ue.Msg}
	}
	return err
}
