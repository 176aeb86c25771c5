package untrusted

import (
	"strings"
	"testing"
)

func TestClosingReference(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fixes #12", "fixes #12"},
		{"Crash on start. Closes: #7", "Closes: #7"},
		{"RESOLVED   #3 at last", "RESOLVED   #3"},
		{"no-close: #3091", "close: #3091"},
		{"this fixed octo-org/octo.repo#100", "fixed octo-org/octo.repo#100"},
		{"resolve GH-9", "resolve GH-9"},
		{"close https://github.com/o/r/issues/5", "close https://github.com/o/r/issues/5"},
		{"fix https://github.com/o/r/pull/6 now", "fix https://github.com/o/r/pull/6"},
		{"fix\t#1", "fix\t#1"},
		// Not a closing reference.
		{"see #12", ""},
		{"prefix #12", ""},
		{"fixture #12", ""},
		{"closure #12", ""},
		{"fixes the parser", ""},
		{"fixes issue #12 later", "fixes issue #12"},
		{"AssertionError: got 12, want 13", ""},
		{"", ""},
	} {
		if got := ClosingReference(tc.in); got != tc.want {
			t.Errorf("ClosingReference(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBreakClosing: every form of closing reference comes out broken
// after its keyword's first letter, so that ClosingReference finds nothing
// left, and text holding none is returned as it is.
func TestBreakClosing(t *testing.T) {
	const z = ClosingBreak
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{"number", "fixes #12", "f" + z + "ixes #12", 1},
		{"owner/repo", "this fixed octo-org/octo.repo#100", "this f" + z + "ixed octo-org/octo.repo#100", 1},
		{"GH-N", "resolve GH-9", "r" + z + "esolve GH-9", 1},
		{"issue URL", "close https://github.com/o/r/issues/5", "c" + z + "lose https://github.com/o/r/issues/5", 1},
		{"pull URL", "fix https://github.com/o/r/pull/6 now", "f" + z + "ix https://github.com/o/r/pull/6 now", 1},
		{"upper case", "FIXES #1", "F" + z + "IXES #1", 1},
		{"title case", "Closes #2", "C" + z + "loses #2", 1},
		{"mixed case", "rEsOlVeD #3", "r" + z + "EsOlVeD #3", 1},
		{"colon", "Crash on start. Closes: #7", "Crash on start. C" + z + "loses: #7", 1},
		{"no space", "fixes#7", "f" + z + "ixes#7", 1},
		{"hyphenated word", "no-close: #3091", "no-c" + z + "lose: #3091", 1},
		{"issue word", "fixes issue #12 later", "f" + z + "ixes issue #12 later", 1},
		{"every keyword", "close #1 closes #2 closed #3 fix #4 fixes #5 fixed #6 resolve #7 resolves #8 resolved #9",
			"c" + z + "lose #1 c" + z + "loses #2 c" + z + "losed #3 f" + z + "ix #4 f" + z + "ixes #5 f" + z + "ixed #6 r" + z + "esolve #7 r" + z + "esolves #8 r" + z + "esolved #9", 9},
		{"code span", "the report says `Fixes #1`", "the report says `F" + z + "ixes #1`", 1},
		{"fence", "```text\nplan: fixes o/r#4\n```\n", "```text\nplan: f" + z + "ixes o/r#4\n```\n", 1},
		{"several on a line", "fixes #1, closes o/r#2 and resolves GH-3", "f" + z + "ixes #1, c" + z + "loses o/r#2 and r" + z + "esolves GH-3", 3},
		{"across a line break", "this fixes\n#12 at last", "this f" + z + "ixes\n#12 at last", 1},
		{"across a paragraph", "What this does not close\n\n#1267's rest", "What this does not c" + z + "lose\n\n#1267's rest", 1},
		{"keyword in a URL", "close https://h/fixes#3/issues/1", "c" + z + "lose https://h/f" + z + "ixes#3/issues/1", 1},
		{"keyword without a reference kept", "fixes the parser; fixes #2", "fixes the parser; f" + z + "ixes #2", 1},
		// Nothing to break.
		{"reference only", "see #12", "see #12", 0},
		{"longer word", "prefix #12 fixture #13 closure #14", "prefix #12 fixture #13 closure #14", 0},
		{"keyword only", "fixes the parser", "fixes the parser", 0},
		{"already broken", "f" + z + "ixes #1", "f" + z + "ixes #1", 0},
		{"empty", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := BreakClosing(tc.in)
			if got != tc.want || n != tc.n {
				t.Errorf("BreakClosing(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
			if ref := ClosingReference(got); ref != "" {
				t.Errorf("BreakClosing(%q) = %q, which still holds %q", tc.in, got, ref)
			}
		})
	}
}

// FuzzBreakClosing: whatever the text, the result holds no closing
// reference, differs from it by inserted breaks alone, and is its own
// fixed point.
func FuzzBreakClosing(f *testing.F) {
	for _, s := range []string{"fixes #12", "Closes: o/r#7", "resolve GH-9", "close https://h/fixes#3/issues/1",
		"fix\n\n#1", "no-close: #3", "`fixes #1`", "fixes issue #2", "cloſes #1", "fixes fixes #1", "f\\u2060ixes #1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, n := BreakClosing(s)
		if ref := ClosingReference(got); ref != "" {
			t.Fatalf("BreakClosing(%q) = %q, which still holds %q", s, got, ref)
		}
		if (n == 0) != (got == s) || (n == 0) != (ClosingReference(s) == "") {
			t.Fatalf("BreakClosing(%q) = %q, %d", s, got, n)
		}
		if strings.ReplaceAll(got, ClosingBreak, "") != strings.ReplaceAll(s, ClosingBreak, "") {
			t.Fatalf("BreakClosing(%q) = %q: more than breaks changed", s, got)
		}
		if again, m := BreakClosing(got); again != got || m != 0 {
			t.Fatalf("BreakClosing(%q) = %q, %d", got, again, m)
		}
	})
}
