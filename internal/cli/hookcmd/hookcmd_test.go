package hookcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	wt := t.TempDir()
	t.Setenv("FIXRAIL_HOME", filepath.Join(t.TempDir(), "fx"))
	tests := []struct {
		name    string
		o       Opts
		wantErr string
	}{
		{"defaults", Opts{Event: "pre", Format: "claude"}, ""},
		{"codex post", Opts{Event: "post", Format: "codex"}, ""},
		{"phase", Opts{Event: "pre", Format: "claude", Phase: "fix", Worktree: wt, Allow: stringList{"src/**"}}, ""},
		{"bad format", Opts{Event: "pre", Format: "cursor"}, "unknown hook format"},
		{"bad event", Opts{Event: "PreToolUse", Format: "claude"}, "unknown hook event"},
		{"phase without worktree", Opts{Event: "pre", Format: "claude", Phase: "fix"}, "needs --worktree"},
		{"allow without phase", Opts{Event: "pre", Format: "claude", Allow: stringList{"*"}}, "need --phase"},
		{"worktree without phase", Opts{Event: "pre", Format: "claude", Worktree: wt}, "need --phase"},
		{"escaping glob", Opts{Event: "pre", Format: "claude", Phase: "fix", Worktree: wt, Allow: stringList{"../x"}}, `".." is not allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(&tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.SetupErr != nil || !filepath.IsAbs(h.Home) || h.Env.FixrailHome != h.Home || h.NewRedactor == nil {
				t.Errorf("hook %+v", h)
			}
			if (h.Phase != nil) != (tc.o.Phase != "") {
				t.Errorf("phase %+v for %q", h.Phase, tc.o.Phase)
			}
		})
	}
}

// TestMainProtocol: Main speaks only the hook protocol: a usage error blocks (a broken
// registration is loud), a benign call runs.
func TestMainProtocol(t *testing.T) {
	t.Setenv("FIXRAIL_HOME", filepath.Join(t.TempDir(), "fx"))
	var out, errb bytes.Buffer
	if code := Main([]string{"hook", "--format", "cursor"}, strings.NewReader("{}"), &out, &errb); code != 2 {
		t.Errorf("bad flag: exit %d, want 2 (block)", code)
	}
	in := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`
	if code := Main([]string{"hook", "--event", "pre"}, strings.NewReader(in), &out, &errb); code != 0 {
		t.Errorf("benign Bash call: exit %d, want 0\n%s", code, errb.String())
	}
	errb.Reset()
	self := filepath.Join(t.TempDir(), "home")
	t.Setenv("FIXRAIL_HOME", self)
	in = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + filepath.Join(self, "policy.json") + `","content":"{}"},"tool_use_id":"t2"}`
	if code := Main([]string{"hook"}, strings.NewReader(in), &out, &errb); code != 2 {
		t.Errorf("write to policy.json (self-mod, gate): exit %d, want 2\n%s", code, errb.String())
	}
}

// TestNewRedactor: the receipts' redactor removes a credential held in the
// environment by exact value.
func TestNewRedactor(t *testing.T) {
	const tok = "synthetic-credential-for-redactor-test" // not a real token shape: only exact-value redaction is under test
	t.Setenv("GITHUB_TOKEN", tok)
	r, err := newRedactor()
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Redact("git push https://x:" + tok + "@github.com/o/r")
	if err != nil || strings.Contains(out, tok) {
		t.Errorf("Redact = %q, %v", out, err)
	}
}

// TestProtectBinary: registered as fixrail-hook, the hook still gates a
// write to the fixrail binary named by --protect-binary or --verifier, or
// beside it (a replaced fixrail could sign or verify what the owner did not
// mean to), and to its own binary.
func TestProtectBinary(t *testing.T) {
	t.Setenv("FIXRAIL_HOME", filepath.Join(t.TempDir(), "fx"))
	full := filepath.Join(t.TempDir(), "fixrail")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string) string {
		return `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + path + `","content":"x"},"tool_use_id":"t1"}`
	}
	for _, tc := range []struct {
		name string
		args []string
		path string
		want int
	}{
		{"protected fixrail", []string{"hook", "--protect-binary", full}, full, 2},
		{"own binary", []string{"hook", "--protect-binary", full}, self, 2},
		{"fixrail without the flag", []string{"hook"}, full, 0},
		// The binary that verifies approvals for fixrail-hook.
		{"verifier", []string{"hook", "--verifier", full}, full, 2},
		{"default verifier beside the hook", []string{"hook"}, filepath.Join(filepath.Dir(self), "fixrail"), 2},
	} {
		var out, errb bytes.Buffer
		code := Main(tc.args, strings.NewReader(write(tc.path)), &out, &errb)
		if code != tc.want || (tc.want == 2 && !strings.Contains(errb.String(), "self-mod")) {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.want, errb.String())
		}
	}
}

// TestSigningKeyFromEnvironment: a signing key the agent's environment
// names ($FIXRAIL_APPROVAL_KEY) is one no call may read: the hook denies
// reading it (self-mod, gate by default), and allows the same read of a
// key no variable names.
func TestSigningKeyFromEnvironment(t *testing.T) {
	t.Setenv("FIXRAIL_HOME", filepath.Join(t.TempDir(), "fx"))
	dir := t.TempDir()
	key, other := filepath.Join(dir, "approval_key"), filepath.Join(dir, "another_key")
	read := func(path string) string {
		return `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat ` + path + `"},"tool_use_id":"t1"}`
	}
	for _, tc := range []struct {
		name, env, path string
		want            int
	}{
		{"named key", key, key, 2},
		{"another file", key, other, 0},
		{"no variable", "", key, 0},
	} {
		t.Setenv("FIXRAIL_APPROVAL_KEY", tc.env)
		var out, errb bytes.Buffer
		code := Main([]string{"hook"}, strings.NewReader(read(tc.path)), &out, &errb)
		if code != tc.want || (tc.want == 2 && !strings.Contains(errb.String(), "a fixrail signing key")) {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.want, errb.String())
		}
	}
}

// TestReceiptHoldsNoQuotedCredential: the receipt keeps the tool input as
// JSON, where a quoted value's quotes are escaped (DB_PASSWORD=\"…\"). The
// real engine must read them as quotes: before, the value stayed in the
// receipt log in the clear.
func TestReceiptHoldsNoQuotedCredential(t *testing.T) {
	home := filepath.Join(t.TempDir(), "fx")
	t.Setenv("FIXRAIL_HOME", home)
	const value = "k9Qz2Lm7Rv#4" // a chosen password's shape; not a real credential
	for i, cmd := range []string{
		`export DB_PASSWORD=\"` + value + `\" && make test`,
		`bash -c \"export API_TOKEN=\\\"` + value + `\\\" && ./deploy\"`,
	} {
		in := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + cmd + `"},"tool_use_id":"t` + string(rune('1'+i)) + `"}`
		var out, errb bytes.Buffer
		if code := Main([]string{"hook", "--event", "pre"}, strings.NewReader(in), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d\n%s", cmd, code, errb.String())
		}
	}
	raw, err := os.ReadFile(filepath.Join(home, "receipts.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n != 2 {
		t.Fatalf("%d receipts, want 2:\n%s", n, raw)
	}
	if strings.Contains(string(raw), value) || strings.Count(string(raw), "[REDACTED:credential-assignment]") != 2 {
		t.Errorf("receipts hold the credential or miss a marker:\n%s", raw)
	}
}
