package fixtype

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		want       *Plan
		err        error
		msg        string
	}{
		{
			name: "valid",
			json: `{"summary": "s", "files": ["./src/a.py"], "test": {"path": "tests/t.py", "name": "test_x", "symptom": " KeyError "}}`,
			want: &Plan{Summary: "s", Files: []string{"src/a.py"}, Test: TestSpec{Path: "tests/t.py", Name: "test_x", Symptom: "KeyError"}},
		},
		{name: "escape", json: `{"summary": "s", "files": ["../x"], "test": {"path": "tests/t.py", "symptom": "x"}}`, err: ErrUnsafePath},
		{name: "absolute test", json: `{"summary": "s", "files": ["a"], "test": {"path": "/etc/t.py", "symptom": "x"}}`, err: ErrUnsafePath},
		{name: "no files", json: `{"summary": "s", "files": [], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid, msg: "plans no source files"},
		{name: "flag as test name", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "name": "--rootdir=/", "symptom": "x"}}`, err: ErrInvalid, msg: "not a plain test id"},
		{name: "no symptom", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py"}}`, err: ErrInvalid, msg: "symptom"},
		{name: "multi-line symptom", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "a\nb"}}`, err: ErrInvalid},
		{name: "test also planned", json: `{"summary": "s", "files": ["t.py"], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid},
		{name: "duplicate file", json: `{"summary": "s", "files": ["a", "./a"], "test": {"path": "t.py", "symptom": "x"}}`, err: ErrInvalid},
		{name: "unknown key", json: `{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "x"}, "run": "rm -rf /"}`, err: ErrInvalid},
		{name: "not json", json: `PLAN`, err: ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadPlan(write(t, tc.json))
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
	if _, err := ReadPlan(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrInvalid) {
		t.Errorf("missing plan: %v", err)
	}
	if _, err := ReadPlan(write(t, `{"summary": "`+strings.Repeat("x", maxHandoffBytes)+`"}`)); err == nil || !strings.Contains(err.Error(), "over") {
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
	p := &Plan{Test: TestSpec{Path: "tests/t.py", Name: "T.test_x"}}
	got := OracleArgv([]string{"pytest", "{test_path}::{test_name}", "-q"}, p)
	want := []string{"pytest", "tests/t.py::T.test_x", "-q"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func FuzzReadPlan(f *testing.F) {
	f.Add(`{"summary": "s", "files": ["a"], "test": {"path": "t.py", "symptom": "x"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ReadPlan(write(t, s))
		if err != nil {
			return
		}
		for _, f := range append([]string{p.Test.Path}, p.Files...) {
			if strings.HasPrefix(f, "/") || f == ".." || strings.HasPrefix(f, "../") || strings.Contains(f, "/../") {
				t.Fatalf("accepted escaping path %q", f)
			}
		}
	})
}
