package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/risk"
)

// intake is P1: the wall clock is already armed; take the per-finding lock,
// sweep what crashed runs left, and refuse to stack on work in flight.
func (r *run) intake(ctx context.Context) *Outcome {
	// The budget first, before anything else can cost anything: the run's
	// worst case is reserved against every scope, or the run HALTs. An
	// unreadable ledger is an exceeded budget.
	if o := r.reserve(ctx); o != nil {
		return o
	}
	// Redact next: every later use of the report — prompts, PR title, the
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
	r.rules = risk.NewRules(r.cfg.Risk, r.s.Policy)
	access := r.p.Access
	if access == "" {
		access = risk.AccessOperator
	}
	r.risk = r.rules.Intake(risk.Report{Title: fin.Title, Body: fin.Body, Labels: fin.Labels, Access: access})
	r.rep.Risk = &r.risk
	r.gate("P1", "risk", verdictOf(!r.risk.High()), "intake: "+r.risk.Level.String()+riskWhy(r.risk))
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

// reserve admits the run in the ledger.
func (r *run) reserve(ctx context.Context) *Outcome {
	lg, err := ledger.OpenConfig(ctx, r.cfg, r.stateDir)
	if err != nil {
		r.gate("P1", "budget", "error", err.Error())
		return stop(Halt, ReasonBudgetUnreadable, "budget: "+err.Error())
	}
	r.ledger = lg
	actor := r.p.Actor
	if actor == "" {
		actor = ledger.LocalActor()
	}
	req := ledger.RequestFor(r.cfg, ledger.RepoKey(r.p.ForgeRepo, r.s.Repo.Top()), r.fin.ID, actor, time.Now())
	req.RunID = r.rep.RunID
	res, err := lg.Reserve(ctx, req)
	if err != nil {
		if cerr := lg.Close(); cerr != nil {
			r.rep.Warnings = append(r.rep.Warnings, "ledger close: "+cerr.Error())
		}
		r.gate("P1", "budget", "fail", err.Error())
		if errors.Is(err, ledger.ErrInFlight) {
			return stop(Halt, ReasonInFlight, "another fixrail run holds finding "+r.fin.ID+": "+err.Error())
		}
		return stop(Halt, ledger.Reason(err), "budget: "+err.Error())
	}
	r.res = res
	r.gate("P1", "budget", "pass", fmt.Sprintf("reserved $%g and %d turns (until %s)", res.CostUSD, res.Turns, res.Expires.UTC().Format(time.RFC3339)))
	return nil
}

func verdictOf(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func riskWhy(s risk.Score) string {
	if why := s.Reason(); why != "" {
		return " (" + why + ")"
	}
	return ""
}

func (r *run) note(name, detail string) {
	r.log.Emit(events.Event{Type: "note", Name: name, Detail: detail})
}
