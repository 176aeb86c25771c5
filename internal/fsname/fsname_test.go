package fsname

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFold(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"settings.json", "settings.json"},
		{"Settings.JSON", "settings.json"},
		{"ſettings.json", "settings.json"},           // LATIN SMALL LETTER LONG S
		{"\u212Aeys", "keys"},                        // KELVIN SIGN
		{".cla\u200cude", ".claude"},                 // ZERO WIDTH NON-JOINER, ignored by HFS+
		{"\ufeff.git\u200dhooks\u202e", ".githooks"}, // BOM, ZWJ, RLO
		{"Jose\u0301", "jos\u00e9"},                  // decomposed: NFC
		{"JOS\u00c9", "jos\u00e9"},                   // composed, upper case
		{"jose\u200c\u0301", "jos\u00e9"},            // composes once the joiner is gone
		{"\u00e5", "\u00e5"},                         // no ASCII in its orbit: kept
		{"\u212B", "\u00e5"},                         // ANGSTROM SIGN: NFC is Å, lower å
		{"naïve.txt", "naïve.txt"},
		{"[A-Z]*.JSON", "[a-z]*.json"}, // a glob folds like a name
		{"", ""},
	} {
		if got := Fold(c.in); got != c.want {
			t.Errorf("Fold(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}

func TestASCIIFold(t *testing.T) {
	for in, want := range map[rune]rune{'a': 'a', 'A': 'A', 'ſ': 's', '\u212A': 'k', 'é': 'é', 'ß': 'ß'} {
		if got := ASCIIFold(in); got != want {
			t.Errorf("ASCIIFold(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzFold: Fold is idempotent, and a name's case, its HFS+ ignorables and
// its normalization never change its Fold.
func FuzzFold(f *testing.F) {
	for _, s := range []string{"settings.json", "ſ", "Jose\u0301", ".cla\u200cude", "\u212A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		fs := Fold(s)
		if Fold(fs) != fs {
			t.Fatalf("Fold not idempotent: %+q -> %+q -> %+q", s, fs, Fold(fs))
		}
		if strings.ContainsFunc(fs, Ignorable) {
			t.Fatalf("Fold(%+q) = %+q keeps an ignorable", s, fs)
		}
		// An ASCII letter's case never changes the Fold, wherever it sits.
		up := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' {
				return r - 'a' + 'A'
			}
			return r
		}, s)
		if Fold(up) != fs {
			t.Fatalf("ASCII case changed the Fold: %+q -> %+q, %+q -> %+q", s, fs, up, Fold(up))
		}
	})
}
