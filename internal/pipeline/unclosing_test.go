package pipeline

import (
	"testing"

	"github.com/fixrail/fixrail/internal/untrusted"
)

// TestUnclosing: a body, or fixrail's after-PR section, leaves with every
// closing reference broken, and the sentence under its heading says how
// many were; text with none leaves as it is, with no sentence.
func TestUnclosing(t *testing.T) {
	const say = "fixrail wrote `\\u2060` after the first letter of each closing keyword in the "
	const why = " below, so that GitHub reads none of them as closing an issue or pull request, in this description or in the commit message a squash merge makes from it.\n\n"
	for _, tc := range []struct{ name, in, want string }{
		{"none", "## Draft fix for finding gh-7\n\nsee #12, fixes the parser\n", "## Draft fix for finding gh-7\n\nsee #12, fixes the parser\n"},
		{"one", "## Draft fix for finding gh-7\n\n- ` Fixes #1 `\n",
			"## Draft fix for finding gh-7\n\n" + say + "1 closing reference" + why + "- ` F\\u2060ixes #1 `\n"},
		{"section", "### After the PR\n\nfixrail kept watching this draft.\n\n| P5 | ci | unconfirmed | ` required: closes o/r#5; fixes\n#6 ` |\n",
			"### After the PR\n\n" + say + "2 closing references" + why + "fixrail kept watching this draft.\n\n| P5 | ci | unconfirmed | ` required: c\\u2060loses o/r#5; f\\u2060ixes\n#6 ` |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unclosing(tc.in)
			if got != tc.want {
				t.Errorf("unclosing(%q) =\n%q\nwant\n%q", tc.in, got, tc.want)
			}
			if ref := untrusted.ClosingReference(got); ref != "" {
				t.Errorf("unclosing(%q) holds %q", tc.in, ref)
			}
		})
	}
}
