package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/receipt"
	"github.com/google/go-cmp/cmp"
)

func TestDecisions(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	h := e.hook()

	// Unmatched: allowed silently, receipted.
	r := run(h, e.input("Bash", bash("go test ./...")))
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("benign: %+v", r)
	}
	if got := e.lastReceipt(); got.Kind != receipt.KindDecision || got.Verdict != "allow" || got.Tool != "Bash" || got.ToolUseID != "toolu_1" || got.Session != "sess-1" {
		t.Errorf("allow receipt: %+v", got)
	}

	// Warn: allowed with a note the user sees, receipted with the rule.
	r = run(h, e.input("Bash", bash("git push origin HEAD:main")))
	if r.code != 0 || !strings.Contains(r.stderr, "push-protected") {
		t.Fatalf("warn: %+v", r)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || !strings.Contains(out["systemMessage"].(string), "push-protected") {
		t.Errorf("warn stdout %q: want a systemMessage", r.stdout)
	}
	if strings.Contains(r.stdout, "permissionDecision") {
		t.Errorf("warn must not answer allow (it would skip the CLI's own rules): %s", r.stdout)
	}
	if got := e.lastReceipt(); got.Verdict != "warn" || got.Rule != "push-protected" {
		t.Errorf("warn receipt: %+v", got)
	}

	// Gate: denied with the request and both signing commands.
	r = run(h, e.input("Bash", bash("git push --force origin HEAD:feature")))
	if r.code != ExitBlock {
		t.Fatalf("gate: %+v", r)
	}
	key := callKeyIn(t, r.stderr)
	pendingPath := filepath.Join(e.home, ApprovalsDir, "pending", key+".json")
	for _, want := range []string{
		"push-force", "mode gate",
		"fixrail approve " + key,
		"ssh-keygen -Y sign -n fixrail-approval -f <approval key> " + pendingPath,
		`"rule":"push-force"`, `"tool":"Bash"`, `"v":"1"`,
		"ask the user",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("denial lacks %q:\n%s", want, r.stderr)
		}
	}
	canon, err := os.ReadFile(pendingPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.stderr, "\n"+string(canon)+"\n") {
		t.Errorf("denial does not print the pending file's exact bytes %s:\n%s", canon, r.stderr)
	}
	want, err := approval.CallKey("Bash", json.RawMessage(`{"command":"git push --force origin HEAD:feature","description":"test"}`), e.cwd, "push-force")
	if err != nil || want != key {
		t.Errorf("call key %s, want %s (%v)", key, want, err)
	}
	if got := e.lastReceipt(); got.Verdict != "deny" || got.Rule != "push-force" {
		t.Errorf("deny receipt: %+v", got)
	}
}

func TestApprovalOnceThenDenied(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	k := e.key()
	h := e.hook()
	in := e.input("Bash", bash("git push --force origin HEAD:feature"))

	r := run(h, in)
	key := callKeyIn(t, r.stderr)
	tok := e.approve(k, key)
	tokenFile, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}

	r = run(h, in)
	if r.code != 0 || !strings.Contains(r.stderr, "approved") {
		t.Fatalf("approved call: %+v", r)
	}
	if got := e.lastReceipt(); got.Verdict != VerdictApproved || got.Rule != "push-force" || !strings.Contains(got.Reason, tok.Request.Digest()) {
		t.Errorf("approved receipt: %+v", got)
	}

	// The same call again: the approval is spent.
	r = run(h, in)
	if r.code != ExitBlock || strings.Contains(r.stderr, "rejected") {
		t.Fatalf("second call: %+v", r)
	}

	// A copy of the used token put back: replayed, rejected, deleted.
	tokPath := filepath.Join(e.home, ApprovalsDir, "tokens", key+".json")
	if err := os.WriteFile(tokPath, tokenFile, 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(h, in)
	if r.code != ExitBlock || !strings.Contains(r.stderr, "already used") {
		t.Fatalf("replay: %+v", r)
	}
	if _, err := os.Stat(tokPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("replayed token not deleted: %v", err)
	}
	if got := e.lastReceipt(); got.Verdict != "deny" || !strings.Contains(got.Reason, "already used") {
		t.Errorf("replay receipt: %+v", got)
	}
}

