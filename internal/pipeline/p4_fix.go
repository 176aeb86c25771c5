package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// changeSet is the committed fix, handed from P4 to P5.
type changeSet struct {
	commit string
	diff   gitx.Diff
	paths  []string
	result *fixtype.Result
}

// identity is who the harness commits as: the harness, not the agent and not
// the operator, because the harness is what vouches for the gates.
var identity = gitx.Identity{Name: "fixrail", Email: "fixrail@localhost"}

// fix is P4: the agent's second invocation, then every fix gate in order, then
// the harness-owned commit of exactly the declared files.
func (r *run) fix(ctx context.Context) *Outcome {
	var err error
	if r.planSummary, err = r.scrubInbound(r.plan.Summary); err != nil {
		return stop(Escalate, ReasonLeak, err.Error())
	}
	if o := r.invoke(ctx, runner.Fix, r.fixPrompt()); o != nil {
		return o
	}
	res, err := fixtype.ReadResult(r.resultPath())
	if errors.Is(err, fixtype.ErrUnsafePath) {
		r.gate("P4", "result", "fail", err.Error())
		return stop(Escalate, ReasonUnsafePath, err.Error())
	}
	if err != nil {
		r.gate("P4", "result", "fail", err.Error())
		return stop(Escalate, ReasonBadResult, "the fix phase left no valid result: "+err.Error())
	}
	changed, err := r.fixChanges(ctx)
	if err != nil {
		return stop(Escalate, ReasonCheckError, "worktree status: "+err.Error())
	}
	c := &gates.Change{
		Plan:         r.plan,
		Result:       res,
		Worktree:     r.wt.Dir,
		Policy:       r.s.Policy,
		MaxDiffLines: r.cfg.Budget.MaxDiffLines,
		TestWhenRed:  r.testWhenRed,
		Oracle: func(ctx context.Context) (sandbox.Result, error) {
			return r.exec(ctx, r.oracleArgv, r.cfg.Test.Timeout)
		},
		Suite: func(ctx context.Context) (sandbox.Result, error) {
			return r.exec(ctx, r.cfg.Suite.Command, r.cfg.Suite.Timeout)
		},
	}
	c.Changed = changed
	if len(c.Changed) > 0 {
		if c.Diff, err = r.wt.Diff(ctx, c.Changed); err != nil {
			return stop(Escalate, ReasonCheckError, "diff: "+err.Error())
		}
	}
	// The LLM validation runs last: only a change every mechanical gate
	// accepted is worth a model's opinion.
	validate := gates.LLMValidate(gates.Validation{Model: r.s.Model, Finding: r.findingText(), Redact: r.scrubInbound})
	for _, g := range append(slices.Clone(gates.Fix), validate) {
		v, err := g.Run(ctx, c)
		if o := r.stopped(ctx); o != nil {
			return o
		}
		if o := r.containmentOutcome("P4", err); o != nil {
			return o
		}
		if err != nil {
			r.gate("P4", g.Name, "error", err.Error())
			return stop(Escalate, ReasonGateError, fmt.Sprintf("%s could not decide: %v", g.Name, err))
		}
		if !v.Pass {
			r.gate("P4", g.Name, "fail", v.Detail)
			t := Escalate
			if g.Halt {
				t = Halt
			}
			return stop(t, g.Reason, fmt.Sprintf("%s: %s", g.Name, v.Detail))
		}
		if v.Unconfirmed {
			r.gate("P4", g.Name, "unconfirmed", v.Detail)
			r.needsReview = append(r.needsReview, g.Name+": "+v.Detail)
			if v.Label != "" {
				r.labels = append(r.labels, v.Label)
			}
			continue
		}
		r.gate("P4", g.Name, "pass", v.Detail)
	}
	msg := r.commitMessage()
	if err := r.checkOutbound([2]string{"commit message", msg}, [2]string{"the fix's added lines", addedLines(c.Diff.Patch)}); err != nil {
		r.gate("P4", "leak-scan", "fail", err.Error())
		return stop(Escalate, ReasonLeak, "outbound text blocked: "+err.Error())
	}
	r.gate("P4", "leak-scan", "pass", "commit message and added lines clean")
	sha, err := r.wt.Commit(ctx, c.Changed, msg, identity)
	if err != nil {
		return stop(Escalate, ReasonCheckError, "commit: "+err.Error())
	}
	r.change = &changeSet{commit: sha, diff: c.Diff, paths: c.Changed, result: res}
	r.rep.Commit = sha
	return nil
}

// commitMessage is written by the harness from validated values only; no
// report or agent text reaches it.
func (r *run) commitMessage() string {
	return fmt.Sprintf("fixrail: fix finding %s\n\nReproduced by %s (red on %s, green after).\nOpened by fixrail run %s as a draft for human review.\n",
		r.fin.ID, r.plan.Test.Path, short(r.s.BaseSHA), r.rep.RunID)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// findingText is the (already redacted) report as one text for the model.
func (r *run) findingText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Title: %s\n\n%s", r.fin.Title, r.fin.Body)
	if len(r.fin.Labels) > 0 {
		fmt.Fprintf(&b, "\n\nLabels: %s", strings.Join(r.fin.Labels, ", "))
	}
	for i, c := range r.fin.Comments {
		fmt.Fprintf(&b, "\n\nComment %d:\n%s", i+1, c)
	}
	return b.String()
}
