package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox"
)

var cmdDoctor = &command{
	Name:  "doctor",
	Usage: "[--repo DIR|OWNER/NAME] [--json]",
	Short: "check git, the config snapshot, the sandbox, the runner and credentials",
	Long: `
Doctor checks what a run depends on, without running one: the git version
(2.32 or later), that the operator's git config can be snapshotted and
verified, whether bubblewrap is usable (a probe sandbox under the system
call filter and limits every sandbox gets, which it names; and what
sandbox: in fixrail.yaml asks for), what the sandbox mounts (the plan a run computes; it fails
when a configured path or a system root would show the repository, its
git directory, .fixrail or fixrail itself, and warns for a PATH entry
left out), that fixrail.yaml on the base branch parses, that the runner's
binary is on PATH, which credentials fixrail would hold (names only,
never values) and whether the keys the runner and the model need are
among them (a claude runner: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN;
model anthropic: ANTHROPIC_API_KEY; openai: OPENAI_API_KEY). It exits 3
when something a run needs is missing.

As posture (a warning, never exit 3) it reports a fixrail.yaml on the base
that loosened the rails since the last run the ledger recorded: a glob
added to paths.fixable, test.path_glob changed, a glob removed from
paths.sensitive, a cap raised.

With --repo OWNER/NAME (and no such directory) it also asks GitHub, read
only, with FIXRAIL_GITHUB_TOKEN or GITHUB_TOKEN: the token's rights, one
probe per read permission a run needs, the default branch's protection,
whether draft PRs are possible and whether Actions may open PRs. The
working tree checked is then the current directory.`,
	Flags: func() *flag.FlagSet { fs, _ := doctorFlags(); return fs },
	Run:   runDoctor,
}

type doctorOpts struct {
	repo string
	json bool
}

func doctorFlags() (*flag.FlagSet, *doctorOpts) {
	o := &doctorOpts{}
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "the repository fixrail would run on: a directory, or OWNER/NAME on GitHub")
	fs.BoolVar(&o.json, "json", false, "print the checks as JSON")
	return fs, o
}

type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
}

// errDoctor is doctor's "a run would not start".
var errDoctor error = &codedError{msg: "a check failed", code: exitHalt, shown: true}

