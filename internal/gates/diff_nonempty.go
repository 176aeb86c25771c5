package gates

import (
	"context"
	"fmt"
)

// DiffNonEmpty refuses a fix phase that changed nothing but the test.
var DiffNonEmpty = &Gate{
	Name:   "diff-nonempty",
	Doc:    "the fix changes at least one planned source file",
	Reason: "empty-diff",
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		n := 0
		for _, p := range c.Changed {
			if p != c.Plan.Test.Path {
				n++
			}
		}
		if n == 0 {
			return Verdict{Detail: "no source file changed"}, nil
		}
		return Verdict{Pass: true, Detail: fmt.Sprintf("%d source file(s) changed", n)}, nil
	},
}
