package hook

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/receipt"
)

// t0 is the tests' fixed clock.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// secret is what the test redactor scrubs.
const secret = "sk-test-SECRET-0123456789"

func testRedactor() (Redactor, error) {
	return RedactorFunc(func(s string) (string, error) {
		return strings.ReplaceAll(s, secret, "[REDACTED:test]"), nil
	}), nil
}

// env is a test home: FIXRAIL_HOME, an agent home, and a clock.
type env struct {
	t    *testing.T
	home string // FIXRAIL_HOME
	user string // the agent's HOME
	cwd  string
	now  time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, home: filepath.Join(root, "fixrail"), user: filepath.Join(root, "user"), cwd: filepath.Join(root, "repo"), now: t0}
	for _, d := range []string{e.home, e.user, e.cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) hook() *Hook {
	return &Hook{
		Home:        e.home,
		Env:         policy.Env{Home: e.user, TmpDir: "/tmp"},
		NewRedactor: testRedactor,
		Now:         func() time.Time { return e.now },
		Keys:        keyring,
	}
}

// keyring verifies in process, as the full fixrail binary does.
func keyring(dir string) (approval.Verifier, error) {
	ring, err := keys.LoadKeyring(dir)
	if err != nil {
		return nil, err
	}
	return ring, nil
}

// setPolicy writes policy.json with the given modes.
func (e *env) setPolicy(modes map[string]string) {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"modes": modes})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, PolicyFile), b, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// key makes a native approval key and puts its public half in the keyring.
func (e *env) key() *keys.Key {
	e.t.Helper()
	priv, pub, err := keys.GenerateKey(rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	dir := filepath.Join(e.home, KeysDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pub"), pub, 0o644); err != nil {
		e.t.Fatal(err)
	}
	k, err := keys.ParseNativeKey(priv)
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

// strangerKey makes a key the keyring does not hold.
func strangerKey(t *testing.T) *keys.Key {
	t.Helper()
	priv, _, err := keys.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.ParseNativeKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// input is a Claude Code PreToolUse object for a tool call in e.cwd.
func (e *env) input(tool string, toolInput any) string {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id":      "sess-1",
		"transcript_path": "/dev/null",
		"cwd":             e.cwd,
		"permission_mode": "dontAsk",
		"hook_event_name": "PreToolUse",
		"tool_name":       tool,
		"tool_input":      toolInput,
		"tool_use_id":     "toolu_1",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func bash(cmd string) map[string]any { return map[string]any{"command": cmd, "description": "test"} }

type result struct {
	code           int
	stdout, stderr string
}

func run(h *Hook, stdin string) result {
	var out, errb bytes.Buffer
	code := h.Run(strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func (e *env) receipts() []receipt.Receipt {
	e.t.Helper()
	l := &receipt.Log{Path: filepath.Join(e.home, ReceiptsFile)}
	rs, err := l.Read()
	if os.IsNotExist(err) || (err != nil && strings.Contains(err.Error(), "no such file")) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	rep, err := l.Verify(nil)
	if err != nil || rep.Break != nil {
		e.t.Fatalf("receipt chain: %v %v", err, rep.Break)
	}
	return rs
}

func (e *env) lastReceipt() receipt.Receipt {
	e.t.Helper()
	rs := e.receipts()
	if len(rs) == 0 {
		e.t.Fatal("no receipts")
	}
	return rs[len(rs)-1]
}

// approve signs the pending request for callKey with k and stores the token,
// as `fixrail approve` does.
func (e *env) approve(k *keys.Key, callKey string) *approval.Token {
	e.t.Helper()
	s := &approval.Store{Dir: filepath.Join(e.home, ApprovalsDir)}
	r, err := s.Pending(callKey)
	if err != nil {
		e.t.Fatal(err)
	}
	tok, err := k.Approve(r)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := s.SaveToken(tok); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// callKeyIn extracts the call key from a denial message.
func callKeyIn(t *testing.T, msg string) string {
	t.Helper()
	const p = "fixrail approve "
	i := strings.Index(msg, p)
	if i < 0 {
		t.Fatalf("no %q in %q", p, msg)
	}
	k := msg[i+len(p):]
	if j := strings.IndexAny(k, " \n"); j >= 0 {
		k = k[:j]
	}
	if len(k) != 64 {
		t.Fatalf("call key %q in %q", k, msg)
	}
	return k
}
