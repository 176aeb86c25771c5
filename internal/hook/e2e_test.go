package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/receipt"
	"github.com/fixrail/fixrail/internal/runner/claudetest"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
)

// fixrailBin is the fixrail binary TestMain builds for the end-to-end test;
// buildErr says why there is none.
var (
	fixrailBin string
	buildErr   error
)

func TestMain(m *testing.M) {
	os.Exit(claudetest.RunWithFixrail(m, &fixrailBin, &buildErr))
}

// e2e is the world of the end-to-end test: a bare remote, a clone whose
// feature branch diverged from the remote's (so only a force push updates
// it), a FIXRAIL_HOME gating push-force, and an owner's SSH approval key
// outside it.
type e2e struct {
	t      *testing.T
	bin    string // the claude CLI
	root   string
	remote string // bare repository
	work   string // the clone the agent works in
	fxHome string
	key    string // the owner's private approval key
	a2     string // the remote feature branch before any push
	b      string // the clone's feature commit
	// settingsFile, when set, is passed as --settings instead of the
	// printed block inline.
	settingsFile string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := claudetest.Binary(t)
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("ssh-keygen is required: the approval is signed with the command the denial prints")
	}
	root := t.TempDir()
	e := &e2e{t: t, bin: bin, root: root,
		remote: filepath.Join(root, "remote.git"), work: filepath.Join(root, "work"),
		fxHome: filepath.Join(root, "fixrail-home"), key: filepath.Join(root, "owner", "approval")}
	seed := filepath.Join(root, "seed")
	e.git(root, "init", "-q", "--bare", "-b", "main", e.remote)
	e.git(root, "init", "-q", "-b", "main", seed)
	e.commit(seed, "a.txt", "A")
	e.git(seed, "remote", "add", "origin", e.remote)
	e.git(seed, "push", "-q", "origin", "main", "main:feature")
	e.git(seed, "checkout", "-q", "-b", "feature")
	e.commit(seed, "a2.txt", "A2")
	e.git(seed, "push", "-q", "origin", "feature")
	e.a2 = e.ref("refs/heads/feature")

	e.git(root, "clone", "-q", e.remote, e.work)
	e.git(e.work, "checkout", "-q", "-b", "feature", "main")
	e.commit(e.work, "b.txt", "B")
	e.b = strings.TrimSpace(e.git(e.work, "rev-parse", "HEAD"))

	// The repository tries to switch every hook off.
	e.write(filepath.Join(e.work, ".claude", "settings.json"), `{"disableAllHooks": true}`+"\n", 0o644)

	e.write(filepath.Join(e.fxHome, hook.PolicyFile), `{"modes": {"push-force": "gate"}}`+"\n", 0o600)
	if err := os.MkdirAll(filepath.Dir(e.key), 0o700); err != nil {
		t.Fatal(err)
	}
	e.run("ssh-keygen", root, "-q", "-t", "ed25519", "-N", "", "-C", "owner@example", "-f", e.key)
	pub, err := os.ReadFile(e.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(e.fxHome, hook.KeysDir, "owner.pub"), string(pub), 0o644)
	return e
}

func (e *e2e) write(path, content string, perm os.FileMode) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		e.t.Fatal(err)
	}
}

