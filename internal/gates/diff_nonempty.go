package gates

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/lexeq"
	"github.com/fixrail/fixrail/internal/verdict"
)

// DiffNonEmpty refuses a fix phase that changed nothing but the evidence
// (a reproducing test and its fixtures), or nothing but comments and
// whitespace besides it: a test that fails until a marker comment appears
// turns green on a "fix" that touches no code, and the bug is still there.
// What counts as code is package lexeq's (a docstring does; indentation
// that moves a Python statement does). Whether the other changes were
// planned is diff-within-plan's question.
var DiffNonEmpty = &Gate{
	Name:   "diff-nonempty",
	Doc:    "the fix changes code in at least one file besides the evidence (a reproducing test and its fixtures), not only comments or whitespace",
	Reason: verdict.ReasonEmptyDiff,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		n, code := 0, 0
		var cosmetic []string
		for _, p := range c.Changed {
			if c.IsEvidence(p) {
				continue
			}
			n++
			same, err := onlyCosmetic(c, p)
			if err != nil {
				return Verdict{}, fmt.Errorf("diff-nonempty: %w", err)
			}
			if same {
				cosmetic = append(cosmetic, p)
			} else {
				code++
			}
		}
		// A type with no evidence (the cve type's oracle is the harness's)
		// has nothing to be "besides".
		besides := ""
		if len(c.Evidence) > 0 {
			besides = " besides the evidence"
		}
		switch {
		case n == 0:
			return Verdict{Detail: "nothing changed" + besides}, nil
		case code == 0:
			return Verdict{Detail: "only comments or whitespace changed" + besides + ": " + strings.Join(cosmetic, ", ")}, nil
		}
		d := fmt.Sprintf("%d file(s) changed%s", n, besides)
		if len(cosmetic) > 0 {
			d += fmt.Sprintf(", %d only in comments or whitespace: %s", len(cosmetic), strings.Join(cosmetic, ", "))
		}
		return Verdict{Pass: true, Detail: d}, nil
	},
}

// onlyCosmetic reports whether the change to p is comments and whitespace
// alone: both sides regular files of the same mode whose tokens agree. A
// file added, deleted, or changed in mode or kind is a change of code (an
// empty __init__.py makes a package importable).
func onlyCosmetic(c *Change, p string) (bool, error) {
	now, ok1 := c.Files[p]
	was, ok2 := c.BaseFiles[p]
	if !ok1 || !ok2 {
		return false, errors.New(p + " changed without both of its versions")
	}
	regular := func(m string) bool { return m == "100644" || m == "100755" }
	if !regular(now.Mode) || now.Mode != was.Mode {
		return false, nil
	}
	return lexeq.Same(p, was.Data, now.Data), nil
}
