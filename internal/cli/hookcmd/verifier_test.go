package hookcmd

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
	"github.com/fixrail/fixrail/internal/hook"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fixrail")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func testToken(t *testing.T) *approval.Token {
	t.Helper()
	r, err := approval.NewRequest("Bash", json.RawMessage(`{"command":"git push --force"}`), "/src", "push-force", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &approval.Token{Request: *r, Signature: make([]byte, 64), Kind: approval.KindEd25519}
}

// TestExecVerifier: the slim hook's verifier lets a token through only on
// the fixrail binary's exact answer for that token; every other outcome —
// a binary that exits 0 whatever it is given, another token's digest, a
// rejection, a crash, a missing binary, a hang — is a rejection that says
// why.
func TestExecVerifier(t *testing.T) {
	tok := testToken(t)
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	seen := filepath.Join(t.TempDir(), "seen")
	tests := []struct {
		name    string
		bin     string
		wantErr string // "" verifies
	}{
		// It also records its arguments, environment and input.
		{"fixrail's answer", script(t, `printf '%s\n' "$@" > `+seen+`.args; env > `+seen+`.env; cat > `+seen+`.in; echo "verified `+tok.Request.Digest()+`"`), ""},
		{"exit 0 and no answer", script(t, "exit 0\n"), "did not answer as fixrail does"},
		{"another token's digest", script(t, "echo verified "+strings.Repeat("0", 64)+"\n"), "did not answer as fixrail does"},
		{"the answer and more", script(t, `echo "verified `+tok.Request.Digest()+`"; echo ok`+"\n"), "did not answer as fixrail does"},
		{"rejected", script(t, "echo 'fixrail: approval signature does not verify' >&2; exit 5\n"), "fixrail: approval signature does not verify (checked by "},
		{"crashed", script(t, "echo boom >&2; exit 1\n"), "failed: exit status 1: boom"},
		{"missing", filepath.Join(t.TempDir(), "fixrail"), "failed: "},
		{"none", "", "no fixrail binary to verify the approval with"},
		{"hangs", script(t, "sleep 30\n"), "did not answer within"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ExecVerifier(tc.bin)("/fx/keys")
			if err != nil {
				t.Fatal(err)
			}
			v.(*execVerifier).timeout = 2 * time.Second
			start := time.Now()
			err = v.Verify(tok, now)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Verify: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Verify: %v, want an error containing %q", err, tc.wantErr)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Verify took %v: a hung verifier must not hold the hook", d)
			}
		})
	}
	args, _ := os.ReadFile(seen + ".args")
	if want := "hook\nverify-approval\n--keys\n/fx/keys\n--at\n2026-12-06T12:00:00Z\n"; string(args) != want {
		t.Errorf("arguments:\n%s\nwant:\n%s", args, want)
	}
	// The verifier gets no environment of the agent CLI's (sh sets PWD
	// and the like itself).
	env, _ := os.ReadFile(seen + ".env")
	for _, line := range strings.Split(strings.TrimSpace(string(env)), "\n") {
		if name, _, _ := strings.Cut(line, "="); name != "PWD" && name != "SHLVL" && name != "_" && name != "OLDPWD" {
			t.Errorf("the verifier's environment holds %q", line)
		}
	}
	in, _ := os.ReadFile(seen + ".in")
	var got approval.Token
	if err := json.Unmarshal(in, &got); err != nil {
		t.Fatalf("the verifier's input is not a token: %v\n%s", err, in)
	}
	if got.Request.Digest() != tok.Request.Digest() || !bytes.Equal(got.Signature, tok.Signature) {
		t.Errorf("the verifier was given another token:\n%s", in)
	}
}

// TestSlimApproval drives Main, the slim binary's program, through a gated
// call with the owner's token waiting: the --verifier's answer decides, the
// token is spent or deleted either way, and the denial says why.
func TestSlimApproval(t *testing.T) {
	call := `{"session_id":"s","cwd":"/src","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"t1"}`
	for _, tc := range []struct {
		name     string
		verifier string // script body; "" passes no --verifier
		want     int
		wantErr  string
	}{
		{"verified", `cat >/dev/null; echo "verified $(cat digest)"`, 0, ""},
		{"rejected", "cat >/dev/null; echo 'fixrail: approval signature does not verify' >&2; exit 5\n", 2, "The approval presented was rejected and deleted: fixrail: approval signature does not verify"},
		{"exit 0 without the answer", "exit 0\n", 2, "did not answer as fixrail does"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "fx")
			t.Setenv("FIXRAIL_HOME", home)
			if err := os.MkdirAll(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, hook.PolicyFile), []byte(`{"modes":{"push-force":"gate"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := Main([]string{"hook"}, strings.NewReader(call), &out, &errb); code != 2 {
				t.Fatalf("first call: exit %d, want 2\n%s", code, errb.String())
			}
			s := &approval.Store{Dir: filepath.Join(home, hook.ApprovalsDir)}
			pend, err := s.PendingRequests()
			if err != nil || len(pend) != 1 {
				t.Fatalf("pending: %v %v", pend, err)
			}
			priv, _, err := keys.GenerateKey(rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			key, err := keys.ParseNativeKey(priv)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := key.Approve(pend[0].Request)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SaveToken(tok); err != nil {
				t.Fatal(err)
			}
			bin := script(t, tc.verifier)
			if err := os.WriteFile(filepath.Join(filepath.Dir(bin), "digest"), []byte(tok.Request.Digest()), 0o600); err != nil {
				t.Fatal(err)
			}
			// The script reads digest from its working directory: the
			// hook's, so run from the script's.
			t.Chdir(filepath.Dir(bin))
			out.Reset()
			errb.Reset()
			code := Main([]string{"hook", "--verifier", bin}, strings.NewReader(call), &out, &errb)
			if code != tc.want || !strings.Contains(errb.String()+out.String(), tc.wantErr) {
				t.Fatalf("exit %d, want %d and %q\nstdout %s\nstderr %s", code, tc.want, tc.wantErr, out.String(), errb.String())
			}
			if code == 0 && !strings.Contains(out.String(), "approved by a signed request") {
				t.Errorf("allowed without saying it was approved: %s", out.String())
			}
			if left, _ := filepath.Glob(filepath.Join(s.Dir, "tokens", "*")); len(left) != 0 {
				t.Errorf("the token is still there: %v", left)
			}
		})
	}
}