func (e *e2e) run(name, dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=", "GIT_CONFIG_NOSYSTEM=1", "HOME="+e.root,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (e *e2e) git(dir string, args ...string) string { e.t.Helper(); return e.run("git", dir, args...) }

func (e *e2e) commit(dir, file, content string) {
	e.t.Helper()
	e.write(filepath.Join(dir, file), content+"\n", 0o644)
	e.git(dir, "add", file)
	e.git(dir, "commit", "-q", "-m", content)
}

// ref is a ref of the remote.
func (e *e2e) ref(name string) string {
	e.t.Helper()
	cmd := exec.Command("git", "--git-dir", e.remote, "rev-parse", "-q", "--verify", name)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// settings is the registration `fixrail hook install --print --bin
// fixrail-hook` prints, as the README installs it (so the printed block, the
// slim binary and its --verifier are what the real CLI runs), with the
// harness's "disableAllHooks": false when defended. Without it, it is the
// naive registration a repository can switch off.
func (e *e2e) settings(defended bool) string {
	cmd := exec.Command(fixrailBin, "hook", "install", "--print", "--bin", claudetest.HookBinary(fixrailBin))
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("fixrail hook install --print: %v", err)
	}
	var s map[string]any
	if err := json.Unmarshal(out, &s); err != nil {
		e.t.Fatalf("the printed block is not JSON: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "fixrail-hook hook --event pre --verifier") {
		e.t.Fatalf("the printed block does not run fixrail-hook guarding fixrail:\n%s", out)
	}
	if defended {
		s["disableAllHooks"] = false
	}
	b, err := json.Marshal(s)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *e2e) settingsArg(defended bool) string {
	if e.settingsFile != "" {
		return e.settingsFile
	}
	return e.settings(defended)
}

type claudeRun struct {
	srv     *fakemodel.Server
	calls   []fakemodel.Call
	result  map[string]any
	session string
}

// claude drives the real CLI through the scripted Bash commands, one per
// turn, then a final text. defended adds the harness's protections against
// repository settings (--setting-sources "" and disableAllHooks:false).
func (e *e2e) claude(defended bool, commands ...string) claudeRun {
	e.t.Helper()
	var turns []fakemodel.Turn
	for _, c := range commands {
		turns = append(turns, bashTurn(c))
	}
	return e.claudeTurns(defended, turns, nil)
}

// bashTurn is a model turn that runs one Bash command.
func bashTurn(command string) fakemodel.Turn {
	return fakemodel.Turn{Text: "Running it.", ToolUse: []fakemodel.ToolUse{{
		Name: "Bash", Input: map[string]any{"command": command, "description": "push"},
	}}}
}

// claudeTurns drives the real CLI through the scripted turns, one tool call
// each, then a final text; extra are more CLI arguments (allowed tools, an
// MCP config).
func (e *e2e) claudeTurns(defended bool, turns []fakemodel.Turn, extra []string) claudeRun {
	e.t.Helper()
	n := len(turns)
	turns = append(turns, fakemodel.Turn{Text: "All done."})
	srv := fakemodel.Start(e.t, fakemodel.Scenario{Turns: turns})

	args := []string{"-p", "--output-format", "stream-json", "--verbose",
		"--max-turns", fmt.Sprint(n + 2),
		"--permission-mode", "dontAsk",
		"--tools", "Bash",
		"--allowedTools", "Bash(git push *)",
		"--strict-mcp-config",
		"--settings", e.settingsArg(defended)}
	if defended {
		args = append(args, "--setting-sources", "")
	}
	args = append(args, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Dir = e.work
	cmd.Env = append(claudetest.Env(e.t, srv), "FIXRAIL_HOME="+e.fxHome, "FIXRAIL_APPROVAL_KEY=", "SSH_AUTH_SOCK=")
	cmd.Stdin = strings.NewReader("Push the branch as scripted.")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	e.t.Logf("claude ran %v (%d tool calls)", time.Since(start).Round(time.Millisecond), n)
	if err != nil {
		e.t.Fatalf("claude: %v (context: %v)\nstderr:\n%s\nstdout:\n%s", err, ctx.Err(), &stderr, &stdout)
	}
	res := claudetest.Result(e.t, claudetest.Events(e.t, stdout.Bytes()))
	if res["is_error"] != false || res["result"] != "All done." {
		e.t.Fatalf("claude result: %v", res)
	}
	calls := srv.Calls()
	if len(calls) != n {
		e.t.Fatalf("%d tool calls issued, want %d", len(calls), n)
	}
	session, _ := res["session_id"].(string)
	return claudeRun{srv: srv, calls: calls, result: res, session: session}
}

// toolResult returns what the model got back for call i.
func (r claudeRun) toolResult(t *testing.T, i int) fakemodel.ToolResult {
	t.Helper()
	tr, ok := r.srv.ToolResult(r.calls[i].ID)
	if !ok {
		t.Fatalf("no tool_result for call %d (%s)", i, r.calls[i].ID)
	}
	return tr
}

func (e *e2e) receipts() []receipt.Receipt {
	e.t.Helper()
	rs, err := (&receipt.Log{Path: filepath.Join(e.fxHome, hook.ReceiptsFile)}).Read()
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// decision returns the decision receipt for call i of run r. The fake
// numbers tool_use ids per server, so the session tells runs apart.
func (e *e2e) decision(r claudeRun, i int) receipt.Receipt {
	e.t.Helper()
	for _, rc := range e.receipts() {
		if rc.Kind == receipt.KindDecision && rc.Session == r.session && rc.ToolUseID == r.calls[i].ID {
			return rc
		}
	}
	e.t.Fatalf("no decision receipt for call %d (%s) of session %s", i, r.calls[i].ID, r.session)
	return receipt.Receipt{}
}

func (e *e2e) hasOutcome(r claudeRun, i int) bool {
	for _, rc := range e.receipts() {
		if rc.Kind == receipt.KindOutcome && rc.Session == r.session && rc.ToolUseID == r.calls[i].ID {
			return true
		}
	}
	return false
}

// TestClaudeCodeGate drives the pinned Claude Code CLI, against the fake
// Messages API, through a gated force push with fixrail registered as its
// PreToolUse and PostToolUse hook, in a repository whose own settings try to
// disable hooks.
func TestClaudeCodeGate(t *testing.T) {
	e := newE2E(t)
	const force = "git push --force origin HEAD:feature"
	const protected = "git push origin HEAD:main"
	mainBefore := e.ref("refs/heads/main")

	var callKey, pending string
	t.Run("gated force push is denied and never runs; warn-mode push runs with a receipt", func(t *testing.T) {
		e.t = t
		r := e.claude(true, force, protected)

		// (a) denied: the remote branch is untouched, the model saw an
		// error carrying the request and the approve command.
		if got := e.ref("refs/heads/feature"); got != e.a2 {
			t.Errorf("remote feature moved to %s, want %s: the denied push ran", got, e.a2)
		}
		tr := r.toolResult(t, 0)
		t.Logf("the model saw (is_error=%v):\n%s", tr.IsError, tr.Content)
		if !tr.IsError {
			t.Errorf("denied call: tool_result is_error=false: %q", tr.Content)
		}
		for _, want := range []string{"push-force, mode gate", "fixrail approve ", "ssh-keygen -Y sign -n fixrail-approval", `"rule":"push-force"`} {
			if !strings.Contains(tr.Content, want) {
				t.Errorf("the model's tool_result lacks %q:\n%s", want, tr.Content)
			}
		}
		i := strings.Index(tr.Content, "fixrail approve ")
		callKey = tr.Content[i+len("fixrail approve ") : i+len("fixrail approve ")+64]
		pending = filepath.Join(e.fxHome, hook.ApprovalsDir, "pending", callKey+".json")
		if !strings.Contains(tr.Content, pending) {
			t.Errorf("tool_result does not name the pending file %s", pending)
		}
		if d := e.decision(r, 0); d.Verdict != "deny" || d.Rule != "push-force" {
			t.Errorf("deny receipt: %+v", d)
		}
		if e.hasOutcome(r, 0) {
			t.Errorf("an outcome was recorded for the denied call")
		}

		// (d) warn: it ran (main moved to the clone's commit), with a
		// decision receipt and an outcome joined by tool_use_id.
		if tr := r.toolResult(t, 1); tr.IsError {
			t.Errorf("warn-mode call failed: %q", tr.Content)
		}
		if got := e.ref("refs/heads/main"); got != e.b || got == mainBefore {
			t.Errorf("remote main = %s, want %s: the warn-mode push did not run", got, e.b)
		}
		if d := e.decision(r, 1); d.Verdict != "warn" || d.Rule != "push-protected" {
			t.Errorf("warn receipt: %+v", d)
		}
		if !e.hasOutcome(r, 1) {
			t.Errorf("no outcome receipt for the warn-mode call")
		}
		if t.Failed() {
			t.FailNow()
		}
	})
	if callKey == "" {
		t.FailNow()
	}

	// The owner signs exactly what the denial printed, with the command it
	// printed. Keep a copy for the replay.
	e.t = t
	e.run("ssh-keygen", e.root, "-Y", "sign", "-n", "fixrail-approval", "-f", e.key, pending)
	saved := filepath.Join(e.root, "saved")
	e.run("mkdir", e.root, "-p", saved)
	e.run("cp", e.root, pending, pending+".sig", saved)

	t.Run("approved force push runs once; the identical call after it is denied", func(t *testing.T) {
		e.t = t
		r := e.claude(true, force, force)
		if tr := r.toolResult(t, 0); tr.IsError {
			t.Errorf("approved call failed: %q", tr.Content)
		}
		if got := e.ref("refs/heads/feature"); got != e.b {
			t.Errorf("remote feature = %s, want %s: the approved push did not run", got, e.b)
		}
		if d := e.decision(r, 0); d.Verdict != hook.VerdictApproved {
			t.Errorf("approved receipt: %+v", d)
		}
		tr := r.toolResult(t, 1)
		if !tr.IsError || !strings.Contains(tr.Content, "fixrail approve "+callKey) {
			t.Errorf("second identical call: is_error=%v %q, want a denial", tr.IsError, tr.Content)
		}
		if d := e.decision(r, 1); d.Verdict != "deny" {
			t.Errorf("second call receipt: %+v", d)
		}
	})

	t.Run("replayed approval is denied", func(t *testing.T) {
		e.t = t
		// Put the remote back so a push that ran would show, and put the
		// used request and signature back in place.
		e.git(e.root, "--git-dir", e.remote, "update-ref", "refs/heads/feature", e.a2)
		e.run("cp", e.root, filepath.Join(saved, callKey+".json"), filepath.Join(saved, callKey+".json.sig"), filepath.Dir(pending))
		r := e.claude(true, force)
		if got := e.ref("refs/heads/feature"); got != e.a2 {
			t.Errorf("remote feature = %s, want %s: the replayed approval let the push run", got, e.a2)
		}
		tr := r.toolResult(t, 0)
		if !tr.IsError || !strings.Contains(tr.Content, "already used") {
			t.Errorf("replay: is_error=%v %q", tr.IsError, tr.Content)
		}
		if _, err := os.Stat(pending + ".sig"); !os.IsNotExist(err) {
			t.Errorf("the replayed signature was not deleted: %v", err)
		}
	})

	t.Run("receipts verify passes", func(t *testing.T) {
		e.t = t
		cmd := exec.Command(fixrailBin, "receipts", "verify", "--json")
		cmd.Env = append(os.Environ(), "FIXRAIL_HOME="+e.fxHome)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("receipts verify: %v\n%s", err, out)
		}
		var rep struct {
			OK    bool             `json:"ok"`
			Lines int64            `json:"lines"`
			Kinds map[string]int64 `json:"kinds"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		// 5 decisions (deny, warn, approved, deny, deny) and 2 outcomes
		// (the warn-mode and the approved push).
		if !rep.OK || rep.Kinds["decision"] != 5 || rep.Kinds["outcome"] != 2 || rep.Kinds["engine-error"] != 0 {
			t.Errorf("verify report %s", out)
		}
	})

	// (f) Control: the same repository without the harness's defences
	// switches the hook off, so the tests above show the defences working,
	// not a repository file that was never read.
	t.Run("control: without the defences the repository disables the hook", func(t *testing.T) {
		e.t = t
		before := len(e.receipts())
		r := e.claude(false, "git push --force origin HEAD:control")
		if tr := r.toolResult(t, 0); tr.IsError {
			t.Errorf("control call: %q", tr.Content)
		}
		if e.ref("refs/heads/control") == "" {
			t.Errorf("the control push did not run")
		}
		if n := len(e.receipts()); n != before {
			t.Errorf("the hook ran (%d new receipts): the repository's disableAllHooks was not read, so the control proves nothing", n-before)
		}
	})
}
