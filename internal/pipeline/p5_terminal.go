package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
)

// terminal is P5: in interactive mode a human confirms (the only step the
// modes differ by), then the branch is set to the harness's commit and the
// draft PR goes to the forge.
func (r *run) terminal(ctx context.Context) *Outcome {
	if config.Mode(r.rep.Mode) == config.Interactive {
		q := fmt.Sprintf("Open a draft PR for finding %s from %s (%d file(s), +%d -%d)?", r.fin.ID, r.branch, len(r.change.paths), r.change.diff.Added, r.change.diff.Deleted)
		if r.p.Confirm == nil {
			return stop(Halt, ReasonDeclined, "interactive mode with no way to ask")
		}
		ok, err := r.p.Confirm(ctx, q)
		if err != nil {
			return stop(Halt, ReasonDeclined, "no confirmation: "+err.Error())
		}
		if !ok {
			r.gate("P5", "confirm", "fail", "declined")
			return stop(Halt, ReasonDeclined, "the operator declined the draft PR")
		}
		r.gate("P5", "confirm", "pass", "confirmed")
	}
	if o := r.stopped(ctx); o != nil {
		return o
	}
	// Impact analysis is advice for the reviewer, never a gate: a failure
	// is recorded as medium, with the error in the event log.
	r.impact = gates.DefaultImpact()
	if d, err := r.scrubInbound(r.change.diff.Patch); err != nil {
		r.note("impact-error", "diff not scrubbed: "+err.Error())
	} else if r.impact, err = gates.Impact(ctx, r.s.Model, r.findingText(), d); err != nil {
		r.note("impact-error", err.Error())
	}
	pr := forge.PR{
		ID:     r.fin.ID,
		Title:  r.prTitle(),
		Base:   r.s.Base,
		Head:   r.branch,
		Labels: r.prLabels(),
		Draft:  true,
		Commit: r.change.commit,
		Body:   r.prBody(),
		Patch:  r.change.diff.Patch,
	}
	// Everything that leaves goes through the leak scan first; the event
	// log's chokepoint having had to redact anything counts as a hit too.
	texts := [][2]string{{"PR title", pr.Title}, {"PR body", pr.Body}, {"branch name", pr.Head}, {"PR labels", strings.Join(pr.Labels, "\n")}}
	reviews, err := r.checkOutbound(texts...)
	if err != nil {
		return r.leakOutcome(err)
	}
	if len(reviews) > 0 {
		// Only review-tier findings: the texts go redacted, with the reasons
		// in the body and the label, and are scanned again as sent.
		r.needsReview = append(r.needsReview, "leak-scan: redacted in the PR text: "+strings.Join(reviews, "; "))
		r.labels = append(r.labels, gates.LabelNeedsReview)
		pr.Labels = r.prLabels()
		pr.Body = r.prBody()
		for _, f := range []*string{&pr.Title, &pr.Body} {
			if *f, _, err = r.s.Scrub.Redact(*f); err != nil {
				return r.leakOutcome(&leakError{what: "PR text", err: err})
			}
		}
		texts = [][2]string{{"PR title", pr.Title}, {"PR body", pr.Body}, {"branch name", pr.Head}, {"PR labels", strings.Join(pr.Labels, "\n")}}
		if again, err := r.checkOutbound(texts...); err != nil || len(again) > 0 {
			if err == nil {
				err = &leakError{what: "PR text", rules: again}
			}
			return r.leakOutcome(err)
		}
	}
	if r.log.Redacted() {
		r.gate("P5", "leak-scan", "fail", "the event log had to redact run text")
		return stop(Escalate, ReasonLeak, "outbound text blocked: secret material reached the run's own text")
	}
	r.gate("P5", "leak-scan", "pass", "PR title, body, labels and branch clean")
	// From here on the run is finishing its writes: a late signal must not
	// leave a branch without its PR bundle. The bundle goes first and the
	// branch moves after it, by compare-and-swap; if the branch moved under
	// the run, the bundle is withdrawn again, so there is never a branch
	// without its bundle nor a bundle for a branch that is not this commit.
	wctx := context.WithoutCancel(ctx)
	loc, err := r.forge.OpenDraft(wctx, pr)
	if err != nil {
		return stop(Escalate, ReasonForgeError, "draft PR: "+err.Error())
	}
	if err := r.s.Repo.UpdateBranch(wctx, r.branch, r.change.commit, r.oldHead); err != nil {
		if w, ok := r.forge.(interface {
			Withdraw(ctx context.Context, id string) error
		}); ok {
			if werr := w.Withdraw(wctx, pr.ID); werr != nil {
				r.rep.Warnings = append(r.rep.Warnings, "withdraw the PR bundle: "+werr.Error())
			}
		}
		return stop(Halt, ReasonInFlight, "branch "+r.branch+" moved during the run: "+err.Error())
	}
	r.rep.Branch = r.branch
	r.rep.PR = loc
	detail := "reproduced red on " + r.s.Base + ", green after the fix; every gate passed"
	if len(r.needsReview) > 0 || r.unsandboxed || r.agentUnconfined {
		detail = "reproduced red on " + r.s.Base + ", green after the fix; labelled needs-review (see the PR body)"
	}
	return stop(DraftPR, ReasonFixed, detail)
}

