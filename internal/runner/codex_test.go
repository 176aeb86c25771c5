package runner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/runner"
)

// TestCheckCodex: Codex is refused before it runs, and the refusal names
// every missing capability, so an operator knows what would have to change.
func TestCheckCodex(t *testing.T) {
	err := runner.CheckCodex()
	var pe *runner.PreconditionError
	if !errors.As(err, &pe) {
		t.Fatalf("CheckCodex() = %v, want a *PreconditionError", err)
	}
	const want = "runner.kind codex refused: codex exec 0.171.0 lacks what fixrail's rails need (the portability precondition), and fixrail does not run an agent with weaker rails:" +
		" no turn cap (codex exec has no --max-turns or equivalent flag or config key; only the wall clock would bound a run);" +
		" no per-phase tool set (the shell tool and apply_patch cannot be removed from the model's tools; --sandbox read-only|workspace-write opens writes to the whole workspace or to nothing, so the investigate phase cannot be held to the test path, and workspace-write leaves every write tool in place)"
	if got := err.Error(); got != want {
		t.Errorf("refusal:\n got %s\nwant %s", got, want)
	}
	var names []string
	for _, c := range pe.Missing {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "turn cap,per-phase tool set" {
		t.Errorf("missing = %s", got)
	}
	// Every capability the table claims has its evidence written down.
	for _, c := range runner.CodexCapabilities {
		if c.Name == "" || c.Evidence == "" {
			t.Errorf("capability %+v lacks a name or evidence", c)
		}
	}
}
