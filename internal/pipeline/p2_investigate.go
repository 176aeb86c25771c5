package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// investigate is P2: a fresh checkout of the base in a disposable
// directory (no .git link: nothing run there can redirect fixrail's git),
// and the agent's first, read-only invocation. It may write its evidence
// (the fix type's scope: for a bug, the reproducing test and the fixtures
// PLAN.json declares) and PLAN.json itself, and nothing else. What it
// wrote is read once, as blobs, and that is the evidence every later phase
// runs and ships.
func (r *run) investigate(ctx context.Context) (*investigation, *Outcome) {
	if o := r.makeRunDir(); o != nil {
		return nil, o
	}
	var err error
	endStep := r.step("the checkout of the base")
	r.wt, err = r.s.Repo.Checkout(ctx, filepath.Join(r.handoff, "wt"), r.indexPath("wt"), r.s.BaseSHA)
	endStep()
	if err != nil {
		if o := r.containmentOutcome("P2", err); o != nil {
			return nil, o
		}
		return nil, stop(Halt, ReasonCheckError, "checkout: "+err.Error())
	}
	r.noteIgnoredInput()
	if r.typ.Plan != nil {
		return r.harnessPlan(ctx)
	}
	scope := r.typ.Scope(r.cfg)
	brief := r.typ.Investigate(r.brief())
	if o := r.invoke(ctx, runner.Investigate, scope, func(f *untrusted.Fence) string { return r.prompt(f, "1 of 2: INVESTIGATE", brief, nil) }); o != nil {
		return nil, o
	}
	changed, err := r.wt.Changed(ctx)
	if o := r.treeOutcome("P2", err); o != nil {
		return nil, o
	}
	inv := &investigation{}
	if o := r.checks(ctx, "P2", []*gates.Gate{r.readOnlyGate(scope, changed), r.planGate(inv, changed)}, nil); o != nil {
		return nil, o
	}
	if o := r.recordEvidence(ctx, inv, changed); o != nil {
		return nil, o
	}
	return inv, nil
}

// harnessPlan is P2 for a type that plans itself: no agent runs; the
// type reads the fresh checkout of the base, and must leave it as it was.
func (r *run) harnessPlan(ctx context.Context) (*investigation, *Outcome) {
	inv := &investigation{planned: true}
	plan := &gates.Gate{
		Name:   "plan",
		Doc:    "the fix type planned from a fresh checkout of the base, with no agent",
		Reason: ReasonCheckError,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			p, err := r.typ.Plan(ctx, r.env, r.wt.Dir, r.fin)
			var stop *fixtype.StopError
			if errors.As(err, &stop) {
				return gates.Verdict{Terminal: stop.Terminal, Reason: stop.Reason, Detail: err.Error()}, nil
			}
			if err != nil {
				return gates.Verdict{}, err
			}
			if len(p.Withhold) > 0 {
				if err := r.withhold(p.Withhold...); err != nil {
					return gates.Verdict{}, fmt.Errorf("the plan's secret cannot be withheld: %w", err)
				}
			}
			inv.plan = p
			r.rep.Plan = p.Report
			return pass(fmt.Sprintf("planned by the harness: %d file(s): %s", len(p.Files), codeList(p.Files)))
		},
	}
	if o := r.check(ctx, "P2", plan, nil); o != nil {
		return nil, o
	}
	changed, err := r.wt.Changed(ctx)
	if o := r.treeOutcome("P2", err); o != nil {
		return nil, o
	}
	if o := r.checks(ctx, "P2", []*gates.Gate{r.readOnlyGate(r.typ.Scope(r.cfg), changed)}, nil); o != nil {
		return nil, o
	}
	if o := r.recordEvidence(ctx, inv, changed); o != nil {
		return nil, o
	}
	return inv, nil
}

