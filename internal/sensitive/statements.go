package sensitive

import (
	"bytes"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"
	"unicode/utf8"
)

// statement is one import statement as the file writes it: its physical
// lines joined by single spaces, trimmed. first and last are its physical
// line numbers (0-based). unparsed marks one that ran to the end of the file
// inside a string, comment or bracket, or that the scanner rejected: it is
// judged a hit whatever it names (fail closed).
type statement struct {
	text        string
	first, last int
	unparsed    bool
}

// Byte classes of a mask: code, inside a string literal, inside a comment.
const (
	mCode    = 'c'
	mString  = 's'
	mComment = 'm'
)

// syntax is what the masker needs to know about a language's lexemes.
type syntax struct {
	hashComment  bool   // '#' starts a line comment (Python, Ruby, PHP)
	slashComment bool   // "//" and "/* */" (the C family, JavaScript, Go)
	quotes       string // characters that open a string ending at the same one
	multiline    string // of those, the ones whose strings may span lines ('`' in JS and Go)
	triple       bool   // Python's ''' and """
}

// mask classes every byte of src. brokenAt are the starts of single-line
// strings that a newline ended; atEOF reports a string or comment still
// open at the end of the file.
func mask(src string, syn syntax) (m []byte, brokenAt []int, atEOF bool) {
	m = make([]byte, len(src))
	var quote [256]bool
	for i := 0; i < len(syn.quotes); i++ {
		quote[syn.quotes[i]] = true
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case syn.hashComment && c == '#', syn.slashComment && c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			fill(m[i:i+j], mComment)
			i += j
		case syn.slashComment && c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			end := i + 2 + j + 2
			if j < 0 {
				end, atEOF = len(src), true
			}
			fill(m[i:end], mComment)
			i = end
		case quote[c]:
			end, ok := stringEnd(src, i, syn)
			switch {
			case ok:
			case end == len(src):
				atEOF = true
			default:
				brokenAt = append(brokenAt, i)
			}
			fill(m[i:end], mString)
			i = end
		default:
			m[i] = mCode
			i++
		}
	}
	return m, brokenAt, atEOF
}

// stringEnd returns the index just past the string literal opening at i,
// and false when the file or (for a single-line string) the line ended
// first; a backslash escapes the next byte.
func stringEnd(src string, i int, syn syntax) (int, bool) {
	q := src[i]
	delim := src[i : i+1]
	if syn.triple && i+2 < len(src) && src[i+1] == q && src[i+2] == q {
		delim = src[i : i+3]
	}
	multi := len(delim) == 3 || strings.IndexByte(syn.multiline, q) >= 0
	for j := i + len(delim); j < len(src); j++ {
		switch {
		case src[j] == '\\' && q != '`':
			j++
		case src[j] == '\n' && !multi:
			return j, false
		case strings.HasPrefix(src[j:], delim):
			return j + len(delim), true
		}
	}
	return len(src), false
}

