package hook_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/receipt"
	"github.com/fixrail/fixrail/internal/runner/claudetest"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
)

// mcpConfig is the request path's registration as `fixrail hook install
// --print --mcp` prints it.
func (e *e2e) mcpConfig() string {
	e.t.Helper()
	out, err := exec.Command(fixrailBin, "hook", "install", "--print", "--mcp", "--bin", claudetest.HookBinary(fixrailBin)).Output()
	if err != nil {
		e.t.Fatalf("fixrail hook install --print --mcp: %v", err)
	}
	var m struct {
		Servers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(out, &m); err != nil || m.Servers["fixrail"].Command != fixrailBin {
		e.t.Fatalf("the printed MCP block does not run %s mcp (%v):\n%s", fixrailBin, err, out)
	}
	return string(out)
}

func mcpTurn(tool string, input map[string]any) fakemodel.Turn {
	return fakemodel.Turn{Text: "Asking first.", ToolUse: []fakemodel.ToolUse{{
		Name:  "mcp__fixrail__" + tool,
		Input: map[string]any{"tool": "Bash", "tool_input": input},
	}}}
}

// TestClaudeCodeRequestPath drives the pinned Claude Code CLI with fixrail as
// its hook and its MCP server: the model asks request_approval before a
// gated force push and gets the request and the signing command without a
// denial; the owner signs with that command; the model checks
// approval_status, makes the call, and it runs once; the identical call
// after it is denied. The session snapshots are receipted around it.
func TestClaudeCodeRequestPath(t *testing.T) {
	e := newE2E(t)
	const force = "git push --force origin HEAD:feature"
	push := map[string]any{"command": force, "description": "push"}
	mcp := []string{"--allowedTools", "mcp__fixrail__request_approval", "mcp__fixrail__approval_status",
		"--mcp-config", e.mcpConfig()}

	var callKey, pending string
	t.Run("the model asks before it acts: the request is written, nothing runs", func(t *testing.T) {
		e.t = t
		r := e.claudeTurns(true, []fakemodel.Turn{mcpTurn("request_approval", push)}, mcp)
		tools := toolNames(r.srv.Requests())
		for _, want := range []string{"mcp__fixrail__request_approval", "mcp__fixrail__approval_status", "Bash"} {
			if !tools[want] {
				t.Fatalf("the CLI did not offer %s to the model (offered %v): the MCP server is not registered", want, tools)
			}
		}
		tr := r.toolResult(t, 0)
		t.Logf("the model saw (is_error=%v):\n%s", tr.IsError, tr.Content)
		if tr.IsError {
			t.Fatalf("request_approval failed: %s", tr.Content)
		}
		msg := modelText(t, tr.Content)
		for _, want := range []string{"gated (push-force, mode gate)", "fixrail approve ", "ssh-keygen -Y sign -n fixrail-approval", `"rule":"push-force"`, `"cwd":"` + e.work + `"`, "You cannot approve it yourself"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the model's tool_result lacks %q", want)
			}
		}
		i := strings.Index(msg, "fixrail approve ")
		if i < 0 || len(msg) < i+len("fixrail approve ")+64 {
			t.FailNow()
		}
		callKey = msg[i+len("fixrail approve ") : i+len("fixrail approve ")+64]
		pending = filepath.Join(e.fxHome, hook.ApprovalsDir, "pending", callKey+".json")
		if _, err := os.Stat(pending); err != nil {
			t.Fatalf("no pending request: %v", err)
		}
		if got := e.ref("refs/heads/feature"); got != e.a2 {
			t.Errorf("remote feature moved: the request path ran something")
		}
		if n := e.count(receipt.KindRequest, "pending"); n != 1 {
			t.Errorf("%d pending request receipts, want 1", n)
		}
		if n := e.count(receipt.KindSessionStart, ""); n != 1 {
			t.Errorf("%d session-start receipts, want 1", n)
		}
		if n := e.count(receipt.KindSessionEnd, ""); n != 1 {
			t.Errorf("%d session-end receipts, want 1", n)
		}
	})
	if pending == "" {
		t.FailNow()
	}

	// The owner signs what the tool returned, with the command it printed.
	e.t = t
	e.run("ssh-keygen", e.root, "-Y", "sign", "-n", "fixrail-approval", "-f", e.key, pending)

	t.Run("the model checks, makes the call, it runs once", func(t *testing.T) {
		e.t = t
		r := e.claudeTurns(true, []fakemodel.Turn{mcpTurn("approval_status", push), bashTurn(force), bashTurn(force)}, mcp)
		status := r.toolResult(t, 0)
		if status.IsError || !strings.Contains(modelText(t, status.Content), "Approved: the owner signed this exact Bash call") {
			t.Errorf("approval_status: is_error=%v %q", status.IsError, status.Content)
		}
		if tr := r.toolResult(t, 1); tr.IsError {
			t.Errorf("approved call failed: %q", tr.Content)
		}
		if got := e.ref("refs/heads/feature"); got != e.b {
			t.Errorf("remote feature = %s, want %s: the approved push did not run", got, e.b)
		}
		if d := e.decision(r, 1); d.Verdict != hook.VerdictApproved {
			t.Errorf("approved receipt: %+v", d)
		}
		tr := r.toolResult(t, 2)
		if !tr.IsError || !strings.Contains(tr.Content, "fixrail approve "+callKey) {
			t.Errorf("the identical call after it: is_error=%v %q, want a denial", tr.IsError, tr.Content)
		}
		if n := e.count(receipt.KindRequest, hook.RequestApproved); n != 1 {
			t.Errorf("%d approved-status receipts, want 1", n)
		}
		// The second session found the registration it started with unchanged.
		if n := e.count(receipt.KindSessionStart, "same"); n != 1 {
			t.Errorf("%d unchanged session-start receipts, want 1", n)
		}
	})

	// Session snapshots. The sessions start from a settings file, which the
	// registration covers with --snapshot: the first such session reports
	// the changed command line and is not accepted (self-mod gates), the
	// owner approves it with the command it printed, and a hook added to the
	// file afterwards is reported to the model and not accepted either.
	t.Run("a changed registration is reported to the model and accepted only with the owner's approval", func(t *testing.T) {
		e.t = t
		file := filepath.Join(e.root, "agent-settings.json")
		reg := strings.ReplaceAll(e.settings(true), " --verifier ", " --snapshot "+file+" --verifier ")
		e.write(file, reg, 0o600)
		e.settingsFile = file
		defer func() { e.settingsFile = "" }()

		r := e.claudeTurns(true, []fakemodel.Turn{bashTurn("git status")}, nil)
		start := e.last(receipt.KindSessionStart, r.session)
		if start.Verdict != "deny" || !strings.Contains(start.Reason, "command line changed") || !strings.Contains(start.Reason, file+" appeared (its hooks changed)") {
			t.Fatalf("session-start after the registration changed: %s %q", start.Verdict, start.Reason)
		}
		if !sawText(r.srv, "is NOT accepted until the owner approves it") {
			t.Errorf("the model was not told the registration changed")
		}
		msg := sessionMessage(t, r.srv)
		i := strings.Index(msg, "approvals/pending/")
		j := strings.Index(msg[i:], ".json")
		if i < 0 || j < 0 {
			t.Fatalf("no pending file in %q", msg)
		}
		regPending := filepath.Join(e.fxHome, hook.ApprovalsDir, "pending", msg[i+len("approvals/pending/"):i+j]+".json")

		r = e.claudeTurns(true, []fakemodel.Turn{bashTurn("git status")}, nil)
		if v := e.last(receipt.KindSessionStart, r.session).Verdict; v != "deny" {
			t.Errorf("unapproved registration, next session: %s, want deny", v)
		}
		e.run("ssh-keygen", e.root, "-Y", "sign", "-n", "fixrail-approval", "-f", e.key, regPending)
		r = e.claudeTurns(true, []fakemodel.Turn{bashTurn("git status")}, nil)
		if v := e.last(receipt.KindSessionStart, r.session).Verdict; v != hook.VerdictApproved {
			t.Errorf("approved registration: %s, want approved", v)
		}
		r = e.claudeTurns(true, []fakemodel.Turn{bashTurn("git status")}, nil)
		if v := e.last(receipt.KindSessionStart, r.session).Verdict; v != "same" {
			t.Errorf("session after acceptance: %s, want same", v)
		}

		// A competing hook is added to the file between sessions.
		e.write(file, strings.Replace(reg, `"PreToolUse":[`, `"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"true"}]},`, 1), 0o600)
		r = e.claudeTurns(true, []fakemodel.Turn{bashTurn("git status")}, nil)
		start = e.last(receipt.KindSessionStart, r.session)
		if start.Verdict != "deny" || !strings.Contains(start.Reason, file+" changed (its hooks changed)") {
			t.Errorf("added hook: %s %q", start.Verdict, start.Reason)
		}
		if !sawText(r.srv, file+" changed (its hooks changed)") {
			t.Errorf("the model was not told which file changed")
		}
	})

	t.Run("receipts verify passes", func(t *testing.T) {
		e.t = t
		cmd := exec.Command(fixrailBin, "receipts", "verify")
		cmd.Env = append(os.Environ(), "FIXRAIL_HOME="+e.fxHome)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("receipts verify: %v\n%s", err, out)
		}
	})
}

