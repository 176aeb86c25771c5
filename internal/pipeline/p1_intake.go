package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/risk"
)

// intake is P1: the wall clock is already armed; reserve the budget,
// redact the finding, score its risk, take the per-finding lock, sweep what
// crashed runs left, refuse to stack on work in flight, and check the
// forge's credential.
func (r *run) intake(ctx context.Context) *Outcome {
	// The budget first, before anything else can cost anything: the run's
	// worst case is reserved against every scope, or the run HALTs. An
	// unreadable ledger is an exceeded budget.
	if o := r.check(ctx, "P1", r.budgetGate(), nil); o != nil {
		return o
	}
	// Redact next: every later use of the finding — prompts, PR title, the
	// run report — sees only the scrubbed text, every untrusted field of it.
	fin, err := r.fin.Map(r.scrubInbound)
	if err != nil {
		return stop(Escalate, ReasonLeak, err.Error())
	}
	r.fin = fin
	r.rep.Finding.Title = fin.Title
	r.rules = risk.NewRules(r.cfg.Risk, r.pol)
	access := r.p.Access
	if access == "" {
		access = risk.AccessOperator
	}
	var names []string
	if fin.Evidence != nil && fin.Evidence.Package != "" {
		names = []string{fin.Evidence.Package}
	}
	r.risk = r.rules.Intake(risk.Report{Title: fin.Title, Body: fin.Body, Labels: fin.Labels, Access: access, Implied: r.typ.Implied, Names: names})
	r.rep.Risk = &r.risk
	r.gate("P1", "risk", verdictOf(!r.risk.High()), "intake: "+r.risk.Level.String()+riskWhy(r.risk))
	// A clone poisoned by an earlier finding's config drift runs no more git.
	if err := r.s.Repo.Poisoned(); err != nil {
		return stop(Escalate, ReasonPoisoned, err.Error())
	}
	if o := r.checkSandboxPlans(); o != nil {
		return o
	}
	if o := r.check(ctx, "P1", r.lockGate(), nil); o != nil {
		return o
	}
	r.sweepRunDirs()
	for _, d := range pathguard.SweepStale(r.p.TempDir) {
		r.note("sweep", "removed "+filepath.Base(d)+", left by a process that is gone")
	}
	return r.checks(ctx, "P1", []*gates.Gate{r.inFlightGate(), r.protectionGate(), r.openWorkGate(), r.accessGate()}, nil)
}

// accessGate probes, before any agent runs, that the forge's credential
// can push the finding's branch, open a pull request and comment on the
// finding's issue — with requests that write nothing — so a missing
// permission HALTs here, not at P5 after the model was paid. After
// open-work: a branch left on the remote is in-flight, not a refused push.
func (r *run) accessGate() *gates.Gate {
	return &gates.Gate{
		Name:   "token-access",
		Doc:    "the forge's credential can push fixrail/<id>, open a pull request and comment on the issue (probes that write nothing)",
		Reason: ReasonTokenLacksPermission,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			a, err := r.p.Forge.CheckAccess(ctx, forge.AccessRequest{Base: r.s.Base, BaseSHA: r.s.BaseSHA, Branch: r.branch, Issue: r.fin.Issue})
			if errors.Is(err, forge.ErrTokenLacksPermission) {
				// The check decided: the token lacks what it names.
				return gates.Verdict{Detail: err.Error()}, nil
			}
			if err != nil {
				return gates.Verdict{}, err
			}
			if !a.Applicable {
				return pass("not applicable: the forge pushes nothing")
			}
			return pass(a.Summary())
		},
	}
}

