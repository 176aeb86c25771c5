package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// Claude runs Claude Code headless (runner.kind: claude), one process per
// invocation, inside rails set from the Invocation alone:
//
//   - the prompt goes on stdin, never argv (argv is world-readable in /proc);
//   - --tools names the phase's tool set, so every other tool's definition
//     is removed from the model's context: Read, Grep, Glob, Write and Edit,
//     plus Bash in the fix phase only when the Invocation carries BashRules;
//   - --permission-mode dontAsk with explicit allow rules: reads in the
//     worktree, Write/Edit to the Allow globs and the plan (investigate) or
//     result (fix) file, nothing else;
//   - one --settings JSON (the CLI honours only the last --settings) that
//     repeats the rules, denies the tools outside the set, sets
//     disableAllHooks false and registers fixrail's phase hook as the
//     PreToolUse hook of every tool; with --setting-sources "" no user,
//     project or local settings file is read, so a repository's
//     .claude/settings.json cannot switch the hook off, and with
//     --strict-mcp-config its .mcp.json servers are never started (nor is
//     its CLAUDE.md sent to the model: both verified end to end). --bare
//     and --safe-mode are never used: both drop hooks;
//   - a private HOME, TMPDIR and XDG_RUNTIME_DIR per invocation, deleted
//     afterwards, and an environment of exactly PATH, LANG, the model
//     credential and the two switches that turn off nonessential traffic;
//   - sandboxed, no network of its own: the CLI reaches the model API
//     through the run's egress proxy (the sandbox sets HTTPS_PROXY), and
//     nothing else unless runner.egress lists it.
//
// The phase hook (`fixrail hook --phase …`) is the binding control on every
// call; the CLI's own permission rules are a second, independent layer. The
// hook confines paths to one directory, so when the phase writes the plan or
// result file, which the pipeline keeps next to the worktree, the hook's
// --worktree is the directory holding both and its --allow globs are
// rewritten relative to it; the CLI's Read rule still covers the worktree
// only.
//
// BashRules add Bash to the fix phase's tools with exactly those rules, but
// fixrail's phase hook denies Bash in every phase today, so such a rule is
// inert (fail closed) until the hook learns to admit it.
//
// Before the agent starts, the adapter runs the hook command once on a
// call no phase admits and requires the block: a hook command that is not
// fixrail's phase hook would otherwise let every call run unnoticed.
//
// After the run the adapter checks from the stream that the rails held: the
// CLI reported exactly the phase's tools, no MCP server and the dontAsk
// mode, and no tool call ran without a PreToolUse hook response allowing it.
// Any doubt is a runner-unconfined error, never a success.
type Claude struct {
	// Binary is the claude executable: a path, or a name looked up in PATH.
	Binary string
	// Model is passed as --model when set.
	Model string
	// Hook is the argv of `fixrail hook` used when an Invocation carries no
	// HookCommand. Its first element must be an absolute path.
	Hook []string
	// Lookup reads the parent environment; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
	// TempDir is where the per-invocation private directories go; empty
	// is the system temporary directory. Keep it short: the CLI binds a
	// Unix socket under it, and socket paths are limited to 107 bytes.
	TempDir string
}

// ModelEnvNames are the model credential and endpoint the agent needs. They
// are the only credentials an agent's environment carries: the model API
// key is what lets the agent run at all. Nothing else of the parent's
// environment passes (no GITHUB_TOKEN, no cloud credentials); the hook
// process inherits the same environment, and its receipts redact these
// values.
var ModelEnvNames = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"}

// CredentialEnvNames are the ones of ModelEnvNames that log the CLI in. Its
// HOME is private and no settings file is read, so one of them, non-empty,
// is the only way it can reach the model: doctor checks for them too.
var CredentialEnvNames = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}

// noCredential is what fixrail says instead of the CLI's "Please run
// /login", which cannot help: a /login session lives in a HOME the agent
// never sees.
const noCredential = "the agent has no model credential: fixrail gives the claude CLI ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN from its own environment and nothing else (its HOME is private per run, so a /login session or a settings file never reaches it); set one of them where fixrail runs (in Actions, the fixrail run step's env:)"

