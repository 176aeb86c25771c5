package fixtype

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/verdict"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// CVE is the cve fix type as registered: its advisory data is the default
// on-disk cache, read offline, so a run nobody configured never calls out.
// The CLI binds the source its flags choose with NewCVE.
var CVE = NewCVE(nil)

// cveBashRules are the lockfile regenerations an agent may run when the
// built-in bumper does not make the edit (manifest.AgentRegen's commands);
// nothing else reaches a shell.
var cveBashRules = []string{
	"Bash(cargo update --offline --package:*)",
	"Bash(bundle lock --local --update:*)",
	"Bash(poetry lock --no-update)",
	"Bash(uv lock --offline --upgrade-package:*)",
	"Bash(" + strings.Join(manifest.NPMRegenArgv, " ") + ")",
}

// NewCVE is the cve fix type over src (nil: the default cache, offline).
// The harness plans (cve.Prepare on a fresh checkout of the base: the
// package from the repository's manifests, the version decision), edits
// where the built-in bumper can (cve.Edit, then the lockfile regeneration
// in the sandbox), and judges (red: the repository's version is affected;
// green: cve.Verify on a fresh checkout of the candidate). The agent is
// asked only for an edit the bumper does not make.
func NewCVE(src cve.Source) *Type {
	t := &cveType{src: src}
	return &Type{
		Name:    "cve",
		Doc:     "a vulnerable dependency: the package from the manifests, the lowest version that clears every advisory, a built-in bump",
		Subject: "vulnerable-dependency alert",
		Budget:  Budget{MaxDiffLines: 200, BashRules: cveBashRules},
		// An alert names a CVE and calls its package vulnerable: that is
		// what the type is, not a risk it raises. "security" is not here:
		// a package named for it (spring-security) is a signal.
		Implied: []string{"cve", "vulnerability"},
		Check:   func(*config.Config) error { return nil },
		// No investigate phase writes anything: the harness plans.
		Scope: func(*config.Config) []string { return nil },
		Plan:  t.plan,
		Fix:   cveFix,
		Edit:  t.edit,
		Retry: cveRetry,
		Red:   cveRed,
		Gates: func(e *Env, p *Plan) []*gates.Gate { return []*gates.Gate{t.green(e, p)} },
		// verify asks the same questions again: Prepare on the base, the
		// same green on the commit, with the advisory data bound here.
		Replay: t.replay,
		// The message is written before cve-green reads the commit, and an
		// agent's edit (or a follow-up's next candidate, or go mod tidy's
		// selection) may land elsewhere than the target: it says what
		// cve-green then proves — off the affected version, clear of the
		// advisories — and names the target as the decision's, not as
		// the version applied.
		CommitNote: func(e *Env, p *Plan) string {
			cp := cveOf(p)
			return fmt.Sprintf("Moves %s off %s in %s (the version decision's target: %s), clearing %s (red on %s).\n", cp.plan.Dep.Name, cp.plan.Decision.Installed, strings.Join(cp.plan.Manifests(), ", "), cp.plan.Decision.Target, strings.Join(cve.IDs(cp.plan.Decision.Cleared), ", "), short(e.BaseSHA))
		},
		Section: func(e *Env, p *Plan, commit string) string {
			cp := cveOf(p)
			var b strings.Builder
			fmt.Fprintf(&b, "### What was reproduced\n\nThe harness found %s in %s on %s (%s): %s. ", markdown.Code(cp.plan.Dep.Name), markdown.Code(cp.plan.Dep.Manifest), markdown.Code(e.Base), short(e.BaseSHA), markdown.Code(cp.plan.Red.Detail))
			fmt.Fprintf(&b, "%s made the edit; the oracle after it read a fresh checkout of commit %s.\n\n", cp.editor, short(commit))
			b.WriteString(cp.plan.PRSection(cp.green))
			return b.String()
		},
	}
}

type cveType struct {
	src     cve.Source
	once    sync.Once
	dflt    cve.Source
	dfltErr error
}

// source is the bound source, or the default cache read offline.
func (t *cveType) source() (cve.Source, error) {
	if t.src != nil {
		return t.src, nil
	}
	t.once.Do(func() {
		dir, err := vulndata.DefaultCacheDir()
		if err != nil {
			t.dfltErr = err
			return
		}
		c := vulndata.NewClient(vulndata.NewCache(dir))
		c.Offline = true
		t.dflt = c
	})
	return t.dflt, t.dfltErr
}

