package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Path holds serialise runs whose plans touch the same file of one
// repository (S7), on every machine that shares the ledger: a hold is a
// row naming the run, and it lasts exactly as long as the run is held —
// settling, a lease running out or a holder dying ends it, with no expiry
// of its own to drift from the run's.

// ErrPathsHeld is the sentinel of a *PathsHeldError.
var ErrPathsHeld = errors.New("paths held by another run")

// PathHold is one path another live run holds.
type PathHold struct {
	Path    string
	RunID   string
	Finding string
	Since   time.Time
}

// PathsHeldError names every requested path a live run of another
// finding holds. Nothing was held for the asking run.
type PathsHeldError struct {
	Holds []PathHold
}

func (e *PathsHeldError) Error() string {
	var b strings.Builder
	b.WriteString("paths held by another run:")
	for _, h := range e.Holds {
		fmt.Fprintf(&b, " %s (run %s, finding %s, since %s)", h.Path, h.RunID, h.Finding, h.Since.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrPathsHeld) true.
func (e *PathsHeldError) Is(target error) bool { return target == ErrPathsHeld }

// HoldPaths holds paths of the reservation's repository for the rest of
// the run, all or none: when a live run holds any of them the answer is a
// *PathsHeldError listing each, and nothing is held, so a caller that
// waits and retries never holds half a plan (and two runs waiting on each
// other's halves cannot deadlock). Holding a path the run already holds
// is a no-op. ErrLeaseLost means the run is no longer held.
func (r *Reservation) HoldPaths(ctx context.Context, paths []string, now time.Time) error {
	return r.l.holdPaths(ctx, r.RunID, r.holder, paths, now)
}

func (s *store) holdPaths(ctx context.Context, runID, holder string, paths []string, now time.Time) error {
	want := slices.Clone(paths)
	slices.Sort(want)
	want = slices.Compact(want)
	return s.tx(ctx, false, func(tx *sql.Tx) error {
		if err := s.sweep(ctx, tx, now.UnixMilli()); err != nil {
			return err
		}
		var repo string
		err := tx.QueryRowContext(ctx, s.q(`SELECT repo FROM fixrail_run WHERE run_id = ? AND holder = ? AND state = 'held'`), runID, holder).Scan(&repo)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: run %s is no longer held", ErrLeaseLost, runID)
		}
		if err != nil {
			return err
		}
		// Rows of closed runs are dead weight: drop them while excluding
		// every other writer anyway.
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM fixrail_path WHERE repo = ? AND run_id IN (SELECT run_id FROM fixrail_run WHERE state <> 'held')`), repo); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, s.q(`SELECT p.path, r.run_id, r.finding, r.started_ms FROM fixrail_path p JOIN fixrail_run r ON r.run_id = p.run_id
			WHERE p.repo = ? AND r.state = 'held' AND p.run_id <> ? ORDER BY p.path, r.run_id`), repo, runID)
		if err != nil {
			return err
		}
		var held []PathHold
		for rows.Next() {
			var h PathHold
			var since int64
			if err := rows.Scan(&h.Path, &h.RunID, &h.Finding, &since); err != nil {
				rows.Close()
				return err
			}
			if _, ok := slices.BinarySearch(want, h.Path); ok {
				h.Since = time.UnixMilli(since)
				held = append(held, h)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(held) > 0 {
			return &PathsHeldError{Holds: held}
		}
		for _, p := range want {
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO fixrail_path (run_id, repo, path) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`), runID, repo, p); err != nil {
				return err
			}
		}
		return nil
	})
}