// DefaultEgress is the model API the agent reaches when runner.egress is
// absent: ANTHROPIC_BASE_URL's host and port as the agent's environment
// holds it, or the Anthropic API.
func (c *Claude) DefaultEgress() ([]egress.Target, error) {
	return DefaultEgress("claude", c.Lookup)
}

// HasCredential reports whether lookup holds a non-empty model credential.
func HasCredential(lookup func(string) (string, bool)) bool {
	for _, name := range CredentialEnvNames {
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// claudeSwitches are set in every claude invocation: no telemetry, update
// checks, feature flags or other traffic besides the model API
// (notes/claude-code-cli.md §3.2 saw no other connection with it set), and
// no self-update.
var claudeSwitches = [][2]string{
	{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
	{"DISABLE_AUTOUPDATER", "1"},
}

// The tool sets. Names are Claude Code's.
var (
	claudeReadTools  = []string{"Read", "Grep", "Glob"}
	claudeWriteTools = []string{"Write", "Edit"}
	// claudeDenied are denied in the settings as well as left out of
	// --tools: a bare-name deny rule removes the tool, and deny rules hold
	// in every permission mode.
	claudeDenied = []string{"Agent", "NotebookEdit", "WebFetch", "WebSearch", "mcp__*"}
)

// hookTimeout is the PreToolUse handler's timeout in seconds. A hook that
// times out lets the call run, so it is generous; the phase hook decides
// in milliseconds.
const hookTimeout = 60

// streamCap bounds the stream-json kept from one invocation. The result
// event comes last, so a stream cut short is read as no result.
const streamCap = 32 << 20

// promptCap is the CLI's limit on piped stdin.
const promptCap = 10 << 20

// Run executes one invocation. A non-nil error is always an *Error; Result
// carries the cost, turns and denials the stream reported even then.
func (c *Claude) Run(ctx context.Context, inv Invocation) (Result, error) {
	// Until the CLI starts, nothing can have been spent.
	notStarted := Result{NeverStarted: true}
	plan, err := c.plan(inv)
	if err != nil {
		return notStarted, err
	}
	lookup := c.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	priv, err := os.MkdirTemp(c.TempDir, "fxc")
	if err != nil {
		return notStarted, &Error{Kind: Unavailable, Detail: "private directory: " + err.Error()}
	}
	defer os.RemoveAll(priv)
	dirs := claudeDirs{Home: filepath.Join(priv, "h"), Tmp: filepath.Join(priv, "t"), Run: filepath.Join(priv, "r")}
	for _, d := range []string{dirs.Home, dirs.Tmp, dirs.Run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return notStarted, &Error{Kind: Unavailable, Detail: "private directory: " + err.Error()}
		}
	}
	receipts := inv.ReceiptLog
	if receipts == "" {
		receipts = filepath.Join(priv, "receipts.ndjson")
	}
	argv, err := plan.argv(receipts)
	if err != nil {
		return notStarted, err
	}
	env := claudeEnv(lookup, dirs)
	if err := plan.probeHook(ctx, env, filepath.Join(priv, "probe-receipts.ndjson")); err != nil {
		return notStarted, err
	}
	spec, err := plan.confine(priv, receipts, lookup)
	if err != nil {
		return notStarted, err
	}
	// After every refusal: a rail that does not hold is said first.
	if !HasCredential(lookup) {
		return notStarted, &Error{Kind: Unavailable, Detail: noCredential}
	}
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:      argv,
		Dir:       inv.Worktree,
		Env:       env,
		Stdin:     []byte(inv.Prompt),
		Timeout:   inv.Timeout,
		OutputCap: streamCap,
		Sandbox:   spec,
	})
	out := resultOf(res, err)
	if err != nil {
		return out, &Error{Kind: Unavailable, Detail: err.Error(), Err: err}
	}
	s := parseStream(res.Stdout)
	out.Cost, out.Turns, out.Denials, out.Metered = s.account()
	err = s.outcome(ctx, res, plan.tools, inv.MaxTurns)
	if e, ok := AsError(err); (err == nil || ok && e.Kind != Unconfined && e.Kind != OverBudget) && inv.MaxCostUSD > 0 && out.Cost > inv.MaxCostUSD {
		// The CLI checks its budget between turns, so the last turn can
		// pass it; over is over, whatever the run's own verdict.
		err = &Error{Kind: OverBudget, Detail: fmt.Sprintf("cost $%g passed the cap $%g", out.Cost, inv.MaxCostUSD)}
	}
	return out, err
}

