package receipt

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// marshalLine returns r as one line of JSON, byte for byte what
// json.Marshal(r) returns. It is written out because a hook process
// appends one receipt and exits, and json.Marshal's first call, which
// builds its encoder for the type by reflection, was a tenth of a
// millisecond of that process. TestMarshalLine and FuzzMarshalLine hold it
// to json.Marshal.
func marshalLine(r Receipt) ([]byte, error) {
	b := make([]byte, 0, 256+len(r.Reason)+len(r.Input)+len(r.Outcome))
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	t, err := r.Time.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("json: error calling MarshalJSON for type time.Time: %w", err)
	}
	b = append(b, `,"time":`...)
	b = append(b, t...)
	b = appendField(b, "prev", r.Prev, false)
	b = appendField(b, "kind", r.Kind, false)
	b = appendField(b, "tool_use_id", r.ToolUseID, true)
	b = appendField(b, "session", r.Session, true)
	b = appendField(b, "tool", r.Tool, true)
	b = appendField(b, "rule", r.Rule, true)
	b = appendField(b, "verdict", r.Verdict, true)
	b = appendField(b, "reason", r.Reason, true)
	if b, err = appendRaw(b, "input", r.Input); err != nil {
		return nil, err
	}
	if b, err = appendRaw(b, "outcome", r.Outcome); err != nil {
		return nil, err
	}
	if c := r.Checkpoint; c != nil {
		b = append(b, `,"checkpoint":{`...)
		b = append(b, `"head":`...)
		b = appendJSONString(b, c.Head)
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, c.Seq, 10)
		b = append(b, `,"signature":`...)
		if c.Signature == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, c.Signature)
			b = append(b, '"')
		}
		b = appendField(b, "kind", c.Kind, false)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendField appends ,"name":"value"; with omitEmpty, nothing when value
// is empty.
func appendField(b []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, value)
}

// appendRaw appends ,"name":raw with raw compacted and HTML-escaped, as
// json.Marshal writes a json.RawMessage; nothing when raw is empty.
func appendRaw(b []byte, name string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return b, nil
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return nil, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
	}
	var h bytes.Buffer
	json.HTMLEscape(&h, c.Bytes())
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, h.Bytes()...), nil
}

// appendJSONString appends s as a JSON string the way encoding/json does
// by default: <, > and & escaped for HTML, invalid UTF-8 replaced by
// U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