// cvePlan is the cve type's Plan.Detail: the decision, and what the fix
// phase learnt on the way (who edited, the oracle's verdict after).
type cvePlan struct {
	plan   *cve.Plan
	editor string
	green  *cve.GreenResult
}

func cveOf(p *Plan) *cvePlan { return p.Detail.(*cvePlan) }

// cveReport is what the run report keeps of the plan.
type cveReport struct {
	Ecosystem string        `json:"ecosystem"`
	Package   string        `json:"package"`
	Manifest  string        `json:"manifest"`
	Lockfile  string        `json:"lockfile,omitempty"`
	Red       cve.RedResult `json:"red"`
	Decision  *cve.Decision `json:"decision,omitempty"`
	Files     []string      `json:"files"`
	Dep       manifest.Dep  `json:"dep"`
}

func (t *cveType) plan(ctx context.Context, e *Env, dir string, f *findings.Finding) (*Plan, error) {
	v, err := findings.VulnOf(f)
	if err != nil {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNotInManifest, Err: err}
	}
	src, err := t.source()
	if err != nil {
		return nil, fmt.Errorf("advisory data: %w", err)
	}
	// What the build resolves is asked of go in the sandbox, in the
	// agent's tree (still the base: P2 must leave it as it was).
	resolve := func(ctx context.Context, modDir, name string) (*cve.Resolved, error) {
		return goList(name, func(argv []string) (sandbox.Result, error) {
			return e.ExecIn(ctx, dir, argv, nil, e.Config.Suite.Timeout)
		}, modDir)
	}
	cp, err := (&cve.Type{Source: src, Resolve: resolve}).Prepare(ctx, dir, v)
	var nim *manifest.NotInManifestError
	var nse *cve.NoSafeError
	switch {
	case errors.As(err, &nim), errors.Is(err, vulndata.ErrUnknownEcosystem):
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNotInManifest, Err: err}
	case errors.As(err, &nse):
		return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonNoSafeVersion, Err: fmt.Errorf("%w: %s", err, nse.Decision.Rationale)}
	case errors.Is(err, cve.ErrUnbumpable):
		return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonUnbumpable, Err: err}
	case errors.Is(err, cve.ErrNoAdvisoryData):
		// No decision, no run: a version taken on trust is no fix.
		return nil, &StopError{Terminal: verdict.Halt, Reason: verdict.ReasonNoAdvisoryData, Err: err}
	case errors.Is(err, cve.ErrNotAffected):
		// Not an error here: the red oracle (P3) says so, in its words.
	case err != nil:
		return nil, err
	}
	dep := cp.Dep
	files := cvePlanFiles(cp)
	rep := cveReport{Ecosystem: string(cp.Eco), Package: dep.Name, Manifest: dep.Manifest, Lockfile: dep.Lockfile, Red: cp.Red, Decision: cp.Decision, Files: files, Dep: dep}
	target := "(none decided)"
	if cp.Decision != nil && cp.Decision.Target != "" {
		target = cp.Decision.Target
	}
	regen := "(none)"
	if r, err := manifest.AgentRegen(dep, target); err == nil && r != nil {
		regen = strings.Join(r.Argv, " ") + " (in " + r.Dir + ")"
	}
	return &Plan{
		Summary:    fmt.Sprintf("%s %s in %s: %s", cp.Eco, dep.Name, dep.Manifest, cp.Red.Detail),
		Files:      files,
		Dependency: &Dependency{Ecosystem: string(cp.Eco), Package: dep.Name, Manifest: dep.Manifest},
		Values: fmt.Sprintf("ecosystem: %s\npackage: %s\nmanifest: %s\ndeclared: %s\ninstalled: %s\ntarget: %s\nlockfile regeneration: %s",
			cp.Eco, dep.Name, dep.Manifest, dep.Spec, cp.Red.Version, target, regen),
		Report: rep,
		Detail: &cvePlan{plan: cp, editor: "The harness's built-in bumper"},
	}, nil
}

