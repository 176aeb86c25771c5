// Package lexeq decides whether two versions of a source file differ only
// in comments and whitespace: the question the diff-nonempty gate asks of
// a fix, so that a "fix" that adds a marker comment a test looks for is
// not taken for a code change.
//
// Go is read with go/scanner. Python and JavaScript/TypeScript have small
// tokenizers here: lexical approximations, not parsers. Each is total —
// any input gives a token stream, never an error — so an odd construct
// cannot make a comment count as code. What counts as code, deliberately:
//
//   - every string literal, docstrings included: a docstring is a runtime
//     value (__doc__, doctest), so editing one is a code change;
//   - Python indentation, as INDENT and DEDENT tokens (a re-indent that
//     keeps the block structure is whitespace, one that moves a statement
//     in or out of a block is code), and the end of each logical line;
//   - a JavaScript line break before a token where automatic semicolon
//     insertion reads it (after return, throw, break, continue, yield,
//     and before ++, -- and =>);
//   - comments that tools read as code: Go directives (//go:, //line,
//     //export, // +build) and every comment of a cgo file (its preamble is
//     C); a Python first-line #! and a coding cookie on line 1 or 2; a
//     JavaScript #!, /// directives, @ts- and @jsx pragmas, and
//     sourceMappingURL;
//   - whitespace between two operator tokens in Python and JavaScript
//     (a - -b and a --b are different programs; this errs towards code).
//
// JSX and TSX are compared as other files: text inside an element is
// content, and "//" in it is not a comment. Other files are the same when
// they differ only in trailing whitespace, blank lines and line endings:
// elsewhere whitespace can be syntax (YAML, Makefiles, shell words).
package lexeq

import (
	"bytes"
	"path"
	"strings"
)

// Kind is a token's class.
type Kind byte

// Token kinds. Op is an operator or punctuation; Newline ends a logical
// line (Python, and Go's automatic semicolons); Indent and Dedent are
// Python's block structure; Comment is a comment kept as code.
const (
	Ident Kind = iota + 1
	Number
	String
	Op
	Newline
	Indent
	Dedent
	Comment
	Other
)

// Token is one token: its kind, its text, and what separated it from the
// one before.
type Token struct {
	Kind Kind
	Text string
	// Spaced: whitespace or a comment came between this token and the
	// previous one. NL: a line break did (a comment holding one counts).
	Spaced, NL bool
	// Start and End are byte offsets in the source.
	Start, End int
}

// Lang names a tokenizer.
type Lang int

// The languages Same tells apart.
const (
	Plain Lang = iota
	Go
	Python
	JavaScript
)

// LangOf picks the tokenizer for a path by its extension.
func LangOf(p string) Lang {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return Go
	case ".py", ".pyi", ".pyw":
		return Python
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts":
		return JavaScript
	}
	return Plain
}

// Same reports whether a and b, two versions of the file at p, differ only
// in comments and whitespace (see the package comment for what counts).
func Same(p string, a, b []byte) bool {
	switch LangOf(p) {
	case Go:
		return equal(GoTokens(a), GoTokens(b), nil)
	case Python:
		return equal(PythonTokens(a), PythonTokens(b), spacedOps)
	case JavaScript:
		return equal(JSTokens(a), JSTokens(b), jsSensitive)
	}
	return bytes.Equal(plain(a), plain(b))
}

// equal compares two streams by kind and text; sensitive, if set, says
// where a token's separation from the previous one matters too.
func equal(a, b []Token, sensitive func(prev, t Token) (spaced, nl bool)) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Text != b[i].Text {
			return false
		}
		if sensitive == nil || i == 0 {
			continue
		}
		sp, nl := sensitive(a[i-1], a[i])
		if sp && a[i].Spaced != b[i].Spaced || nl && a[i].NL != b[i].NL {
			return false
		}
	}
	return true
}

// spacedOps: between two operators, whether whitespace separates them.
func spacedOps(prev, t Token) (bool, bool) {
	return prev.Kind == Op && t.Kind == Op, false
}

// plain is a file with line endings made \n, trailing whitespace cut from
// every line and blank lines dropped.
func plain(src []byte) []byte {
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	var out []byte
	for line := range bytes.SplitSeq(src, []byte("\n")) {
		line = bytes.TrimRight(line, " \t\r\f\v")
		if len(line) == 0 {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	return out
}
