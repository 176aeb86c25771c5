package pipeline

import (
	"context"
	"fmt"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/verdict"
)

// check runs one gate and records its verdict; it is the only place a
// check's answer becomes an outcome, for the pipeline's own checks, the
// catalogue's and a fix type's alike. A stop (signal, wall clock) that
// fired meanwhile wins; a containment error (the clone changed, no
// sandbox) is mapped as such; any other error means the gate could not
// decide, and the run fails closed; a failure ends the run in the gate's
// terminal with its reason (or the verdict's, for a check with several);
// an unconfirmed pass ships, labelled, with the reason in the PR body.
func (r *run) check(ctx context.Context, phase string, g *gates.Gate, c *gates.Change) *Outcome {
	v, err := g.Run(ctx, c)
	if o := r.stopped(ctx); o != nil {
		return o
	}
	if err != nil {
		r.gate(phase, g.Name, verdict.Error, err.Error())
		return r.classify(phase, g.Name+" could not decide", err)
	}
	if !v.Pass {
		r.gateVerdict(phase, g.Name, verdict.Fail, v)
		reason := g.Reason
		if v.Reason != "" {
			reason = v.Reason
		}
		t := g.Terminal()
		if v.Terminal != "" {
			t = v.Terminal
		}
		return stop(t, reason, fmt.Sprintf("%s: %s", g.Name, v.Detail))
	}
	if v.Unconfirmed {
		r.gateVerdict(phase, g.Name, verdict.Unconfirmed, v)
		r.needsReview = append(r.needsReview, g.Name+": "+v.Detail)
		if v.Label != "" {
			r.labels = append(r.labels, v.Label)
		}
		return nil
	}
	r.gateVerdict(phase, g.Name, verdict.Pass, v)
	return nil
}

// checks runs gates in order; the first that stops the run decides.
func (r *run) checks(ctx context.Context, phase string, gs []*gates.Gate, c *gates.Change) *Outcome {
	for _, g := range gs {
		if o := r.check(ctx, phase, g, c); o != nil {
			return o
		}
	}
	return nil
}

// pass is a verdict for the pipeline's own checks.
func pass(detail string) (gates.Verdict, error) {
	return gates.Verdict{Pass: true, Detail: detail}, nil
}

// fail is a failing verdict with its own reason.
func fail(reason, detail string) (gates.Verdict, error) {
	return gates.Verdict{Reason: reason, Detail: detail}, nil
}

// classify is the one place an error becomes a terminal: the containment
// layers' refusals (the clone changed, no sandbox) and the forge's typed
// errors each have their own; anything else from a check means it could
// not decide, and the run fails closed. The error stays in the outcome.
func (r *run) classify(phase, what string, err error) *Outcome {
	if o := r.containmentOutcome(phase, err); o != nil {
		o.Err = err
		return o
	}
	if isForgeError(err) {
		return r.forgeOutcome(what, err)
	}
	return &Outcome{Terminal: Escalate, Reason: ReasonGateError, Detail: fmt.Sprintf("%s: %v", what, err), Err: err}
}