// cvePlanFiles are the files a cve plan may change, sorted: every
// declaration's manifest the bump moves, its lockfile, and go.sum beside
// a go.mod.
func cvePlanFiles(cp *cve.Plan) []string {
	var files []string
	for _, d := range append([]manifest.Dep{cp.Dep}, cp.Bump...) {
		files = append(files, d.Manifest)
		if d.Lockfile != "" {
			files = append(files, d.Lockfile)
		}
		if path.Base(d.Manifest) == "go.mod" {
			files = append(files, path.Join(path.Dir(d.Manifest), "go.sum"))
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// replay is the plan a cve commit's claim stands for, decided again as
// the run decided it: cve.Prepare on a fresh checkout of the base, the
// version the build resolves asked of go in the sandbox on another, the
// advisories from the source the type is bound to. Red and green then
// judge exactly as in a run. No advisory data is an error (verify could
// not look), never a pass.
func (t *cveType) replay(ctx context.Context, e *Env, c Claimed) (*Plan, error) {
	d := c.Dependency
	if d == nil {
		return nil, fmt.Errorf("%w: a cve fix's claim names no dependency (no Fixrail-Package trailer)", ErrClaimDiffers)
	}
	src, err := t.source()
	if err != nil {
		return nil, fmt.Errorf("advisory data: %w", err)
	}
	resolve := func(ctx context.Context, modDir, name string) (*cve.Resolved, error) {
		return goList(name, func(argv []string) (sandbox.Result, error) {
			return e.Exec(ctx, "cve-resolve-base", e.BaseSHA, argv, e.Config.Suite.Timeout)
		}, modDir)
	}
	v := &findings.Vuln{ID: "replay", Ecosystem: d.Ecosystem, Package: d.Package, Manifest: d.Manifest}
	var cp *cve.Plan
	var perr error
	if err := e.Read(ctx, "cve-red", e.BaseSHA, func(dir string) error {
		cp, perr = (&cve.Type{Source: src, Resolve: resolve}).Prepare(ctx, dir, v)
		return nil
	}); err != nil {
		return nil, err
	}
	var nim *manifest.NotInManifestError
	var nse *cve.NoSafeError
	switch {
	case errors.Is(perr, cve.ErrNoAdvisoryData):
		return nil, perr
	case errors.As(perr, &nim), errors.Is(perr, vulndata.ErrUnknownEcosystem), errors.Is(perr, cve.ErrUnbumpable):
		return nil, fmt.Errorf("%w: on the base: %w", ErrClaimDiffers, perr)
	case errors.Is(perr, cve.ErrNotAffected), errors.As(perr, &nse):
		// Red says the first in its words; with no safe version left, the
		// commit's version is judged all the same (green reads OSV).
	case perr != nil:
		return nil, perr
	}
	// A run changes only the files its plan names (diff-within-plan), and
	// the plan is the harness's, decided again here: a claimed file
	// outside it (a source file beside the bump) is no cve fix of a run's.
	planned := cvePlanFiles(cp)
	for _, f := range c.Files {
		if !slices.Contains(planned, f) {
			return nil, fmt.Errorf("%w: the claim's file %s is not one the cve plan on the base changes (%s)", ErrClaimDiffers, f, strings.Join(planned, ", "))
		}
	}
	return &Plan{Files: c.Files, Dependency: d, Detail: &cvePlan{plan: cp, editor: "The harness's built-in bumper"}}, nil
}

// edit is the built-in bump and its regeneration, in the sandbox.
func (t *cveType) edit(ctx context.Context, e *Env, p *Plan, dir string) (*Result, error) {
	cp := cveOf(p)
	src, err := t.source()
	if err != nil {
		return nil, err
	}
	ed, err := (&cve.Type{Source: src}).Edit(dir, cp.plan)
	var ue *manifest.UnbumpableError
	switch {
	case errors.As(err, &ue):
		// Some declarations bumped and some not would leave the build on
		// the old version: nothing is written, a human decides.
		return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonUnbumpable, Err: err}
	case errors.Is(err, manifest.ErrNoBuiltIn):
		cp.editor = "The agent"
		return nil, fmt.Errorf("%w: %v", ErrAgentEdit, err)
	case err != nil:
		return nil, err
	}
	changed := slices.Clone(ed.Files)
	registry := npmEnv(e.Config, "npm_config_registry", "")
	for _, rg := range ed.Regens {
		env, fill := rg.Env, rg.Fill
		npm := slices.Equal(rg.Argv, manifest.NPMRegenArgv)
		var lockBefore []byte
		var registries []string // the registries a regenerated lockfile may name
		if npm {
			// The repository's .npmrc must not choose where the lockfile
			// resolves from: the environment pins what it can override,
			// the rest is refused before npm runs.
			scopes, err := manifest.CheckNPMRC(dir, rg.Dir)
			if err != nil {
				return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonLockfileRegen, Err: fmt.Errorf("%s not run: %w", strings.Join(rg.Argv, " "), err)}
			}
			env = append(slices.Clone(env), manifest.NPMRegistryEnv(registry))
			if fill != nil {
				fill = append(slices.Clone(fill), "--registry="+manifest.NPMRegistryURL(registry))
			}
			// A scope the repository routes to a registry of its own
			// resolves from the operator's registry for that scope, or the
			// operator's registry: what stays in the lockfile keeps the
			// URL it had, and anything new comes from a registry the
			// operator named.
			registries = append(registries, registry)
			for _, sc := range scopes {
				r := npmEnv(e.Config, "npm_config_"+sc+":registry", registry)
				env = append(env, manifest.NPMScopeEnv(sc, r))
				registries = append(registries, r)
				if fill != nil && r != registry && strings.HasPrefix(cp.plan.Dep.Name, sc+"/") {
					fill = append(fill, "--"+sc+":registry="+manifest.NPMRegistryURL(r))
				}
			}
			if lockBefore, err = readLock(dir, rg); err != nil {
				return nil, err
			}
		}
		res, err := e.ExecIn(ctx, path.Join(dir, rg.Dir), rg.Argv, env, e.Config.Suite.Timeout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Join(rg.Argv, " "), err)
		}
		if !res.Success() {
			// The bump is made and cannot be finished: ESCALATE with the
			// tool's words and, where one exists, the command that fills
			// the cache the regeneration read offline.
			msg := fmt.Sprintf("%s failed (%s): %s", strings.Join(rg.Argv, " "), res.Describe(), regenTail(res))
			switch {
			case fill != nil && npm:
				msg += fmt.Sprintf("\nThe regeneration reads only the local cache; if it lacks %s %s, run `%s` where the registry is reachable, in a directory outside any project (your home directory: in a project, its .npmrc could choose the cache npm fills), then run fixrail again.", cp.plan.Dep.Name, cp.plan.Decision.Target, strings.Join(fill, " "))
			case fill != nil:
				msg += fmt.Sprintf("\nThe regeneration reads only the local cache; if it lacks %s %s, run `%s` where the registry is reachable, then run fixrail again.", cp.plan.Dep.Name, cp.plan.Decision.Target, strings.Join(fill, " "))
			}
			return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonLockfileRegen, Err: errors.New(msg)}
		}
		if npm {
			// What npm wrote must come from the registry meant, whatever
			// told it otherwise (a cache entry's tarball URL, a setting
			// missed above).
			after, err := readLock(dir, rg)
			if err != nil {
				return nil, err
			}
			off, err := manifest.NPMResolvedOff(lockBefore, after, registries...)
			if err != nil {
				return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonLockfileRegen, Err: err}
			}
			if len(off) > 0 {
				urls := make([]string, len(registries))
				for i, r := range registries {
					urls[i] = manifest.NPMRegistryURL(r)
				}
				slices.Sort(urls)
				return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonLockfileRegen, Err: fmt.Errorf("%s resolved outside the registry %s: %s", strings.Join(rg.Argv, " "), strings.Join(slices.Compact(urls), ", "), strings.Join(off, "; "))}
			}
		}
		changed = append(changed, rg.Writes...)
	}
	slices.Sort(changed)
	return &Result{
		Summary:      fmt.Sprintf("bumped %s to %s in %s (%d declaration(s))", cp.plan.Dep.Name, cp.plan.Decision.Target, strings.Join(cp.plan.Manifests(), ", "), len(cp.plan.Bump)),
		FilesChanged: slices.Compact(changed),
	}, nil
}

