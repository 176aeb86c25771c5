package ledger

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/ledger/pgtest"
)

// A fleet's jobs log in with a role that may read and write the ledger's
// table but create nothing: after the first run created the table, such a
// role opens the ledger, reserves and settles.
func TestPostgresLeastPrivilegeRole(t *testing.T) {
	admin := pgtest.URL(t)
	open(t, admin, roomy()) // creates the table
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	roleURL, drop, err := pgtest.Role(admin, "fixrail_job",
		"SELECT, INSERT, UPDATE ON fixrail_run", "SELECT, INSERT, DELETE ON fixrail_path",
		"SELECT, INSERT ON fixrail_rails", "SELECT, INSERT ON fixrail_retry")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	l := open(t, roleURL, roomy())
	res := mustReserve(t, l, req("a"))
	if err := res.HoldPaths(context.Background(), []string{"src/a.py"}, t0); err != nil {
		t.Fatalf("path holds as the least-privilege role: %v", err)
	}
	if _, err := res.RecordRails(context.Background(), "abc", []byte(`{}`), t0); err != nil {
		t.Fatalf("rail records as the least-privilege role: %v", err)
	}
	if _, err := res.ReserveRetry(context.Background(), "recheck", 1, t0); err != nil {
		t.Fatalf("a retry as the least-privilege role: %v", err)
	}
	if _, err := res.Settle(context.Background(), Outcome{Terminal: "DRAFT-PR", CostUSD: 0.5, CostKnown: true, Turns: 2, TurnsKnown: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE fixrail_retry, fixrail_rails, fixrail_path, fixrail_run"); err != nil {
		t.Fatal(err)
	}
	// With the table gone, that role cannot create it: unreadable.
	_, err = Open(context.Background(), roleURL, t.TempDir(), roomy())
	wantUnreadable(t, err)
}

// A ledger write that waits on another transaction past the timeout is
// unreadable, not admitted and not hung.
func TestPostgresLockedPastTimeoutIsUnreadable(t *testing.T) {
	defer func(d time.Duration) { pgWait = d }(pgWait)
	pgWait = 300 * time.Millisecond
	u := pgtest.URL(t)
	l := open(t, u, roomy())
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`SELECT pg_advisory_xact_lock($1)`, pgLockKey); err != nil {
		t.Fatal(err)
	}
	_, err = l.Reserve(context.Background(), req("a"))
	wantUnreadable(t, err)
	tx.Rollback()
	mustReserve(t, l, req("a"))
}
