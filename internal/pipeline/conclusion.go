package pipeline

import (
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Conclusion is, in the run report, the investigation's answer that there
// was nothing to fix: the reason code, and the agent's reason — redacted
// and escaped, and unverified: fixrail checks that the plan says it, not
// that it is true.
type Conclusion struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// concluded says, for a reviewer, what each conclusion claims.
func concluded(code string) string {
	switch code {
	case verdict.ReasonWorksAsDesigned:
		return "the investigating agent concluded that the reported behaviour is as designed"
	case verdict.ReasonCannotReproduce:
		return "the investigating agent could not reproduce the report"
	}
	return "the investigating agent concluded " + code
}

// conclude ends the plan gate on a conclusion: the run ends in its
// terminal with its code, and keeps the agent's reason — in the report, on
// the console and, through notify, in the notice. A conclusion comes
// without a test: one beside files the phase wrote is an inconsistent
// plan (no-plan), as is a code the fix type does not know.
func (r *run) conclude(c *fixtype.Conclusion, changed []string) gates.Verdict {
	term, ok := fixtype.Conclusions[c.Code]
	switch {
	case !ok:
		return gates.Verdict{Detail: fmt.Sprintf("PLAN.json's conclusion %q is not one fixrail knows", c.Code)}
	case len(changed) > 0:
		return gates.Verdict{Detail: fmt.Sprintf("PLAN.json concludes %s, yet the investigation wrote %s: a conclusion comes with no test", c.Code, codeList(changed))}
	}
	reason := r.agentText(c.Reason)
	r.rep.Conclusion = &Conclusion{Code: c.Code, Reason: reason}
	lines := strings.Split(reason, "\n")
	r.log.Emit(events.Event{Type: "note", Phase: "P2", Name: "conclusion",
		Detail: fmt.Sprintf("the agent's reason (unverified), %d line(s):\n  | %s", len(lines), strings.Join(lines, "\n  | "))})
	return gates.Verdict{Terminal: term, Reason: c.Code, Detail: concluded(c.Code) + " and wrote no test; its reason is in the run report (conclusion)"}
}