// TestTokenLayerFailsClosed: every way an approval can be wrong denies, in
// the user posture too.
func TestTokenLayerFailsClosed(t *testing.T) {
	in := func(e *env) string { return e.input("Bash", bash("git push --force origin HEAD:feature")) }
	tests := []struct {
		name    string
		prepare func(t *testing.T, e *env, h *Hook, key string)
		want    string
	}{
		{"no approval", func(*testing.T, *env, *Hook, string) {}, "fixrail approve"},
		{"signed by a stranger", func(t *testing.T, e *env, h *Hook, key string) {
			e.key()
			e.approve(strangerKey(t), key)
		}, "rejected and deleted: approval signature does not verify"},
		{"empty keyring", func(t *testing.T, e *env, h *Hook, key string) {
			e.approve(strangerKey(t), key)
		}, "not signed by a key in the keyring"},
		{"expired", func(t *testing.T, e *env, h *Hook, key string) {
			e.approve(e.key(), key)
			e.now = e.now.Add(DefaultTTL + time.Second)
		}, "expired"},
		{"signature over another request", func(t *testing.T, e *env, h *Hook, key string) {
			k := e.key()
			tok := e.approve(k, key)
			other, err := approval.NewRequest("Bash", json.RawMessage(`{"command":"ls"}`), e.cwd, "push-force", time.Hour, e.now)
			if err != nil {
				t.Fatal(err)
			}
			forged, err := k.Approve(other)
			if err != nil {
				t.Fatal(err)
			}
			tok.Signature = forged.Signature
			writeToken(t, e, key, tok)
		}, "does not verify"},
		{"tampered input", func(t *testing.T, e *env, h *Hook, key string) {
			tok := e.approve(e.key(), key)
			tok.Request.Input = json.RawMessage(`{"command":"git push --force origin HEAD:main","description":"test"}`)
			writeToken(t, e, key, tok)
		}, "different call"},
		{"garbage token", func(t *testing.T, e *env, h *Hook, key string) {
			e.key()
			if err := os.MkdirAll(filepath.Join(e.home, ApprovalsDir, "tokens"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, ApprovalsDir, "tokens", key+".json"), []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "malformed"},
		{"private key in the keyring", func(t *testing.T, e *env, h *Hook, key string) {
			e.approve(e.key(), key)
			if err := os.WriteFile(filepath.Join(e.home, KeysDir, "oops.pub"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "private key"},
		{"store error", func(t *testing.T, e *env, h *Hook, key string) {
			e.approve(e.key(), key)
			h.take = func(*approval.Store, string, approval.Verifier, time.Time) (*approval.Token, error) {
				return nil, errors.New("input/output error")
			}
		}, "input/output error"},
		{"panic while verifying", func(t *testing.T, e *env, h *Hook, key string) {
			e.approve(e.key(), key)
			h.take = func(*approval.Store, string, approval.Verifier, time.Time) (*approval.Token, error) {
				panic("boom")
			}
		}, "internal error while checking the approval: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.setPolicy(map[string]string{"push-force": "gate"})
			h := e.hook()
			r := run(h, in(e))
			key := callKeyIn(t, r.stderr)
			tc.prepare(t, e, h, key)
			r = run(h, in(e))
			if r.code != ExitBlock {
				t.Fatalf("exit %d, want 2 (deny): %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
			if got := e.lastReceipt(); got.Verdict != "deny" {
				t.Errorf("receipt %+v, want a deny", got)
			}
		})
	}
}

func writeToken(t *testing.T, e *env, key string, tok *approval.Token) {
	t.Helper()
	b, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ApprovalsDir, "tokens", key+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyPathExercised is the falsification guard: the approved run above
// passes only because the keyring verified the signature. With the hook's
// token layer replaced by one that skips verification, a stranger's token
// would be accepted — this test shows the real layer refuses exactly that
// token, and that the stand-in accepts it, so the approval tests cannot pass
// with verification broken.
func TestVerifyPathExercised(t *testing.T) {
	for _, broken := range []bool{false, true} {
		e := newEnv(t)
		e.setPolicy(map[string]string{"push-force": "gate"})
		e.key()
		h := e.hook()
		if broken {
			h.take = func(s *approval.Store, key string, _ approval.Verifier, now time.Time) (*approval.Token, error) {
				// Verification "disabled": trust every key.
				data, err := os.ReadFile(filepath.Join(s.Dir, "tokens", key+".json"))
				if err != nil {
					return nil, approval.ErrNoToken
				}
				var tok approval.Token
				return &tok, json.Unmarshal(data, &tok)
			}
		}
		in := e.input("Bash", bash("git push --force origin HEAD:feature"))
		key := callKeyIn(t, run(h, in).stderr)
		e.approve(strangerKey(t), key)
		r := run(h, in)
		if allowed := r.code == 0; allowed != broken {
			t.Errorf("verification broken=%v: exit %d; the stranger's token must be refused exactly when verification runs", broken, r.code)
		}
	}
}

// sshOwner makes a real ssh-keygen ed25519 key, installs its public half
// as the owner's in e, and returns a func that signs a file with it exactly
// as the printed approval command does.
func sshOwner(t *testing.T, e *env) (sign func(path string)) {
	t.Helper()
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("ssh-keygen not installed: the test command installs openssh-client")
	}
	keyPath := filepath.Join(t.TempDir(), "approval")
	sshkg := func(args ...string) {
		t.Helper()
		cmd := exec.Command(keygen, args...)
		cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
		}
	}
	sshkg("-q", "-t", "ed25519", "-N", "", "-C", "owner@example", "-f", keyPath)
	pub, err := os.ReadFile(keyPath + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.home, KeysDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, KeysDir, "owner.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	// The user clock must be real: ssh-keygen signs now, and the request
	// expires relative to the hook's clock.
	e.now = time.Now()
	return func(path string) {
		t.Helper()
		sshkg("-Y", "sign", "-n", "fixrail-approval", "-f", keyPath, path)
	}
}

func TestSSHKeygenSignature(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	h := e.hook()
	sign := sshOwner(t, e)
	in := e.input("Bash", bash("git push --force origin HEAD:feature"))
	r := run(h, in)
	key := callKeyIn(t, r.stderr)
	pending := filepath.Join(e.home, ApprovalsDir, "pending", key+".json")
	// Exactly the printed command, with the key filled in.
	sign(pending)
	if r := run(h, in); r.code != 0 {
		t.Fatalf("ssh-keygen approval refused: %+v", r)
	}
	if r := run(h, in); r.code != ExitBlock {
		t.Fatalf("second call allowed: %+v", r)
	}
}

// TestTornPendingFailsClosed: the pending request is written without an
// fsync, so a crash can leave it empty or cut short. Such a file signed by
// the owner approves nothing, and the next denial replaces it with a whole
// request.
func TestTornPendingFailsClosed(t *testing.T) {
	for _, keep := range []int{0, 40} {
		t.Run(fmt.Sprintf("kept %d bytes", keep), func(t *testing.T) {
			e := newEnv(t)
			e.setPolicy(map[string]string{"push-force": "gate"})
			h := e.hook()
			sign := sshOwner(t, e)
			in := e.input("Bash", bash("git push --force origin HEAD:feature"))
			key := callKeyIn(t, run(h, in).stderr)
			pending := filepath.Join(e.home, ApprovalsDir, "pending", key+".json")
			whole, err := os.ReadFile(pending)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pending, whole[:keep], 0o600); err != nil {
				t.Fatal(err)
			}
			sign(pending)
			r := run(h, in)
			if r.code != ExitBlock {
				t.Fatalf("a signed torn request let the call run: %+v", r)
			}
			again, err := os.ReadFile(pending)
			if err != nil {
				t.Fatal(err)
			}
			if len(again) <= keep || !strings.Contains(r.stderr, string(again)) {
				t.Errorf("the denial did not write and print a whole new request; file:\n%s\nstderr:\n%s", again, r.stderr)
			}
		})
	}
}

func TestPendingReused(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	h := e.hook()
	in := e.input("Bash", bash("git push -f origin x"))
	first := run(h, in).stderr
	e.now = e.now.Add(10 * time.Minute)
	second := run(h, in).stderr
	nonce := func(s string) string {
		i := strings.Index(s, `"nonce":"`)
		return s[i+9 : i+9+32]
	}
	if nonce(first) != nonce(second) {
		t.Errorf("a second denial minted a new request before the first expired")
	}
	// Close to expiry a fresh one is minted.
	e.now = e.now.Add(DefaultTTL - 10*time.Minute - time.Minute)
	if third := run(h, in).stderr; nonce(third) == nonce(first) {
		t.Errorf("a request about to expire was printed again")
	}
}

func TestUnapprovableCall(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	// A fraction cannot be canonicalised, so it cannot be signed.
	r := run(e.hook(), e.input("Bash", map[string]any{"command": "git push -f", "timeout": 1.5}))
	if r.code != ExitBlock || !strings.Contains(r.stderr, "cannot be approved") {
		t.Fatalf("%+v", r)
	}
}

// TestPosture is the posture table: the same failures, as the user's hook
// and as a phase hook.
func TestPosture(t *testing.T) {
	faults := []struct {
		name   string
		input  func(e *env) string
		inject func(t *testing.T, e *env, h *Hook)
	}{
		{"unreadable policy", func(e *env) string { return e.input("Bash", bash("ls")) }, func(t *testing.T, e *env, h *Hook) {
			if err := os.WriteFile(filepath.Join(e.home, PolicyFile), []byte(`{"modes":{"self-mod":"sometimes"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"policy is a directory", func(e *env) string { return e.input("Bash", bash("ls")) }, func(t *testing.T, e *env, h *Hook) {
			if err := os.MkdirAll(filepath.Join(e.home, PolicyFile), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"malformed tool input", func(e *env) string { return e.input("Write", map[string]any{"file_path": []int{1}}) }, nil},
		{"undecodable stdin", func(*env) string { return `{"tool_name":` }, nil},
		{"panic in the analyser", func(e *env) string { return e.input("Read", map[string]any{"file_path": e.cwd + "/a"}) }, func(t *testing.T, e *env, h *Hook) {
			h.analyze = func(policy.Call, policy.Env) ([]policy.Match, error) {
				var m map[string]int
				setKey(m) // a real runtime panic: assignment to a nil map
				return nil, nil
			}
		}},
		{"panic while loading the policy", func(e *env) string { return e.input("Read", map[string]any{"file_path": e.cwd + "/a"}) }, func(t *testing.T, e *env, h *Hook) {
			h.loadPolicy = func(string) (*policy.Policy, error) { panic("policy bug") }
		}},
	}
	for _, f := range faults {
		for _, phase := range []bool{false, true} {
			name := f.name + "/user"
			if phase {
				name = f.name + "/phase"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				h := e.hook()
				if phase {
					p, err := NewPhase(PhaseFix, e.cwd, []string{"**"})
					if err != nil {
						t.Fatal(err)
					}
					h.Phase = p
				}
				if f.inject != nil {
					f.inject(t, e, h)
				}
				r := run(h, f.input(e))
				want := ExitAllow
				if phase {
					want = ExitBlock
				}
				if r.code != want {
					t.Fatalf("exit %d, want %d\nstderr: %s", r.code, want, r.stderr)
				}
				rs := e.receipts()
				if len(rs) == 0 {
					t.Fatal("no receipt")
				}
				last := rs[len(rs)-1]
				if phase {
					// Fails closed, whether the phase check or the engine
					// caught it first.
					if last.Verdict != "deny" {
						t.Errorf("receipt %+v, want a deny", last)
					}
					return
				}
				if !strings.Contains(r.stderr, "engine error") {
					t.Errorf("stderr lacks the engine-error note: %q", r.stderr)
				}
				if last.Kind != receipt.KindEngineError || last.Verdict != "allow" {
					t.Errorf("receipt %+v, want an engine-error receipt with verdict allow", last)
				}
			})
		}
	}
}

func setKey(m map[string]int) { m["x"] = 1 }

// TestReceiptUnwritable: a receipt log that cannot be written does not
// change a user hook's decisions (5.10 #4); a phase hook denies.
func TestReceiptUnwritable(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	h := e.hook()
	h.ReceiptLog = filepath.Join(e.home, "nodir", "x", "receipts.ndjson")
	if err := os.WriteFile(filepath.Join(e.home, "nodir"), []byte("a file, not a dir"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(h, e.input("Bash", bash("ls"))); r.code != 0 || !strings.Contains(r.stderr, "receipt not written") {
		t.Errorf("allow path: %+v", r)
	}
	if r := run(h, e.input("Bash", bash("git push -f"))); r.code != ExitBlock || !strings.Contains(r.stderr, "receipt not written") {
		t.Errorf("gate path: %+v", r)
	}
	p, err := NewPhase(PhaseFix, e.cwd, []string{"**"})
	if err != nil {
		t.Fatal(err)
	}
	h.Phase = p
	if r := run(h, e.input("Read", map[string]any{"file_path": filepath.Join(e.cwd, "a")})); r.code != ExitBlock {
		t.Errorf("phase hook allowed a call it could not receipt: %+v", r)
	}
}

func TestReceiptRedaction(t *testing.T) {
	e := newEnv(t)
	h := e.hook()
	run(h, e.input("Bash", bash("curl -H 'Authorization: "+secret+"' http://localhost/")))
	got := e.lastReceipt()
	if strings.Contains(string(got.Input), secret) || !strings.Contains(string(got.Input), "[REDACTED:test]") {
		t.Errorf("receipt input %s: want the secret redacted", got.Input)
	}
	raw, err := os.ReadFile(filepath.Join(e.home, ReceiptsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Errorf("the receipt log holds the secret")
	}

	// No redactor: the input is withheld, not written raw.
	h = e.hook()
	h.NewRedactor = func() (Redactor, error) { return nil, errors.New("engine unavailable") }
	run(h, e.input("Bash", bash("echo "+secret)))
	got = e.lastReceipt()
	if strings.Contains(string(got.Input), secret) || !strings.Contains(string(got.Input), "withheld") {
		t.Errorf("receipt input without a redactor: %s", got.Input)
	}

	// A redactor that panics: the decision stands, the text is withheld.
	h = e.hook()
	h.NewRedactor = func() (Redactor, error) {
		return RedactorFunc(func(string) (string, error) { panic("redactor bug") }), nil
	}
	if r := run(h, e.input("Bash", bash("echo "+secret))); r.code != 0 {
		t.Errorf("redactor panic changed the decision: %+v", r)
	}
	if got = e.lastReceipt(); strings.Contains(string(got.Input), secret) || !strings.Contains(string(got.Input), "withheld") {
		t.Errorf("receipt input with a panicking redactor: %s", got.Input)
	}

	// A large input is kept as hash, size and excerpt.
	h = e.hook()
	run(h, e.input("Write", map[string]any{"file_path": filepath.Join(e.cwd, "big.txt"), "content": strings.Repeat("x", 100<<10)}))
	got = e.lastReceipt()
	if len(got.Input) > 4<<10 || !strings.Contains(string(got.Input), `"truncated":true`) {
		t.Errorf("large input kept as %d bytes: %.200s", len(got.Input), got.Input)
	}
}

func TestOutcomeReceipt(t *testing.T) {
	e := newEnv(t)
	h := e.hook()
	in := `{"session_id":"sess-1","cwd":"` + e.cwd + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_7","tool_response":{"stdout":"` + secret + `","stderr":"","interrupted":false}}`
	r := run(h, in)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("%+v", r)
	}
	got := e.lastReceipt()
	if got.Kind != receipt.KindOutcome || got.ToolUseID != "toolu_7" || got.Tool != "Bash" {
		t.Errorf("outcome receipt %+v", got)
	}
	if strings.Contains(string(got.Outcome), secret) || !strings.Contains(string(got.Outcome), "response_sha256") {
		t.Errorf("outcome %s: want hashes, never the output", got.Outcome)
	}

	// A post event whose receipt cannot be written does not block, even in a
	// phase (the call already ran).
	h.ReceiptLog = "/proc/nonexistent/receipts.ndjson"
	p, err := NewPhase(PhaseFix, e.cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Phase = p
	if r := run(h, in); r.code != 0 {
		t.Errorf("post event blocked: %+v", r)
	}
}

func TestNonToolEvent(t *testing.T) {
	e := newEnv(t)
	r := run(e.hook(), `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}`)
	if r.code != 0 || r.stderr != "" || len(e.receipts()) != 0 {
		t.Errorf("%+v, %d receipts", r, len(e.receipts()))
	}
}

func TestSetupError(t *testing.T) {
	e := newEnv(t)
	h := &Hook{SetupErr: errors.New("no home"), NewRedactor: testRedactor}
	r := run(h, e.input("Bash", bash("git push -f")))
	if r.code != 0 || !strings.Contains(r.stderr, "engine error") || !strings.Contains(r.stderr, "no home") {
		t.Errorf("user hook: %+v", r)
	}
	p, err := NewPhase(PhaseFix, e.cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	h = &Hook{Home: "relative/home", Phase: p}
	if r := run(h, e.input("Read", map[string]any{"file_path": e.cwd})); r.code != ExitBlock || !strings.Contains(r.stderr, "not an absolute path") {
		t.Errorf("phase hook: %+v", r)
	}
	if _, err := os.Stat("relative"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a relative home was used: %v", err)
	}
}

func TestHomeDir(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got, _ := HomeDir(lookup); got != "/home/u/.config/fixrail" {
		t.Errorf("default home %s", got)
	}
	env["FIXRAIL_HOME"] = "/srv/fx"
	if got, _ := HomeDir(lookup); got != "/srv/fx" {
		t.Errorf("FIXRAIL_HOME %s", got)
	}
}

// TestReceiptSync pins which receipts the hook waits for the disk on: by
// default every one a rule flagged (warn, deny, approved) and every engine
// error, but not allow decisions and outcomes; with receipts.sync "all",
// every one; without a readable policy, every one.
func TestReceiptSync(t *testing.T) {
	type rec struct {
		kind, verdict string
		sync          bool
	}
	post := func(e *env) string {
		return `{"session_id":"sess-1","cwd":"` + e.cwd + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1","tool_response":{"stdout":""}}`
	}
	for _, tc := range []struct {
		name   string
		policy string // policy.json; none when empty
		calls  func(e *env, h func() *Hook)
		want   []rec
	}{
		{
			name: "default",
			calls: func(e *env, h func() *Hook) {
				run(h(), e.input("Bash", bash("go test ./...")))
				run(h(), post(e))
				run(h(), e.input("Bash", bash("git push origin HEAD:main")))
				r := run(h(), e.input("Bash", bash("rm -rf ~/.claude")))
				e.approve(e.key(), callKeyIn(t, r.stderr))
				run(h(), e.input("Bash", bash("rm -rf ~/.claude")))
			},
			want: []rec{
				{receipt.KindDecision, policy.VerdictAllow, false},
				{receipt.KindOutcome, VerdictRecorded, false},
				{receipt.KindDecision, policy.VerdictWarn, true},
				{receipt.KindDecision, policy.VerdictDeny, true},
				{receipt.KindDecision, VerdictApproved, true},
			},
		},
		{
			name:   "flagged named",
			policy: `{"receipts": {"sync": "flagged"}}`,
			calls: func(e *env, h func() *Hook) {
				run(h(), e.input("Bash", bash("go test ./...")))
				run(h(), post(e))
			},
			want: []rec{{receipt.KindDecision, policy.VerdictAllow, false}, {receipt.KindOutcome, VerdictRecorded, false}},
		},
		{
			name:   "all",
			policy: `{"receipts": {"sync": "all"}}`,
			calls: func(e *env, h func() *Hook) {
				run(h(), e.input("Bash", bash("go test ./...")))
				run(h(), post(e))
				run(h(), e.input("Bash", bash("git push origin HEAD:main")))
			},
			want: []rec{
				{receipt.KindDecision, policy.VerdictAllow, true},
				{receipt.KindOutcome, VerdictRecorded, true},
				{receipt.KindDecision, policy.VerdictWarn, true},
			},
		},
		{
			name:   "unreadable policy",
			policy: `{"modes": {"push-forse": "gate"}}`,
			calls: func(e *env, h func() *Hook) {
				run(h(), e.input("Bash", bash("go test ./...")))
				run(h(), post(e))
			},
			want: []rec{{receipt.KindEngineError, policy.VerdictAllow, true}, {receipt.KindOutcome, VerdictRecorded, true}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.policy != "" {
				if err := os.WriteFile(filepath.Join(e.home, PolicyFile), []byte(tc.policy), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var got []rec
			newHook := func() *Hook {
				h := e.hook()
				h.appendTo = func(l *receipt.Log, r receipt.Receipt, sync bool) error {
					got = append(got, rec{r.Kind, r.Verdict, sync})
					_, err := l.Append(r)
					return err
				}
				return h
			}
			tc.calls(e, newHook) // a hook per call, as a process per call
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(rec{})); diff != "" {
				t.Errorf("receipts (kind, verdict, synced) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReceiptLogHeld: an agent that flocks the receipt log (flock(1), a
// Python one-liner) must not stall the hook into the agent CLI's timeout,
// which lets the call run. The wait is bounded, and then the posture
// decides: a gated call stays denied, an allowed one runs with a note, the
// phase hook denies.
func TestReceiptLogHeld(t *testing.T) {
	e := newEnv(t)
	e.setPolicy(map[string]string{"push-force": "gate"})
	newHook := func() *Hook {
		h := e.hook()
		h.lockWait = 50 * time.Millisecond
		return h
	}
	run(newHook(), e.input("Bash", bash("ls"))) // creates the log
	holder, err := os.Open(filepath.Join(e.home, ReceiptsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	if r := run(newHook(), e.input("Bash", bash("git push -f"))); r.code != ExitBlock || !strings.Contains(r.stderr, "locked by another process") {
		t.Errorf("gated call with the log held: %+v", r)
	}
	if r := run(newHook(), e.input("Bash", bash("ls"))); r.code != 0 || !strings.Contains(r.stderr, "receipt not written") {
		t.Errorf("allowed call with the log held: %+v", r)
	}
	h := newHook()
	p, err := NewPhase(PhaseFix, e.cwd, []string{"**"})
	if err != nil {
		t.Fatal(err)
	}
	h.Phase = p
	if r := run(h, e.input("Read", map[string]any{"file_path": filepath.Join(e.cwd, "a")})); r.code != ExitBlock {
		t.Errorf("phase hook with the log held: %+v", r)
	}
}

// TestPolicyFIFO: a FIFO where policy.json belongs is an engine error at
// once (the user hook's posture lets the call run, the phase hook denies),
// never a read that waits for a writer until the agent CLI's timeout.
func TestPolicyFIFO(t *testing.T) {
	e := newEnv(t)
	if err := syscall.Mkfifo(filepath.Join(e.home, PolicyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	phase, err := NewPhase(PhaseFix, e.cwd, []string{"**"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		phase *Phase
		want  int
	}{{"user hook", nil, ExitAllow}, {"phase hook", phase, ExitBlock}} {
		h := e.hook()
		h.Phase = tc.phase
		done := make(chan result, 1)
		go func() { done <- run(h, e.input("Read", map[string]any{"file_path": filepath.Join(e.cwd, "a")})) }()
		select {
		case r := <-done:
			if r.code != tc.want || !strings.Contains(r.stderr, "engine error") || !strings.Contains(r.stderr, "not a regular file") {
				t.Errorf("%s: %+v", tc.name, r)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the hook blocked on a FIFO policy.json", tc.name)
		}
	}
}
