package pipeline

import (
	"cmp"
	"fmt"
	"sync"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// EgressUsage is what the agent's sandboxed invocations sent out through
// fixrail's egress proxy: the allowlist they ran under, and every request
// counted by verdict with its bytes each way. Refusals names the first
// few host:port refused and why (escaped: the agent chose them).
type EgressUsage struct {
	Allow     []string `json:"allow"`
	Requests  int      `json:"requests"`
	Allowed   int      `json:"allowed"`
	Refused   int      `json:"refused"`
	Capped    int      `json:"capped"`
	Failed    int      `json:"failed"`
	BytesUp   int64    `json:"bytes_up"`
	BytesDown int64    `json:"bytes_down"`
	Refusals  []string `json:"refusals,omitempty"`
}

// maxRefusals bounds EgressUsage.Refusals; the event log has the first
// maxEgressEvents.
const maxRefusals = 5

// maxEgressEvents bounds the event log's lines per verdict other than
// allowed (allowed requests are bounded by the connection cap): an agent
// that opens connection after connection without a valid or listed request
// is counted in the report, not written to disk and sent to the webhook
// without end until the wall clock. maxEgressHost bounds the host an event
// names: a DNS name is at most 253 bytes, a request head up to 64 KiB.
const (
	maxEgressEvents = 100
	maxEgressHost   = 256
	maxEgressReason = 1024
)

// egressDefaulter is an agent adapter that knows the model API its agent
// needs (runner.Claude): the allowlist when runner.egress is absent. An
// adapter without it gets nothing by default.
type egressDefaulter interface {
	DefaultEgress() ([]egress.Target, error)
}

// runEgress is the run's egress policy and its account, shared by both
// invocations (the caps are the run's).
type runEgress struct {
	pol *egress.Policy

	mu      sync.Mutex
	use     EgressUsage
	refused egress.Event // the first refused request
	capped  egress.Event // the first capped one
	logged  map[string]int
}

// egressPolicy makes the run's policy on first use: runner.egress from
// the base commit's config, or the adapter's model API when the key is
// absent.
func (r *run) egressPolicy() (*egress.Policy, error) {
	if r.egress != nil {
		return r.egress.pol, nil
	}
	allow := r.cfg.Runner.EgressTargets()
	if allow == nil {
		if d, ok := r.p.Runner.(egressDefaulter); ok {
			var err error
			if allow, err = d.DefaultEgress(); err != nil {
				return nil, err
			}
		}
	}
	e := &runEgress{}
	e.use.Allow = make([]string, 0, len(allow))
	for _, t := range allow {
		e.use.Allow = append(e.use.Allow, t.String())
	}
	e.pol = &egress.Policy{
		Allow:    allow,
		MaxBytes: r.cfg.Runner.EgressMaxBytes,
		MaxConns: r.cfg.Runner.EgressMaxConnections,
		Record:   func(ev egress.Event) { r.recordEgress(e, ev) },
	}
	r.egress = e
	return e.pol, nil
}

// recordEgress counts one request and writes its event. It runs on the
// proxy's goroutines while the agent runs.
func (r *run) recordEgress(e *runEgress, ev egress.Event) {
	ev.Host = untrusted.Cap(ev.Host, maxEgressHost)
	ev.Reason = untrusted.Cap(ev.Reason, maxEgressReason)
	target := untrusted.OneLine(fmt.Sprintf("%s:%d", ev.Host, ev.Port))
	e.mu.Lock()
	u := &e.use
	u.Requests++
	u.BytesUp += ev.Up
	u.BytesDown += ev.Down
	switch ev.Verdict {
	case egress.Allowed:
		u.Allowed++
	case egress.Refused:
		u.Refused++
		if len(u.Refusals) < maxRefusals {
			u.Refusals = append(u.Refusals, target+": "+ev.Reason)
		}
	case egress.Capped:
		u.Capped++
	default:
		u.Failed++
	}
	if ev.Verdict == egress.Refused && e.refused.Verdict == "" {
		e.refused = ev
	}
	if ev.Verdict == egress.Capped && e.capped.Verdict == "" {
		e.capped = ev
	}
	if e.logged == nil {
		e.logged = map[string]int{}
	}
	e.logged[ev.Verdict]++
	n := e.logged[ev.Verdict]
	e.mu.Unlock()
	if ev.Verdict != egress.Allowed && n > maxEgressEvents {
		if n == maxEgressEvents+1 {
			r.log.Emit(events.Event{Type: "egress", Name: "further " + ev.Verdict, Verdict: ev.Verdict,
				Detail: fmt.Sprintf("%d %s requests logged; the ones after are counted in the run report's egress account, not logged one by one", maxEgressEvents, ev.Verdict)})
		}
		return
	}
	detail := fmt.Sprintf("%s %s, %d bytes up, %d down", cmp.Or(ev.Method, "?"), target, ev.Up, ev.Down)
	if ev.Reason != "" {
		detail += ": " + ev.Reason
	}
	r.log.Emit(events.Event{Type: "egress", Name: target, Verdict: ev.Verdict, Detail: detail,
		Host: untrusted.OneLine(ev.Host), Port: ev.Port, BytesUp: ev.Up, BytesDown: ev.Down})
}

// egressOutcome ends the run when the invocation just made tried to leave:
// a refused request ESCALATEs (the agent tried to reach what the owners
// did not list — evidence, not an accident), a capped one HALTs. It also
// puts the account in the report.
func (r *run) egressOutcome(phase string, sandboxed bool) *Outcome {
	e := r.egress
	if e == nil || !sandboxed {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	use := e.use
	use.Allow = append([]string(nil), use.Allow...)
	use.Refusals = append([]string(nil), use.Refusals...)
	r.rep.Egress = &use
	target := func(ev egress.Event) string { return untrusted.Quote(fmt.Sprintf("%s:%d", ev.Host, ev.Port)) }
	switch {
	case use.Refused > 0:
		return stop(Escalate, ReasonEgressRefused, fmt.Sprintf(
			"the agent (%s) tried to reach %s, which fixrail's egress proxy refused (%s); %d request(s) refused in all, each in the event log. The agent's network is runner.egress and nothing else: a request elsewhere is an attempt to send something out",
			phase, target(e.refused), e.refused.Reason, use.Refused))
	case use.Capped > 0:
		return stop(Halt, ReasonEgressCap, fmt.Sprintf(
			"the agent (%s) reached the run's egress cap on a request to %s (%s): %d bytes up, %d down, %d request(s); runner.egress_max_bytes and runner.egress_max_connections set the caps",
			phase, target(e.capped), e.capped.Reason, use.BytesUp, use.BytesDown, use.Requests))
	}
	return nil
}

// The claude adapter knows its model API.
var _ egressDefaulter = (*runner.Claude)(nil)
