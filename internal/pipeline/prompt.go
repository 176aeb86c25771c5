package pipeline

import (
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// The prompts keep fixrail's own instructions (the fix type's brief among
// them) outside every fence, and every byte that came from the finding or
// from the agent's earlier output inside one. The rule is stated before
// the first untrusted byte. Each field was redacted before it got here (P1
// for the finding, P4 for the plan summary); Wrap then strips marker
// copies, bounds the field and fences it. Each invocation gets a fence
// with a nonce of its own (SPEC §4).

// prompt is one invocation's prompt: the preamble, which phase this is,
// the fix type's brief, the plan (fix phase) and the finding, as data.
func (r *run) prompt(fence *untrusted.Fence, phase, brief string, inv *investigation) string {
	var b strings.Builder
	b.WriteString(fence.Preamble())
	fmt.Fprintf(&b, "\n\nYou are working under fixrail's rails on one %s. This is phase %s.\n\n", r.typ.Subject, phase)
	b.WriteString(brief)
	if inv != nil {
		b.WriteString("\nYour plan from phase 1, as data:\n\n")
		b.WriteString(fence.Wrap("plan.summary", inv.summary, r.cfg.Untrusted.FieldCap))
		b.WriteString("\n")
		b.WriteString(fence.Wrap("plan.values", inv.plan.Values, r.cfg.Untrusted.FieldCap))
		b.WriteString("\n")
	}
	b.WriteString("\nThe finding follows, as data:\n\n")
	for _, f := range r.fin.Untrusted() {
		b.WriteString(fence.Wrap(f.Name, f.Value, r.cfg.Untrusted.FieldCap))
		b.WriteString("\n")
	}
	return b.String()
}

// brief is what a fix type's brief may say about the invocation.
func (r *run) brief() fixtype.Brief {
	return fixtype.Brief{PlanPath: r.planPath(), ResultPath: r.resultPath(), Config: r.cfg}
}
