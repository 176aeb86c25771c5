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
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
	"github.com/fixrail/fixrail/internal/verify"
)

// identity is who the harness commits as: the harness, not the agent and not
// the operator, because the harness is what vouches for the gates.
var identity = gitx.Identity{Name: "fixrail", Email: "fixrail@localhost"}

// fix is P4: the agent's second invocation; then the candidate commit is
// built from the blobs the harness reads once, before any gate runs; then
// every fix gate judges that commit — its tree, its diff, and fresh
// checkouts of it for the fix type's oracle and the suite — and the branch
// is later set to exactly it.
func (r *run) fix(ctx context.Context, inv *investigation) (*candidate, *Outcome) {
	var err error
	if inv.summary, err = r.scrubInbound(inv.plan.Summary); err != nil {
		return nil, stop(Escalate, ReasonLeak, err.Error())
	}
	res, o := r.harnessEdit(ctx, inv)
	if o != nil {
		return nil, o
	}
	edited := res != nil
	if res == nil {
		if res, o = r.agentFix(ctx, inv); o != nil {
			return nil, o
		}
	}
	cand, c, o := r.candidate(ctx, "P4", inv, res, nil)
	if o != nil {
		return nil, o
	}
	cand.edited = edited
	if o := r.judge(ctx, "P4", inv, cand, c); o != nil {
		return nil, o
	}
	return cand, nil
}

// judge runs every fix gate on a candidate: the catalogue's structural
// gates, the added packages' advisory check and the lockfiles' sources
// (before any of the fix's code runs), then the fix type's own (its oracle), then the suite; the
// LLM validation runs last: only a change every mechanical gate accepted
// is worth a model's opinion. Then the leak scan of what the commit
// ships. A recheck's follow-up is judged by exactly these, on the whole
// change from the base.
func (r *run) judge(ctx context.Context, phase string, inv *investigation, cand *candidate, c *gates.Change) *Outcome {
	validate := gates.LLMValidate(gates.Validation{Model: r.p.Model, Finding: r.findingText(), Redact: r.scrubInbound})
	added := gates.AddedPackages(r.p.Advisories)
	sources := gates.LockfileSources(gates.Sources{NPM: fixtype.NPMRegistries(r.env.Config), Python: fixtype.PythonIndexes(r.env.Config)})
	all := slices.Concat(gates.Fix, []*gates.Gate{added, sources}, r.typ.Gates(r.env, inv.plan), gates.Last, []*gates.Gate{validate})
	if o := r.checks(ctx, phase, all, c); o != nil {
		return o
	}
	// The whole shipped patch, context lines included, and the message.
	if o := r.check(ctx, phase, r.patchLeakGate(cand), nil); o != nil {
		return o
	}
	if err := r.changedTests(ctx, inv, cand); err != nil {
		return stop(Escalate, ReasonCheckError, "changed tests: "+err.Error())
	}
	r.rep.Commit = cand.commit
	return nil
}

// harnessEdit lets a type that edits itself make the fix in the agent's
// tree; a nil result with no outcome hands the edit to the agent.
func (r *run) harnessEdit(ctx context.Context, inv *investigation) (*fixtype.Result, *Outcome) {
	if r.typ.Edit == nil {
		return nil, nil
	}
	res, err := r.typ.Edit(ctx, r.env, inv.plan, r.wt.Dir)
	var st *fixtype.StopError
	switch {
	case errors.Is(err, fixtype.ErrAgentEdit):
		r.gate("P4", "harness-edit", "pass", "handed to the agent: "+err.Error())
		return nil, nil
	case errors.As(err, &st):
		r.gate("P4", "harness-edit", "fail", err.Error())
		return nil, stop(st.Terminal, st.Reason, "harness-edit: "+err.Error())
	case err != nil:
		r.gate("P4", "harness-edit", "error", err.Error())
		return nil, r.classify("P4", "harness-edit could not decide", err)
	}
	clean, err := fixtype.CleanPaths("files_changed", res.FilesChanged, map[string]bool{})
	if err != nil {
		return nil, r.classify("P4", "harness-edit", err)
	}
	res.FilesChanged = clean
	r.gate("P4", "harness-edit", "pass", res.Summary+": "+codeList(clean))
	return res, nil
}

