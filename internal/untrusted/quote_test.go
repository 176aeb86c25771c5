package untrusted

import "testing"

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"src/app.py", "`src/app.py`"},
		{"a > b && c < d", "`a > b && c < d`"},
		{`import "crypto/ecdsa"`, "`import \"crypto/ecdsa\"`"},
		{"two\nlines", "`two\\u000alines`"},
		{"\x1b]0;title\x07", "`\\u001b]0;title\\u0007`"},
		{"rm `x`", "\"rm `x`\""},
		{"", "``"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
