package pipeline_test

// The run's own caps, enforced during the run, through pipeline.Prepare and
// pipeline.Run with an in-process agent that reports what a metered agent
// (Claude) reports: turns and cost per invocation, and the adapter's
// OutOfTurns or OverBudget error when it stopped at the cap it was given.
// A cap hit mid-way must HALT with nothing committed — no branch, no
// outbox bundle — and the ledger must settle the run with what it spent.

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// capsConfig is the bench project (benchConfig) with a run capped at 10
// turns and $1.
const capsConfig = `runner: {kind: command, command: ["false"], max_turns: 10}
test:
  command: ["sh", "-c", "test -f src/fixed || { echo SYMPTOM; exit 1; }", "repro", "{test_path}"]
  path_glob: "tests/**"
suite: {command: ["true"]}
paths: {fixable: ["src/**"]}
budget: {run_cost_usd: 1}
`

// meteredAgent writes what the bench agent writes and reports, per phase,
// the turns and cost it spent and the error it stopped with. It records
// the caps each invocation was given.
type meteredAgent struct {
	spend map[runner.Phase]runner.Result
	stop  map[runner.Phase]runner.Kind
	got   map[runner.Phase]runner.Invocation
}

func (a *meteredAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	a.got[inv.Phase] = inv
	var err error
	switch inv.Phase {
	case runner.Investigate:
		err = agentInvestigate(inv.Worktree, inv.PlanPath)
	case runner.Fix:
		err = agentFix(inv.Worktree, inv.ResultPath)
	}
	if err != nil {
		return runner.Result{}, err
	}
	res := a.spend[inv.Phase]
	res.Metered = true // the CLI's own account, as Claude's result event is
	if k, ok := a.stop[inv.Phase]; ok {
		// What the adapter does at a cap: the agent stopped mid-way, its
		// files are left behind, and the result says what it spent.
		return res, &runner.Error{Kind: k, Detail: "stopped at the cap"}
	}
	return res, nil
}

func TestRunCapsMidRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spend  map[runner.Phase]runner.Result
		stop   map[runner.Phase]runner.Kind
		want   pipeline.Terminal
		reason string
		// The caps the fix invocation must get: what is left of the run's.
		fixTurns int
		fixCost  float64
		// What the ledger must settle the run at.
		turns int
		cost  float64
	}{{
		// The control: within its caps the same agent reaches a draft PR,
		// so "nothing committed" below is the caps' doing.
		name:  "within the caps",
		spend: map[runner.Phase]runner.Result{runner.Investigate: {Turns: 3, Cost: 0.25}, runner.Fix: {Turns: 2, Cost: 0.25}},
		want:  pipeline.DraftPR, fixTurns: 7, fixCost: 0.75, turns: 5, cost: 0.5,
	}, {
		name:  "turn cap hit in the fix",
		spend: map[runner.Phase]runner.Result{runner.Investigate: {Turns: 3, Cost: 0.25}, runner.Fix: {Turns: 7, Cost: 0.25}},
		stop:  map[runner.Phase]runner.Kind{runner.Fix: runner.OutOfTurns},
		want:  pipeline.Halt, reason: string(runner.OutOfTurns), fixTurns: 7, fixCost: 0.75, turns: 10, cost: 0.5,
	}, {
		name:  "turn cap hit in the investigation",
		spend: map[runner.Phase]runner.Result{runner.Investigate: {Turns: 10, Cost: 0.25}},
		stop:  map[runner.Phase]runner.Kind{runner.Investigate: runner.OutOfTurns},
		want:  pipeline.Halt, reason: string(runner.OutOfTurns), turns: 10, cost: 0.25,
	}, {
		// The investigation finished on its last turn: the fix would start
		// with none left, so it never starts.
		name:  "the investigation spends every turn",
		spend: map[runner.Phase]runner.Result{runner.Investigate: {Turns: 10, Cost: 0.25}},
		want:  pipeline.Halt, reason: pipeline.ReasonBudgetExhausted, turns: 10, cost: 0.25,
	}, {
		name:  "cost cap hit in the fix",
		spend: map[runner.Phase]runner.Result{runner.Investigate: {Turns: 2, Cost: 0.6}, runner.Fix: {Turns: 1, Cost: 0.45}},
		stop:  map[runner.Phase]runner.Kind{runner.Fix: runner.OverBudget},
		// The overshoot is charged as it was: the record is the truth.
		want: pipeline.Halt, reason: string(runner.OverBudget), fixTurns: 8, fixCost: 0.4, turns: 3, cost: 1.05,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newCapsFixture(t)
			agent := &meteredAgent{spend: tc.spend, stop: tc.stop, got: map[runner.Phase]runner.Invocation{}}
			const id = "caps1"
			rep := fx.run(t, id, agent)
			if rep.Terminal != tc.want || (tc.reason != "" && rep.Reason != tc.reason) {
				t.Fatalf("run ended %s %s (%s), want %s %s", rep.Terminal, rep.Reason, rep.Detail, tc.want, tc.reason)
			}
			if inv := agent.got[runner.Investigate]; inv.MaxTurns != 10 || inv.MaxCostUSD != 1 {
				t.Errorf("investigation got caps %d turns, $%g; want the run's 10, $1", inv.MaxTurns, inv.MaxCostUSD)
			}
			fix, fixRan := agent.got[runner.Fix]
			switch {
			case tc.fixTurns == 0 && fixRan:
				t.Errorf("the fix ran with %d turns, $%g left; it must not start", fix.MaxTurns, fix.MaxCostUSD)
			case tc.fixTurns != 0 && !fixRan:
				t.Errorf("the fix never ran")
			case fixRan && (fix.MaxTurns != tc.fixTurns || math.Abs(fix.MaxCostUSD-tc.fixCost) > 1e-9):
				t.Errorf("fix got caps %d turns, $%g; want what is left: %d, $%g", fix.MaxTurns, fix.MaxCostUSD, tc.fixTurns, tc.fixCost)
			}
			branch, err := gittest.Run(t, fx.repo, "rev-parse", "--verify", "-q", "refs/heads/fixrail/"+id)
			_, bundleErr := os.Lstat(filepath.Join(fx.repo, ".fixrail", "outbox", id))
			if tc.want == pipeline.DraftPR {
				if err != nil || bundleErr != nil || rep.Commit == "" {
					t.Errorf("the control run committed nothing: branch %v, bundle %v, commit %q", err, bundleErr, rep.Commit)
				}
			} else {
				if err == nil {
					t.Errorf("a capped run left branch fixrail/%s at %s", id, strings.TrimSpace(branch))
				}
				if !os.IsNotExist(bundleErr) {
					t.Errorf("a capped run left an outbox bundle: %v", bundleErr)
				}
				if rep.Commit != "" || rep.Branch != "" {
					t.Errorf("a capped run reports commit %q on branch %q", rep.Commit, rep.Branch)
				}
			}
			fx.wantSettled(t, tc.turns, tc.cost)
			// The report says what the ledger charged: the agent's account.
			if c := rep.Charged; c == nil || c.Basis != pipeline.ChargeReported || c.Turns != tc.turns || math.Abs(c.CostUSD-tc.cost) > 1e-9 {
				t.Errorf("report charged %+v, want %d turns, $%g, %s", c, tc.turns, tc.cost, pipeline.ChargeReported)
			}
		})
	}
}

