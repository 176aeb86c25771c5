package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// investigate is P2: a worktree from the base in a disposable directory and
// the agent's first, read-only invocation. It may write the reproducing test
// and PLAN.json, and nothing else.
func (r *run) investigate(ctx context.Context) *Outcome {
	var err error
	m := marker{Finding: r.fin.ID, Repo: r.s.Repo.Top(), Run: r.rep.RunID, PID: os.Getpid()}
	if r.dir, err = pathguard.NewDisposable(r.p.TempDir, m.String()); err != nil {
		return stop(Halt, ReasonCheckError, "disposable dir: "+err.Error())
	}
	if r.wt, err = r.s.Repo.AddWorktree(ctx, filepath.Join(r.dir, "wt"), r.s.BaseSHA); err != nil {
		return stop(Halt, ReasonCheckError, "worktree: "+err.Error())
	}
	r.noteIgnoredInput()
	if r.fence, err = untrusted.NewFence(); err != nil {
		return stop(Halt, ReasonCheckError, "fence nonce: "+err.Error())
	}
	if o := r.invoke(ctx, runner.Investigate, r.investigatePrompt()); o != nil {
		return o
	}
	changes, err := r.wt.Changes(ctx, true)
	if err != nil {
		return stop(Escalate, ReasonCheckError, "worktree status: "+err.Error())
	}
	var outside []string
	for _, c := range changes {
		ok, err := doublestar.Match(r.cfg.Test.PathGlob, c.Path)
		if err != nil || !ok {
			outside = append(outside, c.Path)
		}
	}
	if len(outside) > 0 {
		r.gate("P2", "read-only", "fail", "written outside "+r.cfg.Test.PathGlob+": "+strings.Join(outside, ", "))
		return stop(Escalate, ReasonWriteBeforeRepro, "the investigate phase wrote outside the test path: "+strings.Join(outside, ", "))
	}
	r.gate("P2", "read-only", "pass", fmt.Sprintf("%d file(s) written, all under %s", len(changes), r.cfg.Test.PathGlob))

	r.plan, err = fixtype.ReadPlan(r.planPath())
	if errors.Is(err, fixtype.ErrUnsafePath) {
		r.gate("P2", "plan", "fail", err.Error())
		return stop(Escalate, ReasonUnsafePath, err.Error())
	}
	if err != nil {
		r.gate("P2", "plan", "fail", err.Error())
		return stop(NotRepro, ReasonNoPlan, err.Error())
	}
	r.rep.Plan = &PlanRef{Files: r.plan.Files, TestPath: r.plan.Test.Path, TestName: r.plan.Test.Name, Symptom: r.plan.Test.Symptom}
	r.gate("P2", "plan", "pass", fmt.Sprintf("%d planned file(s), test %s", len(r.plan.Files), r.plan.Test.Path))
	return nil
}

func (r *run) planPath() string   { return filepath.Join(r.dir, "PLAN.json") }
func (r *run) resultPath() string { return filepath.Join(r.dir, "result.json") }

// invoke runs the agent once and maps a failed invocation to a HALT.
func (r *run) invoke(ctx context.Context, phase runner.Phase, prompt string) *Outcome {
	timeout := r.cfg.Runner.Timeout
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
		Prompt:     prompt,
		PlanPath:   r.planPath(),
		ResultPath: r.resultPath(),
		Timeout:    timeout,
		MaxTurns:   r.cfg.Runner.MaxTurns,
		Allow:      allow,
	})
	release()
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