func runDoctor(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := doctorFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	var checks []check
	add := func(name, status, detail string) { checks = append(checks, check{name, status, detail}) }

	if v, err := gitx.GitVersion(ctx); err != nil {
		add("git", "fail", err.Error())
	} else {
		add("git", "ok", "version "+v+" (2.32 or later required)")
	}
	if snap, err := gitx.Snapshot(ctx); err != nil {
		add("git-config-snapshot", "fail", err.Error())
	} else {
		if err := snap.Verify(); err != nil {
			add("git-config-snapshot", "fail", err.Error())
		} else {
			add("git-config-snapshot", "ok", "system and global config frozen read-only, sha256 "+snap.SHA256()[:16]+"…")
		}
		snap.Close()
	}

	sandboxMode, runnerKind := "auto", ""
	egressAllow, egressErr := "", error(nil) // the agent's allowlist, as a run would make it
	var extraEnv []string
	var plans *sandboxPlans
	ghOwner, ghName, onGitHub := githubRepoArg(o.repo)
	dir := o.repo
	if onGitHub {
		dir = "."
	}
	setup, err := pipeline.Prepare(ctx, dir, "")
	cfgLoaded := err == nil
	if err != nil {
		add("config", "fail", err.Error())
	} else {
		defer setup.Close()
		cfg := setup.Config
		sandboxMode, runnerKind, extraEnv = cfg.Sandbox, cfg.Runner.Kind, cfg.ExtraEnv
		egressAllow, egressErr = describeEgress(cfg.Runner)
		add("config", "ok", fmt.Sprintf("fixrail.yaml on %s parses; runner %s, mode %s", setup.Base, cfg.Runner.Kind, cfg.Mode))
		bin := cfg.Runner.Binary
		if cfg.Runner.Kind == "command" && len(cfg.Runner.Command) > 0 {
			bin = cfg.Runner.Command[0]
		}
		if bin == "" {
			bin = cfg.Runner.Kind
		}
		if strings.Contains(bin, "/") {
			add("runner", "ok", "runs "+bin+" (resolved in the worktree at run time)")
		} else if p, err := exec.LookPath(bin); err != nil {
			add("runner", "fail", bin+" is not on PATH")
		} else {
			add("runner", "ok", p)
		}
		// Each registered fix type, and whether fixrail.yaml configures it:
		// the same registry and check a run uses when it takes a finding.
		for _, t := range fixtype.All() {
			if err := t.Check(cfg); err != nil {
				add("fix-type", "warn", t.Name+": not configured, findings of this type would not start: "+err.Error())
			} else {
				add("fix-type", "ok", t.Name+": "+t.Doc)
			}
		}
		if cfg.Model.Kind == "" {
			add("model", "warn", "no model: the LLM validation gate records every fix unconfirmed (needs-review)")
		} else {
			add("model", "ok", cfg.Model.Kind+" "+cfg.Model.Model)
		}
		if !onGitHub {
			add("branch-protection", "ok", "not applicable: the local forge pushes nothing")
			add("token-access", "ok", "not applicable: the local forge needs no credential")
		}
		if sandboxMode != "off" {
			plans = &sandboxPlans{repo: setup.Repo.Top(), gitDir: setup.Repo.CommonDir(), state: filepath.Join(setup.Repo.Top(), pipeline.StateDirName)}
			plans.agent, plans.tests, plans.err = setup.SandboxPlans("", os.Environ())
		}
		checks = append(checks, credentialChecks(cfg, os.LookupEnv)...)
		repoKey := ledger.RepoKey("", setup.Repo.Top())
		if onGitHub {
			repoKey = "github.com/" + strings.ToLower(ghOwner+"/"+ghName)
		}
		checks = append(checks, railsCheck(ctx, setup, repoKey))
		if onGitHub {
			checks = append(checks, prSecretsCheck(ctx, setup))
		}
	}
	if onGitHub {
		checks = append(checks, githubChecks(ctx, ghOwner, ghName, os.LookupEnv)...)
	}

	// Tests and agents are reported apart: they are confined by different
	// means, and an operator must not read "sandbox ok" as covering both.
	path, usable := sandbox.Detect()
	// The mounts are checked before bubblewrap is looked for, as a run
	// checks them: a plan that fails stops every run, with or without it.
	var planErr error
	if plans != nil {
		planErr = plans.err
		if planErr == nil {
			status, detail := plans.describe()
			add("sandbox-mounts", status, detail)
		}
	}
	// With no config, what a run would do is not known: bubblewrap's state
	// is reported, and what it would hold is said to be the default's.
	switch {
	case !cfgLoaded && usable:
		add("sandbox-tests", "ok", "bubblewrap at "+path+" is usable; under the default sandbox: auto, test and suite commands would run in it (the config did not load); every sandbox: "+sandbox.Rails())
	case sandboxMode == "off":
		add("sandbox-tests", "warn", "sandbox: off — test and suite commands run with the operator's rights")
	case planErr != nil:
		add("sandbox-tests", "fail", "runs would HALT no-sandbox: "+planErr.Error())
	case usable:
		add("sandbox-tests", "ok", "bubblewrap at "+path+" is usable; test and suite commands run in it (sandbox: "+sandboxMode+"); every sandbox: "+sandbox.Rails())
	case sandboxMode == "required":
		add("sandbox-tests", "fail", "sandbox: required, but bubblewrap is missing or unusable (runs would HALT no-sandbox)")
	default:
		add("sandbox-tests", "warn", "bubblewrap is missing or unusable; sandbox: auto runs tests unsandboxed and labels PRs needs-review")
	}
	switch {
	case sandboxMode == "off":
		add("sandbox-agent", "warn", "sandbox: off — the agent runs with the operator's rights and can reach the repository's git directory")
	case planErr != nil:
		add("sandbox-agent", "fail", "runs would HALT no-sandbox: "+planErr.Error())
	case !cfgLoaded && usable:
		add("sandbox-agent", "ok", "under the default sandbox: auto the agent would run in bubblewrap; what it would see, its runner and its network are not known: the config did not load")
	case usable && runnerKind == "claude":
		add("sandbox-agent", "ok", "the claude agent runs in bubblewrap: its worktree and hand-off files writable, its install and fixrail's binary (the phase hook and the egress forwarder) read-only; "+plans.unseen(false)+"; its network is the egress proxy (see egress)")
	case usable:
		add("sandbox-agent", "ok", "the agent runs in bubblewrap: its worktree and hand-off files writable, fixrail's binary read-only (the egress forwarder); "+plans.unseen(false)+"; its network is the egress proxy (see egress)")
	case sandboxMode == "required":
		add("sandbox-agent", "fail", "sandbox: required, but bubblewrap is missing or unusable (runs would HALT no-sandbox)")
	default:
		add("sandbox-agent", "warn", "bubblewrap is missing or unusable; sandbox: auto runs the agent unconfined too and labels PRs needs-review")
	}

	// The egress rail is the network namespace: without bubblewrap there
	// is none, and the allowlist is not enforced.
	switch {
	case runnerKind == "":
	case egressErr != nil:
		add("egress", "fail", "runs would HALT runner-refused: "+egressErr.Error())
	case sandboxMode == "off":
		add("egress", "warn", "sandbox: off — no network namespace: the agent has the host's whole network and runner.egress is not enforced")
	case planErr != nil:
		add("egress", "fail", "runs would HALT no-sandbox: "+planErr.Error())
	case usable:
		add("egress", "ok", "the agent has its own empty network namespace; its one way out is fixrail's egress proxy, which admits "+egressAllow+" and refuses the rest (a refusal ESCALATEs egress-refused); every request is in the event log")
	case sandboxMode == "required":
		add("egress", "fail", "no network namespace: bubblewrap is missing or unusable, and sandbox: required refuses to run the agent without one (runs would HALT no-sandbox)")
	default:
		add("egress", "warn", "no network namespace: bubblewrap is missing or unusable, so sandbox: auto runs the agent with the host's whole network and runner.egress is not enforced (PRs labelled needs-review)")
	}

	if root, err := sandbox.GoStdCacheRoot(); err == nil {
		if env, err := sandbox.Env(sandbox.Build, os.LookupEnv, extraEnv); err == nil {
			if c, ok := goBuildCacheCheck(ctx, root, sandboxMode, usable, env); ok {
				checks = append(checks, c)
			}
		}
	}

	var held []string
	for _, name := range redact.CredentialEnv {
		if v, ok := os.LookupEnv(name); ok && v != "" {
			held = append(held, name)
		}
	}
	if len(held) == 0 {
		add("credentials", "ok", "none in the environment (the local forge needs none)")
	} else {
		add("credentials", "ok", "held, never passed to test or build commands: "+strings.Join(held, ", "))
	}

	failed := false
	for _, c := range checks {
		failed = failed || c.Status == "fail"
	}
	if o.json {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			fmt.Fprintf(stdio.Stdout, "%-4s  %-19s %s\n", c.Status, c.Name, c.Detail)
		}
	}
	if failed {
		return errDoctor
	}
	return nil
}

