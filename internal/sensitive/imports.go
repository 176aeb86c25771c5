package sensitive

import (
	"path"
	"slices"
	"strings"
)

// lang is a source language family, chosen by file extension.
type lang int

const (
	langNone lang = iota
	langPython
	langJS
	langGo
	langJVM
	langRust
	langRuby
	langC
	langPHP
	langCSharp
)

var langByExt = map[string]lang{
	".py": langPython, ".pyi": langPython, ".pyw": langPython,
	".js": langJS, ".jsx": langJS, ".mjs": langJS, ".cjs": langJS,
	".ts": langJS, ".tsx": langJS, ".mts": langJS, ".cts": langJS,
	".vue": langJS, ".svelte": langJS,
	".go":   langGo,
	".java": langJVM, ".kt": langJVM, ".kts": langJVM, ".scala": langJVM,
	".sc": langJVM, ".groovy": langJVM,
	".rs": langRust,
	".rb": langRuby, ".rake": langRuby, ".gemspec": langRuby,
	".c": langC, ".h": langC, ".cc": langC, ".cpp": langC, ".cxx": langC,
	".c++": langC, ".hpp": langC, ".hh": langC, ".hxx": langC, ".h++": langC,
	".ipp": langC, ".m": langC, ".mm": langC,
	".php": langPHP, ".phtml": langPHP,
	".cs": langCSharp,
}

// ImportLines returns the import statements of a source file, in file
// order, each as the file writes it with its lines joined by single spaces.
// The language comes from the path's extension; an unknown extension yields
// nil. Statements are found per logical statement, not per line: Python's
// `if x: import y`, `_ = 0; import y`, `try: import y` and parenthesised or
// backslash-continued imports; JavaScript's `x(); import y from "z"`,
// multi-line imports and require( or import( anywhere on a line; every spec
// of a Go import block (go/scanner, so `package p; import "x"` too); Rust,
// JVM, PHP, C# and Ruby statements after a ';', and brace groups over
// several lines. It is a scanner, not a parser: on top of the statements,
// every line that looks like an import by itself and lies in no statement
// found is returned as well, so a scanner confused by a regular expression
// literal or a stray quote loses nothing the line test would have found
// (and a docstring line that reads like an import is one).
func ImportLines(name string, content []byte) []string {
	var out []string
	for _, s := range importStatements(name, content) {
		out = append(out, s.text)
	}
	return out
}

// importStatements is ImportLines with each statement's lines and whether
// it could be parsed.
func importStatements(name string, content []byte) []statement {
	l := langByExt[strings.ToLower(path.Ext(name))]
	if l == langNone {
		return nil
	}
	src := string(content)
	var stmts []statement
	switch l {
	case langPython:
		stmts = pythonStatements(src)
	case langJS:
		stmts = jsStatements(src)
	case langGo:
		stmts = goStatements(src)
	case langC:
		// #include is a line of its own: the line test is the statement.
	default:
		stmts = otherStatements(src, l, lineTest[l], anywhere[l]...)
	}
	covered := map[int]bool{}
	for _, s := range stmts {
		for i := s.first; i <= s.last; i++ {
			covered[i] = true
		}
	}
	for _, s := range lineImports(l, src) {
		if !covered[s.first] {
			stmts = append(stmts, s)
		}
	}
	slices.SortStableFunc(stmts, func(a, b statement) int { return a.first - b.first })
	out := stmts[:0]
	for _, s := range stmts {
		if s.text = strings.TrimSpace(s.text); s.text == "" {
			continue
		}
		if hidesName(l, s.text) {
			s.unparsed = true
		}
		out = append(out, s)
	}
	return out
}

// hidesName reports a statement that could spell a module name in a way
// the word test does not read: an escape in Python, JavaScript or Ruby
// ("\x61uth", "\u0061uth", which a string or a JavaScript identifier turns
// into "auth"), and any non-ASCII byte in Python, whose identifiers are NFKC
// normalised (a fullwidth "ａｕｔｈ" imports auth).
func hidesName(l lang, t string) bool {
	switch l {
	case langPython, langJS, langRuby:
	default:
		return false
	}
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '\\' && strings.IndexByte("xuUN01234567", t[i+1]) >= 0 {
			return true
		}
	}
	if l == langPython {
		for i := 0; i < len(t); i++ {
			if t[i] >= 0x80 {
				return true
			}
		}
	}
	return false
}

// lineTest says whether a trimmed line (or statement) starts like an
// import, per language; Go's blocks are goImport's.
var lineTest = map[lang]func(string) bool{
	langPython: isPythonImport,
	langJS:     isJSImport,
	langJVM:    func(t string) bool { return hasKeyword(t, "import") },
	langRust:   isRustImport,
	langRuby:   isRubyImport,
	langC:      isCInclude,
	langPHP:    isPHPImport,
	langCSharp: isCSharpUsing,
}

// anywhere are the reserved words that make an import wherever they stand
// as code in a statement (`fn f() { use crate::jwt; }`, `$c = require 'x';`).
var anywhere = map[lang][]string{
	langJVM:  {"import"},
	langRust: {"use"},
	langPHP:  {"require", "require_once", "include", "include_once"},
}

// lineImports is the line test: each trimmed line that starts like an
// import (and each line of a Go import block).
func lineImports(l lang, src string) []statement {
	var out []statement
	inGoBlock := false
	for n, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if l == langGo && inGoBlock {
			if strings.HasPrefix(t, ")") {
				inGoBlock = false
			} else if !strings.HasPrefix(t, "//") {
				out = append(out, statement{text: t, first: n, last: n})
			}
			continue
		}
		var ok bool
		if l == langGo {
			ok, inGoBlock = goImport(t)
		} else {
			ok = lineTest[l](t)
		}
		if ok {
			out = append(out, statement{text: t, first: n, last: n})
		}
	}
	return out
}

