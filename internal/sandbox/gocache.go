package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The standard library's build cache.
//
// Every sandboxed Go command gets its own empty GOCACHE (Toolchain.Env), so
// each one used to compile the parts of the standard library it needs
// before it compiled a line of the repository: on a loaded 2-core machine,
// most of a minute per command and three or four times per run, and then
// vetted it (go test vets with the facts of every package imported). The
// cache built here holds the standard library only, compiled and vetted by
// the toolchain with no repository file in sight, once per Go version and
// build setting.
// A sandboxed command sees it read-only and gets, in its own GOCACHE, a
// link to each of its files (seedGoCache): the go command reads through
// the links and writes new entries beside them, in the command's throwaway
// TMPDIR. A write through a link fails (the cache is a read-only mount),
// and whatever a command puts in its GOCACHE is gone with its TMPDIR.
//
// An unsandboxed command (sandbox: off, or auto without bubblewrap) never
// gets the links: outside the sandbox nothing stops a write through them.

// goStdTargets is what the cache holds; a variable so that a test can
// build a small part of the standard library instead of all of it.
var goStdTargets = []string{"std"}

// goStdTimeout bounds building the cache: `go build std` took 231 s of wall
// clock (48 s CPU) on the loaded 2-core machine this was written on.
const goStdTimeout = 20 * time.Minute

// goStdKeyVars are the go env settings that change what the standard
// library compiles to. The go command keys every entry on all of its
// inputs anyway (a stale entry is a miss, never a wrong result): this key
// only keeps apart caches that would not be hit.
var goStdKeyVars = []string{
	"GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOEXPERIMENT", "GOFIPS140",
	"GOAMD64", "GO386", "GOARM", "GOARM64", "GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM",
	"CGO_ENABLED", "CC", "CXX", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS",
	"GOFLAGS",
}

// goStdFlags are the GOFLAGS entries that change how the standard library
// compiles; the cache is built with these and no others, so that its keys
// match the commands' while no module, exec or tool flag (-modfile,
// -toolexec, -overlay, -exec) takes part in building it.
var goStdFlags = []string{"-trimpath", "-race", "-msan", "-asan", "-gcflags", "-asmflags", "-tags", "-installsuffix"}

// GoStdCache is the standard library's build cache for one build setting.
type GoStdCache struct {
	Root string // where every setting's cache lives: GoStdCacheRoot
	Key  string // the Go version, GOOS_GOARCH and a hash of the settings
	// Dir is the cache (Root/Key) when it is built, else "". Nothing
	// writes in it after it is renamed into place.
	Dir   string
	Built bool          // this call built it
	Took  time.Duration // how long building it took, when Built
}

// GoStdCacheRoot is $XDG_CACHE_HOME/fixrail/gocache (os.UserCacheDir).
func GoStdCacheRoot() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("go build cache: %w", err)
	}
	return filepath.Join(d, "fixrail", "gocache"), nil
}

// goStdEnv is env as the cache is built with and keyed on: GOFLAGS cut to
// goStdFlags, no go env file (sandboxed commands have an empty HOME, so
// they read none either), no toolchain switch and no proxy.
func goStdEnv(env []string) []string {
	var keep []string
	for _, f := range strings.Fields(lookupEnv(env, "GOFLAGS")) {
		name, _, _ := strings.Cut(f, "=")
		if slices.Contains(goStdFlags, "-"+strings.TrimLeft(name, "-")) {
			keep = append(keep, f)
		}
	}
	env = With(env, "GOFLAGS", strings.Join(keep, " "))
	env = With(env, "GOENV", "off")
	env = With(env, "GOTOOLCHAIN", "local")
	return With(env, "GOPROXY", "off")
}

// LookupGoStdCache says where the cache for env (the build environment the
// test commands get) is and whether it is built, without building it. It
// asks `go env` (unsandboxed, in /, as Toolchains' probes do).
func LookupGoStdCache(ctx context.Context, root string, env []string) (GoStdCache, error) {
	c := GoStdCache{Root: root}
	out, err := probeLines(ctx, goStdEnv(env), len(goStdKeyVars), append([]string{"go", "env"}, goStdKeyVars...)...)
	if err != nil {
		return c, fmt.Errorf("go build cache: %w", err)
	}
	h := sha256.New()
	for i, k := range goStdKeyVars {
		fmt.Fprintf(h, "%s=%s\n", k, out[i])
	}
	fmt.Fprintf(h, "targets=%s, compiled and vetted\n", strings.Join(goStdTargets, " "))
	version := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, out[0])
	c.Key = fmt.Sprintf("%s-%s_%s-%s", version, out[2], out[3], hex.EncodeToString(h.Sum(nil))[:16])
	if fi, err := os.Lstat(filepath.Join(root, c.Key)); err == nil && fi.IsDir() {
		c.Dir = filepath.Join(root, c.Key)
	}
	return c, nil
}

