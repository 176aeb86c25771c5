package fixtype

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/config"
)

func write(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadPlan(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       *BugPlan
		err        error
		msg        string
	}{
		{
			name: "valid",
			json: `{"summary": "s", "files": ["./src/a.py"], "test": {"path": "tests/t.py", "name": "test_x", "symptom": " KeyError "}}`,
			want: &BugPlan{Summary: "s", Files: []string{"src/a.py"}, Test: TestSpec{Path: "tests/t.py", Name: "test_x", Symptom: "KeyError"}},
		},
		{name: "escape", json: `{"summary": "s", "files": ["../x"], "test": {"path": "tests/t.py", "symptom": "x"}}`, err: ErrUnsafePath},
		{name: "absolute test", json: `{"summary": "s", "files": ["a"], "test": {"path": "/etc/t.py", "symptom": "x"}}`, err: ErrUnsafePath},
		{name: "no files", json: `{"summary": "s", "files": [], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid, msg: "plans no source files"},
		{name: "flag as test name", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "name": "--rootdir=/", "symptom": "x"}}`, err: ErrInvalid, msg: "not a plain test id"},
		{name: "no symptom", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py"}}`, err: ErrInvalid, msg: "symptom"},
		{name: "multi-line symptom", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "a\nb"}}`, err: ErrInvalid},
		{name: "symptom that closes an issue", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "AssertionError: fixes #12"}}`, err: ErrInvalid, msg: "GitHub reads as closing an issue"},
		{name: "test also planned", json: `{"summary": "s", "files": ["t.py"], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid},
		{name: "duplicate file", json: `{"summary": "s", "files": ["a", "./a"], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid},
		{name: "unknown key", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "x"}, "run": "rm -rf /"}`, err: ErrInvalid},
		{name: "not json", json: `PLAN`, err: ErrInvalid},
		{name: "no test", json: `{"summary": "s", "files": ["a"]}`, err: ErrInvalid, msg: "no test (and no conclusion)"},
		// Not a bug: a conclusion and its reason instead of files and a test.
		{
			name: "works as designed",
			json: `{"summary": "s", "conclusion": "works-as-designed", "reason": "  documented in README\nsee line 3  "}`,
			want: &BugPlan{Summary: "s", Conclusion: "works-as-designed", Reason: "documented in README\nsee line 3"},
		},
		{
			name: "cannot reproduce",
			json: `{"summary": "s", "conclusion": "cannot-reproduce", "reason": "passes on main"}`,
			want: &BugPlan{Summary: "s", Conclusion: "cannot-reproduce", Reason: "passes on main"},
		},
		{name: "conclusion and test", json: `{"summary": "s", "conclusion": "works-as-designed", "reason": "r", "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid, msg: "also plans a test"},
		{name: "conclusion and empty test", json: `{"summary": "s", "conclusion": "works-as-designed", "reason": "r", "test": {}}`, err: ErrInvalid, msg: "also plans a test"},
		{name: "conclusion and files", json: `{"summary": "s", "conclusion": "cannot-reproduce", "reason": "r", "files": []}`, err: ErrInvalid, msg: "also plans files"},
		{name: "unknown conclusion", json: `{"summary": "s", "conclusion": "wontfix", "reason": "r"}`, err: ErrInvalid, msg: `"wontfix" is none of cannot-reproduce, works-as-designed`},
		{name: "conclusion without reason", json: `{"summary": "s", "conclusion": "works-as-designed", "reason": " \n "}`, err: ErrInvalid, msg: "with no reason"},
		{name: "reason without conclusion", json: `{"summary": "s", "reason": "r", "files": ["a"], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid, msg: `conclusion ""`},
		{name: "conclusion without summary", json: `{"conclusion": "works-as-designed", "reason": "r"}`, err: ErrInvalid, msg: "no summary"},
		{name: "reason too long", json: `{"summary": "s", "conclusion": "works-as-designed", "reason": "` + strings.Repeat("x", MaxConclusionReason+1) + `"}`, err: ErrInvalid, msg: "over 2000"},
		{name: "reason at the bound", json: `{"summary": "s", "conclusion": "works-as-designed", "reason": "` + strings.Repeat("x", MaxConclusionReason) + `"}`,
			want: &BugPlan{Summary: "s", Conclusion: "works-as-designed", Reason: strings.Repeat("x", MaxConclusionReason)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadBugPlan(write(t, tc.json))
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v, want %v containing %q", err, tc.err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if _, err := ReadBugPlan(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrInvalid) {
		t.Errorf("missing plan: %v", err)
	}
	if _, err := ReadBugPlan(write(t, `{"summary": "`+strings.Repeat("x", maxHandoffBytes)+`"}`)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("oversized plan: %v", err)
	}
}

func TestReadResult(t *testing.T) {
	r, err := ReadResult(write(t, `{"summary": "s", "files_changed": ["src/./a.py"]}`))
	if err != nil || r.FilesChanged[0] != "src/a.py" {
		t.Fatalf("ReadResult = %+v, %v", r, err)
	}
	if _, err := ReadResult(write(t, `{"files_changed": ["/etc/passwd"]}`)); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("absolute path: %v", err)
	}
}

func TestOracleArgv(t *testing.T) {
	for _, tc := range []struct {
		name       string
		path, test string
		command    []string
		want       []string
	}{
		{"pytest node id", "tests/t.py", "T.test_x", []string{"pytest", "{test_path}::{test_name}", "-q"}, []string{"pytest", "tests/t.py::T.test_x", "-q"}},
		{"go package", "calc/calc_test.go", "TestAbs", []string{"go", "test", "-run", "^{test_name}$", "./{test_dir}"}, []string{"go", "test", "-run", "^TestAbs$", "./calc"}},
		{"go root package", "abs_test.go", "TestAbs", []string{"go", "test", "./{test_dir}"}, []string{"go", "test", "./."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &BugPlan{Test: TestSpec{Path: tc.path, Name: tc.test}}
			if d := cmp.Diff(tc.want, OracleArgv(tc.command, p)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestBugPlanNeedsNameForNamedCommand: a test command that runs the test
// by name refuses a plan without one (go test -run '^$' runs nothing and
// would read as green on the base).
func TestBugPlanNeedsNameForNamedCommand(t *testing.T) {
	plan := write(t, `{"summary": "s", "files": ["a.go"], "test": {"path": "a_test.go", "symptom": "x"}}`)
	byName := &config.Config{Test: config.Test{Command: []string{"go", "test", "-run", "^{test_name}$", "./{test_dir}"}}}
	if _, err := Bug.ReadPlan(plan, byName); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "test.name is required") {
		t.Errorf("by name, no name: %v, want ErrInvalid naming test.name", err)
	}
	byPath := &config.Config{Test: config.Test{Command: []string{"pytest", "{test_path}"}}}
	if _, err := Bug.ReadPlan(plan, byPath); err != nil {
		t.Errorf("by path, no name: %v", err)
	}
}

func FuzzReadPlan(f *testing.F) {
	f.Add(`{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "x"}}`)
	f.Add(`{"summary": "s", "conclusion": "works-as-designed", "reason": "r"}`)
	f.Add(`{"summary": "s", "conclusion": "cannot-reproduce", "reason": "r", "test": {"path": "t.py", "symptom": "x"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ReadBugPlan(write(t, s))
		if err != nil {
			return
		}
		// A plan reproduces or concludes, never both.
		if p.Conclusion != "" {
			if _, ok := Conclusions[p.Conclusion]; !ok {
				t.Fatalf("accepted unknown conclusion %q", p.Conclusion)
			}
			if p.Reason == "" || len(p.Reason) > MaxConclusionReason || len(p.Files) > 0 || p.Test.Path != "" || p.Test.Symptom != "" {
				t.Fatalf("accepted a conclusion with a bad reason, or with files or a test: %+v", p)
			}
			return
		}
		if p.Reason != "" || p.Test.Symptom == "" || len(p.Files) == 0 {
			t.Fatalf("accepted a test plan that is not one: %+v", p)
		}
		for _, f := range append([]string{p.Test.Path}, p.Files...) {
			if strings.HasPrefix(f, "/") || f == ".." || strings.HasPrefix(f, "../") || strings.Contains(f, "/../") {
				t.Fatalf("accepted escaping path %q", f)
			}
		}
	})
}

// TestBugCheck: the test section is required, and held to being an oracle,
// only by the bug type that uses it.
func TestBugCheck(t *testing.T) {
	ok := config.Test{Command: []string{"pytest", "-q", "{test_path}"}, PathGlob: "tests/**", Timeout: time.Minute}
	for _, tc := range []struct {
		name string
		edit func(*config.Test)
		msg  string
	}{
		{"valid", func(*config.Test) {}, ""},
		{"by name only", func(c *config.Test) { c.Command = []string{"go", "test", "-run", "{test_name}"} }, ""},
		{"no command", func(c *config.Test) { c.Command = nil }, "test.command is required"},
		{"without placeholder", func(c *config.Test) { c.Command = []string{"pytest", "-q"} }, "must name {test_path} or {test_name}"},
		{"no path glob", func(c *config.Test) { c.PathGlob = "" }, "test.path_glob is required"},
		{"bad path glob", func(c *config.Test) { c.PathGlob = "tests/[" }, "not a valid glob"},
		{"no timeout", func(c *config.Test) { c.Timeout = 0 }, "test.timeout must be a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Test: ok}
			cfg.Test.Command = slices.Clone(ok.Command)
			tc.edit(&cfg.Test)
			err := Bug.Check(cfg)
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Check = %v, want %q", err, tc.msg)
			}
		})
	}
}

