package pipeline

import (
	"errors"
	"strings"

	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// containmentOutcome maps the containment layers' refusals to terminal
// states: a clone whose git config changed after repository code ran
// escalates (and stays poisoned for every later finding); a required sandbox
// that cannot be had halts; a clone poisoned earlier fails before any git.
func (r *run) containmentOutcome(phase string, err error) *Outcome {
	var drift *gitx.DriftError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &drift):
		keys := append(append(append([]string{}, drift.Added...), drift.Changed...), drift.Removed...)
		r.gate(phase, "config-drift", "fail", "changed keys: "+strings.Join(keys, ", "))
		return stop(Escalate, ReasonConfigDrift, "the repository's git config changed after repository code ran ("+strings.Join(keys, ", ")+"); the clone is poisoned")
	case errors.Is(err, gitx.ErrPoisoned):
		return stop(Escalate, ReasonPoisoned, err.Error())
	case errors.Is(err, sandbox.ErrNoSandbox):
		return stop(Halt, ReasonNoSandbox, "sandbox: required, but bubblewrap is missing or unusable: "+err.Error())
	case errors.Is(err, gitx.ErrSnapshot):
		return stop(Halt, ReasonCheckError, "git config snapshot: "+err.Error())
	}
	return nil
}