// confine is the invocation's sandbox: the pipeline's (the worktree and the
// hand-off files writable, the run's egress policy) plus what the CLI
// itself needs — its private directory and the receipt log writable, its
// install and the phase hook's binary readable. Its network is the egress
// proxy: without a policy from the pipeline, one allowing exactly the
// model API (DefaultEgress). nil when the pipeline asked for no sandbox.
func (p *claudePlan) confine(priv, receipts string, lookup func(string) (string, bool)) (*sandbox.Spec, error) {
	if p.inv.Sandbox == nil {
		return nil, nil
	}
	s := *p.inv.Sandbox
	s.RW = append(slices.Clone(s.RW), priv)
	if d := filepath.Dir(receipts); d != priv {
		s.RW = append(s.RW, d)
	}
	install, err := installRoot(p.c.Binary)
	if err != nil {
		return nil, &Error{Kind: Unavailable, Detail: "claude binary: " + err.Error()}
	}
	s.RO = append(slices.Clone(s.RO), install, p.hook[0])
	if s.Egress == nil {
		allow, err := DefaultEgress("claude", lookup)
		if err != nil {
			return nil, &Error{Kind: Refused, Detail: err.Error()}
		}
		s.Egress = &egress.Policy{Allow: allow}
	}
	return &s, nil
}

