package lexeq

import (
	"go/scanner"
	"go/token"
	"strings"
)

// GoTokens is src's Go tokens, as go/scanner reads them, without comments
// but for directives (and every comment of a cgo file). An automatic
// semicolon and a written one are the same token, and one before ) or }
// is dropped, written or not.
func GoTokens(src []byte) []Token {
	toks, _ := goTokens(src)
	return toks
}

// goTokens also reports whether src imports "C".
func goTokens(src []byte) (_ []Token, cgo bool) {
	var toks []Token
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
	var comments []Token // every comment, in case the file turns out to be cgo
	inImport, depth := false, 0
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		off := file.Offset(pos)
		t := Token{Kind: Op, Text: tok.String(), Start: off}
		switch {
		case tok == token.COMMENT:
			c := Token{Kind: Comment, Text: lit, Start: off, End: off + len(lit)}
			comments = append(comments, c)
			if goDirective(lit) {
				toks = append(toks, c)
			}
			continue
		case tok == token.SEMICOLON:
			t.Kind, t.Text = Newline, ";"
			if lit == ";" {
				t.End = off + 1
			} else {
				t.End = off
			}
		case tok == token.IDENT:
			t.Kind, t.Text = Ident, lit
		case tok == token.INT || tok == token.FLOAT || tok == token.IMAG:
			t.Kind, t.Text = Number, lit
		case tok == token.STRING || tok == token.CHAR:
			t.Kind, t.Text = String, lit
		case tok.IsKeyword():
			t.Kind, t.Text = Ident, lit
		case tok == token.ILLEGAL:
			// lit may be U+FFFD for one invalid byte: End is not from it.
			t.Kind, t.Text, t.End = Other, lit, min(off+1, len(src))
		}
		if t.End == 0 {
			t.End = off + len(t.Text)
		}
		// import "C", alone or in a group: the comments are C.
		switch {
		case tok == token.IMPORT:
			inImport, depth = true, 0
		case inImport && tok == token.LPAREN:
			depth++
		case inImport && tok == token.RPAREN:
			depth--
		case inImport && tok == token.SEMICOLON && depth <= 0:
			inImport = false
		case inImport && tok == token.STRING && (lit == `"C"` || lit == "`C`"):
			cgo = true
		}
		if (tok == token.RPAREN || tok == token.RBRACE) && len(toks) > 0 && toks[len(toks)-1].Kind == Newline {
			// The spec lets a semicolon before ) or } go unwritten.
			toks = toks[:len(toks)-1]
		}
		toks = append(toks, t)
	}
	if cgo {
		return mergeComments(toks, comments), true
	}
	return toks, false
}

// goDirective reports a comment the toolchain reads.
func goDirective(c string) bool {
	for _, p := range []string{"//go:", "//line ", "/*line ", "//export ", "// +build", "//extern ", "//sys"} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	return false
}

// mergeComments puts every comment back among toks, by offset.
func mergeComments(toks, comments []Token) []Token {
	var out []Token
	i := 0
	for _, t := range toks {
		if t.Kind == Comment {
			continue // already in comments
		}
		for i < len(comments) && comments[i].Start < t.Start {
			out = append(out, comments[i])
			i++
		}
		out = append(out, t)
	}
	return append(out, comments[i:]...)
}
