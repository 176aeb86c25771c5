package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Retries are further attempts a run makes after its first (a follow-up
// fix after the scanner's recheck): each is reserved here before it
// starts, one row per attempt, so a cap on them holds on every machine
// that shares the ledger and through a crash, and an unreadable ledger
// is no retry at all. A retry's model spend stays inside the run's own
// reservation (its cost and turn caps); what is reserved here is the
// attempt.

// ReserveRetry reserves attempt n (1-based) of kind for the run, when
// fewer than max are reserved already, and returns n. With max spent it
// is an *ExhaustedError (scope run:<id>, measure retries:<kind>);
// ErrLeaseLost when the run is no longer held; unreadable otherwise.
func (r *Reservation) ReserveRetry(ctx context.Context, kind string, max int, now time.Time) (int, error) {
	return r.l.reserveRetry(ctx, r.RunID, r.holder, kind, max, now)
}

func (s *store) reserveRetry(ctx context.Context, runID, holder, kind string, max int, now time.Time) (int, error) {
	if kind == "" {
		return 0, s.unreadable(errors.New("a retry needs a kind"))
	}
	var n int
	err := s.tx(ctx, false, func(tx *sql.Tx) error {
		if err := s.sweep(ctx, tx, now.UnixMilli()); err != nil {
			return err
		}
		var held int
		err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM fixrail_run WHERE run_id = ? AND holder = ? AND state = 'held'`), runID, holder).Scan(&held)
		if err != nil {
			return err
		}
		if held == 0 {
			return fmt.Errorf("%w: run %s is no longer held", ErrLeaseLost, runID)
		}
		var used int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM fixrail_retry WHERE run_id = ? AND kind = ?`), runID, kind).Scan(&used); err != nil {
			return err
		}
		if used >= max {
			return &ExhaustedError{Scope: "run:" + runID, Measure: "retries:" + kind, Cap: float64(max), Used: float64(used), Want: 1, ResetsAt: now}
		}
		n = used + 1
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO fixrail_retry (run_id, kind, n, reserved_ms) VALUES (?, ?, ?, ?)`), runID, kind, n, now.UnixMilli())
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