// TestHandoffRefusesLinksAndFIFOs: PLAN.json and result.json are written by
// the agent, so each is read only as a regular file at that very name. A
// link to a perfectly valid plan is refused (followed, it would let the
// agent make fixrail read any file it can), and a FIFO is refused without
// hanging the read.
func TestHandoffRefusesLinksAndFIFOs(t *testing.T) {
	valid := write(t, `{"summary": "s", "files": ["src/a.py"], "test": {"path": "tests/t.py", "symptom": "x"}}`)
	if _, err := ReadBugPlan(valid); err != nil {
		t.Fatalf("the link's target must itself be a valid plan: %v", err)
	}
	result := write(t, `{"summary": "s", "files_changed": ["src/a.py"]}`)
	dir := t.TempDir()
	planLink, resultLink := filepath.Join(dir, "PLAN.json"), filepath.Join(dir, "result.json")
	if err := os.Symlink(valid, planLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(result, resultLink); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadBugPlan(planLink); !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadBugPlan(link to a valid plan) = %+v, %v; want ErrInvalid", p, err)
	}
	if r, err := ReadResult(resultLink); !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadResult(link to a valid result) = %+v, %v; want ErrInvalid", r, err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadBugPlan(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadBugPlan(FIFO) = %v, want not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadBugPlan(FIFO) hung: the hand-off read must not block on a FIFO")
	}
	// The errors name the file, never the private directory it was in.
	_, err := ReadResult(resultLink)
	if err == nil || strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "result.json") {
		t.Errorf("error %v: want it to name result.json and not %s", err, dir)
	}
}

