// Package runner adapts agent CLIs to fixrail's two-invocation contract. The
// agent is an opaque step: it gets a prompt on stdin, a working directory and
// an allowlisted environment, and leaves files behind; the harness decides
// what those files are worth.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// Phase is which of the two invocations is running.
type Phase string

// The two invocations.
const (
	Investigate Phase = "investigate"
	Fix         Phase = "fix"
)

// Invocation is one call of the agent.
type Invocation struct {
	Phase Phase
	// Worktree is the finding's disposable worktree, the agent's cwd.
	Worktree string
	// Prompt goes on stdin, never argv: argv is world-readable in /proc and
	// capped in length.
	Prompt string
	// PlanPath and ResultPath lie outside the worktree so nothing the agent
	// writes there can end up in a commit.
	PlanPath   string
	ResultPath string
	Timeout    time.Duration
	MaxTurns   int
	// MaxCostUSD is the invocation's cost cap (the run's budget left);
	// zero means none. Claude stops at it (--max-budget-usd) and a result
	// over it is an OverBudget error; the command runner reports no cost
	// and cannot be held to it (the ledger charges it the whole cap).
	MaxCostUSD float64

	// Allow are the files the phase may write, as doublestar globs relative
	// to Worktree, slash-separated: the test path glob in the investigate
	// phase, the planned files in the fix phase (never the test: it must
	// stay as it was when it ran red). Adapters that can enforce it do —
	// claude through its permission rules and fixrail's phase hook — and
	// add PlanPath (investigate) or ResultPath (fix) themselves. The
	// command runner cannot hold an agent to it; the pipeline's diff gates
	// are the binding check either way. Empty allows no write in the
	// worktree.
	Allow []string
	// BashRules are Claude Code permission rules for the one shell command
	// a fix type needs (a CVE's lockfile regeneration, say
	// "Bash(go mod tidy:*)"), fix phase only. Empty for bugs, which get no
	// shell at all. fixrail's phase hook denies Bash today, so a rule here
	// has no effect until the hook admits it.
	BashRules []string
	// ReadOnly gives the agent read tools only — a dry run's fix phase:
	// no write tool, no shell, not even the result file, and Allow and
	// BashRules must be empty. An adapter that cannot take the write
	// tools away (the command runner) refuses the invocation.
	ReadOnly bool
	// HookCommand is the argv that runs fixrail's phase hook, `fixrail
	// hook` ([fixrail binary, "hook"]); the adapter appends --phase,
	// --worktree, --allow and --receipts. Empty means the adapter's own
	// (Claude.Hook). An adapter that needs a hook and has none refuses to
	// run.
	HookCommand []string
	// ReceiptLog is where the phase hook appends its receipts. Empty keeps
	// them in the invocation's private directory, deleted afterwards.
	ReceiptLog string
	// Sandbox confines the agent's filesystem as it confines tests: RW
	// holds the worktree and the hand-off directory (PlanPath's and
	// ResultPath's), RO the toolchains, Egress the run's egress policy
	// (the agent's one way out of its empty network namespace); the
	// adapter adds what its own process needs (a private HOME, its
	// install). An adapter given no Egress gives its agent the default
	// allowlist (DefaultEgress) with nothing recorded. nil runs the agent
	// unconfined.
	Sandbox *sandbox.Spec
	// TempDir is where the agent's private TMPDIR is made (inside the run's
	// disposable directory, so a sweep after a crash removes it too);
	// empty is the system's.
	TempDir string
}

// Kind classifies why an invocation did not succeed; the pipeline maps each
// to a HALT reason.
type Kind string

// The ways an invocation fails.
const (
	Crashed     Kind = "runner-crashed"     // ended by a signal it did not ask for
	TimedOut    Kind = "runner-timeout"     // the invocation's own deadline fired
	Failed      Kind = "runner-failed"      // exited non-zero
	Unavailable Kind = "runner-unavailable" // could not be started
	Canceled    Kind = "runner-canceled"    // the run was stopped (signal, wall clock)
	OutOfTurns  Kind = "runner-max-turns"   // the agent used its MaxTurns without finishing
	APIError    Kind = "runner-api-error"   // the model API failed or refused: the model is down
	Refused     Kind = "runner-refused"     // the adapter will not run the invocation as asked
	Unconfined  Kind = "runner-unconfined"  // the agent ran outside the rails the adapter set
	OverBudget  Kind = "runner-cost-cap"    // the agent reached MaxCostUSD
)

