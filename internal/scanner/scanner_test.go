package scanner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sarif"
)

func TestArgv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
		paths   []string
		want    []string
		err     bool
	}{
		{"paths and sarif", []string{"semgrep", "--sarif", "--output={sarif}", "{paths}"}, []string{"a/b.py", "c.py"}, []string{"semgrep", "--sarif", "--output=/o/result.sarif", "a/b.py", "c.py"}, false},
		{"dirs once each", []string{"gosec", "-fmt", "sarif", "-out", "{sarif}", "{dirs}"}, []string{"db/q.go", "db/r.go", "main.go"}, []string{"gosec", "-fmt", "sarif", "-out", "/o/result.sarif", "./db", "."}, false},
		{"a path that reads as a flag", []string{"x", "{paths}"}, []string{"-rf"}, nil, true},
		{"an unclean path", []string{"x", "{paths}"}, []string{"a/../../etc"}, nil, true},
		// A placeholder inside a larger argument is not a list.
		{"no paths", []string{"x", "{sarif}"}, nil, []string{"x", "/o/result.sarif"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Argv(tc.command, tc.paths, "/o/result.sarif")
			if tc.err {
				if err == nil {
					t.Fatalf("Argv = %q, want an error", got)
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
}

func TestRulePacks(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules")
	if err := os.Mkdir(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	got := RulePacks([]string{"semgrep", "--config=" + rules, "--config", rules, "/no/such/path", "{sarif}", "relative"})
	if d := cmp.Diff([]string{rules}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func intp(i int) *int { return &i }

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReduce(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"db/q.go": "package db\n", "cfg.go": "package x\n", "svc/users.go": "package svc\n"})
	l := &sarif.Log{Version: sarif.Version, Runs: []sarif.Run{{
		Tool: sarif.Tool{Driver: sarif.Driver{Name: "gosec", Rules: []sarif.ReportingDescriptor{
			{ID: "G201", DefaultConfiguration: &sarif.Configuration{Level: "warning"}},
			{ID: "G101", Properties: &sarif.PropertyBag{SecuritySeverity: "9.1"}},
			{ID: "G701", Properties: &sarif.PropertyBag{Tags: []string{"security", "MEDIUM"}}},
		}}},
		Results: []sarif.Result{
			// Absolute path under the checkout, level from the result.
			{RuleID: "G201", Level: "error", Locations: loc("file://"+filepath.Join(dir, "db", "q.go"), 12, 0)},
			// Relative, level from the rule's default.
			{RuleID: "G201", RuleIndex: intp(0), Locations: loc("db/q.go", 20, 22)},
			// security-severity wins over level.
			{RuleID: "G101", Level: "note", Locations: loc("./cfg.go", 3, 0)},
			// gosec's: relative to the one directory it was given, and
			// its severity only in the rule's tags.
			{RuleID: "G701", RuleIndex: intp(2), Level: "error", Locations: loc("users.go", 1, 0)},
			// Passing results are not results.
			{RuleID: "G201", Kind: "pass", Locations: loc("db/q.go", 1, 0)},
		},
	}}}
	got, err := Reduce(l, dir, "svc")
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Rule: "G201", Path: "db/q.go", Line: 12, EndLine: 12, Severity: "high"},
		{Rule: "G201", Path: "db/q.go", Line: 20, EndLine: 22, Severity: "medium"},
		{Rule: "G101", Path: "cfg.go", Line: 3, EndLine: 3, Severity: "critical"},
		{Rule: "G701", Path: "svc/users.go", Line: 1, EndLine: 1, Severity: "medium"},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(Result{}), cmpopts.IgnoreFields(Result{}, "text")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A file the checkout does not hold is no place: never read as absent.
	for _, uri := range []string{"/etc/passwd", "file:///etc/passwd", "../x.go", "https://example.com/a.go", "missing.go"} {
		l.Runs[0].Results = []sarif.Result{{RuleID: "G201", Locations: loc(uri, 1, 0)}}
		if _, err := Reduce(l, dir); err == nil {
			t.Errorf("Reduce accepted a result at %q, outside the checkout", uri)
		}
	}
	// A run the log says did not complete is partial, whatever it lists:
	// ESLint's SARIF for a file it could not parse (a CommonJS file with
	// `with`, which Node runs and ESLint parses as a module) has no result
	// and this invocation; Semgrep's rule errors succeed with an error noted.
	no, yes := false, true
	for name, inv := range map[string]sarif.Invocation{
		"eslint parse error": {ExecutionSuccessful: &no, ToolConfigurationNotifications: []sarif.Notification{{Level: "error", Message: sarif.Message{Text: "Parsing error: 'with' in strict mode"}}}},
		"failed, no notes":   {ExecutionSuccessful: &no},
		"succeeded, error":   {ExecutionSuccessful: &yes, ToolExecutionNotifications: []sarif.Notification{{Level: "error", Message: sarif.Message{Text: "rule parse error"}}}},
	} {
		l.Runs[0].Results = nil
		l.Runs[0].Invocations = []sarif.Invocation{inv}
		if got, err := Reduce(l, dir); err == nil || !strings.Contains(err.Error(), "did not complete") {
			t.Errorf("%s: Reduce = %v, %v; want an error: a run that did not complete is not a clean one", name, got, err)
		} else if strings.Contains(err.Error(), "Parsing error") {
			t.Errorf("%s: the error quotes the tool's message: %v", name, err)
		}
	}
	l.Runs[0].Invocations = []sarif.Invocation{{ExecutionSuccessful: &yes, ToolExecutionNotifications: []sarif.Notification{{Level: "warning", Message: sarif.Message{Text: "slow"}}}}}
	if got, err := Reduce(l, dir); err != nil || len(got) != 0 {
		t.Errorf("a completed run with a warning: Reduce = %v, %v; want no results, no error", got, err)
	}
}

func loc(uri string, line, end int) []sarif.Location {
	return []sarif.Location{{PhysicalLocation: &sarif.PhysicalLocation{ArtifactLocation: &sarif.ArtifactLocation{URI: uri}, Region: &sarif.Region{StartLine: line, EndLine: end}}}}
}

func TestNew(t *testing.T) {
	base := []Result{{Rule: "G201", Path: "a.go", Line: 3, Severity: "high", text: "q"}, {Rule: "G104", Path: "a.go", Line: 9, Severity: "low", text: "w"}}
	for _, tc := range []struct {
		name  string
		cand  []Result
		floor string
		want  int
	}{
		{"unchanged, lines moved", []Result{{Rule: "G201", Path: "a.go", Line: 30, Severity: "high", text: "q"}, {Rule: "G104", Path: "a.go", Line: 1, Severity: "low", text: "w"}}, "high", 0},
		{"one more of the same rule", []Result{{Rule: "G201", Path: "a.go", Line: 3, Severity: "high", text: "q"}, {Rule: "G201", Path: "a.go", Line: 8, Severity: "high", text: "q2"}}, "high", 1},
		// A key swapped for another on the same line: same rule, same
		// file, another text.
		{"the same rule on a rewritten line", []Result{{Rule: "G201", Path: "a.go", Line: 3, Severity: "high", text: "other"}}, "high", 1},
		{"a new rule below the floor", []Result{{Rule: "G104", Path: "a.go", Severity: "low"}, {Rule: "G104", Path: "a.go", Severity: "low"}}, "high", 0},
		{"a new critical", []Result{{Rule: "G101", Path: "b.go", Severity: "critical"}}, "medium", 1},
		{"an ungraded severity counts as high", []Result{{Rule: "X", Path: "b.go", Severity: "bogus"}}, "high", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := New(base, tc.cand, tc.floor); len(got) != tc.want {
				t.Errorf("New = %v, want %d result(s)", got, tc.want)
			}
		})
	}
}

func TestAt(t *testing.T) {
	r := Result{Line: 10, EndLine: 12}
	for _, tc := range []struct {
		line, end int
		want      bool
	}{{10, 0, true}, {12, 12, true}, {9, 10, true}, {13, 20, false}, {0, 0, true}, {5, 9, false}} {
		if got := r.At(tc.line, tc.end); got != tc.want {
			t.Errorf("At(%d, %d) = %v, want %v", tc.line, tc.end, got, tc.want)
		}
	}
}

// TestRunReadsOnlyTheFreshLog: the log is read from the output
// directory Exec gave, and a missing or hostile log fails closed.
func TestRun(t *testing.T) {
	sc := &config.Scanner{Name: "fake", Command: []string{"fake", "-o", "{sarif}", "{paths}"}, Timeout: time.Minute}
	for _, tc := range []struct {
		name  string
		write func(out string) error
		err   string
		want  int
	}{
		{"a log", func(out string) error {
			return os.WriteFile(filepath.Join(out, "result.sarif"), []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"fake"}},"results":[{"ruleId":"R","locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.go"},"region":{"startLine":1}}}]}]}]}`), 0o644)
		}, "", 1},
		{"no log", func(string) error { return nil }, "wrote no SARIF log", 0},
		{"a link for a log", func(out string) error { return os.Symlink("/etc/passwd", filepath.Join(out, "result.sarif")) }, "wrote no SARIF log", 0},
		{"a FIFO for a log", func(out string) error {
			return mkfifo(filepath.Join(out, "result.sarif"))
		}, "wrote no SARIF log", 0},
		{"not SARIF 2.1.0", func(out string) error {
			return os.WriteFile(filepath.Join(out, "result.sarif"), []byte(`{"version":"1.0","runs":[]}`), 0o644)
		}, "wrote no SARIF log", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			exec := func(ctx context.Context, argv func(dir, out string) []string, ro []string, timeout time.Duration, read func(dir, out string) error) (sandbox.Result, error) {
				dir, out := t.TempDir(), t.TempDir()
				writeFiles(t, dir, map[string]string{"a.go": "package a\n"})
				ran = argv(dir, out)
				if err := tc.write(out); err != nil {
					t.Fatal(err)
				}
				return sandbox.Result{ExitCode: 1}, read(dir, out)
			}
			rep, err := Run(context.Background(), sc, []string{"a.go"}, exec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNoLog) {
					t.Fatalf("Run err = %v, want ErrNoLog containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != tc.want {
				t.Errorf("results = %v, want %d", rep.Results, tc.want)
			}
			if !slices.Contains(ran, "a.go") || !strings.HasSuffix(ran[2], "result.sarif") {
				t.Errorf("argv = %q", ran)
			}
			if d := cmp.Diff([]string{"fake", "-o", "{sarif}", "a.go"}, rep.Argv); d != "" {
				t.Errorf("recorded argv (-want +got):\n%s", d)
			}
		})
	}
}
