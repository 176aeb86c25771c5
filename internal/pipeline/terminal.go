package pipeline

import (
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/risk"
)

// Terminal is one of the four honest end states of a run. There is no fifth.
type Terminal string

// The four terminal states.
const (
	DraftPR  Terminal = "DRAFT-PR"
	Escalate Terminal = "ESCALATE"
	NotRepro Terminal = "NOT-REPRO"
	Halt     Terminal = "HALT"
)

// Severity orders terminals for a batch: the most severe run decides the
// batch's exit code, so a wrapper cannot read a broken run as green.
func (t Terminal) Severity() int {
	switch t {
	case DraftPR:
		return 0
	case NotRepro:
		return 1
	case Halt:
		return 2
	case Escalate:
		return 3
	}
	return 4
}

// Reason codes. Each terminal outcome carries exactly one.
const (
	ReasonFixed            = "fixed"
	ReasonInFlight         = "in-flight"
	ReasonWallClock        = "wall-clock"
	ReasonInterrupted      = "interrupted"
	ReasonInternal         = "internal-error"
	ReasonDeclined         = "declined"
	ReasonNoPlan           = "no-plan"
	ReasonUnsafePath       = "unsafe-path"
	ReasonWriteBeforeRepro = "write-before-repro"
	ReasonGreenOnBase      = "green-on-base"
	ReasonSymptomMismatch  = "symptom-mismatch"
	ReasonBadTestPath      = "bad-test-path"
	ReasonSensitivePath    = "sensitive-path"
	ReasonBadResult        = "bad-result"
	ReasonGateError        = "gate-error"
	ReasonCheckError       = "check-error"
	ReasonForgeError       = "forge-error"
	ReasonConfigDrift      = "config-drift"
	ReasonNoSandbox        = "no-sandbox"
	ReasonPoisoned         = "poisoned-clone"
	ReasonUndeclared       = "undeclared-changes"
	ReasonBudgetExhausted  = ledger.ReasonExhausted
	ReasonBudgetUnreadable = ledger.ReasonUnreadable
	ReasonHighRisk         = risk.Reason
)

// Outcome is how a run ended.
type Outcome struct {
	Terminal Terminal
	Reason   string
	Detail   string
}

func stop(t Terminal, reason, detail string) *Outcome {
	return &Outcome{Terminal: t, Reason: reason, Detail: detail}
}