// npmEnv is the value of the npm setting key (npm_config_registry, or a
// scope's npm_config_@corp:registry) in the build environment, in any
// case as npm reads it, which only extra_env passes; def when it names
// none.
func npmEnv(cfg *config.Config, key, def string) string {
	env, err := sandbox.Env(sandbox.Build, lookupEnv, cfg.ExtraEnv)
	if err != nil {
		return def
	}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); strings.EqualFold(k, key) && v != "" {
			return v
		}
	}
	return def
}

// NPMRegistries are the npm registries the operator named, as
// manifest.NPMRegistryURL writes them, sorted: npm_config_registry (else
// the public registry) and each scope's npm_config_@SCOPE:registry that
// the build environment passes (extra_env). A lockfile a fix changes
// resolves what it adds from these alone (gates.LockfileSources).
func NPMRegistries(cfg *config.Config) []string {
	out := []string{manifest.NPMRegistryURL(npmEnv(cfg, "npm_config_registry", ""))}
	env, err := sandbox.Env(sandbox.Build, lookupEnv, cfg.ExtraEnv)
	if err == nil {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			lk := strings.ToLower(k)
			if v != "" && strings.HasPrefix(lk, "npm_config_@") && strings.HasSuffix(lk, ":registry") {
				out = append(out, manifest.NPMRegistryURL(v))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PythonIndexes are the Python package indexes the operator named through
// extra_env, as uv reads them: the default index (UV_DEFAULT_INDEX,
// UV_INDEX_URL or PIP_INDEX_URL; else PyPI's) and the others (UV_INDEX,
// whose entries may be NAME=URL, UV_EXTRA_INDEX_URL, PIP_EXTRA_INDEX_URL,
// each a space-separated list). A uv.lock a fix changes resolves what it
// adds from these alone (gates.LockfileSources).
func PythonIndexes(cfg *config.Config) []string {
	env, err := sandbox.Env(sandbox.Build, lookupEnv, cfg.ExtraEnv)
	if err != nil {
		return []string{manifest.PyPIIndex}
	}
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); v != "" {
			vals[strings.ToUpper(k)] = v
		}
	}
	var out []string
	for _, k := range []string{"UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"} {
		if v := vals[k]; v != "" {
			out = append(out, v)
			break
		}
	}
	if len(out) == 0 {
		out = append(out, manifest.PyPIIndex)
	}
	for _, k := range []string{"UV_INDEX", "UV_EXTRA_INDEX_URL", "PIP_EXTRA_INDEX_URL"} {
		for _, f := range strings.Fields(vals[k]) {
			if name, u, ok := strings.Cut(f, "="); ok && !strings.Contains(name, ":") {
				f = u // UV_INDEX's NAME=URL
			}
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lookupEnv is the operator's environment; a var so that a test can
// replace it.
var lookupEnv = os.LookupEnv

// readLock is the npm regeneration's lockfile in dir (the last of Writes,
// as npmRegen lists them), nil when there is none yet.
func readLock(dir string, rg *manifest.Regen) ([]byte, error) {
	lock := rg.Writes[len(rg.Writes)-1]
	full, err := pathguard.ResolveWithin(dir, lock)
	if err != nil {
		return nil, err
	}
	data, err := pathguard.ReadRegular(full, manifest.MaxLockfile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// regenTail is the regeneration's output tail without npm's pointer to
// its debug log, which lives in the command's scratch and is gone.
func regenTail(res sandbox.Result) string {
	lines := strings.Split(gates.Tail(res), "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.Contains(l, "A complete log of this run can be found in") })
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// cveFix briefs the agent for an edit the bumper does not make.
func cveFix(b Brief, p *Plan) string {
	var s strings.Builder
	s.WriteString("The harness found the package in the repository's manifest and judged its version affected by a known advisory; the decided target and the one lockfile command are in the plan below. Now:\n")
	s.WriteString("- change the planned manifest so it requires the target version (or, with no target decided, the lowest release that leaves the alerted version), and nothing else;\n")
	s.WriteString("- if the plan names a lockfile regeneration, run exactly that command in that directory: it is the only command you may run;\n")
	fmt.Fprintf(&s, "- write the result to %s (also in $FIXRAIL_RESULT): {\"summary\": \"…\", \"files_changed\": [every file you changed]}.\n", b.ResultPath)
	return s.String()
}

// cveRetry names, for follow-up n after the PR's checks refused the
// target, the decision's n-th safe candidate above it: a second attempt
// advances through the candidates instead of guessing. The version string
// is the registry's, so it goes in the fenced values; the words are ours.
func cveRetry(_ *Env, p *Plan, n int) (words, values string) {
	cp := cveOf(p)
	d := cp.plan.Decision
	if d == nil || n < 1 || n > len(d.Next) {
		return "The version decision has no further safe candidate above its target: change the manifest only if a finding below shows how, without a version the decision did not name.", "next safe candidate: (none)"
	}
	return "The version decision's next safe candidate above its target is in the values below: move the manifest (and, with the planned command, the lockfile) to exactly that version, and change nothing else.",
		fmt.Sprintf("package: %s\ntarget the checks refused: %s\nnext safe candidate: %s", cp.plan.Dep.Name, d.Target, d.Next[n-1])
}

// cveRed is the oracle before the fix, as Prepare judged it on the base's
// manifests: the repository's version is affected. (With no advisory data
// Prepare stopped the run: nothing is taken on trust.)
func cveRed(_ *Env, p *Plan) *gates.Gate {
	cp := cveOf(p)
	return &gates.Gate{
		Name:   "cve-red",
		Doc:    "the version the repository's manifest or lockfile holds is affected by a known advisory",
		Reason: verdict.ReasonGreenOnBase,
		Fails:  verdict.NotRepro,
		Run: func(context.Context, *gates.Change) (gates.Verdict, error) {
			if !cp.plan.Red.Red {
				return gates.Verdict{Detail: cp.plan.Red.Detail}, nil
			}
			return gates.Verdict{Pass: true, Detail: cp.plan.Red.Detail}, nil
		},
	}
}

// green is cve.Verify on a fresh checkout of the candidate.
func (t *cveType) green(e *Env, p *Plan) *gates.Gate {
	cp := cveOf(p)
	return &gates.Gate{
		Name:   "cve-green",
		Doc:    "the manifest still declares the package, off the alerted version, on one no known advisory affects, and the lockfile agrees",
		Reason: verdict.ReasonOracleStillRed,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			src, err := t.source()
			if err != nil {
				return gates.Verdict{}, err
			}
			// go list runs on its own fresh checkout of the candidate, in
			// the sandbox; the files are read from another.
			resolve := func(ctx context.Context, modDir, name string) (*cve.Resolved, error) {
				return goList(name, func(argv []string) (sandbox.Result, error) {
					return e.Exec(ctx, "cve-resolve", c.Commit, argv, e.Config.Suite.Timeout)
				}, modDir)
			}
			var g cve.GreenResult
			if err := e.Read(ctx, "cve-green", c.Commit, func(dir string) error {
				g = (&cve.Type{Source: src, Resolve: resolve}).Verify(ctx, dir, cp.plan)
				return nil
			}); err != nil {
				return gates.Verdict{}, fmt.Errorf("cve-green: %w", err)
			}
			cp.green = &g
			var detail []string
			for _, ch := range g.Checks {
				mark := "ok"
				if !ch.OK {
					mark = "FAIL"
				}
				detail = append(detail, ch.Name+" "+mark+": "+ch.Detail)
			}
			d := strings.Join(detail, "; ")
			switch g.Verdict {
			case cve.Green:
				return gates.Verdict{Pass: true, Detail: d}, nil
			case cve.NoData:
				// The advisory data went away between the plan and the
				// judgement: the applied version is unjudged, so nothing
				// ships.
				return gates.Verdict{Terminal: verdict.Halt, Reason: verdict.ReasonNoAdvisoryData, Detail: d}, nil
			}
			return gates.Verdict{Detail: d}, nil
		},
	}
}

// goList asks go which version of name the module in modDir builds with.
func goList(name string, run func(argv []string) (sandbox.Result, error), modDir string) (*cve.Resolved, error) {
	argv := cve.GoListArgv(modDir, name)
	res, err := run(argv)
	if err != nil {
		return nil, err
	}
	if !res.Success() {
		return nil, fmt.Errorf("%s: %s: %s", strings.Join(argv, " "), res.Describe(), strings.TrimSpace(res.Tail(10)))
	}
	return cve.ParseGoList([]byte(res.Stdout), name)
}
