package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// store is the ledger logic both databases share. Every write runs in a
// transaction that excludes every other writer from its first statement —
// SQLite's BEGIN IMMEDIATE, a Postgres transaction-level advisory lock — so
// a check and the reservation it admits are one step and concurrent
// reservations cannot both pass a cap. Writes are a few per run, so
// serialising them costs nothing that matters.
type store struct {
	db   *sql.DB
	name string // for errors: "sqlite /path" or "postgres host/db"
	lim  Limits
	// begin starts a writer-exclusive transaction.
	begin func(ctx context.Context) (*sql.Tx, error)
	// dollar rewrites ? placeholders as $1, $2… (Postgres).
	dollar bool
	// alive reports whether a holder is provably alive; false only when
	// it is provably dead (same machine, process gone).
	alive func(holder string) bool
	self  string
}

// micro converts dollars to integer micro-dollars, rounding up: a
// reservation never comes out smaller than asked.
func micro(usd float64) int64 { return int64(math.Ceil(usd * 1e6)) }
func usd(m int64) float64     { return float64(m) / 1e6 }

func (s *store) q(query string) string {
	if !s.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *store) unreadable(err error) error {
	if err == nil {
		return nil
	}
	var ue *UnreadableError
	if errors.As(err, &ue) {
		return err
	}
	return &UnreadableError{Store: s.name, Err: err}
}

// tx runs fn in a writer-exclusive transaction and commits unless fn
// fails or dry is set. Errors from fn that are budget verdicts pass
// through; everything else is unreadable.
func (s *store) tx(ctx context.Context, dry bool, fn func(*sql.Tx) error) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return s.unreadable(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		var ee *ExhaustedError
		var fe *InFlightError
		var pe *PathsHeldError
		if errors.As(err, &ee) || errors.As(err, &fe) || errors.As(err, &pe) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrNoRun) {
			return err
		}
		return s.unreadable(err)
	}
	if dry {
		return s.unreadable(tx.Rollback())
	}
	return s.unreadable(tx.Commit())
}

func (s *store) Reserve(ctx context.Context, req Request) (*Reservation, error) {
	res, err := s.reserve(ctx, req, false)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *store) Check(ctx context.Context, req Request) error {
	if req.RunID == "" {
		req.RunID = "check"
	}
	_, err := s.reserve(ctx, req, true)
	return err
}

