package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/receipt"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// TestExitCode pins the documented table: testscript can only say "non-zero".
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"help", errHelpShown, 0},
		{"draft pr", &terminalError{pipeline.DraftPR}, 0},
		{"halt", &terminalError{pipeline.Halt}, 3},
		{"not repro", &terminalError{pipeline.NotRepro}, 4},
		{"escalate", &terminalError{pipeline.Escalate}, 5},
		{"unknown terminal", &terminalError{"FIFTH"}, 1},
		{"usage", usagef("bad"), 2},
		{"setup", fmt.Errorf("x: %w", pipeline.ErrSetup), 2},
		{"bad report", fmt.Errorf("%w: nope", findings.ErrBadReport), 2},
		{"redact check found", &errFound{2}, 5},
		{"hook blocked", &hookBlocked{}, 2},
		{"receipt chain broken", &errChainBroken{&receipt.Break{Line: 2, Reason: "x"}}, 5},
		{"approve declined", errDeclined, 3},
		{"doctor found a missing precondition", errDoctor, 3},
		{"resolve-version no safe version", errNoSafeVersion{}, 5},
		{"resolve-version offline miss", &errServiceUnavailable{&vulndata.MissError{Kind: "osv"}}, 1},
		{"poisoned clone", fmt.Errorf("p1: %w", gitx.ErrPoisoned), 5},
		{"poisoned clone at setup", fmt.Errorf("%w: cannot start a run: %w", pipeline.ErrSetup, gitx.ErrPoisoned), 5},
		{"wrapped exit error wins", fmt.Errorf("refusing: %w", &errChainBroken{&receipt.Break{Line: 1, Reason: "x"}}), 5},
		{"usage wrapping a setup error", fmt.Errorf("%w: %w", usagef("bad"), pipeline.ErrSetup), 2},
		{"internal", errors.New("disk on fire"), 1},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestErrorMessage pins which outcomes Main prints: an error the command
// already showed (a report, findings, the hook protocol) adds nothing.
func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errHelpShown, ""},
		{&terminalError{pipeline.Escalate}, ""},
		{&errFound{3}, ""},
		{errNoSafeVersion{}, ""},
		{&hookBlocked{}, ""},
		{errDoctor, ""},
		{fmt.Errorf("lint: %w", &errFound{1}), ""},
		{errDeclined, "not approved; nothing was signed"},
		{usagef("bad flag"), "bad flag"},
		{&errChainBroken{&receipt.Break{Line: 2, Reason: "x"}}, "receipt chain broken at " + (&receipt.Break{Line: 2, Reason: "x"}).String()},
		{&errServiceUnavailable{errors.New("osv unreachable")}, "osv unreachable"},
		{errors.New("disk on fire"), "disk on fire"},
	} {
		if got := errorMessage(tc.err); got != tc.want {
			t.Errorf("errorMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