// modelText is what the model read in a tool result: the server's message
// when the CLI passed the structured content, else the text.
func modelText(t *testing.T, content string) string {
	t.Helper()
	var m map[string]any
	if json.Unmarshal([]byte(content), &m) != nil {
		return content
	}
	msg, _ := m["message"].(string)
	if msg == "" {
		t.Fatalf("structured tool result without a message: %s", content)
	}
	return msg
}

// last is the last receipt of kind in session.
func (e *e2e) last(kind, session string) receipt.Receipt {
	e.t.Helper()
	var out receipt.Receipt
	for _, r := range e.receipts() {
		if r.Kind == kind && r.Session == session {
			out = r
		}
	}
	if out.Kind == "" {
		e.t.Fatalf("no %s receipt for session %s", kind, session)
	}
	return out
}

// sawText reports whether a main request to the model carried s.
func sawText(srv *fakemodel.Server, s string) bool {
	for _, r := range srv.Requests() {
		b, _ := json.Marshal(r.Body)
		var unq string
		if json.Unmarshal(b, &unq) == nil && strings.Contains(unq, s) {
			return true
		}
		if strings.Contains(string(b), s) || strings.Contains(strings.ReplaceAll(string(b), `\n`, "\n"), s) {
			return true
		}
	}
	return false
}

