package pipeline_test

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// A dry run publishes nothing, and each of its three guards proves it
// alone: every test below turns the other two off, hands in the strict
// recording forge (an unexpected Publish fails the test) and ends with no
// fixrail branch in the repository. Disable the guard under test and its
// test goes red: the run reaches DRAFT-PR.

// dryRun runs one finding with the guards given; forgeOf wraps the fake
// (the third guard); the agent sees every invocation.
func dryRun(t *testing.T, d pipeline.DryRun, forgeOf func(*forgetest.Fake) pipeline.Forge, expect func(*forgetest.Fake), agent func(runner.Invocation) (runner.Result, error)) (*pipeline.Report, string) {
	t.Helper()
	s, f, dir := forgeSetup(t, expect)
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "gh-7", Title: "broken", Body: "it is BROKEN"},
		Runner:  funcAgent(agent),
		Forge:   forgeOf(f),
		TempDir: t.TempDir(),
		DryRun:  d,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep, dir
}

func asIs(f *forgetest.Fake) pipeline.Forge { return f }

func noBranch(t *testing.T, dir string) {
	t.Helper()
	if out := gittest.Git(t, dir, "branch", "--list", "fixrail/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("a dry run left a branch: %s", out)
	}
}

// Guard 2: the pipeline stops after P3 and asks for no fix.
func TestDryRunStopsAfterPlan(t *testing.T) {
	var phases []runner.Phase
	rep, dir := dryRun(t, pipeline.DryRun{StopAfterPlan: true}, asIs, pastP3, func(inv runner.Invocation) (runner.Result, error) {
		phases = append(phases, inv.Phase)
		return goodAgent(inv)
	})
	if rep.Terminal != pipeline.Halt || rep.Reason != "dry-run" {
		t.Fatalf("ended %s %s (%s), want HALT dry-run", rep.Terminal, rep.Reason, rep.Detail)
	}
	if len(phases) != 1 || phases[0] != runner.Investigate {
		t.Fatalf("agent phases %v, want the investigation only", phases)
	}
	// What it would do: the planned file and the evidence that ran red.
	if !strings.Contains(rep.Detail, "would change src/fixed") || !strings.Contains(rep.Detail, "tests/check.sh (red on the base)") {
		t.Fatalf("detail %q does not say what the run would do", rep.Detail)
	}
	if !hasGate(rep, "P3", "stage-a", "pass") || !rep.DryRun {
		t.Fatalf("Stage A did not run, or the report is not marked: %+v", rep.Gates)
	}
	noBranch(t, dir)
}

// Guard 1: the fix phase's agent gets read tools only. The agent here is
// a faithful adapter: given write tools it writes the fix; given none, it
// cannot. (The claude adapter's read-only tool set is runner's test; the
// command runner refuses a read-only invocation.)
func TestDryRunAgentReadOnly(t *testing.T) {
	var fix *runner.Invocation
	rep, dir := dryRun(t, pipeline.DryRun{ReadOnlyAgent: true}, asIs, pastP3, func(inv runner.Invocation) (runner.Result, error) {
		if inv.Phase == runner.Fix {
			fix = &inv
			if inv.ReadOnly {
				return runner.Result{}, nil // read, and could write nothing
			}
		}
		if inv.Phase == runner.Investigate && inv.ReadOnly {
			t.Error("the investigation was made read-only: it writes the reproducing test")
		}
		return goodAgent(inv)
	})
	if fix == nil || !fix.ReadOnly || len(fix.Allow) != 0 || len(fix.BashRules) != 0 {
		t.Fatalf("fix invocation %+v, want read-only with nothing allowed", fix)
	}
	if rep.Terminal == pipeline.DraftPR {
		t.Fatalf("a read-only fix phase ended DRAFT-PR (%s)", rep.Detail)
	}
	noBranch(t, dir)
}

// Guard 3: the forge refuses to publish whatever the pipeline asks. With
// both pipeline guards off the run gets as far as P5 and is refused there.
func TestDryRunForgeRefuses(t *testing.T) {
	wrap := func(f *forgetest.Fake) pipeline.Forge { return forge.DryRun{Reader: f} }
	rep, dir := dryRun(t, pipeline.DryRun{}, wrap, pastP3, goodAgent)
	if rep.Terminal == pipeline.DraftPR || rep.Reason != "forge-error" || !strings.Contains(rep.Detail, "dry run") {
		t.Fatalf("ended %s %s (%s), want the forge's refusal", rep.Terminal, rep.Reason, rep.Detail)
	}
	if rep.PR != "" {
		t.Fatalf("a PR was recorded: %s", rep.PR)
	}
	noBranch(t, dir)
}
