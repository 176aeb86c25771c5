package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/pipeline"
)

// TestPrintReportGolden pins the human rendering of a run report; run with
// -update to rewrite testdata/golden after a deliberate change.
func TestPrintReportGolden(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		rep  *pipeline.Report
	}{
		{"draft_pr", &pipeline.Report{
			RunID: "20261130-120000-0badcafe", Terminal: pipeline.DraftPR, Reason: "fixed",
			Detail:  "reproduced red on main, green after the fix; every gate passed",
			Finding: pipeline.FindingRef{ID: "42"}, Branch: "fixrail/42", Commit: "6d6553773dda7d9c92fb947e8a679c9861fdb160",
			PR: "/repo/.fixrail/outbox/42", Duration: "735ms", Started: t0, Ended: t0.Add(735 * time.Millisecond),
			Gates: []pipeline.GateResult{
				{Name: "oracle-red", Phase: "P3", Verdict: "pass", Detail: "test fails on main (exit 1) with the symptom"},
				{Name: "stage-b", Phase: "P4", Verdict: "pass", Detail: "2 path(s) clear"},
			},
		}},
		{"escalate", &pipeline.Report{
			RunID: "20261130-120000-0badcafe", Terminal: pipeline.Escalate, Reason: "sensitive-path",
			Detail:  "the plan touches sensitive or unknown paths: src/auth/session.py (denied word:auth)",
			Finding: pipeline.FindingRef{ID: "7"}, Duration: "210ms",
			Gates: []pipeline.GateResult{
				{Name: "stage-a", Phase: "P3", Verdict: "fail", Detail: "src/auth/session.py (denied word:auth)"},
			},
			Warnings: []string{"remove worktree: busy"},
		}},
		{"escalate_egress", &pipeline.Report{
			RunID: "20261130-120000-0badcafe", Terminal: pipeline.Escalate, Reason: "egress-refused",
			Detail:  "the agent (P2) tried to reach `paste.example:443`, which fixrail's egress proxy refused (not listed in runner.egress); 1 request(s) refused in all",
			Finding: pipeline.FindingRef{ID: "9"}, Duration: "2.1s",
			Egress: &pipeline.EgressUsage{Allow: []string{"api.anthropic.com:443"}, Requests: 4, Allowed: 3, Refused: 1,
				BytesUp: 48213, BytesDown: 9120, Refusals: []string{"paste.example:443: not listed in runner.egress"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := printReport(&buf, tc.rep, false); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if d := cmp.Diff(string(want), buf.String()); d != "" {
				t.Errorf("rendering changed (-want +got):\n%s", d)
			}
		})
	}
}
