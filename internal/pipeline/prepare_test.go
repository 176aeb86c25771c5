package pipeline_test

import (
	"errors"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// TestPrepareKeepsTheCause: a setup error is ErrSetup and still carries
// its cause with its type, so the CLI can say more than a string.
func TestPrepareKeepsTheCause(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": "runner: {kind: command, command: [\"true\"]}\nsuite: {command: [\"true\"]}\nbogus: 1\n"})
	_, err := pipeline.Prepare(t.Context(), dir, "")
	var cerr *config.Error
	if !errors.Is(err, pipeline.ErrSetup) || !errors.As(err, &cerr) || cerr.Line != 3 {
		t.Fatalf("Prepare = %v; want ErrSetup wrapping a *config.Error at line 3", err)
	}
}

// TestUnknownFixTypeIsASetupError: a finding naming no registered type
// does not start a run, and the error says so with its type.
func TestUnknownFixTypeIsASetupError(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "x", Title: "t", FixType: "no-such-type"},
		Runner:  scriptedAgent{}, Forge: forgetest.New(t), TempDir: t.TempDir(),
	})
	if rep != nil || !errors.Is(err, pipeline.ErrSetup) || !errors.Is(err, fixtype.ErrUnknown) {
		t.Fatalf("Run = %v, %v; want no report and ErrSetup wrapping fixtype.ErrUnknown", rep, err)
	}
}
