package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestCanonical(t *testing.T) {
	r := &Request{
		Tool:    "Bash",
		Input:   json.RawMessage(`{ "timeout": 120000, "command": "rm -rf /tmp/x && echo \"done\" <ok>" }`),
		Cwd:     "/home/dév/repo",
		Rule:    "destructive",
		Expires: time.Date(2026, 3, 14, 16, 9, 26, 999_000_000, time.FixedZone("CET", 3600)),
		Nonce:   "0123456789abcdef0123456789abcdef",
	}
	want := `{"cwd":"/home/dév/repo","expires":"2026-03-14T15:09:26Z","input":{"command":"rm -rf /tmp/x && echo \"done\" <ok>","timeout":"120000"},"nonce":"0123456789abcdef0123456789abcdef","rule":"destructive","tool":"Bash","v":"1"}`
	got, err := r.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Canonical mismatch (-want +got):\n%s", diff)
	}
	sum := sha256.Sum256([]byte(want))
	if got, want := r.Digest(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Digest = %s, want %s", got, want)
	}
}

func TestRequestCanonicalErrors(t *testing.T) {
	base := func() *Request {
		return &Request{Tool: "Bash", Input: json.RawMessage(`{}`), Rule: "r", Expires: t0, Nonce: "0123456789abcdef0123456789abcdef"}
	}
	tests := []struct {
		name    string
		mut     func(r *Request)
		wantErr error
	}{
		{"float input", func(r *Request) { r.Input = json.RawMessage(`{"t":0.5}`) }, ErrFloat},
		{"no input", func(r *Request) { r.Input = nil }, ErrInvalidJSON},
		{"invalid UTF-8 cwd", func(r *Request) { r.Cwd = "/tmp/\xff" }, ErrMalformed},
		{"year out of range", func(r *Request) { r.Expires = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.mut(r)
			if _, err := r.Canonical(); !errors.Is(err, tc.wantErr) {
				t.Errorf("Canonical error = %v, want %v", err, tc.wantErr)
			}
			if r.Digest() != "" {
				t.Errorf("Digest of an uncanonicalisable request is not empty")
			}
		})
	}
}

func TestNewRequest(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.FixedZone("X", -7200))
	a, err := NewRequest("Write", json.RawMessage(`{"file_path":"/x","content":"y"}`), "/w", "self-mod", 10*time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRequest("Write", json.RawMessage(`{"file_path":"/x","content":"y"}`), "/w", "self-mod", 10*time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	if !validNonce(a.Nonce) || a.Nonce == b.Nonce {
		t.Errorf("nonces %q, %q: want two distinct 32-hex-digit nonces", a.Nonce, b.Nonce)
	}
	wantExp := time.Date(2026, 3, 14, 17, 19, 26, 0, time.UTC)
	if !a.Expires.Equal(wantExp) || a.Expires.Location() != time.UTC {
		t.Errorf("Expires = %v, want %v", a.Expires, wantExp)
	}
	if got, want := string(a.Input), `{"content":"y","file_path":"/x"}`; got != want {
		t.Errorf("Input = %s, want canonical %s", got, want)
	}

	for name, f := range map[string]func() (*Request, error){
		"zero ttl":   func() (*Request, error) { return NewRequest("Bash", json.RawMessage(`{}`), "/", "r", 0, now) },
		"empty tool": func() (*Request, error) { return NewRequest("", json.RawMessage(`{}`), "/", "r", time.Minute, now) },
		"empty rule": func() (*Request, error) { return NewRequest("Bash", json.RawMessage(`{}`), "/", "", time.Minute, now) },
		"bad input":  func() (*Request, error) { return NewRequest("Bash", json.RawMessage(`{`), "/", "r", time.Minute, now) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("NewRequest with %s: no error", name)
		}
	}
}

func TestCallKey(t *testing.T) {
	key := func(tool, input, cwd, rule string) string {
		t.Helper()
		k, err := CallKey(tool, json.RawMessage(input), cwd, rule)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key("Bash", `{"command":"git push -f","timeout":5}`, "/repo", "push-force")
	same := []struct{ name, tool, input, cwd, rule string }{
		{"reordered and spaced input", "Bash", ` { "timeout" : 5 , "command" : "git push -f" } `, "/repo", "push-force"},
		{"escaped input", "Bash", `{"command":"git\u0020push -f","timeout":5}`, "/repo", "push-force"},
		{"number as string", "Bash", `{"command":"git push -f","timeout":"5"}`, "/repo", "push-force"},
	}
	for _, tc := range same {
		if got := key(tc.tool, tc.input, tc.cwd, tc.rule); got != base {
			t.Errorf("%s: key %s, want the base key %s", tc.name, got, base)
		}
	}
	differ := []struct{ name, tool, input, cwd, rule string }{
		{"tool", "Shell", `{"command":"git push -f","timeout":5}`, "/repo", "push-force"},
		{"input", "Bash", `{"command":"git push -f ","timeout":5}`, "/repo", "push-force"},
		{"cwd", "Bash", `{"command":"git push -f","timeout":5}`, "/repo/", "push-force"},
		{"rule", "Bash", `{"command":"git push -f","timeout":5}`, "/repo", "push-protected"},
	}
	for _, tc := range differ {
		if got := key(tc.tool, tc.input, tc.cwd, tc.rule); got == base {
			t.Errorf("changing the %s kept the key", tc.name)
		}
	}
	// Nonce and expiry are not part of the key: two requests for one call
	// share it.
	a, err := NewRequest("Bash", json.RawMessage(`{"command":"git push -f","timeout":5}`), "/repo", "push-force", time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRequest("Bash", json.RawMessage(`{"timeout":5,"command":"git push -f"}`), "/repo", "push-force", time.Hour, t0)
	if err != nil {
		t.Fatal(err)
	}
	ka, _ := a.CallKey()
	kb, _ := b.CallKey()
	if ka != base || kb != base {
		t.Errorf("request call keys %s, %s, want %s", ka, kb, base)
	}
}

func TestRequestJSON(t *testing.T) {
	r := testRequest(t)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.Canonical()
	if string(data) != string(c) {
		t.Errorf("marshalled request %s, want its canonical form %s", data, c)
	}
	var back Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, &back); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}

	bad := map[string]string{
		"missing nonce": `{"cwd":"/","expires":"2026-01-01T00:00:00Z","input":{},"rule":"r","tool":"t","v":"1"}`,
		"extra member":  `{"cwd":"/","expires":"2026-01-01T00:00:00Z","input":{},"nonce":"n","rule":"r","tool":"t","v":"1","x":"y"}`,
		"version 2":     `{"cwd":"/","expires":"2026-01-01T00:00:00Z","input":{},"nonce":"n","rule":"r","tool":"t","v":"2"}`,
		"bad expiry":    `{"cwd":"/","expires":"tomorrow","input":{},"nonce":"n","rule":"r","tool":"t","v":"1"}`,
		"numeric v":     `{"cwd":"/","expires":"2026-01-01T00:00:00Z","input":{},"nonce":"n","rule":"r","tool":"t","v":1}`,
	}
	for name, s := range bad {
		var r Request
		if err := json.Unmarshal([]byte(s), &r); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Unmarshal error = %v, want ErrMalformed", name, err)
		}
	}
}
