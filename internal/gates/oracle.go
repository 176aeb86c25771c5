package gates

import (
	"context"
	"fmt"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// TestUnchanged makes the red→green flip mean something: the reproducing
// test and every fixture it came with must be byte for byte what the
// harness ran red, so the fix phase cannot turn it green by weakening it.
var TestUnchanged = &Gate{
	Name:   "test-unchanged",
	Doc:    "the reproducing test and its fixtures are exactly the ones that were red on the base",
	Reason: "test-modified",
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		for _, ev := range c.Evidence {
			now, ok := c.Files[ev.Path]
			switch {
			case !ok:
				return Verdict{}, fmt.Errorf("test-unchanged: %s is not in the candidate", ev.Path)
			case now.Deleted() && ev.Path == c.Plan.Test.Path:
				return Verdict{Detail: "the reproducing test was deleted"}, nil
			case now.Deleted():
				return Verdict{Detail: "the fix phase deleted " + ev.Path}, nil
			case !now.Same(ev):
				return Verdict{Detail: "the fix phase edited " + ev.Path}, nil
			}
		}
		if len(c.Evidence) == 1 {
			return Verdict{Pass: true, Detail: c.Plan.Test.Path}, nil
		}
		return Verdict{Pass: true, Detail: fmt.Sprintf("%s and %d fixture(s)", c.Plan.Test.Path, len(c.Evidence)-1)}, nil
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
			return Verdict{Detail: "test still fails: " + describe(res), Output: tail(res)}, nil
		}
		return Verdict{Pass: true, Detail: "test passes", Output: tail(res)}, nil
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
			return Verdict{Detail: "suite fails: " + describe(res), Output: tail(res)}, nil
		}
		return Verdict{Pass: true, Detail: "suite passes", Output: tail(res)}, nil
	},
}

// tail is the end of a command's output a verdict keeps (the pipeline
// redacts it on the way out).
func tail(res sandbox.Result) string { return res.Tail(40) }

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