// readOnlyGate holds the investigate phase to its scope.
func (r *run) readOnlyGate(scope, changed []string) *gates.Gate {
	return &gates.Gate{
		Name:   "read-only",
		Doc:    "the investigate phase wrote only inside its fix type's evidence scope",
		Reason: ReasonWriteBeforeRepro,
		Run: func(context.Context, *gates.Change) (gates.Verdict, error) {
			var outside []string
			for _, p := range changed {
				if !matchAny(scope, p) {
					outside = append(outside, p)
				}
			}
			where := strings.Join(scope, ", ")
			if len(scope) == 0 {
				// A type that plans itself writes no evidence at all.
				where = "no evidence scope (the fix type writes none)"
			}
			if len(outside) > 0 {
				return gates.Verdict{Detail: "written outside " + where + ": " + codeList(outside)}, nil
			}
			if len(scope) == 0 {
				return pass("no file written; " + where)
			}
			return pass(fmt.Sprintf("%d file(s) written, all under %s", len(changed), where))
		},
	}
}

// planGate reads PLAN.json through the fix type: a plan to reproduce
// and fix, or a conclusion that there is nothing to fix (conclude).
func (r *run) planGate(inv *investigation, changed []string) *gates.Gate {
	return &gates.Gate{
		Name:   "plan",
		Doc:    "the investigate phase left a valid PLAN.json",
		Reason: ReasonNoPlan,
		Fails:  NotRepro,
		Run: func(context.Context, *gates.Change) (gates.Verdict, error) {
			plan, err := r.typ.ReadPlan(r.planPath(), r.cfg)
			if errors.Is(err, fixtype.ErrUnsafePath) {
				// A path out of the repository is an attempt, not a
				// failure to reproduce: a human looks.
				return gates.Verdict{Terminal: Escalate, Reason: ReasonUnsafePath, Detail: err.Error()}, nil
			}
			if err != nil {
				return gates.Verdict{Detail: err.Error()}, nil
			}
			if plan.Conclusion != nil {
				return r.conclude(plan.Conclusion, changed), nil
			}
			inv.plan = plan
			r.rep.Plan = plan.Report
			return pass(fmt.Sprintf("%d planned file(s), %d evidence file(s): %s", len(plan.Files), len(plan.Evidence), codeList(plan.Evidence)))
		},
	}
}

