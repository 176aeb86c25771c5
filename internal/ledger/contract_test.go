package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/ledger/pgtest"
)

// backend opens a fresh, empty ledger of one kind, and reopens it (a
// second handle on the same store, as another process would have).
type backend struct {
	name string
	// fresh returns the ledger's url for Open.
	fresh func(tb testing.TB) string
}

var backends = []backend{
	{"sqlite", func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "state.db") }},
	{"postgres", func(tb testing.TB) string { return pgtest.URL(tb) }},
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// roomy are limits no contract case reaches unless it lowers one.
func roomy() Limits {
	c := Caps{CostUSD: 1000, Runs: 1000, Turns: 100000}
	return Limits{Global: c, Repo: c, Actor: c, ConcurrentGlobal: 100, ConcurrentRepo: 100, Lease: time.Hour}
}

func req(finding string) Request {
	return Request{Repo: "github.com/o/r", Finding: finding, Actor: "alice", RunCostUSD: 1, RunTurns: 10, Now: t0}
}

func open(t *testing.T, url string, lim Limits) Ledger {
	t.Helper()
	l, err := Open(context.Background(), url, t.TempDir(), lim)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func mustReserve(t *testing.T, l Ledger, r Request) *Reservation {
	t.Helper()
	res, err := l.Reserve(context.Background(), r)
	if err != nil {
		t.Fatalf("reserve %s: %v", r.Finding, err)
	}
	return res
}

func wantExhausted(t *testing.T, err error, scope, measure string) *ExhaustedError {
	t.Helper()
	var ee *ExhaustedError
	if !errors.As(err, &ee) || !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("got %v, want budget exhausted on %s %s", err, scope, measure)
	}
	if ee.Scope != scope || ee.Measure != measure {
		t.Fatalf("exhausted %s %s, want %s %s", ee.Scope, ee.Measure, scope, measure)
	}
	return ee
}

func scopeOf(t *testing.T, l Ledger, r Request, name string) ScopeReport {
	t.Helper()
	rep, err := l.Report(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Scopes {
		if s.Scope == name {
			return s
		}
	}
	t.Fatalf("no scope %s in %+v", name, rep.Scopes)
	return ScopeReport{}
}

func TestContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range contract {
				t.Run(c.name, func(t *testing.T) { c.run(t, b.fresh(t)) })
			}
		})
	}
}

