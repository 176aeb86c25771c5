package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Errors from Canonicalize. Every error it returns wraps ErrInvalidJSON;
// ErrDuplicateKey and ErrFloat say more precisely why.
var (
	ErrInvalidJSON  = errors.New("not canonicalizable JSON")
	ErrDuplicateKey = errors.New("duplicate object key")
	ErrFloat        = errors.New("number with a fraction or exponent")
)

// maxDepth bounds nesting so hostile input cannot make the parser recurse
// without limit. Tool inputs are a few levels deep.
const maxDepth = 256

// Canonicalize returns the RFC 8785 (JCS) form of raw, with one deliberate
// departure: every number becomes a JSON string holding its decimal digits,
// so the signed bytes never depend on floating-point formatting and large
// integers survive exactly. Only integers are accepted; a number with a
// fraction or an exponent is rejected with ErrFloat, because the requests we
// sign are built by us and by agent harnesses that send integers.
//
// As RFC 8785 requires of its input (I-JSON), strings must be valid Unicode:
// invalid UTF-8 and unpaired surrogate escapes are rejected rather than
// replaced, so two different inputs can never share a canonical form, apart
// from the number-to-string mapping (1 and "1" canonicalise alike). Duplicate
// keys, compared after unescaping, are rejected.
//
// The output sorts object keys by their UTF-16 code units, has no
// whitespace, and escapes strings as ECMAScript's JSON.stringify does: \" \\
// \b \f \n \r \t, other control characters as \u00xx, everything else
// literally. Canonicalize is idempotent.
func Canonicalize(raw json.RawMessage) ([]byte, error) {
	v, err := parseJSON(raw)
	if err != nil {
		return nil, err
	}
	return v.append(nil), nil
}

// jsonKind tells the variants of a jsonValue apart.
type jsonKind uint8

const (
	kindLiteral jsonKind = iota // true, false, null: text holds it
	kindString                  // text holds the unescaped string
	kindArray
	kindObject
)

// jsonValue is a parsed JSON value, already in canonical shape: numbers are
// strings and object members are sorted.
type jsonValue struct {
	kind    jsonKind
	text    string
	elems   []jsonValue
	members []jsonMember
}

type jsonMember struct {
	key   string
	units []uint16 // key as UTF-16, the RFC 8785 sort key
	val   jsonValue
}

func stringValue(s string) jsonValue { return jsonValue{kind: kindString, text: s} }

// objectValue builds an object from members, sorting them as RFC 8785 does.
// The caller guarantees distinct keys.
func objectValue(m map[string]jsonValue) jsonValue {
	members := make([]jsonMember, 0, len(m))
	for k, v := range m {
		members = append(members, jsonMember{key: k, units: utf16.Encode([]rune(k)), val: v})
	}
	sortMembers(members)
	return jsonValue{kind: kindObject, members: members}
}

func sortMembers(ms []jsonMember) {
	slices.SortFunc(ms, func(a, b jsonMember) int { return slices.Compare(a.units, b.units) })
}

func (v jsonValue) append(b []byte) []byte {
	switch v.kind {
	case kindLiteral:
		return append(b, v.text...)
	case kindString:
		return appendString(b, v.text)
	case kindArray:
		b = append(b, '[')
		for i, e := range v.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.append(b)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, m := range v.members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.key)
			b = append(b, ':')
			b = m.val.append(b)
		}
		return append(b, '}')
	}
}

// appendString writes s (valid UTF-8) with RFC 8785 §3.2.2.2 escaping.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// validText reports whether s can be signed: valid UTF-8, which in Go also
// excludes encoded surrogates.
func validText(s string) bool { return utf8.ValidString(s) }

func parseJSON(raw []byte) (jsonValue, error) {
	p := parser{data: raw}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return jsonValue{}, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return jsonValue{}, p.errorf("data after the top-level value")
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrInvalidJSON, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (jsonValue, error) {
	if depth > maxDepth {
		return jsonValue{}, p.errorf("nested deeper than %d", maxDepth)
	}
	if p.pos >= len(p.data) {
		return jsonValue{}, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		return stringValue(s), err
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.data)-p.pos >= len(lit) && string(p.data[p.pos:p.pos+len(lit)]) == lit {
				p.pos += len(lit)
				return jsonValue{kind: kindLiteral, text: lit}, nil
			}
		}
		return jsonValue{}, p.errorf("unexpected character %q", c)
	}
}