func (s *store) reserve(ctx context.Context, req Request, dry bool) (*Reservation, error) {
	if err := s.lim.validate(); err != nil {
		return nil, &UnreadableError{Store: "config", Err: err}
	}
	if err := req.validate(); err != nil {
		return nil, &UnreadableError{Store: "config", Err: err}
	}
	if req.RunID == "" {
		req.RunID = newRunID(req.Now)
	}
	now := req.Now.UnixMilli()
	day := Day(req.Now)
	cost, turns := micro(req.RunCostUSD), int64(req.RunTurns)
	exp := req.Now.Add(s.lim.Lease)
	err := s.tx(ctx, dry, func(tx *sql.Tx) error {
		if err := s.sweep(ctx, tx, now); err != nil {
			return err
		}
		// A finding id is a repository's (gh-12 is issue 12 of one
		// repository): the same id in two repositories is two findings.
		var held RunRecord
		var since, until int64
		err := tx.QueryRowContext(ctx, s.q(`SELECT run_id, started_ms, expires_ms FROM fixrail_run WHERE state = 'held' AND repo = ? AND finding = ?`), req.Repo, req.Finding).
			Scan(&held.RunID, &since, &until)
		switch {
		case err == nil:
			return &InFlightError{Finding: req.Finding, RunID: held.RunID, Since: time.UnixMilli(since), Expires: time.UnixMilli(until)}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		for _, c := range []struct {
			scope, where string
			args         []any
			cap          int
		}{
			{"concurrent:global", "", nil, s.lim.ConcurrentGlobal},
			{"concurrent:repo:" + req.Repo, " AND repo = ?", []any{req.Repo}, s.lim.ConcurrentRepo},
		} {
			var n int64
			var first sql.NullInt64
			if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*), min(expires_ms) FROM fixrail_run WHERE state = 'held'`+c.where), c.args...).Scan(&n, &first); err != nil {
				return err
			}
			if n+1 > int64(c.cap) {
				return &ExhaustedError{Scope: c.scope, Measure: "in_flight", Cap: float64(c.cap), Used: float64(n), Want: 1, ResetsAt: time.UnixMilli(first.Int64)}
			}
		}
		for _, sc := range s.scopes(req) {
			u, err := s.use(ctx, tx, day, sc)
			if err != nil {
				return err
			}
			reset := nextMidnight(req.Now)
			// The run count first: when caps fill together (a runner
			// with no meter is charged its caps), it is the one to name.
			switch {
			case u.runs+1 > int64(sc.caps.Runs):
				return &ExhaustedError{Scope: sc.name, Measure: "runs", Cap: float64(sc.caps.Runs), Used: float64(u.runs), Want: 1, ResetsAt: reset}
			case u.cost+cost > micro(sc.caps.CostUSD):
				return &ExhaustedError{Scope: sc.name, Measure: "cost_usd", Cap: sc.caps.CostUSD, Used: usd(u.cost), Want: usd(cost), ResetsAt: reset}
			case u.turns+turns > int64(sc.caps.Turns):
				return &ExhaustedError{Scope: sc.name, Measure: "turns", Cap: float64(sc.caps.Turns), Used: float64(u.turns), Want: float64(turns), ResetsAt: reset}
			}
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO fixrail_run (run_id, repo, finding, actor, day, started_ms, expires_ms, holder, state, reserved_micro, turn_cap)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'held', ?, ?)`),
			req.RunID, req.Repo, req.Finding, req.Actor, day, now, exp.UnixMilli(), s.self, cost, turns)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Reservation{RunID: req.RunID, Day: day, CostUSD: usd(cost), Turns: req.RunTurns, Expires: time.UnixMilli(exp.UnixMilli()), holder: s.self, l: s}, nil
}

type scope struct {
	name  string
	where string
	args  []any
	caps  Caps
}

func (s *store) scopes(req Request) []scope {
	return []scope{
		{"global", "", nil, s.lim.Global},
		{"repo:" + req.Repo, " AND repo = ?", []any{req.Repo}, s.lim.Repo},
		{"actor:" + req.Actor, " AND actor = ?", []any{req.Actor}, s.lim.Actor},
	}
}

type usage struct {
	cost, reservedCost, turns, reservedTurns, runs, held int64
}

// use sums a scope's day: a run in flight counts its caps, a finished or
// expired one what it was charged. Every run counts one against the run
// caps whatever its terminal, so escalations spend the actor's budget too.
func (s *store) use(ctx context.Context, tx *sql.Tx, day string, sc scope) (usage, error) {
	var u usage
	var spent, spentTurns int64
	err := tx.QueryRowContext(ctx, s.q(`SELECT
		CAST(coalesce(sum(CASE WHEN state = 'held' THEN 0 ELSE cost_micro END), 0) AS BIGINT),
		CAST(coalesce(sum(CASE WHEN state = 'held' THEN reserved_micro ELSE 0 END), 0) AS BIGINT),
		CAST(coalesce(sum(CASE WHEN state = 'held' THEN 0 ELSE turns END), 0) AS BIGINT),
		CAST(coalesce(sum(CASE WHEN state = 'held' THEN turn_cap ELSE 0 END), 0) AS BIGINT),
		count(*),
		CAST(coalesce(sum(CASE WHEN state = 'held' THEN 1 ELSE 0 END), 0) AS BIGINT)
		FROM fixrail_run WHERE day = ?`+sc.where), append([]any{day}, sc.args...)...).
		Scan(&spent, &u.reservedCost, &spentTurns, &u.reservedTurns, &u.runs, &u.held)
	u.cost = spent + u.reservedCost
	u.turns = spentTurns + u.reservedTurns
	return u, err
}

// sweep closes runs that can no longer settle: the lease ran out, or the
// holder's process is provably gone. Each is charged its whole
// reservation, the conservative guess for a run that left no account.
func (s *store) sweep(ctx context.Context, tx *sql.Tx, now int64) error {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT run_id, holder, expires_ms FROM fixrail_run WHERE state = 'held'`))
	if err != nil {
		return err
	}
	type gone struct{ id, reason string }
	var dead []gone
	for rows.Next() {
		var id, holder string
		var exp int64
		if err := rows.Scan(&id, &holder, &exp); err != nil {
			rows.Close()
			return err
		}
		switch {
		case exp <= now:
			dead = append(dead, gone{id, "lease-expired"})
		case !s.alive(holder):
			dead = append(dead, gone{id, "holder-died"})
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range dead {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE fixrail_run SET state = 'expired', ended_ms = ?, cost_micro = reserved_micro, turns = turn_cap,
			terminal = 'HALT', reason = ? WHERE run_id = ? AND state = 'held'`), now, d.reason, d.id); err != nil {
			return err
		}
	}
	return nil
}

