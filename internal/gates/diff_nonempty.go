package gates

import (
	"context"
	"fmt"
	"slices"
)

// DiffNonEmpty refuses a fix phase that changed nothing but the test and
// its fixtures. Whether the other changes were planned is
// diff-within-plan's question.
var DiffNonEmpty = &Gate{
	Name:   "diff-nonempty",
	Doc:    "the fix changes at least one file besides the reproducing test and its fixtures",
	Reason: "empty-diff",
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		n := 0
		for _, p := range c.Changed {
			if p != c.Plan.Test.Path && !slices.Contains(c.Plan.Test.Fixtures, p) {
				n++
			}
		}
		if n == 0 {
			return Verdict{Detail: "nothing changed besides the test"}, nil
		}
		return Verdict{Pass: true, Detail: fmt.Sprintf("%d file(s) besides the test changed", n)}, nil
	},
}
