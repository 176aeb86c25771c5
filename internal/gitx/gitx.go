// Package gitx is the only way fixrail runs git. Every call is hookless, gets
// only the privilege its call site needs, reads the operator's config from a
// hash-checked snapshot instead of the live files, and, once a baseline is
// recorded, is refused if the clone's own config has changed.
//
// The repositories fixrail works on are untrusted input. Their config, hooks
// and attributes are written by the same party that wrote the bug report, and
// the code an agent or a build runs inside a worktree can rewrite them
// mid-run. So every git process is built in exactly one place, Repo.command,
// which prepends command-line overrides (a -c outranks every config file) and
// hands git an allowlisted environment instead of ours. Nothing else in
// fixrail may run exec.Command("git").
//
// Privilege classes (see class): safe for everything local, commit for the
// commit itself (adds the signing agent's socket), push for Repo.Push (adds
// the operator's credential helpers and the one transport the recorded URL
// needs). A call site that names no class gets safe.
//
// Config snapshot (see Snapshot): the operator's system and global config,
// copied once at start into a read-only file whose SHA-256 every call checks.
//
// Drift check (see Repo.Baseline, Repo.CheckDrift): the clone's own config is
// recorded before repository code runs and compared again before the git
// calls that follow it; a change poisons the Repo for good.
//
// Filters: every clean, smudge and process command the clone's own config
// names is emptied on every call (pin.go), so fixrail never runs one, pinned
// or not. Filters the operator's own config names (git-lfs) still run, with
// the environment of the call's class, which never holds a credential except
// on push, where no filter runs.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
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

// class is the privilege a git call runs with. The zero value is classSafe,
// so a call site that does not choose gets the least.
type class int

const (
	// classSafe is every local call: add, diff, status, worktree, branch,
	// reset, rev-parse, show. No credential, no transport, no prompt.
	classSafe class = iota
	// classCommit is the safe class plus the signing agent's socket, for
	// git commit only. A clean filter can run during a commit and sees it.
	classCommit
	// classPush is Repo.Push: the operator's credential helpers and ssh from
	// the snapshot, and only the recorded URL's transport.
	classPush
	// classOperator reads the operator's live config for Snapshot, and
	// nothing else: it is the one class that does not point git at the
	// snapshot.
	classOperator
)

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

// transports are the protocol names git checks protocol.<name>.allow for
// that fixrail pins. Each is pinned by name, never only through
// protocol.allow, because a clone-level protocol.<name>.allow outranks a
// general protocol.allow=never.
var transports = []string{"ext", "fd", "file", "git", "http", "https", "ssh"}

// hooklessConfig is in every class. Each entry closes a way for repository
// config to make git run something behind fixrail's back.
var hooklessConfig = []string{
	"core.hooksPath=/dev/null",      // hook scripts in .git/hooks or a planted hooks dir
	"core.fsmonitor=false",          // an fsmonitor is a command run on every status
	"core.attributesFile=/dev/null", // no global attributes pulling in diff or merge drivers
	// Signing would run gpg.program, which config names.
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	// A commit would otherwise start a detached background gc or maintenance
	// run that outlives the call and runs with nobody watching it.
	"maintenance.auto=false",
	"gc.auto=0",
}

// localConfig is added for the safe and commit classes: no credential
// helper, no prompt, an ssh that cannot run, and no transport at all, so no
// fetch or push can happen by accident. credential.helper= comes first, as
// it does for push.
var localConfig = []string{
	"credential.helper=", // empties every helper any config file named
	"core.askPass=",
	"core.sshCommand=false",
	"protocol.allow=never",
}

// pushConfig is added for the push class after the operator's helpers,
// ssh and askpass.
var pushConfig = []string{
	"push.gpgSign=false",        // a signed push would run gpg.program
	"push.recurseSubmodules=no", // would push to URLs the submodules name
	"submodule.recurse=false",   // likewise
	"push.followTags=false",     // only the refspec given
	"protocol.allow=never",      // and then each transport by name
}

// hookArgs disables every githooks(5) event by name.
var hookArgs = func() []string {
	var a []string
	for _, ev := range hookEvents {
		a = append(a, "-c", "hook."+ev+".enabled=false")
	}
	return a
}()

// diffFamily are the subcommands that can run an external diff or a
// textconv. The builder refuses to start one without --no-ext-diff and
// --no-textconv, so a call site cannot forget them.
var diffFamily = []string{"diff", "diff-index", "diff-files", "diff-tree", "log", "show", "format-patch", "whatchanged"}

// safeEnvNames names the only parent variables the safe class passes: the
// build allowlist. Names, never patterns: anything credential-shaped, and
// GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE, which would silently redirect a
// call to another repository, stay behind. TMPDIR stays behind too: the
// snapshot lives under it.
var safeEnvNames = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "USER", "LOGNAME"}

