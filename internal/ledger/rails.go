package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The rails each run started with, per repository: the hash of the base
// branch's fixrail.yaml and the values that bound a fix (where it may
// write, what is sensitive, what it may spend), as the caller encodes them
// — the ledger stores them and never reads them. A row is added only when
// the hash differs from the repository's latest, so the table is the
// history of the repository's rail changes, one row per change.

// RailsRecord is the configuration one run started with.
type RailsRecord struct {
	RunID    string
	Recorded time.Time
	SHA256   string
	Rails    []byte
}

// RecordRails records the configuration this run started with and returns
// the repository's previous record (nil when this is the first), read in
// the same transaction. A configuration with the latest record's hash
// adds nothing. ErrLeaseLost means the run is no longer held.
func (r *Reservation) RecordRails(ctx context.Context, sha256 string, rails []byte, now time.Time) (*RailsRecord, error) {
	return r.l.recordRails(ctx, r.RunID, r.holder, sha256, rails, now)
}

func (s *store) recordRails(ctx context.Context, runID, holder, sha string, rails []byte, now time.Time) (*RailsRecord, error) {
	if sha == "" || len(rails) == 0 {
		return nil, errors.New("rails: no configuration hash or values to record")
	}
	var prev *RailsRecord
	err := s.tx(ctx, false, func(tx *sql.Tx) error {
		var repo string
		err := tx.QueryRowContext(ctx, s.q(`SELECT repo FROM fixrail_run WHERE run_id = ? AND holder = ? AND state = 'held'`), runID, holder).Scan(&repo)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: run %s is no longer held", ErrLeaseLost, runID)
		}
		if err != nil {
			return err
		}
		latest, err := s.rails(ctx, tx, repo, 1)
		if err != nil {
			return err
		}
		if len(latest) > 0 {
			prev = &latest[0]
			if prev.SHA256 == sha {
				return nil
			}
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO fixrail_rails (repo, recorded_ms, run_id, sha256, rails) VALUES (?, ?, ?, ?, ?)`),
			repo, now.UnixMilli(), runID, sha, string(rails))
		return err
	})
	if err != nil {
		return nil, err
	}
	return prev, nil
}

func (s *store) Rails(ctx context.Context, repo string, n int) ([]RailsRecord, error) {
	var out []RailsRecord
	err := s.tx(ctx, true, func(tx *sql.Tx) error {
		var err error
		out, err = s.rails(ctx, tx, repo, n)
		return err
	})
	return out, err
}

// rails is the repository's n latest records, newest first.
func (s *store) rails(ctx context.Context, tx *sql.Tx, repo string, n int) ([]RailsRecord, error) {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT run_id, recorded_ms, sha256, rails FROM fixrail_rails WHERE repo = ? ORDER BY recorded_ms DESC, run_id DESC LIMIT ?`), repo, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RailsRecord
	for rows.Next() {
		var r RailsRecord
		var ms int64
		var rails string
		if err := rows.Scan(&r.RunID, &ms, &r.SHA256, &rails); err != nil {
			return nil, err
		}
		r.Recorded, r.Rails = time.UnixMilli(ms).UTC(), []byte(rails)
		out = append(out, r)
	}
	return out, rows.Err()
}