// installRoot is what must be visible for the CLI at bin to run: for an npm
// install, the outermost node_modules directory on its resolved path (the
// package, its dependencies and the .bin link); otherwise the directory of
// the resolved executable.
func installRoot(bin string) (string, error) {
	p := bin
	if !strings.Contains(bin, "/") {
		var err error
		if p, err = exec.LookPath(bin); err != nil {
			return "", err
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	root := ""
	for _, q := range []string{real, p} {
		for d := filepath.Dir(q); d != "/" && d != "."; d = filepath.Dir(d) {
			if filepath.Base(d) == "node_modules" {
				root = d
			}
		}
		if root != "" {
			return root, nil
		}
	}
	return filepath.Dir(real), nil
}

// claudeDirs are one invocation's private directories.
type claudeDirs struct {
	Home, Tmp, Run string
}

// claudeEnv is the agent's whole environment: the allowlist with HOME
// replaced by the private one, TMPDIR and XDG_RUNTIME_DIR (where the CLI
// binds its cross-session messaging socket, else shared under /tmp) private
// too, the model credential, and the traffic switches.
func claudeEnv(lookup func(string) (string, bool), d claudeDirs) []string {
	env := sandbox.Environ(lookup, baseEnvNames...)
	env = sandbox.With(env, "HOME", d.Home)
	env = sandbox.With(env, "TMPDIR", d.Tmp)
	env = sandbox.With(env, "XDG_RUNTIME_DIR", d.Run)
	env = append(env, sandbox.Environ(lookup, ModelEnvNames...)...)
	for _, kv := range claudeSwitches {
		env = sandbox.With(env, kv[0], kv[1])
	}
	return env
}

// claudePlan is one invocation's rails, computed before anything runs.
type claudePlan struct {
	c        *Claude
	inv      Invocation
	hook     []string
	tools    []string // --tools
	allow    []string // permission allow rules
	deny     []string // permission deny rules
	root     string   // the phase hook's --worktree
	hookGlob []string // the phase hook's --allow globs, relative to root
}

// plan checks inv and derives its rails. Every problem is a Refused error:
// an invocation the adapter cannot confine is not run weaker.
func (c *Claude) plan(inv Invocation) (*claudePlan, error) {
	refuse := func(format string, a ...any) (*claudePlan, error) {
		return nil, &Error{Kind: Refused, Detail: fmt.Sprintf(format, a...)}
	}
	if c.Binary == "" {
		return refuse("no claude binary configured")
	}
	if c.Model != "" && !flagValue(c.Model) {
		return refuse("model %q is not a plain model name", c.Model)
	}
	if inv.Phase != Investigate && inv.Phase != Fix {
		return refuse("unknown phase %q", inv.Phase)
	}
	if inv.MaxTurns <= 0 {
		return refuse("max turns must be positive: an agent without a turn cap is not run")
	}
	if !(inv.MaxCostUSD >= 0) || math.IsInf(inv.MaxCostUSD, 0) {
		return refuse("cost cap %v is not a non-negative number", inv.MaxCostUSD)
	}
	if inv.Prompt == "" {
		return refuse("empty prompt")
	}
	if len(inv.Prompt) > promptCap {
		return refuse("prompt of %d bytes exceeds the CLI's %d-byte stdin limit", len(inv.Prompt), promptCap)
	}
	hook := inv.HookCommand
	if len(hook) == 0 {
		hook = c.Hook
	}
	if len(hook) == 0 || !filepath.IsAbs(hook[0]) {
		return refuse("no phase hook command with an absolute path (got %q): the hook is the binding control on every tool call", hook)
	}
	if !filepath.IsAbs(inv.Worktree) {
		return refuse("worktree %q is not an absolute path", inv.Worktree)
	}
	wt := filepath.Clean(inv.Worktree)
	if fi, err := os.Stat(wt); err != nil || !fi.IsDir() {
		return refuse("worktree %s is not a directory", wt)
	}
	p := &claudePlan{c: c, inv: inv, hook: hook, root: wt}

	for _, g := range inv.Allow {
		if why := checkAllow(g, inv.Phase); why != "" {
			return refuse("allow %q: %s", g, why)
		}
	}
	if inv.ReadOnly && (len(inv.Allow) > 0 || len(inv.BashRules) > 0) {
		return refuse("a read-only invocation carries write globs or bash rules")
	}
	if len(inv.BashRules) > 0 && inv.Phase != Fix {
		return refuse("bash rules in the %s phase: only the fix phase may carry one", inv.Phase)
	}
	for _, r := range inv.BashRules {
		if !bashRule(r) {
			return refuse("bash rule %q: want one scoped rule such as Bash(go mod tidy:*)", r)
		}
	}

	// The one file outside the worktree the phase writes.
	side := inv.PlanPath
	if inv.Phase == Fix {
		side = inv.ResultPath
	}
	hookGlobs := slices.Clone(inv.Allow)
	var sideRules []string
	if side != "" {
		if !filepath.IsAbs(side) || filepath.Clean(side) != side {
			return refuse("%s file %q is not a clean absolute path", inv.Phase, side)
		}
		if filepath.Dir(side) != filepath.Dir(wt) || side == wt {
			return refuse("%s file %s must sit next to the worktree %s: the phase hook confines every path to one directory", inv.Phase, side, wt)
		}
		if !ruleSafe(side) || !ruleSafe(filepath.Base(wt)) {
			return refuse("%s file %s or worktree %s holds a character a permission rule cannot carry", inv.Phase, side, wt)
		}
		p.root = filepath.Dir(wt)
		prefix := globLiteral(filepath.Base(wt)) + "/"
		for i, g := range hookGlobs {
			hookGlobs[i] = prefix + g
		}
		hookGlobs = append(hookGlobs, globLiteral(filepath.Base(side)))
		// "//" starts an absolute path in a permission rule. Rules match
		// the path the CLI resolved, so a symlinked temp dir gets both.
		sideRules = append(sideRules, "Edit(/"+side+")")
		if real, err := filepath.EvalSymlinks(filepath.Dir(side)); err == nil && real != filepath.Dir(side) {
			sideRules = append(sideRules, "Edit(/"+filepath.Join(real, filepath.Base(side))+")")
		}
	}
	if inv.ReadOnly {
		// Nothing to write, not even the side file: the hook admits no
		// write, and the write tools are not defined at all.
		hookGlobs, sideRules = nil, nil
	}
	p.hookGlob = hookGlobs

	p.tools = append(slices.Clone(claudeReadTools), claudeWriteTools...)
	if inv.ReadOnly {
		p.tools = slices.Clone(claudeReadTools)
	}
	// Read(path) covers Read, Grep and Glob: the worktree only.
	p.allow = []string{"Read(./**)"}
	for _, g := range inv.Allow {
		// Edit(path) covers the path checks of Edit and Write.
		p.allow = append(p.allow, "Edit(./"+g+")")
	}
	p.allow = append(p.allow, sideRules...)
	p.deny = slices.Clone(claudeDenied)
	if inv.ReadOnly {
		p.deny = append(p.deny, claudeWriteTools...)
	}
	if len(inv.BashRules) > 0 {
		p.tools = append(p.tools, "Bash")
		p.allow = append(p.allow, inv.BashRules...)
	} else {
		p.deny = append(p.deny, "Bash")
	}
	slices.Sort(p.deny)
	return p, nil
}

// checkAllow returns why an Allow entry cannot be enforced, or "". The
// phase hook takes relative doublestar globs without "..", and the CLI's
// permission rules must not be split or closed early by the entry. In the
// fix phase the entries are planned files and must be literal: a plan must
// not widen its own write scope with a glob.
func checkAllow(g string, ph Phase) string {
	switch {
	case g == "" || strings.HasPrefix(g, "/") || strings.HasPrefix(g, "./"):
		return "want a path relative to the worktree"
	case !doublestar.ValidatePattern(g):
		return "not a valid glob"
	case slices.Contains(strings.Split(g, "/"), ".."):
		return `".." is not allowed`
	case !ruleSafe(g):
		return "holds a character a permission rule cannot carry (parenthesis, comma, backslash, space or control)"
	case ph == Fix && strings.ContainsAny(g, "*?[]{}"):
		return "a planned file must be a literal path, not a glob"
	}
	return ""
}

// ruleSafe reports whether s can sit inside a permission rule and an
// --allowedTools argument unchanged: no parenthesis closes the rule, no
// comma or space splits the argument, no backslash escapes anything.
func ruleSafe(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("(),\\", r)
	})
}

