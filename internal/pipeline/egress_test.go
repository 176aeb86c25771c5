package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// TestEgressOutcome: the requests an invocation made decide how the run
// ends — a refusal ESCALATEs naming the first host refused (escaped), even
// after a capped request; a cap alone HALTs; allowed requests only count.
func TestEgressOutcome(t *testing.T) {
	allowed := egress.Event{Method: "POST", Host: "api.anthropic.com", Port: 443, Up: 100, Down: 50, Verdict: egress.Allowed}
	capped := egress.Event{Method: "CONNECT", Host: "api.anthropic.com", Port: 443, Up: 10, Verdict: egress.Capped, Reason: "the run's egress byte cap is reached"}
	refused := egress.Event{Method: "CONNECT", Host: "paste\u202e.example", Port: 443, Verdict: egress.Refused, Reason: "not listed in runner.egress"}
	for _, tc := range []struct {
		name       string
		evs        []egress.Event
		sandboxed  bool
		terminal   Terminal
		reason     string
		detailHas  string
		wantReport bool
	}{
		{"allowed only", []egress.Event{allowed, allowed}, true, "", "", "", true},
		{"capped", []egress.Event{allowed, capped}, true, Halt, ReasonEgressCap, "request to `api.anthropic.com:443` (the run's egress byte cap is reached)", true},
		{"refused after capped", []egress.Event{capped, refused}, true, Escalate, ReasonEgressRefused, "tried to reach `paste\\u202e.example:443`, which fixrail's egress proxy refused (not listed in runner.egress); 1 request(s)", true},
		{"unsandboxed: no account", []egress.Event{refused}, false, "", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, err := events.Open(filepath.Join(t.TempDir(), "log.ndjson"), "r", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			r := &run{rep: &Report{}, log: log}
			e := &runEgress{}
			r.egress = e
			for _, ev := range tc.evs {
				r.recordEgress(e, ev)
			}
			o := r.egressOutcome("P2", tc.sandboxed)
			switch {
			case tc.terminal == "" && o != nil:
				t.Errorf("outcome %+v, want none", o)
			case tc.terminal != "" && (o == nil || o.Terminal != tc.terminal || o.Reason != tc.reason || !strings.Contains(o.Detail, tc.detailHas)):
				t.Errorf("outcome %+v, want %s %s with %q", o, tc.terminal, tc.reason, tc.detailHas)
			}
			if o != nil && strings.ContainsRune(o.Detail, '\u202e') {
				t.Errorf("the detail carries the raw bidi override: %q", o.Detail)
			}
			if (r.rep.Egress != nil) != tc.wantReport {
				t.Fatalf("report egress %+v, want present %v", r.rep.Egress, tc.wantReport)
			}
			if u := r.rep.Egress; u != nil && u.Requests != len(tc.evs) {
				t.Errorf("report egress %+v: %d requests, want %d", u, u.Requests, len(tc.evs))
			}
		})
	}
}
