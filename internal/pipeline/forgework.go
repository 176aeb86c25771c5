package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
)

// ciWaiter is a forge that can wait for a published PR's checks. The local
// outbox answers "no CI"; a forge without it is treated the same.
type ciWaiter interface {
	WaitChecks(ctx context.Context, pub forge.Published, deadline time.Time, required []forge.CheckRef) (forge.CIResult, error)
}

// openWorkGate refuses to stack on open work (S7): the finding's branch
// left on the remote by an earlier run, another fixrail PR whose checks
// are red or pending, or an escalation already open on the issue.
func (r *run) openWorkGate() *gates.Gate {
	return &gates.Gate{
		Name:   "open-work",
		Doc:    "no earlier branch of this finding on the remote, no fixrail PR with red or pending checks, no open escalation on the issue",
		Reason: verdict.ReasonInFlightBroken,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			w, err := r.p.Forge.OpenWork(ctx, forge.Subject{ID: r.fin.ID, Issue: r.fin.Issue})
			if err != nil {
				return gates.Verdict{}, err
			}
			if w.Escalation != nil {
				return fail(verdict.ReasonEscalationOpen, fmt.Sprintf("issue #%d already carries %s (%s): nothing to do until a human clears it", w.Escalation.Number, w.Escalation.Label, w.Escalation.Location))
			}
			if w.LeftBranch != "" {
				return fail(ReasonInFlight, "branch "+w.LeftBranch+" is on the remote from an earlier run with no open PR; review or delete it first")
			}
			var broken []string
			for _, f := range w.Fixes {
				if f.Broken() {
					broken = append(broken, fmt.Sprintf("%s (%s)", f.Location, f.Checks))
				}
			}
			if len(broken) > 0 {
				return gates.Verdict{Detail: "open fixrail PR(s) whose checks are not green: " + strings.Join(broken, ", ")}, nil
			}
			return pass(fmt.Sprintf("%d open fixrail fix(es), none with red or pending checks", len(w.Fixes)))
		},
	}
}

// ciGate waits for the draft PR's checks: red ⇒ ESCALATE ci-failed, the PR
// stays open and is labelled; no CI, or checks that never finish, leave a
// DRAFT-PR with the reason as a warning (the body is already sent).
func (r *run) ciGate(ctx context.Context, pub forge.Published) *Outcome {
	w, ok := r.p.Forge.(ciWaiter)
	if !ok {
		return nil
	}
	configured, err := forge.ParseCheckRefs(r.cfg.Forge.RequiredChecks)
	if err != nil {
		r.gate("P5", "ci", verdict.Error, "forge.required_checks: "+err.Error())
		return stop(Escalate, ReasonCheckError, "forge.required_checks: "+err.Error())
	}
	// The protection's pins too: a check it pins to an app counts only
	// from that app, as GitHub counts it for the merge.
	required := forge.GateChecks(configured, r.protect)
	endStep := r.step("the wait for CI on " + pub.Location)
	res, err := w.WaitChecks(ctx, pub, time.Now().Add(r.cfg.Forge.CIWait), required)
	endStep()
	if err != nil {
		r.gate("P5", "ci", verdict.Error, err.Error())
		return r.forgeOutcome("CI checks", err)
	}
	// Before its verdict labels the PR or goes into its body: is the PR
	// still the one whose head was judged?
	r.readBack(ctx)
	switch res.State {
	case forge.CIGreen:
		detail := "every check that reported passed on " + short(res.HeadSHA)
		if len(required) > 0 {
			// Which app's run answered for each required check: what was judged.
			detail += ": " + res.Detail
		}
		if n := unwaited(r.protect.RequiredChecks, required, res.Checks); len(n) > 0 {
			// Green here is not mergeable there: say which checks the
			// branch still waits for that this gate did not.
			detail += "; the branch's protection also requires " + strings.Join(n, ", ") + ", which did not report and which the gate does not wait for (not in forge.required_checks)"
		}
		r.gate("P5", "ci", verdict.Pass, detail)
	case forge.CIRed:
		r.gate("P5", "ci", verdict.Fail, res.Detail)
		return stop(Escalate, verdict.ReasonCIFailed, "CI is red on the draft PR "+pub.Location+": "+res.Detail)
	case forge.CINone:
		// The local outbox, or a repository with no CI: nothing to record.
	default:
		// Pending at the deadline, or required checks that never came:
		// the draft is unverified, and says so — the label, and a
		// sentence in fixrail's section of the body.
		r.gate("P5", "ci", verdict.Unconfirmed, string(res.State)+": "+res.Detail)
		r.rep.Warnings = append(r.rep.Warnings, "CI "+string(res.State)+" on the draft PR: "+res.Detail)
		switch {
		case len(res.Ambiguous) > 0 && len(res.Missing) == 0:
			// Returned before the deadline: waiting cannot say whose green is real.
			r.postReview(ctx, fmt.Sprintf("CI on %s did not confirm the required checks (%s): %s. Name the app of each such check in forge.required_checks (name@app-slug) to say whose run counts. Nothing here says the checks pass.", short(res.HeadSHA), res.State, res.Detail))
		case len(res.Missing) > 0:
			r.postReview(ctx, fmt.Sprintf("Required checks had not reported on %s (from the app each is pinned to, where one is) when fixrail stopped waiting (%s, forge.ci_wait %s): %s. Nothing here says the checks pass.", short(res.HeadSHA), res.State, r.cfg.Forge.CIWait, res.Detail))
		default:
			r.postReview(ctx, fmt.Sprintf("CI had not finished on %s when fixrail stopped waiting (%s, forge.ci_wait %s): %s. Nothing here says the checks pass.", short(res.HeadSHA), res.State, r.cfg.Forge.CIWait, res.Detail))
		}
	}
	return nil
}