// recordEvidence reads what P2 wrote — exactly the declared evidence, each
// a regular file — and builds the red tree (the base plus those blobs). An
// undeclared change, even an ignored file, escalates: it would otherwise be
// an unjudged input to the red run, or silently left out of what ships.
func (r *run) recordEvidence(ctx context.Context, inv *investigation, changed []string) *Outcome {
	declared := inv.plan.Evidence
	var undeclared []string
	for _, p := range changed {
		if !slices.Contains(declared, p) {
			undeclared = append(undeclared, p)
		}
	}
	if len(undeclared) > 0 {
		r.gate("P2", "evidence", "fail", "written but not declared in PLAN.json: "+codeList(undeclared))
		return stop(Escalate, ReasonUndeclared, "the investigate phase changed files PLAN.json does not declare as evidence: "+strings.Join(undeclared, ", "))
	}
	// Listed with lstat alone and summed before a byte of any is read, as
	// P4 lists the fix: the candidate holds the evidence and P4 reads at
	// most maxCandidateBytes for it, so more evidence than that could never
	// ship, and reading it whole (Stage A reads it back once more) would
	// cost its size in memory several times over.
	var total int64
	for _, p := range declared {
		if isGitMetadata(p) {
			r.gate("P2", "evidence", "fail", p+" is git metadata")
			return stop(Escalate, ReasonSensitivePath, "the investigate phase wrote "+p+": attributes and submodules change what git shows and checks out, so they are never evidence")
		}
		info, err := gitx.Lstat(r.wt.Dir, p)
		if err != nil {
			r.gate("P2", "evidence", "fail", err.Error())
			return stop(NotRepro, ReasonBadTestPath, "the planned evidence is not a regular file: "+err.Error())
		}
		total += info.Size
	}
	if total > maxCandidateBytes {
		d := fmt.Sprintf("%d bytes in %d evidence file(s), over the %d bytes the harness reads for one candidate: %s", total, len(declared), maxCandidateBytes, listPaths(declared))
		r.gate("P2", "evidence", "fail", d)
		return stop(Escalate, ReasonUnsafePath, "the investigate phase left more evidence than the harness will read, refused before any was read; "+d)
	}
	left := int64(maxCandidateBytes)
	for _, p := range declared {
		e, err := gitx.ReadEntry(r.wt.Dir, p, max(0, min(maxEvidenceBytes, left)))
		left -= int64(len(e.Data))
		if err != nil {
			r.gate("P2", "evidence", "fail", err.Error())
			return stop(NotRepro, ReasonBadTestPath, "the planned evidence is not a regular file: "+err.Error())
		}
		inv.evidence = append(inv.evidence, e)
	}
	// What the evidence does to the base's files first: a tracked file
	// deleted, or replaced by a link, is a rewrite of what someone else
	// wrote, not a malformed test.
	if len(inv.evidence) > 0 {
		if o := r.check(ctx, "P2", r.evidenceGate(inv), nil); o != nil {
			return o
		}
	}
	for _, e := range inv.evidence {
		if e.Mode != "100644" && e.Mode != "100755" {
			err := fmt.Errorf("%s was not written as a regular file", e.Path)
			if e.Mode == "120000" {
				err = fmt.Errorf("%s is a symlink", e.Path)
			}
			r.gate("P2", "evidence", "fail", err.Error())
			return stop(NotRepro, ReasonBadTestPath, "the planned evidence is not a regular file: "+err.Error())
		}
	}
	if err := r.s.Repo.WriteBlobs(ctx, inv.evidence); err != nil {
		return stop(Escalate, ReasonCheckError, "record evidence: "+err.Error())
	}
	var err error
	if inv.redTree, err = r.s.Repo.BuildTree(ctx, r.s.BaseSHA, inv.evidence, r.indexPath("red-tree")); err != nil {
		return stop(Escalate, ReasonCheckError, "record evidence: "+err.Error())
	}
	detail := "no evidence to record"
	if len(declared) > 0 {
		detail = fmt.Sprintf("%s and %d fixture(s) recorded as blobs", declared[0], len(declared)-1)
	}
	r.gate("P2", "evidence", "pass", detail)
	return nil
}

// matchAny reports whether p matches one of the globs.
func matchAny(globs []string, p string) bool {
	for _, g := range globs {
		if ok, err := doublestar.Match(g, p); err == nil && ok {
			return true
		}
	}
	return false
}

// maxEvidenceBytes bounds one file the harness reads from an agent's tree.
const maxEvidenceBytes = 8 << 20

// isGitMetadata reports the files that change how git itself reads a tree.
func isGitMetadata(p string) bool {
	switch path.Base(p) {
	case ".gitattributes", ".gitmodules":
		return true
	}
	return false
}

// codeList renders agent-chosen paths for a gate detail.
func codeList(paths []string) string { return strings.Join(paths, ", ") }

func (r *run) planPath() string   { return filepath.Join(r.handoff, "PLAN.json") }
func (r *run) resultPath() string { return filepath.Join(r.handoff, "result.json") }

// indexPath is a private index file for one of the run's trees, in a
// directory no agent or test can see.
func (r *run) indexPath(name string) string { return filepath.Join(r.dir, "git", name+".index") }

