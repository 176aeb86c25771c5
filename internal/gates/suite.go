package gates

import (
	"context"
	"fmt"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/verdict"
)

// SuiteGreen runs the project's prior suite on the base plus the fix
// alone: none of the evidence (the agent's reproducing test and its
// fixtures) is in that tree, so no code of the agent's tests can change
// what the suite says about the fix. A green suite is never the
// acceptance — a fix type's oracle is — but a fix must not break it.
var SuiteGreen = &Gate{
	Name:   "suite-green",
	Doc:    "the project's existing suite passes on the base plus the fix alone, without the evidence",
	Reason: verdict.ReasonSuiteRed,
	Run: func(ctx context.Context, c *Change) (Verdict, error) {
		res, err := c.Suite(ctx, c.FixOnly)
		if err != nil {
			return Verdict{}, fmt.Errorf("suite-green: %w", err)
		}
		if !res.Success() {
			return Verdict{Detail: "suite fails on the base plus the fix: " + res.Describe(), Output: Tail(res)}, nil
		}
		if c.FixOnly == c.Commit {
			return Verdict{Pass: true, Detail: "suite passes on the base plus the fix (there is no evidence)", Output: Tail(res)}, nil
		}
		if len(c.AddedTests) > 0 {
			return Verdict{Pass: true, Detail: fmt.Sprintf("suite passes on the base plus the fix, without the evidence and the %d test file(s) the fix adds", len(c.AddedTests)), Output: Tail(res)}, nil
		}
		return Verdict{Pass: true, Detail: "suite passes on the base plus the fix, without the evidence", Output: Tail(res)}, nil
	},
}

// SuiteWithEvidence runs the suite once more, on the whole candidate: it
// runs after SuiteGreen, so the suite passed without the evidence, and a
// failure now means the evidence changed what the suite says — a test of
// the repository's that its code breaks, or a test of its own that fails
// where the oracle never ran it. It sees only the suite command's exit: a
// test the evidence makes vanish (skipped, not collected, an assertion
// neutered) while the command still exits 0 is not detected here (README,
// Containment).
var SuiteWithEvidence = &Gate{
	Name:   "suite-with-evidence",
	Doc:    "the existing suite still passes with the evidence added to the base plus the fix",
	Reason: verdict.ReasonEvidenceBreaksSuite,
	Run: func(ctx context.Context, c *Change) (Verdict, error) {
		if c.FixOnly == c.Commit {
			return Verdict{Pass: true, Detail: "no evidence: suite-green ran on this very tree"}, nil
		}
		res, err := c.Suite(ctx, c.Commit)
		if err != nil {
			return Verdict{}, fmt.Errorf("suite-with-evidence: %w", err)
		}
		if !res.Success() && len(c.AddedTests) > 0 {
			return Verdict{Detail: "suite passes on the base plus the fix and fails with the evidence and the test files the fix adds (" + res.Describe() + "): the agent's test code changes what the suite says", Output: Tail(res)}, nil
		}
		if !res.Success() {
			return Verdict{Detail: "suite passes on the base plus the fix and fails with the evidence added (" + res.Describe() + "): the evidence changes what the suite says", Output: Tail(res)}, nil
		}
		return Verdict{Pass: true, Detail: "suite passes on the whole candidate too", Output: Tail(res)}, nil
	},
}

// Tail is the end of a command's output a verdict keeps (the pipeline
// redacts it on the way out).
func Tail(res sandbox.Result) string { return res.Tail(40) }

// AddedTests lists the fix's entries that add a file where the tests live
// (under one of globs, at a path base reports absent): test code the fix
// phase's agent wrote. The prior suite judges the fix without it, as it
// does without the evidence — a module the suite imports could otherwise
// neuter the very assertions that judge the fix — and runs it with the
// rest in SuiteWithEvidence. A base test file the fix changes stays in
// (planned: a test that pinned the buggy behaviour; the PR names it).
func AddedTests(globs []string, fixes []gitx.Entry, base func(path string) (gitx.Entry, error)) ([]string, error) {
	var added []string
	for _, e := range fixes {
		if e.Deleted() || !matchGlobs(globs, e.Path) {
			continue
		}
		b, err := base(e.Path)
		if err != nil {
			return nil, err
		}
		if b.Deleted() {
			added = append(added, e.Path)
		}
	}
	return added, nil
}

// SplitTests splits the fix's entries into the paths under globs (where
// the tests live) and the rest.
func SplitTests(globs []string, fixes []gitx.Entry) (tests []string, rest []gitx.Entry) {
	for _, e := range fixes {
		if matchGlobs(globs, e.Path) {
			tests = append(tests, e.Path)
		} else {
			rest = append(rest, e)
		}
	}
	return tests, rest
}

func matchGlobs(globs []string, p string) bool {
	for _, g := range globs {
		if ok, err := doublestar.Match(g, p); err == nil && ok {
			return true
		}
	}
	return false
}
