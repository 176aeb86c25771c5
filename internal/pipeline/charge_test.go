package pipeline_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// wantLedgerAgrees reads the run back from the ledger, through a handle of
// its own, and requires what the report says it was charged: the same
// cost and turns, settled with the report's terminal and reason — or, for
// a run the ledger never admitted, no record and no charge in the report.
func wantLedgerAgrees(t *testing.T, s *pipeline.Setup, rep *pipeline.Report) {
	t.Helper()
	ctx := context.Background()
	lg, err := ledger.OpenConfig(ctx, s.Config, filepath.Join(s.Repo.Top(), pipeline.StateDirName))
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	st, err := lg.Run(ctx, rep.RunID)
	switch {
	case rep.Charged == nil:
		if !errors.Is(err, ledger.ErrNoRun) {
			t.Errorf("the report charges nothing, but the ledger holds %+v (%v)", st, err)
		}
		return
	case err != nil:
		t.Fatalf("the report charges %+v, but the ledger has no record: %v", rep.Charged, err)
	}
	c := rep.Charged
	if math.Abs(st.CostUSD-c.CostUSD) > 1e-6 || st.Turns != c.Turns {
		t.Errorf("report charged $%g, %d turns (%s); the ledger $%g, %d turns", c.CostUSD, c.Turns, c.Basis, st.CostUSD, st.Turns)
	}
	if c.Basis != pipeline.ChargeReservation && (st.State != "settled" || st.Terminal != string(rep.Terminal) || st.Reason != rep.Reason) {
		t.Errorf("ledger record %+v, want settled %s %s", st, rep.Terminal, rep.Reason)
	}
}

// neverStarts is a runner whose agent cannot start, as the adapter says.
func neverStarts(kind runner.Kind) func(runner.Invocation) (runner.Result, error) {
	return func(runner.Invocation) (runner.Result, error) {
		return runner.Result{NeverStarted: true}, &runner.Error{Kind: kind, Detail: "scripted"}
	}
}

// stoppedAsItStarts is the command runner given a run that a signal stopped
// just as the agent was about to start.
type stoppedAsItStarts struct {
	cancel context.CancelFunc
	cmd    *runner.Command
}

func (a stoppedAsItStarts) Run(ctx context.Context, inv runner.Invocation) (runner.Result, error) {
	a.cancel()
	return a.cmd.Run(ctx, inv)
}

