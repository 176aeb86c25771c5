// Package gates is the catalogue of checks a fix must pass before the
// harness commits it. A gate is a small value — a name, a doc line, what its
// failure means, and one function — in the manner of go/analysis's Analyzer.
// A failed check is data (a Verdict); an error means the gate could not
// decide, and the pipeline then fails closed.
package gates

import (
	"context"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sensitive"
)

// Gate is one check of the fix phase.
type Gate struct {
	// Name is stable and kebab-case; it appears in events, reports and PRs.
	Name string
	// Doc says what the gate holds, in one line.
	Doc string
	// Reason is the terminal reason code when the gate fails.
	Reason string
	// Halt marks a budget gate: its failure is a HALT (a limit was reached),
	// not an ESCALATE (evidence of a bad fix).
	Halt bool
	// Run checks the change.
	Run func(ctx context.Context, c *Change) (Verdict, error)
}

// Verdict is a gate's answer.
type Verdict struct {
	Pass   bool
	Detail string
	// Unconfirmed marks a pass the gate could not confirm: the change ships,
	// labelled Label, with Detail as the reason in the PR body.
	Unconfirmed bool
	// Label is the PR label a passing verdict asks for, e.g. "needs-review".
	Label string
}

// Change is everything the fix-phase gates look at. The pipeline fills it
// after the agent's second invocation; the gates never ask the agent.
type Change struct {
	Plan   *fixtype.Plan
	Result *fixtype.Result
	// Changed lists every path that differs from the base in the worktree
	// (tracked changes and untracked files), sorted.
	Changed []string
	// Diff is the patch of Changed against the base.
	Diff gitx.Diff
	// Worktree is the directory the fix was made in.
	Worktree string
	Policy   *sensitive.Policy
	// MaxDiffLines is budget.max_diff_lines.
	MaxDiffLines int
	// TestWhenRed is the reproducing test's content when the harness saw it red.
	TestWhenRed []byte
	// Oracle runs the reproducing test; Suite runs the prior suite.
	Oracle func(ctx context.Context) (sandbox.Result, error)
	Suite  func(ctx context.Context) (sandbox.Result, error)
}

// Fix lists the fix-phase gates in the order they run. Cheap structural
// checks come first so a bad fix is refused before any of its code runs.
var Fix = []*Gate{DiffNonEmpty, DiffWithinPlan, DeclaredOnly, StageB, DiffBudget, TestUnchanged, OracleGreen, SuiteGreen}