// ErrTurnCap and ErrCostCap match, with errors.Is, an *Error of kind
// OutOfTurns or OverBudget: the run's turn or cost cap stopped the agent
// mid-way, so the run must HALT with nothing committed.
var (
	ErrTurnCap = errors.New("turn cap reached")
	ErrCostCap = errors.New("cost cap reached")
)

// Is makes errors.Is(err, ErrTurnCap) and errors.Is(err, ErrCostCap) work.
func (e *Error) Is(target error) bool {
	return (target == ErrTurnCap && e.Kind == OutOfTurns) || (target == ErrCostCap && e.Kind == OverBudget)
}

// Error is an invocation that did not succeed.
type Error struct {
	Kind   Kind
	Detail string
	// Err is the cause, when there is one (a sandbox that cannot be had).
	Err error
	// Transport, when set, says why the failure is the channel's and not
	// the agent's answer: its output could not be read, or its process
	// died before it answered. Such an invocation is worth repeating once;
	// any other failure (an exit code, a cap, a refusal, a deadline) is
	// an answer, and the same prompt again would only repeat it.
	Transport string
}

// TransportFailure reports why err is a transport failure of an
// invocation (Error.Transport), or "" when it is not one.
func TransportFailure(err error) string {
	if e, ok := AsError(err); ok {
		return e.Transport
	}
	return ""
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Kind, e.Detail) }

// Unwrap keeps the cause in the chain, so the pipeline can tell a missing
// sandbox from a missing binary.
func (e *Error) Unwrap() error { return e.Err }

// Result is what the invocation left besides files.
type Result struct {
	Duration time.Duration
	// StdoutTail and StderrTail are the end of what the agent printed on
	// each stream (TailLines lines, at most TailBytes bytes), unredacted:
	// the pipeline redacts them before keeping them anywhere.
	StdoutTail, StderrTail string
	// NeverStarted reports that the agent's process was never started: the
	// adapter refused the invocation, or its binary, sandbox or private
	// directories could not be had, or the run was stopped first. Nothing
	// can have been spent. The zero value is "started", so an adapter that
	// does not say is charged as one that ran.
	NeverStarted bool
	// Metered reports that Cost and Turns are the agent CLI's own account
	// of the invocation (Claude Code's result event). False — the command
	// runner, or a CLI that ended without an account — leaves them unknown,
	// and the ledger charges the run's caps.
	Metered bool
	// Cost is what the invocation cost in US dollars as the agent CLI
	// reports it (Claude Code's total_cost_usd, an estimate computed from
	// token usage); 0 when the runner cannot tell.
	Cost float64
	// Turns is the number of model turns the agent took, when known.
	Turns int
	// Denials counts the tool calls that were refused, by a permission
	// rule or by the phase hook, when known.
	Denials int
	// Sandboxed reports that the agent ran inside the sandbox.
	Sandboxed bool
}

// baseEnvNames is the agent environment allowlist: names, never patterns.
var baseEnvNames = []string{"PATH", "HOME", "LANG"}

// Command runs an argv as the agent (runner.kind: command).
type Command struct {
	Argv []string
	// RO and RW are further paths the agent sees in its sandbox (its
	// install, a state directory). Its network is the Invocation's
	// egress policy and nothing else.
	RO, RW []string
	// Lookup reads the parent environment; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
}

