package gates

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// TestUnchanged makes the red→green flip mean something: the reproducing
// test must be byte-for-byte the one the harness saw fail, so the fix phase
// cannot turn it green by weakening it.
var TestUnchanged = &Gate{
	Name:   "test-unchanged",
	Doc:    "the reproducing test is exactly the one that was red on the base",
	Reason: "test-modified",
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		full, err := pathguard.ResolveWithin(c.Worktree, c.Plan.Test.Path)
		if err != nil {
			return Verdict{}, fmt.Errorf("test-unchanged: %w", err)
		}
		now, err := os.ReadFile(full)
		if errors.Is(err, os.ErrNotExist) {
			return Verdict{Detail: "the reproducing test was deleted"}, nil
		}
		if err != nil {
			return Verdict{}, fmt.Errorf("test-unchanged: %w", err)
		}
		if !bytes.Equal(now, c.TestWhenRed) {
			return Verdict{Detail: "the fix phase edited " + c.Plan.Test.Path}, nil
		}
		return Verdict{Pass: true, Detail: c.Plan.Test.Path}, nil
	},
}

// OracleGreen runs the reproducing test on the fixed tree; it must pass.
var OracleGreen = &Gate{
	Name:   "oracle-green",
	Doc:    "the reproducing test, red on the base, passes on the fixed tree",
	Reason: "oracle-still-red",
	Run: func(ctx context.Context, c *Change) (Verdict, error) {
		res, err := c.Oracle(ctx)
		if err != nil {
			return Verdict{}, fmt.Errorf("oracle-green: %w", err)
		}
		if !res.Success() {
			return Verdict{Detail: "test still fails: " + describe(res)}, nil
		}
		return Verdict{Pass: true, Detail: "test passes"}, nil
	},
}

// SuiteGreen runs the project's prior suite on the fixed tree. A green suite
// is never the acceptance — the oracle is — but a fix must not break it.
var SuiteGreen = &Gate{
	Name:   "suite-green",
	Doc:    "the project's existing suite still passes",
	Reason: "suite-red",
	Run: func(ctx context.Context, c *Change) (Verdict, error) {
		res, err := c.Suite(ctx)
		if err != nil {
			return Verdict{}, fmt.Errorf("suite-green: %w", err)
		}
		if !res.Success() {
			return Verdict{Detail: "suite fails: " + describe(res)}, nil
		}
		return Verdict{Pass: true, Detail: "suite passes"}, nil
	},
}

func describe(res sandbox.Result) string {
	switch {
	case res.TimedOut:
		return "timed out"
	case res.Canceled:
		return "canceled"
	case res.Signal != "":
		return "ended by signal (" + res.Signal + ")"
	}
	return fmt.Sprintf("exit %d", res.ExitCode)
}