// invoke runs the agent once and maps a failed invocation to a HALT.
// Each invocation gets a fence with a fresh nonce.
func (r *run) invoke(ctx context.Context, phase runner.Phase, allow []string, prompt func(*untrusted.Fence) string) *Outcome {
	fence, err := untrusted.NewFence()
	if err != nil {
		return stop(Halt, ReasonCheckError, "fence nonce: "+err.Error())
	}
	timeout := r.cfg.Runner.Timeout
	// What is left of the run's own caps, not a full cap per invocation.
	turns := r.cfg.Runner.MaxTurns - r.rep.Agent.Turns
	costLeft := r.cfg.Budget.RunCostUSD - r.rep.Agent.CostUSD
	if turns <= 0 || costLeft <= 0 {
		return stop(Halt, ReasonBudgetExhausted, fmt.Sprintf("the run's caps are spent: %d of %d turns, $%.4f of $%g", r.rep.Agent.Turns, r.cfg.Runner.MaxTurns, r.rep.Agent.CostUSD, r.cfg.Budget.RunCostUSD))
	}
	// What the phase may write (allow): the evidence scope first, then only
	// the planned files (the evidence must stay as it was when it ran red).
	var bash []string
	if phase == runner.Fix {
		bash = r.typ.Budget.BashRules
	}
	pol, err := r.egressPolicy()
	if err != nil {
		return stop(Halt, string(runner.Refused), "the agent's egress allowlist: "+err.Error())
	}
	// A dry run's first guard: the fix phase's agent gets read tools
	// only, whatever the plan says it would change.
	readOnly := phase == runner.Fix && r.p.DryRun.ReadOnlyAgent
	if readOnly {
		allow, bash = nil, nil
	}
	inv := runner.Invocation{
		Phase:      phase,
		Worktree:   r.wt.Dir,
		Prompt:     prompt(fence),
		PlanPath:   r.planPath(),
		ResultPath: r.resultPath(),
		Timeout:    timeout,
		MaxTurns:   turns,
		MaxCostUSD: costLeft,
		Allow:      allow,
		BashRules:  bash,
		ReadOnly:   readOnly,
		Sandbox:    &sandbox.Spec{Mode: r.sandboxMode(), RW: []string{r.handoff}, Hide: r.hide(), Egress: pol},
		TempDir:    r.dir,
	}
	for attempt := 1; ; attempt++ {
		err := r.invokeOnce(ctx, phase, inv)
		if err == nil {
			return nil
		}
		var oe *outcomeError
		if errors.As(err, &oe) {
			return oe.o
		}
		if o := r.stopped(ctx); o != nil {
			return o
		}
		why := runner.TransportFailure(err)
		if why == "" || attempt > maxTransportRetries {
			// An answer (an exit code, a cap, a refusal, a deadline) is
			// never repeated by running the same prompt again.
			return runnerOutcome(phaseLabel(phase), err, r.containmentOutcome)
		}
		// The channel failed, not the agent's answer: the same invocation
		// once more, on what is left of the run's caps. What the failed
		// attempt left in the hand-off file is no answer and goes first;
		// what it left in the tree is judged with the rest by every gate.
		out := r.planPath()
		if phase == runner.Fix {
			out = r.resultPath()
		}
		if rerr := os.Remove(out); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return stop(Halt, ReasonCheckError, "clear the failed attempt's hand-off: "+rerr.Error())
		}
		r.retried(Retry{Kind: RetryTransport, Phase: phaseLabel(phase), Attempt: attempt + 1, Why: why})
		inv.MaxTurns = r.cfg.Runner.MaxTurns - r.rep.Agent.Turns
		inv.MaxCostUSD = r.cfg.Budget.RunCostUSD - r.rep.Agent.CostUSD
		if inv.MaxTurns <= 0 || inv.MaxCostUSD <= 0 {
			return stop(Halt, ReasonBudgetExhausted, fmt.Sprintf("no retry of the failed invocation: the run's caps are spent: %d of %d turns, $%.4f of $%g", r.rep.Agent.Turns, r.cfg.Runner.MaxTurns, r.rep.Agent.CostUSD, r.cfg.Budget.RunCostUSD))
		}
	}
}

// maxTransportRetries is how many times one invocation is repeated after a
// transport failure: once. A second failure of the channel is the
// runner's (HALT), not bad luck.
const maxTransportRetries = 1

