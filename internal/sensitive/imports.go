package sensitive

import (
	"path"
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

// ImportLines returns the import, require, use and include lines of a
// source file, trimmed, in file order. The language comes from the path's
// extension; an unknown extension yields nil. It is a line scanner, not a
// parser: a multi-line import contributes its first line (and, for
// JavaScript, its closing "} from '...'" line), and an import-looking line
// inside a comment or string is included.
func ImportLines(name string, content []byte) []string {
	l := langByExt[strings.ToLower(path.Ext(name))]
	if l == langNone {
		return nil
	}
	var out []string
	inGoBlock := false
	for _, line := range strings.Split(string(content), "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if l == langGo && inGoBlock {
			if strings.HasPrefix(t, ")") {
				inGoBlock = false
			} else if !strings.HasPrefix(t, "//") {
				out = append(out, t)
			}
			continue
		}
		var ok bool
		switch l {
		case langPython:
			ok = isPythonImport(t)
		case langJS:
			ok = isJSImport(t)
		case langGo:
			ok, inGoBlock = goImport(t)
		case langJVM:
			ok = hasKeyword(t, "import")
		case langRust:
			ok = isRustImport(t)
		case langRuby:
			ok = hasKeyword(t, "require") || hasKeyword(t, "require_relative") ||
				hasKeyword(t, "load") || hasKeyword(t, "autoload")
		case langC:
			ok = isCInclude(t)
		case langPHP:
			ok = isPHPImport(t)
		case langCSharp:
			ok = isCSharpUsing(t)
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}

// CheckImports returns one Denied verdict for each import line of the file
// that names a deny word, tokenised the same way as a path. Verdict.Path is
// the line and Verdict.Rule is "import:<word>". It is the one-hop check: a
// fixable file that imports an auth module touches auth. The project's
// sensitive globs do not apply here: they match paths, not module names.
func (p *Policy) CheckImports(name string, content []byte) []Verdict {
	var out []Verdict
	for _, line := range ImportLines(name, content) {
		if w, ok := deniedWord(line); ok {
			out = append(out, Verdict{Path: line, Class: Denied, Rule: "import:" + w})
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
