package lexeq

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// jsOps are JavaScript's and TypeScript's punctuators of more than one
// byte, longest first.
var jsOps = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>"}

// jsRegexAfter are the keywords after which a slash starts a regular
// expression, not a division.
var jsRegexAfter = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true, "delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true, "yield": true, "await": true}

// jsRestricted are the keywords a line break after ends the statement
// (automatic semicolon insertion's restricted productions).
var jsRestricted = map[string]bool{"return": true, "throw": true, "break": true, "continue": true, "yield": true, "async": true}

// jsKeptComment reports a comment a tool reads as code.
func jsKeptComment(c string) bool {
	return strings.HasPrefix(c, "///") || strings.Contains(c, "@ts-") || strings.Contains(c, "@jsx") || strings.Contains(c, "sourceMappingURL")
}

// jsSensitive: whitespace between two punctuators, and a line break where
// ASI reads one.
func jsSensitive(prev, t Token) (bool, bool) {
	nl := prev.Kind == Ident && jsRestricted[prev.Text] || t.Kind == Op && (t.Text == "++" || t.Text == "--" || t.Text == "=>")
	return prev.Kind == Op && t.Kind == Op, nl
}

// JSTokens is src's JavaScript or TypeScript tokens without comments:
// names, numbers, string and template pieces (a template is split at
// each ${ and its expression read as code), regular expressions (a slash
// where a division cannot stand — after an operator, a keyword such as
// return, a ")" that closes an if/while/for/with head, a "}" — starts
// one), punctuators. A #! line and the comments jsKeptComment names are
// tokens too.
func JSTokens(src []byte) []Token {
	toks, _ := jsTokens(src)
	return toks
}

