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
// that cannot be had, or one that would show fixrail's state, halts; a
// clone poisoned earlier fails before any git.
func (r *run) containmentOutcome(phase string, err error) *Outcome {
	var drift *gitx.DriftError
	var state *gitx.StateError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &state):
		r.gate(phase, "repo-state", "fail", "changed: "+strings.Join(state.Changed, ", "))
		return stop(Escalate, ReasonPoisoned, "the clone's refs, hooks or git files changed while repository code ran ("+strings.Join(state.Changed, ", ")+"); the clone is poisoned until fixrail unpoison clears it")
	case errors.As(err, &drift):
		keys := append(append(append([]string{}, drift.Added...), drift.Changed...), drift.Removed...)
		r.gate(phase, "config-drift", "fail", "changed keys: "+strings.Join(keys, ", "))
		return stop(Escalate, ReasonConfigDrift, "the repository's git config changed after repository code ran ("+strings.Join(keys, ", ")+"); the clone is poisoned")
	case errors.Is(err, gitx.ErrPoisoned):
		return stop(Escalate, ReasonPoisoned, err.Error())
	case errors.Is(err, sandbox.ErrNoSandbox):
		return stop(Halt, ReasonNoSandbox, "sandbox: required, but bubblewrap is missing or unusable: "+err.Error())
	case errors.Is(err, sandbox.ErrExposes):
		return stop(Halt, ReasonNoSandbox, err.Error())
	case errors.Is(err, gitx.ErrSnapshot):
		return stop(Halt, ReasonCheckError, "git config snapshot: "+err.Error())
	}
	return nil
}

// treeOutcome maps a failed look at an agent's tree: a .git planted in it
// is an attempt to give the tree a repository of its own; anything else
// is a check that could not run.
func (r *run) treeOutcome(phase string, err error) *Outcome {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gitx.ErrPlantedGit):
		r.gate(phase, "tree", "fail", err.Error())
		return stop(Escalate, ReasonUnsafePath, "something run in the tree planted a .git entry at its top")
	case errors.Is(err, gitx.ErrTreeReplaced):
		r.gate(phase, "tree", "fail", err.Error())
		return stop(Escalate, ReasonUnsafePath, "something run beside the tree replaced its directory")
	}
	if o := r.containmentOutcome(phase, err); o != nil {
		return o
	}
	return stop(Escalate, ReasonCheckError, "tree status: "+err.Error())
}
