// Package gates is the catalogue of checks a fix must pass before the
// harness commits it. A gate is a small value — a name, a doc line, what its
// failure means, and one function — in the manner of go/analysis's Analyzer.
// A failed check is data (a Verdict); an error means the gate could not
// decide, and the pipeline then fails closed.
package gates

import (
	"context"

	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Gate is one check. The fix-phase catalogue here judges a Change; the
// pipeline's own checks and a fix type's gates are Gates too, run by the
// same function, so every check is recorded, stopped and failed closed the
// same way.
type Gate struct {
	// Name is stable and kebab-case; it appears in events, reports and PRs.
	Name string
	// Doc says what the gate holds, in one line.
	Doc string
	// Reason is the terminal reason code when the gate fails.
	Reason string
	// Fails is the terminal a failure ends the run in; empty is ESCALATE
	// (evidence of a bad fix). A budget gate HALTs (a limit was reached);
	// a red oracle that is not red is NOT-REPRO.
	Fails verdict.Terminal
	// Run checks the change.
	Run func(ctx context.Context, c *Change) (Verdict, error)
}

// Terminal is the terminal a failure of g ends in.
func (g *Gate) Terminal() verdict.Terminal {
	if g.Fails == "" {
		return verdict.Escalate
	}
	return g.Fails
}

// Verdict is a gate's answer.
type Verdict struct {
	Pass   bool
	Detail string
	// Reason, when set on a failure, replaces the gate's Reason: a check
	// with several ways to fail (an oracle green on the base, or red for
	// another reason) names which.
	Reason string
	// Terminal, when set on a failure, replaces the gate's Fails: a plan
	// that is missing is NOT-REPRO, one naming a path out of the
	// repository is an attempt, and ESCALATEs.
	Terminal verdict.Terminal
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
// directory that something could still be writing to. It names no fix
// type: what a type planned arrives as paths.
type Change struct {
	// Commit is the candidate: the base plus exactly Files.
	Commit string
	// Changed lists every path the candidate changes against the base
	// (the evidence included), sorted.
	Changed []string
	// Diff is the candidate against the base, every file as text.
	Diff gitx.TreeDiff
	// Files holds each changed path as committed (a deletion has Mode "").
	Files map[string]gitx.Entry
	// BaseFiles holds each changed path that is not evidence as the base
	// has it (absent: Mode ""), for the gates that compare the two.
	BaseFiles map[string]gitx.Entry
	// Planned are the source paths the plan said the fix would change.
	Planned []string
	// Declared are the paths the fix phase said it changed.
	Declared []string
	Policy   *sensitive.Policy
	// MaxDiffLines is the diff budget: budget.max_diff_lines, or the fix
	// type's own when that is smaller.
	MaxDiffLines int
	// MaxDiffBytes bounds the bytes of the added and deleted lines, and
	// MaxLineBytes the longest added line (budget.max_diff_bytes and
	// budget.max_line_bytes).
	MaxDiffBytes, MaxLineBytes int
	// Evidence is what the investigate phase produced (a reproducing test
	// and its fixtures, say) as the harness ran it red, or nothing.
	Evidence []gitx.Entry
	// Base reads path as the base's tree holds it (absent: an Entry with
	// Mode ""): what a gate compares a changed file with.
	Base func(ctx context.Context, path string) (gitx.Entry, error)
	// FixOnly is the base plus the fix's own changes, without the
	// evidence or AddedTests, built from the same blobs as Commit: the
	// tree the prior suite judges the fix on. With neither in the
	// candidate it is Commit itself.
	FixOnly string
	// AddedTests are the files the fix adds where the tests live (the
	// function AddedTests), left out of FixOnly like the evidence.
	AddedTests []string
	// FixTests are the paths the fix adds, changes or deletes where the
	// tests live (SplitTests), and FixAlone is the candidate without them:
	// the base, the evidence and the fix's other entries, a tree (Commit
	// itself when FixTests is empty). An oracle that runs the repository's
	// test runner must go green there too: a conftest or an __init__ the
	// fix writes beside the reproducing test could otherwise patch the
	// code under test, and turn the test green with no fix at all.
	FixTests []string
	FixAlone string
	// Suite runs the prior suite in a fresh checkout of rev (FixOnly or
	// Commit).
	Suite func(ctx context.Context, rev string) (sandbox.Result, error)
}

// IsEvidence reports whether p is one of the evidence files.
func (c *Change) IsEvidence(p string) bool {
	for _, e := range c.Evidence {
		if e.Path == p {
			return true
		}
	}
	return false
}

// Fix lists the fix-phase gates every fix type runs, in order. Cheap
// structural checks come first so a bad fix is refused before any of its
// code runs; a fix type's own gates follow, and the suite runs last.
var Fix = []*Gate{DiffNonEmpty, DiffWithinPlan, DeclaredOnly, StageB, DiffBudget}

// Last are the gates that run after a fix type's own: the suite without
// the evidence, then with it.
var Last = []*Gate{SuiteGreen, SuiteWithEvidence}
