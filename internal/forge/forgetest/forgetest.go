// Package forgetest is a recording fake forge for pipeline tests. It
// implements every forge capability (Publish, AssertProtected, CheckAccess,
// Notify, OpenWork, FixFiles, WaitChecks); a test says which calls it expects and what each
// returns. A call that was not expected fails the test and returns
// ErrUnexpected; an expected call never made fails it at the end. Publish
// also fails the test when asked for anything the invariants forbid (a PR
// that is not a draft, a head outside fixrail/ or equal to the base).
package forgetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/forge"
)

// ErrUnexpected is what an unexpected call returns.
var ErrUnexpected = errors.New("forgetest: unexpected call")

// Call is one call the fake received, with its argument.
type Call struct {
	Method string
	// Arg is the forge.PR, forge.Notice, forge.Subject, forge.Published,
	// forge.AccessRequest or base branch the call was made with.
	Arg any
}

// Fake is the recording forge. Create it with New.
type Fake struct {
	t     testing.TB
	mu    sync.Mutex
	exp   map[string][]any // method → FIFO of reply functions
	calls []Call
}

// New returns a fake that checks its expectations when t ends.
func New(t testing.TB) *Fake {
	f := &Fake{t: t, exp: map[string][]any{}}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for m, q := range f.exp {
			if len(q) > 0 {
				t.Errorf("forgetest: expected %d more call(s) to %s, never made", len(q), m)
			}
		}
	})
	return f
}

func (f *Fake) expect(method string, fn any) *Fake {
	f.mu.Lock()
	f.exp[method] = append(f.exp[method], fn)
	f.mu.Unlock()
	return f
}

// next records a call and pops its reply, or fails the test.
func (f *Fake) next(method string, arg any) (any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, Call{method, arg})
	q := f.exp[method]
	if len(q) == 0 {
		f.t.Errorf("forgetest: unexpected call %s(%+v)", method, arg)
		return nil, false
	}
	f.exp[method] = q[1:]
	return q[0], true
}

// Calls returns every call so far, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// ExpectPublish expects one Publish; fn makes its reply.
func (f *Fake) ExpectPublish(fn func(forge.PR) (forge.Published, error)) *Fake {
	return f.expect("Publish", fn)
}

// ExpectAssertProtected expects one AssertProtected.
func (f *Fake) ExpectAssertProtected(fn func(base string, requiredChecks []string) (forge.Protection, error)) *Fake {
	return f.expect("AssertProtected", fn)
}

// ExpectCheckAccess expects one CheckAccess.
func (f *Fake) ExpectCheckAccess(fn func(forge.AccessRequest) (forge.Access, error)) *Fake {
	return f.expect("CheckAccess", fn)
}

// ExpectNotify expects one Notify.
func (f *Fake) ExpectNotify(fn func(forge.Notice) error) *Fake {
	return f.expect("Notify", fn)
}

// ExpectOpenWork expects one OpenWork.
func (f *Fake) ExpectOpenWork(fn func(forge.Subject) (forge.Work, error)) *Fake {
	return f.expect("OpenWork", fn)
}

// ExpectFixFiles expects one FixFiles.
func (f *Fake) ExpectFixFiles(fn func() ([]forge.OpenFix, error)) *Fake {
	return f.expect("FixFiles", fn)
}

// ExpectWaitChecks expects one WaitChecks.
func (f *Fake) ExpectWaitChecks(fn func(pub forge.Published, deadline time.Time, required []forge.CheckRef) (forge.CIResult, error)) *Fake {
	return f.expect("WaitChecks", fn)
}

// Published is a reply for ExpectPublish: the PR as #number on a fake URL.
func Published(number int) func(forge.PR) (forge.Published, error) {
	return func(pr forge.PR) (forge.Published, error) {
		return forge.Published{Location: fmt.Sprintf("https://forge.invalid/pull/%d", number), Branch: pr.Head, Commit: pr.Commit, Number: number}, nil
	}
}

// Protected is a reply for ExpectAssertProtected: a ruleset requires a PR.
func Protected(base string, _ []string) (forge.Protection, error) {
	return forge.Protection{Branch: base, Applicable: true, RequiresPR: true, Sources: []string{"ruleset forgetest#1"}}, nil
}

// Permitted is a reply for ExpectCheckAccess: every probe passed.
func Permitted(forge.AccessRequest) (forge.Access, error) {
	return forge.Access{Applicable: true, Proofs: []forge.AccessProof{
		{Permission: "contents: write", Detail: "forgetest"},
		{Permission: "pull-requests: write", Detail: "forgetest"},
		{Permission: "issues: write", Detail: "forgetest"},
	}}, nil
}

// NoCI is a reply for ExpectWaitChecks: no CI configured.
func NoCI(pub forge.Published, _ time.Time, _ []forge.CheckRef) (forge.CIResult, error) {
	return forge.CIResult{State: forge.CINone, HeadSHA: pub.Commit}, nil
}

// NoFixes is a reply for ExpectFixFiles: no open fix.
func NoFixes() ([]forge.OpenFix, error) { return nil, nil }

// NoWork is a reply for ExpectOpenWork: nothing open.
func NoWork(forge.Subject) (forge.Work, error) { return forge.Work{}, nil }

func (f *Fake) Publish(_ context.Context, pr forge.PR) (forge.Published, error) {
	// The invariants hold whatever the test expects.
	if err := forge.CheckHead(pr); err != nil {
		f.t.Errorf("forgetest: Publish(%s → %s, draft %v): %v", pr.Head, pr.Base, pr.Draft, err)
	}
	fn, ok := f.next("Publish", pr)
	if !ok {
		return forge.Published{}, ErrUnexpected
	}
	return fn.(func(forge.PR) (forge.Published, error))(pr)
}

func (f *Fake) AssertProtected(_ context.Context, base string, requiredChecks []string) (forge.Protection, error) {
	fn, ok := f.next("AssertProtected", base)
	if !ok {
		return forge.Protection{}, ErrUnexpected
	}
	return fn.(func(string, []string) (forge.Protection, error))(base, requiredChecks)
}

func (f *Fake) CheckAccess(_ context.Context, req forge.AccessRequest) (forge.Access, error) {
	fn, ok := f.next("CheckAccess", req)
	if !ok {
		return forge.Access{}, ErrUnexpected
	}
	return fn.(func(forge.AccessRequest) (forge.Access, error))(req)
}

func (f *Fake) Notify(_ context.Context, n forge.Notice) error {
	fn, ok := f.next("Notify", n)
	if !ok {
		return ErrUnexpected
	}
	return fn.(func(forge.Notice) error)(n)
}

func (f *Fake) OpenWork(_ context.Context, s forge.Subject) (forge.Work, error) {
	fn, ok := f.next("OpenWork", s)
	if !ok {
		return forge.Work{}, ErrUnexpected
	}
	return fn.(func(forge.Subject) (forge.Work, error))(s)
}

func (f *Fake) FixFiles(context.Context) ([]forge.OpenFix, error) {
	fn, ok := f.next("FixFiles", nil)
	if !ok {
		return nil, ErrUnexpected
	}
	return fn.(func() ([]forge.OpenFix, error))()
}

func (f *Fake) WaitChecks(_ context.Context, pub forge.Published, deadline time.Time, required []forge.CheckRef) (forge.CIResult, error) {
	fn, ok := f.next("WaitChecks", pub)
	if !ok {
		return forge.CIResult{}, ErrUnexpected
	}
	return fn.(func(forge.Published, time.Time, []forge.CheckRef) (forge.CIResult, error))(pub, deadline, required)
}
