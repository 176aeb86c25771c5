package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/markdown"
)

// evidenceGate holds the evidence to adding: a new file, or lines added to
// a test file the base already has. A line of the base changed or deleted,
// a fixture that changes a tracked file, a mode or a symlink replaced: the
// agent's test code would be rewriting a test (or what one reads) that
// someone else wrote, and the suite that judges the fix would no longer be
// the repository's own. Each entry is compared with the base's blob at its
// path, never with anything the agent's tree holds.
func (r *run) evidenceGate(inv *investigation) *gates.Gate {
	return &gates.Gate{
		Name:   "evidence-adds-only",
		Doc:    "the evidence adds files, or adds lines to a test file the base has; it changes no line the base already holds",
		Reason: ReasonEvidenceChangesTracked,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			var added, extended, bad []string
			for _, e := range inv.evidence {
				base, err := r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, e.Path, maxEvidenceBytes)
				if err != nil {
					return gates.Verdict{}, fmt.Errorf("evidence-adds-only: %w", err)
				}
				switch why := overTracked(base, e, slices.Contains(inv.plan.Tests, e.Path)); {
				case why != "":
					bad = append(bad, e.Path+" "+why)
				case base.Deleted():
					added = append(added, e.Path)
				case !base.Same(e):
					extended = append(extended, e.Path)
				}
			}
			if len(bad) > 0 {
				return gates.Verdict{Detail: strings.Join(bad, "; ")}, nil
			}
			inv.extended = extended
			var parts []string
			if len(added) > 0 {
				parts = append(parts, fmt.Sprintf("%d new file(s)", len(added)))
			}
			if len(extended) > 0 {
				parts = append(parts, "lines added, none changed, to "+codeList(extended))
			}
			if len(parts) == 0 {
				parts = append(parts, "every file as the base has it")
			}
			return pass(strings.Join(parts, "; "))
		},
	}
}

// overTracked says how evidence e changes base, the file the base tree
// holds at its path, beyond what evidence may: "" when it may. A path the
// base has no file at is new (whether it is a regular file is recorded
// evidence's own check). A test may add lines to a regular file of
// the base, keeping every line it had, in order, and its mode; a fixture
// may only leave a tracked file as it is.
func overTracked(base, e gitx.Entry, test bool) string {
	switch {
	case base.Deleted(), base.Same(e):
		return ""
	case e.Deleted():
		return "deletes a file the base tracks"
	case base.Mode == "120000":
		return "replaces a symlink the base tracks"
	case e.Mode == "120000":
		return "replaces a file the base tracks with a symlink"
	case !test:
		return "is a fixture that changes a file the base tracks (a fixture may only be a new file)"
	case base.Mode != e.Mode:
		return fmt.Sprintf("changes the mode of a file the base tracks (%s to %s)", base.Mode, e.Mode)
	case !keepsLines(base.Data, e.Data):
		return "changes or deletes lines of a file the base tracks (a reproducing test may add lines to it, never change one)"
	}
	return ""
}

// keepsLines reports whether every line of old is in new, in order: new is
// old with lines inserted, and none changed or deleted. A last line with no
// newline that new extends on the same line is a changed line.
func keepsLines(old, new []byte) bool {
	a, b := bytes.SplitAfter(old, []byte("\n")), bytes.SplitAfter(new, []byte("\n"))
	j := 0
	for _, line := range a {
		if len(line) == 0 {
			continue
		}
		for j < len(b) && !sameLine(line, b[j]) {
			j++
		}
		if j == len(b) {
			return false
		}
		j++
	}
	return true
}

// sameLine compares two lines as SplitAfter cut them: a base line that
// ended the file without a newline may gain one.
func sameLine(old, new []byte) bool {
	return bytes.Equal(old, new) || (!bytes.HasSuffix(old, []byte("\n")) && bytes.Equal(append(slices.Clip(old), '\n'), new))
}

