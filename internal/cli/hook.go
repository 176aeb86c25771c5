package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/cli/hookcmd"
	"github.com/fixrail/fixrail/internal/hook"
)

var cmdHook = &command{
	Name:  "hook",
	Usage: "[--event pre|post|session-start|session-end] [--format claude|codex|gemini] [--snapshot FILE]... [--phase investigate|fix --worktree DIR --allow GLOB...]\n       fixrail hook install --print [--managed] [--mcp] [--format claude|codex|gemini]\n       fixrail hook verify-approval --keys DIR [--at TIME] < TOKEN",
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
joined by tool_use_id and never block. Receipts of warned, denied and
approved calls and of engine errors are fsync'd before the answer; allow
and outcome receipts are not unless policy.json says
"receipts": {"sync": "all"}.

Postures. As your hook, an engine error (unreadable policy, undecodable
input, a crash) lets the call run: exit 0, a message on stderr, an
engine-error receipt — a fixrail bug must not brick every tool call. The
approval check fails closed. With --phase (the pipeline's phase hook) every
error blocks, and only the phase's tools are allowed: Read, Grep and Glob
inside --worktree, Write/Edit/MultiEdit to the --allow globs (relative to the
worktree, symlinks resolved); Bash, WebFetch, MCP and the rest are denied.

Sessions. At SessionStart (--event session-start) the hook hashes its
registration: the hook-related members of every settings layer of the CLI
(and of each --snapshot FILE), its command line and its binary, and receipts
it. When that differs from the last accepted session's receipt the session
starts with a message naming what changed; with self-mod in gate mode the
new registration is accepted only with the owner's approval of it (fixrail
approve, as for a call), and every session reports it until then. SessionEnd
(--event session-end) writes the closing receipt.

A bad flag exits 2, which blocks every call: a broken registration is loud.

hook install --print prints the settings block that registers the hook; it
never edits a settings file. It registers fixrail-hook (the same hook in a
binary that starts in less than half the time) when it sits beside this
binary, with --verifier naming this one — fixrail-hook links no signature
code and asks it (hook verify-approval) to check an approval, and self-mod
guards it — for the tool and session events, and shows the registration of the request path (fixrail mcp; --mcp
prints it alone). --managed prints the administrator form
(Claude Code managed settings with allowManagedHooksOnly), the one a
repository cannot switch off.

hook verify-approval reads one approval token on stdin and checks it
against the keys in --keys at --at (default now): "verified" and the
request's digest, exit 0, or why not, exit 5. It changes no file; it is
what fixrail-hook runs to check a signature.`,
	Flags: func() *flag.FlagSet { fs, _ := hookFlags(); return fs },
	Run:   runHook,
}

// hookBlocked is the hook's "the call must not run": the agent CLIs block
// a tool call only on exit 2. Its message was already written on stderr in
// the CLI's protocol.
type hookBlocked struct{}

func (*hookBlocked) Error() string { return "tool call blocked" }
func (*hookBlocked) ExitCode() int { return exitBlock }
func (*hookBlocked) Shown() bool   { return true }

func hookFlags() (*flag.FlagSet, *hookcmd.Opts) { return hookcmd.Flags() }

func runHook(_ context.Context, stdio Stdio, args []string) error {
	if len(args) > 0 && args[0] == "install" {
		return runHookInstall(stdio, args[1:])
	}
	if len(args) > 0 && args[0] == "verify-approval" {
		return runHookVerifyApproval(stdio, args[1:])
	}
	fs, o := hookFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	o.Keys = keyringVerifier
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	blocked, err := hookcmd.Decide(o, stdio.Stdin, stdio.Stdout, stdio.Stderr)
	var ue *hookcmd.UsageError
	if errors.As(err, &ue) {
		return usagef("%v", ue)
	}
	if blocked {
		return &hookBlocked{}
	}
	return err
}

func runHookInstall(stdio Stdio, args []string) error {
	fs := flag.NewFlagSet("hook install", flag.ContinueOnError)
	printBlock := fs.Bool("print", false, "print the settings block (required: install never edits a file)")
	managed := fs.Bool("managed", false, "print the managed (administrator) form, which a repository cannot switch off")
	format := fs.String("format", "claude", "the agent CLI: claude, codex or gemini")
	bin := fs.String("bin", "", "the hook binary `path` the block runs (default: fixrail-hook beside this binary if it is there, else this binary)")
	mcp := fs.Bool("mcp", false, "print the registration of the request path (fixrail mcp) instead of the hooks")
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
	self, selfErr := os.Executable()
	path := *bin
	if path == "" {
		if selfErr != nil {
			return fmt.Errorf("locate the fixrail binary (pass --bin): %w", selfErr)
		}
		path = defaultHookBinary(self)
	}
	if path, err = filepath.Abs(path); err != nil {
		return err
	}
	// Registering another binary (fixrail-hook): self-mod must still guard
	// this one, the fixrail the owner approves with.
	var flags string
	if selfErr == nil && !sameFile(self, path) {
		flags = " --verifier " + hook.ShellQuote(self)
	}
	// The request path runs fixrail itself (the slim hook has no mcp).
	server := path
	if selfErr == nil {
		server = self
	}
	mcpArgs := []string{"mcp"}
	if !sameFile(server, path) {
		mcpArgs = append(mcpArgs, "--protect-binary", path)
	}
	mreg, err := hook.MCPServer(f, server, mcpArgs)
	if err != nil {
		return err
	}
	if *mcp {
		fmt.Fprintf(stdio.Stderr, "# Merge into %s\n", mreg.File)
		_, err := stdio.Stdout.Write(mreg.JSON)
		return err
	}
	reg, err := hook.Settings(f, hook.ShellQuote(path), flags, *managed)
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
	fmt.Fprintf(stdio.Stderr, "#\n# The request path (fixrail mcp), merged into %s:\n", mreg.File)
	for _, line := range strings.Split(strings.TrimRight(string(mreg.JSON), "\n"), "\n") {
		fmt.Fprintf(stdio.Stderr, "#   %s\n", line)
	}
	if f == hook.Claude {
		quoted := make([]string, len(mcpArgs))
		for i, a := range mcpArgs {
			quoted[i] = hook.ShellQuote(a)
		}
		fmt.Fprintf(stdio.Stderr, "# or: claude mcp add --scope user fixrail -- %s %s\n", hook.ShellQuote(server), strings.Join(quoted, " "))
	}
	fmt.Fprintf(stdio.Stderr, "# (--mcp prints that block alone on stdout.)\n")
	return nil
}

// sameFile reports whether a and b name the same file (or the same path
// when either cannot be examined).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(fa, fb)
}

// defaultHookBinary is the binary hook install registers when --bin is not
// given: fixrail-hook beside fixrail (self) when it is there, since it
// starts in less than half the time, on every tool call; else fixrail.
func defaultHookBinary(self string) string {
	if slim := filepath.Join(filepath.Dir(self), "fixrail-hook"); isExecutable(slim) {
		return slim
	}
	return self
}

// isExecutable reports whether p is a regular file someone may execute.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
