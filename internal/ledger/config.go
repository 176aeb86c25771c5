package ledger

import (
	"context"
	"time"

	"github.com/fixrail/fixrail/internal/config"
)

// LimitsFrom is the ledger's view of fixrail.yaml's budget and ledger keys.
func LimitsFrom(cfg *config.Config) Limits {
	b := cfg.Budget
	caps := func(d config.DayCaps) Caps { return Caps{CostUSD: d.CostUSD, Runs: d.Runs, Turns: d.Turns} }
	return Limits{Global: caps(b.Day), Repo: caps(b.RepoDay), Actor: caps(b.ActorDay),
		ConcurrentGlobal: b.Concurrent.Global, ConcurrentRepo: b.Concurrent.Repo, Lease: cfg.LeaseOrDefault()}
}

// RequestFor is the Request for a run under cfg: its caps are
// budget.run_cost_usd and runner.max_turns.
func RequestFor(cfg *config.Config, repo, finding, actor string, now time.Time) Request {
	return Request{Repo: repo, Finding: finding, Actor: actor, RunCostUSD: cfg.Budget.RunCostUSD, RunTurns: cfg.Runner.MaxTurns, Now: now}
}

// OpenConfig opens the ledger cfg names, with stateDir (the repository's
// .fixrail) for the default SQLite file.
func OpenConfig(ctx context.Context, cfg *config.Config, stateDir string) (Ledger, error) {
	return Open(ctx, cfg.Ledger.URL, stateDir, LimitsFrom(cfg))
}
