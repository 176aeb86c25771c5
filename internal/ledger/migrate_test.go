package ledger

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/ledger/pgtest"
)

// v1 is a schema as the first version made it: the held-finding index
// keyed by the finding id alone, which refused the same id (gh-12) in two
// repositories.
func v1(t *testing.T, schema, paths, rails, retries, newIndex, oldIndex string) string {
	t.Helper()
	old := strings.Replace(schema, newIndex, oldIndex, 1)
	old = strings.Replace(old, paths, "", 1)
	old = strings.Replace(old, rails, "", 1)
	old = strings.Replace(old, retries, "", 1)
	old = strings.Replace(old, "PRAGMA user_version = 5;", "PRAGMA user_version = 1;", 1)
	if strings.Contains(old, "fixrail_path") || strings.Contains(old, "fixrail_rails") || strings.Contains(old, "fixrail_retry") {
		t.Fatal("the v1 schema still has the path holds or the rail records")
	}
	if old == schema {
		t.Fatal("the v1 schema is the current one: the test proves nothing")
	}
	return old
}

// TestMigrateV1 opens a v1 ledger holding a run on gh-12 and checks that it
// is upgraded in place: the run is still held, the same id in another
// repository is admitted, and the same finding again is still in flight.
func TestMigrateV1(t *testing.T) {
	for _, c := range []struct {
		name, driver, schema, paths, rails, retries, newIndex, oldIndex string
		url                                                             func(t *testing.T) (raw, ledger string)
	}{{
		name: "sqlite", driver: "sqlite", schema: sqliteSchema, paths: sqlitePaths, rails: sqliteRails, retries: sqliteRetries,
		newIndex: "run_one_held_per_repo_finding ON fixrail_run(repo, finding)",
		oldIndex: "run_one_held_per_finding ON fixrail_run(finding)",
		url: func(t *testing.T) (string, string) {
			p := filepath.Join(t.TempDir(), "state.db")
			return p + "?_pragma=journal_mode(WAL)", p
		},
	}, {
		name: "postgres", driver: "pgx", schema: pgSchema, paths: pgPaths, rails: pgRails, retries: pgRetries,
		newIndex: "fixrail_ledger_one_held_per_repo_finding ON fixrail_run(repo, finding)",
		oldIndex: "fixrail_ledger_one_held_per_finding ON fixrail_run(finding)",
		url: func(t *testing.T) (string, string) {
			u := pgtest.URL(t)
			return u, u
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			raw, url := c.url(t)
			db, err := sql.Open(c.driver, raw)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := db.ExecContext(ctx, v1(t, c.schema, c.paths, c.rails, c.retries, c.newIndex, c.oldIndex)); err != nil {
				t.Fatal(err)
			}
			r := req("gh-12")
			if _, err := db.ExecContext(ctx, `INSERT INTO fixrail_run (run_id, repo, finding, actor, day, started_ms, expires_ms, holder, state, reserved_micro, turn_cap)
				VALUES ('old', $1, 'gh-12', 'alice', $2, $3, $4, 'elsewhere', 'held', 1000000, 10)`, r.Repo, Day(t0), t0.UnixMilli(), t0.Add(time.Hour).UnixMilli()); err != nil {
				t.Fatal(err)
			}
			db.Close()

			l := open(t, url, roomy())
			if _, err := l.Reserve(ctx, r); !errors.Is(err, ErrInFlight) {
				t.Fatalf("the held finding after the upgrade: %v, want in flight", err)
			}
			other := req("gh-12")
			other.Repo = "github.com/o/other"
			res := mustReserve(t, l, other)
			// The upgrade added the path holds (version 3).
			if err := res.HoldPaths(ctx, []string{"src/a.py"}, t0); err != nil {
				t.Fatalf("path holds after the upgrade: %v", err)
			}
			// And the rail records (version 4).
			if _, err := res.RecordRails(ctx, "abc", []byte(`{}`), t0); err != nil {
				t.Fatalf("rail records after the upgrade: %v", err)
			}
			// And the retry reservations (version 5).
			if _, err := res.ReserveRetry(ctx, "recheck", 1, t0); err != nil {
				t.Fatalf("retry reservations after the upgrade: %v", err)
			}
		})
	}
}
