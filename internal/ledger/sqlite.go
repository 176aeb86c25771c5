package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// sqliteBusy is how long a transaction waits for another writer before
// the ledger counts as unreadable. Tests shorten it.
var sqliteBusy = 10 * time.Second

var ofdOnce sync.Once

// OpenSQLite opens (creating if needed) the one-machine ledger at path.
// It refuses a path that is not a regular file or sits on a network or
// FUSE filesystem, where SQLite's WAL locking does not hold, and fails
// closed: every refusal is an *UnreadableError.
//
// Nothing else in fixrail may open the ledger's files with os APIs:
// closing any descriptor of the file drops SQLite's POSIX locks on it. OFD
// locks (enabled here on Linux) are immune to that, but the -shm file's
// locks stay POSIX; back the file up with VACUUM INTO, never by copying.
func OpenSQLite(ctx context.Context, path string, lim Limits) (Ledger, error) {
	name := "sqlite " + path
	fail := func(err error) (Ledger, error) { return nil, &UnreadableError{Store: name, Err: err} }
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || strings.ContainsAny(path, "?#") {
		return fail(errors.New("the ledger path must be a clean absolute path without ? or #"))
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	if err := localFS(dir); err != nil {
		return fail(err)
	}
	// Lstat opens no descriptor, so it cannot drop a lock.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fail(fmt.Errorf("%s is a %s, not a regular file", path, kind(fi.Mode())))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	ofdOnce.Do(func() { sqlite.OFDLocking(true) }) // best effort; Linux only
	// Built here, never from config: a _pragma value runs verbatim.
	dsn := path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate", sqliteBusy.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fail(err)
	}
	db.SetMaxOpenConns(4)
	self := selfHolder()
	s := &store{db: db, name: name, lim: lim, self: self.String(), alive: self.alive,
		begin: func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) }}
	if err := retryBusy(ctx, sqliteBusy, func() error { return s.migrateSQLite(ctx) }); err != nil {
		db.Close()
		return nil, s.unreadable(err)
	}
	return s, nil
}

