package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/receipt"
)

func (e *env) sessionInput(event, id string) string {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id": id, "transcript_path": "/dev/null", "cwd": e.cwd,
		"hook_event_name": event, "source": "startup", "reason": "prompt_input_exit",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// sessionHook is e.hook() with a fixed command line and binary, so the
// snapshot depends only on the settings files.
func (e *env) sessionHook() *Hook {
	h := e.hook()
	h.Command = []string{"/opt/fixrail-hook", "hook", "--event", "session-start"}
	bin := filepath.Join(e.home, "..", "fixrail-hook.bin")
	if _, err := os.Stat(bin); err != nil {
		if err := os.WriteFile(bin, []byte("binary v1"), 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	h.Executable = bin
	return h
}

func (e *env) writeSettings(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.cwd, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// The session snapshot: the first is the baseline, an unchanged one says
// nothing, a changed registration under a gating self-mod is reported and
// not accepted until the owner approves it, and then it is the baseline.
func TestSessionSnapshot(t *testing.T) {
	e := newEnv(t)
	e.writeSettings(".claude/settings.json", `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"fixrail-hook hook"}]}]},"model":"x"}`)
	start := func(id string) (result, receipt.Receipt) {
		t.Helper()
		r := run(e.sessionHook(), e.sessionInput("SessionStart", id))
		if r.code != ExitAllow {
			t.Fatalf("SessionStart exit %d (a session event never blocks): %s", r.code, r.stderr)
		}
		last := e.lastReceipt()
		if last.Kind != receipt.KindSessionStart || last.Session != id {
			t.Fatalf("last receipt %+v, want the session-start of %s", last, id)
		}
		return r, last
	}

	r, rc := start("s1")
	if rc.Verdict != SessionFirst || r.stdout != "" {
		t.Fatalf("first session: verdict %q stdout %q", rc.Verdict, r.stdout)
	}
	var rec sessionRecord
	if err := json.Unmarshal(rc.Outcome, &rec); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(e.cwd, ".claude", "settings.json")
	if len(rec.Registration) != 64 || len(rec.Files[settings]) != 64 || rec.Hooks[settings] == "" ||
		rec.Files[filepath.Join(e.user, ".claude", "settings.json")] != "absent" {
		t.Fatalf("snapshot %+v", rec.Snapshot)
	}

	_, rc = start("s2")
	if rc.Verdict != SessionSame {
		t.Fatalf("unchanged session: verdict %q", rc.Verdict)
	}

	// A settings change that leaves the hooks alone is reported, accepted.
	e.writeSettings(".claude/settings.json", `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"fixrail-hook hook"}]}]},"model":"y"}`)
	r, rc = start("s3")
	if rc.Verdict != SessionAccepted || !strings.Contains(r.stderr, settings+" changed") || strings.Contains(r.stderr, "its hooks changed") {
		t.Fatalf("settings-only change: verdict %q stderr %q", rc.Verdict, r.stderr)
	}

	// A competing hook appears in the local settings: self-mod gates by
	// default, so the registration is not accepted, and the model is told.
	e.writeSettings(".claude/settings.local.json", `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"approve-everything"}]}]}}`)
	r, rc = start("s4")
	local := filepath.Join(e.cwd, ".claude", "settings.local.json")
	if rc.Verdict != policy.VerdictDeny || rc.Rule != "self-mod" {
		t.Fatalf("changed registration: verdict %q rule %q, want deny self-mod", rc.Verdict, rc.Rule)
	}
	for _, want := range []string{local + " appeared (its hooks changed)", "NOT accepted", "fixrail approve "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	var out struct {
		SystemMessage string `json:"systemMessage"`
		Specific      struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Specific.Event != "SessionStart" || !strings.Contains(out.Specific.Context, "NOT accepted") || out.SystemMessage == "" {
		t.Fatalf("stdout %q (err %v): want systemMessage and SessionStart additionalContext", r.stdout, err)
	}
	key := callKeyIn(t, r.stderr)

	// Not accepted means the next session reports it again, same request.
	r, rc = start("s5")
	if rc.Verdict != policy.VerdictDeny || callKeyIn(t, r.stderr) != key {
		t.Fatalf("second session after the change: verdict %q, key changed: %v", rc.Verdict, callKeyIn(t, r.stderr) != key)
	}

	// The owner approves; the next session accepts it, once; then it is
	// the baseline.
	e.approve(e.key(), key)
	r, rc = start("s6")
	if rc.Verdict != VerdictApproved || !strings.Contains(r.stderr, "approved this registration") {
		t.Fatalf("after approval: verdict %q stderr %q", rc.Verdict, r.stderr)
	}
	_, rc = start("s7")
	if rc.Verdict != SessionSame {
		t.Fatalf("after acceptance: verdict %q, want same", rc.Verdict)
	}

	// With self-mod in warn, a change is reported and accepted.
	e.setPolicy(map[string]string{"self-mod": "warn"})
	h := e.sessionHook()
	h.Command = append(h.Command, "--snapshot", "x")
	r = run(h, e.sessionInput("SessionStart", "s8"))
	if rc = e.lastReceipt(); rc.Verdict != SessionAccepted || !strings.Contains(r.stderr, "the hook's command line changed") {
		t.Fatalf("warn mode: verdict %q stderr %q", rc.Verdict, r.stderr)
	}

	// SessionEnd closes the session with the registration as it stands.
	r = run(e.sessionHook(), e.sessionInput("SessionEnd", "s8"))
	rc = e.lastReceipt()
	if r.code != ExitAllow || rc.Kind != receipt.KindSessionEnd || rc.Session != "s8" || !strings.Contains(string(rc.Outcome), `"reason":"prompt_input_exit"`) ||
		!strings.Contains(string(rc.Outcome), `"registration_sha256":"`) {
		t.Fatalf("session end: exit %d receipt %+v", r.code, rc)
	}
}

// A replaced hook binary changes the registration.
func TestSessionSnapshotBinary(t *testing.T) {
	e := newEnv(t)
	run(e.sessionHook(), e.sessionInput("SessionStart", "s1"))
	if err := os.WriteFile(e.sessionHook().Executable, []byte("binary v2"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(e.sessionHook(), e.sessionInput("SessionStart", "s2"))
	if rc := e.lastReceipt(); rc.Verdict != policy.VerdictDeny || !strings.Contains(r.stderr, "the hook binary changed") {
		t.Fatalf("replaced binary: verdict %q stderr %q", rc.Verdict, r.stderr)
	}
}
