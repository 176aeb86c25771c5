package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/risk"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// reproduce is P3: the harness itself runs the fix type's red oracle on a
// fresh checkout of the base plus exactly the P2 evidence — it must be red
// — and then checks the plan against the deny list (Stage A) before any
// source may be written. The checkout is discarded afterwards: nothing run
// there reaches the agent's tree or the commit.
func (r *run) reproduce(ctx context.Context, inv *investigation) *Outcome {
	// A high-risk finding gets its read-only investigation, and then a
	// human: the plan and the evidence are in the report, nothing is run.
	if r.risk.High() {
		return stop(Escalate, ReasonHighRisk, "high risk at intake: "+r.risk.Reason())
	}
	red := &gates.Change{Commit: inv.redTree, Evidence: inv.evidence, Planned: inv.plan.Files, Policy: r.pol}
	read := map[string]gitx.Entry{}
	return r.checks(ctx, "P3", []*gates.Gate{r.typ.Red(r.env, inv.plan), r.stageAGate(inv, read), r.rootCauseGate(inv, read), r.pathLockGate(inv)}, red)
}

// stageAGate matches the plan — the evidence and the planned files, and
// the import lines they hold in the red tree — against the deny list. It
// is Stage B's check over a different path list: one sensitive path
// escalates the whole fix, and a benign half is never committed on its
// own. The files are read from the red tree, never from a directory an
// agent wrote in.
// What it reads it keeps in read, for the root-cause re-score: a planned
// file is never evidence, so the red tree holds it as the base does.
func (r *run) stageAGate(inv *investigation, read map[string]gitx.Entry) *gates.Gate {
	return &gates.Gate{
		Name:   "stage-a",
		Doc:    "no planned path, and no import line in a planned file, is sensitive or unknown",
		Reason: ReasonSensitivePath,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			paths := append(slices.Clone(inv.plan.Evidence), inv.plan.Files...)
			return gates.SensitivePaths(r.pol, paths, func(p string) (gitx.Entry, error) {
				e, err := r.s.Repo.TreeEntry(ctx, inv.redTree, p, maxEvidenceBytes)
				if err != nil {
					return e, fmt.Errorf("stage-a: %w", err)
				}
				read[p] = e
				return e, nil
			})
		},
	}
}

// rootCauseGate re-scores the risk from the plan: the later score wins,
// and it can only go up.
func (r *run) rootCauseGate(inv *investigation, read map[string]gitx.Entry) *gates.Gate {
	return &gates.Gate{
		Name:   "risk",
		Doc:    "the root cause the plan names does not raise the finding's risk to high",
		Reason: ReasonHighRisk,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			var planned []risk.Planned
			for _, f := range inv.plan.Files {
				e, ok := read[f]
				if !ok {
					return gates.Verdict{}, fmt.Errorf("risk: %s was not read by stage-a", f)
				}
				planned = append(planned, risk.Planned{Path: f, Content: e.Data})
			}
			r.risk = r.rules.RootCause(r.risk, inv.plan.Summary, r.typ.Implied, planned)
			r.rep.Risk = &r.risk
			if r.risk.High() {
				return gates.Verdict{Detail: "root cause: " + r.risk.Reason()}, nil
			}
			return pass("root cause: " + r.risk.Level.String())
		},
	}
}

func (r *run) sandboxMode() sandbox.Mode {
	mode, _ := sandbox.ParseMode(r.cfg.Sandbox) // validated with the config
	return mode
}

// execFresh runs a harness-owned command (the oracle, the suite) in a fresh
// checkout of rev made for this one run and retired after it, so the
// command judges exactly rev and nothing it leaves behind is seen again.
func (r *run) execFresh(ctx context.Context, label, rev string, argv []string, timeout time.Duration) (res sandbox.Result, err error) {
	err = r.readFresh(ctx, label, rev, func(dir string) error {
		res, err = r.exec(ctx, dir, argv, timeout)
		return err
	})
	return res, err
}

// readFresh gives fn a fresh checkout of rev, retired after it.
func (r *run) readFresh(ctx context.Context, label, rev string, fn func(dir string) error) error {
	r.checkouts++
	name := fmt.Sprintf("%s-%d", label, r.checkouts)
	// The directory's name is random and of one form for every label:
	// what runs in it sees its path, and a test that could tell the red
	// checkout from the green one by name would flip without the fix.
	dir, err := os.MkdirTemp(r.dir, "tree-")
	if err != nil {
		return fmt.Errorf("the checkout %s: %w", name, err)
	}
	endStep := r.step("the checkout " + name)
	t, err := r.s.Repo.Checkout(ctx, dir, r.indexPath(name), rev)
	endStep()
	if err != nil {
		_ = os.Remove(dir)
		return err
	}
	// Afterwards the checkout is moved out of the way at once, so nothing
	// can run in it or read it again by its path, and deleted with the run
	// directory: deleting a large tree between two checkouts makes the next
	// one several times slower on a filesystem that discards freed blocks.
	defer func() {
		if err := os.Rename(t.Dir, filepath.Join(r.dir, "used-"+filepath.Base(t.Dir))); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, "retire "+name+": "+err.Error())
			if err := removeTree(t.Dir); err != nil {
				r.rep.Warnings = append(r.rep.Warnings, "remove "+name+": "+err.Error())
			}
		}
		_ = os.Remove(r.indexPath(name))
	}()
	return fn(t.Dir)
}

// execIn runs a fix type's harness-chosen command (a lockfile
// regeneration) in the agent's tree, with env added to the build
// environment; dir must be inside that tree.
func (r *run) execIn(ctx context.Context, dir string, argv, env []string, timeout time.Duration) (sandbox.Result, error) {
	if rel, err := filepath.Rel(r.wt.Dir, dir); err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return sandbox.Result{}, fmt.Errorf("%s is not in the agent's tree", dir)
	}
	return r.execEnv(ctx, dir, argv, env, timeout, nil, nil)
}