// protectionGate asserts, before any agent runs, that the base branch
// cannot be written without a reviewed pull request; a forge that pushes
// nothing (the local outbox) has nothing to assert.
func (r *run) protectionGate() *gates.Gate {
	return &gates.Gate{
		Name:   "branch-protection",
		Doc:    "the base branch requires a pull request before merging (where the forge pushes)",
		Reason: ReasonNoBranchProtection,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			required, err := forge.ParseCheckRefs(r.cfg.Forge.RequiredChecks)
			if err != nil {
				return gates.Verdict{}, fmt.Errorf("forge.required_checks: %w", err)
			}
			p, err := r.p.Forge.AssertProtected(ctx, r.s.Base, forge.CheckNames(required))
			if err != nil {
				return gates.Verdict{}, err
			}
			r.protect = p
			if !p.Applicable {
				return pass("not applicable: the forge pushes nothing")
			}
			return pass(fmt.Sprintf("%s requires a pull request (%s)", p.Branch, strings.Join(p.Sources, ", ")))
		},
	}
}

// budgetGate admits the run in the ledger.
func (r *run) budgetGate() *gates.Gate {
	return &gates.Gate{
		Name:   "budget",
		Doc:    "the run's worst case is reserved against every budget scope; an unreadable ledger is an exhausted one",
		Reason: ReasonBudgetExhausted,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			lg, err := ledger.OpenConfig(ctx, r.cfg, r.stateDir)
			if err != nil {
				return fail(ReasonBudgetUnreadable, err.Error())
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
				if errors.Is(err, ledger.ErrInFlight) {
					return fail(ReasonInFlight, "another fixrail run holds finding "+r.fin.ID+": "+err.Error())
				}
				return fail(ledger.Reason(err), err.Error())
			}
			r.res = res
			r.recordRails(ctx)
			return pass(fmt.Sprintf("reserved $%g and %d turns (until %s)", res.CostUSD, res.Turns, res.Expires.UTC().Format(time.RFC3339)))
		},
	}
}

// lockGate takes the per-finding lock for the rest of the run.
func (r *run) lockGate() *gates.Gate {
	return &gates.Gate{
		Name:   "finding-lock",
		Doc:    "no other run on this machine works on the finding",
		Reason: ReasonInFlight,
		Fails:  Halt,
		Run: func(context.Context, *gates.Change) (gates.Verdict, error) {
			if err := realDir(filepath.Join(r.stateDir, "locks")); err != nil {
				return fail(ReasonCheckError, "per-finding lock: "+err.Error())
			}
			lock, err := ledger.TryLock(filepath.Join(r.stateDir, "locks"), r.fin.ID)
			if errors.Is(err, ledger.ErrHeld) {
				return gates.Verdict{Detail: "another fixrail run holds finding " + r.fin.ID}, nil
			}
			if err != nil {
				return fail(ReasonCheckError, "per-finding lock: "+err.Error())
			}
			r.lock = lock
			return pass("finding " + r.fin.ID)
		},
	}
}

// inFlightGate refuses to stack on an earlier run's unmerged branch.
func (r *run) inFlightGate() *gates.Gate {
	return &gates.Gate{
		Name:   "in-flight",
		Doc:    "the finding's branch holds no unmerged commit from an earlier run",
		Reason: ReasonInFlight,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			exists, err := r.s.Repo.BranchExists(ctx, r.branch)
			if err != nil {
				return fail(ReasonCheckError, "in-flight check: "+err.Error())
			}
			if !exists {
				return pass("no unmerged work on " + r.branch)
			}
			ahead, err := r.s.Repo.CommitsAhead(ctx, r.branch, r.s.BaseSHA)
			if err != nil {
				return fail(ReasonCheckError, "in-flight check: "+err.Error())
			}
			if ahead > 0 {
				return gates.Verdict{Detail: fmt.Sprintf("branch %s already holds %d commit(s) not on %s; review it, merge or close it first%s", r.branch, ahead, r.s.Base, r.closeHint(r.fin.ID))}, nil
			}
			if r.oldHead, err = r.s.Repo.RevParse(ctx, "refs/heads/"+r.branch); err != nil {
				return fail(ReasonCheckError, "in-flight check: "+err.Error())
			}
			return pass("no unmerged work on " + r.branch)
		},
	}
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