func (r *run) prTitle() string {
	t := strings.Join(strings.Fields(r.fin.Title), " ")
	if len(t) > 72 {
		t = strings.ToValidUTF8(t[:72], "") + "…"
	}
	return fmt.Sprintf("fixrail: %s: %s", r.fin.ID, t)
}

func (r *run) prBody() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Draft fix for finding %s\n\n", r.fin.ID)
	b.WriteString("> Opened by fixrail for an unattended agent. It is a draft: a human reviews and merges; fixrail never merges.\n\n")
	if r.unsandboxed {
		b.WriteString("> **Needs review:** the test and the suite ran without a sandbox (sandbox: auto, and bubblewrap was not available), so the repository's code ran with the operator's user rights.\n\n")
	}
	if r.agentUnconfined {
		b.WriteString("> **Needs review:** the agent ran without a sandbox too (sandbox: auto, and bubblewrap was not available): it could read what the operator can and reach the repository's git directory. The harness still judged and committed only what it read back itself.\n\n")
	}
	if len(r.needsReview) > 0 {
		b.WriteString("### Needs review\n\n")
		for _, why := range r.needsReview {
			fmt.Fprintf(&b, "- %s\n", why)
		}
		b.WriteString("\n")
	}
	b.WriteString("### What was reproduced\n\n")
	fmt.Fprintf(&b, "The harness ran %s on %s (%s) on a fresh checkout of the base plus the test before any fix existed: it failed, and its output contained the reported symptom %s. ",
		codeSpan(strings.Join(r.oracleArgv, " ")), codeSpan(r.s.Base), short(r.s.BaseSHA), codeSpan(r.plan.Test.Symptom))
	fmt.Fprintf(&b, "After the fix, the same test, byte for byte, passes on a fresh checkout of commit %s, which is exactly what this branch holds.\n\n", short(r.change.commit))
	b.WriteString("### The test that proves it\n\n")
	fmt.Fprintf(&b, "- %s", codeSpan(r.plan.Test.Path))
	if r.plan.Test.Name != "" {
		fmt.Fprintf(&b, " (%s)", codeSpan(r.plan.Test.Name))
	}
	b.WriteString("\n")
	for _, f := range r.plan.Test.Fixtures {
		fmt.Fprintf(&b, "- fixture %s\n", codeSpan(f))
	}
	b.WriteString("\n### Files changed\n\n")
	for _, p := range r.change.paths {
		fmt.Fprintf(&b, "- %s\n", codeSpan(p))
	}
	fmt.Fprintf(&b, "\n+%d −%d lines.\n\n### Gates run\n\n| phase | gate | verdict | detail |\n|---|---|---|---|\n", r.change.diff.Added, r.change.diff.Deleted)
	for _, g := range r.rep.Gates {
		// Details quote agent-chosen paths: a code span, so no Markdown in
		// them renders.
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.Phase, g.Name, g.Verdict, strings.ReplaceAll(codeSpan(g.Detail), "|", "\\|"))
	}
	b.WriteString("\n")
	b.WriteString(r.impact.Markdown())
	b.WriteString("\n### The agent's own words (unverified)\n\n")
	b.WriteString(quoteBlock("plan: " + r.planSummary + "\nresult: " + r.change.result.Summary))
	fmt.Fprintf(&b, "\nRun `%s`, %s mode.\n", r.rep.RunID, r.rep.Mode)
	return b.String()
}

// codeSpan renders text inline as code, whatever it holds: on one line,
// delimited by a backtick run longer than any inside it (CommonMark), with
// a space of padding so a leading or trailing backtick cannot merge with
// the delimiter. Agent and report values in the body go through it, so
// none can close its span and add links, images or headings.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

// quoteBlock renders untrusted text as a code block whose fence is longer than
// any backtick run inside it, so the text cannot close it and add markup.
func quoteBlock(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// prLabels marks what the rails could not prove: a label can fail after the
// PR exists, so every such reason is in the body too.
func (r *run) prLabels() []string {
	labels := []string{"fixrail", "fix:bug"}
	if r.unsandboxed || r.agentUnconfined {
		labels = append(labels, gates.LabelNeedsReview)
	}
	labels = append(labels, r.labels...)
	labels = append(labels, r.impact.Label())
	slices.Sort(labels)
	return slices.Compact(labels)
}
