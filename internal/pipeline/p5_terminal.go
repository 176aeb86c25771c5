package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// terminal is P5: in interactive mode a human confirms (the only step the
// modes differ by), then the branch is set to the harness's commit and the
// draft PR goes to the forge.
func (r *run) terminal(ctx context.Context, inv *investigation, c *candidate) *Outcome {
	if config.Mode(r.rep.Mode) == config.Interactive {
		if o := r.check(ctx, "P5", r.confirmGate(c), nil); o != nil {
			return o
		}
	}
	// Impact analysis is advice for the reviewer, never a gate: a failure
	// is recorded as unknown, with its reason in the body and the log.
	if d, err := r.scrubInbound(c.diff.Patch); err != nil {
		c.impact = gates.DefaultImpact("the diff could not be scrubbed for the model: " + err.Error())
		r.note("impact-error", c.impact.Why)
	} else if c.impact, err = gates.Impact(ctx, r.p.Model, r.findingText(), d); err != nil {
		r.note("impact-error", err.Error())
	}
	if why, err := r.scrubInbound(c.impact.Why); err == nil {
		c.impact.Why = why
	} else {
		c.impact.Why = "the reason could not be redacted, so it is not shown"
	}
	pr := forge.PR{
		ID:     r.fin.ID,
		Title:  r.prTitle(),
		Base:   r.s.Base,
		Head:   r.branch,
		Labels: r.prLabels(c),
		Draft:  true,
		Commit: c.commit,
		Issue:  r.fin.Issue,
		Files:  c.paths,
		Body:   r.prBodyText(inv, c),
		Patch:  c.diff.Patch,
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
		pr.Labels = r.prLabels(c)
		pr.Body = r.prBodyText(inv, c)
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
	pub, err := r.p.Forge.Publish(wctx, pr)
	if err != nil {
		return r.forgeOutcome("draft PR", err)
	}
	r.rep.Warnings = append(r.rep.Warnings, pub.Warnings...)
	if err := r.s.Repo.UpdateBranch(wctx, r.branch, c.commit, r.oldHead); err != nil {
		if w, ok := r.p.Forge.(withdrawer); ok {
			if werr := w.Withdraw(wctx, pr.ID); werr != nil {
				r.rep.Warnings = append(r.rep.Warnings, "withdraw the PR bundle: "+werr.Error())
			}
		}
		return stop(Halt, ReasonInFlight, "branch "+r.branch+" moved during the run: "+err.Error())
	}
	r.rep.Branch = r.branch
	r.rep.PR = pub.Location
	r.pub = &pub
	r.reviewFrom, r.labelFrom, r.sentLabels = len(r.needsReview), len(r.labels), pr.Labels
	if o := r.afterPR(ctx, inv, c); o != nil {
		return o
	}
	detail := "reproduced red on " + r.s.judgedOn() + ", green after the fix; every gate passed"
	if len(r.needsReview) > 0 || len(r.postReasons) > 0 || r.unsandboxed || r.agentUnconfined {
		detail = "reproduced red on " + r.s.judgedOn() + ", green after the fix; labelled needs-review (see the PR body)"
	}
	return stop(DraftPR, ReasonFixed, detail)
}

// prTitle is the title a person reads on the forge: escaped
// (untrusted.OneLine), so no control in the report's title reaches it raw.
func (r *run) prTitle() string {
	t := strings.Join(strings.Fields(r.fin.Title), " ")
	// The title is a squash merge's commit subject, where GitHub reads a
	// closing keyword: a reporter's "fixes #7" would close #7 on merge.
	if untrusted.ClosingReference(t) != "" {
		return untrusted.OneLine(fmt.Sprintf("fixrail: %s (the report's title is left out: GitHub would read it as closing an issue)", r.fin.ID))
	}
	if len(t) > 72 {
		t = strings.ToValidUTF8(t[:72], "") + "…"
	}
	return untrusted.OneLine(fmt.Sprintf("fixrail: %s: %s", r.fin.ID, t))
}

// prBodyText is the body as it leaves. It is escaped whole: a control in
// any value it quotes shows as a visible \u escape, in a code span or out
// of one; a quoted copy of the after-PR section's markers is escaped, so
// that only fixrail's own pair can place that section; and no closing
// reference is left in it (unclosing).
func (r *run) prBodyText(inv *investigation, c *candidate) string {
	return unclosing(forge.Unmark(untrusted.Printable(r.prBody(inv, c))))
}

// unclosing breaks every closing reference in text, a PR body or fixrail's
// section of one, already escaped (untrusted.BreakClosing), and says so
// after its first paragraph, its heading, when it broke any. A code span
// keeps GitHub from reading a keyword in the description, but a repository
// whose squash merges take the description as the commit message puts the
// text in the commit, where backticks mean nothing: merged, a reporter's
// "fixes #7" quoted by the agent would close #7.
func unclosing(text string) string {
	out, n := untrusted.BreakClosing(text)
	if n == 0 {
		return out
	}
	refs := "closing references"
	if n == 1 {
		refs = "closing reference"
	}
	head, rest, _ := strings.Cut(out, "\n\n")
	return head + "\n\n" + fmt.Sprintf("fixrail wrote `%s` after the first letter of each closing keyword in the %d %s below, so that GitHub reads none of them as closing an issue or pull request, in this description or in the commit message a squash merge makes from it.", untrusted.ClosingBreak, n, refs) + "\n\n" + rest
}

func (r *run) prBody(inv *investigation, c *candidate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Draft fix for finding %s\n\n", r.fin.ID)
	if r.typ.Warning != nil {
		b.WriteString(r.typ.Warning(r.env, inv.plan))
		b.WriteString("\n")
	}
	// Who made the change: an agent, or fixrail's own code alone (a type
	// that plans and edits itself, as the cve bumper does).
	if inv.planned && c.edited {
		b.WriteString("> Opened by fixrail. No agent took part: fixrail's own code planned and made this change. It is a draft: a human reviews and merges; fixrail never merges.\n\n")
	} else {
		b.WriteString("> Opened by fixrail from an unattended agent's work, judged by the harness. It is a draft: a human reviews and merges; fixrail never merges.\n\n")
	}
	if r.unsandboxed {
		b.WriteString("> **Needs review:** the test and the suite ran without a sandbox (sandbox: auto, and bubblewrap was not available), so the repository's code ran with the operator's user rights.\n\n")
	}
	if r.agentUnconfined {
		b.WriteString("> **Needs review:** the agent ran without a sandbox too (sandbox: auto, and bubblewrap was not available): it could read what the operator can and reach the repository's git directory. The harness still judged and committed only what it read back itself.\n\n")
	}
	if len(r.needsReview) > 0 {
		b.WriteString("### Needs review\n\n")
		// A reason is a gate's detail, which quotes what the agent, a
		// registry or a scanner chose (an added package's version range):
		// inert as in the gate table and fixrail's after-PR section.
		for _, why := range r.needsReview {
			fmt.Fprintf(&b, "- %s\n", markdown.Code(why))
		}
		b.WriteString("\n")
	}
	b.WriteString(r.typ.Section(r.env, inv.plan, c.commit))
	b.WriteString(testsSection(inv, c))
	b.WriteString("\n### Files changed\n\n")
	for _, p := range c.paths {
		fmt.Fprintf(&b, "- %s\n", markdown.Code(p))
	}
	fmt.Fprintf(&b, "\n+%d −%d lines.\n\n### Gates run\n\n| phase | gate | verdict | detail |\n|---|---|---|---|\n", c.diff.Added, c.diff.Deleted)
	for _, g := range r.rep.Gates {
		// Details quote agent-chosen paths: a code span, so no Markdown in
		// them renders.
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.Phase, g.Name, g.Verdict, markdown.Cell(g.Detail))
	}
	b.WriteString("\n")
	b.WriteString(c.impact.Markdown())
	b.WriteString(accounts(inv, c))
	b.WriteString(r.claim.BodySection())
	fmt.Fprintf(&b, "\nRun `%s`, %s mode.\n", r.rep.RunID, r.rep.Mode)
	return b.String()
}

