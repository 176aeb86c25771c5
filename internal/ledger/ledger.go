package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// A Ledger admits runs against budgets and records how they ended. Every
// method fails closed: a store it cannot read, lock or reach is an
// *UnreadableError, never an admission. Two implementations share one
// contract: SQLite for one machine ([OpenSQLite]) and Postgres for a fleet
// ([OpenPostgres]); [Open] picks one from ledger.url.
type Ledger interface {
	// Reserve checks every scope in one transaction — the finding is not
	// held by a live run, the per-repository and global concurrency caps,
	// and the global, repository and actor per-day cost, run and turn caps
	// with this run's worst case (its cost cap and turn cap) added — and
	// records the run as in flight with that worst case reserved. Before
	// checking, runs whose holder died or whose lease expired are closed and
	// charged their whole reservation.
	Reserve(ctx context.Context, req Request) (*Reservation, error)
	// Check is Reserve without the reservation: the same transaction, rolled
	// back. It answers "would a run be admitted now".
	Check(ctx context.Context, req Request) error
	// Report is the spend, reservations and caps per scope for req's day,
	// repository and actor, and every run in flight. It sweeps nothing.
	Report(ctx context.Context, req Request) (*Report, error)
	// Run is the ledger's record of one run: how it ended and what it was
	// charged. ErrNoRun when the ledger never admitted it.
	Run(ctx context.Context, runID string) (*RunState, error)
	// Rails is the repository's n latest rail records (the configuration
	// a run started with, one row per change), newest first.
	Rails(ctx context.Context, repo string, n int) ([]RailsRecord, error)
	Close() error

	settle(ctx context.Context, runID string, o Outcome) (Charge, error)
	renew(ctx context.Context, runID, holder string, now time.Time) (time.Time, error)
	holdPaths(ctx context.Context, runID, holder string, paths []string, now time.Time) error
	recordRails(ctx context.Context, runID, holder, sha256 string, rails []byte, now time.Time) (*RailsRecord, error)
	reserveRetry(ctx context.Context, runID, holder, kind string, max int, now time.Time) (int, error)
}

// Request names a run to admit. RunCostUSD and RunTurns are the run's own
// caps: they are what a run is charged while it is in flight, and what the
// runner must stop at.
type Request struct {
	Repo    string
	Finding string
	Actor   string
	// RunID names the run in the ledger; empty generates one.
	RunID      string
	RunCostUSD float64
	RunTurns   int
	Now        time.Time
}

// Caps bound one scope for one UTC day. Every cap must be positive: a
// zero is a missing configuration, not "unlimited".
type Caps struct {
	CostUSD float64
	Runs    int
	Turns   int
}

// Limits are the caps a ledger enforces besides the run's own.
type Limits struct {
	Global, Repo, Actor Caps
	// ConcurrentGlobal and ConcurrentRepo cap the runs in flight at once.
	ConcurrentGlobal, ConcurrentRepo int
	// Lease is how long a reservation holds without a Renew. A run whose
	// holder vanished without settling is charged once its lease ends
	// (sooner, on the same machine, when its process is provably gone).
	Lease time.Duration
}

func (l Limits) validate() error {
	var missing []string
	for _, c := range []struct {
		name string
		c    Caps
	}{{"day", l.Global}, {"repo_day", l.Repo}, {"actor_day", l.Actor}} {
		if !(c.c.CostUSD > 0) {
			missing = append(missing, "budget."+c.name+".cost_usd")
		}
		if c.c.Runs <= 0 {
			missing = append(missing, "budget."+c.name+".runs")
		}
		if c.c.Turns <= 0 {
			missing = append(missing, "budget."+c.name+".turns")
		}
	}
	if l.ConcurrentGlobal <= 0 {
		missing = append(missing, "budget.concurrent.global")
	}
	if l.ConcurrentRepo <= 0 {
		missing = append(missing, "budget.concurrent.repo")
	}
	if l.Lease <= 0 {
		missing = append(missing, "ledger.lease")
	}
	if len(missing) > 0 {
		return fmt.Errorf("budget configuration missing or not positive: %s", strings.Join(missing, ", "))
	}
	return nil
}

