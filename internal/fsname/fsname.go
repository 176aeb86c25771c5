// Package fsname owns how a path component compares on the file systems
// fixrail's rails must assume: Linux compares bytes, but the same names are
// opened on a Mac (APFS and HFS+: case-insensitive by default, blind to
// Unicode normalization; HFS+ also ignores a set of invisible code points)
// and on Windows (NTFS: case-insensitive). A rail that protects a name must
// protect every spelling such a system opens as that name; Fold is that
// spelling's canonical form.
package fsname

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Ignorable reports whether HFS+ drops r from a name when it compares names
// (git's is_hfs_dotgit skips the same set when it looks for ".git").
func Ignorable(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e ||
		r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// ASCIIFold maps a non-ASCII rune whose case-fold orbit holds an ASCII
// letter to that letter, in lower case ("ſ" is "s", U+212A KELVIN SIGN is
// "k"): what a case-insensitive file system compares it as. Any other rune
// is returned as it is.
func ASCIIFold(r rune) rune {
	if r < utf8.RuneSelf {
		return r
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return unicode.ToLower(f)
		}
	}
	return r
}

// Fold is the form in which APFS, HFS+ and NTFS all compare the name s
// (one path component, or a glob over one): lower case, composed (NFC, so
// that "e\u0301" and "é" are one name, as on a Mac), without HFS+'s
// ignorable code points, and with the non-ASCII spellings of ASCII letters
// folded to them. Two names with one Fold may open one file somewhere, so
// a rail compares Folds; the converse over-approximates, which for a
// protected name errs toward protecting it.
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	s = norm.NFC.String(s)
	s = strings.Map(func(r rune) rune {
		if Ignorable(r) {
			return -1
		}
		return unicode.ToLower(ASCIIFold(r))
	}, s)
	// Dropping a code point can leave a pair NFC composes ("e", U+200C,
	// U+0301 is "é" once the joiner is gone).
	return norm.NFC.String(s)
}
