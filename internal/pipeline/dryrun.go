package pipeline

import (
	"fmt"

	"github.com/fixrail/fixrail/internal/verdict"
)

// ReasonDryRun: the run stopped after its plan because it was a dry run.
const ReasonDryRun = verdict.ReasonDryRun

// dryRunStop ends a dry run after P3: the plan was reproduced red and
// passed Stage A and the path locks, and nothing was asked of a fix. The
// detail is what the run would have done, for the batch's summary.
func (r *run) dryRunStop(inv *investigation) *Outcome {
	who := "the agent"
	if inv.planned {
		who = "the harness"
	}
	detail := fmt.Sprintf("dry run: stopped after the plan, before any fix; %s would change %s", who, codeList(inv.plan.Files))
	if len(inv.plan.Evidence) > 0 {
		detail += fmt.Sprintf(", proven by %s (red on the base)", codeList(inv.plan.Evidence))
	}
	if inv.summary != "" {
		detail += "; plan: " + inv.summary
	}
	return stop(Halt, ReasonDryRun, detail)
}