func (r Request) validate() error {
	switch {
	case r.Repo == "" || r.Finding == "" || r.Actor == "":
		return errors.New("a run needs a repository, a finding and an actor")
	case !(r.RunCostUSD > 0):
		return errors.New("budget.run_cost_usd missing or not positive")
	case r.RunTurns <= 0:
		return errors.New("runner.max_turns missing or not positive")
	case r.Now.IsZero():
		return errors.New("request has no time")
	}
	return nil
}

// Outcome is how a run ended. A runner that reports no cost (the command
// runner) leaves CostKnown false and the run is charged its whole cost
// cap; unknown turns are charged the whole turn cap. That is the run-count
// proxy: with no meter, each run costs its cap.
type Outcome struct {
	Terminal   string
	Reason     string
	CostUSD    float64
	CostKnown  bool
	Turns      int
	TurnsKnown bool
	Now        time.Time
}

// Charge is what a run was charged against every day scope it counts in.
type Charge struct {
	CostUSD float64
	Turns   int
	// CostKnown and TurnsKnown: the figure is the Outcome's; false, it is
	// the run's cap.
	CostKnown, TurnsKnown bool
}

// Reservation is a run admitted and in flight. Settle it on every exit path.
type Reservation struct {
	RunID      string
	Day        string
	CostUSD    float64
	Turns      int
	Expires    time.Time
	holder     string
	l          Ledger
	once       sync.Once
	charged    Charge
	settledErr error
}

// Settle records the run's end and replaces its reservation with what it
// actually cost, and returns what it charged. Only the first call counts;
// later ones return its result, so a deferred Settle after an explicit one
// is harmless. On an error the run stays held, and the ledger charges it
// its whole reservation when it closes it (the lease ends, or the holder
// is gone) — or already did (ErrLeaseLost).
func (r *Reservation) Settle(ctx context.Context, o Outcome) (Charge, error) {
	if r == nil {
		return Charge{}, nil
	}
	r.once.Do(func() {
		if o.Now.IsZero() {
			o.Now = time.Now()
		}
		// A signal may have cancelled ctx: the settlement must still land.
		ctx = context.WithoutCancel(ctx)
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		r.charged, r.settledErr = r.l.settle(ctx, r.RunID, o)
	})
	return r.charged, r.settledErr
}

// Renew extends the lease to now+Lease. ErrLeaseLost means the ledger
// already closed the run (its lease ran out): stop before any outbound
// write.
func (r *Reservation) Renew(ctx context.Context, now time.Time) error {
	exp, err := r.l.renew(ctx, r.RunID, r.holder, now)
	if err == nil {
		r.Expires = exp
	}
	return err
}

// Sentinels for errors.Is; the typed errors below carry the details.
var (
	ErrNoRun            = errors.New("no such run in the ledger")
	ErrBudgetExhausted  = errors.New("budget exhausted")
	ErrBudgetUnreadable = errors.New("budget unreadable")
	ErrInFlight         = errors.New("finding already in flight")
	ErrLeaseLost        = errors.New("reservation lease lost")
)

