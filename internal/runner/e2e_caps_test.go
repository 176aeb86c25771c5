package runner_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
)

// The run's caps stop the real CLI mid-way with a typed error, before the
// scripted work is done: the pipeline HALTs on either and commits nothing.
func TestClaudeStopsAtItsCaps(t *testing.T) {
	script := func(wt, run string) []fakemodel.Turn {
		return []fakemodel.Turn{
			turn(tool("Read", map[string]any{"file_path": filepath.Join(wt, "src/x.py")})),
			turn(tool("Read", map[string]any{"file_path": filepath.Join(wt, "src/x.py")})),
			turn(tool("Read", map[string]any{"file_path": filepath.Join(wt, "src/x.py")})),
			turn(tool("Read", map[string]any{"file_path": filepath.Join(wt, "src/x.py")})),
			turn(writeCall(filepath.Join(run, "PLAN.json"), `{"summary": "s"}`)),
			{Text: "Done."},
		}
	}
	for _, c := range []struct {
		name string
		mod  func(*runner.Invocation)
		want error
		kind runner.Kind
	}{
		{"turn cap", func(inv *runner.Invocation) { inv.MaxTurns = 2 }, runner.ErrTurnCap, runner.OutOfTurns},
		// Each fake turn costs about $0.0008; the cap is passed on the second.
		{"cost cap", func(inv *runner.Invocation) { inv.MaxCostUSD = 0.001 }, runner.ErrCostCap, runner.OverBudget},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run, wt := world(t, map[string]string{"src/x.py": "x = 1\n"})
			a := runAgentWith(t, run, wt, runner.Investigate, "Reproduce the bug.", c.mod, script(wt, run)...)
			e, ok := runner.AsError(a.err)
			if !errors.Is(a.err, c.want) || !ok || e.Kind != c.kind {
				t.Fatalf("Run: %v, want %v (%s); output tail: %s", a.err, c.want, c.kind, a.res.StderrTail)
			}
			if n := len(a.srv.Calls()); n >= 5 {
				t.Fatalf("%d tool calls issued: the cap did not stop the agent", n)
			}
			absent(t, filepath.Join(run, "PLAN.json"))
		})
	}
}
