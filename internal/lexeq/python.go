package lexeq

import (
	"regexp"
	"strings"
)

// pyOps are Python's operators and delimiters of more than one byte,
// longest first, so the longest match wins.
var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="}

// pyCoding is PEP 263's encoding declaration.
var pyCoding = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+`)

// PythonTokens is src's Python tokens without comments: names, numbers,
// strings (prefix and quotes included, the whole of a triple-quoted one),
// operators, NEWLINE at the end of each logical line, and INDENT and
// DEDENT where the block structure changes (a tab advances to the next
// multiple of 8, as CPython counts it). Blank and comment-only lines and
// line breaks inside brackets or after a backslash are whitespace.
func PythonTokens(src []byte) []Token {
	toks, _ := pythonTokens(src)
	return toks
}

// pythonTokens also reports whether src was read without recovering from
// an unterminated string.
func pythonTokens(src []byte) (_ []Token, clean bool) {
	s := string(src)
	clean = true
	var toks []Token
	indents := []int{0}
	depth := 0
	lineStart := true
	spaced, nl := false, false
	line := 1
	emit := func(t Token) {
		t.Spaced, t.NL = spaced, nl
		toks = append(toks, t)
		spaced, nl = false, false
	}
	i := 0
	for i < len(s) {
		if lineStart && depth == 0 {
			// Measure the indentation; a blank or comment-only line has none.
			col, j := 0, i
			for j < len(s) {
				switch s[j] {
				case ' ':
					col++
				case '\t':
					col = (col/8 + 1) * 8
				case '\f':
					col = 0
				default:
					goto measured
				}
				j++
			}
		measured:
			if j >= len(s) || s[j] == '#' || s[j] == '\n' || s[j] == '\r' {
				if j < len(s) && s[j] == '#' {
					end := lineEnd(s, j)
					if line <= 2 && (line == 1 && strings.HasPrefix(s[j:], "#!") || pyCoding.MatchString(s[j:end])) {
						emit(Token{Kind: Comment, Text: s[j:end], Start: j, End: end})
					}
					j = end
				}
				i, line = skipNewline(s, j), line+1
				spaced, nl = true, true
				continue
			}
			if col > indents[len(indents)-1] {
				indents = append(indents, col)
				emit(Token{Kind: Indent, Start: j, End: j})
			}
			for col < indents[len(indents)-1] {
				indents = indents[:len(indents)-1]
				emit(Token{Kind: Dedent, Start: j, End: j})
			}
			if col != indents[len(indents)-1] {
				// Dedented to no enclosing level: CPython refuses it; it is
				// still a token, so the change is seen.
				indents = append(indents, col)
				emit(Token{Kind: Other, Text: "inconsistent-dedent", Start: j, End: j})
			}
			i, lineStart = j, false
			continue
		}
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			i++
			spaced = true
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\n' || s[i+1] == '\r'):
			i = skipNewline(s, i+1) // continuation: not a new logical line
			line++
			spaced = true
		case c == '#':
			i = lineEnd(s, i)
			spaced = true
		case c == '\n' || c == '\r':
			if depth == 0 {
				emit(Token{Kind: Newline, Start: i, End: i})
				lineStart = true
			}
			i = skipNewline(s, i)
			line++
			spaced, nl = true, true
		case c == '"' || c == '\'':
			end, lines, ok := pyString(s, i)
			clean = clean && ok
			emit(Token{Kind: String, Text: s[i:end], Start: i, End: end})
			i, line = end, line+lines
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			end := number(s, i)
			emit(Token{Kind: Number, Text: s[i:end], Start: i, End: end})
			i = end
		case isIdentStart(c):
			end := i
			for end < len(s) && isIdentPart(s[end]) {
				end++
			}
			if end < len(s) && (s[end] == '"' || s[end] == '\'') && end-i <= 3 && strings.Trim(s[i:end], "rRbBuUfFtT") == "" {
				send, lines, ok := pyString(s, end)
				clean = clean && ok
				emit(Token{Kind: String, Text: s[i:send], Start: i, End: send})
				i, line = send, line+lines
				continue
			}
			emit(Token{Kind: Ident, Text: s[i:end], Start: i, End: end})
			i = end
		default:
			op := matchOp(s[i:], pyOps)
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth = max(0, depth-1)
			}
			emit(Token{Kind: Op, Text: op, Start: i, End: i + len(op)})
			i += len(op)
		}
	}
	if !lineStart {
		emit(Token{Kind: Newline, Start: len(s), End: len(s)})
	}
	for len(indents) > 1 {
		indents = indents[:len(indents)-1]
		emit(Token{Kind: Dedent, Start: len(s), End: len(s)})
	}
	return toks, clean
}

// pyString scans the string literal whose opening quote is at i, to its
// closing quote (a backslash always escapes the next byte, raw strings
// included, as the tokenizer reads them) or, unterminated, to the end of
// its line (single-quoted) or of the file (triple-quoted). It returns the
// end offset, the line breaks it holds and whether it was terminated.
func pyString(s string, i int) (end, lines int, ok bool) {
	q := s[i]
	triple := strings.HasPrefix(s[i:], strings.Repeat(string(q), 3))
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(s) {
		switch {
		case s[j] == '\\' && j+1 < len(s):
			if s[j+1] == '\n' || s[j+1] == '\r' {
				lines++
			}
			j += 2
			if s[j-1] == '\r' && j < len(s) && s[j] == '\n' {
				j++
			}
			continue
		case s[j] == '\n' || s[j] == '\r':
			if !triple {
				return j, lines, false
			}
			lines++
		case s[j] == q:
			if !triple {
				return j + 1, lines, true
			}
			if strings.HasPrefix(s[j:], strings.Repeat(string(q), 3)) {
				return j + 3, lines, true
			}
		}
		j++
	}
	return len(s), lines, false
}

// lineEnd is the offset of the line break ending the line at i, or len(s).
func lineEnd(s string, i int) int {
	for i < len(s) && s[i] != '\n' && s[i] != '\r' {
		i++
	}
	return i
}

// skipNewline steps over the line break at i (\n, \r or \r\n).
func skipNewline(s string, i int) int {
	if i < len(s) && s[i] == '\r' {
		i++
		if i < len(s) && s[i] == '\n' {
			i++
		}
		return i
	}
	if i < len(s) && s[i] == '\n' {
		i++
	}
	return i
}

// number scans a numeric literal at i: digits, letters, underscores and
// dots, and a sign right after a decimal exponent's e.
func number(s string, i int) int {
	hex := strings.HasPrefix(s[i:], "0x") || strings.HasPrefix(s[i:], "0X")
	j := i
	for j < len(s) {
		c := s[j]
		switch {
		case isIdentPart(c) || c == '.':
			j++
		case (c == '+' || c == '-') && !hex && j > i && (s[j-1] == 'e' || s[j-1] == 'E'):
			j++
		default:
			return j
		}
	}
	return j
}

// matchOp is the longest operator in ops that s starts with, else its
// first byte.
func matchOp(s string, ops []string) string {
	for _, op := range ops {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return s[:1]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }
