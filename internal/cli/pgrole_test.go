package cli

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/ledger/pgtest"
)

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
	roleURL, drop, err := pgtest.Role(admin, "fixrail_noretry",
		"SELECT, INSERT, UPDATE ON fixrail_run", "SELECT, INSERT, DELETE ON fixrail_path",
		"SELECT, INSERT ON fixrail_rails", "SELECT ON fixrail_retry")
	ts.Check(err)
	ts.Defer(drop)
	for _, f := range args {
		p := ts.MkAbs(f)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "@PGROLEURL@", roleURL)), 0o644))
	}
}
