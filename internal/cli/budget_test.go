package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/ledger"
)

// TestBudgetGolden pins the rendering of `fixrail budget` and of each
// `budget check` verdict, and that only an admission exits 0.
func TestBudgetGolden(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	midnight := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	rep := &ledger.Report{Store: "sqlite /repo/.fixrail/state.db", Day: "2026-12-01", ResetsAt: midnight,
		Scopes: []ledger.ScopeReport{
			{Scope: "global", CapCostUSD: 50, SpentCostUSD: 12.5, ReservedCostUSD: 10, CapRuns: 50, Runs: 7, CapTurns: 2000, SpentTurns: 180, ReservedTurns: 80, InFlight: 2, HeadroomCostUSD: 27.5},
			{Scope: "actor:mallory", CapCostUSD: 15, SpentCostUSD: 10, ReservedCostUSD: 5, CapRuns: 10, Runs: 4, CapTurns: 400, SpentTurns: 120, ReservedTurns: 40, InFlight: 1, ExhaustedMeasure: "cost_usd"},
			{Scope: "concurrent:global", CapInFlight: 4, InFlight: 2},
			{Scope: "concurrent:repo:github.com/o/r", CapInFlight: 2, InFlight: 2, ExhaustedMeasure: "in_flight"},
		},
		InFlight: []ledger.RunRecord{
			{RunID: "019ad9a1b2c3-0badcafe0badcafe", Repo: "github.com/o/r", Finding: "gh-issue:o/r#42", Actor: "mallory", Started: t0, Expires: t0.Add(40 * time.Minute), ReservedUSD: 5},
		}}
	var out bytes.Buffer
	printBudget(&out, rep)
	out.WriteString("\n-- check verdicts --\n")
	for _, err := range []error{
		nil,
		&ledger.ExhaustedError{Scope: "actor:mallory", Measure: "cost_usd", Cap: 15, Used: 15, Want: 5, ResetsAt: midnight},
		&ledger.InFlightError{Finding: "gh-issue:o/r#42", RunID: "019ad9a1b2c3-0badcafe0badcafe", Since: t0, Expires: t0.Add(40 * time.Minute)},
		&ledger.UnreadableError{Store: "postgres db.internal:5432/fixrail", Err: errors.New("dial tcp: connection refused")},
		errors.New("something unforeseen"),
	} {
		for _, asJSON := range []bool{false, true} {
			got := printCheck(&out, asJSON, err)
			if code := exitCode(got); (err == nil) != (code == exitOK) || (err != nil && code != exitHalt) {
				t.Errorf("check %v: exit %d", err, code)
			}
		}
	}
	golden := filepath.Join("testdata", "golden", "budget.txt")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), out.String()); d != "" {
		t.Errorf("budget rendering (-want +got):\n%s", d)
	}
}
