package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgLockKey is the advisory lock every ledger write takes: one constant,
// so that all of a fleet's check-and-reserve transactions are serialised
// exactly as SQLite's BEGIN IMMEDIATE serialises one machine's. ("fixrail"
// in ASCII.)
const pgLockKey int64 = 0x666978726169_6c

// pgWait bounds how long a transaction waits for the lock or a connection
// before the ledger counts as unreadable.
var pgWait = 10 * time.Second

// OpenPostgres opens the shared ledger at a postgres:// URL (pgx v5). A
// server that refuses, times out or rejects the login is unreadable: there
// is no fallback to a local file. Keep the password out of the URL (and out
// of fixrail.yaml): pgx reads PGPASSWORD and ~/.pgpass.
func OpenPostgres(ctx context.Context, rawURL string, lim Limits) (Ledger, error) {
	name := "postgres " + redactURL(rawURL)
	if u, err := url.Parse(rawURL); err == nil {
		name = "postgres " + u.Host + u.Path
	}
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, &UnreadableError{Store: name, Err: err}
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > pgWait {
		cfg.ConnectTimeout = pgWait
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	self := selfHolder()
	s := &store{db: db, name: name, lim: lim, dollar: true, self: self.String(), alive: self.alive}
	s.begin = func(ctx context.Context) (*sql.Tx, error) {
		// Not a derived context: database/sql rolls a transaction back
		// when the context it began with ends. lock_timeout bounds the wait.
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		// lock_timeout makes a stuck holder an error instead of a hang.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", pgWait.Milliseconds())); err != nil {
			tx.Rollback()
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, pgLockKey); err != nil {
			tx.Rollback()
			return nil, err
		}
		return tx, nil
	}
	pctx, cancel := context.WithTimeout(ctx, pgWait)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, &UnreadableError{Store: name, Err: err}
	}
	if err := s.tx(ctx, false, func(tx *sql.Tx) error {
		// Only create what is missing: a role with no CREATE right (the
		// usual one, after the first run) must still open the ledger.
		var table, index, paths, rails, retries bool
		if err := tx.QueryRowContext(ctx, `SELECT to_regclass('fixrail_run') IS NOT NULL, to_regclass('fixrail_ledger_one_held_per_repo_finding') IS NOT NULL, to_regclass('fixrail_path') IS NOT NULL, to_regclass('fixrail_rails') IS NOT NULL, to_regclass('fixrail_retry') IS NOT NULL`).Scan(&table, &index, &paths, &rails, &retries); err != nil {
			return err
		}
		if !table {
			_, err := tx.ExecContext(ctx, pgSchema)
			return err
		}
		if !index {
			// A ledger made before findings were keyed by repository: its
			// index refuses the same id in two repositories. Migrating
			// needs the table's owner, once.
			if _, err := tx.ExecContext(ctx, pgV1toV2); err != nil {
				return fmt.Errorf("ledger schema upgrade (the held-finding index, keyed by repository) needs the owner of fixrail_run, once: %w", err)
			}
		}
		if !paths {
			// A ledger made before path holds (S7 across machines).
			if _, err := tx.ExecContext(ctx, pgPaths); err != nil {
				return fmt.Errorf("ledger schema upgrade (the path holds table fixrail_path) needs a role that may create tables, once: %w", err)
			}
		}
		if !rails {
			// A ledger made before rail records (the configuration each
			// run started with).
			if _, err := tx.ExecContext(ctx, pgRails); err != nil {
				return fmt.Errorf("ledger schema upgrade (the rail records table fixrail_rails) needs a role that may create tables, once: %w", err)
			}
		}
		if !retries {
			// A ledger made before retry reservations (the recheck's
			// follow-up fixes).
			if _, err := tx.ExecContext(ctx, pgRetries); err != nil {
				return fmt.Errorf("ledger schema upgrade (the retry reservations table fixrail_retry) needs a role that may create tables, once: %w", err)
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

const pgSchema = `
CREATE TABLE IF NOT EXISTS fixrail_run (
	run_id         text PRIMARY KEY,
	repo           text NOT NULL,
	finding        text NOT NULL,
	actor          text NOT NULL,
	day            text NOT NULL,
	started_ms     bigint NOT NULL,
	expires_ms     bigint NOT NULL,
	ended_ms       bigint,
	holder         text NOT NULL,
	state          text NOT NULL CHECK (state IN ('held', 'settled', 'expired')),
	reserved_micro bigint NOT NULL CHECK (reserved_micro > 0),
	turn_cap       bigint NOT NULL CHECK (turn_cap > 0),
	cost_micro     bigint NOT NULL DEFAULT 0,
	cost_known     integer NOT NULL DEFAULT 0,
	turns          bigint NOT NULL DEFAULT 0,
	terminal       text,
	reason         text
);
CREATE INDEX IF NOT EXISTS fixrail_run_day_repo ON fixrail_run(day, repo);
CREATE INDEX IF NOT EXISTS fixrail_run_day_actor ON fixrail_run(day, actor);
CREATE INDEX IF NOT EXISTS fixrail_run_held ON fixrail_run(state) WHERE state = 'held';
CREATE UNIQUE INDEX IF NOT EXISTS fixrail_ledger_one_held_per_repo_finding ON fixrail_run(repo, finding) WHERE state = 'held';
` + pgPaths + pgRails + pgRetries

// pgRetries reserves a run's further attempts (retries.go).
const pgRetries = `
CREATE TABLE IF NOT EXISTS fixrail_retry (
	run_id      text NOT NULL REFERENCES fixrail_run(run_id),
	kind        text NOT NULL,
	n           bigint NOT NULL CHECK (n > 0),
	reserved_ms bigint NOT NULL,
	PRIMARY KEY (run_id, kind, n)
);
`

// pgRails keeps the configuration each run started with (rails.go).
const pgRails = `
CREATE TABLE IF NOT EXISTS fixrail_rails (
	repo        text NOT NULL,
	recorded_ms bigint NOT NULL,
	run_id      text NOT NULL,
	sha256      text NOT NULL,
	rails       text NOT NULL,
	PRIMARY KEY (repo, recorded_ms, run_id)
);
`

// pgPaths holds the files a live run's plan touches (paths.go).
const pgPaths = `
CREATE TABLE IF NOT EXISTS fixrail_path (
	run_id text NOT NULL REFERENCES fixrail_run(run_id),
	repo   text NOT NULL,
	path   text NOT NULL,
	PRIMARY KEY (run_id, path)
);
CREATE INDEX IF NOT EXISTS fixrail_path_repo_path ON fixrail_path(repo, path);
`

const pgV1toV2 = `
CREATE UNIQUE INDEX IF NOT EXISTS fixrail_ledger_one_held_per_repo_finding ON fixrail_run(repo, finding) WHERE state = 'held';
DROP INDEX IF EXISTS fixrail_ledger_one_held_per_finding;
`
