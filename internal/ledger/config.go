package ledger

import (
	"context"
	"errors"
	"github.com/fixrail/fixrail/internal/verdict"
	"os"
	"strconv"
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

// The HALT reasons a ledger verdict maps to (SPEC §3). ErrInFlight maps to
// the pipeline's existing "in-flight".
const (
	ReasonExhausted  = verdict.ReasonBudgetExhausted
	ReasonUnreadable = verdict.ReasonBudgetUnreadable
)

// Reason is the HALT reason for a Reserve or Check error: exhausted,
// in-flight, or unreadable for everything else (fail closed).
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrBudgetExhausted):
		return ReasonExhausted
	case errors.Is(err, ErrInFlight):
		return "in-flight"
	}
	return ReasonUnreadable
}

// LocalActor is who starts a run on this machine when no forge names
// one: the operator's uid.
func LocalActor() string { return "local:" + strconv.Itoa(os.Getuid()) }

// RepoKey names a repository in the ledger: the forge's name for it
// ("github.com/o/r") when there is one, so that every machine of a fleet
// charges the same scope, else "local:" and the clone's absolute path.
func RepoKey(forgeRepo, top string) string {
	if forgeRepo != "" {
		return forgeRepo
	}
	return "local:" + top
}