// Run executes one invocation with the command runner contract: cwd is the
// worktree, the prompt arrives on stdin, and FIXRAIL_PHASE, FIXRAIL_PLAN,
// FIXRAIL_RESULT and FIXRAIL_MAX_TURNS are set.
func (c *Command) Run(ctx context.Context, inv Invocation) (Result, error) {
	if inv.ReadOnly {
		// Any program can write where it runs: read-only is not a promise
		// this adapter can keep, so it does not start.
		return Result{NeverStarted: true}, &Error{Kind: Refused, Detail: "a read-only invocation (dry run): the command runner cannot take write tools away from its program"}
	}
	lookup := c.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env := sandbox.Environ(lookup, baseEnvNames...)
	env = sandbox.With(env, "FIXRAIL_PHASE", string(inv.Phase))
	env = sandbox.With(env, "FIXRAIL_PLAN", inv.PlanPath)
	env = sandbox.With(env, "FIXRAIL_RESULT", inv.ResultPath)
	env = sandbox.With(env, "FIXRAIL_MAX_TURNS", fmt.Sprint(inv.MaxTurns))
	// A throwaway TMPDIR: nothing the agent leaves there outlives the call,
	// and it never shares fixrail's own temp directory.
	tmp, cleanup, err := sandbox.TempDir(inv.TempDir)
	if err != nil {
		return Result{NeverStarted: true}, &Error{Kind: Unavailable, Detail: "temp dir: " + err.Error()}
	}
	defer cleanup()
	env = sandbox.WithTempDir(env, tmp)
	var spec *sandbox.Spec
	if inv.Sandbox != nil {
		s := *inv.Sandbox
		s.RW = append(append([]string{}, s.RW...), c.RW...)
		s.RO = append(append([]string{}, s.RO...), c.RO...)
		if s.Egress == nil {
			s.Egress = &egress.Policy{}
		}
		s.Tmp = tmp
		spec = &s
	}
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:    c.Argv,
		Dir:     inv.Worktree,
		Env:     env,
		Stdin:   []byte(inv.Prompt),
		Timeout: inv.Timeout,
		Sandbox: spec,
	})
	out := resultOf(res, err)
	if err != nil {
		return out, &Error{Kind: Unavailable, Detail: err.Error(), Err: err}
	}
	return out, classify(ctx, res)
}

// resultOf is what an invocation's process left, before the adapter reads
// any account from it: its tails, and whether it started at all (sandbox.Run
// fails, or reports a run it never began, when it could not start it).
func resultOf(res sandbox.Result, err error) Result {
	return Result{
		Duration:     res.Duration,
		StdoutTail:   lastLines(res.Stdout, res.StdoutDropped),
		StderrTail:   lastLines(res.Stderr, res.StderrDropped),
		NeverStarted: err != nil || !res.Started,
		Sandboxed:    res.Sandboxed,
	}
}

func classify(ctx context.Context, res sandbox.Result) error {
	switch {
	case res.Canceled || (res.TimedOut && ctx.Err() != nil):
		// The run's own context ended it: the caller knows why (signal or wall clock).
		return &Error{Kind: Canceled, Detail: "stopped with the run"}
	case res.TimedOut:
		return &Error{Kind: TimedOut, Detail: fmt.Sprintf("no result after %s", res.Duration.Round(time.Millisecond))}
	case res.Signal != "":
		return &Error{Kind: Crashed, Detail: "agent was " + res.Signal, Transport: "the agent's process died (" + res.Signal + ") before it answered"}
	case res.Sandboxed && res.ExitCode > 128 && res.ExitCode <= 128+64:
		// bwrap reports a command a signal ended as 128+n.
		return &Error{Kind: Crashed, Detail: fmt.Sprintf("agent was ended by signal %d", res.ExitCode-128), Transport: fmt.Sprintf("the agent's process died (signal %d) before it answered", res.ExitCode-128)}
	case res.ExitCode != 0:
		return &Error{Kind: Failed, Detail: fmt.Sprintf("agent exited %d", res.ExitCode)}
	}
	return nil
}

// AsError returns the invocation error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// The bounds of what is kept of each of an agent's output streams: enough
// for the reason an agent gives when it stops, never the whole log.
const (
	TailLines = 20
	TailBytes = 2000
)

// lastLines is the end of one stream: its last TailLines lines, at most
// TailBytes bytes of them (cut at a character, marked "…"). When the
// output cap dropped bytes, a first line says how many: the tail is then
// the end of what was kept, not of what ran.
func lastLines(s string, dropped int64) string {
	s = strings.TrimRight(s, "\n")
	start := len(s)
	for range TailLines {
		j := strings.LastIndexByte(s[:start], '\n')
		if j < 0 {
			start = -1
			break
		}
		start = j
	}
	s = s[start+1:]
	if len(s) > TailBytes {
		s = tail(s, TailBytes)
	}
	if dropped > 0 {
		s = fmt.Sprintf("[output cap dropped %d bytes]\n", dropped) + s
	}
	return s
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + strings.ToValidUTF8(s[len(s)-n:], "")
}