// outcomeError carries an outcome decided inside one attempt (a
// containment breach found by the drift check) out of invokeOnce.
type outcomeError struct{ o *Outcome }

func (e *outcomeError) Error() string { return e.o.Detail }

// retried records a repeated attempt: the report, the event log and so
// the console.
func (r *run) retried(t Retry) {
	r.rep.Retries = append(r.rep.Retries, t)
	r.log.Emit(events.Event{Type: "retry", Phase: t.Phase, Name: t.Kind, Detail: fmt.Sprintf("attempt %d: %s", t.Attempt, t.Why)})
}

// invokeOnce is one invocation of the agent: the runner, the account of
// what it spent, and the drift check that must pass before git is trusted
// again. The error is the runner's, or an *outcomeError.
func (r *run) invokeOnce(ctx context.Context, phase runner.Phase, inv runner.Invocation) error {
	release := r.s.Repo.Shared()
	endStep := r.step("the agent (" + string(phase) + ")")
	defer endStep() // an adapter that panics ends it too
	res, err := r.p.Runner.Run(ctx, inv)
	endStep()
	release()
	if err == nil && !res.Sandboxed && r.sandboxMode() != sandbox.Off {
		r.agentUnconfined = true
	}
	r.account(err, res)
	if err != nil {
		r.keepOutput(phaseLabel(phase), res)
	}
	// Repository code (the agent) has run: the clone's git config must be as
	// it was at baseline before git is trusted with it again.
	if derr := r.s.Repo.CheckDrift(ctx); derr != nil {
		if o := r.containmentOutcome(phaseLabel(phase), derr); o != nil {
			return &outcomeError{o}
		}
		return &outcomeError{stop(Escalate, ReasonCheckError, "git config check: "+derr.Error())}
	}
	// An agent that tried to leave is judged by that, however it ended.
	if o := r.egressOutcome(phaseLabel(phase), res.Sandboxed); o != nil {
		return &outcomeError{o}
	}
	return err
}

// runnerOutcome maps a failed invocation: containment first (no sandbox,
// the clone changed), then the runner's own kinds — an agent that ran
// outside the rails is a breach, not a stop, and ESCALATEs; every other
// runner failure is a clean HALT. The error stays in the outcome.
func runnerOutcome(phase string, err error, containment func(string, error) *Outcome) *Outcome {
	o := containment(phase, err)
	if o == nil {
		o = stop(Halt, string(runner.Unavailable), err.Error())
		if re, ok := runner.AsError(err); ok {
			o = stop(Halt, string(re.Kind), re.Detail)
			if re.Kind == runner.Unconfined {
				o.Terminal = Escalate
			}
			if re.Kind == runner.Canceled {
				// A stop (signal, wall clock) was reported by stopped()
				// already; an adapter canceled by anything else failed.
				o.Reason, o.Detail = string(runner.Failed), "the adapter reported itself canceled while the run was not stopped: "+re.Detail
			}
		}
	}
	o.Err = err
	return o
}

// phaseLabel names the pipeline phase an invocation runs in.
func phaseLabel(p runner.Phase) string {
	if p == runner.Fix {
		return "P4"
	}
	return "P2"
}

// agentConfigFiles are files an agent CLI would read as instructions or
// settings if it trusted the repository. fixrail's adapters run with
// project settings and MCP servers off, so these are input, never
// configuration; the run records that it saw them.
var agentConfigFiles = []string{"CLAUDE.md", "AGENTS.md", "GEMINI.md", ".claude", ".mcp.json", ".codex", ".gemini", ".cursor", ".cursorrules"}

func (r *run) noteIgnoredInput() {
	var seen []string
	for _, name := range agentConfigFiles {
		if _, err := os.Lstat(filepath.Join(r.wt.Dir, name)); err == nil {
			seen = append(seen, name)
		}
	}
	if len(seen) > 0 {
		r.gate("P2", "agent-config-ignored", "pass", "present in the repository and not loaded: "+strings.Join(seen, ", "))
	}
}