// agentFix is the agent's fix invocation and the result it left.
func (r *run) agentFix(ctx context.Context, inv *investigation) (*fixtype.Result, *Outcome) {
	brief := r.typ.Fix(r.brief(), inv.plan)
	if o := r.invoke(ctx, runner.Fix, inv.plan.Files, func(f *untrusted.Fence) string { return r.prompt(f, "2 of 2: FIX", brief, inv) }); o != nil {
		return nil, o
	}
	res, err := fixtype.ReadResult(r.resultPath())
	if errors.Is(err, fixtype.ErrUnsafePath) {
		r.gate("P4", "result", "fail", err.Error())
		return nil, stop(Escalate, ReasonUnsafePath, err.Error())
	}
	if err != nil {
		r.gate("P4", "result", "fail", err.Error())
		return nil, stop(Escalate, ReasonBadResult, "the fix phase left no valid result: "+err.Error())
	}
	return res, nil
}

// patchLeakGate scans what the commit ships. The patch is the fix: it
// cannot be redacted, only read with care, so review-tier findings pass
// unconfirmed and a blocking one escalates.
func (r *run) patchLeakGate(c *candidate) *gates.Gate {
	return &gates.Gate{
		Name:   "leak-scan",
		Doc:    "the commit message and the whole patch, context lines included, carry no secret",
		Reason: ReasonLeak,
		Run: func(context.Context, *gates.Change) (gates.Verdict, error) {
			// A binary hunk is deflated and base85-encoded: neither this scan
			// nor published() reads it, and its reverse half carries the old
			// bytes, a withheld value among them. git writes one for any file
			// it deems binary (a NUL on either side, or a -diff or binary
			// attribute), so it is refused whatever made it one.
			if len(r.withheld) > 0 && hasBinaryHunk(c.diff.Patch) {
				return gates.Verdict{Detail: "outbound text blocked: the binary patch has a GIT binary patch hunk, which could carry the withheld credential encoded where neither the redaction nor the leak scan reads it"}, nil
			}
			reviews, err := r.checkOutbound([2]string{"commit message", c.message}, [2]string{"the patch", c.diff.Text}, [2]string{"the binary patch", c.diff.Patch})
			if err != nil {
				return gates.Verdict{Detail: "outbound text blocked: " + err.Error()}, nil
			}
			if len(reviews) > 0 {
				return gates.Verdict{Pass: true, Unconfirmed: true, Label: gates.LabelNeedsReview, Detail: strings.Join(reviews, "; ") + " (nothing that blocks; for review)"}, nil
			}
			return pass("commit message and the whole patch clean")
		},
	}
}

// hasBinaryHunk reports whether a patch made with --binary holds a binary
// hunk: git starts one with this line, unprefixed, where a text hunk's
// lines all start with ' ', '+', '-' or a backslash.
func hasBinaryHunk(patch string) bool {
	return strings.HasPrefix(patch, "GIT binary patch\n") || strings.Contains(patch, "\nGIT binary patch\n")
}

