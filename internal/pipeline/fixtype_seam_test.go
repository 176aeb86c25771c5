package pipeline_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// typoAgent plays both phases of the typo type.
type typoAgent struct{ t *testing.T }

func (a typoAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	must := func(err error) {
		if err != nil {
			a.t.Error(err)
		}
	}
	switch inv.Phase {
	case runner.Investigate:
		if !strings.Contains(inv.Prompt, "one typo report") || !strings.Contains(inv.Prompt, "Write the misspelt word") {
			a.t.Errorf("the investigate prompt is not the typo type's:\n%s", inv.Prompt)
		}
		must(os.MkdirAll(filepath.Join(inv.Worktree, "evidence"), 0o755))
		must(os.WriteFile(filepath.Join(inv.Worktree, "evidence", "typo.txt"), []byte("teh\n"), 0o644))
		must(os.WriteFile(inv.PlanPath, []byte(`{"summary": "misspelt", "files": ["src/doc.txt"], "word": "teh"}`), 0o600))
	case runner.Fix:
		if len(inv.Allow) != 1 || inv.Allow[0] != "src/doc.txt" {
			a.t.Errorf("fix phase may write %v, want the planned file", inv.Allow)
		}
		must(os.WriteFile(filepath.Join(inv.Worktree, "src", "doc.txt"), []byte("the end\n"), 0o644))
		must(os.WriteFile(inv.ResultPath, []byte(`{"summary": "corrected", "files_changed": ["src/doc.txt"]}`), 0o600))
	}
	return runner.Result{}, nil
}

// TestThrowawayFixType: a fix type written against fixtype's API alone,
// registered with one line (typo_type_test.go), runs end to end through
// the pipeline: its brief, its scope, its plan, its oracle red then green,
// its commit note, its PR section and its label; no test section in the
// configuration, because only the bug type needs one.
func TestThrowawayFixType(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{
		"fixrail.yaml": `runner: {kind: command, command: ["true"]}
suite:  {command: ["true"]}
paths:  {fixable: ["src/**"]}
sandbox: off
`,
		"src/doc.txt": "teh end\n",
	})
	s, outbox := prepared(t, dir)
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "typo-1", Title: "teh", Body: "a typo", FixType: "typo"},
		Runner:  typoAgent{t},
		Forge:   &forge.Local{Dir: outbox},
		TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Terminal != pipeline.DraftPR || rep.FixType != "typo" {
		for _, g := range rep.Gates {
			t.Logf("%s %s %s %s", g.Phase, g.Name, g.Verdict, g.Detail)
		}
		t.Fatalf("terminal %s (%s: %s) for fix type %q, want DRAFT-PR for typo", rep.Terminal, rep.Reason, rep.Detail, rep.FixType)
	}
	var order []string
	for _, g := range rep.Gates {
		if g.Name == "typo-present" || g.Name == "typo-gone" {
			order = append(order, g.Phase+" "+g.Name+" "+g.Verdict)
		}
	}
	if strings.Join(order, ", ") != "P3 typo-present pass, P4 typo-gone pass" {
		t.Errorf("the type's oracle ran as %v", order)
	}
	body, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "### The typo\n\n` teh ` is gone as of "+rep.Commit[:12]) {
		t.Errorf("the body lacks the type's section:\n%s", body)
	}
	var pr forge.PR
	data, _ := os.ReadFile(filepath.Join(rep.PR, "pr.json"))
	if err := json.Unmarshal(data, &pr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(pr.Labels, ","), "fix:typo") {
		t.Errorf("labels %v lack fix:typo", pr.Labels)
	}
	msg, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%B", "fixrail/typo-1").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(msg), "Typo corrected: teh.") {
		t.Errorf("commit message lacks the type's note:\n%s", msg)
	}
	if plan, _ := json.Marshal(rep.Plan); !strings.Contains(string(plan), `"word":"teh"`) {
		t.Errorf("the report's plan is not the type's: %s", plan)
	}
}