type capsFixture struct{ repo, tmp string }

func newCapsFixture(t *testing.T) *capsFixture {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{"fixrail.yaml": capsConfig, "src/lib.txt": "library\n"})
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &capsFixture{repo: repo, tmp: tmp}
}

func (fx *capsFixture) run(t *testing.T, id string, agent pipeline.Runner) *pipeline.Report {
	t.Helper()
	ctx := context.Background()
	s, err := pipeline.Prepare(ctx, fx.repo, "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	// The local forge, the repository's outbox, as the CLI builds it.
	outbox := filepath.Join(fx.repo, ".fixrail", "outbox")
	if err := os.MkdirAll(outbox, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Run(ctx, s, pipeline.Params{
		Finding: &findings.Finding{ID: id, Title: "caps finding", Body: "the bench symptom"},
		Runner:  agent,
		Forge:   &forge.Local{Dir: outbox},
		TempDir: fx.tmp,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w, "ledger") {
			t.Errorf("report warning: %s", w)
		}
	}
	return rep
}

// wantSettled reads the repository's ledger: one run, settled (nothing in
// flight or reserved), charged the turns and cost the agent reported.
func (fx *capsFixture) wantSettled(t *testing.T, turns int, cost float64) {
	t.Helper()
	ctx := context.Background()
	s, err := pipeline.Prepare(ctx, fx.repo, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lg, err := ledger.OpenConfig(ctx, s.Config, filepath.Join(fx.repo, ".fixrail"))
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	rep, err := lg.Report(ctx, ledger.Request{RunCostUSD: 1, RunTurns: 10, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.InFlight) != 0 {
		t.Errorf("runs still in flight: %+v", rep.InFlight)
	}
	g := rep.Scopes[0]
	if g.Scope != "global" || g.Runs != 1 || g.ReservedTurns != 0 || g.ReservedCostUSD != 0 ||
		g.SpentTurns != turns || math.Abs(g.SpentCostUSD-cost) > 1e-6 {
		t.Errorf("ledger %s: %d run(s), spent %d turns $%g, reserved %d turns $%g; want 1 run settled at %d turns $%g",
			g.Scope, g.Runs, g.SpentTurns, g.SpentCostUSD, g.ReservedTurns, g.ReservedCostUSD, turns, cost)
	}
}
