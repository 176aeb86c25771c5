package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
)

// scriptedAgent writes a failing check in phase 1 and the fix in phase 2.
type scriptedAgent struct{}

func (scriptedAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	switch inv.Phase {
	case runner.Investigate:
		os.WriteFile(filepath.Join(inv.Worktree, "tests", "check.sh"), []byte("test -f src/fixed || { echo BROKEN; exit 1; }\n"), 0o644)
		os.WriteFile(inv.PlanPath, []byte(`{"summary": "s", "files": ["src/fixed"], "test": {"path": "tests/check.sh", "name": "check", "symptom": "BROKEN"}}`), 0o600)
	case runner.Fix:
		os.WriteFile(filepath.Join(inv.Worktree, "src", "fixed"), []byte("ok\n"), 0o644)
		os.WriteFile(inv.ResultPath, []byte(`{"summary": "fixed", "files_changed": ["src/fixed"]}`), 0o600)
	}
	return runner.Result{}, nil
}

// TestLLMValidationInThePipeline: the model's verdict on the diff decides
// between a clean draft PR, an escalation, and a draft labelled needs-review.
func TestLLMValidationInThePipeline(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reply       string
		terminal    pipeline.Terminal
		reason      string
		needsReview bool
	}{
		{"pass ships unmarked", `{"verdict": "pass", "reason": "the diff fixes it"}`, pipeline.DraftPR, "fixed", false},
		{"fail escalates", `{"verdict": "fail", "reason": "unrelated change"}`, pipeline.Escalate, "llm-fail", false},
		{"uncertain is labelled", `{"verdict": "uncertain", "reason": "cannot tell"}`, pipeline.DraftPR, "fixed", true},
		{"garbage is labelled", `I think it is fine!`, pipeline.DraftPR, "fixed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakemodel.Start(t, fakemodel.Reply(tc.reply))
			dir := gittest.NewRepo(t, map[string]string{
				"fixrail.yaml": `runner: {kind: command, command: ["true"]}
test:   {command: ["sh", "{test_path}"], path_glob: "tests/**"}
suite:  {command: ["true"]}
paths:  {fixable: ["src/**"]}
sandbox: off
`,
				"src/README":  "source\n",
				"tests/.keep": "",
			})
			setup, err := pipeline.Prepare(t.Context(), dir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer setup.Close()
			rep, err := pipeline.Run(t.Context(), setup, pipeline.Params{
				Finding: &findings.Finding{ID: "llm", Title: "broken", Body: "it is BROKEN"},
				Runner:  scriptedAgent{},
				Forge:   localForge(t, setup),
				Model:   model.NewAnthropic("fake-key-for-loopback-tests", srv.URL, "fake-model"),
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != tc.terminal || rep.Reason != tc.reason {
				t.Fatalf("terminal = %s (%s: %s), want %s (%s)", rep.Terminal, rep.Reason, rep.Detail, tc.terminal, tc.reason)
			}
			if rep.Terminal != pipeline.DraftPR {
				return
			}
			pr, err := os.ReadFile(filepath.Join(rep.PR, "pr.json"))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := os.ReadFile(filepath.Join(rep.PR, "body.md"))
			labelled := strings.Contains(string(pr), `"needs-review"`)
			if labelled != tc.needsReview {
				t.Errorf("needs-review label = %v, want %v\n%s", labelled, tc.needsReview, pr)
			}
			if tc.needsReview && !strings.Contains(string(body), "### Needs review") {
				t.Errorf("the reason for needs-review is not in the body:\n%s", body)
			}
			if !slices.ContainsFunc(rep.Gates, func(g pipeline.GateResult) bool { return g.Name == "llm-validate" }) {
				t.Error("llm-validate is not in the run report")
			}
		})
	}
}
