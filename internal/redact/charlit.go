package redact

import (
	"path"
	"strings"
)

// A single-quoted value ended by ';' (name = '…';) has two readings. In
// C-family code (C, C++, Objective-C, Java, C#, Go, Rust, Kotlin, Scala,
// Swift) '…' is a character literal, and one of several characters is a
// compile error or an implementation-defined integer: nothing a program
// can hold as a credential (detect-secrets' keyword rule requires double
// quotes in C-family files for that reason). In JavaScript, PHP, Perl, SQL
// and most other languages it is a string. A block must be sure, so the
// value blocks only when the text says which language it is in: a
// unified diff's "+++ b/<path>" header naming a file outside the C family,
// or a declaration that only string languages write (a $ sigil, let, var,
// const, my, our, SQL's SET). Otherwise the value is redacted and left for
// review, never ignored.

// ReviewCharLiteral is the review reason for such a value.
const ReviewCharLiteral = "single-quoted and ended by ';': a character literal in C-family code, and the text names no language in which it is a string"

// charLiteralExts are the extensions of languages in which '…' is a
// character (rune) literal, not a string.
var charLiteralExts = map[string]bool{
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".hpp": true, ".hh": true, ".hxx": true,
	".m": true, ".mm": true, ".java": true, ".cs": true, ".go": true, ".rs": true, ".kt": true, ".kts": true,
	".scala": true, ".swift": true,
}

// textExts hold prose that may quote code of any language: a header naming
// one says nothing about the code in it.
var textExts = map[string]bool{"": true, ".txt": true, ".md": true, ".markdown": true, ".rst": true, ".adoc": true}

// stringDeclWords, as the word before the name on its line, declare a
// variable only in languages where '…' is a string (JavaScript's let, var
// and const; Perl's my and our; SQL's SET).
var stringDeclWords = wordSet("let", "var", "const", "my", "our", "set")

// diffFile follows the file a unified diff is in while a scan moves
// forward through the text: at reads only what lies between the last
// position asked about and p, so a scan costs linear time however many
// values it asks about.
type diffFile struct {
	upto int
	ext  string
	seen bool // a +++ header precedes upto
}

// at returns the extension of the file named by the last "+++ " header
// line before p, and whether there is one.
func (d *diffFile) at(t string, p int) (string, bool) {
	if p <= d.upto {
		return d.ext, d.seen
	}
	from := d.upto
	for {
		k := strings.Index(t[from:p], "+++ ")
		if k < 0 {
			break
		}
		h := from + k
		from = h + 4
		if !fileHeader(t, h) {
			continue
		}
		end := strings.IndexByte(t[from:], '\n')
		if end < 0 {
			end = len(t) - from
		}
		name := strings.TrimRight(t[from:from+end], " \t\r")
		if i := strings.IndexByte(name, '\t'); i >= 0 {
			name = name[:i] // "+++ b/x.c\t2024-01-01 …" (diff -u)
		}
		if name == "/dev/null" {
			continue
		}
		d.ext, d.seen = strings.ToLower(path.Ext(name)), true
	}
	// A match may straddle p; look again from just before it next time.
	d.upto = max(d.upto, p-3)
	return d.ext, d.seen
}

// fileHeader reports whether the "+++ " at h begins a diff's file header:
// at a line start, after a "--- " line and before a hunk's "@@ " (or the
// end). An added line "++ b/x.c" reads "+++ b/x.c" in a patch, but inside a
// hunk, after another added or context line and before more of them, so
// the text of a file cannot rename the file it is in.
func fileHeader(t string, h int) bool {
	if h < 5 || t[h-1] != '\n' {
		return false
	}
	if ps := strings.LastIndexByte(t[:h-1], '\n') + 1; !strings.HasPrefix(t[ps:h], "--- ") {
		return false
	}
	e := strings.IndexByte(t[h:], '\n')
	return e < 0 || h+e+1 == len(t) || strings.HasPrefix(t[h+e+1:], "@@ ")
}

// charLiteralReview is ReviewCharLiteral when the value t[s:e], read under
// the name that starts at ks, is single-quoted, ended by ';', and the text
// does not say it is in a language where that is a string; "" otherwise.
func charLiteralReview(t string, ks, s, e int, d *diffFile) string {
	if s == 0 || t[s-1] != '\'' || e >= len(t) || t[e] != '\'' {
		return ""
	}
	if r := spaceAfter(t, e+1); r >= len(t) || t[r] != ';' {
		return ""
	}
	if ks > 0 && t[ks-1] == '$' || foldIn(stringDeclWords, wordBefore(t, ks)) {
		return ""
	}
	if ext, ok := d.at(t, ks); ok && !charLiteralExts[ext] && !textExts[ext] {
		return ""
	}
	return ReviewCharLiteral
}

// wordBefore returns the word that ends at the blanks before ks, on the
// same line.
func wordBefore(t string, ks int) string {
	e := spaceBefore(t, ks)
	if e == ks {
		return ""
	}
	s := e
	for s > 0 && e-s < 8 && isLetter(t[s-1]) {
		s--
	}
	if s > 0 && keyChar[t[s-1]] {
		return "" // longer than any declaration word
	}
	return t[s:e]
}
