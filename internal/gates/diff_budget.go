package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/verdict"
)

// DiffBudget holds the fix within budget.max_diff_lines (added + deleted),
// budget.max_diff_bytes (the bytes those lines carry) and
// budget.max_line_bytes (the longest added line). Lines alone would let a
// few lines carry a file's worth of code, or push it past the right edge
// of a reviewer's diff view behind a run of spaces.
var DiffBudget = &Gate{
	Name:   "diff-budget",
	Doc:    "added plus deleted lines and their bytes stay within budget.max_diff_lines and budget.max_diff_bytes, and no added line is longer than budget.max_line_bytes",
	Reason: verdict.ReasonDiffBudget,
	Fails:  verdict.Halt,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		n := c.Diff.Added + c.Diff.Deleted
		d := fmt.Sprintf("%d of %d lines, %d of %d bytes, longest added line %d of %d bytes",
			n, c.MaxDiffLines, c.Diff.Bytes, c.MaxDiffBytes, c.Diff.Longest, c.MaxLineBytes)
		var over []string
		if n > c.MaxDiffLines {
			over = append(over, "lines")
		}
		if c.Diff.Bytes > c.MaxDiffBytes {
			over = append(over, "bytes")
		}
		if c.Diff.Longest > c.MaxLineBytes {
			over = append(over, "line length")
		}
		if len(over) > 0 {
			return Verdict{Detail: d + "; over the budget in " + strings.Join(over, ", ")}, nil
		}
		return Verdict{Pass: true, Detail: d}, nil
	},
}
