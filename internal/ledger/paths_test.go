package ledger

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestPathHolds is the path-hold contract on both stores: all or none,
// released when the run ends however it ends, keyed by repository, and
// exclusive between two handles on one store (two machines).
func TestPathHolds(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(t *testing.T, url string)
	}{
		{"a held path refuses another finding's run, which then holds nothing", func(t *testing.T, url string) {
			l := open(t, url, roomy())
			a, b, c := mustReserve(t, l, req("a")), mustReserve(t, l, req("b")), mustReserve(t, l, req("c"))
			if err := a.HoldPaths(ctx, []string{"src/x.py", "src/y.py"}, t0); err != nil {
				t.Fatal(err)
			}
			err := b.HoldPaths(ctx, []string{"src/z.py", "src/y.py", "src/y.py"}, t0)
			var pe *PathsHeldError
			if !errors.As(err, &pe) || !errors.Is(err, ErrPathsHeld) {
				t.Fatalf("b: %v, want paths held", err)
			}
			if len(pe.Holds) != 1 || pe.Holds[0].Path != "src/y.py" || pe.Holds[0].RunID != a.RunID || pe.Holds[0].Finding != "a" || !pe.Holds[0].Since.Equal(t0) {
				t.Fatalf("holds = %+v, want src/y.py by %s", pe.Holds, a.RunID)
			}
			// All or none: b did not keep src/z.py.
			if err := c.HoldPaths(ctx, []string{"src/z.py"}, t0); err != nil {
				t.Fatalf("c on the path b was refused with: %v", err)
			}
			// Holding again, or more, is the run's own business.
			if err := a.HoldPaths(ctx, []string{"src/x.py", "src/w.py"}, t0); err != nil {
				t.Fatalf("a again: %v", err)
			}
		}},
		{"settling releases the run's paths", func(t *testing.T, url string) {
			l := open(t, url, roomy())
			a, b := mustReserve(t, l, req("a")), mustReserve(t, l, req("b"))
			mustHold(t, a, "src/x.py")
			if err := b.HoldPaths(ctx, []string{"src/x.py"}, t0); !errors.Is(err, ErrPathsHeld) {
				t.Fatalf("b before a settled: %v", err)
			}
			if _, err := a.Settle(ctx, Outcome{Terminal: "DRAFT-PR", Now: t0}); err != nil {
				t.Fatal(err)
			}
			mustHold(t, b, "src/x.py")
			if err := a.HoldPaths(ctx, []string{"src/q.py"}, t0); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("a settled, holding: %v, want lease lost", err)
			}
		}},
		{"a run whose lease ran out holds nothing", func(t *testing.T, url string) {
			lim := roomy()
			lim.Lease = time.Minute
			l := open(t, url, lim)
			a, b := mustReserve(t, l, req("a")), mustReserve(t, l, req("b"))
			mustHold(t, a, "src/x.py")
			if err := b.Renew(ctx, t0.Add(50*time.Second)); err != nil {
				t.Fatal(err)
			}
			if err := b.HoldPaths(ctx, []string{"src/x.py"}, t0.Add(55*time.Second)); !errors.Is(err, ErrPathsHeld) {
				t.Fatalf("b inside a's lease: %v", err)
			}
			if err := b.HoldPaths(ctx, []string{"src/x.py"}, t0.Add(61*time.Second)); err != nil {
				t.Fatalf("b after a's lease ended: %v", err)
			}
		}},
		{"the same path in two repositories is two paths", func(t *testing.T, url string) {
			l := open(t, url, roomy())
			a := mustReserve(t, l, req("a"))
			other := req("a")
			other.Repo = "github.com/o/other"
			b := mustReserve(t, l, other)
			mustHold(t, a, "src/x.py")
			mustHold(t, b, "src/x.py")
		}},
		{"two handles racing for one path: exactly one holds it", func(t *testing.T, url string) {
			l1, l2 := open(t, url, roomy()), open(t, url, roomy())
			const n = 6
			var res []*Reservation
			for i := range n {
				l := l1
				if i%2 == 1 {
					l = l2
				}
				res = append(res, mustReserve(t, l, req(string(rune('a'+i)))))
			}
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i, r := range res {
				wg.Go(func() { errs[i] = r.HoldPaths(ctx, []string{"src/shared.py", "src/own" + r.RunID}, t0) })
			}
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, ErrPathsHeld):
					t.Errorf("run %d: %v", i, err)
				}
			}
			if won != 1 {
				t.Fatalf("%d runs hold src/shared.py at once, want 1: %v", won, errs)
			}
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, b.fresh(t)) })
			}
		})
	}
}

func mustHold(t *testing.T, r *Reservation, paths ...string) {
	t.Helper()
	if err := r.HoldPaths(context.Background(), paths, t0); err != nil {
		t.Fatalf("hold %v: %v", paths, err)
	}
}
