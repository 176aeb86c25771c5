package cli

import (
	"errors"
	"fmt"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// Exit codes: the one table for the whole binary. README's "Terminal states
// and exit codes" mirrors it and TestREADMEExitTable holds the two together.
// A command never returns a number: its error says its own code (exitError),
// as govulncheck's do, and Main asks it.
const (
	exitOK       = 0              // success, or DRAFT-PR; lint, resolve-version: clean
	exitInternal = 1              // a fixrail bug or an unusable environment (resolve-version: a service unreachable)
	exitUsage    = 2              // bad flags, bad config, unreadable report
	exitBlock    = hook.ExitBlock // hook: the agent CLI blocks the tool call (Claude Code, Codex and Gemini block only on 2)
	exitHalt     = 3              // HALT: a budget or a precondition stopped the run; doctor: a run would not start
	exitNotRepro = 4              // NOT-REPRO: no reproduction
	exitEscalate = 5              // ESCALATE: a human must look
	exitFound    = 5              // lint, redact --check, receipts verify, resolve-version: found something; verify: a difference
)

// exitError is an error that knows its exit code. Shown reports that the
// command already said what the error means (a report, findings, the hook's
// own protocol), so Main prints nothing more.
type exitError interface {
	error
	ExitCode() int
	Shown() bool
}

// terminalExit is the exit code of a run that ended in t. A state this
// table does not know is a fixrail bug, never a green.
func terminalExit(t pipeline.Terminal) int {
	switch t {
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
}

// foreign maps the sentinels of packages that know nothing of exit codes;
// it is consulted only when no exitError is in the chain, first match wins.
// A poisoned clone comes first: Prepare reports it as a setup error too,
// and it is a human's to look at, not a usage mistake.
var foreign = []struct {
	err  error
	code int
}{
	{gitx.ErrPoisoned, exitEscalate},
	{pipeline.ErrSetup, exitUsage},
	{findings.ErrBadReport, exitUsage},
}

// usageError is a mistake in how fixrail was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (*usageError) ExitCode() int   { return exitUsage }
func (*usageError) Shown() bool     { return false }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errServiceUnavailable is "could not look": a service that could not be
// asked (scan's forge). It is exit 1, not 5: a CI job acting on 5 must
// never read "the service was down" as "found something", and never as
// clean.
type errServiceUnavailable struct{ err error }

func (e *errServiceUnavailable) Error() string { return e.err.Error() }
func (e *errServiceUnavailable) Unwrap() error { return e.err }
func (*errServiceUnavailable) ExitCode() int   { return exitInternal }
func (*errServiceUnavailable) Shown() bool     { return false }

// terminalError carries a run's terminal state out of a command; its message
// was already printed with the report.
type terminalError struct{ terminal pipeline.Terminal }

func (e *terminalError) Error() string { return string(e.terminal) }
func (e *terminalError) ExitCode() int { return terminalExit(e.terminal) }
func (*terminalError) Shown() bool     { return true }

// codedError is a plain sentinel with its code, for a command whose outcome
// needs no fields (doctor's failed check, approve's "no", -h answered).
type codedError struct {
	msg   string
	code  int
	shown bool
}

func (e *codedError) Error() string { return e.msg }
func (e *codedError) ExitCode() int { return e.code }
func (e *codedError) Shown() bool   { return e.shown }

// errHelpShown means -h was answered; it exits 0 and prints nothing more.
var errHelpShown error = &codedError{msg: "help shown", code: exitOK, shown: true}

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if ee, ok := errors.AsType[exitError](err); ok {
		return ee.ExitCode()
	}
	for _, f := range foreign {
		if errors.Is(err, f.err) {
			return f.code
		}
	}
	return exitInternal
}

// errorMessage is what Main prints for err: nothing when the command already
// showed it.
func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	if ee, ok := errors.AsType[exitError](err); ok && ee.Shown() {
		return ""
	}
	return err.Error()
}
