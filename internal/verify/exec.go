package verify

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// executor runs the repository's commands as a run does: each in a fresh
// checkout of exactly the tree it judges, made for it and deleted after
// it, with the build environment (no credentials), a private TMPDIR, and
// bubblewrap as the base's sandbox setting says, hiding the clone, its
// git directory and verify's own directory.
type executor struct {
	repo        *gitx.Repo
	cfg         *config.Config
	lookup      func(string) (string, bool)
	temp        string // where the disposable directory was made
	dir         string // verify's disposable directory
	n           int
	tc          *sandbox.Toolchain
	unsandboxed bool
	progress    io.Writer
	// std is the standard library's shared read-only build cache, as a
	// run links it (nil: not looked for yet; "": none).
	std *string
}

func newExecutor(in Input, cfg *config.Config) (*executor, error) {
	temp := in.TempDir
	if temp == "" {
		temp = os.TempDir()
	}
	dir, err := pathguard.NewDisposable(temp, "fixrail verify's fresh checkouts\n")
	if err != nil {
		return nil, err
	}
	return &executor{repo: in.Repo, cfg: cfg, lookup: in.Lookup, temp: temp, dir: dir, progress: in.Progress}, nil
}

func (x *executor) close() { _ = pathguard.RemoveDisposable(x.dir) }

// index is a fresh private index path for a tree built under name.
func (x *executor) index(name string) string {
	x.n++
	return filepath.Join(x.dir, fmt.Sprintf("%s-%d.index", name, x.n))
}

func (x *executor) hide() sandbox.Hidden {
	return sandbox.Hidden{
		Repo:   x.repo.Top(),
		GitDir: x.repo.CommonDir(),
		State:  filepath.Join(x.repo.Top(), ".fixrail"),
		RunDir: x.dir,
		Temp:   x.temp,
	}
}

// read gives fn a fresh checkout of rev (a commit or a tree), removed
// after it. The checkout's path is random and the same in form for every
// label: what runs in it sees that path (its working directory, its
// mounts), and a test that could tell the red checkout from the green one
// by its name would flip without the fix. label names it in errors only.
func (x *executor) read(ctx context.Context, label, rev string, fn func(dir string) error) error {
	dir, err := os.MkdirTemp(x.dir, "tree-")
	if err != nil {
		return fmt.Errorf("%s checkout: %w", label, err)
	}
	defer os.RemoveAll(dir)
	index := dir + ".index"
	defer os.Remove(index)
	t, err := x.repo.Checkout(ctx, dir, index, rev)
	if err != nil {
		return fmt.Errorf("%s checkout: %w", label, err)
	}
	return fn(t.Dir)
}

// exec runs argv in a fresh checkout of rev.
func (x *executor) exec(ctx context.Context, label, rev string, argv []string, timeout time.Duration) (res sandbox.Result, err error) {
	err = x.read(ctx, label, rev, func(dir string) error {
		res, err = x.run(ctx, dir, argv, timeout)
		return err
	})
	return res, err
}

// scan runs a scanner in a fresh checkout of rev, as a run's Env.Scan
// does: a fresh empty output directory outside the checkout writable too,
// ro (its rule packs) read-only; read sees both before they go.
func (x *executor) scan(ctx context.Context, label, rev string, argv func(dir, out string) []string, ro []string, timeout time.Duration, read func(dir, out string) error) (res sandbox.Result, err error) {
	err = x.read(ctx, label, rev, func(dir string) error {
		out, err := os.MkdirTemp(x.dir, label+"-out-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(out)
		if res, err = x.runWith(ctx, dir, argv(dir, out), timeout, []string{out}, ro); err != nil {
			return err
		}
		return read(dir, out)
	})
	return res, err
}

func (x *executor) run(ctx context.Context, dir string, argv []string, timeout time.Duration) (sandbox.Result, error) {
	return x.runWith(ctx, dir, argv, timeout, nil, nil)
}

func (x *executor) runWith(ctx context.Context, dir string, argv []string, timeout time.Duration, rw, ro []string) (sandbox.Result, error) {
	if x.tc == nil {
		tc, err := sandbox.ToolchainsIn(ctx, x.lookup, x.cfg.SandboxROPaths, dir)
		if err != nil {
			return sandbox.Result{}, err
		}
		x.tc = &tc
	}
	env, err := sandbox.Env(sandbox.Build, x.lookup, x.cfg.ExtraEnv)
	if err != nil {
		return sandbox.Result{}, err
	}
	tmp, cleanup, err := sandbox.TempDir(x.dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	defer cleanup()
	if env, err = x.tc.Env(sandbox.WithTempDir(env, tmp), tmp); err != nil {
		return sandbox.Result{}, err
	}
	mode, _ := sandbox.ParseMode(x.cfg.Sandbox) // validated with the config
	std := x.goStd(ctx, dir, mode)
	release := x.repo.Shared()
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:    argv,
		Dir:     dir,
		Env:     env,
		Timeout: timeout,
		Sandbox: &sandbox.Spec{Mode: mode, RW: append([]string{dir}, rw...), RO: slices.Concat(x.tc.RO(), ro), Tmp: tmp, Hide: x.hide(), GoCache: std},
	})
	release()
	if err != nil {
		return res, err
	}
	if !res.Sandboxed && mode != sandbox.Off {
		x.unsandboxed = true
	}
	// What ran may have tried to change the clone's git config or state.
	return res, x.repo.CheckDrift(ctx)
}

// goStd finds, or builds once, the standard library's build cache a run
// links read-only into each command's GOCACHE (sandbox.EnsureGoStdCache),
// so a Go suite in every fresh checkout does not compile the standard
// library again. Only sandboxed commands get it (only there is it
// read-only); none is a cost in time, never in trust.
func (x *executor) goStd(ctx context.Context, dir string, mode sandbox.Mode) string {
	if x.std != nil {
		return *x.std
	}
	x.std = new(string)
	if _, ok := sandbox.Detect(); !ok || mode == sandbox.Off || !x.tc.HasGo() || !sandbox.HoldsGoModule(dir) {
		return ""
	}
	root, err := sandbox.GoStdCacheRoot()
	if err != nil {
		return ""
	}
	env, err := sandbox.Env(sandbox.Build, x.lookup, x.cfg.ExtraEnv)
	if err != nil {
		return ""
	}
	c, err := sandbox.EnsureGoStdCache(ctx, root, env, x.hide(), func(d string) {
		fmt.Fprintf(x.progress, "verify: building the Go standard library's build cache in %s (once; later runs reuse it)\n", d)
	})
	if err != nil {
		fmt.Fprintf(x.progress, "verify: no shared Go build cache (%v): each command compiles the standard library\n", err)
		return ""
	}
	*x.std = c.Dir
	return c.Dir
}
