package gates

import (
	"context"
	"fmt"

	"github.com/fixrail/fixrail/internal/verdict"
)

// DiffNonEmpty refuses a fix phase that changed nothing but the evidence
// (a reproducing test and its fixtures). Whether the other changes were planned is
// diff-within-plan's question.
var DiffNonEmpty = &Gate{
	Name:   "diff-nonempty",
	Doc:    "the fix changes at least one file besides the evidence (a reproducing test and its fixtures)",
	Reason: verdict.ReasonEmptyDiff,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		n := 0
		for _, p := range c.Changed {
			if !c.IsEvidence(p) {
				n++
			}
		}
		// A type with no evidence (the cve type's oracle is the harness's)
		// has nothing to be "besides".
		besides := ""
		if len(c.Evidence) > 0 {
			besides = " besides the evidence"
		}
		if n == 0 {
			return Verdict{Detail: "nothing changed" + besides}, nil
		}
		return Verdict{Pass: true, Detail: fmt.Sprintf("%d file(s) changed%s", n, besides)}, nil
	},
}