// bashRule accepts one scoped Bash rule: Bash(<command prefix>), never the
// whole shell.
func bashRule(r string) bool {
	inner, ok := strings.CutPrefix(r, "Bash(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return false
	}
	inner = strings.TrimSuffix(inner, ")")
	cmd := strings.TrimSuffix(strings.TrimSuffix(inner, ":*"), " *")
	return strings.TrimSpace(cmd) != "" && !strings.ContainsAny(cmd, "*()\n;&|`$<>") && !strings.Contains(inner, ",")
}

// flagValue accepts a value for a CLI flag: not empty, not an option.
func flagValue(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	})
}

// globLiteral escapes doublestar's metacharacters in a file name.
func globLiteral(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The --settings document. Field order is the order of the JSON.
type claudeSettings struct {
	// DisableAllHooks is written out as false: the highest-precedence
	// value wins, and this one outranks every settings file.
	DisableAllHooks bool              `json:"disableAllHooks"`
	Permissions     claudePermissions `json:"permissions"`
	Hooks           claudeHooks       `json:"hooks"`
}

type claudePermissions struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

type claudeHooks struct {
	PreToolUse []claudeHookGroup `json:"PreToolUse"`
}

type claudeHookGroup struct {
	Matcher string              `json:"matcher"`
	Hooks   []claudeHookHandler `json:"hooks"`
}

// claudeHookHandler is a command hook in exec form (command plus args):
// no shell parses the paths and globs.
type claudeHookHandler struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Timeout int      `json:"timeout"`
}

