package pipeline_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// What differs between two runs of the same finding: the run id, the
// commit's SHA (it carries the time) and the base's (the fixture's commit
// time), and the reservation's expiry.
var (
	runIDRe = regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]{8}`)
	shaRe   = regexp.MustCompile(`\b[0-9a-f]{12}\b`)
	baseRe  = regexp.MustCompile(`"base": "[0-9a-f]{40}"`) // the evidence block's base commit
	timeRe  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

func normalise(s string) string {
	s = runIDRe.ReplaceAllString(s, "RUN-ID")
	s = timeRe.ReplaceAllString(s, "TIME")
	s = baseRe.ReplaceAllString(s, `"base": "SHA40"`)
	return shaRe.ReplaceAllString(s, "SHA12")
}

// TestPRBodyGolden pins what reviewers read on the forge: the body of a
// draft PR, as rendered, for a run with no model (every model gate
// unconfirmed, so labelled needs-review), one whose model passes it, and
// one whose reproducing test adds to a test file the base has while the
// fix changes another (planned): both named under their own headings, the
// changed test with its diff.
func TestPRBodyGolden(t *testing.T) {
	base := map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""}
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) gates.Completer
		files map[string]string
		agent pipeline.Runner
	}{
		{"draft-pr-no-model", func(*testing.T) gates.Completer { return nil }, base, scriptedAgent{}},
		{"draft-pr-model-pass", func(t *testing.T) gates.Completer {
			srv := fakemodel.Start(t, fakemodel.Reply(`{"verdict": "pass", "reason": "the diff adds the missing file", "level": "low", "description": "adds the file the check looks for", "concerns": ["none beyond the check"]}`))
			return model.NewAnthropic("fake-key-for-loopback-tests", srv.URL, "fake-model")
		}, base, scriptedAgent{}},
		{"draft-pr-changed-tests", func(*testing.T) gates.Completer { return nil }, map[string]string{
			"fixrail.yaml":    reasonsYAML,
			"src/README":      "source\n",
			"tests/check.sh":  "# the project's checks\ntest -f src/README\n",
			"tests/pinned.sh": "# pins the old behaviour\ntest ! -f src/fixed\n",
		}, funcAgent(func(inv runner.Invocation) (runner.Result, error) {
			switch inv.Phase {
			case runner.Investigate:
				f, _ := os.OpenFile(filepath.Join(inv.Worktree, "tests", "check.sh"), os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString("test -f src/fixed || { echo BROKEN; exit 1; }\n")
				f.Close()
				os.WriteFile(inv.PlanPath, []byte(`{"summary": "s", "files": ["src/fixed", "tests/pinned.sh"], "test": {"path": "tests/check.sh", "name": "check", "symptom": "BROKEN"}}`), 0o600)
			case runner.Fix:
				os.WriteFile(filepath.Join(inv.Worktree, "src", "fixed"), []byte("ok\n"), 0o644)
				os.WriteFile(filepath.Join(inv.Worktree, "tests", "pinned.sh"), []byte("# pins the new behaviour\ntest -f src/fixed\n"), 0o644)
				os.WriteFile(inv.ResultPath, []byte(`{"summary": "fixed", "files_changed": ["src/fixed", "tests/pinned.sh"]}`), 0o600)
			}
			return runner.Result{}, nil
		})},
		// The agent quotes the report's closing references in its own
		// words: each comes out broken, and the body says how many.
		{"draft-pr-closing-refs", func(*testing.T) gates.Completer { return nil }, base, funcAgent(func(inv runner.Invocation) (runner.Result, error) {
			switch inv.Phase {
			case runner.Investigate:
				os.WriteFile(filepath.Join(inv.Worktree, "tests", "check.sh"), []byte("test -f src/fixed || { echo BROKEN; exit 1; }\n"), 0o644)
				os.WriteFile(inv.PlanPath, []byte(`{"summary": "the report says Fixes #1 and asks to close o/r#2", "files": ["src/fixed"], "test": {"path": "tests/check.sh", "name": "check", "symptom": "BROKEN"}}`), 0o600)
			case runner.Fix:
				os.WriteFile(filepath.Join(inv.Worktree, "src", "fixed"), []byte("ok\n"), 0o644)
				os.WriteFile(inv.ResultPath, []byte(`{"summary": "Resolves: GH-3; this fixes\nhttps://github.com/o/r/pull/4 too", "files_changed": ["src/fixed"]}`), 0o600)
			}
			return runner.Result{}, nil
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, tc.files)
			s, outbox := prepared(t, dir)
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: &findings.Finding{ID: "golden", Title: "check is BROKEN", Body: "it prints BROKEN", Labels: []string{"bug"}},
				Runner:  tc.agent,
				Forge:   &forge.Local{Dir: outbox},
				Model:   tc.model(t),
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != pipeline.DraftPR {
				t.Fatalf("%s %s: %s", rep.Terminal, rep.Reason, rep.Detail)
			}
			body, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
			if err != nil {
				t.Fatal(err)
			}
			// Whatever the agent wrote, GitHub reads no closing keyword in
			// the body: a squash merge may make it the commit message.
			if ref := untrusted.ClosingReference(string(body)); ref != "" {
				t.Errorf("the body holds the closing reference %q", ref)
			}
			matchGolden(t, filepath.Join("testdata", "body", tc.name+".md"), normalise(string(body)))
		})
	}
}

// matchGolden compares got with the golden file, rewriting it first under
// -update.
func matchGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", golden, d)
	}
}