// TestChargeWhatWasSpent: a run whose agent never started is charged no
// cost and no turns, and still counts as a run; an agent's own account is
// charged as it gave it, even when it is zero; an agent that ran with no
// meter is charged the run's caps. The report says what the ledger holds.
func TestChargeWhatWasSpent(t *testing.T) {
	yaml := strings.Replace(reasonsYAML, `command: ["true"]}`, `command: ["true"], max_turns: 12}`, 1) + "budget: {run_cost_usd: 2}\n"
	for _, tc := range []struct {
		name   string
		agent  func(marker string, cancel context.CancelFunc) pipeline.Runner
		reason string
		cost   float64
		turns  int
		basis  string
	}{{
		name: "agent binary missing",
		agent: func(string, context.CancelFunc) pipeline.Runner {
			return &runner.Command{Argv: []string{"/nonexistent/fixrail-agent"}}
		},
		reason: string(runner.Unavailable), basis: pipeline.ChargeNoAgent,
	}, {
		name: "adapter refuses",
		agent: func(string, context.CancelFunc) pipeline.Runner {
			return funcAgent(neverStarts(runner.Refused))
		},
		reason: string(runner.Refused), basis: pipeline.ChargeNoAgent,
	}, {
		name: "stopped as the agent starts",
		agent: func(marker string, cancel context.CancelFunc) pipeline.Runner {
			return stoppedAsItStarts{cancel: cancel, cmd: &runner.Command{Argv: []string{"touch", marker}}}
		},
		reason: pipeline.ReasonInterrupted, basis: pipeline.ChargeNoAgent,
	}, {
		// Claude without a credential: its result event reports no cost
		// and no model turn, and that account is charged.
		name: "not logged in",
		agent: func(string, context.CancelFunc) pipeline.Runner {
			return funcAgent(failWithResult(runner.Investigate, runner.Result{Metered: true, StdoutTail: `{"type":"result","result":"Not logged in · Please run /login"}`},
				&runner.Error{Kind: runner.APIError, Detail: "model API error: Not logged in"}))
		},
		reason: string(runner.APIError), basis: pipeline.ChargeReported,
	}, {
		name: "metered agent fails",
		agent: func(string, context.CancelFunc) pipeline.Runner {
			return funcAgent(failWithResult(runner.Investigate, runner.Result{Metered: true, Cost: 0.375, Turns: 5, StderrTail: "quota"},
				&runner.Error{Kind: runner.Failed, Detail: "agent exited 7"}))
		},
		reason: string(runner.Failed), cost: 0.375, turns: 5, basis: pipeline.ChargeReported,
	}, {
		name: "command agent exits 7",
		agent: func(string, context.CancelFunc) pipeline.Runner {
			return &runner.Command{Argv: []string{"sh", "-c", "echo 'model quota exhausted for org' >&2; exit 7"}}
		},
		reason: string(runner.Failed), cost: 2, turns: 12, basis: pipeline.ChargeRunCaps,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": yaml, "src/README": "source\n", "tests/.keep": ""})
			s, err := pipeline.Prepare(t.Context(), dir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			f := forgetest.New(t)
			f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted)
			marker := filepath.Join(t.TempDir(), "agent-ran")
			rep, err := pipeline.Run(ctx, s, pipeline.Params{
				Finding: &findings.Finding{ID: "charge", Title: "broken", Body: "it is BROKEN"},
				Runner:  tc.agent(marker, cancel),
				Forge:   f,
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != pipeline.Halt || rep.Reason != tc.reason {
				t.Fatalf("ended %s %s (%s), want HALT %s", rep.Terminal, rep.Reason, rep.Detail, tc.reason)
			}
			want := pipeline.Charge{CostUSD: tc.cost, Turns: tc.turns, Basis: tc.basis}
			if rep.Charged == nil || *rep.Charged != want {
				t.Errorf("report charged %+v, want %+v", rep.Charged, want)
			}
			wantLedgerAgrees(t, s, rep)
			// The run counts against the run caps whatever it was charged.
			lg, err := ledger.OpenConfig(t.Context(), s.Config, filepath.Join(dir, pipeline.StateDirName))
			if err != nil {
				t.Fatal(err)
			}
			defer lg.Close()
			br, err := lg.Report(t.Context(), ledger.RequestFor(s.Config, "", "", "", rep.Started))
			if err != nil {
				t.Fatal(err)
			}
			if g := br.Scopes[0]; g.Scope != "global" || g.Runs != 1 || math.Abs(g.SpentCostUSD-tc.cost) > 1e-6 || g.SpentTurns != tc.turns {
				t.Errorf("global scope %+v, want 1 run at $%g, %d turns", g, tc.cost, tc.turns)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the agent ran")
			}
		})
	}
}

// TestLeaseLostChargesTheReservation: when the ledger closed the run while
// its agent ran (its lease ran out, and another admission swept it), the
// settlement cannot land, and the report says what the ledger charged: the
// whole reservation.
func TestLeaseLostChargesTheReservation(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep := runOnce(t, s, "lost", func(inv runner.Invocation) (runner.Result, error) {
		lg, err := ledger.OpenConfig(context.Background(), s.Config, filepath.Join(dir, pipeline.StateDirName))
		if err != nil {
			t.Fatal(err)
		}
		defer lg.Close()
		later := ledger.RequestFor(s.Config, "elsewhere", "other", "someone", time.Now().Add(2*s.Config.LeaseOrDefault()))
		if _, err := lg.Reserve(context.Background(), later); err != nil {
			t.Fatal(err)
		}
		return runner.Result{Metered: true, Cost: 0.25, Turns: 1}, &runner.Error{Kind: runner.Failed, Detail: "scripted"}
	}, func(f *forgetest.Fake) {
		f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted)
	})
	want := pipeline.Charge{CostUSD: s.Config.Budget.RunCostUSD, Turns: s.Config.Runner.MaxTurns, Basis: pipeline.ChargeReservation}
	if rep.Charged == nil || *rep.Charged != want {
		t.Errorf("report charged %+v, want %+v", rep.Charged, want)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "ledger settle") {
		t.Errorf("no settle warning in %q", rep.Warnings)
	}
	wantLedgerAgrees(t, s, rep)
}