// hookArgv is the phase hook's argv.
func (p *claudePlan) hookArgv(receipts string) []string {
	argv := slices.Clone(p.hook)
	argv = append(argv, "--phase", string(p.inv.Phase), "--worktree", p.root)
	for _, g := range p.hookGlob {
		argv = append(argv, "--allow", g)
	}
	return append(argv, "--receipts", receipts)
}

// probeTimeout bounds the hook probe.
const probeTimeout = 30 * time.Second

// probeHook runs the phase hook, exactly as the CLI will, on a call no phase
// admits (a WebFetch) and requires the block, exit 2. A command that lets it
// through — the wrong binary, a fixrail without --phase, a wrapper that
// loses the exit code — would let every tool call run, and the CLI cannot
// tell: such an invocation is refused before the agent starts. Its receipt
// goes to a log of its own, not the operator's.
func (p *claudePlan) probeHook(ctx context.Context, env []string, receipts string) error {
	call, err := json.Marshal(map[string]any{
		"session_id":      "fixrail-hook-probe",
		"cwd":             p.inv.Worktree,
		"hook_event_name": "PreToolUse",
		"tool_name":       "WebFetch",
		"tool_input":      map[string]any{"url": "https://fixrail.invalid/probe", "prompt": "probe"},
		"tool_use_id":     "fixrail_probe",
	})
	if err != nil {
		return &Error{Kind: Refused, Detail: "hook probe: " + err.Error()}
	}
	argv := p.hookArgv(receipts)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Args: argv, Dir: p.inv.Worktree, Env: env, Stdin: call, Timeout: probeTimeout})
	if err != nil {
		return &Error{Kind: Refused, Detail: fmt.Sprintf("the phase hook %s cannot start: %v", argv[0], err)}
	}
	if res.Canceled || (res.TimedOut && ctx.Err() != nil) {
		return classify(ctx, res)
	}
	if res.ExitCode != 2 {
		return &Error{Kind: Refused, Detail: fmt.Sprintf("the phase hook %q did not block a probe call (exit %d, want 2): it is not fixrail's phase hook, and would let every tool call run; stderr: %s",
			argv[:2], res.ExitCode, strings.TrimSpace(tail(res.Stderr, 300)))}
	}
	return nil
}

// settings is the one --settings JSON.
func (p *claudePlan) settings(receipts string) ([]byte, error) {
	h := p.hookArgv(receipts)
	return json.Marshal(claudeSettings{
		DisableAllHooks: false,
		Permissions:     claudePermissions{Allow: p.allow, Deny: p.deny},
		Hooks: claudeHooks{PreToolUse: []claudeHookGroup{{
			Matcher: "*", // every tool, MCP tools included
			Hooks:   []claudeHookHandler{{Type: "command", Command: h[0], Args: h[1:], Timeout: hookTimeout}},
		}}},
	})
}

// argv is the CLI's command line. It holds paths, globs and rules, never the
// prompt.
func (p *claudePlan) argv(receipts string) ([]string, error) {
	settings, err := p.settings(receipts)
	if err != nil {
		return nil, &Error{Kind: Refused, Detail: "settings: " + err.Error()}
	}
	argv := []string{p.c.Binary, "-p",
		"--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--no-session-persistence",
		"--max-turns", strconv.Itoa(p.inv.MaxTurns),
		"--permission-mode", "dontAsk",
		"--tools", strings.Join(p.tools, ","),
		"--allowedTools"}
	argv = append(argv, p.allow...)
	if p.inv.MaxCostUSD > 0 {
		argv = append(argv, "--max-budget-usd", strconv.FormatFloat(p.inv.MaxCostUSD, 'f', -1, 64))
	}
	if p.c.Model != "" {
		argv = append(argv, "--model", p.c.Model)
	}
	return append(argv,
		"--setting-sources", "",
		"--strict-mcp-config",
		"--settings", string(settings)), nil
}
