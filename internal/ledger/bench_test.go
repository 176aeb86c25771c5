package ledger

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkPrecheck measures the P1 precheck (Check: the whole
// check-and-reserve transaction, rolled back) against one bare
// BEGIN/COMMIT on the same database, alternating the two so that both see
// the same machine load. It reports the median of each and their ratio;
// the day holds 200 finished runs and 3 in flight, a busy day's worth.
//
//	go test -run '^$' -bench Precheck -benchtime 300x ./internal/ledger/
func BenchmarkPrecheck(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			url := be.fresh(b)
			l, err := Open(context.Background(), url, b.TempDir(), roomy())
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			s := l.(*store)
			ctx := context.Background()
			for i := range 203 {
				r := req(fmt.Sprint("seed", i))
				r.Now = t0.Add(time.Duration(i) * time.Second)
				res, err := l.Reserve(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				if i < 200 {
					if _, err := res.Settle(ctx, Outcome{Terminal: "DRAFT-PR", CostUSD: 0.3, CostKnown: true, Turns: 5, TurnsKnown: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
			check := with(req("bench"), t0.Add(time.Hour))
			var pre, bare []time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if err := l.Check(ctx, check); err != nil {
					b.Fatal(err)
				}
				pre = append(pre, time.Since(start))
				start = time.Now()
				tx, err := s.db.BeginTx(ctx, nil) // SQLite: BEGIN IMMEDIATE (the DSN's _txlock); Postgres: BEGIN
				if err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				bare = append(bare, time.Since(start))
			}
			b.StopTimer()
			mp, mb := median(pre), median(bare)
			b.ReportMetric(float64(mp.Microseconds()), "µs-precheck-median")
			b.ReportMetric(float64(mb.Microseconds()), "µs-bare-tx-median")
			b.ReportMetric(float64(mp)/float64(mb), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
