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
	// Output is the end of the output of the command the gate ran, if any.
	Output string
}

// Change is everything the fix-phase gates look at: the candidate commit
// the harness built from the blobs it read after the agent's second
// invocation. Gates read only this evidence — the files' bytes as
// committed, the diff between the base and the candidate — never a
// directory that something could still be writing to.
type Change struct {
	Plan   *fixtype.Plan
	Result *fixtype.Result
	// Commit is the candidate: the base plus exactly Files.
	Commit string
	// Changed lists every path the candidate changes against the base
	// (the test and fixtures included), sorted.
	Changed []string
	// Diff is the candidate against the base, every file as text.
	Diff gitx.TreeDiff
	// Files holds each changed path as committed (a deletion has Mode "").
	Files  map[string]gitx.Entry
	Policy *sensitive.Policy
	// MaxDiffLines is budget.max_diff_lines.
	MaxDiffLines int
	// Evidence is what the investigate phase produced — the reproducing
	// test and its declared fixtures — as the harness ran it red.
	Evidence []gitx.Entry
	// Oracle runs the reproducing test, Suite the prior suite, each in a
	// fresh checkout of Commit.
	Oracle func(ctx context.Context) (sandbox.Result, error)
	Suite  func(ctx context.Context) (sandbox.Result, error)
}

// Fix lists the fix-phase gates in the order they run. Cheap structural
// checks come first so a bad fix is refused before any of its code runs.
var Fix = []*Gate{DiffNonEmpty, DiffWithinPlan, DeclaredOnly, StageB, DiffBudget, TestUnchanged, OracleGreen, SuiteGreen}
