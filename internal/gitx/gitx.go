// Package gitx is the only way fixrail runs git: every call is hookless and
// cannot reach credentials or repository-configured helpers.
//
// The repositories fixrail works on are untrusted input. Their config, hooks
// and attributes are written by the same party that wrote the bug report, and
// the code an agent runs inside a worktree can rewrite them mid-run. So every
// git process is built in exactly one place, Repo.command, which prepends
// command-line overrides (a -c outranks every config file) and hands git an
// allowlisted environment instead of ours. Nothing else in fixrail may run
// exec.Command("git").
//
// Clean and smudge filters are deliberately not overridden: LFS needs them.
// They still run without any credential in their environment.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNotExist reports that a path is absent at a revision. It is returned
// wrapped, so test for it with errors.Is.
var ErrNotExist = errors.New("gitx: no such file at that revision")

// Error is a git process that ran and exited non-zero. Failures to start git
// at all, and cancellations, are reported as ordinary wrapped errors instead,
// so an *Error always means git itself said no.
type Error struct {
	Args     []string // subcommand and its arguments, without the safety prefix
	ExitCode int      // -1 if git was killed by a signal
	Stderr   string
}

// Error returns "git <sub>: exit N: <first stderr line>". Only the first line
// is used because git puts its "fatal:" reason there and hints after it.
func (e *Error) Error() string {
	sub := "?"
	if len(e.Args) > 0 {
		sub = e.Args[0]
	}
	msg := fmt.Sprintf("git %s: exit %d", sub, e.ExitCode)
	if line, _, _ := strings.Cut(strings.TrimSpace(e.Stderr), "\n"); line != "" {
		msg += ": " + strings.TrimSpace(line)
	}
	return msg
}

// hookEvents lists every event in githooks(5). Each gets
// hook.<event>.enabled=false, which is what stops config-defined hooks
// (git 2.54+) that core.hooksPath never reaches. Older git ignores the keys.
var hookEvents = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch",
	"pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
	"sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
	"post-index-change",
}

// railConfig is the -c prefix of every call. Each entry closes a way for
// repository config to make git run something, or to make it talk to the
// network or a credential store.
var railConfig = []string{
	"core.hooksPath=/dev/null",      // hook scripts in .git/hooks or a planted hooks dir
	"core.fsmonitor=false",          // an fsmonitor is a command run on every status
	"protocol.allow=never",          // no transport at all, so no fetch or push by accident
	"credential.helper=",            // empties every helper any config file named
	"core.askPass=",                 // no prompt program
	"core.sshCommand=false",         // an ssh that cannot run
	"core.attributesFile=/dev/null", // no global attributes pulling in diff or merge drivers
	// Signing would run gpg.program, which config names.
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	// A commit would otherwise start a detached background gc or maintenance
	// run that outlives the call and runs with nobody watching it.
	"maintenance.auto=false",
	"gc.auto=0",
}

// railArgs is the argv prefix built from railConfig and hookEvents.
var railArgs = func() []string {
	var a []string
	for _, kv := range railConfig {
		a = append(a, "-c", kv)
	}
	for _, ev := range hookEvents {
		a = append(a, "-c", "hook."+ev+".enabled=false")
	}
	return a
}()

// passEnv names the only parent variables git sees. Names, never patterns:
// anything credential-shaped, and GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE,
// which would silently redirect a call to another repository, stay behind.
var passEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "USER"}

// fixedEnv is added to every call.
var fixedEnv = []string{
	"GIT_TERMINAL_PROMPT=0",    // fail instead of waiting on a terminal
	"GIT_ASKPASS=",             // no prompt program either
	"SSH_ASKPASS=",             // ...for ssh as well
	"GIT_CONFIG_NOSYSTEM=1",    // /etc/gitconfig is outside our control too
	"GIT_LITERAL_PATHSPECS=1",  // a user path such as ":(exclude)x" or "*" means itself
	"GIT_NO_REPLACE_OBJECTS=1", // refs/replace must not change what a gate reads
}

// waitDelay bounds how long a cancelled call waits for a filter child that
// still holds git's output pipes.
const waitDelay = 5 * time.Second

// invocation is one git call, minus the rails that command adds.
type invocation struct {
	dir   string   // git discovers the repository from here, never from GIT_DIR
	args  []string // subcommand first
	stdin []byte   // nil means /dev/null
	env   []string // extra KEY=VALUE pairs, such as a commit identity
}

// command builds every git process fixrail starts. It is the one place for
// the config snapshot, drift checks and per-privilege environments to come,
// so keep all of argv and env construction here.
func (r *Repo) command(ctx context.Context, inv invocation) *exec.Cmd {
	argv := make([]string, 0, len(railArgs)+len(inv.args))
	argv = append(argv, railArgs...)
	argv = append(argv, inv.args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = inv.dir
	env := make([]string, 0, len(passEnv)+len(fixedEnv)+len(inv.env))
	for _, name := range passEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	env = append(env, fixedEnv...)
	env = append(env, inv.env...)
	cmd.Env = env
	if inv.stdin != nil {
		cmd.Stdin = bytes.NewReader(inv.stdin)
	}
	cmd.WaitDelay = waitDelay
	return cmd
}

// run executes inv and returns its stdout. A non-zero exit is an *Error.
func (r *Repo) run(ctx context.Context, inv invocation) ([]byte, error) {
	cmd := r.command(ctx, inv)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", inv.args[0], ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil, &Error{
			Args:     append([]string(nil), inv.args...),
			ExitCode: ee.ExitCode(),
			Stderr:   stderr.String(),
		}
	}
	return nil, fmt.Errorf("git %s: %w", inv.args[0], err)
}

// exitCode returns the exit status of err if it is an *Error, else -1.
// Some git commands use exit 1 to mean a plain "no".
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}