func fill(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

// span is a stretch of the source with its mask, as a statement collects
// it: pieces of physical lines joined by a space.
type span struct {
	text, mask  []byte
	first, last int
	open        bool // ran into the end of the file or a broken literal
}

func (s *span) add(src string, m []byte, from, to, line int) {
	seg := strings.TrimSpace(src[from:to])
	if seg == "" {
		return
	}
	off := from + strings.Index(src[from:to], seg)
	if len(s.text) == 0 {
		s.first = line
	} else {
		s.text, s.mask = append(s.text, ' '), append(s.mask, mCode)
	}
	s.text = append(s.text, seg...)
	s.mask = append(s.mask, m[off:off+len(seg)]...)
	s.last = line
}

// codeWord reports whether the keyword kw occurs in s as code: not in a
// string or comment, and not part of a longer identifier.
func codeWord(text, m []byte, kw string) bool { return codeWordAt(text, m, kw) >= 0 }

// codeWordAt is the index of the first code occurrence of kw, or -1.
func codeWordAt(text, m []byte, kw string) int {
	t := string(text)
	for i := 0; ; {
		j := strings.Index(t[i:], kw)
		if j < 0 {
			return -1
		}
		at := i + j
		end := at + len(kw)
		if !identByte(t, at-1) && !identByte(t, end) && allCode(m[at:end]) {
			return at
		}
		i = at + 1
	}
}

func identByte(t string, i int) bool {
	if i < 0 || i >= len(t) {
		return false
	}
	c := t[i]
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func allCode(m []byte) bool {
	for _, c := range m {
		if c != mCode {
			return false
		}
	}
	return true
}

// splitCode cuts s at every code byte in seps, at bracket depth 0 when
// depth0 (the separator stays with the piece before it when keep).
func splitCode(text, m []byte, seps string, depth0, keep bool) [][2][]byte {
	var out [][2][]byte
	start, depth := 0, 0
	for i, c := range text {
		if m[i] != mCode {
			continue
		}
		switch c {
		case '(', '[', '{', ')', ']', '}':
			depth = nest(c, depth)
			continue
		}
		if strings.IndexByte(seps, c) < 0 || depth0 && depth > 0 {
			continue
		}
		end := i
		if keep {
			end = i + 1
		}
		out = append(out, [2][]byte{text[start:end], m[start:end]})
		start = i + 1
	}
	return append(out, [2][]byte{text[start:], m[start:]})
}

func trimPiece(p [2][]byte) (text, m []byte) {
	t, mm := p[0], p[1]
	for len(t) > 0 && isSpace(t[0]) {
		t, mm = t[1:], mm[1:]
	}
	for len(t) > 0 && isSpace(t[len(t)-1]) {
		t, mm = t[:len(t)-1], mm[:len(mm)-1]
	}
	return t, mm
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

// pythonCompound are the keywords whose header a ':' ends, after which a
// simple statement may follow on the same line.
var pythonCompound = []string{"if", "elif", "else", "try", "except", "finally", "while", "for",
	"with", "def", "class", "async", "match", "case"}

// pythonStatements joins physical lines into logical lines (brackets,
// triple-quoted strings, backslash continuations), splits each on ';' and
// after a compound statement's header ':', and keeps the pieces where the
// keyword import occurs as code (it is reserved: any such piece is an import,
// whatever it starts with) or that call __import__ or import_module.
func pythonStatements(src string) []statement {
	m, broken, atEOF := mask(src, syntax{hashComment: true, quotes: `'"`, triple: true})
	// A single-line string that a newline ended (a syntax error) makes its
	// logical line unparsed.
	brokenLine := map[int]bool{}
	for _, b := range broken {
		brokenLine[strings.Count(src[:b], "\n")] = true
	}
	var out []statement
	var cur span
	depth, line, from := 0, 0, 0
	flush := func(open bool) {
		for l := cur.first; l <= cur.last && !open; l++ {
			open = brokenLine[l]
		}
		cur.open = open
		// Every form pythonPieces keeps spells "import".
		if bytes.Contains(cur.text, []byte("import")) {
			out = append(out, pythonPieces(cur)...)
		}
		cur = span{}
	}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			cont := m[i] == mString || depth > 0 // inside a triple-quoted string or brackets
			if !cont && i > 0 && src[i-1] == '\\' && m[i-1] == mCode {
				cur.add(src, m, from, i-1, line)
				cont = true
			} else {
				cur.add(src, m, from, i, line)
			}
			line++
			from = i + 1
			if !cont {
				flush(false)
			}
			continue
		}
		if m[i] != mCode {
			continue
		}
		depth = nest(src[i], depth)
	}
	cur.add(src, m, from, len(src), line)
	flush(depth > 0 || atEOF || strings.HasSuffix(src, "\\"))
	return out
}

func pythonPieces(s span) []statement {
	var out []statement
	var walk func(text, m []byte)
	walk = func(text, m []byte) {
		for _, p := range splitCode(text, m, ";", true, false) {
			t, pm := trimPiece(p)
			if len(t) == 0 {
				continue
			}
			if w := firstWord(t); isOneOf(w, pythonCompound) {
				if i := headerColon(t, pm); i >= 0 {
					walk(t[:i], pm[:i])
					walk(t[i+1:], pm[i+1:])
					continue
				}
			}
			if codeWord(t, pm, "import") || strings.Contains(string(t), "__import__(") || strings.Contains(string(t), "import_module(") {
				out = append(out, statement{text: string(t), first: s.first, last: s.last, unparsed: s.open})
			}
		}
	}
	walk(s.text, s.mask)
	if s.open && len(out) == 0 && strings.Contains(string(s.text), "import") {
		out = append(out, statement{text: strings.TrimSpace(string(s.text)), first: s.first, last: s.last, unparsed: true})
	}
	return out
}

// headerColon is the index of the ':' that ends a compound statement's
// header: the first code ':' at bracket depth 0 that is not part of ":=".
func headerColon(t, m []byte) int {
	depth := 0
	for i, c := range t {
		if m[i] != mCode {
			continue
		}
		depth = nest(c, depth)
		switch c {
		case ':':
			if depth == 0 && (i+1 >= len(t) || t[i+1] != '=') {
				return i
			}
		}
	}
	return -1
}

func firstWord(t []byte) string {
	i := 0
	for i < len(t) && (t[i] == '_' || t[i] >= 'a' && t[i] <= 'z' || t[i] >= 'A' && t[i] <= 'Z' || i > 0 && t[i] >= '0' && t[i] <= '9') {
		i++
	}
	return string(t[:i])
}

func isOneOf(w string, list []string) bool {
	for _, x := range list {
		if w == x {
			return true
		}
	}
	return false
}

// jsStatements splits JavaScript and TypeScript into statements at code
// ';' and at line ends, except that an import or export statement goes on
// while a brace group it opened is open or while the next line starts with
// "from"; it keeps the static imports and re-exports and every piece that
// calls require( or import( anywhere (in a string or a template too: fail
// closed).
func jsStatements(src string) []statement {
	// A string a newline ends is a syntax error in JavaScript; the line
	// test still reads the lines after it.
	m, _, atEOF := mask(src, syntax{slashComment: true, quotes: "'\"`", multiline: "`"})
	lines := strings.Split(src, "\n")
	var out []statement
	var cur span
	depth, line, from, importish := 0, 0, 0, false
	emit := func(open bool) {
		cur.open = open
		// Every form isJSStatement keeps spells one of these.
		if bytes.Contains(cur.text, []byte("import")) || bytes.Contains(cur.text, []byte("require(")) || bytes.Contains(cur.text, []byte("from")) {
			for _, p := range splitCode(cur.text, cur.mask, ";", false, true) {
				t, pm := trimPiece(p)
				if len(t) > 0 && isJSStatement(t, pm) {
					out = append(out, statement{text: string(t), first: cur.first, last: cur.last, unparsed: cur.open && importish})
				}
			}
		}
		cur, depth, importish = span{}, 0, false
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' {
			cur.add(src, m, from, i, line)
			if len(cur.text) > 0 && !importish {
				importish = startsImportish(cur.text, cur.mask)
			}
			line++
			from = i + 1
			next := ""
			if line < len(lines) {
				next = strings.TrimSpace(lines[line])
			}
			if !(importish && (depth > 0 || strings.HasPrefix(next, "from"))) && m[i] != mString && m[i] != mComment {
				emit(false)
			}
			continue
		}
		if m[i] != mCode {
			continue
		}
		depth = nest(c, depth)
	}
	cur.add(src, m, from, len(src), line)
	if len(cur.text) > 0 && !importish {
		importish = startsImportish(cur.text, cur.mask)
	}
	emit(depth > 0 || atEOF)
	return out
}