func (s *store) settle(ctx context.Context, runID string, o Outcome) (Charge, error) {
	var c Charge
	err := s.tx(ctx, false, func(tx *sql.Tx) error {
		var state string
		var reserved, turnCap int64
		if err := tx.QueryRowContext(ctx, s.q(`SELECT state, reserved_micro, turn_cap FROM fixrail_run WHERE run_id = ?`), runID).Scan(&state, &reserved, &turnCap); err != nil {
			return err
		}
		if state != "held" {
			return fmt.Errorf("%w: run %s was already closed (%s) and charged its reservation", ErrLeaseLost, runID, state)
		}
		// Unknown, negative or non-finite figures charge the caps: a
		// settlement can never come out cheaper than the truth by mistake.
		cost, turns := reserved, turnCap
		if o.CostKnown && o.CostUSD >= 0 && o.CostUSD < 1e9 {
			// The actual cost, even above the cap: the record is the truth,
			// and the next reservation sees the overshoot.
			cost = micro(o.CostUSD)
			c.CostKnown = true
		}
		if o.TurnsKnown && o.Turns >= 0 {
			turns = int64(o.Turns)
			c.TurnsKnown = true
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE fixrail_run SET state = 'settled', ended_ms = ?, cost_micro = ?, turns = ?, cost_known = ?, terminal = ?, reason = ?
			WHERE run_id = ? AND state = 'held'`), o.Now.UnixMilli(), cost, turns, boolInt(c.CostKnown), o.Terminal, o.Reason, runID); err != nil {
			return err
		}
		c.CostUSD, c.Turns = usd(cost), int(turns)
		// The run's path holds end with it (paths.go).
		_, err := tx.ExecContext(ctx, s.q(`DELETE FROM fixrail_path WHERE run_id = ?`), runID)
		return err
	})
	if err != nil {
		return Charge{}, err
	}
	return c, nil
}

func (s *store) Run(ctx context.Context, runID string) (*RunState, error) {
	var st RunState
	err := s.tx(ctx, true, func(tx *sql.Tx) error {
		var cost, reserved, turns, turnCap int64
		var terminal, reason sql.NullString
		err := tx.QueryRowContext(ctx, s.q(`SELECT state, terminal, reason, cost_micro, reserved_micro, turns, turn_cap FROM fixrail_run WHERE run_id = ?`), runID).
			Scan(&st.State, &terminal, &reason, &cost, &reserved, &turns, &turnCap)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", ErrNoRun, runID)
		}
		if err != nil {
			return err
		}
		st.RunID, st.Terminal, st.Reason = runID, terminal.String, reason.String
		if st.State == "held" {
			cost, turns = reserved, turnCap
		}
		st.CostUSD, st.Turns = usd(cost), int(turns)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

func (s *store) renew(ctx context.Context, runID, holder string, now time.Time) (time.Time, error) {
	exp := now.Add(s.lim.Lease)
	err := s.tx(ctx, false, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, s.q(`UPDATE fixrail_run SET expires_ms = ? WHERE run_id = ? AND holder = ? AND state = 'held' AND expires_ms > ?`),
			exp.UnixMilli(), runID, holder, now.UnixMilli())
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("%w: run %s is no longer held", ErrLeaseLost, runID)
		}
		return nil
	})
	return exp, err
}

func (s *store) Report(ctx context.Context, req Request) (*Report, error) {
	if err := s.lim.validate(); err != nil {
		return nil, &UnreadableError{Store: "config", Err: err}
	}
	day := Day(req.Now)
	rep := &Report{Store: s.name, Day: day, ResetsAt: nextMidnight(req.Now)}
	err := s.tx(ctx, true, func(tx *sql.Tx) error {
		for _, sc := range s.scopes(req) {
			if sc.args != nil && sc.args[0] == "" {
				continue
			}
			u, err := s.use(ctx, tx, day, sc)
			if err != nil {
				return err
			}
			sr := ScopeReport{Scope: sc.name, CapCostUSD: sc.caps.CostUSD, SpentCostUSD: usd(u.cost - u.reservedCost), ReservedCostUSD: usd(u.reservedCost),
				CapRuns: sc.caps.Runs, Runs: int(u.runs), CapTurns: sc.caps.Turns, SpentTurns: int(u.turns - u.reservedTurns), ReservedTurns: int(u.reservedTurns),
				InFlight: int(u.held), HeadroomCostUSD: max(sc.caps.CostUSD-usd(u.cost), 0)}
			switch {
			case u.runs+1 > int64(sc.caps.Runs):
				sr.ExhaustedMeasure = "runs"
			case u.cost+micro(req.RunCostUSD) > micro(sc.caps.CostUSD):
				sr.ExhaustedMeasure = "cost_usd"
			case u.turns+int64(req.RunTurns) > int64(sc.caps.Turns):
				sr.ExhaustedMeasure = "turns"
			}
			rep.Scopes = append(rep.Scopes, sr)
		}
		rows, err := tx.QueryContext(ctx, s.q(`SELECT run_id, repo, finding, actor, started_ms, expires_ms, reserved_micro, holder FROM fixrail_run WHERE state = 'held' ORDER BY started_ms, run_id`))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r RunRecord
			var st, ex, m int64
			if err := rows.Scan(&r.RunID, &r.Repo, &r.Finding, &r.Actor, &st, &ex, &m, &r.Holder); err != nil {
				return err
			}
			r.Started, r.Expires, r.ReservedUSD = time.UnixMilli(st).UTC(), time.UnixMilli(ex).UTC(), usd(m)
			rep.InFlight = append(rep.InFlight, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range []struct {
			scope string
			cap   int
			match func(RunRecord) bool
		}{
			{"concurrent:global", s.lim.ConcurrentGlobal, func(RunRecord) bool { return true }},
			{"concurrent:repo:" + req.Repo, s.lim.ConcurrentRepo, func(r RunRecord) bool { return r.Repo == req.Repo }},
		} {
			if req.Repo == "" && c.scope != "concurrent:global" {
				continue
			}
			n := 0
			for _, r := range rep.InFlight {
				if c.match(r) {
					n++
				}
			}
			sr := ScopeReport{Scope: c.scope, CapInFlight: c.cap, InFlight: n}
			if n+1 > c.cap {
				sr.ExhaustedMeasure = "in_flight"
			}
			rep.Scopes = append(rep.Scopes, sr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func (s *store) Close() error { return s.db.Close() }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newRunID is time-ordered and unique across machines: the start in
// milliseconds and 64 random bits.
func newRunID(now time.Time) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return fmt.Sprintf("%013x-%s", now.UnixMilli(), hex.EncodeToString(b[:]))
}
