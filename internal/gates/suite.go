package gates

import (
	"context"
	"fmt"

	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/verdict"
)

// SuiteGreen runs the project's prior suite on the fixed tree. A green suite
// is never the acceptance — a fix type's oracle is — but a fix must not
// break it.
var SuiteGreen = &Gate{
	Name:   "suite-green",
	Doc:    "the project's existing suite still passes",
	Reason: verdict.ReasonSuiteRed,
	Run: func(ctx context.Context, c *Change) (Verdict, error) {
		res, err := c.Suite(ctx)
		if err != nil {
			return Verdict{}, fmt.Errorf("suite-green: %w", err)
		}
		if !res.Success() {
			return Verdict{Detail: "suite fails: " + res.Describe(), Output: Tail(res)}, nil
		}
		return Verdict{Pass: true, Detail: "suite passes", Output: Tail(res)}, nil
	},
}

// Tail is the end of a command's output a verdict keeps (the pipeline
// redacts it on the way out).
func Tail(res sandbox.Result) string { return res.Tail(40) }
