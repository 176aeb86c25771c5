package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// maxReceiptInput bounds the redacted input kept in one receipt. A larger
// input (a Write of a big file) is kept as its hash, size and a redacted
// excerpt, so the log stays readable.
const maxReceiptInput = 16 << 10

// excerptBytes is the size of that excerpt.
const excerptBytes = 1 << 10

// withheld is the text that stands in for anything that could not be
// redacted: a receipt never holds unredacted text.
const withheld = "[WITHHELD by fixrail: redaction unavailable]"

func (h *Hook) redactorOrErr() (Redactor, error) {
	h.redactOnce.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				h.redactor, h.redactErr = nil, fmt.Errorf("building the redactor panicked: %v", r)
			}
		}()
		if h.NewRedactor == nil {
			h.redactErr = errors.New("no redactor configured")
			return
		}
		h.redactor, h.redactErr = h.NewRedactor()
		if h.redactErr == nil && h.redactor == nil {
			h.redactErr = errors.New("no redactor configured")
		}
	})
	return h.redactor, h.redactErr
}

// redactText returns s with secrets removed, or a placeholder when that is
// not possible.
func (h *Hook) redactText(s string) string {
	if s == "" {
		return ""
	}
	r, err := h.redactorOrErr()
	if err != nil {
		return withheld
	}
	out, err := safeRedact(r, s)
	if err != nil {
		return withheld
	}
	return out
}

// safeRedact calls r, turning a panic into an error: a bug in redaction
// withholds the text instead of failing the decision.
func safeRedact(r Redactor, s string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("redaction panicked: %v", p)
		}
	}()
	return r.Redact(s)
}

// receiptInput returns the tool input as a receipt keeps it: redacted as a
// whole (so rules that need context, like a credential-named field, see
// it), else string by string when whole-text redaction broke the JSON, else
// withheld; and past maxReceiptInput reduced to hash, size and excerpt.
func (h *Hook) receiptInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, in); err != nil {
		return withheldJSON("input is not JSON")
	}
	r, err := h.redactorOrErr()
	if err != nil {
		return withheldJSON(err.Error())
	}
	out, err := safeRedact(r, compact.String())
	if err != nil {
		return withheldJSON("redaction failed")
	}
	red := []byte(out)
	if !json.Valid(red) {
		red, err = redactLeaves(r, compact.Bytes())
		if err != nil {
			return withheldJSON("redaction failed")
		}
	}
	if len(red) > maxReceiptInput {
		sum := sha256.Sum256(red)
		ex := string(red[:excerptBytes])
		b, err := jsonMarshal(map[string]any{
			"truncated":             true,
			"redacted_bytes":        len(red),
			"redacted_sha256":       hex.EncodeToString(sum[:]),
			"redacted_excerpt_head": ex,
		})
		if err != nil {
			return withheldJSON("excerpt")
		}
		return b
	}
	return red
}

func withheldJSON(why string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"withheld": withheld, "why": why})
	return b
}

// redactLeaves redacts every string (keys too) of a JSON value separately.
func redactLeaves(r Redactor, data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v, err := redactValue(r, v)
	if err != nil {
		return nil, err
	}
	return jsonMarshal(v)
}

func redactValue(r Redactor, v any) (any, error) {
	switch x := v.(type) {
	case string:
		return safeRedact(r, x)
	case []any:
		for i := range x {
			y, err := redactValue(r, x[i])
			if err != nil {
				return nil, err
			}
			x[i] = y
		}
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			rk, err := safeRedact(r, k)
			if err != nil {
				return nil, err
			}
			rv, err := redactValue(r, val)
			if err != nil {
				return nil, err
			}
			out[rk] = rv
		}
		return out, nil
	}
	return v, nil
}

// jsonMarshal is json.Marshal without HTML escaping, so receipts show
// commands like `a && b` as written.
func jsonMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
