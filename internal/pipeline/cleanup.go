package pipeline

import (
	"context"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// cleanup removes the worktree and the run's disposable directory on every
// path out of Run — success, escalation, halt, panic, signal — and then
// releases the finding's lock. It runs on a fresh context because the run's
// own may already be cancelled.
func (r *run) cleanup() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.parent), 30*time.Second)
	defer cancel()
	if r.wt != nil {
		remove := r.s.Repo.RemoveWorktree
		if r.s.Repo.Poisoned() != nil {
			// A poisoned clone's git is not run again: its config may now
			// name commands. The worktree goes without git.
			remove = r.s.Repo.DiscardWorktree
		}
		if err := remove(ctx, r.wt.Dir); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, "remove worktree: "+err.Error())
		}
	}
	if r.dir != "" {
		if err := pathguard.RemoveDisposable(r.dir); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, "remove run dir: "+err.Error())
		}
	}
	if err := r.lock.Release(); err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "release lock: "+err.Error())
	}
}
