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
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// What differs between two runs of the same finding: the run id, the
// commit's SHA (it carries the time) and the base's (the fixture's commit
// time), and the reservation's expiry.
var (
	runIDRe = regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]{8}`)
	shaRe   = regexp.MustCompile(`\b[0-9a-f]{12}\b`)
	timeRe  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

func normalise(s string) string {
	s = runIDRe.ReplaceAllString(s, "RUN-ID")
	s = timeRe.ReplaceAllString(s, "TIME")
	return shaRe.ReplaceAllString(s, "SHA12")
}

// TestPRBodyGolden pins what reviewers read on the forge: the body of a
// draft PR, as rendered, for a run with no model (every model gate
// unconfirmed, so labelled needs-review) and one whose model passes it.
func TestPRBodyGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) gates.Completer
	}{
		{"draft-pr-no-model", func(*testing.T) gates.Completer { return nil }},
		{"draft-pr-model-pass", func(t *testing.T) gates.Completer {
			srv := fakemodel.Start(t, fakemodel.Reply(`{"verdict": "pass", "reason": "the diff adds the missing file", "level": "low", "description": "adds the file the check looks for", "concerns": ["none beyond the check"]}`))
			return model.NewAnthropic("fake-key-for-loopback-tests", srv.URL, "fake-model")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
			s, outbox := prepared(t, dir)
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: &findings.Finding{ID: "golden", Title: "check is BROKEN", Body: "it prints BROKEN", Labels: []string{"bug"}},
				Runner:  scriptedAgent{},
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
