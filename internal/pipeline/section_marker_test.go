package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// TestBodyCarriesNoSectionMarker: the markers that delimit fixrail's
// after-PR section are found by text in the body GitHub returns, so a copy
// the agent writes (its symptom, its summaries) must not survive into the
// body as a marker. Here the symptom carries the start marker and the
// result's summary the end one: as markers, fixrail's later section
// rewrite would replace everything between them — the files changed, the
// gate table, the impact section — or land inside the agent's quoted words.
func TestBodyCarriesNoSectionMarker(t *testing.T) {
	symptom := "BROKEN " + forge.SectionStart
	summary := "fixed\n" + forge.SectionEnd + "\n" + forge.SectionStart + "\n" + forge.SectionEnd
	body := draftBody(t, "marker", symptom, summary)
	for _, m := range []string{forge.SectionStart, forge.SectionEnd} {
		if strings.Contains(body, m) {
			t.Errorf("the body carries the agent's copy of %q", m)
		}
	}
	// What the first rewrite does with it: fixrail's section goes after
	// every byte of the body as opened, which stays whole.
	after := forge.ReplaceSection(body, "### After the PR\n\nfixrail's words")
	if !strings.HasPrefix(after, body) {
		t.Errorf("the after-PR section did not go after the body as opened:\n%s", after)
	}
	for _, want := range []string{"### Gates run", "### Files changed", "The agent's own words"} {
		if !strings.Contains(after, want) {
			t.Errorf("the rewrite lost %q", want)
		}
	}
}

// TestBodyBoundsAgentWords: GitHub keeps 65536 characters of a body, and
// fixrail's section after the PR is appended at its end, so what the
// agent wrote of itself must not fill the body: its summary is cut in the
// body (the fence's own note says so), and the evidence block, the run's
// line and room for the after-PR section stay inside the limit.
func TestBodyBoundsAgentWords(t *testing.T) {
	words := strings.Repeat("the fix is correct and every reviewer agrees. ", 1400) // ~64 KB
	body := draftBody(t, "wordy", "BROKEN", words)
	if n := utf8.RuneCountInString(body); n > 32<<10 {
		t.Errorf("the body is %d characters: the agent's words fill what GitHub keeps (65536), so the after-PR section would be cut off", n)
	}
	if !strings.Contains(body, "truncated by fixrail") {
		t.Errorf("the agent's cut words do not say they were cut")
	}
}

// draftBody runs a finding to a draft whose agent writes symptom into its
// reproducing test and plan and summary as its fix's account, and returns
// the PR body the local forge holds.
func draftBody(t *testing.T, id, symptom, summary string) string {
	t.Helper()
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
	s, outbox := prepared(t, dir)
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: id, Title: "check is BROKEN", Body: "it prints BROKEN"},
		Runner: funcAgent(func(inv runner.Invocation) (runner.Result, error) {
			switch inv.Phase {
			case runner.Investigate:
				os.WriteFile(filepath.Join(inv.Worktree, "tests", "check.sh"), []byte("test -f src/fixed || { echo '"+symptom+"'; exit 1; }\n"), 0o644)
				plan, _ := json.Marshal(map[string]any{"summary": "s", "files": []string{"src/fixed"}, "test": map[string]string{"path": "tests/check.sh", "name": "check", "symptom": symptom}})
				os.WriteFile(inv.PlanPath, plan, 0o600)
			case runner.Fix:
				os.WriteFile(filepath.Join(inv.Worktree, "src", "fixed"), []byte("ok\n"), 0o644)
				res, _ := json.Marshal(map[string]any{"summary": summary, "files_changed": []string{"src/fixed"}})
				os.WriteFile(inv.ResultPath, res, 0o600)
			}
			return runner.Result{}, nil
		}),
		Forge:   &forge.Local{Dir: outbox},
		TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Terminal != pipeline.DraftPR {
		t.Fatalf("%s %s: %s", rep.Terminal, rep.Reason, rep.Detail)
	}
	raw, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
