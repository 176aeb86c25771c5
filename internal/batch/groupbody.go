package batch

import (
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// Title is the group's draft-PR title.
func (g *Group) Title() string {
	return untrusted.OneLine(fmt.Sprintf("fixrail: %d dependency fixes in %s", len(g.Included()), g.Manifest))
}

// Body is the group's draft-PR body: what was grouped and on what, each
// member's outcome (included with its commit and the commit it was judged
// on, or left out with its terminal state), how a reviewer drops one, and
// then each included finding's own body, as its run rendered it — its
// decision, its oracle's red and green, every gate. base names the base
// branch. Every value from a run is rendered inert (a code span or cell).
func (g *Group) Body(base string) string {
	in := g.Included()
	var b strings.Builder
	fmt.Fprintf(&b, "## Grouped draft fix: %d finding(s) on %s\n\n", len(in), markdown.Code(g.Manifest))
	b.WriteString("> Opened by fixrail from a batch run with `--group manifest`. Each commit is one finding's own fix, judged on its own by every gate and by its own oracle, red then green, on the commit before it: its `Fixrail-Base` trailer names that parent, so `fixrail verify` can check each commit alone (with `--base` a branch at its parent). No finding's verdict comes from another finding's run. It is a draft: a human reviews and merges; fixrail never merges.\n\n")
	fmt.Fprintf(&b, "### Findings\n\n| # | finding | outcome | commit | judged on | detail |\n|---|---|---|---|---|---|\n")
	for i, m := range g.Members {
		outcome, commit, on := "included", markdown.Cell(short(m.Commit)), markdown.Cell(short(m.Parent))
		if m.Parent == g.Base {
			on = markdown.Cell(short(m.Parent) + " (" + base + ")")
		}
		if !m.Included() {
			term := string(m.Result.Terminal)
			if term == "" {
				term = fmt.Sprintf("no terminal state, exit %d", m.Result.Exit)
			}
			if m.Result.Reason != "" {
				term += " (" + m.Result.Reason + ")"
			}
			outcome = "**not included**: " + markdown.Cell(term)
			commit = "—"
		}
		detail := m.Result.Detail
		if m.Result.Terminal == "" || m.Result.Error != "" {
			detail = m.Result.Error
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, markdown.Cell(m.Item.ID), outcome, commit, on, markdown.Cell(clip(detail, 240)))
	}
	b.WriteString("\n")
	if len(in) < len(g.Members) {
		b.WriteString("A finding that was not included ended in another terminal state; nothing of its run is on this branch, and the next finding was judged on the last included commit. Its own run report says why.\n\n")
	}
	b.WriteString("### Dropping a finding\n\nEach finding is one commit, in the order above. To drop one, rebase it out of the branch (`git rebase -i`, drop its line) or revert it (`git revert <commit>`). The checks fixrail ran judged each later commit on top of the ones before it, not without them: a commit after a dropped one is unproven until the checks run again.\n\n")
	for i, m := range in {
		fmt.Fprintf(&b, "---\n\n<!-- fixrail: finding %d of %d -->\n\n**Commit %s, on %s.**\n\n%s\n", i+1, len(in), markdown.Code(short(m.Commit)), markdown.Code(short(m.Parent)), strings.TrimRight(m.Body, "\n"))
		b.WriteString("\n\n")
	}
	return untrusted.Printable(b.String())
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func clip(s string, n int) string {
	s = untrusted.OneLine(s)
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n-3], "") + "..."
	}
	return s
}