// maxAccountBytes bounds each account (the plan's, the result's) in the
// body, the cut marked.
const maxAccountBytes = 4 << 10

// accounts is what the plan and the result say of themselves, each under
// who wrote it: an agent's words are unverified claims; the harness's are
// its own summary of what its code did (still quoted: they carry package
// names and versions from the finding and the registries). A reviewer must
// never read the harness's account as an agent's, nor the reverse.
func accounts(inv *investigation, c *candidate) string {
	var agent, harness []string
	add := func(byHarness bool, line string) {
		// Bounded: GitHub keeps 65536 characters of a body, and an agent's
		// summary (up to a hand-off file's size) would otherwise push the
		// evidence block and fixrail's after-PR section past the cut.
		line = untrusted.Cap(line, maxAccountBytes)
		if byHarness {
			harness = append(harness, line)
		} else {
			agent = append(agent, line)
		}
	}
	add(inv.planned, "plan: "+inv.summary)
	add(c.edited, "result: "+c.result.Summary)
	var b strings.Builder
	if len(harness) > 0 {
		b.WriteString("\n### The harness's account\n\n")
		b.WriteString(markdown.Block(strings.Join(harness, "\n")))
	}
	if len(agent) > 0 {
		b.WriteString("\n### The agent's own words (unverified)\n\n")
		b.WriteString(markdown.Block(strings.Join(agent, "\n")))
	}
	return b.String()
}

