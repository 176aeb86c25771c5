package conformance

import (
	"bytes"
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"
)

// acceptedFromLines is githubAccepted's answer read from the lines of src,
// without parsing it again: which of keyErrs (actionlint's errors on a
// top-level description or a concurrency queue) GitHub accepts. ok is
// false where the lines do not make the answer certain, and the caller
// parses the file.
//
// It answers only for a file in plain block style (blockLines): no tabs,
// no line breaks but \n, no anchors, aliases, tags or directives, no
// quoted scalar or flow collection over more than one line, no scalar
// value starting on the line after its key. In such a file every line
// that is not blank, a comment, or the rest of a multi-line scalar is a
// key or a sequence entry at its own place, so a key's mapping is the
// nearest line above it that is indented less. Without aliases,
// actionlint's tree and a parse's are the same nodes, and actionlint
// reports an unknown key only on its first occurrence in a mapping, so
// the key an error names is the one a parse would find first. Each key
// is still judged from its lines: the key plain and at its place (a
// description at the top level; a queue in a concurrency mapping that is
// the workflow's or a job's in the top-level jobs) and its value on its
// own line. A duplicate of any key on the way (a second jobs, a job's
// second concurrency) is left to the parse.
func acceptedFromLines(src []byte, keyErrs []*actionlint.Error) (map[*actionlint.Error]bool, bool) {
	lines, ok := blockLines(src)
	if !ok {
		return nil, false
	}
	accepted := map[*actionlint.Error]bool{}
	for _, e := range keyErrs {
		acc, ok := judgeKeyLine(src, lines, e)
		if !ok {
			return nil, false
		}
		accepted[e] = acc
	}
	return accepted, true
}

// judgeKeyLine judges one key error from the lines; ok false: uncertain.
func judgeKeyLine(src []byte, lines []yamlLine, e *actionlint.Error) (accepted, ok bool) {
	if e.Line < 1 || e.Line > len(lines) || e.Column < 1 {
		return false, false
	}
	i := e.Line - 1
	l := &lines[i]
	if !l.structural || l.dash || l.keyCol != e.Column-1 || l.indent != l.keyCol {
		return false, false
	}
	key := string(src[l.key[0]:l.key[1]])
	switch {
	case key == "description" && strings.HasPrefix(e.Message, `unexpected key "description" for "workflow" section`):
		// A top-level key, the first of its name, with a string value.
		if l.indent != 0 || earlierKey(src, lines, i, 0, "description") {
			return false, false
		}
		str, _, ok := l.value(src)
		return str, ok
	case key == "queue" && strings.HasPrefix(e.Message, `unexpected key "queue" for "concurrency" section`):
		if l.val == valEscaped || l.val == valBlock {
			return false, false // a string whose text is not read here
		}
		str, text, ok := l.value(src)
		if !ok {
			return false, false
		}
		if !str || (text != "single" && text != "max") {
			return false, true // the value alone refuses it
		}
		// The concurrency mapping it is in, the first of its name.
		p, ok := parentLine(src, lines, i, "queue")
		if !ok || !lines[p].plainKey(src, "concurrency") {
			return false, false
		}
		if lines[p].indent == 0 { // the workflow's
			if earlierKey(src, lines, p, 0, "concurrency") {
				return false, false
			}
			return true, true
		}
		// A job's: the job's key, then the top-level jobs.
		j, ok := parentLine(src, lines, p, "concurrency")
		if !ok || lines[j].dash || lines[j].key[0] == lines[j].key[1] || lines[j].val != valNone {
			return false, false
		}
		r, ok := parentLine(src, lines, j, "")
		if !ok || lines[r].indent != 0 || !lines[r].plainKey(src, "jobs") || earlierKey(src, lines, r, 0, "jobs") {
			return false, false
		}
		return true, true
	}
	return false, false
}

// parentLine is the line of the mapping key that line i's key is in: the
// nearest structural line above it indented less. A sibling key (same
// indent, no dash) named dup on the way makes it uncertain.
func parentLine(src []byte, lines []yamlLine, i int, dup string) (int, bool) {
	n := lines[i].indent
	for k := i - 1; k >= 0; k-- {
		l := &lines[k]
		if !l.structural {
			continue
		}
		if l.indent >= n {
			if dup != "" && l.indent == n && !l.dash && string(src[l.key[0]:l.key[1]]) == dup {
				return 0, false
			}
			continue
		}
		return k, true
	}
	return 0, false
}

