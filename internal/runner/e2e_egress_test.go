package runner_test

import (
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// egressLog records a policy's events.
type egressLog struct {
	mu     sync.Mutex
	events []egress.Event
}

func (l *egressLog) add(e egress.Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }

func (l *egressLog) count(verdict string) (n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.Verdict == verdict {
			n++
		}
	}
	return n
}

// TestClaudeThroughEgressProxy: the real CLI, in bubblewrap with its own
// empty network namespace, reaches the fake Messages API only through the
// egress proxy — every model request is an allowed event — and with the
// fake's host:port off the allowlist it reaches nothing: every request is
// refused, the fake sees no model request, and the run fails.
func TestClaudeThroughEgressProxy(t *testing.T) {
	for _, listed := range []bool{true, false} {
		t.Run("listed="+strconv.FormatBool(listed), func(t *testing.T) {
			run, wt := world(t, map[string]string{"src/x.py": "x = 1\n"})
			log := &egressLog{}
			if buildErr != nil {
				t.Fatal(buildErr)
			}
			turns := []fakemodel.Turn{
				turn(writeCall(filepath.Join(wt, "tests/test_x.py"), "assert False\n")),
				turn(writeCall(filepath.Join(run, "PLAN.json"), `{"summary": "s"}`)),
				{Text: "Done."},
			}
			srv := fakemodel.Start(t, fakemodel.Scenario{Turns: turns})
			pol := &egress.Policy{Record: log.add}
			if listed {
				// The allowlisted host is the fake's, as DefaultEgress
				// derives it from ANTHROPIC_BASE_URL.
				allow, err := runner.DefaultEgress("claude", func(k string) (string, bool) { return srv.URL, k == "ANTHROPIC_BASE_URL" })
				if err != nil || len(allow) != 1 || allow[0] != fakeTarget(t, srv.URL) {
					t.Fatalf("DefaultEgress = %v, %v; want the fake's %v", allow, err, fakeTarget(t, srv.URL))
				}
				pol.Allow = allow
			}
			a := runAgentOn(t, srv, run, wt, runner.Investigate, "Reproduce the bug.", func(inv *runner.Invocation) {
				inv.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{run}, Egress: pol}
			}, len(turns))
			if !a.res.Sandboxed && a.err == nil {
				t.Fatal("the agent ran outside the sandbox")
			}
			models := 0
			for _, r := range a.srv.Requests() {
				if r.Path == "/v1/messages" {
					models++
				}
			}
			if listed {
				a.mustSucceed(t)
				fileIs(t, filepath.Join(wt, "tests/test_x.py"), "assert False\n")
				if got := log.count(egress.Allowed); got < models || models == 0 {
					t.Errorf("%d allowed egress events for %d model requests", got, models)
				}
				if got := log.count(egress.Refused); got != 0 {
					t.Errorf("%d refused egress events: %+v", got, log.events)
				}
				return
			}
			if a.err == nil {
				t.Error("the agent succeeded with its model API off the allowlist")
			}
			if models != 0 {
				t.Errorf("the fake saw %d model requests through a proxy that lists nothing", models)
			}
			if log.count(egress.Refused) == 0 || log.count(egress.Allowed) != 0 {
				t.Errorf("egress events %+v, want refusals only", log.events)
			}
		})
	}
}

// fakeTarget is the fake's host:port.
func fakeTarget(t *testing.T, base string) egress.Target {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(u.Host)
	tg, err := egress.ParseTarget(net.JoinHostPort(host, port))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}
