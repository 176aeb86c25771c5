package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// fakeGoCache is a build cache with one entry, as the go command lays it
// out: two-hex-digit directories of action and output files.
func fakeGoCache(t *testing.T) string {
	t.Helper()
	seed := filepath.Join(t.TempDir(), "seed")
	for name, data := range map[string]string{
		"ab/abcd-a":  "action entry\n",
		"ab/abcd-d":  "GOOD OBJECT\n",
		"cd/cdef-d":  "another\n",
		"README":     "This directory holds cached build artifacts.\n",
		"testexpand": "",
	} {
		p := filepath.Join(seed, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return seed
}

// treeListing is every path under dir with its content, to compare a
// cache before and after a command.
func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// seededRun runs script under sh in a fresh worktree with a fresh TMPDIR
// whose go-build directory is GOCACHE, the seed given as Spec.GoCache.
func seededRun(t *testing.T, mode sandbox.Mode, seed, script string) (sandbox.Result, string) {
	t.Helper()
	wt := t.TempDir()
	tmp, cleanup, err := sandbox.TempDir("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cleanup() })
	gc := filepath.Join(tmp, "go-build")
	if err := os.Mkdir(gc, 0o700); err != nil {
		t.Fatal(err)
	}
	env := sandbox.WithTempDir([]string{"PATH=/usr/bin:/bin", "SEED=" + seed, "GOCACHE=" + gc}, tmp)
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: []string{"sh", "-c", script}, Dir: wt, Env: env, Timeout: time.Minute,
		Sandbox: &sandbox.Spec{Mode: mode, RW: []string{wt}, Tmp: tmp, GoCache: seed},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, gc
}

// TestGoCacheSeedCannotBePoisoned is the attacker's view of the shared
// standard-library cache: a command that tries to write into it (through
// its GOCACHE's links, and at its own path) changes nothing in it, and
// what it put in its own GOCACHE is not in the next command's.
func TestGoCacheSeedCannotBePoisoned(t *testing.T) {
	requireBwrap(t)
	seed := fakeGoCache(t)
	before := treeListing(t, seed)

	res, _ := seededRun(t, sandbox.Required, seed, `
cat "$GOCACHE/ab/abcd-d"
test -L "$GOCACHE/ab/abcd-d" && echo LINKED
test -e "$GOCACHE/README" || echo NO-README
echo POISON > "$GOCACHE/ab/abcd-d" 2>/dev/null && echo WROTE-THROUGH-LINK
echo POISON > "$SEED/ab/abcd-d" 2>/dev/null && echo WROTE-SEED
echo POISON > "$SEED/ab/new-d" 2>/dev/null && echo ADDED-TO-SEED
chmod 666 "$GOCACHE/ab/abcd-d" 2>/dev/null && echo CHMOD-THROUGH-LINK
rm "$GOCACHE/ab/abcd-d" && echo POISON > "$GOCACHE/ab/abcd-d" && echo REPLACED-OWN-LINK
echo POISON > "$GOCACHE/ab/poison-d" && echo ADDED-OWN
`)
	if !res.Sandboxed {
		t.Fatal("not sandboxed")
	}
	out := res.Output()
	for _, want := range []string{"GOOD OBJECT", "LINKED", "NO-README", "REPLACED-OWN-LINK", "ADDED-OWN"} {
		if !strings.Contains(out, want) {
			t.Errorf("first command: want %q in its output:\n%s", want, out)
		}
	}
	for _, bad := range []string{"WROTE-THROUGH-LINK", "WROTE-SEED", "ADDED-TO-SEED", "CHMOD-THROUGH-LINK"} {
		if strings.Contains(out, bad) {
			t.Errorf("first command: %s: the shared cache was writable:\n%s", bad, out)
		}
	}
	if after := treeListing(t, seed); after != before {
		t.Fatalf("the shared cache changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	res, _ = seededRun(t, sandbox.Required, seed, `cat "$GOCACHE/ab/abcd-d"; ls "$GOCACHE/ab"`)
	if out := res.Output(); !strings.Contains(out, "GOOD OBJECT") || strings.Contains(out, "POISON") || strings.Contains(out, "poison-d") {
		t.Fatalf("the next command's cache holds what the first wrote:\n%s", out)
	}
}

// TestGoCacheSeedOnlySandboxed: a command that does not run in the
// sandbox gets no links (nothing would stop a write through them), its
// GOCACHE stays empty, and the seed is not even read.
func TestGoCacheSeedOnlySandboxed(t *testing.T) {
	seed := fakeGoCache(t)
	res, gc := seededRun(t, sandbox.Off, seed, `ls -A "$GOCACHE"; echo END`)
	if res.Sandboxed || strings.TrimSpace(res.Stdout) != "END" {
		t.Fatalf("sandboxed=%v, GOCACHE listing %q, want an empty GOCACHE", res.Sandboxed, res.Stdout)
	}
	if ents, _ := os.ReadDir(gc); len(ents) != 0 {
		t.Fatalf("GOCACHE holds %d entries after an unsandboxed command", len(ents))
	}
}

// TestGoCacheSeedRefused: the links go only into an empty GOCACHE in the
// command's Tmp, and the cache itself is held to what no mount may show
// and may not overlap a writable path.
func TestGoCacheSeedRefused(t *testing.T) {
	requireBwrap(t)
	seed := fakeGoCache(t)
	wt := t.TempDir()
	tmp := t.TempDir()
	outside := t.TempDir()
	notEmpty := filepath.Join(tmp, "full")
	if err := os.MkdirAll(filepath.Join(notEmpty, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(wt, ".fixrail")
	if err := os.MkdirAll(filepath.Join(state, "gocache"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, gocache, seed string
		rw                  []string
		hide                sandbox.Hidden
		want                string
		wantErr             error
	}{
		{"GOCACHE outside Tmp", outside, seed, []string{wt}, sandbox.Hidden{}, "is not a directory in the command's Tmp", nil},
		{"GOCACHE is Tmp", tmp, seed, []string{wt}, sandbox.Hidden{}, "is not a directory in the command's Tmp", nil},
		{"GOCACHE unset", "", seed, []string{wt}, sandbox.Hidden{}, "is not a directory in the command's Tmp", nil},
		{"GOCACHE not empty", notEmpty, seed, []string{wt}, sandbox.Hidden{}, "is not an empty directory", nil},
		{"cache in a writable path", filepath.Join(tmp, "go-build"), filepath.Join(state, "gocache"), []string{wt}, sandbox.Hidden{}, "overlaps a writable path", nil},
		{"cache in fixrail's state", filepath.Join(tmp, "go-build"), filepath.Join(state, "gocache"), []string{outside}, sandbox.Hidden{State: state}, "", sandbox.ErrExposes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.MkdirAll(filepath.Join(tmp, "go-build"), 0o700)
			env := []string{"PATH=/usr/bin:/bin"}
			if tc.gocache != "" {
				env = append(env, "GOCACHE="+tc.gocache)
			}
			_, err := sandbox.Run(t.Context(), sandbox.Cmd{
				Args: []string{"true"}, Dir: tc.rw[0], Env: env, Timeout: time.Minute,
				Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: tc.rw, Tmp: tmp, GoCache: tc.seed, Hide: tc.hide},
			})
			switch {
			case err == nil:
				t.Fatal("ran; want it refused")
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestGoStdEnvKeepsOnlyCompileFlags(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"-trimpath", "-trimpath"},
		{"-mod=vendor -trimpath -toolexec=/tmp/evil", "-trimpath"},
		{"--race -modfile=x.mod -overlay=o.json -exec=/x", "--race"},
		{"-gcflags=all=-N -tags=netgo -pgo=off", "-gcflags=all=-N -tags=netgo"},
	} {
		env := sandbox.GoStdEnv([]string{"GOFLAGS=" + tc.in, "GOPROXY=https://proxy.example", "GOTOOLCHAIN=auto"})
		got := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
		if got["GOFLAGS"] != tc.want || got["GOENV"] != "off" || got["GOTOOLCHAIN"] != "local" || got["GOPROXY"] != "off" {
			t.Errorf("GOFLAGS=%q: got %v, want GOFLAGS=%q GOENV=off GOTOOLCHAIN=local GOPROXY=off", tc.in, got, tc.want)
		}
	}
}

// goEnv is the build environment the tests' commands get.
func goEnv(t *testing.T, goflags string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.With(env, "GOFLAGS", goflags)
}

// TestEnsureGoStdCache builds a small part of the standard library (one
// package with no imports, so the test stays cheap) the way the whole is
// built, races two builders on it, and runs a sandboxed `go build` of that
// package which compiles nothing with the cache linked in and compiles it
// without (the control).
func TestEnsureGoStdCache(t *testing.T) {
	requireBwrap(t)
	sandbox.SetGoStdTargets(t, "unicode/utf8")
	root := filepath.Join(t.TempDir(), "gocache")
	env := goEnv(t, "")

	looked, err := sandbox.LookupGoStdCache(t.Context(), root, env)
	if err != nil || looked.Dir != "" || !strings.HasPrefix(looked.Key, "go1.") {
		t.Fatalf("before building: %+v, %v; want a key and no Dir", looked, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		got   []sandbox.GoStdCache
		notes int
	)
	for range 2 {
		wg.Go(func() {
			c, err := sandbox.EnsureGoStdCache(t.Context(), root, env, sandbox.Hidden{}, func(string) { mu.Lock(); notes++; mu.Unlock() })
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if got[0].Dir == "" || got[0].Dir != got[1].Dir || got[0].Dir != filepath.Join(root, looked.Key) {
		t.Fatalf("racing builders got %q and %q, want both %s", got[0].Dir, got[1].Dir, filepath.Join(root, looked.Key))
	}
	if got[0].Built == got[1].Built || notes != 1 {
		t.Fatalf("built %v and %v, %d build notes: want exactly one build", got[0].Built, got[1].Built, notes)
	}
	left, _ := filepath.Glob(filepath.Join(root, ".build-*"))
	if len(left) != 0 {
		t.Fatalf("build directories left behind: %v", left)
	}
	if again, err := sandbox.EnsureGoStdCache(t.Context(), root, env, sandbox.Hidden{}, func(string) { t.Error("built again") }); err != nil || again.Built || again.Dir != got[0].Dir {
		t.Fatalf("third call: %+v, %v; want the same cache, not built", again, err)
	}
	// -trimpath changes what the standard library compiles to: a cache
	// of its own. -mod does not.
	if c, err := sandbox.LookupGoStdCache(t.Context(), root, goEnv(t, "-trimpath")); err != nil || c.Key == looked.Key {
		t.Fatalf("-trimpath: key %q, %v; want a key other than %q", c.Key, err, looked.Key)
	}
	if c, err := sandbox.LookupGoStdCache(t.Context(), root, goEnv(t, "-mod=mod -toolexec=/nonexistent")); err != nil || c.Key != looked.Key || c.Dir == "" {
		t.Fatalf("-mod=mod -toolexec: %+v, %v; want key %q, built", c, err, looked.Key)
	}

	build := func(seed string, argv ...string) string {
		t.Helper()
		wt := t.TempDir()
		for name, data := range map[string]string{
			"go.mod":    "module example.com/m\n",
			"m.go":      "package m\n\nimport \"unicode/utf8\"\n\nfunc N(s string) int { return utf8.RuneCountInString(s) }\n",
			"m_test.go": "package m\n",
		} {
			if err := os.WriteFile(filepath.Join(wt, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tmp, cleanup, err := sandbox.TempDir("")
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		tc, err := sandbox.Toolchains(t.Context(), os.LookupEnv, nil)
		if err != nil {
			t.Fatal(err)
		}
		cenv, err := tc.Env(sandbox.WithTempDir(env, tmp), tmp)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sandbox.Run(t.Context(), sandbox.Cmd{
			Args: argv, Dir: wt, Env: cenv, Timeout: 5 * time.Minute,
			Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}, RO: tc.RO(), Tmp: tmp, GoCache: seed},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success() {
			t.Fatalf("go build: %s\n%s", res.Describe(), res.Output())
		}
		return res.Output()
	}
	if out := build(got[0].Dir, "go", "build", "-x", "unicode/utf8"); strings.Contains(out, "/compile ") {
		t.Fatalf("with the cache linked in, go build compiled:\n%s", out)
	}
	if out := build("", "go", "build", "-x", "unicode/utf8"); !strings.Contains(out, "/compile ") {
		t.Fatalf("without the cache, go build compiled nothing (the control):\n%s", out)
	}
	// go test vets its package with the facts of what it imports: with
	// the cache, only the module's own package is vetted.
	vets := func(out string) int { return strings.Count(out, "vet.cfg\n") }
	if out := build(got[0].Dir, "go", "test", "-x", "-count=1", "."); vets(out) != 1 {
		t.Fatalf("with the cache linked in, go test ran vet %d times, want once (the module's package):\n%s", vets(out), out)
	}
	if out := build("", "go", "test", "-x", "-count=1", "."); vets(out) != 2 {
		t.Fatalf("without the cache, go test ran vet %d times, want twice (the control):\n%s", vets(out), out)
	}
}
