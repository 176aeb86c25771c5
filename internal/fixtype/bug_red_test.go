package fixtype

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/verdict"
)

// TestBugRed: the bug type's red oracle, where it lives. Green on the
// unpatched tree is never a reproduction (NOT-REPRO green-on-base); red
// without the declared symptom is a mismatch; a test outside test.path_glob
// is refused before anything runs; only red with the symptom passes. The
// command run is the configured one with the plan's two values, on the
// commit the gate was given.
func TestBugRed(t *testing.T) {
	plan := &Plan{Detail: &BugPlan{Files: []string{"src/a.py"}, Test: TestSpec{Path: "tests/test_a.py", Name: "test_a", Symptom: "KeyError: 'id'"}}}
	for _, tc := range []struct {
		name    string
		glob    string
		res     sandbox.Result
		execErr error
		pass    bool
		reason  string
		ran     bool
	}{
		{name: "red with the symptom", res: sandbox.Result{ExitCode: 1, Stderr: "Traceback\nKeyError: 'id'\n"}, pass: true, ran: true},
		{name: "green on the base", res: sandbox.Result{ExitCode: 0, Stdout: "OK\n"}, reason: verdict.ReasonGreenOnBase, ran: true},
		{name: "green with the symptom printed is still green", res: sandbox.Result{ExitCode: 0, Stdout: "KeyError: 'id'\nOK\n"}, reason: verdict.ReasonGreenOnBase, ran: true},
		{name: "red without the symptom", res: sandbox.Result{ExitCode: 1, Stderr: "ImportError: no module named a\n"}, reason: verdict.ReasonSymptomMismatch, ran: true},
		{name: "timed out is not the symptom", res: sandbox.Result{ExitCode: -1, TimedOut: true}, reason: verdict.ReasonSymptomMismatch, ran: true},
		{name: "test outside the glob", glob: "spec/**", reason: verdict.ReasonBadTestPath},
		{name: "the command could not start", execErr: errors.New("exec: no such file"), ran: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			glob := tc.glob
			if glob == "" {
				glob = "tests/**"
			}
			var got []string
			ran := false
			env := &Env{
				Config: &config.Config{Test: config.Test{Command: []string{"pytest", "{test_path}::{test_name}"}, PathGlob: glob, Timeout: time.Minute}},
				Base:   "main",
				Exec: func(_ context.Context, label, rev string, argv []string, _ time.Duration) (sandbox.Result, error) {
					ran = true
					got = append([]string{label, rev}, argv...)
					return tc.res, tc.execErr
				},
			}
			g := Bug.Red(env, plan)
			v, err := g.Run(t.Context(), &gates.Change{Commit: "c0ffee"})
			if ran != tc.ran {
				t.Fatalf("command ran = %v, want %v", ran, tc.ran)
			}
			if tc.ran && !slices.Equal(got, []string{"red", "c0ffee", "pytest", "tests/test_a.py::test_a"}) {
				t.Errorf("ran %q", got)
			}
			if tc.execErr != nil {
				if err == nil || !errors.Is(err, tc.execErr) {
					t.Fatalf("err = %v, want the exec error (the gate could not decide)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass || v.Reason != tc.reason {
				t.Fatalf("verdict %+v, want pass=%v reason=%q", v, tc.pass, tc.reason)
			}
			// A failed red oracle is NOT-REPRO, never an escalation.
			if !v.Pass && g.Terminal() != verdict.NotRepro {
				t.Errorf("gate fails %s, want NOT-REPRO", g.Terminal())
			}
			if tc.reason == verdict.ReasonGreenOnBase && !strings.Contains(v.Detail, "passes on the unpatched tree") {
				t.Errorf("detail %q", v.Detail)
			}
		})
	}
}
