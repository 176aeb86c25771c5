package approval

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrMalformed means a request or token is not well formed: a missing field,
// a nonce that is not 32 hex digits, an unknown signature kind.
var ErrMalformed = errors.New("malformed approval")

// version is the "v" member of a canonical request. Bump it when the signed
// shape changes, so old signatures cannot be read under new rules.
const version = "1"

// A Request is one gated tool call as the owner is asked to approve it. Its
// canonical form (see Canonical) is what gets signed.
type Request struct {
	Tool    string          // the harness's tool name: "Bash", "Write", "mcp__srv__tool"
	Input   json.RawMessage // the tool input; NewRequest stores it canonicalised
	Cwd     string          // the working directory the harness reported
	Rule    string          // the rule that gated the call: "self-mod", "push-force", …
	Expires time.Time       // the approval is void from this instant (whole seconds, UTC)
	Nonce   string          // 32 lowercase hex digits; spent when the approval is used
}

// NewRequest builds the request for one gated call with a fresh 128-bit
// nonce, expiring ttl after now (rounded down to whole seconds, the
// precision that gets signed).
func NewRequest(tool string, input json.RawMessage, cwd, rule string, ttl time.Duration, now time.Time) (*Request, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("new request: ttl %v is not positive", ttl)
	}
	in, err := Canonicalize(input)
	if err != nil {
		return nil, fmt.Errorf("new request: input: %w", err)
	}
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return nil, fmt.Errorf("new request: nonce: %w", err)
	}
	r := &Request{
		Tool:    tool,
		Input:   in,
		Cwd:     cwd,
		Rule:    rule,
		Expires: now.Add(ttl).UTC().Truncate(time.Second),
		Nonce:   hex.EncodeToString(n[:]),
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	return r, nil
}

// Validate checks the fields a signed request must have.
func (r *Request) Validate() error {
	switch {
	case r.Tool == "":
		return fmt.Errorf("%w: empty tool", ErrMalformed)
	case r.Rule == "":
		return fmt.Errorf("%w: empty rule", ErrMalformed)
	case r.Expires.IsZero():
		return fmt.Errorf("%w: no expiry", ErrMalformed)
	case !validNonce(r.Nonce):
		return fmt.Errorf("%w: nonce %q is not 32 lowercase hex digits", ErrMalformed, r.Nonce)
	}
	return nil
}

func validNonce(s string) bool { return isLowerHex(s, 32) }

// isLowerHex reports whether s is exactly n lowercase hex digits. Nonces and
// call keys become file names, so nothing else may pass.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Expiry is the instant the signed text names: Expires in UTC, whole seconds.
func (r *Request) Expiry() time.Time { return r.Expires.UTC().Truncate(time.Second) }

// Canonical returns the bytes the owner signs: the RFC 8785 form of
//
//	{"cwd":…,"expires":"2026-01-02T15:04:05Z","input":…,"nonce":…,"rule":…,"tool":…,"v":"1"}
//
// with input canonicalised (numbers as strings; see Canonicalize). It is a
// single line with no trailing newline.
func (r *Request) Canonical() ([]byte, error) {
	in, err := parseJSON(r.Input)
	if err != nil {
		return nil, fmt.Errorf("canonical request: input: %w", err)
	}
	exp := r.Expiry()
	if y := exp.Year(); y < 1 || y > 9999 {
		return nil, fmt.Errorf("canonical request: %w: expiry year %d", ErrMalformed, y)
	}
	for name, s := range map[string]string{"tool": r.Tool, "cwd": r.Cwd, "rule": r.Rule, "nonce": r.Nonce} {
		if !validText(s) {
			return nil, fmt.Errorf("canonical request: %w: %s is not valid UTF-8", ErrMalformed, name)
		}
	}
	v := objectValue(map[string]jsonValue{
		"cwd":     stringValue(r.Cwd),
		"expires": stringValue(exp.Format(time.RFC3339)),
		"input":   in,
		"nonce":   stringValue(r.Nonce),
		"rule":    stringValue(r.Rule),
		"tool":    stringValue(r.Tool),
		"v":       stringValue(version),
	})
	return v.append(nil), nil
}

// Digest is the hex SHA-256 of Canonical: the short name of exactly this
// approval, for messages and receipts. It is "" when the request cannot be
// canonicalised.
func (r *Request) Digest() string {
	c, err := r.Canonical()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:])
}

// CallKey identifies a call independently of any one approval: the hex
// SHA-256 of the canonical object {"cwd","input","rule","tool"}. Nonce and
// expiry are left out, so a later identical call computes the same key and
// finds the pending request or the token the owner signed for it.
func CallKey(tool string, input json.RawMessage, cwd, rule string) (string, error) {
	in, err := parseJSON(input)
	if err != nil {
		return "", fmt.Errorf("call key: input: %w", err)
	}
	for name, s := range map[string]string{"tool": tool, "cwd": cwd, "rule": rule} {
		if !validText(s) {
			return "", fmt.Errorf("call key: %w: %s is not valid UTF-8", ErrMalformed, name)
		}
	}
	v := objectValue(map[string]jsonValue{
		"cwd":   stringValue(cwd),
		"input": in,
		"rule":  stringValue(rule),
		"tool":  stringValue(tool),
	})
	sum := sha256.Sum256(v.append(nil))
	return hex.EncodeToString(sum[:]), nil
}

// CallKey is the call key of r's call.
func (r *Request) CallKey() (string, error) {
	return CallKey(r.Tool, r.Input, r.Cwd, r.Rule)
}

// MarshalJSON encodes r as its canonical form, so a stored request is the
// exact text that was (or is to be) signed.
func (r Request) MarshalJSON() ([]byte, error) {
	return r.Canonical()
}

// UnmarshalJSON decodes a canonical request. All seven members are
// required and no others are allowed; "v" must be "1".
func (r *Request) UnmarshalJSON(data []byte) error {
	var w struct {
		Cwd     *string         `json:"cwd"`
		Expires *string         `json:"expires"`
		Input   json.RawMessage `json:"input"`
		Nonce   *string         `json:"nonce"`
		Rule    *string         `json:"rule"`
		Tool    *string         `json:"tool"`
		V       *string         `json:"v"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("%w: request: %v", ErrMalformed, err)
	}
	if w.Cwd == nil || w.Expires == nil || w.Input == nil || w.Nonce == nil || w.Rule == nil || w.Tool == nil || w.V == nil {
		return fmt.Errorf("%w: request lacks a member", ErrMalformed)
	}
	if *w.V != version {
		return fmt.Errorf("%w: request version %q, want %q", ErrMalformed, *w.V, version)
	}
	exp, err := time.Parse(time.RFC3339, *w.Expires)
	if err != nil {
		return fmt.Errorf("%w: request expiry: %v", ErrMalformed, err)
	}
	*r = Request{Tool: *w.Tool, Input: w.Input, Cwd: *w.Cwd, Rule: *w.Rule, Expires: exp.UTC(), Nonce: *w.Nonce}
	return nil
}