// earlierKey reports a key name at indent ind (no dash) on a structural
// line before line i.
func earlierKey(src []byte, lines []yamlLine, i, ind int, name string) bool {
	for k := 0; k < i; k++ {
		l := &lines[k]
		if l.structural && !l.dash && l.indent == ind && string(src[l.key[0]:l.key[1]]) == name {
			return true
		}
	}
	return false
}

// yamlLine is one line of a file in plain block style.
type yamlLine struct {
	structural bool   // a key or a sequence entry; not blank, a comment or the rest of a scalar
	indent     int    // leading spaces
	dash       bool   // a sequence entry ("- ")
	keyCol     int    // the key's column, from 0
	key        [2]int // the plain key's bytes in src; empty when the line has no key
	val        byte   // the value on the line: valNone, valPlain, valQuoted, valEscaped, valBlock, valFlow
	text       [2]int // a plain value's bytes, or a quoted value's between the quotes
	more       bool   // a plain value goes on over the next lines
}

const (
	valNone    = 0   // nothing after the key (a mapping, a sequence or null follows)
	valPlain   = 'p' // a plain scalar
	valQuoted  = 'q' // a quoted scalar without escapes
	valEscaped = 'e' // a quoted scalar with escapes
	valBlock   = '|' // a literal or folded block scalar
	valFlow    = '[' // a flow sequence or mapping, closed on the line
)

func (l *yamlLine) plainKey(src []byte, name string) bool {
	return !l.dash && l.val == valNone && string(src[l.key[0]:l.key[1]]) == name
}

// value reads the key's value: whether it is a string (a parse's !!str)
// and its text; ok false when the line does not make it certain.
func (l *yamlLine) value(src []byte) (str bool, text string, ok bool) {
	switch l.val {
	case valNone, valFlow:
		// A mapping, a sequence or null: in plain block style a scalar
		// never starts on the next line.
		return false, "", true
	case valQuoted:
		return true, string(src[l.text[0]:l.text[1]]), true
	case valBlock, valEscaped:
		// Always a string; the text is not read here.
		return true, "", true
	case valPlain:
		if l.more {
			return false, "", false
		}
		text = string(src[l.text[0]:l.text[1]])
		return (&yaml.Node{Kind: yaml.ScalarNode, Value: text}).ShortTag() == "!!str", text, true
	}
	return false, "", false
}

// blockLines reads src line by line as plain block-style YAML; ok is false
// for anything else (see acceptedFromLines).
func blockLines(src []byte) ([]yamlLine, bool) {
	if bytes.IndexByte(src, '\r') >= 0 || bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) ||
		bytes.Contains(src, []byte("\u0085")) || bytes.Contains(src, []byte("\u2028")) || bytes.Contains(src, []byte("\u2029")) {
		return nil, false
	}
	lines := make([]yamlLine, 0, bytes.Count(src, []byte{'\n'})+1)
	skip := -1    // lines indented more than this belong to the scalar above
	owner := -1   // the line whose plain value they continue, or -1
	seen := false // a structural line or "---" was read
	for start := 0; start <= len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		ln := src[start:end]
		base := start
		start = end + 1
		lines = append(lines, yamlLine{})
		l := &lines[len(lines)-1]
		ind := 0
		for ind < len(ln) && ln[ind] == ' ' {
			ind++
		}
		rest := ln[ind:]
		if skip >= 0 {
			if isBlank(rest) || ind > skip {
				if owner >= 0 && !isBlank(rest) {
					lines[owner].more = true
				}
				continue
			}
			skip, owner = -1, -1
		}
		if bytes.IndexByte(ln, '\t') >= 0 {
			return nil, false
		}
		if len(rest) == 0 || rest[0] == '#' {
			continue
		}
		if ind == 0 && (bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("..."))) {
			after := rest[3:]
			if seen || !bytes.HasPrefix(rest, []byte("---")) || !endsLine(after) {
				return nil, false
			}
			seen = true
			continue
		}
		seen = true
		l.structural = true
		l.indent = ind
		pos := ind
		lastDash := -1
		for pos < len(ln) && ln[pos] == '-' && (pos+1 == len(ln) || ln[pos+1] == ' ') {
			l.dash = true
			lastDash = pos
			pos++
			for pos < len(ln) && ln[pos] == ' ' {
				pos++
			}
		}
		c := ln[pos:]
		if len(c) == 0 {
			continue // "-" with the entry below
		}
		switch c[0] {
		case '"', '\'', '[', '{':
			// A quoted or flow entry ("- [a, b]"): never a key here.
			n, v, ok := scanValue(c)
			if !ok || !l.dash || !endsLine(c[n:]) {
				return nil, false
			}
			l.val = v
			continue
		case '|', '>':
			if !l.dash || !blockHeader(c) {
				return nil, false
			}
			l.val = valBlock
			skip = lastDash
			continue
		}
		if !plainStart(c) {
			return nil, false
		}
		// A plain key ends at ": " or ":" at the end; a comment first
		// means the line is a plain entry.
		k := -1
		for j := 0; j < len(c); j++ {
			if c[j] == ':' && (j+1 == len(c) || c[j+1] == ' ') {
				k = j
				break
			}
			if c[j] == '#' && j > 0 && c[j-1] == ' ' {
				break
			}
		}
		if k < 0 {
			if !l.dash {
				return nil, false // a scalar on a line of its own
			}
			t := plainText(c)
			l.val = valPlain
			l.text = [2]int{base + pos, base + pos + len(t)}
			skip, owner = lastDash, len(lines)-1
			continue
		}
		key := bytes.TrimRight(c[:k], " ")
		if len(key) == 0 || key[0] == '-' {
			return nil, false
		}
		l.keyCol = pos
		l.key = [2]int{base + pos, base + pos + len(key)}
		vpos := pos + k + 1
		for vpos < len(ln) && ln[vpos] == ' ' {
			vpos++
		}
		v := ln[vpos:]
		switch {
		case len(v) == 0 || v[0] == '#':
			l.val = valNone
		case v[0] == '"' || v[0] == '\'' || v[0] == '[' || v[0] == '{':
			n, kind, ok := scanValue(v)
			if !ok || !endsLine(v[n:]) {
				return nil, false
			}
			l.val = kind
			if kind == valQuoted {
				l.text = [2]int{base + vpos + 1, base + vpos + n - 1}
			}
		case v[0] == '|' || v[0] == '>':
			if !blockHeader(v) {
				return nil, false
			}
			l.val = valBlock
			skip = pos
		default:
			if !plainStart(v) {
				return nil, false
			}
			t := plainText(v)
			if bytes.Contains(t, []byte(": ")) || bytes.HasSuffix(t, []byte(":")) {
				return nil, false
			}
			l.val = valPlain
			l.text = [2]int{base + vpos, base + vpos + len(t)}
			skip, owner = pos, len(lines)-1
		}
	}
	return lines, true
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// endsLine: only spaces and a comment are left.
func endsLine(b []byte) bool {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i == len(b) || (i > 0 && b[i] == '#')
}

