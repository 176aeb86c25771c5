package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// phaseDir is the pipeline's layout: a run directory holding the worktree
// and, beside it, PLAN.json and result.json.
func phaseDir(t *testing.T) (run, wt string) {
	t.Helper()
	run, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wt = filepath.Join(run, "wt")
	if err := os.Mkdir(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	return run, wt
}

func claudeInvocation(run, wt string, ph Phase) Invocation {
	inv := Invocation{
		Phase:       ph,
		Worktree:    wt,
		Prompt:      "reproduce the bug",
		PlanPath:    filepath.Join(run, "PLAN.json"),
		ResultPath:  filepath.Join(run, "result.json"),
		Timeout:     time.Minute,
		MaxTurns:    40,
		HookCommand: []string{"/opt/fixrail/bin/fixrail", "hook"},
	}
	if ph == Investigate {
		inv.Allow = []string{"tests/**"}
	} else {
		inv.Allow = []string{"src/app/format.py", "src/app/util.py"}
	}
	return inv
}

// TestClaudeArgv pins the command line and the --settings document of each
// phase: the tool set, the permission rules, the deny list, the phase hook
// and the flags that keep repository settings and MCP servers out.
func TestClaudeArgv(t *testing.T) {
	tests := []struct {
		name         string
		phase        Phase
		bash         []string
		readOnly     bool // a dry run's fix phase
		wantTools    string
		wantAllow    []string
		wantSettings string // golden, @RUN@ for the run directory
	}{
		{
			name:      "investigate",
			phase:     Investigate,
			wantTools: "Read,Grep,Glob,Write,Edit",
			wantAllow: []string{"Read(./**)", "Edit(./tests/**)", "Edit(/@RUN@/PLAN.json)"},
			wantSettings: `{
  "disableAllHooks": false,
  "permissions": {
    "allow": ["Read(./**)", "Edit(./tests/**)", "Edit(/@RUN@/PLAN.json)"],
    "deny": ["Agent", "Bash", "NotebookEdit", "WebFetch", "WebSearch", "mcp__*"]
  },
  "hooks": {
    "PreToolUse": [{
      "matcher": "*",
      "hooks": [{
        "type": "command",
        "command": "/opt/fixrail/bin/fixrail",
        "args": ["hook", "--phase", "investigate", "--worktree", "@RUN@",
                 "--allow", "wt/tests/**", "--allow", "PLAN.json",
                 "--receipts", "/var/log/fixrail/receipts.ndjson"],
        "timeout": 60
      }]
    }]
  }
}`,
		},
		{
			name:      "fix",
			phase:     Fix,
			wantTools: "Read,Grep,Glob,Write,Edit",
			wantAllow: []string{"Read(./**)", "Edit(./src/app/format.py)", "Edit(./src/app/util.py)", "Edit(/@RUN@/result.json)"},
			wantSettings: `{
  "disableAllHooks": false,
  "permissions": {
    "allow": ["Read(./**)", "Edit(./src/app/format.py)", "Edit(./src/app/util.py)", "Edit(/@RUN@/result.json)"],
    "deny": ["Agent", "Bash", "NotebookEdit", "WebFetch", "WebSearch", "mcp__*"]
  },
  "hooks": {
    "PreToolUse": [{
      "matcher": "*",
      "hooks": [{
        "type": "command",
        "command": "/opt/fixrail/bin/fixrail",
        "args": ["hook", "--phase", "fix", "--worktree", "@RUN@",
                 "--allow", "wt/src/app/format.py", "--allow", "wt/src/app/util.py", "--allow", "result.json",
                 "--receipts", "/var/log/fixrail/receipts.ndjson"],
        "timeout": 60
      }]
    }]
  }
}`,
		},
		{
			name:      "fix with a lockfile rule",
			phase:     Fix,
			bash:      []string{"Bash(go mod tidy:*)"},
			wantTools: "Read,Grep,Glob,Write,Edit,Bash",
			wantAllow: []string{"Read(./**)", "Edit(./src/app/format.py)", "Edit(./src/app/util.py)", "Edit(/@RUN@/result.json)", "Bash(go mod tidy:*)"},
			wantSettings: `{
  "disableAllHooks": false,
  "permissions": {
    "allow": ["Read(./**)", "Edit(./src/app/format.py)", "Edit(./src/app/util.py)", "Edit(/@RUN@/result.json)", "Bash(go mod tidy:*)"],
    "deny": ["Agent", "NotebookEdit", "WebFetch", "WebSearch", "mcp__*"]
  },
  "hooks": {
    "PreToolUse": [{
      "matcher": "*",
      "hooks": [{
        "type": "command",
        "command": "/opt/fixrail/bin/fixrail",
        "args": ["hook", "--phase", "fix", "--worktree", "@RUN@",
                 "--allow", "wt/src/app/format.py", "--allow", "wt/src/app/util.py", "--allow", "result.json",
                 "--receipts", "/var/log/fixrail/receipts.ndjson"],
        "timeout": 60
      }]
    }]
  }
}`,
		},
		{
			// A dry run's fix phase: the write tools are not defined, the
			// hook admits no write (not even result.json), and Write/Edit
			// are denied by name as well.
			name:      "fix read-only for a dry run",
			phase:     Fix,
			readOnly:  true,
			wantTools: "Read,Grep,Glob",
			wantAllow: []string{"Read(./**)"},
			wantSettings: `{
  "disableAllHooks": false,
  "permissions": {
    "allow": ["Read(./**)"],
    "deny": ["Agent", "Bash", "Edit", "NotebookEdit", "WebFetch", "WebSearch", "Write", "mcp__*"]
  },
  "hooks": {
    "PreToolUse": [{
      "matcher": "*",
      "hooks": [{
        "type": "command",
        "command": "/opt/fixrail/bin/fixrail",
        "args": ["hook", "--phase", "fix", "--worktree", "@RUN@",
                 "--receipts", "/var/log/fixrail/receipts.ndjson"],
        "timeout": 60
      }]
    }]
  }
}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, wt := phaseDir(t)
			inv := claudeInvocation(run, wt, tc.phase)
			inv.BashRules = tc.bash
			if tc.readOnly {
				inv.Allow, inv.ReadOnly = nil, true
			}
			c := &Claude{Binary: "claude", Model: "claude-sonnet-x"}
			p, err := c.plan(inv)
			if err != nil {
				t.Fatal(err)
			}
			argv, err := p.argv("/var/log/fixrail/receipts.ndjson")
			if err != nil {
				t.Fatal(err)
			}
			settings := argv[len(argv)-1]
			neutral := func(s string) string { return strings.ReplaceAll(s, run, "@RUN@") }
			var want []string
			want = append(want, "claude", "-p",
				"--output-format", "stream-json", "--verbose", "--include-hook-events",
				"--no-session-persistence",
				"--max-turns", "40",
				"--permission-mode", "dontAsk",
				"--tools", tc.wantTools,
				"--allowedTools")
			want = append(want, tc.wantAllow...)
			want = append(want, "--model", "claude-sonnet-x",
				"--setting-sources", "",
				"--strict-mcp-config",
				"--settings", "SETTINGS")
			got := slices.Clone(argv)
			for i := range got {
				got[i] = neutral(got[i])
			}
			got[len(got)-1] = "SETTINGS"
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			var gotDoc, wantDoc any
			if err := json.Unmarshal([]byte(neutral(settings)), &gotDoc); err != nil {
				t.Fatalf("--settings is not JSON: %v\n%s", err, settings)
			}
			if err := json.Unmarshal([]byte(tc.wantSettings), &wantDoc); err != nil {
				t.Fatalf("golden: %v", err)
			}
			if diff := cmp.Diff(wantDoc, gotDoc); diff != "" {
				t.Errorf("--settings (-want +got):\n%s\ngot: %s", diff, neutral(settings))
			}
			// The key order is part of the golden document too: the
			// JSON must read as the notes show it.
			if !strings.HasPrefix(settings, `{"disableAllHooks":false,"permissions":{"allow":`) {
				t.Errorf("--settings starts %.60q", settings)
			}
			for _, a := range argv {
				if strings.Contains(a, inv.Prompt) {
					t.Errorf("the prompt is on argv: %q", a)
				}
				for _, bad := range []string{"--bare", "--safe-mode", "--dangerously-skip-permissions", "bypassPermissions"} {
					if a == bad {
						t.Errorf("argv holds %s", bad)
					}
				}
			}
		})
	}
}

// TestClaudeRefuses: an invocation the adapter cannot confine is not run.
func TestClaudeRefuses(t *testing.T) {
	run, wt := phaseDir(t)
	tests := []struct {
		name   string
		c      Claude
		change func(*Invocation)
		want   string
	}{
		{"no hook", Claude{Binary: "claude"}, func(i *Invocation) { i.HookCommand = nil }, "no phase hook command"},
		{"relative hook", Claude{Binary: "claude"}, func(i *Invocation) { i.HookCommand = []string{"fixrail", "hook"} }, "no phase hook command"},
		{"no binary", Claude{}, func(*Invocation) {}, "no claude binary"},
		{"model is a flag", Claude{Binary: "claude", Model: "--bare"}, func(*Invocation) {}, "not a plain model name"},
		{"no turn cap", Claude{Binary: "claude"}, func(i *Invocation) { i.MaxTurns = 0 }, "max turns must be positive"},
		{"empty prompt", Claude{Binary: "claude"}, func(i *Invocation) { i.Prompt = "" }, "empty prompt"},
		{"unknown phase", Claude{Binary: "claude"}, func(i *Invocation) { i.Phase = "deploy" }, "unknown phase"},
		{"relative worktree", Claude{Binary: "claude"}, func(i *Invocation) { i.Worktree = "wt" }, "not an absolute path"},
		{"missing worktree", Claude{Binary: "claude"}, func(i *Invocation) { i.Worktree = filepath.Join(run, "gone") }, "is not a directory"},
		{"absolute allow", Claude{Binary: "claude"}, func(i *Invocation) { i.Allow = []string{"/etc/passwd"} }, "relative to the worktree"},
		{"dotdot allow", Claude{Binary: "claude"}, func(i *Invocation) { i.Allow = []string{"tests/../src/x.py"} }, `".." is not allowed`},
		{"rule injection", Claude{Binary: "claude"}, func(i *Invocation) { i.Allow = []string{"x) Bash(curl"} }, "permission rule cannot carry"},
		{"comma", Claude{Binary: "claude"}, func(i *Invocation) { i.Allow = []string{"tests/{a,b}.py"} }, "permission rule cannot carry"},
		{"planned glob", Claude{Binary: "claude"}, func(i *Invocation) { i.Phase = Fix; i.Allow = []string{"src/**"} }, "must be a literal path"},
		{"bash in investigate", Claude{Binary: "claude"}, func(i *Invocation) { i.BashRules = []string{"Bash(go mod tidy:*)"} }, "only the fix phase"},
		{"whole shell", Claude{Binary: "claude"}, func(i *Invocation) { i.Phase = Fix; i.Allow = nil; i.BashRules = []string{"Bash"} }, "want one scoped rule"},
		{"shell wildcard", Claude{Binary: "claude"}, func(i *Invocation) { i.Phase = Fix; i.Allow = nil; i.BashRules = []string{"Bash(*)"} }, "want one scoped rule"},
		{"chained rule", Claude{Binary: "claude"}, func(i *Invocation) { i.Phase = Fix; i.Allow = nil; i.BashRules = []string{"Bash(npm i; curl x:*)"} }, "want one scoped rule"},
		{"plan elsewhere", Claude{Binary: "claude"}, func(i *Invocation) { i.PlanPath = "/tmp/elsewhere/PLAN.json" }, "must sit next to the worktree"},
		{"plan relative", Claude{Binary: "claude"}, func(i *Invocation) { i.PlanPath = "PLAN.json" }, "not a clean absolute path"},
		{"read-only with writes", Claude{Binary: "claude"}, func(i *Invocation) { i.Phase = Fix; i.ReadOnly = true; i.Allow = []string{"src/x.py"} }, "read-only invocation carries write globs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := claudeInvocation(run, wt, Investigate)
			tc.change(&inv)
			c := tc.c
			res, err := c.Run(context.Background(), inv)
			e, ok := AsError(err)
			if !ok || e.Kind != Refused || !strings.Contains(e.Detail, tc.want) {
				t.Fatalf("Run = %v, want a %s error containing %q", err, Refused, tc.want)
			}
			if res != (Result{NeverStarted: true}) {
				t.Errorf("result %+v from a refused run, want only NeverStarted: nothing ran, nothing is charged", res)
			}
		})
	}
}

// TestClaudeHookProbe: a hook command that does not block the probe call,
// or cannot start, refuses the invocation before the CLI runs.
func TestClaudeHookProbe(t *testing.T) {
	run, wt := phaseDir(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "claude-ran")
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		hook []string
		want string
	}{
		{"allows everything", []string{"/bin/true"}, "did not block a probe call (exit 0, want 2)"},
		{"errors", []string{"/bin/false"}, "did not block a probe call (exit 1, want 2)"},
		{"missing", []string{filepath.Join(dir, "no-such-fixrail"), "hook"}, "cannot start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := claudeInvocation(run, wt, Investigate)
			inv.HookCommand = tc.hook
			_, err := (&Claude{Binary: bin, TempDir: dir}).Run(context.Background(), inv)
			if e, ok := AsError(err); !ok || e.Kind != Refused || !strings.Contains(e.Detail, tc.want) {
				t.Fatalf("Run = %v, want %s containing %q", err, Refused, tc.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatalf("the CLI ran")
			}
		})
	}
}

// TestClaudeEnv: the agent's environment is exactly the allowlist, private
// directories, the model credential and the traffic switches.
func TestClaudeEnv(t *testing.T) {
	parent := map[string]string{
		"PATH":                             "/usr/bin:/bin",
		"HOME":                             "/home/op",
		"LANG":                             "C.UTF-8",
		"TMPDIR":                           "/tmp/op",
		"ANTHROPIC_API_KEY":                "sk-ant-test",
		"ANTHROPIC_BASE_URL":               "http://127.0.0.1:9",
		"GITHUB_TOKEN":                     "ghp_secret",
		"AWS_SECRET_ACCESS_KEY":            "aws",
		"SSH_AUTH_SOCK":                    "/run/agent.sock",
		"CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": "1",
		"FIXRAIL_HOME":                     "/home/op/.config/fixrail",
	}
	lookup := func(k string) (string, bool) { v, ok := parent[k]; return v, ok }
	got := claudeEnv(lookup, claudeDirs{Home: "/p/h", Tmp: "/p/t", Run: "/p/r"})
	want := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/p/h",
		"LANG=C.UTF-8",
		"TMPDIR=/p/t",
		"XDG_RUNTIME_DIR=/p/r",
		"ANTHROPIC_API_KEY=sk-ant-test",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:9",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	// An unset credential is not invented; the token form passes when set.
	delete(parent, "ANTHROPIC_API_KEY")
	parent["ANTHROPIC_AUTH_TOKEN"] = "tok"
	got = claudeEnv(lookup, claudeDirs{Home: "/p/h", Tmp: "/p/t", Run: "/p/r"})
	var names []string
	for _, kv := range got {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	wantNames := []string{"PATH", "HOME", "LANG", "TMPDIR", "XDG_RUNTIME_DIR", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("env names (-want +got):\n%s", diff)
	}
}

// TestStreamOutcome maps recorded and edited streams to outcomes, and reads
// cost, turns and denials from each.
func TestStreamOutcome(t *testing.T) {
	tools := []string{"Read", "Write"}
	edit := func(name, old, new string) string {
		s := streamSamples[name]
		if !strings.Contains(s, old) {
			t.Fatalf("sample %s lacks %q", name, old)
		}
		return strings.Replace(s, old, new, 1)
	}
	lines := func(name string, keep func(string) bool) string {
		var out []string
		for _, l := range strings.Split(streamSamples[name], "\n") {
			if keep(l) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	tests := []struct {
		name     string
		stdout   string
		exit     int
		res      sandbox.Result // TimedOut, Signal, ...
		wantKind Kind           // "" for success
		wantIn   string
		cost     float64
		turns    int
		denials  int
	}{
		{name: "success with a hook denial", stdout: streamSamples["success"], cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "max turns", stdout: streamSamples["max_turns"], exit: 1, wantKind: OutOfTurns, wantIn: "stopped after 3 turns, max_turns 40", cost: 0.0016, turns: 3},
		{name: "api error 500", stdout: streamSamples["api_500"], exit: 1, wantKind: APIError, wantIn: "model API error (HTTP 500): API Error: 500 boom", turns: 1},
		{name: "api error 401", stdout: streamSamples["api_401"], exit: 1, wantKind: APIError, wantIn: "(HTTP 401): Invalid API key", turns: 1},
		{name: "connection refused", stdout: streamSamples["refused"], exit: 1, wantKind: APIError, wantIn: "(connection_failed): API Error: Connection refused", turns: 1},
		{name: "subtype success is not enough", stdout: edit("success", `"is_error":false`, `"is_error":true`), exit: 1, wantKind: Failed, wantIn: "is_error=true subtype=success terminal_reason=completed exit 1", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "hook stopped the run", stdout: edit("success", `"terminal_reason":"completed"`, `"terminal_reason":"hook_stopped"`), wantKind: Failed, wantIn: "terminal_reason=hook_stopped exit 0", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "clean result but exit 1", stdout: streamSamples["success"], exit: 1, wantKind: Failed, wantIn: "exit 1", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "max turns by terminal_reason only", stdout: edit("max_turns", `"subtype":"error_max_turns"`, `"subtype":"error_during_execution"`), exit: 1, wantKind: OutOfTurns, cost: 0.0016, turns: 3},
		{name: "no result", stdout: lines("success", func(l string) bool { return !strings.Contains(l, `"type":"result"`) }), exit: 1, wantKind: Failed, wantIn: "exited 1 without a result event"},
		{name: "empty output", stdout: "", exit: 1, wantKind: Failed, wantIn: "exited 1 without a result event"},
		{name: "garbage lines", stdout: "not json\n{\n", wantKind: Failed, wantIn: "no result event"},
		{name: "timed out", stdout: lines("success", func(l string) bool { return !strings.Contains(l, `"type":"result"`) }), res: sandbox.Result{TimedOut: true, ExitCode: -1}, wantKind: TimedOut},
		{name: "crashed", stdout: lines("success", func(l string) bool { return !strings.Contains(l, `"type":"result"`) }), res: sandbox.Result{Signal: "killed", ExitCode: -1}, wantKind: Crashed},
		{name: "extra tool", stdout: edit("success", `"tools":["Read","Write"]`, `"tools":["Read","Write","Bash"]`), wantKind: Unconfined, wantIn: "offered tool Bash", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "mcp server", stdout: edit("success", `"mcp_servers":[]`, `"mcp_servers":[{"name":"marker","status":"pending"}]`), wantKind: Unconfined, wantIn: "1 MCP server", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "wrong mode", stdout: edit("success", `"permissionMode":"dontAsk"`, `"permissionMode":"default"`), wantKind: Unconfined, wantIn: `permission mode "default"`, cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "call ran without the hook", stdout: lines("success", func(l string) bool { return !strings.Contains(l, `"hook_name":"PreToolUse:Read"`) }), wantKind: Unconfined, wantIn: "1 Read call(s) ran but the phase hook allowed 0", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "no init", stdout: lines("success", func(l string) bool { return !strings.Contains(l, `"subtype":"init"`) }), wantKind: Unconfined, wantIn: "no init event", cost: 0.0024000000000000002, turns: 3, denials: 1},
		{name: "unconfined beats a timeout", stdout: edit("max_turns", `"tools":["Read","Write"]`, `"tools":["Read","Write","WebFetch"]`), res: sandbox.Result{TimedOut: true, ExitCode: -1}, wantKind: Unconfined, cost: 0.0016, turns: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.res
			res.Stdout = tc.stdout
			if res.ExitCode == 0 {
				res.ExitCode = tc.exit
			}
			s := parseStream(res.Stdout)
			err := s.outcome(context.Background(), res, tools, 40)
			var kind Kind
			if e, ok := AsError(err); ok {
				kind = e.Kind
				if !strings.Contains(e.Detail, tc.wantIn) {
					t.Errorf("detail %q lacks %q", e.Detail, tc.wantIn)
				}
			} else if err != nil {
				t.Fatalf("error %v is not an *Error", err)
			}
			if kind != tc.wantKind {
				t.Errorf("kind = %q, want %q (err %v)", kind, tc.wantKind, err)
			}
			// Only a stream with no answer in it, or a process that died
			// before giving one, is the channel's failure: retried once.
			transport := map[string]bool{"no result": true, "empty output": true, "garbage lines": true, "crashed": true}[tc.name]
			if got := TransportFailure(err) != ""; got != transport {
				t.Errorf("transport failure = %v (%q), want %v", got, TransportFailure(err), transport)
			}
			var got [3]float64
			if r := s.result; r != nil {
				got = [3]float64{r.TotalCostUSD, float64(r.NumTurns), float64(len(r.PermissionDenials))}
			}
			if want := [3]float64{tc.cost, float64(tc.turns), float64(tc.denials)}; got != want {
				t.Errorf("cost, turns, denials = %v, want %v", got, want)
			}
		})
	}
}

// TestStreamAccount: what an invocation is charged comes from the CLI's
// result event, and only from it; a turn the CLI answered itself is no
// model turn, and model turns at no cost are no account of the cost.
func TestStreamAccount(t *testing.T) {
	// Claude Code 2.1.328 without a credential: its result event, trimmed.
	notLoggedIn := `{"type":"result","subtype":"success","is_error":true,"duration_api_ms":0,"total_cost_usd":0,"modelUsage":{},"num_turns":1,"terminal_reason":"api_error","api_error_status":null,"result":"Not logged in · Please run /login","permission_denials":[]}`
	unpriced := `{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0,"modelUsage":{"local-model":{"inputTokens":900,"outputTokens":80,"costUSD":0}},"num_turns":4,"terminal_reason":"completed","result":"done","permission_denials":[]}`
	noResult := strings.Join(slices.DeleteFunc(strings.Split(streamSamples["success"], "\n"), func(l string) bool { return strings.Contains(l, `"type":"result"`) }), "\n")
	for _, tc := range []struct {
		name    string
		stdout  string
		cost    float64
		turns   int
		metered bool
	}{
		{"success", streamSamples["success"], 0.0024000000000000002, 3, true},
		{"max turns", streamSamples["max_turns"], 0.0016, 3, true},
		{"not logged in", notLoggedIn, 0, 0, true},
		{"api error 401", streamSamples["api_401"], 0, 0, true},
		{"connection refused", streamSamples["refused"], 0, 0, true},
		{"model turns at no cost", unpriced, 0, 4, false},
		{"no result event", noResult, 0, 0, false},
		{"no output", "", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cost, turns, _, metered := parseStream(tc.stdout).account()
			if cost != tc.cost || turns != tc.turns || metered != tc.metered {
				t.Errorf("account = $%g, %d turns, metered %v; want $%g, %d turns, metered %v", cost, turns, metered, tc.cost, tc.turns, tc.metered)
			}
		})
	}
}

// TestClaudeRun drives Run end to end with a stand-in claude that records
// its argv, environment, cwd and stdin and prints a recorded stream.
func TestClaudeRun(t *testing.T) {
	run, wt := phaseDir(t)
	rec := t.TempDir()
	stream := filepath.Join(rec, "stream.jsonl")
	sample := strings.Replace(streamSamples["success"], `"tools":["Read","Write"]`, `"tools":["Read","Grep","Glob","Write","Edit"]`, 1)
	if err := os.WriteFile(stream, []byte(sample+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(rec, "hook")
	hookScript := `#!/bin/sh
printf '%s\n' "$@" > "` + rec + `/hook-argv"
cat > "` + rec + `/hook-stdin"
echo "blocked" >&2
exit 2
`
	if err := os.WriteFile(hook, []byte(hookScript), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(rec, "claude")
	script := `#!/bin/sh
cat > "` + rec + `/stdin"
pwd -P > "` + rec + `/cwd"
printf '%s\n' "$@" > "` + rec + `/argv"
tr '\0' '\n' < /proc/$$/environ | sort > "` + rec + `/env"
for d in "$HOME" "$TMPDIR" "$XDG_RUNTIME_DIR"; do [ -d "$d" ] && stat -c %a "$d"; done > "` + rec + `/modes"
echo "$HOME" > "` + rec + `/home"
cat "` + stream + `"
exit 0
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	parent := map[string]string{"PATH": os.Getenv("PATH"), "LANG": "C.UTF-8", "HOME": "/home/op",
		"ANTHROPIC_API_KEY": "sk-ant-test", "GITHUB_TOKEN": "ghp_no"}
	c := &Claude{Binary: bin, Lookup: func(k string) (string, bool) { v, ok := parent[k]; return v, ok }, TempDir: t.TempDir()}
	inv := claudeInvocation(run, wt, Investigate)
	inv.HookCommand = []string{hook}
	inv.Prompt = "PROMPT-CANARY-7f3a: reproduce it\n"
	res, err := c.Run(context.Background(), inv)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Cost != 0.0024000000000000002 || res.Turns != 3 || res.Denials != 1 {
		t.Errorf("result %+v", res)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(rec, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("stdin"); got != inv.Prompt {
		t.Errorf("stdin = %q, want the prompt", got)
	}
	if got := strings.TrimSpace(read("cwd")); got != wt {
		t.Errorf("cwd = %s, want %s", got, wt)
	}
	if strings.Contains(read("argv"), "PROMPT-CANARY") {
		t.Errorf("the prompt is on argv")
	}
	var names []string
	for _, kv := range strings.Split(strings.TrimSpace(read("env")), "\n") {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	wantNames := []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "HOME", "LANG", "PATH", "TMPDIR", "XDG_RUNTIME_DIR"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("env names (-want +got):\n%s", diff)
	}
	if got := strings.Fields(read("modes")); !slices.Equal(got, []string{"700", "700", "700"}) {
		t.Errorf("private dir modes = %v, want three 700", got)
	}
	// The hook was probed with a call no phase admits, under the phase's
	// own flags, before the CLI ran.
	if got := read("hook-stdin"); !strings.Contains(got, `"tool_name":"WebFetch"`) || !strings.Contains(got, `"hook_event_name":"PreToolUse"`) {
		t.Errorf("probe input %s", got)
	}
	if got := read("hook-argv"); !strings.HasPrefix(got, "--phase\ninvestigate\n--worktree\n"+run+"\n--allow\nwt/tests/**\n--allow\nPLAN.json\n--receipts\n") {
		t.Errorf("probe argv:\n%s", got)
	}
	home := strings.TrimSpace(read("home"))
	if _, err := os.Stat(filepath.Dir(home)); !os.IsNotExist(err) {
		t.Errorf("private directory %s left behind (%v)", filepath.Dir(home), err)
	}
}

// Stream samples recorded from claude 2.1.328 against fakemodel (--output-format
// stream-json --verbose --include-hook-events, tools Read,Write, fixrail's
// phase hook), trimmed: the init event keeps the fields fixrail reads, the
// result event drops usage and model statistics, and paths and ports are
// neutral. Everything else is as the CLI printed it.
var streamSamples = map[string]string{
	"success": `{"type":"system","subtype":"init","cwd":"/work/wt","session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","tools":["Read","Write"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"dontAsk","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328"}
{"type":"assistant","message":{"content":[{"text":"Reading.","type":"text"}],"id":"msg_fake_0001","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message"},"parent_tool_use_id":null,"session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","timestamp":"2026-11-30T17:02:30.137Z","request_id":"req_fake"}
{"type":"assistant","message":{"content":[{"id":"toolu_fake_0001","input":{"file_path":"a.txt"},"name":"Read","type":"tool_use"}],"id":"msg_fake_0001","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message"},"parent_tool_use_id":null,"session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","timestamp":"2026-11-30T17:02:30.156Z","request_id":"req_fake"}
{"type":"system","subtype":"hook_started","hook_id":"c06b5ffd-7fc0-48a7-8a9c-396ed4b252fd","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1"}
{"type":"system","subtype":"hook_response","hook_id":"c06b5ffd-7fc0-48a7-8a9c-396ed4b252fd","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","output":"","stdout":"","stderr":"","exit_code":0,"outcome":"success","session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_fake_0001","type":"tool_result","content":"1\ta\n2\t"}]},"parent_tool_use_id":null,"session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","tool_use_result":{"type":"text","file":{"filePath":"a.txt","content":"a\n","numLines":2,"startLine":1,"totalLines":2}},"tool_result_meta":[{"id":"toolu_fake_0001","permission_decision":{"decision":"accept","source":"config","reason_type":"mode"}}]}
{"type":"assistant","message":{"content":[{"id":"toolu_fake_0002","input":{"file_path":"src/x.py","content":"x"},"name":"Write","type":"tool_use"}],"id":"msg_fake_0002","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message"},"parent_tool_use_id":null,"session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","timestamp":"2026-11-30T17:02:30.509Z","request_id":"req_fake"}
{"type":"system","subtype":"hook_started","hook_id":"7cc0f6ac-d91a-46aa-9698-2d37aab7d1ae","hook_name":"PreToolUse:Write","hook_event":"PreToolUse","session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1"}
{"type":"system","subtype":"hook_response","hook_id":"7cc0f6ac-d91a-46aa-9698-2d37aab7d1ae","hook_name":"PreToolUse:Write","hook_event":"PreToolUse","output":"fixrail: blocked Write in the investigate phase: write to src/x.py: this phase may write only tests/**\n{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"fixrail: blocked Write in the investigate phase: write to src/x.py: this phase may write only tests/**\"}}\n","stdout":"{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"fixrail: blocked Write in the investigate phase: write to src/x.py: this phase may write only tests/**\"}}\n","stderr":"fixrail: blocked Write in the investigate phase: write to src/x.py: this phase may write only tests/**\n","exit_code":2,"outcome":"error","session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"fixrail: blocked Write in the investigate phase: write to src/x.py: this phase may write only tests/**","is_error":true,"tool_use_id":"toolu_fake_0002"}]},"parent_tool_use_id":null,"session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","tool_use_result":"Error: fixrail: blocked Write in the investigate phase: write to src/x.py: this phase may write only tests/**","tool_result_meta":[{"id":"toolu_fake_0002","non_execution_kind":"permission-rule","permission_decision":{"decision":"reject","source":"hook","reason_type":"hook"}}]}
{"type":"assistant","message":{"content":[{"text":"All done.","type":"text"}],"id":"msg_fake_0003","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message"},"parent_tool_use_id":null,"session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","timestamp":"2026-11-30T17:02:30.913Z","request_id":"req_fake"}
{"duration_api_ms":479,"stop_reason":"end_turn","session_id":"5c27325f-6a99-4827-ae98-25512d66b9e1","total_cost_usd":0.0024000000000000002,"permission_denials":[{"tool_name":"Write","tool_use_id":"toolu_fake_0002","tool_input":{"file_path":"/work/wt/src/x.py","content":"x"}}],"terminal_reason":"completed","safety_stops":0,"is_error":false,"num_turns":3,"subtype":"success","api_error_status":null,"result":"All done.","ttft_ms":837,"type":"result","duration_ms":1624,"uuid":"7d0620bb-a795-49eb-9f7a-91b2086a39a3","ttft_stream_ms":836,"time_to_request_ms":796,"first_content_frame_ms":836,"queued_turn_count":0,"result_index":0}`,
	"max_turns": `{"type":"system","subtype":"init","cwd":"/work/wt","session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3","tools":["Read","Write"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"dontAsk","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328"}
{"type":"assistant","message":{"content":[{"id":"toolu_fake_0001","input":{"file_path":"a.txt"},"name":"Read","type":"tool_use"}],"id":"msg_fake_0001","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message"},"parent_tool_use_id":null,"session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3","timestamp":"2026-11-30T17:02:33.134Z","request_id":"req_fake"}
{"type":"system","subtype":"hook_started","hook_id":"5726cfa2-2624-4264-a77e-7f3615c0466d","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3"}
{"type":"system","subtype":"hook_response","hook_id":"5726cfa2-2624-4264-a77e-7f3615c0466d","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","output":"","stdout":"","stderr":"","exit_code":0,"outcome":"success","session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_fake_0001","type":"tool_result","content":"1\ta\n2\t"}]},"parent_tool_use_id":null,"session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3","tool_use_result":{"type":"text","file":{"filePath":"a.txt","content":"a\n","numLines":2,"startLine":1,"totalLines":2}},"tool_result_meta":[{"id":"toolu_fake_0001","permission_decision":{"decision":"accept","source":"config","reason_type":"mode"}}]}
{"type":"assistant","message":{"content":[{"id":"toolu_fake_0002","input":{"file_path":"a.txt"},"name":"Read","type":"tool_use"}],"id":"msg_fake_0002","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message"},"parent_tool_use_id":null,"session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3","timestamp":"2026-11-30T17:02:33.516Z","request_id":"req_fake"}
{"type":"system","subtype":"hook_started","hook_id":"eb356542-c018-4da7-9dce-13ba30c15313","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3"}
{"type":"system","subtype":"hook_response","hook_id":"eb356542-c018-4da7-9dce-13ba30c15313","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","output":"","stdout":"","stderr":"","exit_code":0,"outcome":"success","session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_fake_0002","type":"tool_result","content":"1\ta\n2\t"}]},"parent_tool_use_id":null,"session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3","tool_use_result":{"type":"text","file":{"filePath":"a.txt","content":"a\n","numLines":2,"startLine":1,"totalLines":2}},"tool_result_meta":[{"id":"toolu_fake_0002","permission_decision":{"decision":"accept","source":"config","reason_type":"mode"}}]}
{"duration_api_ms":161,"stop_reason":"tool_use","session_id":"e4ffa27d-c8b5-4e29-9a1b-d5741ace10f3","total_cost_usd":0.0016,"permission_denials":[],"terminal_reason":"max_turns","safety_stops":0,"is_error":true,"num_turns":3,"subtype":"error_max_turns","errors":["Reached maximum number of turns (2)"],"type":"result","duration_ms":1308,"uuid":"c2b18a24-00f6-47de-99d1-bfc86d9149d3","queued_turn_count":0,"result_index":0}`,
	"api_500": `{"type":"system","subtype":"init","cwd":"/work/wt","session_id":"45d5edf3-10ef-4fa0-87e0-02639faa83d3","tools":["Read","Write"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"dontAsk","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328"}
{"type":"assistant","message":{"diagnostics":null,"id":"df629bde-32e4-4045-9d63-03009c8fbf15","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","content":[{"type":"text","text":"API Error: 500 boom. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:PORT)."}]},"parent_tool_use_id":null,"session_id":"45d5edf3-10ef-4fa0-87e0-02639faa83d3","timestamp":"2026-11-30T17:02:32.708Z","error":"server_error","request_id":"req_fake","is_api_error_message":true,"api_error_status":500,"api_error_type":"api_error"}
{"duration_api_ms":0,"stop_reason":"stop_sequence","session_id":"45d5edf3-10ef-4fa0-87e0-02639faa83d3","total_cost_usd":0,"permission_denials":[],"terminal_reason":"api_error","safety_stops":0,"is_error":true,"num_turns":1,"subtype":"success","api_error_status":500,"api_error_type":"api_error","result":"API Error: 500 boom. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:PORT).","type":"result","duration_ms":638,"uuid":"9525911d-76a0-41e9-b7d7-a351f827fc2f","queued_turn_count":0,"result_index":0}`,
	"api_401": `{"type":"system","subtype":"init","cwd":"/work/wt","session_id":"6e0e4187-ceea-43f2-baa3-753f6981b5c9","tools":["Read","Write"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"dontAsk","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328"}
{"type":"assistant","message":{"diagnostics":null,"id":"c0170884-68d5-4051-9940-287da230b450","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"parent_tool_use_id":null,"session_id":"6e0e4187-ceea-43f2-baa3-753f6981b5c9","timestamp":"2026-11-30T17:02:30.537Z","error":"authentication_failed","request_id":"req_fake","is_api_error_message":true,"api_error_status":401,"api_error_type":"authentication_error"}
{"duration_api_ms":0,"stop_reason":"stop_sequence","session_id":"6e0e4187-ceea-43f2-baa3-753f6981b5c9","total_cost_usd":0,"permission_denials":[],"terminal_reason":"api_error","safety_stops":0,"is_error":true,"num_turns":1,"subtype":"success","api_error_status":401,"api_error_type":"authentication_error","result":"Invalid API key · Fix external API key","type":"result","duration_ms":676,"uuid":"7eb3b75d-55c8-4091-94c2-a29b34f2c334","queued_turn_count":0,"result_index":0}`,
	"refused": `{"type":"system","subtype":"init","cwd":"/work/wt","session_id":"70c98c6e-44ed-40a3-aa9b-1f4343d750ac","tools":["Read","Write"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"dontAsk","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328"}
{"type":"assistant","message":{"diagnostics":null,"id":"c09541b5-ae24-482d-8163-7ba716172412","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","content":[{"type":"text","text":"API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"}]},"parent_tool_use_id":null,"session_id":"70c98c6e-44ed-40a3-aa9b-1f4343d750ac","timestamp":"2026-11-30T17:02:35.216Z","error":"server_error","is_api_error_message":true,"api_error":"connection_failed"}
{"duration_api_ms":0,"stop_reason":"stop_sequence","session_id":"70c98c6e-44ed-40a3-aa9b-1f4343d750ac","total_cost_usd":0,"permission_denials":[],"terminal_reason":"api_error","safety_stops":0,"is_error":true,"num_turns":1,"subtype":"success","api_error_status":null,"api_error":"connection_failed","result":"API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)","type":"result","duration_ms":1018,"uuid":"406bfa82-efc8-42f1-a3ed-aeda8d7edb4a","queued_turn_count":0,"result_index":0}`,
}

// TestClaudeNoCredential: with no model credential for the agent, the run
// is refused before the CLI starts, and a CLI that answers "Please run
// /login" is reported with what fixrail needs instead — a /login session
// cannot reach an agent whose HOME is private.
func TestClaudeNoCredential(t *testing.T) {
	run, wt := phaseDir(t)
	marker := filepath.Join(t.TempDir(), "started")
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{
		{"PATH": os.Getenv("PATH")},
		{"PATH": os.Getenv("PATH"), "ANTHROPIC_API_KEY": " ", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"},
	} {
		c := &Claude{Binary: bin, Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, TempDir: t.TempDir()}
		inv := claudeInvocation(run, wt, Investigate)
		inv.HookCommand = []string{hookBlocks(t)}
		res, err := c.Run(context.Background(), inv)
		e, ok := AsError(err)
		if !ok || e.Kind != Unavailable || !strings.Contains(e.Detail, "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN") || strings.Contains(e.Detail, "Please run") || !res.NeverStarted {
			t.Errorf("env %v: Run = %+v, %v; want runner-unavailable naming the variables, never started", env, res, err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("env %v: the CLI was started", env)
		}
	}

	notLoggedIn := `{"type":"result","subtype":"success","is_error":true,"duration_api_ms":0,"total_cost_usd":0,"modelUsage":{},"num_turns":1,"terminal_reason":"api_error","api_error_status":null,"result":"Not logged in · Please run /login","permission_denials":[]}`
	var initLine string
	for _, l := range strings.Split(streamSamples["success"], "\n") {
		if strings.Contains(l, `"subtype":"init"`) {
			initLine = l
		}
	}
	s := parseStream(initLine + "\n" + notLoggedIn)
	if s.init == nil {
		t.Fatal("no init event in the sample")
	}
	err := s.outcome(context.Background(), sandbox.Result{ExitCode: 1}, s.init.Tools, 10)
	e, ok := AsError(err)
	if !ok || e.Kind != Unavailable || strings.Contains(e.Detail, "Please run /login") || !strings.Contains(e.Detail, "ANTHROPIC_API_KEY") {
		t.Errorf("not logged in: %v; want runner-unavailable saying what fixrail passes, not the CLI's advice", err)
	}
}

// hookBlocks is a phase hook that blocks every call, as fixrail's blocks
// the probe.
func hookBlocks(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ncat >/dev/null\necho blocked >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