// CheckImports returns one Denied verdict for each import statement of the
// file that names a deny word, tokenised the same way as a path, and for
// each that cannot be parsed (a string, comment or bracket that the file
// ends inside, a Go import the scanner rejects, an escape or a non-ASCII
// Python name that could spell a word): Verdict.Path is the statement and
// Verdict.Rule is "import:<word>" or "import:unparsed". It is the one-hop
// check: a fixable file that imports an auth module touches auth. The
// project's sensitive globs do not apply here: they match paths, not module
// names.
func (p *Policy) CheckImports(name string, content []byte) []Verdict {
	var out []Verdict
	for _, s := range importStatements(name, content) {
		if w, ok := deniedWord(s.text); ok {
			out = append(out, Verdict{Path: s.text, Class: Denied, Rule: "import:" + w})
		} else if s.unparsed {
			out = append(out, Verdict{Path: s.text, Class: Denied, Rule: "import:unparsed"})
		}
	}
	return out
}

// hasKeyword reports whether t starts with the word kw, followed by the end
// of the line or a character that cannot continue an identifier.
func hasKeyword(t, kw string) bool {
	if !strings.HasPrefix(t, kw) {
		return false
	}
	if len(t) == len(kw) {
		return true
	}
	c := t[len(kw)]
	return !(c == '_' || c == '$' || c >= '0' && c <= '9' ||
		c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80)
}

// isRubyImport is require, require_relative, load or autoload at the start,
// or a require call anywhere (`x && require "y"`), not as a method of
// something else (`.require`).
func isRubyImport(t string) bool {
	if hasKeyword(t, "require") || hasKeyword(t, "require_relative") || hasKeyword(t, "load") || hasKeyword(t, "autoload") {
		return true
	}
	for i := 0; ; {
		j := strings.Index(t[i:], "require")
		if j < 0 {
			return false
		}
		at := i + j
		i = at + 1
		if at > 0 && (t[at-1] == '.' || identByte(t, at-1)) {
			continue
		}
		if hasKeyword(t[at:], "require") || hasKeyword(t[at:], "require_relative") {
			return true
		}
	}
}

func isPythonImport(t string) bool {
	return hasKeyword(t, "import") ||
		hasKeyword(t, "from") && strings.Contains(t, "import") ||
		strings.Contains(t, "__import__(") || strings.Contains(t, "import_module(")
}

func isJSImport(t string) bool {
	return hasKeyword(t, "import") ||
		(hasKeyword(t, "export") || strings.HasPrefix(t, "}")) && hasFromLiteral(t) ||
		strings.Contains(t, "require(") || strings.Contains(t, "import(")
}

// hasFromLiteral reports `from` followed by a string literal, as in
// "export * from './auth'" or "} from './auth'".
func hasFromLiteral(t string) bool {
	for i := 0; ; {
		j := strings.Index(t[i:], "from")
		if j < 0 {
			return false
		}
		rest := strings.TrimLeft(t[i+j+len("from"):], " \t")
		if rest != "" && strings.ContainsRune("'\"`", rune(rest[0])) {
			return true
		}
		i += j + len("from")
	}
}

// goImport reports whether t is a single-line Go import and whether it opens
// an import block ("import (" alone names nothing, so it is not returned).
func goImport(t string) (ok, opensBlock bool) {
	if !hasKeyword(t, "import") {
		return false, false
	}
	rest := strings.TrimSpace(t[len("import"):])
	if !strings.HasPrefix(rest, "(") {
		return true, false
	}
	inner := strings.TrimSpace(rest[1:])
	if strings.Contains(inner, ")") {
		return true, false // import ( "fmt" )
	}
	if inner != "" && !strings.HasPrefix(inner, "//") {
		return true, true // import ( "fmt"
	}
	return false, true
}

func isRustImport(t string) bool {
	if hasKeyword(t, "pub") {
		t = strings.TrimSpace(t[len("pub"):])
		if strings.HasPrefix(t, "(") {
			end := strings.Index(t, ")")
			if end < 0 {
				return false
			}
			t = strings.TrimSpace(t[end+1:])
		}
	}
	return hasKeyword(t, "use") || hasKeyword(t, "extern") && strings.Contains(t, "crate") ||
		hasKeyword(t, "mod") && strings.HasSuffix(t, ";")
}

func isCInclude(t string) bool {
	if !strings.HasPrefix(t, "#") {
		return false
	}
	t = strings.TrimSpace(t[1:])
	return hasKeyword(t, "include") || hasKeyword(t, "include_next") || hasKeyword(t, "import")
}

func isPHPImport(t string) bool {
	if hasKeyword(t, "<?php") {
		t = strings.TrimSpace(t[len("<?php"):])
	}
	for _, kw := range []string{"use", "require", "require_once", "include", "include_once"} {
		if hasKeyword(t, kw) {
			return true
		}
	}
	return false
}

func isCSharpUsing(t string) bool {
	if hasKeyword(t, "global") {
		t = strings.TrimSpace(t[len("global"):])
	}
	if !hasKeyword(t, "using") {
		return false
	}
	rest := strings.TrimSpace(t[len("using"):])
	// "using (var x = ...)" and "using var x = ..." are resource statements.
	return rest != "" && !strings.HasPrefix(rest, "(") && !hasKeyword(rest, "var")
}