// plainStart: b starts a plain scalar that is not one of the indicators
// this reading leaves to the parser (anchors, aliases, tags, explicit
// keys, reserved characters, a flow end).
func plainStart(b []byte) bool {
	switch b[0] {
	case '&', '*', '!', '%', '@', '`', '?', ':', ',', ']', '}', '#', '|', '>', '"', '\'', '[', '{':
		return false
	case '-':
		return len(b) > 1 && b[1] != ' '
	}
	return true
}

// plainText is a one-line plain scalar: up to a comment, without the
// spaces at its end.
func plainText(b []byte) []byte {
	for j := 1; j < len(b); j++ {
		if b[j] == '#' && b[j-1] == ' ' {
			b = b[:j]
			break
		}
	}
	return bytes.TrimRight(b, " ")
}

// blockHeader: "|" or ">" with at most a chomping and an indentation
// indicator, then the end of the line.
func blockHeader(b []byte) bool {
	i := 1
	for n := 0; n < 2 && i < len(b) && (b[i] == '-' || b[i] == '+' || ('1' <= b[i] && b[i] <= '9')); n++ {
		i++
	}
	return endsLine(b[i:])
}

// scanValue reads a quoted scalar or a flow collection that closes on the
// line: its length and kind. Anchors, aliases and tags inside a flow
// collection, and anything left open, are not certain.
func scanValue(b []byte) (int, byte, bool) {
	depth := 0
	kind := byte(valQuoted)
	if b[0] == '[' || b[0] == '{' {
		kind = valFlow
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
					if kind == valQuoted {
						kind = valEscaped
					}
				}
			}
			if i >= len(b) {
				return 0, 0, false
			}
		case '\'':
			for i++; ; i++ {
				if i >= len(b) {
					return 0, 0, false
				}
				if b[i] == '\'' {
					if i+1 < len(b) && b[i+1] == '\'' {
						i++
						if kind == valQuoted {
							kind = valEscaped
						}
						continue
					}
					break
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '&', '*', '!', '#':
			return 0, 0, false
		}
		if kind != valFlow && (c == '"' || c == '\'') {
			return i + 1, kind, true
		}
		if kind == valFlow && depth == 0 {
			return i + 1, kind, true
		}
		if depth < 0 {
			return 0, 0, false
		}
	}
	return 0, 0, false
}
