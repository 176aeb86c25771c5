package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// TestConfirmGolden pins what an operator judges in interactive mode
// before a draft PR: every gate with its verdict and detail, and the diff
// itself, not only its counts. A "no" is HALT declined.
func TestConfirmGolden(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
	s, outbox := prepared(t, dir)
	var asked []string
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "golden", Title: "check is BROKEN", Body: "it prints BROKEN", Labels: []string{"bug"}},
		Mode:    config.Interactive,
		Runner:  scriptedAgent{},
		Forge:   &forge.Local{Dir: outbox},
		Confirm: func(_ context.Context, q string) (bool, error) {
			asked = append(asked, q)
			return false, nil
		},
		TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Terminal != pipeline.Halt || rep.Reason != pipeline.ReasonDeclined {
		t.Fatalf("%s %s: %s, want HALT declined", rep.Terminal, rep.Reason, rep.Detail)
	}
	if len(asked) != 1 {
		t.Fatalf("asked %d time(s), want once", len(asked))
	}
	for _, want := range []string{"pass        P3  oracle-red", "pass        P4  suite-green", "unconfirmed P4  llm-validate", "  | +ok"} {
		if !strings.Contains(asked[0], want) {
			t.Errorf("the question lacks %q:\n%s", want, asked[0])
		}
	}
	matchGolden(t, filepath.Join("testdata", "confirm", "declined.txt"), normalise(asked[0]))
}