// TestBugConclusionPlan: a concluding PLAN.json reaches the pipeline as a
// Plan with its Conclusion and nothing to fix or run.
func TestBugConclusionPlan(t *testing.T) {
	p, err := Bug.ReadPlan(write(t, `{"summary": "s", "conclusion": "cannot-reproduce", "reason": "green on main"}`), &config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&Conclusion{Code: "cannot-reproduce", Reason: "green on main"}, p.Conclusion); d != "" {
		t.Errorf("conclusion (-want +got):\n%s", d)
	}
	if len(p.Files) > 0 || len(p.Evidence) > 0 || p.Report != nil {
		t.Errorf("a conclusion carries files %v, evidence %v, report %v", p.Files, p.Evidence, p.Report)
	}
	p, err = Bug.ReadPlan(write(t, `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "x"}}`), &config.Config{})
	if err != nil || p.Conclusion != nil {
		t.Fatalf("a test plan: %+v, %v", p, err)
	}
}

// TestBugBrief: the investigate brief offers the not-a-bug channel, keeps
// the failing test mandatory whenever the bug reproduces, and asks for a
// test of the invariant the report implies.
func TestBugBrief(t *testing.T) {
	cfg := &config.Config{Test: config.Test{PathGlob: "tests/**"}}
	brief := Bug.Investigate(Brief{PlanPath: "/run/PLAN.json", Config: cfg})
	for _, want := range []string{
		`"conclusion": "works-as-designed" or "cannot-reproduce"`,
		`at most 2000 bytes`,
		`with no "files" and no "test"`,
		"Whenever the bug does reproduce you must still write the failing test",
		"the invariant the report implies — the concurrent, tenant or boundary path",
	} {
		if !strings.Contains(brief, want) {
			t.Errorf("the brief lacks %q:\n%s", want, brief)
		}
	}
}