// sandboxPlans are the mounts a run would give its agent and its tests
// (pipeline.Setup.SandboxPlans), and the places doctor says they hide.
type sandboxPlans struct {
	agent, tests        sandbox.MountPlan
	err                 error
	repo, gitDir, state string
}

// describe is the sandbox-mounts check: what PATH adds to the system roots
// and what it leaves out. An entry left out for what it would show is a
// warning: a command found there outside is not found inside.
func (p *sandboxPlans) describe() (status, detail string) {
	var binds []string
	for _, b := range p.agent.Binds() {
		if strings.Contains(b, "PATH entry") {
			binds = append(binds, b)
		}
	}
	detail = "PATH adds nothing beyond the system roots"
	if len(binds) > 0 {
		detail = "from PATH: " + strings.Join(binds, "; ")
	}
	status = "ok"
	if w := p.agent.Withheld(); len(w) > 0 {
		status = "warn"
		detail += "; not mounted, so not found inside: " + strings.Join(w, "; ")
	}
	return status, detail
}

// unseen is the agent's plan's account of what it does not show — the
// repository, its git directory, .fixrail, fixrail's binary (unless the
// adapter binds it, withBinary false) and HOME — and of any it does.
func (p *sandboxPlans) unseen(withBinary bool) string {
	if p == nil {
		return "what it would see is not known: the config did not load"
	}
	type place struct{ name, path string }
	places := []place{{"the repository", p.repo}, {"its git directory", p.gitDir}, {".fixrail", p.state}}
	if exe, err := os.Executable(); err == nil && withBinary {
		places = append(places, place{"fixrail's binary", exe})
	}
	places = append(places, place{"HOME", os.Getenv("HOME")})
	var hidden, shown []string
	for _, pl := range places {
		if by := p.agent.Shows(pl.path); by != "" {
			shown = append(shown, fmt.Sprintf("%s is visible at %s (in %s, mounted read-only)", pl.name, pl.path, by))
		} else {
			hidden = append(hidden, pl.name)
		}
	}
	var out []string
	switch n := len(hidden); n {
	case 0:
	case 1:
		out = append(out, "no view of "+hidden[0])
	default:
		out = append(out, "no view of "+strings.Join(hidden[:n-1], ", ")+" or "+hidden[n-1])
	}
	return strings.Join(append(out, shown...), "; ")
}

// describeEgress says what a run's egress proxy would admit: runner.egress,
// or the runner kind's model API when the key is absent.
func describeEgress(rc config.Runner) (string, error) {
	allow, from := rc.EgressTargets(), "runner.egress"
	if allow == nil {
		var err error
		if allow, err = runner.DefaultEgress(rc.Kind, os.LookupEnv); err != nil {
			return "", err
		}
		from = "the " + rc.Kind + " runner's model API (runner.egress absent)"
	}
	switch {
	case len(allow) == 0 && rc.Egress == nil:
		return "nothing (runner.egress is absent and the " + rc.Kind + " runner has no model API fixrail knows: list what the agent needs)", nil
	case len(allow) == 0:
		return "nothing (runner.egress is empty)", nil
	}
	names := make([]string, len(allow))
	for i, t := range allow {
		names[i] = t.String()
	}
	return strings.Join(names, ", ") + " (" + from + ")", nil
}