// prLabels marks what the rails could not prove: a label can fail after the
// PR exists, so every such reason is in the body too.
func (r *run) prLabels(c *candidate) []string {
	labels := []string{"fixrail", "fix:" + r.typ.Name}
	if r.unsandboxed || r.agentUnconfined {
		labels = append(labels, gates.LabelNeedsReview)
	}
	labels = append(labels, r.labels...)
	labels = append(labels, c.impact.Label())
	slices.Sort(labels)
	return slices.Compact(labels)
}

// confirmGate asks the operator, in interactive mode, before anything
// leaves: the only step the modes differ by.
func (r *run) confirmGate(c *candidate) *gates.Gate {
	return &gates.Gate{
		Name:   "confirm",
		Doc:    "in interactive mode, the operator says yes to the draft PR",
		Reason: ReasonDeclined,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			if r.p.Confirm == nil {
				return gates.Verdict{Detail: "interactive mode with no way to ask"}, nil
			}
			ok, err := r.p.Confirm(ctx, r.confirmQuestion(c))
			if err != nil {
				return gates.Verdict{Detail: "no confirmation: " + err.Error()}, nil
			}
			if !ok {
				return gates.Verdict{Detail: "declined"}, nil
			}
			return pass("confirmed")
		},
	}
}

// The confirm shows at most this much of the diff: enough to judge a fix
// within the diff budget, bounded for a hostile one.
const (
	confirmDiffLines  = 200
	confirmDiffBytes  = 16 << 10
	confirmDetailCap  = 240
	confirmDiffIndent = "  | "
)

// confirmQuestion is what the operator judges before saying yes: the gates
// with their verdicts and details, why the PR would need review, and the
// diff itself (bounded, redacted, every line escaped and marked as the
// agent's text), not only its counts.
func (r *run) confirmQuestion(c *candidate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fixrail: the fix for finding %s reached P5; the draft PR would come from %s.\n", r.fin.ID, r.branch)
	b.WriteString("Gates (a verdict per gate; unconfirmed means a model could not confirm it):\n")
	for _, g := range r.rep.Gates {
		fmt.Fprintf(&b, "  %-11s %-3s %-20s %s\n", g.Verdict, g.Phase, g.Name, clip(untrusted.OneLine(g.Detail), confirmDetailCap))
	}
	for _, why := range r.needsReview {
		fmt.Fprintf(&b, "Needs review: %s\n", clip(untrusted.OneLine(why), confirmDetailCap))
	}
	if r.unsandboxed || r.agentUnconfined {
		b.WriteString("Needs review: a command ran outside the sandbox (sandbox: auto, bubblewrap unusable)\n")
	}
	fmt.Fprintf(&b, "Diff (%d file(s), +%d -%d; the agent's text, escaped):\n", len(c.paths), c.diff.Added, c.diff.Deleted)
	{
		lines := strings.Split(strings.TrimSuffix(c.diff.Text, "\n"), "\n")
		shown, size := 0, 0
		for _, l := range lines {
			// Tabs shown as spaces: an escaped \u0009 in every Go line
			// would hide the code; anything else unprintable is escaped.
			l = untrusted.OneLine(strings.ReplaceAll(l, "\t", "    "))
			if shown == confirmDiffLines || size+len(l) > confirmDiffBytes {
				break
			}
			b.WriteString(confirmDiffIndent + l + "\n")
			shown++
			size += len(l) + 1
		}
		if rest := len(lines) - shown; rest > 0 {
			fmt.Fprintf(&b, "%s[%d more line(s) not shown: git show %s]\n", confirmDiffIndent, rest, c.commit)
		}
	}
	ask := fmt.Sprintf("Open a draft PR for finding %s from %s (%d file(s), +%d -%d)?", r.fin.ID, r.branch, len(c.paths), c.diff.Added, c.diff.Deleted)
	if r.pub != nil {
		// A recheck's follow-up: the draft exists; this is one more push.
		ask = fmt.Sprintf("Push this follow-up commit onto %s, the branch of the open draft %s (the whole change: %d file(s), +%d -%d)?", r.branch, r.pub.Location, len(c.paths), c.diff.Added, c.diff.Deleted)
	}
	// Redacted as the PR text will be: a secret the agent wrote is not
	// shown on a terminal (or a CI log) either.
	shown, err := r.scrubInbound(b.String())
	if err != nil {
		return "fixrail: the gates and the diff are not shown: their redaction failed (" + err.Error() + ").\n" + ask
	}
	return shown + ask
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
