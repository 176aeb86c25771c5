package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/verdict"
)

// TestHarnessPlannedType: the optional harness parts, on the throwaway typo
// type rebuilt to plan itself (no investigate agent) — its plan reaches the
// red oracle and the agent's fix; a StopError from Plan ends the run in
// its terminal; a Plan that writes in the checkout is caught by the same
// read-only gate an agent's investigation is; and an Edit that hands over
// (ErrAgentEdit) falls back to the fix invocation.
func TestHarnessPlannedType(t *testing.T) {
	planned := func(write string, err error) *fixtype.Type {
		typ := *typoType
		typ.Name = "typo-planned"
		typ.Investigate, typ.ReadPlan = nil, nil
		typ.Plan = func(_ context.Context, _ *fixtype.Env, dir string, f *findings.Finding) (*fixtype.Plan, error) {
			if err != nil {
				return nil, err
			}
			if write != "" {
				os.WriteFile(filepath.Join(dir, write), []byte("x\n"), 0o644)
			}
			// The evidence the typo oracle greps for is committed on the
			// base here, so the plan declares none.
			return &fixtype.Plan{Summary: "misspelt", Files: []string{"src/doc.txt"}, Values: "word: teh", Report: map[string]string{"word": "teh"}, Detail: &typoPlan{Word: "teh"}}, nil
		}
		typ.Edit = func(context.Context, *fixtype.Env, *fixtype.Plan, string) (*fixtype.Result, error) {
			return nil, fmt.Errorf("%w: the word needs judgement", fixtype.ErrAgentEdit)
		}
		return &typ
	}
	stop := &fixtype.StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonGreenOnBase, Err: errors.New("nothing misspelt")}
	for _, tc := range []struct {
		name     string
		typ      *fixtype.Type
		terminal pipeline.Terminal
		reason   string
		agent    int
	}{
		{"planned", planned("", nil), pipeline.DraftPR, "fixed", 1},
		{"stopped", planned("", stop), pipeline.NotRepro, "green-on-base", 0},
		{"wrote", planned("src/stray.txt", nil), pipeline.Escalate, "write-before-repro", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fixtype.Register(tc.typ)
			t.Cleanup(func() { fixtype.Unregister(tc.typ.Name) })
			dir := gittest.NewRepo(t, map[string]string{
				"fixrail.yaml":      "runner: {kind: command, command: [\"true\"]}\nsuite:  {command: [\"true\"]}\npaths:  {fixable: [\"src/**\"]}\nsandbox: off\n",
				"src/doc.txt":       "teh end\n",
				"evidence/typo.txt": "teh\n",
			})
			s, outbox := prepared(t, dir)
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: &findings.Finding{ID: "tp-" + tc.name, Title: "teh", Body: "a typo", FixType: tc.typ.Name},
				Runner: funcAgent(func(inv runner.Invocation) (runner.Result, error) {
					if inv.Phase != runner.Fix {
						t.Errorf("an agent was asked to %s for a type that plans itself", inv.Phase)
					}
					return typoAgent{t}.Run(context.Background(), inv)
				}),
				Forge:   &forge.Local{Dir: outbox},
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != tc.terminal || rep.Reason != tc.reason || rep.Agent.Invocations != tc.agent {
				for _, g := range rep.Gates {
					t.Logf("%s %s %s %s", g.Phase, g.Name, g.Verdict, g.Detail)
				}
				t.Fatalf("ended %s %s (%s) after %d agent call(s), want %s %s after %d", rep.Terminal, rep.Reason, rep.Detail, rep.Agent.Invocations, tc.terminal, tc.reason, tc.agent)
			}
		})
	}
}