// sessionMessage is the SessionStart context the model was given.
func sessionMessage(t *testing.T, srv *fakemodel.Server) string {
	t.Helper()
	const marker = "fixrail: the hook registration"
	for _, r := range srv.Requests() {
		b, _ := json.Marshal(r.Body)
		s := string(b)
		if i := strings.Index(s, marker); i >= 0 {
			var out string
			// The context sits in a JSON string: decode from the marker to
			// the string's end.
			rest := s[i:]
			for k := 0; k < len(rest); k++ {
				if rest[k] == '"' && (k == 0 || rest[k-1] != '\\') {
					_ = json.Unmarshal([]byte(`"`+rest[:k]+`"`), &out)
					return out
				}
			}
		}
	}
	t.Fatal("no SessionStart context in the model's requests")
	return ""
}

// count is the number of receipts of kind with verdict ("" for any).
func (e *e2e) count(kind, verdict string) int {
	n := 0
	for _, r := range e.receipts() {
		if r.Kind == kind && (verdict == "" || r.Verdict == verdict) {
			n++
		}
	}
	return n
}

// toolNames are the tools the CLI offered the model in its main requests.
func toolNames(reqs []fakemodel.Request) map[string]bool {
	out := map[string]bool{}
	for _, r := range reqs {
		if r.Kind != fakemodel.Main {
			continue
		}
		tools, _ := r.Body["tools"].([]any)
		for _, t := range tools {
			if m, ok := t.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					out[n] = true
				}
			}
		}
	}
	return out
}