func (p *parser) object(depth int) (jsonValue, error) {
	p.pos++ // '{'
	v := jsonValue{kind: kindObject}
	seen := map[string]bool{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return jsonValue{}, p.errorf("want an object key")
		}
		key, err := p.str()
		if err != nil {
			return jsonValue{}, err
		}
		if seen[key] {
			return jsonValue{}, fmt.Errorf("%w: %w %q", ErrInvalidJSON, ErrDuplicateKey, key)
		}
		seen[key] = true
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return jsonValue{}, p.errorf("want ':' after an object key")
		}
		p.pos++
		p.skipSpace()
		val, err := p.value(depth + 1)
		if err != nil {
			return jsonValue{}, err
		}
		v.members = append(v.members, jsonMember{key: key, units: utf16.Encode([]rune(key)), val: val})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return jsonValue{}, p.errorf("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			sortMembers(v.members)
			return v, nil
		default:
			return jsonValue{}, p.errorf("want ',' or '}' in an object")
		}
	}
}

func (p *parser) array(depth int) (jsonValue, error) {
	p.pos++ // '['
	v := jsonValue{kind: kindArray}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		e, err := p.value(depth + 1)
		if err != nil {
			return jsonValue{}, err
		}
		v.elems = append(v.elems, e)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return jsonValue{}, p.errorf("unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return jsonValue{}, p.errorf("want ',' or ']' in an array")
		}
	}
}

// number accepts a JSON integer and returns it as a string value. "-0"
// becomes "0", as RFC 8785 serialises negative zero.
func (p *parser) number() (jsonValue, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := p.pos
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.pos < len(p.data) && '1' <= p.data[p.pos] && p.data[p.pos] <= '9':
		for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
			p.pos++
		}
	default:
		return jsonValue{}, p.errorf("malformed number")
	}
	if p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '.', 'e', 'E':
			return jsonValue{}, fmt.Errorf("%w: offset %d: %w", ErrInvalidJSON, start, ErrFloat)
		}
	}
	text := string(p.data[start:p.pos])
	if string(p.data[digits:p.pos]) == "0" {
		text = "0"
	}
	return stringValue(text), nil
}

// str parses a string starting at the opening quote and returns its
// unescaped contents.
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	var out []byte
	for {
		if p.pos >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c == '\\':
			if err := p.escape(&out); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.errorf("control character %#x in a string", c)
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			out = append(out, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// simpleEscapes maps the letter after a backslash to the byte it stands for.
var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (p *parser) escape(out *[]byte) error {
	if p.pos+1 >= len(p.data) {
		return p.errorf("unterminated escape")
	}
	c := p.data[p.pos+1]
	if r, ok := simpleEscapes[c]; ok {
		*out = append(*out, r)
		p.pos += 2
		return nil
	}
	if c != 'u' {
		return p.errorf("invalid escape \\%c", c)
	}
	r, err := p.hex4(p.pos + 2)
	if err != nil {
		return err
	}
	p.pos += 6
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		// A high surrogate must be followed by an escaped low surrogate.
		if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
			return p.errorf("unpaired surrogate \\u%04x", r)
		}
		lo, err := p.hex4(p.pos + 2)
		if err != nil {
			return err
		}
		if lo < 0xdc00 || lo > 0xdfff {
			return p.errorf("unpaired surrogate \\u%04x", r)
		}
		p.pos += 6
		r = utf16.DecodeRune(r, lo)
	case utf16.IsSurrogate(r):
		return p.errorf("unpaired surrogate \\u%04x", r)
	}
	*out = utf8.AppendRune(*out, r)
	return nil
}

func (p *parser) hex4(at int) (rune, error) {
	if at+4 > len(p.data) {
		return 0, p.errorf("short \\u escape")
	}
	var r rune
	for _, c := range p.data[at : at+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, p.errorf("bad hex digit %q in \\u escape", c)
		}
	}
	return r, nil
}