// ExhaustedError is a cap that admitting the run would pass.
type ExhaustedError struct {
	// Scope is global, repo:<repo>, actor:<actor>, concurrent:global or
	// concurrent:repo:<repo>.
	Scope string
	// Measure is cost_usd, runs, turns or in_flight.
	Measure string
	Cap     float64
	Used    float64
	Want    float64
	// ResetsAt is when the scope frees up: the next UTC midnight for a day
	// scope, the earliest lease end among the runs in flight for a
	// concurrency scope (sooner if one settles).
	ResetsAt time.Time
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("budget exhausted: %s %s would be %s of %s; resets %s", e.Scope, e.Measure,
		num(e.Used+e.Want), num(e.Cap), e.ResetsAt.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrBudgetExhausted) true.
func (e *ExhaustedError) Is(target error) bool { return target == ErrBudgetExhausted }

func num(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.6f", f), "0"), ".")
}

// UnreadableError is a ledger that could not be read, locked within its
// timeout, reached, or was not configured. It is never an admission.
type UnreadableError struct {
	Store string
	Err   error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("budget unreadable (%s): %v", e.Store, e.Err)
}

// Is makes errors.Is(err, ErrBudgetUnreadable) true.
func (e *UnreadableError) Is(target error) bool { return target == ErrBudgetUnreadable }
func (e *UnreadableError) Unwrap() error        { return e.Err }

// InFlightError is a finding another live run holds.
type InFlightError struct {
	Finding string
	RunID   string
	Since   time.Time
	Expires time.Time
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("finding %s is held by run %s since %s (lease ends %s)", e.Finding, e.RunID,
		e.Since.UTC().Format(time.RFC3339), e.Expires.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrInFlight) true.
func (e *InFlightError) Is(target error) bool { return target == ErrInFlight }

// Report is what `fixrail budget` shows.
type Report struct {
	Store    string        `json:"store"`
	Day      string        `json:"day"`
	ResetsAt time.Time     `json:"resets_at"`
	Scopes   []ScopeReport `json:"scopes"`
	InFlight []RunRecord   `json:"in_flight"`
}

// ScopeReport is one scope's caps and use. Spent counts settled and
// expired runs; Reserved counts the caps of runs in flight.
type ScopeReport struct {
	Scope            string  `json:"scope"`
	CapCostUSD       float64 `json:"cap_cost_usd,omitempty"`
	SpentCostUSD     float64 `json:"spent_cost_usd"`
	ReservedCostUSD  float64 `json:"reserved_cost_usd"`
	CapRuns          int     `json:"cap_runs,omitempty"`
	Runs             int     `json:"runs"`
	CapTurns         int     `json:"cap_turns,omitempty"`
	SpentTurns       int     `json:"spent_turns"`
	ReservedTurns    int     `json:"reserved_turns"`
	CapInFlight      int     `json:"cap_in_flight,omitempty"`
	InFlight         int     `json:"in_flight"`
	HeadroomCostUSD  float64 `json:"headroom_cost_usd"`
	ExhaustedMeasure string  `json:"exhausted,omitempty"`
}

// RunRecord is one run's row.
type RunRecord struct {
	RunID       string    `json:"run_id"`
	Repo        string    `json:"repo"`
	Finding     string    `json:"finding"`
	Actor       string    `json:"actor"`
	Started     time.Time `json:"started"`
	Expires     time.Time `json:"expires"`
	ReservedUSD float64   `json:"reserved_cost_usd"`
	Holder      string    `json:"holder"`
}

// RunState is the ledger's record of one run.
type RunState struct {
	RunID string `json:"run_id"`
	// State is held (in flight), settled (it ended and said what it
	// cost) or expired (closed by the ledger and charged its reservation).
	State    string `json:"state"`
	Terminal string `json:"terminal,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// CostUSD and Turns are what the run is charged: its reservation
	// while it is held.
	CostUSD float64 `json:"cost_usd"`
	Turns   int     `json:"turns"`
}

// Day is the UTC day a time is charged to.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// nextMidnight is when t's day scopes reset.
func nextMidnight(t time.Time) time.Time {
	d := t.UTC().Truncate(24 * time.Hour)
	return d.Add(24 * time.Hour)
}

// Open opens the ledger url names: empty or a path (or sqlite://<path>) is
// SQLite, relative paths resolved against stateDir (empty url: stateDir's
// state.db); postgres:// or postgresql:// is the shared ledger. There is
// no fallback: a Postgres URL that cannot be reached is unreadable.
func Open(ctx context.Context, url, stateDir string, lim Limits) (Ledger, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return OpenPostgres(ctx, url, lim)
	case strings.Contains(url, "://") && !strings.HasPrefix(url, "sqlite://"):
		return nil, &UnreadableError{Store: "config", Err: fmt.Errorf("ledger.url %q: want a path, sqlite://<path> or postgres://…", redactURL(url))}
	}
	path := strings.TrimPrefix(url, "sqlite://")
	if path == "" {
		path = DefaultFile
	}
	if !strings.HasPrefix(path, "/") {
		path = stateDir + "/" + path
	}
	return OpenSQLite(ctx, path, lim)
}

// DefaultFile is the SQLite ledger's name in the state directory.
const DefaultFile = "state.db"

// redactURL drops a password from a URL for messages.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return u
	}
	cred := rest[:at]
	if user, _, ok := strings.Cut(cred, ":"); ok {
		cred = user + ":xxxxx"
	}
	return scheme + "://" + cred + rest[at:]
}
