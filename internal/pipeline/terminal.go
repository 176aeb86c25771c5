package pipeline

import (
	"github.com/fixrail/fixrail/internal/verdict"
)

// Terminal is one of the four end states (package verdict owns them).
type Terminal = verdict.Terminal

// The four terminal states.
const (
	DraftPR  = verdict.DraftPR
	Escalate = verdict.Escalate
	NotRepro = verdict.NotRepro
	Halt     = verdict.Halt
)

// Reason codes the pipeline itself decides; package verdict holds the
// whole list, gates' and fix types' included.
const (
	ReasonFixed            = verdict.ReasonFixed
	ReasonInFlight         = verdict.ReasonInFlight
	ReasonWallClock        = verdict.ReasonWallClock
	ReasonInterrupted      = verdict.ReasonInterrupted
	ReasonInternal         = verdict.ReasonInternal
	ReasonDeclined         = verdict.ReasonDeclined
	ReasonNoPlan           = verdict.ReasonNoPlan
	ReasonUnsafePath       = verdict.ReasonUnsafePath
	ReasonWriteBeforeRepro = verdict.ReasonWriteBeforeRepro
	ReasonBadTestPath      = verdict.ReasonBadTestPath
	ReasonSensitivePath    = verdict.ReasonSensitivePath
	ReasonBadResult        = verdict.ReasonBadResult
	ReasonGateError        = verdict.ReasonGateError
	ReasonCheckError       = verdict.ReasonCheckError
	ReasonForgeError       = verdict.ReasonForgeError
	ReasonConfigDrift      = verdict.ReasonConfigDrift
	ReasonNoSandbox        = verdict.ReasonNoSandbox
	ReasonPoisoned         = verdict.ReasonPoisoned
	ReasonUndeclared       = verdict.ReasonUndeclared
	ReasonLeak             = verdict.ReasonLeak
	ReasonBudgetExhausted  = verdict.ReasonBudgetExhausted
	ReasonBudgetUnreadable = verdict.ReasonBudgetUnreadable
	ReasonHighRisk         = verdict.ReasonHighRisk
	ReasonClosesAnIssue    = verdict.ReasonClosesAnIssue
	// P2's: the evidence rewrites what the repository tracks (evidence.go).
	ReasonEvidenceChangesTracked = verdict.ReasonEvidenceChangesTracked
	// The forge's (classify.go).
	ReasonNoBranchProtection   = verdict.ReasonNoBranchProtection
	ReasonTokenLacksPermission = verdict.ReasonTokenLacksPermission
	// The egress proxy's (egress.go).
	ReasonEgressRefused = verdict.ReasonEgressRefused
	ReasonEgressCap     = verdict.ReasonEgressCap
)

// Outcome is how a run ended. Err, when set, is the error that decided it,
// kept with its type so a caller can tell a rate limit from a refusal.
type Outcome struct {
	Terminal Terminal
	Reason   string
	Detail   string
	Err      error
}

func stop(t Terminal, reason, detail string) *Outcome {
	return &Outcome{Terminal: t, Reason: reason, Detail: detail}
}
