package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/redact"
)

var cmdHook = &command{
	Name:  "hook",
	Usage: "[--event pre|post] [--format claude|codex|gemini] [--phase investigate|fix --worktree DIR --allow GLOB...]\n       fixrail hook install --print [--managed] [--format claude|codex|gemini]",
	Short: "decide an agent CLI's tool call (its PreToolUse/PostToolUse hook)",
	Long: `
Hook is the command an agent CLI runs before (--event pre) and after
(--event post) every tool call. It reads the CLI's hook JSON on stdin and
answers in that CLI's protocol (--format, default claude):

  allowed   exit 0, receipt "allow"
  warn      exit 0, a note for the user, receipt "warn"
  gated     exit 2, the reason on stderr (the model sees it), the canonical
            request and the command that approves it: fixrail approve
            <callkey>, or ssh-keygen -Y sign -n fixrail-approval. The next
            identical call runs once if the owner signed it (receipt
            "approved"); a missing, invalid, expired or replayed approval
            denies (receipt "deny").

Rules live in code; $FIXRAIL_HOME/policy.json (default ~/.config/fixrail)
sets each rule's mode: {"modes": {"push-force": "gate"}}. Defaults: self-mod
gate, spend off, everything else warn. Post events append an outcome receipt
joined by tool_use_id and never block.

Postures. As your hook, an engine error (unreadable policy, undecodable
input, a crash) lets the call run: exit 0, a message on stderr, an
engine-error receipt — a fixrail bug must not brick every tool call. The
approval check fails closed. With --phase (the pipeline's phase hook) every
error blocks, and only the phase's tools are allowed: Read, Grep and Glob
inside --worktree, Write/Edit/MultiEdit to the --allow globs (relative to the
worktree, symlinks resolved); Bash, WebFetch, MCP and the rest are denied.

A bad flag exits 2, which blocks every call: a broken registration is loud.

hook install --print prints the settings block that registers the hook; it
never edits a settings file. --managed prints the administrator form
(Claude Code managed settings with allowManagedHooksOnly), the one a
repository cannot switch off.`,
	Flags: func() *flag.FlagSet { fs, _ := hookFlags(); return fs },
	Run:   runHook,
}

// hookBlocked is the hook's "the call must not run": the agent CLIs block
// a tool call only on exit 2. Its message was already written on stderr in
// the CLI's protocol.
type hookBlocked struct{}

func (*hookBlocked) Error() string { return "tool call blocked" }

type hookOpts struct {
	event, format, phase, worktree, receipts string
	allow                                    stringList
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func hookFlags() (*flag.FlagSet, *hookOpts) {
	o := &hookOpts{}
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.StringVar(&o.event, "event", "pre", "pre or post: the event assumed when the input names none")
	fs.StringVar(&o.format, "format", "claude", "the agent CLI's hook protocol: claude, codex or gemini")
	fs.StringVar(&o.phase, "phase", "", "investigate or fix: run as the pipeline's phase hook (fails closed)")
	fs.StringVar(&o.worktree, "worktree", "", "with --phase: the `dir` every path must resolve inside")
	fs.Var(&o.allow, "allow", "with --phase: a `glob` (doublestar, relative to --worktree) the phase may write; repeatable")
	fs.StringVar(&o.receipts, "receipts", "", "receipt log `file` (default $FIXRAIL_HOME/receipts.ndjson)")
	return fs, o
}

func runHook(_ context.Context, stdio Stdio, args []string) error {
	if len(args) > 0 && args[0] == "install" {
		return runHookInstall(stdio, args[1:])
	}
	fs, o := hookFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	h, err := newHook(o)
	if err != nil {
		return usagef("%v", err)
	}
	if h.Run(stdio.Stdin, stdio.Stdout, stdio.Stderr) == hook.ExitBlock {
		return &hookBlocked{}
	}
	return nil
}

// newHook builds the hook from its flags and this process's environment.
// Flag errors are returned; an unknown $FIXRAIL_HOME becomes the hook's
// SetupErr, which its posture answers.
func newHook(o *hookOpts) (*hook.Hook, error) {
	format, err := hook.ParseFormat(o.format)
	if err != nil {
		return nil, err
	}
	event, err := hook.ParseEvent(o.event)
	if err != nil {
		return nil, err
	}
	h := &hook.Hook{Format: format, Event: event, NewRedactor: newRedactor}
	switch {
	case o.phase != "":
		if h.Phase, err = hook.NewPhase(o.phase, o.worktree, o.allow); err != nil {
			return nil, err
		}
	case o.worktree != "" || len(o.allow) > 0:
		return nil, fmt.Errorf("--worktree and --allow need --phase")
	}
	if o.receipts != "" {
		if h.ReceiptLog, err = filepath.Abs(o.receipts); err != nil {
			return nil, err
		}
	}
	h.Home, h.SetupErr = hook.HomeDir(os.LookupEnv)
	h.Env = policy.Env{Home: os.Getenv("HOME"), FixrailHome: h.Home, TmpDir: os.Getenv("TMPDIR")}
	if exe, err := os.Executable(); err == nil {
		h.Env.FixrailBinary = exe
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

func runHookInstall(stdio Stdio, args []string) error {
	fs := flag.NewFlagSet("hook install", flag.ContinueOnError)
	printBlock := fs.Bool("print", false, "print the settings block (required: install never edits a file)")
	managed := fs.Bool("managed", false, "print the managed (administrator) form, which a repository cannot switch off")
	format := fs.String("format", "claude", "the agent CLI: claude, codex or gemini")
	bin := fs.String("bin", "", "the fixrail `path` the block runs (default: this binary)")
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if !*printBlock {
		return usagef("hook install never edits settings files; pass --print and merge the block yourself")
	}
	f, err := hook.ParseFormat(*format)
	if err != nil {
		return usagef("%v", err)
	}
	path := *bin
	if path == "" {
		if path, err = os.Executable(); err != nil {
			return fmt.Errorf("locate the fixrail binary (pass --bin): %w", err)
		}
	}
	if path, err = filepath.Abs(path); err != nil {
		return err
	}
	reg, err := hook.Settings(f, hook.ShellQuote(path), *managed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stderr, "# Merge into %s\n", reg.File)
	if _, err := stdio.Stdout.Write(reg.JSON); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(reg.Notes, "\n"), "\n") {
		fmt.Fprintf(stdio.Stderr, "# %s\n", line)
	}
	return nil
}