var contract = []struct {
	name string
	run  func(t *testing.T, url string)
}{
	{"retries are reserved one by one up to their cap, per run and kind, and none once the run is settled", func(t *testing.T, url string) {
		ctx := context.Background()
		l := open(t, url, roomy())
		res := mustReserve(t, l, req("a"))
		if n, err := res.ReserveRetry(ctx, "recheck", 2, t0); err != nil || n != 1 {
			t.Fatalf("first retry: %d, %v", n, err)
		}
		if n, err := res.ReserveRetry(ctx, "recheck", 2, t0); err != nil || n != 2 {
			t.Fatalf("second retry: %d, %v", n, err)
		}
		_, err := res.ReserveRetry(ctx, "recheck", 2, t0)
		var ee *ExhaustedError
		if !errors.As(err, &ee) || ee.Measure != "retries:recheck" || ee.Used != 2 || Reason(err) != ReasonExhausted {
			t.Fatalf("third retry: %v, want retries:recheck exhausted at 2", err)
		}
		// Another kind has its own count; a cap of 0 refuses the first.
		if _, err := res.ReserveRetry(ctx, "other", 0, t0); !errors.Is(err, ErrBudgetExhausted) {
			t.Fatalf("max 0: %v", err)
		}
		// Another run of another finding starts from none.
		res2 := mustReserve(t, l, req("b"))
		if n, err := res2.ReserveRetry(ctx, "recheck", 2, t0); err != nil || n != 1 {
			t.Fatalf("another run's first retry: %d, %v", n, err)
		}
		res.Settle(ctx, Outcome{Terminal: "HALT", Now: t0})
		if _, err := res.ReserveRetry(ctx, "recheck", 5, t0); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("a settled run's retry: %v, want lease lost", err)
		}
	}},
	{"reserve then settle replaces the reservation with the actual cost", func(t *testing.T, url string) {
		l := open(t, url, roomy())
		res := mustReserve(t, l, req("a"))
		s := scopeOf(t, l, req("a"), "global")
		if s.ReservedCostUSD != 1 || s.SpentCostUSD != 0 || s.ReservedTurns != 10 || s.Runs != 1 || s.InFlight != 1 {
			t.Fatalf("in flight: %+v", s)
		}
		if _, err := res.Settle(context.Background(), Outcome{Terminal: "DRAFT-PR", CostUSD: 0.25, CostKnown: true, Turns: 3, TurnsKnown: true, Now: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		s = scopeOf(t, l, req("a"), "global")
		if s.ReservedCostUSD != 0 || s.SpentCostUSD != 0.25 || s.SpentTurns != 3 || s.Runs != 1 || s.InFlight != 0 {
			t.Fatalf("settled: %+v", s)
		}
		// A second Settle (a deferred one after the explicit one) changes nothing.
		if _, err := res.Settle(context.Background(), Outcome{Terminal: "HALT", CostUSD: 9, CostKnown: true}); err != nil {
			t.Fatal(err)
		}
		if s2 := scopeOf(t, l, req("a"), "global"); s2 != s {
			t.Fatalf("second settle changed %+v to %+v", s, s2)
		}
	}},
	{"the same finding twice is in flight until settled", func(t *testing.T, url string) {
		l := open(t, url, roomy())
		res := mustReserve(t, l, req("a"))
		_, err := l.Reserve(context.Background(), req("a"))
		var fe *InFlightError
		if !errors.As(err, &fe) || !errors.Is(err, ErrInFlight) || fe.RunID != res.RunID {
			t.Fatalf("second reserve: %v, want in flight by %s", err, res.RunID)
		}
		if err := l.Check(context.Background(), req("a")); !errors.Is(err, ErrInFlight) {
			t.Fatalf("check: %v", err)
		}
		res.Settle(context.Background(), Outcome{Terminal: "HALT", Now: t0})
		mustReserve(t, l, req("a"))
	}},
	{"the same finding id in two repositories is two findings", func(t *testing.T, url string) {
		l := open(t, url, roomy())
		mustReserve(t, l, req("gh-12"))
		other := req("gh-12")
		other.Repo = "github.com/o/other"
		mustReserve(t, l, other)
		if _, err := l.Reserve(context.Background(), other); !errors.Is(err, ErrInFlight) {
			t.Fatalf("the same finding of the same repository again: %v, want in flight", err)
		}
	}},
	{"each day scope caps cost", func(t *testing.T, url string) {
		for _, sc := range []struct {
			scope string
			set   func(*Limits)
		}{
			{"global", func(l *Limits) { l.Global.CostUSD = 3 }},
			{"repo:github.com/o/r", func(l *Limits) { l.Repo.CostUSD = 3 }},
			{"actor:alice", func(l *Limits) { l.Actor.CostUSD = 3 }},
		} {
			t.Run(sc.scope, func(t *testing.T) {
				lim := roomy()
				sc.set(&lim)
				l := open(t, freshLike(t, url), lim)
				var held []*Reservation
				for i := range 3 {
					held = append(held, mustReserve(t, l, req(fmt.Sprint(i))))
				}
				_, err := l.Reserve(context.Background(), req("x"))
				ee := wantExhausted(t, err, sc.scope, "cost_usd")
				if !ee.ResetsAt.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
					t.Fatalf("resets %v, want next UTC midnight", ee.ResetsAt)
				}
				// Another repository and actor are not this scope's business.
				other := req("y")
				other.Repo, other.Actor = "github.com/o/other", "bob"
				if sc.scope != "global" {
					mustReserve(t, l, other)
				}
				// Two runs settle cheap: one cap's worth of room comes back.
				for _, r := range held[:2] {
					if _, err := r.Settle(context.Background(), Outcome{Terminal: "DRAFT-PR", CostUSD: 0.5, CostKnown: true, Turns: 1, TurnsKnown: true}); err != nil {
						t.Fatal(err)
					}
				}
				mustReserve(t, l, req("x"))
				_, err = l.Reserve(context.Background(), req("z"))
				wantExhausted(t, err, sc.scope, "cost_usd")
				// The next UTC day starts empty.
				next := req("z")
				next.Now = t0.Add(24 * time.Hour)
				mustReserve(t, l, next)
			})
		}
	}},
	{"run caps count every terminal, escalations too", func(t *testing.T, url string) {
		lim := roomy()
		lim.Actor.Runs = 2
		l := open(t, url, lim)
		for i := range 2 {
			r := mustReserve(t, l, req(fmt.Sprint(i)))
			if _, err := r.Settle(context.Background(), Outcome{Terminal: "ESCALATE", Reason: "high-risk", CostUSD: 0, CostKnown: true, Turns: 0, TurnsKnown: true}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := l.Reserve(context.Background(), req("2"))
		wantExhausted(t, err, "actor:alice", "runs")
		other := req("2")
		other.Actor = "bob"
		mustReserve(t, l, other)
	}},
	{"no cost data charges the run-count proxy: whole cost and turn caps", func(t *testing.T, url string) {
		lim := roomy()
		lim.Repo.Turns = 25 // two runs of 10 turns, not three
		l := open(t, url, lim)
		r := mustReserve(t, l, req("a"))
		if _, err := r.Settle(context.Background(), Outcome{Terminal: "DRAFT-PR"}); err != nil {
			t.Fatal(err)
		}
		s := scopeOf(t, l, req("a"), "repo:github.com/o/r")
		if s.SpentCostUSD != 1 || s.SpentTurns != 10 {
			t.Fatalf("unknown cost settled as %+v, want the caps charged", s)
		}
		mustReserve(t, l, req("b"))
		_, err := l.Reserve(context.Background(), req("c"))
		wantExhausted(t, err, "repo:github.com/o/r", "turns")
	}},
	{"a nonsensical settlement charges the caps", func(t *testing.T, url string) {
		l := open(t, url, roomy())
		for i, o := range []Outcome{
			{Terminal: "HALT", CostUSD: math.NaN(), CostKnown: true, Turns: -5, TurnsKnown: true},
			{Terminal: "HALT", CostUSD: -3, CostKnown: true, Turns: 1, TurnsKnown: true},
			{Terminal: "HALT", CostUSD: math.Inf(1), CostKnown: true, Turns: 1, TurnsKnown: true},
		} {
			r := mustReserve(t, l, req(fmt.Sprint(i)))
			if _, err := r.Settle(context.Background(), o); err != nil {
				t.Fatal(err)
			}
		}
		if s := scopeOf(t, l, req("a"), "global"); s.SpentCostUSD != 3 || s.SpentTurns != 12 {
			t.Fatalf("spent %+v, want each run charged its $1 cap (turns 10+1+1)", s)
		}
	}},
	{"concurrency caps per repository and global", func(t *testing.T, url string) {
		lim := roomy()
		lim.ConcurrentRepo, lim.ConcurrentGlobal = 1, 2
		l := open(t, url, lim)
		a := mustReserve(t, l, req("a"))
		_, err := l.Reserve(context.Background(), req("b"))
		ee := wantExhausted(t, err, "concurrent:repo:github.com/o/r", "in_flight")
		if !ee.ResetsAt.Equal(a.Expires) {
			t.Fatalf("resets %v, want the holder's lease end %v", ee.ResetsAt, a.Expires)
		}
		o1, o2 := req("c"), req("d")
		o1.Repo, o2.Repo = "github.com/o/one", "github.com/o/two"
		mustReserve(t, l, o1)
		_, err = l.Reserve(context.Background(), o2)
		wantExhausted(t, err, "concurrent:global", "in_flight")
		a.Settle(context.Background(), Outcome{Terminal: "HALT"})
		mustReserve(t, l, req("b"))
	}},
	{"an expired lease is charged its reservation and the finding freed", func(t *testing.T, url string) {
		lim := roomy()
		lim.Lease = time.Minute
		l := open(t, url, lim)
		old := mustReserve(t, l, req("a"))
		if err := old.Renew(context.Background(), t0.Add(50*time.Second)); err != nil {
			t.Fatalf("renew in time: %v", err)
		}
		if _, err := l.Reserve(context.Background(), with(req("a"), t0.Add(100*time.Second))); !errors.Is(err, ErrInFlight) {
			t.Fatalf("renewed lease: %v, want in flight", err)
		}
		later := with(req("a"), t0.Add(111*time.Second))
		mustReserve(t, l, later)
		s := scopeOf(t, l, later, "global")
		if s.SpentCostUSD != 1 || s.SpentTurns != 10 || s.ReservedCostUSD != 1 || s.Runs != 2 {
			t.Fatalf("after expiry: %+v, want the dead run charged its caps", s)
		}
		if _, err := old.Settle(context.Background(), Outcome{Terminal: "DRAFT-PR", CostUSD: 0.1, CostKnown: true}); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("settle after expiry: %v, want ErrLeaseLost", err)
		}
		if err := old.Renew(context.Background(), t0.Add(112*time.Second)); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("renew after expiry: %v, want ErrLeaseLost", err)
		}
		if s2 := scopeOf(t, l, later, "global"); s2 != s {
			t.Fatalf("a late settle changed the charge: %+v → %+v", s, s2)
		}
	}},
	{"settle says what it charged, and the ledger reads the same back", func(t *testing.T, url string) {
		l := open(t, url, roomy())
		for i, tc := range []struct {
			o     Outcome
			want  Charge
			label string
		}{
			{Outcome{Terminal: "DRAFT-PR", Reason: "fixed", CostUSD: 0.25, CostKnown: true, Turns: 3, TurnsKnown: true},
				Charge{CostUSD: 0.25, Turns: 3, CostKnown: true, TurnsKnown: true}, "metered"},
			{Outcome{Terminal: "HALT", Reason: "runner-unavailable", CostKnown: true, TurnsKnown: true},
				Charge{CostKnown: true, TurnsKnown: true}, "no agent started: nothing"},
			{Outcome{Terminal: "NOT-REPRO", Reason: "no-plan"},
				Charge{CostUSD: 1, Turns: 10}, "no meter: the caps"},
			{Outcome{Terminal: "HALT", Reason: "runner-failed", CostUSD: -1, CostKnown: true, Turns: 4, TurnsKnown: true},
				Charge{CostUSD: 1, Turns: 4, TurnsKnown: true}, "a negative cost: the cost cap"},
		} {
			r := req(fmt.Sprint("settle", i))
			r.Now = t0.Add(time.Duration(i) * time.Second)
			res := mustReserve(t, l, r)
			if st, err := l.Run(context.Background(), res.RunID); err != nil || st.State != "held" || st.CostUSD != 1 || st.Turns != 10 {
				t.Fatalf("%s: in flight the ledger reads %+v, %v; want held at its reservation", tc.label, st, err)
			}
			got, err := res.Settle(context.Background(), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s: Settle charged %+v, want %+v", tc.label, got, tc.want)
			}
			st, err := l.Run(context.Background(), res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			want := RunState{RunID: res.RunID, State: "settled", Terminal: tc.o.Terminal, Reason: tc.o.Reason, CostUSD: tc.want.CostUSD, Turns: tc.want.Turns}
			if *st != want {
				t.Errorf("%s: the ledger reads back %+v, want %+v", tc.label, *st, want)
			}
		}
		// Every run counts one against the run caps, whatever it was charged.
		if s := scopeOf(t, l, req("x"), "global"); s.Runs != 4 || s.SpentCostUSD != 2.25 || s.SpentTurns != 17 {
			t.Fatalf("global: %+v, want 4 runs, $2.25, 17 turns", s)
		}
		if _, err := l.Run(context.Background(), "never-admitted"); !errors.Is(err, ErrNoRun) {
			t.Fatalf("Run of a run the ledger never saw: %v, want ErrNoRun", err)
		}
	}},
	{"a run the ledger closed reads back as charged its reservation", func(t *testing.T, url string) {
		lim := roomy()
		lim.Lease = 10 * time.Second
		l := open(t, url, lim)
		old := mustReserve(t, l, req("a"))
		mustReserve(t, l, with(req("b"), t0.Add(time.Minute))) // sweeps a's lease
		st, err := l.Run(context.Background(), old.RunID)
		if err != nil || st.State != "expired" || st.CostUSD != 1 || st.Turns != 10 || st.Reason != "lease-expired" {
			t.Fatalf("expired run reads %+v, %v; want expired at its reservation", st, err)
		}
		if _, err := old.Settle(context.Background(), Outcome{Terminal: "HALT", CostKnown: true, TurnsKnown: true}); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("settle after expiry: %v, want ErrLeaseLost", err)
		}
		if st2, err := l.Run(context.Background(), old.RunID); err != nil || *st2 != *st {
			t.Fatalf("a late settle changed the record: %+v → %+v (%v)", st, st2, err)
		}
	}},
	{"missing configuration is unreadable, never unlimited", func(t *testing.T, url string) {
		l := open(t, url, Limits{})
		_, err := l.Reserve(context.Background(), req("a"))
		var ue *UnreadableError
		if !errors.As(err, &ue) || !errors.Is(err, ErrBudgetUnreadable) {
			t.Fatalf("zero limits: %v", err)
		}
		l2 := open(t, url, roomy())
		r := req("a")
		r.RunCostUSD = 0
		if _, err := l2.Reserve(context.Background(), r); !errors.Is(err, ErrBudgetUnreadable) {
			t.Fatalf("no run cost cap: %v", err)
		}
		if err := l2.Check(context.Background(), r); !errors.Is(err, ErrBudgetUnreadable) {
			t.Fatalf("check without a run cost cap: %v", err)
		}
	}},
	{"check reserves nothing", func(t *testing.T, url string) {
		lim := roomy()
		lim.Global.CostUSD = 1
		l := open(t, url, lim)
		for range 3 {
			if err := l.Check(context.Background(), req("a")); err != nil {
				t.Fatal(err)
			}
		}
		if s := scopeOf(t, l, req("a"), "global"); s.Runs != 0 || s.ReservedCostUSD != 0 {
			t.Fatalf("check left %+v", s)
		}
		mustReserve(t, l, req("a"))
		wantExhausted(t, l.Check(context.Background(), req("b")), "global", "cost_usd")
	}},
	{"eight concurrent reservations against a cap of three admit three", func(t *testing.T, url string) {
		lim := roomy()
		lim.Global.CostUSD = 3
		l := open(t, url, lim)
		l2 := open(t, url, lim) // a second handle, its own connections
		results := race(8, func(i int) error {
			h := l
			if i%2 == 1 {
				h = l2
			}
			_, err := h.Reserve(context.Background(), req(fmt.Sprint(i)))
			return err
		})
		ok, exhausted := tally(t, results)
		if ok != 3 || exhausted != 5 {
			t.Fatalf("admitted %d, exhausted %d; want 3 and 5", ok, exhausted)
		}
		if s := scopeOf(t, l, req("a"), "global"); s.ReservedCostUSD+s.SpentCostUSD > 3 {
			t.Fatalf("over the cap: %+v", s)
		}
	}},
	{"the same finding eight times at once admits one", func(t *testing.T, url string) {
		l := open(t, url, roomy())
		results := race(8, func(int) error {
			_, err := l.Reserve(context.Background(), req("same"))
			return err
		})
		ok, inflight := 0, 0
		for _, err := range results {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrInFlight):
				inflight++
			default:
				t.Fatalf("unexpected: %v", err)
			}
		}
		if ok != 1 || inflight != 7 {
			t.Fatalf("admitted %d, in flight %d; want 1 and 7", ok, inflight)
		}
	}},
}

func with(r Request, now time.Time) Request { r.Now = now; return r }

// freshLike returns a new empty store of the same kind as url.
func freshLike(t *testing.T, url string) string {
	if filepath.IsAbs(url) {
		return filepath.Join(t.TempDir(), "state.db")
	}
	return pgtest.URL(t)
}

// race runs n calls at once, released together.
func race(n int, f func(i int) error) []error {
	var wg sync.WaitGroup
	start := make(chan struct{})
	out := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}

func tally(t *testing.T, results []error) (ok, exhausted int) {
	t.Helper()
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrBudgetExhausted):
			exhausted++
		default:
			t.Fatalf("unexpected: %v", err)
		}
	}
	return ok, exhausted
}
