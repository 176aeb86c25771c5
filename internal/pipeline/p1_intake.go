package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// intake is P1: the wall clock is already armed; take the per-finding lock,
// sweep what crashed runs left, and refuse to stack on work in flight.
func (r *run) intake(ctx context.Context) *Outcome {
	// Redact first: every later use of the report — prompts, PR title, the
	// run report — sees only the scrubbed text.
	fin := *r.fin
	fin.Labels, fin.Comments = slices.Clone(fin.Labels), slices.Clone(fin.Comments)
	for _, f := range []*string{&fin.Title, &fin.Body} {
		v, err := r.scrubInbound(*f)
		if err != nil {
			return stop(Escalate, ReasonLeak, err.Error())
		}
		*f = v
	}
	for _, list := range [][]string{fin.Labels, fin.Comments} {
		for i := range list {
			v, err := r.scrubInbound(list[i])
			if err != nil {
				return stop(Escalate, ReasonLeak, err.Error())
			}
			list[i] = v
		}
	}
	r.fin = &fin
	r.rep.Finding.Title = fin.Title
	// A clone poisoned by an earlier finding's config drift runs no more git.
	if err := r.s.Repo.Poisoned(); err != nil {
		return stop(Escalate, ReasonPoisoned, err.Error())
	}
	if err := realDir(filepath.Join(r.stateDir, "locks")); err != nil {
		return stop(Halt, ReasonCheckError, "per-finding lock: "+err.Error())
	}
	lock, err := ledger.TryLock(filepath.Join(r.stateDir, "locks"), r.fin.ID)
	if errors.Is(err, ledger.ErrHeld) {
		return stop(Halt, ReasonInFlight, "another fixrail run holds finding "+r.fin.ID)
	}
	if err != nil {
		return stop(Halt, ReasonCheckError, "per-finding lock: "+err.Error())
	}
	r.lock = lock
	r.gate("P1", "finding-lock", "pass", "finding "+r.fin.ID)

	r.sweepRunDirs()
	for _, d := range pathguard.SweepStale(r.p.TempDir) {
		r.note("sweep", "removed "+filepath.Base(d)+", left by a process that is gone")
	}

	exists, err := r.s.Repo.BranchExists(ctx, r.branch)
	if err != nil {
		return stop(Halt, ReasonCheckError, "in-flight check: "+err.Error())
	}
	if exists {
		ahead, err := r.s.Repo.CommitsAhead(ctx, r.branch, r.s.BaseSHA)
		if err != nil {
			return stop(Halt, ReasonCheckError, "in-flight check: "+err.Error())
		}
		if ahead > 0 {
			r.gate("P1", "in-flight", "fail", fmt.Sprintf("%s holds %d commit(s) not on %s", r.branch, ahead, r.s.Base))
			return stop(Halt, ReasonInFlight, fmt.Sprintf("branch %s already holds %d commit(s) not on %s; review or delete it first", r.branch, ahead, r.s.Base))
		}
		if r.oldHead, err = r.s.Repo.RevParse(ctx, "refs/heads/"+r.branch); err != nil {
			return stop(Halt, ReasonCheckError, "in-flight check: "+err.Error())
		}
	}
	r.gate("P1", "in-flight", "pass", "no unmerged work on "+r.branch)
	return nil
}

func (r *run) note(name, detail string) {
	r.log.Emit(events.Event{Type: "note", Name: name, Detail: detail})
}