// signingEnvNames are what the commit class adds: the ssh and gpg agents'
// sockets and gpg's home, so that a signing configuration can reach its key.
var signingEnvNames = []string{"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "GNUPGHOME"}

// pushEnvNames are what the push class adds: what a credential helper such
// as `gh auth git-credential`, ssh, or curl behind a proxy needs. Model,
// webhook and other service credentials are never on it.
var pushEnvNames = []string{
	"SSH_AUTH_SOCK",
	"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST", "GH_CONFIG_DIR",
	"XDG_CONFIG_HOME",
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
}

// operatorEnvNames are what Snapshot adds to read the operator's own config
// the way their git would: where it lives, and whether they redirected it.
var operatorEnvNames = []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"}

// fixedEnv is added to every call.
var fixedEnv = []string{
	"GIT_TERMINAL_PROMPT=0",    // fail instead of waiting on a terminal
	"SSH_ASKPASS=",             // no prompt program for ssh
	"GIT_LITERAL_PATHSPECS=1",  // a user path such as ":(exclude)x" or "*" means itself
	"GIT_NO_REPLACE_OBJECTS=1", // refs/replace must not change what a gate reads
	"GIT_ATTR_NOSYSTEM=1",      // /etc/gitattributes could name drivers too
	"GIT_PROTOCOL_FROM_USER=0", // protocol.*.allow=user means no
	// Set and empty, it outranks every core.gitProxy, the clone's (a
	// program a git:// push would run) and the operator's alike.
	"GIT_PROXY_COMMAND=",
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
	class class    // zero is classSafe
	// transport is the one protocol a push may use; classPush only.
	transport string
	// gitDir, when set, is passed as --git-dir, so git never discovers a
	// repository from dir (a .git file there could point anywhere).
	// workTree is passed as --work-tree; with gitDir and no workTree the
	// call runs bare (core.bare=true): no work tree, so no .gitattributes
	// or .gitignore from one is read.
	gitDir, workTree string
	// index is a private index file (GIT_INDEX_FILE), for the trees
	// fixrail checks out itself.
	index string
	// limit, when positive, bounds the bytes of stdout kept: a call whose
	// output an agent or a test can grow is ErrOutputLimit past it, and
	// git is stopped instead of being read to the end.
	limit int64
}

// command builds every git process fixrail starts: argv prefix and
// environment by class, and the snapshot in force. It fails closed if the
// snapshot is missing or altered, or if the call cannot be made safely.
func (r *Repo) command(ctx context.Context, inv invocation) (*exec.Cmd, error) {
	if len(inv.args) == 0 {
		return nil, errors.New("git: no subcommand")
	}
	if slices.Contains(diffFamily, inv.args[0]) &&
		(!slices.Contains(inv.args, "--no-ext-diff") || !slices.Contains(inv.args, "--no-textconv")) {
		return nil, fmt.Errorf("git %s: refusing a diff without --no-ext-diff --no-textconv", inv.args[0])
	}
	snap := r.snapshot()
	global := os.DevNull // no snapshot: no operator config at all, never the live file
	if snap != nil {
		if err := snap.Verify(); err != nil {
			return nil, fmt.Errorf("git %s: %w", inv.args[0], err)
		}
		global = snap.path
	}

	var cfg []string
	names := slices.Clone(safeEnvNames)
	env := slices.Clone(fixedEnv)
	switch inv.class {
	case classSafe, classCommit, classOperator:
		cfg = append(cfg, localConfig...)
		for _, p := range transports {
			cfg = append(cfg, "protocol."+p+".allow=never")
		}
		env = append(env, "GIT_ASKPASS=", "GIT_ALLOW_PROTOCOL=")
		if inv.class == classCommit {
			names = append(names, signingEnvNames...)
		}
	case classPush:
		if !slices.Contains(transports, inv.transport) || inv.transport == "ext" || inv.transport == "fd" {
			return nil, fmt.Errorf("git %s: transport %q not allowed", inv.args[0], inv.transport)
		}
		var err error
		if cfg, err = pushPrefix(snap, inv.transport); err != nil {
			return nil, fmt.Errorf("git %s: %w", inv.args[0], err)
		}
		names = append(names, pushEnvNames...)
		// GIT_ALLOW_PROTOCOL outranks every protocol.*.allow, config or -c.
		env = append(env, "GIT_ALLOW_PROTOCOL="+inv.transport)
	default:
		return nil, fmt.Errorf("git %s: unknown privilege class %d", inv.args[0], inv.class)
	}
	cfg = append(cfg, hooklessConfig...)

	if inv.class == classOperator {
		// The operator's own view: their GIT_CONFIG_* choices, no override.
		names = append(names, operatorEnvNames...)
	} else {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+global)
	}

	argv := make([]string, 0, 2*len(cfg)+len(hookArgs)+len(inv.args))
	for _, kv := range cfg {
		argv = append(argv, "-c", kv)
	}
	argv = append(argv, hookArgs...)
	r.mu.Lock()
	drivers := filterDrivers(r.base)
	r.mu.Unlock()
	neutral, err := neutralArgs(drivers)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", inv.args[0], err)
	}
	argv = append(argv, neutral...)
	if inv.gitDir == "" && r.gitDir != "" && inv.dir == r.top {
		// The main work tree: named, never discovered again.
		inv.gitDir, inv.workTree = r.gitDir, r.top
	}
	if inv.gitDir != "" {
		argv = append(argv, "--git-dir="+inv.gitDir)
		if inv.workTree != "" {
			argv = append(argv, "--work-tree="+inv.workTree)
		} else {
			argv = append(argv, "-c", "core.bare=true")
		}
		// What a private index and its stat data mean must not depend on
		// the repository's config.
		argv = append(argv, "-c", "core.fileMode=true", "-c", "core.symlinks=true",
			"-c", "core.trustctime=true", "-c", "core.checkStat=default",
			"-c", "core.splitIndex=false", "-c", "core.untrackedCache=false",
			"-c", "core.sparseCheckout=false", "-c", "index.sparse=false",
			"-c", "core.ignoreCase=false", "-c", "core.autocrlf=false")
	}
	argv = append(argv, inv.args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = inv.dir
	full := make([]string, 0, len(names)+len(env)+len(inv.env))
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := os.LookupEnv(name); ok {
			full = append(full, name+"="+v)
		}
	}
	full = append(full, env...)
	if inv.index != "" {
		full = append(full, "GIT_INDEX_FILE="+inv.index)
	}
	full = append(full, inv.env...)
	cmd.Env = full
	if inv.stdin != nil {
		cmd.Stdin = bytes.NewReader(inv.stdin)
	}
	cmd.WaitDelay = waitDelay
	return cmd, nil
}

