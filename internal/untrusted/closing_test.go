package untrusted

import "testing"

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