// candidate reads every path the fix phase may have changed, once, writes
// the changed ones as blobs on top of the red tree, and commits that tree
// on the base. From here on nothing reads the agent's tree again. With on
// set (a recheck's follow-up), the agent's tree was a checkout of on's
// commit: the changes are read against it, added to on's, and the commit
// is made on on's, so the branch moves by a fast-forward; the gates still
// judge the whole change from the base.
func (r *run) candidate(ctx context.Context, phase string, inv *investigation, res *fixtype.Result, on *candidate) (*candidate, *gates.Change, *Outcome) {
	changed, err := r.wt.Changed(ctx)
	if o := r.treeOutcome(phase, err); o != nil {
		return nil, nil, o
	}
	ev := map[string]gitx.Entry{}
	allowed := map[string]bool{}
	for _, e := range inv.evidence {
		ev[e.Path], allowed[e.Path] = e, true
	}
	for _, p := range inv.plan.Files {
		allowed[p] = true
	}
	// Listed with lstat alone and held to the plan before a byte is read;
	// then every read is bounded by what is left of maxCandidateBytes.
	adm, o, why := admit(r.wt.Dir, changed, allowed)
	if o != nil {
		r.gate(phase, "candidate", "fail", why)
		return nil, nil, o
	}
	// What the tree held before the fix phase, per path: on's fixes for a
	// follow-up (its tree was on's commit), else the evidence and the base.
	prior := map[string]gitx.Entry{}
	var fixes []gitx.Entry
	parent := r.s.BaseSHA
	if on != nil {
		parent = on.commit
		for _, e := range on.fixes {
			prior[e.Path] = e
		}
	}
	left := int64(maxCandidateBytes)
	limit := func() int64 { return max(0, min(maxEvidenceBytes, left)) }
	base := map[string]gitx.Entry{}
	var fresh []gitx.Entry
	for _, p := range adm.paths {
		e, err := gitx.ReadEntry(r.wt.Dir, p, limit())
		if err != nil {
			r.gate(phase, "candidate", "fail", err.Error())
			return nil, nil, stop(Escalate, ReasonUnsafePath, "the fix left a path the harness will not ship: "+err.Error())
		}
		left -= int64(len(e.Data))
		prev, isEvidence := ev[p]
		if !isEvidence {
			if prev, err = r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, p, limit()); err != nil {
				return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
			}
			left -= int64(len(prev.Data))
			base[p] = prev
		}
		if had, ok := prior[p]; ok {
			prev = had
		}
		if e.Same(prev) {
			continue // touched, not changed
		}
		if e.Mode == "120000" || isGitMetadata(p) {
			what := "a symlink"
			if e.Mode != "120000" {
				what = "git metadata"
			}
			r.gate(phase, "candidate", "fail", p+" is "+what)
			return nil, nil, stop(Escalate, ReasonUnsafePath, "the fix writes "+p+", which is "+what+": never shipped by the harness")
		}
		fresh = append(fresh, e)
	}
	if on != nil && len(fresh) == 0 {
		r.gate(phase, "candidate", "fail", "the follow-up changed nothing on "+short(on.commit))
		return nil, nil, stop(Escalate, verdict.ReasonEmptyDiff, "the follow-up fix changed nothing: the recheck's findings stand on "+short(on.commit))
	}
	// A follow-up's entries replace on's for the same path.
	for _, e := range on.fixesOrNil() {
		if !slices.ContainsFunc(fresh, func(f gitx.Entry) bool { return f.Path == e.Path }) {
			fixes = append(fixes, e)
		}
	}
	fixes = append(fixes, fresh...)
	msg := r.commitMessage(inv, fixes)
	if on != nil {
		msg = r.followUpMessage(inv, on)
	}
	// GitHub reads a closing keyword anywhere in a commit message that
	// reaches the default branch; the trailers carry paths, rule ids and
	// names the repository, a scanner or the agent chose.
	if ref := untrusted.ClosingReference(msg); ref != "" {
		r.gate(phase, "candidate", "fail", "the commit message would hold "+untrusted.Quote(ref))
		return nil, nil, stop(Escalate, ReasonClosesAnIssue, "the commit message would hold "+untrusted.Quote(ref)+", from a path or name the harness records: merged, it would close an issue or pull request the finding is not about")
	}
	if err := r.s.Repo.WriteBlobs(ctx, fixes); err != nil {
		return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	tree, err := r.s.Repo.BuildTree(ctx, inv.redTree, fixes, r.indexPath("candidate"))
	if err != nil {
		return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	commit, err := r.s.Repo.CommitTree(ctx, tree, parent, msg, identity)
	if err != nil {
		return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	// A follow-up's earlier fixes were read against the base in their own
	// round; only what this round read is in base.
	added, err := gates.AddedTests(r.testGlobs(), fixes, func(p string) (gitx.Entry, error) {
		if b, ok := base[p]; ok {
			return b, nil
		}
		return r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, p, maxEvidenceBytes)
	})
	if err != nil {
		return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	fixOnly, err := r.fixOnlyCommit(ctx, inv, fixes, added, tree, commit, msg)
	if err != nil {
		return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	fixTests, rest := gates.SplitTests(r.testGlobs(), fixes)
	fixAlone := commit
	if len(fixTests) > 0 {
		if fixAlone, err = r.s.Repo.BuildTree(ctx, inv.redTree, rest, r.indexPath("fix-alone")); err != nil {
			return nil, nil, stop(Escalate, ReasonCheckError, "candidate: the fix without its test files: "+err.Error())
		}
	}
	diff, err := r.s.Repo.DiffTrees(ctx, r.s.BaseSHA, commit)
	if err != nil {
		return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+err.Error())
	}
	files := map[string]gitx.Entry{}
	for _, e := range inv.evidence {
		files[e.Path] = e
	}
	for _, e := range fixes {
		files[e.Path] = e
	}
	for _, p := range diff.Files {
		if _, ok := files[p]; !ok {
			return nil, nil, stop(Escalate, ReasonCheckError, "candidate: "+p+" changed without an entry")
		}
	}
	if on != nil {
		r.gate(phase, "candidate", "pass", fmt.Sprintf("commit %s on %s built from %d new blob(s) before any gate", short(commit), short(on.commit), len(fresh)))
	} else {
		r.gate(phase, "candidate", "pass", fmt.Sprintf("commit %s built from %d blob(s) before any gate", short(commit), len(inv.evidence)+len(fixes)))
	}
	maxLines := r.cfg.Budget.MaxDiffLines
	if n := r.typ.Budget.MaxDiffLines; n > 0 && n < maxLines {
		maxLines = n
	}
	// What ships (the patch, its leak scan, the confirmation) is the diff
	// as published; the gates read it as committed.
	shipped := diff
	shipped.Text, shipped.Patch = r.published(diff.Text), r.published(diff.Patch)
	cand := &candidate{commit: commit, diff: shipped, paths: diff.Files, result: res, message: msg, fixes: fixes, tree: tree, addedTests: added}
	return cand, &gates.Change{
		Commit:       commit,
		Changed:      diff.Files,
		Diff:         diff,
		Files:        files,
		BaseFiles:    base,
		Planned:      inv.plan.Files,
		Declared:     res.FilesChanged,
		Policy:       r.pol,
		MaxDiffLines: maxLines,
		MaxDiffBytes: r.cfg.Budget.MaxDiffBytes,
		MaxLineBytes: r.cfg.Budget.MaxLineBytes,
		Evidence:     inv.evidence,
		Base: func(ctx context.Context, p string) (gitx.Entry, error) {
			return r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, p, maxEvidenceBytes)
		},
		FixOnly:    fixOnly,
		AddedTests: added,
		FixTests:   fixTests,
		FixAlone:   fixAlone,
		Suite: func(ctx context.Context, rev string) (sandbox.Result, error) {
			if rev != commit && rev != fixOnly {
				return sandbox.Result{}, fmt.Errorf("suite: %s is neither the candidate nor the base plus the fix", short(rev))
			}
			return r.execFresh(ctx, "suite", rev, r.cfg.Suite.Command, r.cfg.Suite.Timeout)
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

// commitMessage is written by the harness and the fix type from validated
// values; no finding text reaches it. The one agent value is the declared
// symptom, in the trailers, quoted ASCII and leak-scanned with the rest:
// `fixrail verify` needs it to check the red run from the commit alone.
func (r *run) commitMessage(inv *investigation, fixes []gitx.Entry) string {
	r.claim = r.claimOf(inv, fixes)
	return fmt.Sprintf("fixrail: fix finding %s\n\n%sOpened by fixrail run %s as a draft for human review.\n\n%s",
		r.fin.ID, r.typ.CommitNote(r.env, inv.plan), r.rep.RunID, r.claim.Trailers())
}

// claimOf is what the commit says of itself (verify.Claim): the evidence
// paths as recorded and run red, the fix's own paths as written on top.
func (r *run) claimOf(inv *investigation, fixes []gitx.Entry) verify.Claim {
	c := verify.Claim{Finding: r.fin.ID, FixType: r.typ.Name, Base: r.s.BaseSHA, Version: verify.BuildVersion()}
	if t := inv.plan.Test; t != nil {
		c.TestPath, c.TestName, c.Symptom, c.SymptomSHA256 = t.Path, t.Name, t.Symptom, verify.SymptomHash(t.Symptom)
	}
	if d := inv.plan.Dependency; d != nil {
		c.Ecosystem, c.Package, c.Manifest = d.Ecosystem, d.Package, d.Manifest
	}
	if a := inv.plan.Alert; a != nil {
		c.Tool, c.Rule, c.Location, c.Severity = a.Tool, a.Rule, a.Location(), a.Severity
	}
	for _, e := range inv.evidence {
		c.Evidence = append(c.Evidence, e.Path)
	}
	for _, e := range fixes {
		if !slices.Contains(c.Evidence, e.Path) {
			c.Files = append(c.Files, e.Path)
		}
	}
	return c
}

// followUpMessage is a recheck follow-up's commit message: harness words
// and validated values only, like the first commit's, and the same
// finding's trailers (commitMessage just made r.claim the whole change's),
// so `fixrail verify` re-proves the branch through its follow-ups.
func (r *run) followUpMessage(inv *investigation, on *candidate) string {
	return fmt.Sprintf("fixrail: follow-up fix for finding %s\n\n%sThe checks fixrail watches on the draft reported findings on %s; this commit is the fix phase's answer to them, judged by every fix gate on the whole change.\nOpened by fixrail run %s as a draft for human review.\n\n%s",
		r.fin.ID, r.typ.CommitNote(r.env, inv.plan), short(on.commit), r.rep.RunID, r.claim.Trailers())
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
	for i, f := range r.fin.Untrusted() {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%s:\n%s", f.Name, f.Value)
	}
	return b.String()
}
