package forgetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/forge"
	gh "github.com/fixrail/fixrail/internal/forge/github"
)

// The interfaces the pipeline will hold; every backend must satisfy them.
type publisher interface {
	Publish(context.Context, forge.PR) (forge.Published, error)
}
type protector interface {
	AssertProtected(context.Context, string, []string) (forge.Protection, error)
}
type notifier interface {
	Notify(context.Context, forge.Notice) error
}
type worker interface {
	OpenWork(context.Context, forge.Subject) (forge.Work, error)
}
type checker interface {
	WaitChecks(context.Context, forge.Published, time.Time, []forge.CheckRef) (forge.CIResult, error)
}
type backend interface {
	publisher
	protector
	notifier
	worker
	checker
}

var (
	_ backend = (*Fake)(nil)
	_ backend = (*forge.Local)(nil)
	_ backend = (*gh.Forge)(nil)
)

type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) finish() []string {
	for _, f := range r.cleanups {
		f()
	}
	return r.errs
}

func pr() forge.PR {
	return forge.PR{ID: "gh-1", Base: "main", Head: "fixrail/gh-1", Draft: true, Commit: strings.Repeat("a", 40)}
}

func TestFake(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(f *Fake)
		want []string
	}{
		{name: "expected calls", run: func(f *Fake) {
			f.ExpectAssertProtected(Protected).ExpectOpenWork(NoWork).ExpectPublish(Published(3))
			f.AssertProtected(ctx, "main", nil)
			f.OpenWork(ctx, forge.Subject{ID: "gh-1"})
			if pub, err := f.Publish(ctx, pr()); err != nil || pub.Number != 3 {
				t.Errorf("Publish = %+v, %v", pub, err)
			}
		}},
		{name: "unexpected call", want: []string{"unexpected call Notify"}, run: func(f *Fake) {
			if err := f.Notify(ctx, forge.Notice{ID: "gh-1"}); !errors.Is(err, ErrUnexpected) {
				t.Errorf("Notify = %v", err)
			}
		}},
		{name: "expected, never made", want: []string{"1 more call(s) to WaitChecks"}, run: func(f *Fake) {
			f.ExpectWaitChecks(func(forge.Published, time.Time, []forge.CheckRef) (forge.CIResult, error) {
				return forge.CIResult{}, nil
			})
		}},
		{name: "ready PR asked for", want: []string{"not a draft"}, run: func(f *Fake) {
			f.ExpectPublish(Published(1))
			p := pr()
			p.Draft = false
			f.Publish(ctx, p)
		}},
		{name: "head is the base", want: []string{"does not own"}, run: func(f *Fake) {
			f.ExpectPublish(Published(1))
			p := pr()
			p.Head = "main"
			f.Publish(ctx, p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			f := New(rec)
			tc.run(f)
			errs := rec.finish()
			if len(errs) != len(tc.want) {
				t.Fatalf("failures = %q, want %q", errs, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i], w) {
					t.Errorf("failure %q, want %q", errs[i], w)
				}
			}
		})
	}
}
