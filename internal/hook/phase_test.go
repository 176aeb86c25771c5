package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPhase(t *testing.T) {
	e := newEnv(t)
	wt := e.cwd
	outside := t.TempDir()
	for _, f := range []string{"src/app.py", "tests/test_app.py"} {
		p := filepath.Join(wt, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Planted links: a file link out of the tree, a directory link out of
	// the tree under an allowed prefix, and an allowed-looking name that
	// points at a source file.
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(wt, "leak.txt")))
	must(t, os.Symlink(outside, filepath.Join(wt, "tests", "out")))
	must(t, os.Symlink(filepath.Join(wt, "src", "app.py"), filepath.Join(wt, "tests", "test_link.py")))

	p := func(rel string) string { return filepath.Join(wt, rel) }
	tests := []struct {
		phase string
		tool  string
		input map[string]any
		cwd   string // default wt
		allow bool
		why   string // substring of the denial
	}{
		{"investigate", "Read", map[string]any{"file_path": p("src/app.py")}, "", true, ""},
		{"investigate", "Read", map[string]any{"file_path": "src/app.py"}, "", true, ""},
		{"investigate", "Read", map[string]any{"file_path": "/etc/passwd"}, "", false, "read outside the worktree"},
		{"investigate", "Read", map[string]any{"file_path": p("../x")}, "", false, "read outside the worktree"},
		{"investigate", "Read", map[string]any{"file_path": p("leak.txt")}, "", false, "escapes"},
		{"investigate", "Read", map[string]any{"file_path": p("tests/out/secret.txt")}, "", false, "escapes"},
		{"investigate", "Read", map[string]any{}, "", false, "no file_path"},
		{"investigate", "Grep", map[string]any{"pattern": "x"}, "", true, ""},
		{"investigate", "Grep", map[string]any{"pattern": "x"}, outside, false, "search outside the worktree"},
		{"investigate", "Grep", map[string]any{"pattern": "x", "path": "/"}, "", false, "search outside the worktree"},
		{"investigate", "Glob", map[string]any{"pattern": "**/*.py", "path": wt}, "", true, ""},
		{"investigate", "Write", map[string]any{"file_path": p("tests/test_new.py"), "content": "x"}, "", true, ""},
		{"investigate", "Write", map[string]any{"file_path": p("src/app.py"), "content": "x"}, "", false, "may write only tests/test_*.py"},
		{"investigate", "Write", map[string]any{"file_path": p("tests/test_link.py"), "content": "x"}, "", false, "write to src/app.py"},
		{"investigate", "Write", map[string]any{"file_path": p("tests/out/test_x.py"), "content": "x"}, "", false, "escapes"},
		{"investigate", "Edit", map[string]any{"file_path": p("tests/test_app.py"), "old_string": "x", "new_string": "y"}, "", true, ""},
		{"investigate", "Bash", map[string]any{"command": "ls"}, "", false, "tool Bash is not available"},
		{"investigate", "WebFetch", map[string]any{"url": "https://example.com", "prompt": "x"}, "", false, "not available"},
		{"investigate", "mcp__github__create_issue", map[string]any{}, "", false, "not available"},
		{"investigate", "NotebookEdit", map[string]any{"notebook_path": p("tests/a.ipynb"), "new_source": "x"}, "", false, "not available"},
		{"investigate", "Agent", map[string]any{"prompt": "x"}, "", false, "not available"},
		{"fix", "Edit", map[string]any{"file_path": p("src/app.py"), "old_string": "x", "new_string": "y"}, "", true, ""},
		{"fix", "MultiEdit", map[string]any{"file_path": p("src/app.py"), "edits": []any{}}, "", true, ""},
		{"fix", "Write", map[string]any{"file_path": p("src/other.py"), "content": "x"}, "", false, "may write only src/app.py"},
		{"fix", "Write", map[string]any{"file_path": p("tests/test_app.py"), "content": "x"}, "", false, "may write only"},
		{"fix", "Write", map[string]any{"file_path": wt, "content": "x"}, "", false, "may write only"},
		{"fix", "Bash", map[string]any{"command": "pytest"}, "", false, "not available"},
		// Gemini CLI's names map onto the same classes.
		{"fix", "read_file", map[string]any{"absolute_path": p("src/app.py")}, "", true, ""},
		{"fix", "replace", map[string]any{"file_path": p("src/app.py"), "old_string": "x", "new_string": "y"}, "", true, ""},
		{"fix", "run_shell_command", map[string]any{"command": "ls"}, "", false, "not available"},
	}
	for _, tc := range tests {
		name := tc.phase + "/" + tc.tool + "/" + strings.NewReplacer("/", "_").Replace(firstString(tc.input))
		t.Run(name, func(t *testing.T) {
			allow := []string{"tests/test_*.py"}
			if tc.phase == PhaseFix {
				allow = []string{"src/app.py"}
			}
			ph, err := NewPhase(tc.phase, wt, allow)
			if err != nil {
				t.Fatal(err)
			}
			c := &Call{Tool: tc.tool, Cwd: wt, Input: mustJSON(t, tc.input)}
			if tc.cwd != "" {
				c.Cwd = tc.cwd
			}
			why := ph.check(c)
			if (why == "") != tc.allow {
				t.Fatalf("check = %q, want allowed=%v", why, tc.allow)
			}
			if !tc.allow && !strings.Contains(why, tc.why) {
				t.Errorf("reason %q lacks %q", why, tc.why)
			}
		})
	}
}

