package cli

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fixrail/fixrail/internal/ledger"
)

var pgRoles atomic.Int64

// pgrole FILE...: after pgstart, opens the ledger at $PGURL once (so its
// tables exist), makes a login role with every right a run needs except
// reserving a retry (SELECT on fixrail_retry, no INSERT), and replaces
// @PGROLEURL@ in each FILE with that role's URL: a shared ledger that
// admits the run and then refuses its retry.
func cmdPgRole(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("pgrole does not take !")
	}
	admin := ts.Getenv("PGURL")
	if admin == "" {
		ts.Fatalf("pgrole before pgstart")
	}
	ctx := context.Background()
	c := ledger.Caps{CostUSD: 100, Runs: 100, Turns: 10000}
	lg, err := ledger.Open(ctx, admin, ts.MkAbs("."), ledger.Limits{Global: c, Repo: c, Actor: c, ConcurrentGlobal: 4, ConcurrentRepo: 4, Lease: time.Hour})
	ts.Check(err)
	ts.Check(lg.Close())
	db, err := sql.Open("pgx", admin)
	ts.Check(err)
	defer db.Close()
	role := fmt.Sprintf("fixrail_noretry_%d_%d", os.Getpid(), pgRoles.Add(1))
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
		"GRANT SELECT, INSERT, UPDATE ON fixrail_run TO " + role,
		"GRANT SELECT, INSERT, DELETE ON fixrail_path TO " + role,
		"GRANT SELECT, INSERT ON fixrail_rails TO " + role,
		"GRANT SELECT ON fixrail_retry TO " + role,
	} {
		if _, err := db.Exec(q); err != nil {
			ts.Fatalf("%s: %v", q, err)
		}
	}
	ts.Defer(func() {
		if db, err := sql.Open("pgx", admin); err == nil {
			db.Exec("DROP OWNED BY " + role)
			db.Exec("DROP ROLE " + role)
			db.Close()
		}
	})
	u, err := url.Parse(admin)
	ts.Check(err)
	u.User = url.User(role)
	for _, f := range args {
		p := ts.MkAbs(f)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "@PGROLEURL@", u.String())), 0o644))
	}
}
