package lexeq

import (
	"go/scanner"
	"go/token"
	"testing"
)

var seeds = []string{
	"def f(x):\n    \"\"\"Doc.\"\"\"\n    if x:  # c\n        return [1,\n  2]\n    return r'\\'' + f'{x}'\n",
	"x = 1 + \\\n  2\n\tif y:\n\t\tpass\n",
	"s = '''a\n# b\n'''\n",
	"package p\n\nimport \"C\"\n\n//go:embed x\nvar s = `a // b` /* c */\nfunc f() { a(); b() }\n",
	"const t = `a ${b + `c ${d}`} e`; // x\nif (a) /re\\/*[/]/.test(s); x = y / 2 / z;\n",
	"#!/usr/bin/env node\n/// <reference path=\"a\" />\nreturn\nx++\n",
	"x =\u00a01; y = 'a\\'b'; z = \"c\" /* d\n */ + 1",
}

// checkTokens: tokens lie inside the source, in order.
func checkTokens(t *testing.T, src string, toks []Token) {
	t.Helper()
	last := 0
	for _, tk := range toks {
		if tk.Start < last || tk.End < tk.Start || tk.End > len(src) {
			t.Fatalf("token %+v out of order or bounds (previous end %d, len %d)", tk, last, len(src))
		}
		last = tk.Start
	}
}

// insertBefore inserts c before each token i where keep(i) holds, and
// reports how many it inserted.
func insertBefore(src string, toks []Token, c string, keep func(i int) bool) (string, int) {
	out, prev, n := "", 0, 0
	for i, tk := range toks {
		if !keep(i) {
			continue
		}
		out += src[prev:tk.Start] + c
		prev = tk.Start
		n++
	}
	return out + src[prev:], n
}

// FuzzPython: the tokenizer never panics, keeps its tokens in the source,
// and a comment added at the end of a logical line, or as a line of its
// own before one, changes nothing Same sees.
func FuzzPython(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, clean := pythonTokens([]byte(src))
		checkTokens(t, src, toks)
		if !Same("x.py", []byte(src), []byte(src)) {
			t.Fatal("a file is not the same as itself")
		}
		if !clean {
			return
		}
		withEOL, n := insertBefore(src, toks, " # c", func(i int) bool { return toks[i].Kind == Newline })
		if n > 0 && !Same("x.py", []byte(src), []byte(withEOL)) {
			t.Fatalf("end-of-line comments changed the tokens:\n%q\n%q", src, withEOL)
		}
		// A comment line at the start of the file's first line.
		if len(toks) > 0 && !Same("x.py", []byte(src), []byte("# c\n"+src)) && !firstLineComment(toks) {
			t.Fatalf("a leading comment line changed the tokens: %q", src)
		}
	})
}

// firstLineComment: the file starts with a comment kept as code (a
// shebang or cookie), which a line put before it demotes.
func firstLineComment(toks []Token) bool { return toks[0].Kind == Comment }

// FuzzJS: the tokenizer never panics, keeps its tokens in the source,
// and a block comment put where whitespace already was (no line break in
// it) changes nothing Same sees.
func FuzzJS(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, clean := jsTokens([]byte(src))
		checkTokens(t, src, toks)
		if !Same("x.js", []byte(src), []byte(src)) {
			t.Fatal("a file is not the same as itself")
		}
		if !clean {
			return
		}
		with, n := insertBefore(src, toks, "/*c*/", func(i int) bool {
			return i > 0 && toks[i].Spaced && toks[i].Kind != Comment
		})
		if n > 0 && !Same("x.js", []byte(src), []byte(with)) {
			t.Fatalf("comments where whitespace was changed the tokens:\n%q\n%q", src, with)
		}
	})
}

// FuzzGo: GoTokens never panics; on source go/scanner reads without error,
// a block comment put before a token that follows a space changes nothing.
func FuzzGo(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, cgo := goTokens([]byte(src))
		checkTokens(t, src, toks)
		if !Same("x.go", []byte(src), []byte(src)) {
			t.Fatal("a file is not the same as itself")
		}
		var s scanner.Scanner
		fset := token.NewFileSet()
		errs := 0
		s.Init(fset.AddFile("", fset.Base(), len(src)), []byte(src), func(token.Position, string) { errs++ }, scanner.ScanComments)
		for _, tok, _ := s.Scan(); tok != token.EOF; _, tok, _ = s.Scan() {
		}
		if errs > 0 || cgo { // a cgo file's comments are code
			return
		}
		with, n := insertBefore(src, toks, "/*c*/", func(i int) bool {
			st := toks[i].Start
			return st > 0 && st < len(src) && (src[st-1] == ' ' || src[st-1] == '\t') && toks[i].Kind != Comment
		})
		if n > 0 && !Same("x.go", []byte(src), []byte(with)) {
			t.Fatalf("comments where spaces were changed the tokens:\n%q\n%q", src, with)
		}
	})
}