// sendable is a best-effort text (a notice, the body's section) as it may
// leave: escaped, then redacted, then leak-scanned — escaped first, so
// what is scanned is what is sent. Any finding, even a review-tier one,
// withholds it: there is no body to say why here.
func (r *run) sendable(what, text string) (string, error) {
	out, _, err := r.s.Scrub.Redact(untrusted.Printable(text))
	if err != nil {
		return "", err
	}
	reviews, err := r.checkOutbound([2]string{what, out})
	if err == nil && len(reviews) > 0 {
		err = &leakError{what: what, rules: reviews}
	}
	return out, err
}

// notifyTimeout bounds the best-effort notice.
const notifyTimeout = time.Minute

// notify tells the finding's tracker issue (or, for ci-failed, the PR) how
// an ESCALATE or NOT-REPRO run ended, best effort: the text passes the same
// redaction and leak scan as the PR, and a failure is a warning — the
// terminal and the exit code stand whatever the forge did. A finding with
// no tracker item gets no notice.
func (r *run) notify() {
	t := r.rep.Terminal
	// An escalation already open on the issue makes the run a no-op, said
	// on the issue (S7): the HALT is ours, the state is still escalated.
	open := t == Halt && r.rep.Reason == verdict.ReasonEscalationOpen
	if t != Escalate && t != NotRepro && !open {
		return
	}
	n := forge.Notice{ID: r.fin.ID, Terminal: forge.Terminal(t), Reason: r.rep.Reason, Number: r.fin.Issue}
	if open {
		n.Terminal = forge.Escalate
	}
	n.Labels = []string{forge.NoticeLabel(n.Terminal)}
	if t == Escalate && r.pub != nil && r.pub.Number != 0 {
		// An escalation after the draft exists (red CI, a recheck that
		// stayed red, a follow-up a gate refused) is told on the PR.
		n.Number = r.pub.Number
		if r.rep.Reason == verdict.ReasonCIFailed {
			n.Labels = append(n.Labels, forge.LabelCIFailed)
		}
	}
	if n.Number == 0 {
		return
	}
	// The detail quotes what the agent, the test or the forge chose (paths,
	// error text): a text block, so a link, an image (a fetch on every
	// view) or a mention in it shows as text on the issue.
	body := fmt.Sprintf("fixrail ended **%s** (`%s`) for finding %s.\n\n%s\nRun `%s`. A human takes it from here; fixrail will not retry on its own.\n",
		t, r.rep.Reason, r.fin.ID, markdown.Block(r.rep.Detail), r.rep.RunID)
	if c := r.rep.Conclusion; c != nil && t == NotRepro {
		// The agent's own answer, quoted as such: fixrail checked that the
		// plan says it, not that it is so.
		body = fmt.Sprintf("fixrail ended **%s** (`%s`) for finding %s: %s, and wrote no test. fixrail did not check that conclusion.\n\nThe agent's reason, as it wrote it:\n\n%s\nRun `%s`. A human takes it from here; fixrail will not retry on its own.\n",
			t, r.rep.Reason, r.fin.ID, concluded(c.Code), markdown.Block(c.Reason), r.rep.RunID)
	}
	if open {
		body = fmt.Sprintf("fixrail did nothing for finding %s: this issue already carries an open escalation, and a human has not cleared it yet. Remove the `%s` label to let fixrail try again.\n\nRun `%s`.\n",
			r.fin.ID, forge.LabelEscalated, r.rep.RunID)
	}
	body, err := r.sendable("notice", body)
	if err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "notice not sent: "+err.Error())
		return
	}
	n.Body = body
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.parent), notifyTimeout)
	defer cancel()
	if err := r.p.Forge.Notify(ctx, n); err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "notice on #"+fmt.Sprint(n.Number)+" failed (the run still ends "+string(t)+"): "+err.Error())
		return
	}
	r.note("notice", fmt.Sprintf("posted on #%d with %s", n.Number, strings.Join(n.Labels, ", ")))
}

// unwaited are the checks the branch's protection requires by name that
// the gate was not asked to wait for and that did not report on the head.
func unwaited(protected []string, waited []forge.CheckRef, reported []forge.Check) []string {
	var out []string
	for _, name := range protected {
		if slices.ContainsFunc(waited, func(c forge.CheckRef) bool { return c.Name == name }) ||
			slices.ContainsFunc(reported, func(c forge.Check) bool { return c.Name == name }) {
			continue
		}
		out = append(out, name)
	}
	return out
}