// jsTokens also reports whether src was read without recovering from an
// unterminated string, template, comment or regular expression.
func jsTokens(src []byte) (_ []Token, clean bool) {
	s := string(src)
	clean = true
	var toks []Token
	spaced, nl := false, false
	emit := func(t Token) {
		t.Spaced, t.NL = spaced, nl
		toks = append(toks, t)
		spaced, nl = false, false
	}
	var parens []bool   // per open "(": did it follow if/while/for/with
	var templates []int // per open ${: the braces opened inside it
	closedHead := false // the last token is a ")" that closed such a head
	regexOK := func() bool {
		if len(toks) == 0 {
			return true
		}
		p := toks[len(toks)-1]
		switch p.Kind {
		case Ident:
			return jsRegexAfter[p.Text]
		case Number, String:
			return false
		case Op:
			switch p.Text {
			case ")":
				return closedHead
			case "]", "++", "--":
				return false
			}
			return true
		}
		return true
	}
	i := 0
	if strings.HasPrefix(s, "#!") {
		end := lineEnd(s, 0)
		emit(Token{Kind: Comment, Text: s[:end], Start: 0, End: end})
		i = end
	}
	for i < len(s) {
		c := s[i]
		if c == '\n' || c == '\r' {
			i++
			spaced, nl = true, true
			continue
		}
		if c == ' ' || c == '\t' || c == '\v' || c == '\f' {
			i++
			spaced = true
			continue
		}
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == '\u2028' || r == '\u2029' {
				i += n
				spaced, nl = true, true
				continue
			}
			if r == '\uFEFF' || unicode.Is(unicode.Zs, r) {
				i += n
				spaced = true
				continue
			}
		}
		head := false
		switch {
		case strings.HasPrefix(s[i:], "//"):
			end := lineEnd(s, i)
			if k := strings.IndexAny(s[i:end], "\u2028\u2029"); k >= 0 {
				end = i + k // a line separator ends the comment too
			}
			if jsKeptComment(s[i:end]) {
				emit(Token{Kind: Comment, Text: s[i:end], Start: i, End: end})
			}
			i = end
			spaced = true
			continue
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				end, clean = len(s), false
			} else {
				end += i + 4
			}
			text := s[i:end]
			if jsKeptComment(text) {
				emit(Token{Kind: Comment, Text: text, Start: i, End: end})
			}
			if strings.ContainsAny(text, "\n\r") || strings.Contains(text, "\u2028") || strings.Contains(text, "\u2029") {
				nl = true
			}
			i = end
			spaced = true
			continue
		case c == '"' || c == '\'':
			end := jsString(s, i)
			clean = clean && end > i+1 && s[end-1] == c && (end-i < 3 || s[end-2] != '\\')
			emit(Token{Kind: String, Text: s[i:end], Start: i, End: end})
			i = end
		case c == '`':
			end, open := jsTemplate(s, i+1)
			clean = clean && (open || s[end-1] == '`' && end > i+1)
			emit(Token{Kind: String, Text: s[i:end], Start: i, End: end})
			i = end
			if open {
				templates = append(templates, 0)
			}
		case c == '}' && len(templates) > 0 && templates[len(templates)-1] == 0:
			templates = templates[:len(templates)-1]
			end, open := jsTemplate(s, i+1)
			clean = clean && (open || s[end-1] == '`')
			emit(Token{Kind: String, Text: s[i:end], Start: i, End: end})
			i = end
			if open {
				templates = append(templates, 0)
			}
		case c == '/' && regexOK():
			if end, ok := jsRegex(s, i); ok {
				emit(Token{Kind: String, Text: s[i:end], Start: i, End: end})
				i = end
				break
			}
			clean = false
			emit(Token{Kind: Op, Text: "/", Start: i, End: i + 1})
			i++
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			end := number(s, i)
			emit(Token{Kind: Number, Text: s[i:end], Start: i, End: end})
			i = end
		case isJSIdent(s, i) || c == '#' && i+1 < len(s) && isJSIdent(s, i+1):
			end := i + 1
			for end < len(s) && isJSIdent(s, end) {
				end++
			}
			emit(Token{Kind: Ident, Text: s[i:end], Start: i, End: end})
			i = end
		default:
			op := matchOp(s[i:], jsOps)
			switch op {
			case "(":
				prev := ""
				if n := len(toks); n > 0 && toks[n-1].Kind == Ident {
					prev = toks[n-1].Text
				}
				parens = append(parens, prev == "if" || prev == "while" || prev == "for" || prev == "with")
			case ")":
				if n := len(parens); n > 0 {
					head = parens[n-1]
					parens = parens[:n-1]
				}
			case "{":
				if n := len(templates); n > 0 {
					templates[n-1]++
				}
			case "}":
				if n := len(templates); n > 0 {
					templates[n-1]--
				}
			}
			emit(Token{Kind: Op, Text: op, Start: i, End: i + len(op)})
			i += len(op)
		}
		closedHead = head
	}
	if len(templates) > 0 || len(toks) > 0 && toks[len(toks)-1].Kind == String && strings.HasSuffix(toks[len(toks)-1].Text, "${") {
		clean = false
	}
	return toks, clean
}

// isJSIdent reports whether an identifier may go on at i: letters, digits,
// _ and $, a \u escape, or any non-ASCII rune that is not whitespace.
func isJSIdent(s string, i int) bool {
	c := s[i]
	if isIdentPart(c) && c < 0x80 || c == '$' || c == '\\' {
		return true
	}
	if c < 0x80 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !unicode.IsSpace(r) && r != '\uFEFF' && !unicode.Is(unicode.Zs, r)
}

// jsString scans a quoted string at i to its closing quote, or,
// unterminated, to the end of its line.
func jsString(s string, i int) int {
	q := s[i]
	j := i + 1
	for j < len(s) {
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '\n', '\r':
			return j
		case q:
			return j + 1
		}
		j++
	}
	return len(s)
}

// jsTemplate scans template text from i (just past ` or }) to its closing
// backquote (open false) or to a ${ (open true, the end just past it).
func jsTemplate(s string, i int) (end int, open bool) {
	for j := i; j < len(s); j++ {
		switch {
		case s[j] == '\\':
			j++
		case s[j] == '`':
			return j + 1, false
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			return j + 2, true
		}
	}
	return len(s), false
}

// jsRegex scans a regular expression literal at i: to the / that is not
// escaped nor inside a [class], then its flags. One that meets the end of
// its line first is no regular expression (ok false).
func jsRegex(s string, i int) (int, bool) {
	class := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\n', '\r':
			return 0, false
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if class {
				continue
			}
			j++
			for j < len(s) && isJSIdent(s, j) {
				j++
			}
			return j, true
		}
	}
	return 0, false
}
