package ledger

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRailsContract, on SQLite and Postgres: a run records the
// configuration it started with and gets the repository's previous one
// back; the same hash adds no row; other repositories are apart; a run
// that is no longer held records nothing; Rails reads the history newest
// first, as another handle sees it.
func TestRailsContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url := b.fresh(t)
			l := open(t, url, roomy())
			ctx := context.Background()
			record := func(finding, repo, sha string, at time.Time) (*RailsRecord, error) {
				r := req(finding)
				r.Repo, r.Now = repo, at
				res := mustReserve(t, l, r)
				defer res.Settle(ctx, Outcome{Terminal: "HALT", Now: at})
				return res.RecordRails(ctx, sha, []byte(`{"sha":"`+sha+`"}`), at)
			}
			const repo = "github.com/o/r"
			if prev, err := record("a", repo, "one", t0); err != nil || prev != nil {
				t.Fatalf("first record: prev %+v, %v; want none", prev, err)
			}
			prev, err := record("b", repo, "one", t0.Add(time.Minute))
			if err != nil || prev == nil || prev.SHA256 != "one" || string(prev.Rails) != `{"sha":"one"}` {
				t.Fatalf("same config again: prev %+v, %v; want the first", prev, err)
			}
			if prev, err := record("c", repo, "two", t0.Add(2*time.Minute)); err != nil || prev == nil || prev.SHA256 != "one" {
				t.Fatalf("a changed config: prev %+v, %v; want the first", prev, err)
			}
			if prev, err := record("d", "github.com/o/other", "two", t0.Add(3*time.Minute)); err != nil || prev != nil {
				t.Fatalf("another repository: prev %+v, %v; want none", prev, err)
			}
			// A run whose reservation is gone records nothing.
			res := mustReserve(t, l, req("e"))
			if _, err := res.Settle(ctx, Outcome{Terminal: "HALT", Now: t0}); err != nil {
				t.Fatal(err)
			}
			if _, err := res.RecordRails(ctx, "three", []byte(`{}`), t0); !errors.Is(err, ErrLeaseLost) {
				t.Errorf("record after settling: %v, want ErrLeaseLost", err)
			}
			other := open(t, url, roomy())
			got, err := other.Rails(ctx, repo, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].SHA256 != "two" || got[1].SHA256 != "one" {
				t.Fatalf("history %+v, want two then one (the repeat added no row)", got)
			}
			if !got[1].Recorded.Equal(t0) {
				t.Errorf("first record at %v, want %v", got[1].Recorded, t0)
			}
		})
	}
}
