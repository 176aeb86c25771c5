package gates

import (
	"context"
	"fmt"

	"github.com/fixrail/fixrail/internal/verdict"
)

// DiffBudget holds the fix within budget.max_diff_lines (added + deleted).
var DiffBudget = &Gate{
	Name:   "diff-budget",
	Doc:    "added plus deleted lines stay within budget.max_diff_lines",
	Reason: verdict.ReasonDiffBudget,
	Fails:  verdict.Halt,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		n := c.Diff.Added + c.Diff.Deleted
		d := fmt.Sprintf("%d of %d lines", n, c.MaxDiffLines)
		return Verdict{Pass: n <= c.MaxDiffLines, Detail: d}, nil
	},
}
