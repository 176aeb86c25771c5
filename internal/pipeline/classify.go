package pipeline

import (
	"errors"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/verdict"
)

// forgeOutcome is the one place a forge error becomes a terminal: a rate
// limit or an outage is a HALT (retry later: nothing is wrong with the
// fix), a refusal is an ESCALATE (a human must look), and a protection
// that cannot be confirmed or a token that lacks a permission HALTs before
// anything runs. The error is kept
// in the outcome with its type.
func (r *run) forgeOutcome(what string, err error) *Outcome {
	o := &Outcome{Terminal: Escalate, Reason: ReasonForgeError, Detail: what + ": " + err.Error(), Err: err}
	switch {
	case errors.Is(err, forge.ErrRateLimited):
		o.Terminal, o.Reason = Halt, verdict.ReasonForgeRateLimited
	case errors.Is(err, forge.ErrUnavailable):
		o.Terminal, o.Reason = Halt, verdict.ReasonForgeUnavailable
	case errors.Is(err, forge.ErrNoProtection), errors.Is(err, forge.ErrProtectionUnreadable):
		o.Terminal, o.Reason = Halt, verdict.ReasonNoBranchProtection
	case errors.Is(err, forge.ErrTokenLacksPermission):
		// Before the Actions setting's own case: at P1 it is a permission
		// the run lacks, and nothing has run yet.
		o.Terminal, o.Reason = Halt, verdict.ReasonTokenLacksPermission
	case errors.Is(err, forge.ErrDraftUnsupported):
		o.Reason = verdict.ReasonDraftUnsupported
	case errors.Is(err, forge.ErrActionsCannotOpenPRs):
		o.Reason = verdict.ReasonActionsCannotOpen
	case errors.Is(err, forge.ErrNotDraft), errors.Is(err, forge.ErrBadHead):
		o.Reason = verdict.ReasonForgeError
	}
	return o
}

// isForgeError reports an error of the forge's own kinds.
func isForgeError(err error) bool {
	for _, e := range []error{forge.ErrRateLimited, forge.ErrUnavailable, forge.ErrNoProtection, forge.ErrProtectionUnreadable, forge.ErrTokenLacksPermission,
		forge.ErrDraftUnsupported, forge.ErrActionsCannotOpenPRs, forge.ErrNotDraft, forge.ErrBadHead, forge.ErrForge} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