// startsImportish reports import or export as code anywhere in the
// statement so far (`x(); import {` goes on over the next lines too).
func startsImportish(t, m []byte) bool {
	return codeWord(t, m, "import") || codeWord(t, m, "export")
}

func isJSStatement(t, m []byte) bool {
	s := string(t)
	if m[0] == mCode && isJSImport(s) {
		return true
	}
	return strings.Contains(s, "require(") || strings.Contains(s, "import(")
}

// goStatements tokenises Go with go/scanner and returns each import spec:
// `import "x"` for a single import, the spec (`name "path"`) inside a
// block. Any import declaration the scanner rejects or that the file ends
// inside is unparsed.
func goStatements(src string) []statement {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	inImport, scanErr := false, false
	s.Init(file, []byte(src), func(token.Position, string) {
		if inImport {
			scanErr = true
		}
	}, 0)
	var out []statement
	lineOf := func(p token.Pos) int { return file.Line(p) - 1 }
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.IMPORT {
			continue
		}
		inImport, scanErr = true, false
		first := lineOf(pos)
		pos, tok, lit := s.Scan()
		if tok == token.LPAREN {
			var spec []string
			specFirst := first
		block:
			for {
				pos, tok, lit = s.Scan()
				switch tok {
				case token.SEMICOLON, token.RPAREN:
					if len(spec) > 0 {
						out = append(out, statement{text: strings.Join(spec, " "), first: specFirst, last: lineOf(pos), unparsed: scanErr})
					}
					spec = nil
					if tok == token.RPAREN {
						break block
					}
				case token.EOF:
					// The block never closed.
					out = append(out, statement{text: strings.TrimSpace("import ( " + strings.Join(spec, " ")), first: first, last: lineOf(pos), unparsed: true})
					return out
				default:
					if len(spec) == 0 {
						specFirst = lineOf(pos)
					}
					t, ok := tokText(tok, lit)
					spec = append(spec, t)
					scanErr = scanErr || !ok
				}
			}
			inImport = false
			continue
		}
		spec := []string{"import"}
		for tok != token.SEMICOLON && tok != token.EOF {
			t, ok := tokText(tok, lit)
			spec = append(spec, t)
			scanErr = scanErr || !ok
			pos, tok, lit = s.Scan()
		}
		out = append(out, statement{text: strings.Join(spec, " "), first: first, last: lineOf(pos), unparsed: scanErr || tok == token.EOF && len(spec) == 1})
		inImport = false
		if tok == token.EOF {
			return out
		}
	}
}

