package pipeline

import (
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/untrusted"

	"github.com/fixrail/fixrail/internal/verdict"
)

// ReasonDryRun is a dry run stopped after its plan (run --dry-run).
const ReasonDryRun = verdict.ReasonDryRun

// maxDryRunSummary caps the plan summary a dry run's detail quotes.
const maxDryRunSummary = 300

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
	// The plan's summary is the agent's words: redacted, one line, capped,
	// and said to be its own.
	if sum, err := r.scrubInbound(inv.plan.Summary); err != nil {
		detail += "; the plan's summary is withheld (its redaction failed)"
	} else if sum = untrusted.OneLine(sum); sum != "" {
		if len(sum) > maxDryRunSummary {
			sum = strings.ToValidUTF8(sum[:maxDryRunSummary], "") + "..."
		}
		detail += "; the plan says (unverified): " + sum
	}
	return stop(Halt, ReasonDryRun, detail)
}
