package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// changeSet is the candidate, handed from P4 to P5: what the gates judged
// is what ships.
type changeSet struct {
	commit string
	diff   gitx.TreeDiff
	paths  []string
	result *fixtype.Result
}

// identity is who the harness commits as: the harness, not the agent and not
// the operator, because the harness is what vouches for the gates.
var identity = gitx.Identity{Name: "fixrail", Email: "fixrail@localhost"}

// fix is P4: the agent's second invocation; then the candidate commit is
// built from the blobs the harness reads once, before any gate runs; then
// every fix gate judges that commit — its tree, its diff, and fresh
// checkouts of it for the oracle and the suite — and the branch is later set
// to exactly it.
func (r *run) fix(ctx context.Context) *Outcome {
	var err error
	if r.planSummary, err = r.scrubInbound(r.plan.Summary); err != nil {
		return stop(Escalate, ReasonLeak, err.Error())
	}
	if o := r.invoke(ctx, runner.Fix, r.fixPrompt); o != nil {
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
	c, o := r.candidate(ctx, res)
	if o != nil {
		return o
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
			r.gateVerdict("P4", g.Name, "fail", v)
			t := Escalate
			if g.Halt {
				t = Halt
			}
			return stop(t, g.Reason, fmt.Sprintf("%s: %s", g.Name, v.Detail))
		}
		if v.Unconfirmed {
			r.gateVerdict("P4", g.Name, "unconfirmed", v)
			r.needsReview = append(r.needsReview, g.Name+": "+v.Detail)
			if v.Label != "" {
				r.labels = append(r.labels, v.Label)
			}
			continue
		}
		r.gateVerdict("P4", g.Name, "pass", v)
	}
	// The whole shipped patch, context lines included, and the message.
	reviews, err := r.checkOutbound([2]string{"commit message", r.commitMessage()}, [2]string{"the patch", c.Diff.Text}, [2]string{"the binary patch", c.Diff.Patch})
	if err != nil {
		r.gate("P4", "leak-scan", "fail", err.Error())
		return stop(Escalate, ReasonLeak, "outbound text blocked: "+err.Error())
	}
	if len(reviews) > 0 {
		// The patch is the fix: it cannot be redacted, only read with care.
		detail := "nothing that blocks; for review: " + strings.Join(reviews, "; ")
		r.gate("P4", "leak-scan", "unconfirmed", detail)
		r.needsReview = append(r.needsReview, "leak-scan: "+strings.Join(reviews, "; "))
		r.labels = append(r.labels, gates.LabelNeedsReview)
	} else {
		r.gate("P4", "leak-scan", "pass", "commit message and the whole patch clean")
	}
	r.change = &changeSet{commit: c.Commit, diff: c.Diff, paths: c.Changed, result: res}
	r.rep.Commit = c.Commit
	return nil
}

// candidate reads every path the fix phase may have changed, once, writes
// the changed ones as blobs on top of the red tree, and commits that tree
// on the base. From here on nothing reads the agent's tree again.
func (r *run) candidate(ctx context.Context, res *fixtype.Result) (*gates.Change, *Outcome) {
	changed, err := r.wt.Changed(ctx)
	if o := r.treeOutcome("P4", err); o != nil {
		return nil, o
	}
	ev := map[string]gitx.Entry{}
	for _, e := range r.evidence {
		ev[e.Path] = e
	}
	var fixes []gitx.Entry
	for _, p := range changed {
		e, err := gitx.ReadEntry(r.wt.Dir, p, maxEvidenceBytes)
		if err != nil {
			r.gate("P4", "candidate", "fail", err.Error())
			return nil, stop(Escalate, ReasonUnsafePath, "the fix left a path the harness will not ship: "+err.Error())
		}
		prev, isEvidence := ev[p]
		if !isEvidence {
			if prev, err = r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, p, maxEvidenceBytes); err != nil {
				return nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
			}
		}
		if e.Same(prev) {
			continue // touched, not changed
		}
		if e.Mode == "120000" || isGitMetadata(p) {
			what := "a symlink"
			if e.Mode != "120000" {
				what = "git metadata"
			}
			r.gate("P4", "candidate", "fail", p+" is "+what)
			return nil, stop(Escalate, ReasonUnsafePath, "the fix writes "+p+", which is "+what+": never shipped by the harness")
		}
		fixes = append(fixes, e)
	}
	if err := r.s.Repo.WriteBlobs(ctx, fixes); err != nil {
		return nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	tree, err := r.s.Repo.BuildTree(ctx, r.redTree, fixes, r.indexPath("candidate"))
	if err != nil {
		return nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	commit, err := r.s.Repo.CommitTree(ctx, tree, r.s.BaseSHA, r.commitMessage(), identity)
	if err != nil {
		return nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	diff, err := r.s.Repo.DiffTrees(ctx, r.s.BaseSHA, commit)
	if err != nil {
		return nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	files := map[string]gitx.Entry{}
	for _, e := range r.evidence {
		files[e.Path] = e
	}
	for _, e := range fixes {
		files[e.Path] = e
	}
	for _, p := range diff.Files {
		if _, ok := files[p]; !ok {
			return nil, stop(Escalate, ReasonCheckError, "candidate: "+p+" changed without an entry")
		}
	}
	r.gate("P4", "candidate", "pass", fmt.Sprintf("commit %s built from %d blob(s) before any gate", short(commit), len(r.evidence)+len(fixes)))
	return &gates.Change{
		Plan:         r.plan,
		Result:       res,
		Commit:       commit,
		Changed:      diff.Files,
		Diff:         diff,
		Files:        files,
		Policy:       r.s.Policy,
		MaxDiffLines: r.cfg.Budget.MaxDiffLines,
		Evidence:     r.evidence,
		Oracle: func(ctx context.Context) (sandbox.Result, error) {
			return r.execFresh(ctx, "green", commit, r.oracleArgv, r.cfg.Test.Timeout)
		},
		Suite: func(ctx context.Context) (sandbox.Result, error) {
			return r.execFresh(ctx, "suite", commit, r.cfg.Suite.Command, r.cfg.Suite.Timeout)
		},
	}, nil
}

// gateVerdict records a gate's verdict, with the command output it kept.
func (r *run) gateVerdict(phase, name, verdict string, v gates.Verdict) {
	if v.Output != "" {
		out := r.scrubOutput(v.Output)
		r.rep.Gates = append(r.rep.Gates, GateResult{Name: name, Phase: phase, Verdict: verdict, Detail: v.Detail, Output: out})
		r.log.Emit(events.Event{Type: "gate", Phase: phase, Name: name, Verdict: verdict, Detail: v.Detail + "\n" + out})
		return
	}
	r.gate(phase, name, verdict, v.Detail)
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