// EnsureGoStdCache returns the cache for env, building it first when it is
// not there: `go build std` with goStdEnv, in an empty directory (no
// go.mod, no repository file), then `go test -run=^$` of a module of
// fixrail's own that imports all of it (the vet facts), inside the
// sandbox (mode required: the
// cache is only ever used sandboxed) with hide held as for any command.
// It builds into a directory of its own under root and renames the result
// into place, holding a lock on the key meanwhile, so a run that is
// killed leaves no half cache and two runs racing build it once. building,
// when not nil, is told the cache's path before a build starts.
func EnsureGoStdCache(ctx context.Context, root string, env []string, hide Hidden, building func(dir string)) (GoStdCache, error) {
	c, err := LookupGoStdCache(ctx, root, env)
	if err != nil || c.Dir != "" {
		return c, err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return c, fmt.Errorf("go build cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(root, ".lock-"+c.Key))
	if err != nil {
		return c, fmt.Errorf("go build cache: %w", err)
	}
	defer unlock()
	final := filepath.Join(root, c.Key)
	if fi, err := os.Lstat(final); err == nil && fi.IsDir() {
		c.Dir = final // built by another run while this one waited
		return c, nil
	}
	// Under the lock, a build directory left for this key is a killed
	// run's.
	if old, _ := filepath.Glob(filepath.Join(root, ".build-"+c.Key+"-*")); len(old) > 0 {
		for _, o := range old {
			_ = os.RemoveAll(o)
		}
	}
	if building != nil {
		building(final)
	}
	work, err := os.MkdirTemp(root, ".build-"+c.Key+"-")
	if err != nil {
		return c, fmt.Errorf("go build cache: %w", err)
	}
	defer os.RemoveAll(work)
	cache, dir, tmp := filepath.Join(work, "cache"), filepath.Join(work, "empty"), filepath.Join(work, "tmp")
	for _, d := range []string{cache, dir, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return c, fmt.Errorf("go build cache: %w", err)
		}
	}
	benv := With(WithTempDir(goStdEnv(env), tmp), "GOCACHE", cache)
	start := time.Now()
	gocmd := func(dir string, args ...string) (string, error) {
		res, err := Run(ctx, Cmd{
			Args:    append([]string{"go"}, args...),
			Dir:     dir,
			Env:     benv,
			Timeout: goStdTimeout,
			Sandbox: &Spec{Mode: Required, RW: []string{work}, Tmp: tmp, Hide: hide},
		})
		if err != nil {
			return "", fmt.Errorf("go build cache: %w", err)
		}
		if !res.Success() {
			return "", fmt.Errorf("go build cache: go %s: %s: %s", strings.Join(args, " "), res.Describe(), strings.TrimSpace(res.Tail(5)))
		}
		return res.Stdout, nil
	}
	if _, err := gocmd(dir, append([]string{"build"}, goStdTargets...)...); err != nil {
		return c, err
	}
	// go test vets the package it tests, and vet needs the facts of every
	// package it imports, standard library included: computing them was
	// most of a seeded command's time. A module of fixrail's own that
	// imports every importable target, tested with no test to run, leaves
	// them in the cache (for the standard library go test's vet flags do
	// not depend on the package tested, so the entries are the ones every
	// command looks up).
	list, err := gocmd(dir, append([]string{"list", "-e", "-f", "{{if not .Incomplete}}{{.ImportPath}}{{end}}"}, goStdTargets...)...)
	if err != nil {
		return c, err
	}
	var imports strings.Builder
	for _, p := range strings.Fields(list) {
		if p == "internal" || strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") || strings.HasPrefix(p, "vendor/") {
			continue
		}
		fmt.Fprintf(&imports, "\t_ %q\n", p)
	}
	for name, data := range map[string]string{
		"go.mod":      "module fixrail.invalid/stdvet\n",
		"std.go":      "// Package stdvet imports the standard library so that go test vets all of it.\npackage stdvet\n\nimport (\n" + imports.String() + ")\n",
		"std_test.go": "package stdvet\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			return c, fmt.Errorf("go build cache: %w", err)
		}
	}
	if _, err := gocmd(dir, "test", "-count=1", "-run=^$", "."); err != nil {
		return c, err
	}
	if err := os.Rename(cache, final); err != nil {
		return c, fmt.Errorf("go build cache: %w", err)
	}
	c.Dir, c.Built, c.Took = final, true, time.Since(start)
	return c, nil
}

// lockFile takes an exclusive flock on path, waiting for it until ctx is
// done, and returns its release.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// seedGoCache fills gocache, the command's own empty build cache, with a
// symbolic link to each file of seed (the cache, mounted read-only inside
// at the same path): the go command finds every entry and writes new ones
// beside the links. trim.txt is written fresh so that no command spends
// its time trimming links to entries it did not touch.
func seedGoCache(seed, gocache string) error {
	entries, err := os.ReadDir(seed)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || len(e.Name()) != 2 {
			continue // README, trim.txt, testexpand: not entries
		}
		sub := filepath.Join(seed, e.Name())
		files, err := os.ReadDir(sub)
		if err != nil {
			return err
		}
		dst := filepath.Join(gocache, e.Name())
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return err
		}
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			if err := os.Symlink(filepath.Join(sub, f.Name()), filepath.Join(dst, f.Name())); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(gocache, "trim.txt"), []byte(strconv.FormatInt(time.Now().Unix(), 10)), 0o600)
}