// fixOnlyCommit is the base plus the fix's own entries — the same blobs
// the candidate was built from, none of the evidence and none of the test
// files the fix adds (added) — committed on the base: the tree the prior
// suite judges the fix on. With neither, or when the tree comes out as the
// candidate's, it is the candidate commit.
func (r *run) fixOnlyCommit(ctx context.Context, inv *investigation, fixes []gitx.Entry, added []string, tree, commit, msg string) (string, error) {
	var own []gitx.Entry
	for _, e := range fixes {
		// The fix may not touch the evidence (test-unchanged refuses it
		// before the suite runs); whatever it did there is not the fix's
		// own change to the base, so it stays out of this tree. A test
		// file it adds is the agent's test code: out too (gates.AddedTests).
		if !slices.ContainsFunc(inv.evidence, func(ev gitx.Entry) bool { return ev.Path == e.Path }) && !slices.Contains(added, e.Path) {
			own = append(own, e)
		}
	}
	fixTree, err := r.s.Repo.BuildTree(ctx, r.s.BaseSHA, own, r.indexPath("fix-only"))
	if err != nil {
		return "", fmt.Errorf("base plus the fix: %w", err)
	}
	if fixTree == tree {
		return commit, nil
	}
	c, err := r.s.Repo.CommitTree(ctx, fixTree, r.s.BaseSHA, "fixrail: the base plus the fix, without the evidence (judged by the suite; never shipped)\n", identity)
	if err != nil {
		return "", fmt.Errorf("base plus the fix: %w", err)
	}
	return c, nil
}

// changedTests finds the test files the base has that the fix phase
// changed (planned, as a bug fix must when a test pinned the buggy
// behaviour), with their diff, for the PR body's own heading: a reviewer
// is never left to find a changed test among the source files. A test file
// is one under the fix type's evidence scope or test.path_glob.
func (r *run) changedTests(ctx context.Context, inv *investigation, c *candidate) error {
	globs := r.testGlobs()
	var tests []string
	for _, p := range c.paths {
		if slices.ContainsFunc(inv.evidence, func(ev gitx.Entry) bool { return ev.Path == p }) || !matchAny(globs, p) {
			continue
		}
		base, err := r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, p, maxEvidenceBytes)
		if err != nil {
			return err
		}
		if !base.Deleted() {
			tests = append(tests, p)
		}
	}
	if len(tests) == 0 {
		return nil
	}
	diff, err := r.s.Repo.DiffText(ctx, r.s.BaseSHA, c.commit, tests...)
	if err != nil {
		return err
	}
	c.tests, c.testsDiff = tests, diff
	return nil
}

// testGlobs are where the tests live: the fix type's evidence scope and
// test.path_glob.
func (r *run) testGlobs() []string {
	globs := r.typ.Scope(r.cfg)
	if g := r.cfg.Test.PathGlob; g != "" {
		globs = append(slices.Clone(globs), g)
	}
	return globs
}

// maxTestsDiff bounds the changed tests' diff the body shows (the whole
// change is in the patch; a forge caps a body's length).
const maxTestsDiff = 16 << 10

// testsSection renders the existing tests the fix changed, and the test
// files of the base the evidence added lines to.
func testsSection(inv *investigation, c *candidate) string {
	var b strings.Builder
	if len(c.tests) > 0 {
		b.WriteString("\n### Existing tests this fix changes\n\n")
		b.WriteString("The fix phase changed test files the base already has (planned: a test that pinned the reported behaviour may have to change with it). The suite ran on the base plus this change. Each needs a reviewer's eye:\n\n")
		for _, p := range c.tests {
			fmt.Fprintf(&b, "- %s\n", markdown.Code(p))
		}
		d := c.testsDiff
		if len(d) > maxTestsDiff {
			cut := strings.LastIndexByte(d[:maxTestsDiff], '\n') + 1
			d = d[:cut] + "[… cut at " + fmt.Sprint(maxTestsDiff) + " bytes: the whole change is in the patch]\n"
		}
		b.WriteString("\n" + markdown.Block(d))
	}
	if len(c.addedTests) > 0 {
		b.WriteString("\n### Test files this fix adds\n\n")
		b.WriteString("The fix phase added these files where the tests live. They are the agent's test code, not the repository's: the suite judged the fix without them, as it does without the evidence, then passed again with them. Each needs a reviewer's eye:\n\n")
		for _, p := range c.addedTests {
			fmt.Fprintf(&b, "- %s\n", markdown.Code(p))
		}
	}
	if len(inv.extended) > 0 {
		b.WriteString("\n### Test files the reproducing test adds to\n\n")
		b.WriteString("The evidence adds lines to these files the base already has and changes none of their lines. The suite judged the fix on these files as the base has them, then passed again with the lines added:\n\n")
		for _, p := range inv.extended {
			fmt.Fprintf(&b, "- %s\n", markdown.Code(p))
		}
	}
	return b.String()
}
