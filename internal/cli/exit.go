package cli

import (
	"errors"
	"fmt"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// Exit codes. This file is the only place outcomes become numbers; README's
// table mirrors it and TestExitCode pins it.
const (
	exitOK       = 0 // success, or DRAFT-PR
	exitInternal = 1 // a fixrail bug or an unusable environment
	exitUsage    = 2 // bad flags, bad config, unreadable report
	exitBlock    = 2 // hook: the agent CLI blocks the tool call (Claude Code, Codex and Gemini block only on 2)
	exitHalt     = 3 // HALT: a budget or a precondition stopped the run
	exitNotRepro = 4 // NOT-REPRO: no reproduction
	exitEscalate = 5 // ESCALATE: a human must look; also redact --check found something, receipts verify found a break
)

// usageError is a mistake in how fixrail was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// terminalError carries a run's terminal state out of a command so that
// exitCode can map it; its message was already printed with the report.
type terminalError struct{ terminal pipeline.Terminal }

func (e *terminalError) Error() string { return string(e.terminal) }

// errHelpShown means -h was answered; it exits 0 and prints nothing more.
var errHelpShown = errors.New("help shown")

func exitCode(err error) int {
	var te *terminalError
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return exitOK
	case errors.As(err, &te):
		switch te.terminal {
		case pipeline.DraftPR:
			return exitOK
		case pipeline.Halt:
			return exitHalt
		case pipeline.NotRepro:
			return exitNotRepro
		case pipeline.Escalate:
			return exitEscalate
		}
		return exitInternal
	case errors.As(err, new(*errFound)), errors.As(err, new(errNoSafeVersion)):
		return exitEscalate // also resolve-version: no safe version
	case errors.As(err, new(*errServiceUnavailable)):
		return exitHalt // resolve-version: offline cache miss or service unreachable
	case errors.As(err, new(*hookBlocked)):
		return exitBlock
	case errors.As(err, new(*errChainBroken)):
		return exitEscalate // receipts verify found a break
	case errors.Is(err, errDoctor):
		return exitHalt // doctor: a run would not start
	case errors.Is(err, errDeclined):
		return exitHalt // approve: "no" at the prompt, like a declined interactive run
	case errors.Is(err, gitx.ErrPoisoned):
		return exitEscalate // the clone was changed under an earlier run: a human must look
	case errors.As(err, new(*usageError)),
		errors.Is(err, pipeline.ErrSetup),
		errors.Is(err, findings.ErrBadReport):
		return exitUsage
	}
	return exitInternal
}

// errorMessage is what Main prints for err; terminal outcomes and help were
// already shown by the command.
func errorMessage(err error) string {
	if err == nil || errors.Is(err, errHelpShown) || errors.As(err, new(*terminalError)) || errors.As(err, new(*errFound)) || errors.As(err, new(errNoSafeVersion)) || errors.As(err, new(*hookBlocked)) || errors.Is(err, errDoctor) {
		return ""
	}
	return err.Error()
}