// exec runs a harness-owned command in dir: the build environment (no
// credentials), a private TMPDIR, and bubblewrap where the config asks for
// it. It holds the clone's gate shared while repository code runs and
// checks the git config and the clone's state afterwards.
func (r *run) exec(ctx context.Context, dir string, argv []string, timeout time.Duration) (sandbox.Result, error) {
	return r.execEnv(ctx, dir, argv, nil, timeout, nil, nil)
}

// scanFresh runs a harness-chosen command (a configured scanner) in a
// fresh checkout of rev like execFresh, with one more writable directory,
// out: fresh, empty and outside the checkout, so what the command writes
// there (its SARIF log) cannot be a file the tree planted. ro (its rule
// packs) is bound read-only. read sees both before they are retired.
func (r *run) scanFresh(ctx context.Context, label, rev string, argv func(dir, out string) []string, ro []string, timeout time.Duration, read func(dir, out string) error) (res sandbox.Result, err error) {
	err = r.readFresh(ctx, label, rev, func(dir string) error {
		out, err := os.MkdirTemp(r.dir, label+"-out-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(out)
		if res, err = r.execEnv(ctx, dir, argv(dir, out), nil, timeout, []string{out}, ro); err != nil {
			return err
		}
		return read(dir, out)
	})
	return res, err
}

func (r *run) execEnv(ctx context.Context, dir string, argv, extra []string, timeout time.Duration, rw, ro []string) (sandbox.Result, error) {
	tc, err := r.toolchain(ctx, dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, r.cfg.ExtraEnv)
	if err != nil {
		return sandbox.Result{}, err
	}
	// A fresh TMPDIR per command: the build caches live in it (Toolchain.Env),
	// so nothing one test run writes is seen by the next.
	tmp, cleanup, err := sandbox.TempDir(r.dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	defer cleanup()
	if env, err = tc.Env(sandbox.WithTempDir(env, tmp), tmp); err != nil {
		return sandbox.Result{}, err
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env = sandbox.With(env, k, v)
	}
	mode := r.sandboxMode()
	release := r.s.Repo.Shared()
	endStep := r.step(commandStep(argv))
	defer endStep()
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:    argv,
		Dir:     dir,
		Env:     env,
		Timeout: timeout,
		Sandbox: &sandbox.Spec{Mode: mode, RW: append([]string{dir}, rw...), RO: append(tc.RO(), ro...), Tmp: tmp, Hide: r.hide(), GoCache: r.goStd},
	})
	endStep()
	release()
	if err != nil {
		return res, err
	}
	if !res.Sandboxed && mode != sandbox.Off {
		r.unsandboxed = true
	}
	if err := r.s.Repo.CheckDrift(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// toolchain finds, once per run, the dependency caches tests see read-only
// (the Go module cache, cargo's registry, …, and sandbox.ro_paths), and
// records them in the report. npm is asked only if dir, the first checkout
// a command runs in, holds a package.json.
func (r *run) toolchain(ctx context.Context, dir string) (sandbox.Toolchain, error) {
	if r.tc != nil {
		return *r.tc, nil
	}
	tc, err := sandbox.ToolchainsIn(ctx, os.LookupEnv, r.cfg.SandboxROPaths, dir)
	if err != nil {
		return sandbox.Toolchain{}, err
	}
	r.tc = &tc
	r.rep.Toolchains = tc.Describe()
	if line := r.goStdCache(ctx, tc, dir); line != "" {
		r.rep.Toolchains = append(r.rep.Toolchains, line)
	}
	for _, d := range r.rep.Toolchains {
		r.note("toolchain", d)
	}
	return tc, nil
}

// goStdCache finds, or builds once for every later run, the standard
// library's build cache (sandbox.EnsureGoStdCache) when go is on PATH, dir
// holds a Go module and the commands run sandboxed: only there can a
// command be given the cache without being able to write it. It returns
// the report's line about it, "" when Go is not in play. A cache that
// cannot be built costs time, not trust: the commands then compile the
// standard library each in its own cache, as they did before, and the
// line says why.
func (r *run) goStdCache(ctx context.Context, tc sandbox.Toolchain, dir string) string {
	if !tc.HasGo() || !sandbox.HoldsGoModule(dir) {
		return ""
	}
	if r.sandboxMode() == sandbox.Off {
		return "go build cache: none (sandbox: off): each command compiles the standard library in its own cache"
	}
	if _, ok := sandbox.Detect(); !ok {
		return "go build cache: none (no usable sandbox): each command compiles the standard library in its own cache"
	}
	root, err := sandbox.GoStdCacheRoot()
	if err != nil {
		return "go build cache: none: " + err.Error()
	}
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, r.cfg.ExtraEnv)
	if err != nil {
		return "go build cache: none: " + err.Error()
	}
	c, err := sandbox.EnsureGoStdCache(ctx, root, env, r.hide(), func(dir string) {
		r.note("toolchain", "building the Go standard library's build cache in "+dir+" (once per Go version and build setting; later runs reuse it)")
	})
	if err != nil {
		return "go build cache: none: " + err.Error() + " (each command compiles the standard library in its own cache)"
	}
	r.goStd = c.Dir
	how := "reused"
	if c.Built {
		how = "built by this run in " + c.Took.Round(time.Second).String()
	}
	return fmt.Sprintf("go build cache: %s (the standard library, %s), read-only, linked into each command's own GOCACHE", c.Dir, how)
}
