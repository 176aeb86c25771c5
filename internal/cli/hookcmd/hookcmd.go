// Package hookcmd is the `fixrail hook` command without the rest of fixrail:
// its flags and the wiring of the hook engine to this process's environment.
// It links only what a tool-call decision needs — the hook engine, the policy,
// approvals, receipts and redaction — so the slim cmd/fixrail-hook binary,
// which an agent CLI starts once per tool call, does not pay for the
// pipeline, the YAML parser or the model SDKs at start-up.
package hookcmd

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// UsageError is a mistake in the hook's flags. It must block (exit 2): a
// broken registration is loud, never a silent allow.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Opts are the hook's flags, and the approval verifier its binary links.
type Opts struct {
	Event, Format, Phase, Worktree, Receipts, Verifier string
	Allow, Protect, Snapshot                           stringList
	// Keys verifies approvals in this process (the full fixrail binary
	// sets it to its keyring). Nil, as in fixrail-hook, which links no
	// signature code: an approval is then checked by the fixrail binary
	// Verifier names (see ExecVerifier).
	Keys func(dir string) (approval.Verifier, error)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// Flags returns the hook's flag set and the options it fills.
func Flags() (*flag.FlagSet, *Opts) {
	o := &Opts{}
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.StringVar(&o.Event, "event", "pre", "pre, post, session-start or session-end: the event assumed when the input names none")
	fs.StringVar(&o.Format, "format", "claude", "the agent CLI's hook protocol: claude, codex or gemini")
	fs.StringVar(&o.Phase, "phase", "", "investigate or fix: run as the pipeline's phase hook (fails closed)")
	fs.StringVar(&o.Worktree, "worktree", "", "with --phase: the `dir` every path must resolve inside")
	fs.Var(&o.Allow, "allow", "with --phase: a `glob` (doublestar, relative to --worktree) the phase may write; repeatable")
	fs.StringVar(&o.Receipts, "receipts", "", "receipt log `file` (default $FIXRAIL_HOME/receipts.ndjson)")
	fs.Var(&o.Snapshot, "snapshot", "a settings `file` the session snapshot covers besides the CLI's own layers (a --settings file); repeatable")
	fs.StringVar(&o.Verifier, "verifier", "", "the fixrail binary `path` that checks an approval's signature for fixrail-hook, which links no signature code (default: fixrail beside it); self-mod protects it")
	fs.Var(&o.Protect, "protect-binary", "another fixrail binary `path` that self-mod protects besides this one and the --verifier; repeatable")
	return fs, o
}

// Decide runs the hook once on stdin and reports whether the call is
// blocked; the answer was already written in the CLI's protocol.
func Decide(o *Opts, stdin io.Reader, stdout, stderr io.Writer) (blocked bool, err error) {
	h, err := New(o)
	if err != nil {
		return true, &UsageError{err.Error()}
	}
	return h.Run(stdin, stdout, stderr) == hook.ExitBlock, nil
}

// New builds the hook from its flags and this process's environment. Flag
// errors are returned; an unknown $FIXRAIL_HOME becomes the hook's
// SetupErr, which its posture answers.
func New(o *Opts) (*hook.Hook, error) {
	format, err := hook.ParseFormat(o.Format)
	if err != nil {
		return nil, err
	}
	event, err := hook.ParseEvent(o.Event)
	if err != nil {
		return nil, err
	}
	h := &hook.Hook{Format: format, Event: event, NewRedactor: newRedactor}
	switch {
	case o.Phase != "":
		if h.Phase, err = hook.NewPhase(o.Phase, o.Worktree, o.Allow); err != nil {
			return nil, err
		}
	case o.Worktree != "" || len(o.Allow) > 0:
		return nil, fmt.Errorf("--worktree and --allow need --phase")
	}
	if o.Receipts != "" {
		if h.ReceiptLog, err = filepath.Abs(o.Receipts); err != nil {
			return nil, err
		}
	}
	h.Home, h.SetupErr = hook.HomeDir(os.LookupEnv)
	h.Env = policy.Env{Home: os.Getenv("HOME"), FixrailHome: h.Home, TmpDir: os.Getenv("TMPDIR"), SigningKeys: policy.SigningKeysFrom(os.LookupEnv)}
	exe, exeErr := os.Executable()
	if exeErr == nil {
		h.Env.FixrailBinaries = append(h.Env.FixrailBinaries, exe)
	}
	switch {
	case o.Keys != nil:
		h.Keys = o.Keys
		if o.Verifier != "" {
			// Unused here, but named: self-mod guards it as the hook's own.
			abs, err := filepath.Abs(o.Verifier)
			if err != nil {
				return nil, err
			}
			h.Env.FixrailBinaries = append(h.Env.FixrailBinaries, abs)
		}
	default:
		bin := o.Verifier
		if bin == "" && exeErr == nil {
			bin = filepath.Join(filepath.Dir(exe), "fixrail")
		}
		if bin != "" {
			if bin, err = filepath.Abs(bin); err != nil {
				return nil, err
			}
			h.Env.FixrailBinaries = append(h.Env.FixrailBinaries, bin)
		}
		h.Keys = ExecVerifier(bin)
	}
	for _, p := range o.Snapshot {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		h.SnapshotFiles = append(h.SnapshotFiles, abs)
	}
	for _, p := range o.Protect {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		h.Env.FixrailBinaries = append(h.Env.FixrailBinaries, abs)
	}
	return h, nil
}

// newRedactor is the receipts' redaction: the same engine as the leak scan,
// primed with the secret values in this process's environment (the agent
// CLI's, which the hook inherits).
func newRedactor() (hook.Redactor, error) {
	eng, err := redact.FromEnvironment(os.LookupEnv, "")
	if err != nil {
		return nil, err
	}
	return hook.RedactorFunc(func(s string) (string, error) {
		out, _, err := eng.Redact(s)
		return out, err
	}), nil
}

// Main is the slim binary's whole program: `fixrail-hook hook [flags]` (the
// same arguments as `fixrail hook`, so a registration can point at either).
// It speaks only the hook protocol: 0 lets the call run, hook.ExitBlock (2)
// blocks it — a usage error blocks too.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// The reason a call is blocked quotes the agent's command: the agent
	// CLI shows it to whoever watches, so it is escaped as fixrail's own
	// stderr is (stdout is the protocol's JSON).
	errw := untrusted.NewWriter(stderr)
	defer errw.Flush()
	stderr = errw
	if len(args) > 0 && args[0] == "hook" {
		args = args[1:]
	}
	fs, o := Flags()
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return hook.ExitBlock
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fixrail-hook: unexpected argument %q (install --print is `fixrail hook install`)\n", fs.Arg(0))
		return hook.ExitBlock
	}
	blocked, err := Decide(o, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "fixrail-hook: %v\n", err)
	}
	if blocked {
		return hook.ExitBlock
	}
	return 0
}