// TestPhaseHook runs the phase through the whole hook: the policy still
// applies on top of the phase, with no approvals.
func TestPhaseHook(t *testing.T) {
	e := newEnv(t)
	ph, err := NewPhase(PhaseFix, e.cwd, []string{"**"})
	if err != nil {
		t.Fatal(err)
	}
	h := e.hook()
	h.Phase = ph
	r := run(h, e.input("Write", map[string]any{"file_path": filepath.Join(e.cwd, "src", "a.py"), "content": "x"}))
	if r.code != 0 {
		t.Fatalf("allowed write: %+v", r)
	}
	r = run(h, e.input("Write", map[string]any{"file_path": filepath.Join(e.cwd, ".claude", "settings.json"), "content": "{}"}))
	if r.code != ExitBlock || !strings.Contains(r.stderr, "self-mod") || !strings.Contains(r.stderr, "no approvals in a phase") {
		t.Fatalf("self-mod write in a phase: %+v", r)
	}
	if strings.Contains(r.stderr, "fixrail approve") {
		t.Errorf("a phase denial offered an approval: %s", r.stderr)
	}
	r = run(h, e.input("Bash", bash("ls")))
	if r.code != ExitBlock || !strings.Contains(r.stderr, "in the fix phase") {
		t.Fatalf("bash in a phase: %+v", r)
	}
	if got := e.lastReceipt(); got.Rule != "phase-fix" || got.Verdict != "deny" {
		t.Errorf("receipt %+v", got)
	}
}

func TestNewPhaseErrors(t *testing.T) {
	wt := t.TempDir()
	for name, tc := range map[string]struct {
		phase, wt string
		allow     []string
	}{
		"unknown phase":  {"deploy", wt, nil},
		"no worktree":    {"fix", "", nil},
		"worktree gone":  {"fix", filepath.Join(wt, "nope"), nil},
		"absolute glob":  {"fix", wt, []string{"/etc/*"}},
		"dotdot glob":    {"fix", wt, []string{"src/../../x"}},
		"bad glob":       {"fix", wt, []string{"src/[a"}},
		"backslash glob": {"fix", wt, []string{`src\a`}},
	} {
		if _, err := NewPhase(tc.phase, tc.wt, tc.allow); err == nil {
			t.Errorf("%s: NewPhase succeeded", name)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func firstString(m map[string]any) string {
	for _, k := range []string{"file_path", "absolute_path", "path", "command", "url", "notebook_path"} {
		if s, ok := m[k].(string); ok {
			return filepath.Base(s)
		}
	}
	return "-"
}
