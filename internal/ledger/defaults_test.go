package ledger

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/config"
)

// TestDefaultsAdmitADayOfTrying: with fixrail.yaml's default caps one actor
// gets a day of trying fixrail — at least ten runs, on every backend —
// whether each run is charged its caps (the command runner, no meter) or
// what a metered agent reports; and the cap that ends the day is the run
// count, the same for both, never a dollar or turn cap reached first.
func TestDefaultsAdmitADayOfTrying(t *testing.T) {
	cfg, err := config.Parse("fixrail.yaml", []byte(`runner: {kind: command, command: ["agent"]}
suite: {command: ["true"]}
paths: {fixable: ["src/**"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	const minRuns = 10 // issue 24: a team tries fixrail for a day
	for _, b := range backends {
		for _, run := range []struct {
			name string
			o    Outcome
		}{
			{"no meter: each run charged its caps", Outcome{Terminal: "NOT-REPRO", Reason: "no-plan"}},
			{"metered", Outcome{Terminal: "DRAFT-PR", Reason: "fixed", CostUSD: 1.5, CostKnown: true, Turns: 25, TurnsKnown: true}},
		} {
			t.Run(b.name+"/"+run.name, func(t *testing.T) {
				l := open(t, b.fresh(t), LimitsFrom(cfg))
				now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
				admitted := 0
				var refused error
				for i := range 1000 {
					req := RequestFor(cfg, "github.com/o/r", fmt.Sprint("finding-", i), "alice", now.Add(time.Duration(i)*time.Minute))
					res, err := l.Reserve(context.Background(), req)
					if err != nil {
						refused = err
						break
					}
					admitted++
					o := run.o
					o.Now = req.Now.Add(30 * time.Second)
					if _, err := res.Settle(context.Background(), o); err != nil {
						t.Fatal(err)
					}
				}
				if admitted < minRuns {
					t.Errorf("the defaults admit %d runs for one actor in a day, want at least %d", admitted, minRuns)
				}
				var ee *ExhaustedError
				if !errors.As(refused, &ee) {
					t.Fatalf("after %d runs: %v, want a cap exhausted", admitted, refused)
				}
				if ee.Scope != "actor:alice" || ee.Measure != "runs" || admitted != cfg.Budget.ActorDay.Runs {
					t.Errorf("after %d runs the day ended on %s %s, want actor:alice runs at budget.actor_day.runs %d", admitted, ee.Scope, ee.Measure, cfg.Budget.ActorDay.Runs)
				}
			})
		}
	}
}
