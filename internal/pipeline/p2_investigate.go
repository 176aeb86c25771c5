package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// investigate is P2: a fresh checkout of the base in a disposable
// directory (no .git link: nothing run there can redirect fixrail's git),
// and the agent's first, read-only invocation. It may write the reproducing
// test, the fixtures PLAN.json declares and PLAN.json itself, and nothing
// else. What it wrote is read once, as blobs, and that is the evidence
// every later phase runs and ships.
func (r *run) investigate(ctx context.Context) *Outcome {
	if o := r.makeRunDir(); o != nil {
		return o
	}
	var err error
	if r.wt, err = r.s.Repo.Checkout(ctx, filepath.Join(r.handoff, "wt"), r.indexPath("wt"), r.s.BaseSHA); err != nil {
		if o := r.containmentOutcome("P2", err); o != nil {
			return o
		}
		return stop(Halt, ReasonCheckError, "checkout: "+err.Error())
	}
	r.noteIgnoredInput()
	if o := r.invoke(ctx, runner.Investigate, r.investigatePrompt); o != nil {
		return o
	}
	changed, err := r.wt.Changed(ctx)
	if o := r.treeOutcome("P2", err); o != nil {
		return o
	}
	var outside []string
	for _, p := range changed {
		ok, err := doublestar.Match(r.cfg.Test.PathGlob, p)
		if err != nil || !ok {
			outside = append(outside, p)
		}
	}
	if len(outside) > 0 {
		r.gate("P2", "read-only", "fail", "written outside "+r.cfg.Test.PathGlob+": "+codeList(outside))
		return stop(Escalate, ReasonWriteBeforeRepro, "the investigate phase wrote outside the test path: "+strings.Join(outside, ", "))
	}
	r.gate("P2", "read-only", "pass", fmt.Sprintf("%d file(s) written, all under %s", len(changed), r.cfg.Test.PathGlob))

	r.plan, err = fixtype.ReadPlan(r.planPath())
	if errors.Is(err, fixtype.ErrUnsafePath) {
		r.gate("P2", "plan", "fail", err.Error())
		return stop(Escalate, ReasonUnsafePath, err.Error())
	}
	if err != nil {
		r.gate("P2", "plan", "fail", err.Error())
		return stop(NotRepro, ReasonNoPlan, err.Error())
	}
	r.rep.Plan = &PlanRef{Files: r.plan.Files, TestPath: r.plan.Test.Path, TestName: r.plan.Test.Name, Symptom: r.plan.Test.Symptom, Fixtures: r.plan.Test.Fixtures}
	r.gate("P2", "plan", "pass", fmt.Sprintf("%d planned file(s), test %s, %d fixture(s)", len(r.plan.Files), r.plan.Test.Path, len(r.plan.Test.Fixtures)))
	return r.recordEvidence(ctx, changed)
}

// recordEvidence reads what P2 wrote — exactly the test and the declared
// fixtures, each a regular file — and builds the red tree (the base plus
// those blobs). An undeclared change, even an ignored file, escalates: it
// would otherwise be an unjudged input to the red run, or silently left
// out of what ships.
func (r *run) recordEvidence(ctx context.Context, changed []string) *Outcome {
	declared := append([]string{r.plan.Test.Path}, r.plan.Test.Fixtures...)
	var undeclared []string
	for _, p := range changed {
		if !slices.Contains(declared, p) {
			undeclared = append(undeclared, p)
		}
	}
	if len(undeclared) > 0 {
		r.gate("P2", "evidence", "fail", "written but not declared in PLAN.json: "+codeList(undeclared))
		return stop(Escalate, ReasonUndeclared, "the investigate phase changed files PLAN.json does not declare as the test or a fixture: "+strings.Join(undeclared, ", "))
	}
	for _, p := range declared {
		if isGitMetadata(p) {
			r.gate("P2", "evidence", "fail", p+" is git metadata")
			return stop(Escalate, ReasonSensitivePath, "the investigate phase wrote "+p+": attributes and submodules change what git shows and checks out, so they are never evidence")
		}
		e, err := gitx.ReadEntry(r.wt.Dir, p, maxEvidenceBytes)
		if err == nil && e.Mode != "100644" && e.Mode != "100755" {
			err = fmt.Errorf("%s was not written as a regular file", p)
			if e.Mode == "120000" {
				err = fmt.Errorf("%s is a symlink", p)
			}
		}
		if err != nil {
			r.gate("P2", "evidence", "fail", err.Error())
			return stop(NotRepro, ReasonBadTestPath, "the planned test or fixture is not a regular file: "+err.Error())
		}
		r.evidence = append(r.evidence, e)
	}
	if err := r.s.Repo.WriteBlobs(ctx, r.evidence); err != nil {
		return stop(Escalate, ReasonCheckError, "record evidence: "+err.Error())
	}
	var err error
	if r.redTree, err = r.s.Repo.BuildTree(ctx, r.s.BaseSHA, r.evidence, r.indexPath("red-tree")); err != nil {
		return stop(Escalate, ReasonCheckError, "record evidence: "+err.Error())
	}
	r.gate("P2", "evidence", "pass", fmt.Sprintf("%s and %d fixture(s) recorded as blobs", r.plan.Test.Path, len(r.plan.Test.Fixtures)))
	return nil
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
func (r *run) invoke(ctx context.Context, phase runner.Phase, prompt func(*untrusted.Fence) string) *Outcome {
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
	r.agentRan = true
	// What the phase may write: the test path first, then only the planned
	// files (the reproducing test must stay as it was when it failed).
	allow := []string{r.cfg.Test.PathGlob}
	if phase == runner.Fix {
		allow = r.plan.Files
	}
	release := r.s.Repo.Shared()
	res, err := r.runner.Run(ctx, runner.Invocation{
		Phase:      phase,
		Worktree:   r.wt.Dir,
		Prompt:     prompt(fence),
		PlanPath:   r.planPath(),
		ResultPath: r.resultPath(),
		Timeout:    timeout,
		MaxTurns:   turns,
		MaxCostUSD: costLeft,
		Allow:      allow,
		Sandbox:    &sandbox.Spec{Mode: r.sandboxMode(), RW: []string{r.handoff}},
		TempDir:    r.dir,
	})
	release()
	if err == nil && !res.Sandboxed && r.sandboxMode() != sandbox.Off {
		r.agentUnconfined = true
	}
	r.rep.Agent.Invocations++
	r.rep.Agent.CostUSD += res.Cost
	r.rep.Agent.Turns += res.Turns
	r.rep.Agent.Denials += res.Denials
	// Repository code (the agent) has run: the clone's git config must be as
	// it was at baseline before git is trusted with it again.
	if derr := r.s.Repo.CheckDrift(ctx); derr != nil {
		if o := r.containmentOutcome(phaseLabel(phase), derr); o != nil {
			return o
		}
		return stop(Escalate, ReasonCheckError, "git config check: "+derr.Error())
	}
	if err == nil {
		return nil
	}
	if o := r.stopped(ctx); o != nil {
		return o
	}
	if o := r.containmentOutcome(phaseLabel(phase), err); o != nil {
		return o
	}
	if re, ok := runner.AsError(err); ok {
		// An agent that ran outside the rails is a breach, not a stop: a
		// human must look. Every other runner failure is a clean HALT.
		if re.Kind == runner.Unconfined {
			return stop(Escalate, string(re.Kind), re.Detail)
		}
		return stop(Halt, string(re.Kind), re.Detail)
	}
	return stop(Halt, string(runner.Unavailable), err.Error())
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