// pushPrefix is the push class's config: every helper emptied first, then
// only the operator's helpers, ssh and askpass from the snapshot, then the
// one transport allowed by name and every other one refused by name.
func pushPrefix(snap *Snap, transport string) ([]string, error) {
	cfg := []string{"credential.helper="}
	ssh, askPass := "ssh", ""
	if snap != nil {
		for _, e := range snap.entries {
			switch {
			case isHelperKey(e.Key):
				if strings.Contains(e.Key, "=") {
					// -c splits at the first '='; such a key cannot be passed on.
					return nil, fmt.Errorf("operator credential helper key %q holds '=': cannot pass it with -c", e.Key)
				}
				if !e.HasValue {
					cfg = append(cfg, e.Key) // as the operator's git reads it
					continue
				}
				cfg = append(cfg, e.Key+"="+e.Value)
			case e.Key == "core.sshcommand":
				ssh = e.Value
			case e.Key == "core.askpass":
				askPass = e.Value
			}
		}
	}
	cfg = append(cfg, "core.sshCommand="+ssh, "core.askPass="+askPass)
	cfg = append(cfg, pushConfig...)
	for _, p := range transports {
		allow := "never"
		if p == transport {
			allow = "always"
		}
		cfg = append(cfg, "protocol."+p+".allow="+allow)
	}
	return cfg, nil
}

// isHelperKey reports whether key (as git config --list prints it) is
// credential.helper or credential.<url>.helper.
func isHelperKey(key string) bool {
	return strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper")
}

// run executes inv and returns its stdout. A non-zero exit is an *Error. A
// poisoned Repo fails here, before any process starts.
func (r *Repo) run(ctx context.Context, inv invocation) ([]byte, error) {
	if err := r.poisonErr(); err != nil {
		return nil, err
	}
	cmd, err := r.command(ctx, inv)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	out := &capped{buf: &stdout, limit: inv.limit}
	cmd.Stdout, cmd.Stderr = out, &capped{buf: &stderr, limit: maxStderr, quiet: true}
	err = cmd.Run()
	if out.over {
		return nil, fmt.Errorf("git %s: %w (%d bytes)", inv.args[0], ErrOutputLimit, inv.limit)
	}
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

// ErrOutputLimit reports a git call whose output passed the bound its
// call site set.
var ErrOutputLimit = errors.New("gitx: git output over its limit")

// maxStderr bounds the stderr kept of any call: Error reads one line of it.
const maxStderr = 64 << 10

// capped keeps at most limit bytes of a stream (all of it when limit is
// 0). Past the limit a loud writer (stdout) fails the write, so exec stops
// copying and git meets a closed pipe; a quiet one (stderr) drops the rest.
type capped struct {
	buf   *bytes.Buffer
	limit int64
	quiet bool
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.limit <= 0 {
		return c.buf.Write(p)
	}
	room := max(0, c.limit-int64(c.buf.Len()))
	if int64(len(p)) <= room {
		return c.buf.Write(p)
	}
	c.buf.Write(p[:room])
	c.over = true
	if c.quiet {
		return len(p), nil
	}
	return int(room), ErrOutputLimit
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
