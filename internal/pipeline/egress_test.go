package pipeline

import (
	"encoding/json"
	"maps"
	"os"
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

// TestEgressEventsBounded: an agent that opens connection after connection
// — bytes that are no request, hosts off the list, each naming a 60 KB
// host — is counted in full in the report but logged for the first
// maxEgressEvents of each verdict and one line saying the rest are not,
// with each host cut: the event log (and the webhook behind it) cannot be
// made to grow without end while the wall clock runs. Allowed requests,
// which the connection cap bounds, are each logged.
func TestEgressEventsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.ndjson")
	log, err := events.Open(path, "r", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{rep: &Report{}, log: log}
	e := &runEgress{}
	r.egress = e
	long := strings.Repeat("x", 60<<10) + ".example"
	const n = 1000
	for range n {
		r.recordEgress(e, egress.Event{Verdict: egress.Failed, Reason: "not an HTTP proxy request (or a head over 64 KiB)"})
		r.recordEgress(e, egress.Event{Method: "CONNECT", Host: long, Port: 443, Verdict: egress.Refused, Reason: "host " + long + " is not listed"})
	}
	for range 150 {
		r.recordEgress(e, egress.Event{Method: "CONNECT", Host: "api.anthropic.com", Port: 443, Up: 1, Down: 1, Verdict: egress.Allowed})
	}
	o := r.egressOutcome("P2", true)
	log.Close()
	if o == nil || o.Reason != ReasonEgressRefused || len(o.Detail) > 4<<10 {
		t.Errorf("outcome %+v: want %s with a bounded detail", o, ReasonEgressRefused)
	}
	if u := r.rep.Egress; u == nil || u.Requests != 2*n+150 || u.Failed != n || u.Refused != n || u.Allowed != 150 {
		t.Errorf("report egress %+v: want every request counted", r.rep.Egress)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	byVerdict := map[string]int{}
	for line := range strings.Lines(string(data)) {
		if len(line) > 8<<10 {
			t.Fatalf("an event line of %d bytes", len(line))
		}
		var ev events.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "egress" {
			byVerdict[ev.Verdict]++
		}
	}
	want := map[string]int{egress.Failed: maxEgressEvents + 1, egress.Refused: maxEgressEvents + 1, egress.Allowed: 150}
	if !maps.Equal(byVerdict, want) {
		t.Errorf("egress events by verdict %v, want %v", byVerdict, want)
	}
	if len(data) > 1<<20 {
		t.Errorf("the event log holds %d bytes for %d requests", len(data), 2*n+150)
	}
}