// tokText is a token as the statement shows it; an import path is shown
// unquoted and requoted, so that an escape ("\x61uth") cannot hide a word.
func tokText(tok token.Token, lit string) (string, bool) {
	if tok == token.STRING {
		p, err := strconv.Unquote(lit)
		if err != nil || !utf8.ValidString(p) {
			return lit, false
		}
		return `"` + p + `"`, true
	}
	if lit != "" {
		return lit, true
	}
	return tok.String(), true
}

// otherStatements handles the languages whose imports are single
// statements on their own (JVM, Rust, Ruby, PHP, C#): each line is cut at
// code ';' (kept with its piece), each piece judged by the language's test
// or, for a reserved word in anywhere (Rust's use, Java's import, PHP's
// require), found as code anywhere in it (`fn f() { use crate::jwt; }`),
// and an import whose brace group is still open goes on over the next lines
// until it closes (Rust's `use a::{\n b,\n};`).
func otherStatements(src string, l lang, isImport func(string) bool, anywhere ...string) []statement {
	syn := syntax{slashComment: true, quotes: `"`}
	switch l {
	case langRuby:
		syn = syntax{hashComment: true, quotes: `'"`}
	case langPHP:
		syn = syntax{hashComment: true, slashComment: true, quotes: `'"`}
	case langRust, langCSharp:
		syn.quotes = `"` // a Rust lifetime 'a is not a string
	case langJVM:
		syn.quotes = `"`
	}
	m, _, _ := mask(src, syn)
	var out []statement
	var pending *span
	depth := 0
	start := 0
	for ln, raw := range strings.SplitAfter(src, "\n") {
		end := start + len(raw)
		lineText, lineMask := []byte(src[start:end]), m[start:end]
		if pending != nil {
			pending.add(src, m, start, end, ln)
			depth += braceDelta(lineText, lineMask)
			if depth <= 0 {
				out = append(out, statement{text: string(pending.text), first: pending.first, last: pending.last})
				pending, depth = nil, 0
			}
			start = end
			continue
		}
		for _, p := range splitCode(lineText, lineMask, ";", false, true) {
			t, pm := trimPiece(p)
			if len(t) == 0 {
				continue
			}
			if pm[0] != mCode || !isImport(string(t)) {
				at := -1
				for _, kw := range anywhere {
					if i := codeWordAt(t, pm, kw); i >= 0 && (at < 0 || i < at) {
						at = i
					}
				}
				if at < 0 {
					continue
				}
				t, pm = t[at:], pm[at:]
			}
			if d := braceDelta(t, pm); d > 0 {
				pending = &span{}
				pending.add(string(t), pm, 0, len(t), ln)
				depth = d
				continue
			}
			out = append(out, statement{text: string(t), first: ln, last: ln})
		}
		start = end
	}
	if pending != nil {
		out = append(out, statement{text: string(pending.text), first: pending.first, last: pending.last, unparsed: true})
	}
	return out
}

func braceDelta(t, m []byte) int {
	d := 0
	for i, c := range t {
		if m[i] != mCode {
			continue
		}
		switch c {
		case '{':
			d++
		case '}':
			d--
		}
	}
	return d
}

// nest is the bracket depth after the code byte c.
func nest(c byte, depth int) int {
	switch c {
	case '(', '[', '{':
		return depth + 1
	case ')', ']', '}':
		return max(depth-1, 0)
	}
	return depth
}