// retryBusy runs fn, which must be idempotent, until it does not fail with
// SQLITE_BUSY or bound has passed. It exists for one case the busy timeout
// does not cover: switching a fresh file to WAL needs an exclusive lock, and
// when two connections each hold a shared lock while asking for it SQLite
// answers one of them SQLITE_BUSY at once (waiting could only deadlock).
// The first run on a new machine, several jobs at once, is exactly that.
func retryBusy(ctx context.Context, bound time.Duration, fn func() error) error {
	deadline := time.Now().Add(bound)
	for {
		err := fn()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}

func isBusy(err error) bool {
	const sqliteBusyCode = 5 // SQLITE_BUSY; extended codes keep it in the low byte
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteBusyCode
}

const sqliteSchema = `
CREATE TABLE fixrail_run (
	run_id         TEXT PRIMARY KEY,
	repo           TEXT NOT NULL,
	finding        TEXT NOT NULL,
	actor          TEXT NOT NULL,
	day            TEXT NOT NULL,
	started_ms     INTEGER NOT NULL,
	expires_ms     INTEGER NOT NULL,
	ended_ms       INTEGER,
	holder         TEXT NOT NULL,
	state          TEXT NOT NULL CHECK (state IN ('held', 'settled', 'expired')),
	reserved_micro INTEGER NOT NULL CHECK (reserved_micro > 0),
	turn_cap       INTEGER NOT NULL CHECK (turn_cap > 0),
	cost_micro     INTEGER NOT NULL DEFAULT 0,
	cost_known     INTEGER NOT NULL DEFAULT 0,
	turns          INTEGER NOT NULL DEFAULT 0,
	terminal       TEXT,
	reason         TEXT
) STRICT;
CREATE INDEX run_day_repo ON fixrail_run(day, repo);
CREATE INDEX run_day_actor ON fixrail_run(day, actor);
CREATE INDEX run_held ON fixrail_run(state) WHERE state = 'held';
CREATE UNIQUE INDEX run_one_held_per_repo_finding ON fixrail_run(repo, finding) WHERE state = 'held';
` + sqlitePaths + sqliteRails + sqliteRetries + `
PRAGMA user_version = 5;
`

// sqliteRetries reserves a run's further attempts (retries.go).
const sqliteRetries = `
CREATE TABLE IF NOT EXISTS fixrail_retry (
	run_id      TEXT NOT NULL REFERENCES fixrail_run(run_id),
	kind        TEXT NOT NULL,
	n           INTEGER NOT NULL CHECK (n > 0),
	reserved_ms INTEGER NOT NULL,
	PRIMARY KEY (run_id, kind, n)
) STRICT;
`

// sqliteV4toV5 adds the retry reservations.
const sqliteV4toV5 = sqliteRetries + `
PRAGMA user_version = 5;
`

// sqlitePaths holds the files a live run's plan touches (paths.go).
const sqlitePaths = `
CREATE TABLE IF NOT EXISTS fixrail_path (
	run_id TEXT NOT NULL REFERENCES fixrail_run(run_id),
	repo   TEXT NOT NULL,
	path   TEXT NOT NULL,
	PRIMARY KEY (run_id, path)
) STRICT;
CREATE INDEX IF NOT EXISTS path_repo_path ON fixrail_path(repo, path);
`

// sqliteRails keeps the configuration each run started with (rails.go).
const sqliteRails = `
CREATE TABLE IF NOT EXISTS fixrail_rails (
	repo        TEXT NOT NULL,
	recorded_ms INTEGER NOT NULL,
	run_id      TEXT NOT NULL,
	sha256      TEXT NOT NULL,
	rails       TEXT NOT NULL,
	PRIMARY KEY (repo, recorded_ms, run_id)
) STRICT;
`

// sqliteV3toV4 adds the rail records.
const sqliteV3toV4 = sqliteRails + `
PRAGMA user_version = 4;
`

// sqliteV2toV3 adds the path holds.
const sqliteV2toV3 = sqlitePaths + `
PRAGMA user_version = 3;
`

// sqliteV1toV2 keys the held-finding index by repository too (version 1
// made the same finding id in two repositories one finding).
const sqliteV1toV2 = `
DROP INDEX IF EXISTS run_one_held_per_finding;
CREATE UNIQUE INDEX run_one_held_per_repo_finding ON fixrail_run(repo, finding) WHERE state = 'held';
PRAGMA user_version = 2;
`

func (s *store) migrateSQLite(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal_mode is %q, not wal", mode)
	}
	return s.tx(ctx, false, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return err
		}
		var steps []string
		switch v {
		case 0:
			steps = []string{sqliteSchema}
		case 1:
			steps = []string{sqliteV1toV2, sqliteV2toV3, sqliteV3toV4, sqliteV4toV5}
		case 2:
			steps = []string{sqliteV2toV3, sqliteV3toV4, sqliteV4toV5}
		case 3:
			steps = []string{sqliteV3toV4, sqliteV4toV5}
		case 4:
			steps = []string{sqliteV4toV5}
		case 5:
		default:
			return fmt.Errorf("ledger schema version %d is newer than this fixrail (5)", v)
		}
		for _, step := range steps {
			if _, err := tx.ExecContext(ctx, step); err != nil {
				return err
			}
		}
		return foreignObjects(ctx, tx)
	})
}

// foreignObjects refuses a ledger holding a trigger or a view: fixrail
// creates neither, and a trigger that deletes reservations as they are
// made, in a ledger file someone else prepared, would lift every cap.
func foreignObjects(ctx context.Context, tx *sql.Tx) error {
	var kind, name string
	err := tx.QueryRowContext(ctx, `SELECT type, name FROM sqlite_schema WHERE type IN ('trigger', 'view') ORDER BY name LIMIT 1`).Scan(&kind, &name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("the ledger holds a %s (%q) that fixrail did not create; it is not fixrail's ledger, or someone changed it", kind, name)
}

// Filesystems where SQLite's WAL (an mmapped -shm index, same-host
// locking) is unsafe: sqlite.org/wal.html, and reported corruption on FUSE
// bind mounts.
var remoteFS = map[int64]string{
	0x6969:     "nfs",
	0x517B:     "smb",
	0xFF534D42: "cifs",
	0xFE534D42: "smb2",
	0x65735546: "fuse",
	0x564C:     "ncp",
	0x7461636f: "ocfs2",
	0x1161970:  "gfs2",
	0x01021997: "9p (v9fs)",
	0x6B414653: "afs",
	0x5346414F: "afs",
	0x73757245: "coda",
	0x47504653: "gpfs",
	0x0BD00BD0: "lustre",
	0x00C36400: "cephfs",
}

func localFS(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", dir, err)
	}
	return refuseFS(dir, int64(st.Type))
}

func refuseFS(dir string, magic int64) error {
	if fs, bad := remoteFS[magic&0xffffffff]; bad {
		return fmt.Errorf("%s is on %s (magic %#x): SQLite's WAL locking does not hold there; put the state directory on a local disk or configure a Postgres ledger.url", dir, fs, magic)
	}
	return nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
