package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// toolchainRun runs argv in the sandbox (mode required, no network) in wt
// with the build environment that lookup gives, the toolchain's read-only
// paths (all, or none when withCaches is false) and its offline environment.
func toolchainRun(t *testing.T, tc sandbox.Toolchain, lookup func(string) (string, bool), wt string, withCaches bool, argv ...string) sandbox.Result {
	t.Helper()
	env, err := sandbox.Env(sandbox.Build, lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmp, cleanup, err := sandbox.TempDir("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Error(err)
		}
	})
	env, err = tc.Env(sandbox.WithTempDir(env, tmp), tmp)
	if err != nil {
		t.Fatal(err)
	}
	spec := &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}, Tmp: tmp}
	if withCaches {
		spec.RO = tc.RO()
	}
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{Args: argv, Dir: wt, Env: env, Sandbox: spec, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sandboxed {
		t.Fatal("the command did not run in the sandbox")
	}
	return res
}

// TestToolchainGoModuleFromCache is the real layout of issue 10: a Go module
// with a real dependency (go-cmp, which this repository's own tests build,
// so it is in the module cache) passes `go test` inside the sandbox with no
// network, resolved from the read-only module cache. Without the cache mount
// it cannot find the module: the falsification.
func TestToolchainGoModuleFromCache(t *testing.T) {
	requireBwrap(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	tc, err := sandbox.Toolchains(t.Context(), os.LookupEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var modcache string
	for _, c := range tc.Caches {
		if c.Kind == "go modules" {
			modcache = c.Path
		}
	}
	if modcache == "" {
		t.Fatalf("no Go module cache detected: %q", tc.Describe())
	}
	if _, err := os.Stat(filepath.Join(modcache, "github.com/google/go-cmp@v0.7.0")); err != nil {
		t.Fatalf("go-cmp is not in the module cache (go mod download warms it): %v", err)
	}
	sum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	var sums []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, "github.com/google/go-cmp v0.7.0") {
			sums = append(sums, l)
		}
	}
	wt := t.TempDir()
	write(t, filepath.Join(wt, "go.mod"), "module example.com/repro\n\ngo 1.24\n\nrequire github.com/google/go-cmp v0.7.0\n")
	write(t, filepath.Join(wt, "go.sum"), strings.Join(sums, "\n")+"\n")
	write(t, filepath.Join(wt, "repro_test.go"), `package repro

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	if d := cmp.Diff([]int{1, 2}, []int{1, 2}); d != "" {
		t.Fatal(d)
	}
}
`)
	res := toolchainRun(t, tc, os.LookupEnv, wt, true, "go", "test", "-count=1", "./...")
	if !res.Success() {
		t.Fatalf("go test in the sandbox with the module cache: %s\n%s", res.Describe(), res.Tail(40))
	}
	if !strings.Contains(res.Stdout, "ok  \texample.com/repro") {
		t.Errorf("go test output has no ok line:\n%s", res.Tail(20))
	}

	res = toolchainRun(t, tc, os.LookupEnv, wt, false, "go", "test", "-count=1", "./...")
	if res.Success() {
		t.Fatalf("go test passed without the module cache mount:\n%s", res.Tail(20))
	}
	if out := res.Output(); !strings.Contains(out, "github.com/google/go-cmp") || !strings.Contains(out, "GOPROXY=off") {
		t.Errorf("without the cache the failure does not name the module and GOPROXY=off:\n%s", res.Tail(20))
	}
}

// TestToolchainPythonVirtualenv: a package whose test imports a package
// installed in a virtualenv outside the worktree (and outside HOME's view:
// the sandbox's HOME is empty), run by the virtualenv's interpreter, whose
// base installation pyvenv.cfg names (pyenv keeps it in HOME).
func TestToolchainPythonVirtualenv(t *testing.T) {
	requireBwrap(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("site-packages in %s: %v %v", venv, site, err)
	}
	write(t, filepath.Join(site[0], "extpkg", "__init__.py"), "VALUE = 42\n")
	wt := t.TempDir()
	write(t, filepath.Join(wt, "test_ext.py"), `import unittest
import extpkg

class T(unittest.TestCase):
    def test_value(self):
        self.assertEqual(extpkg.VALUE, 42)
`)
	lookup := func(k string) (string, bool) {
		switch k {
		case "VIRTUAL_ENV":
			return venv, true
		case "PATH":
			return filepath.Join(venv, "bin") + ":" + os.Getenv("PATH"), true
		}
		return os.LookupEnv(k)
	}
	tc, err := sandbox.Toolchains(t.Context(), lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{filepath.Join(venv, "bin", "python"), "-m", "unittest", "-v", "test_ext"}
	res := toolchainRun(t, tc, lookup, wt, true, argv...)
	if !res.Success() || !strings.Contains(res.Stderr, "test_value") {
		t.Fatalf("unittest in the sandbox with the virtualenv: %s\n%s\nmounted: %q", res.Describe(), res.Tail(30), tc.Describe())
	}
	// Falsification: without the mounts the interpreter or the package is
	// missing.
	if res := toolchainRun(t, tc, lookup, wt, false, argv...); res.Success() {
		t.Fatalf("unittest passed without the virtualenv mount:\n%s", res.Tail(20))
	}
}

// TestToolchainCachesWithoutCredentials: the cargo registry, Maven repository
// and npm cache are visible read-only, and the credentials beside them
// (~/.cargo/credentials.toml, ~/.m2/settings.xml, ~/.npmrc) are not.
func TestToolchainCachesWithoutCredentials(t *testing.T) {
	requireBwrap(t)
	h := newHostile(t) // HOME is now h.home, with .cargo/credentials.toml
	caches := map[string]string{
		".cargo/registry/index/crate.json": "registry-index",
		".cargo/git/checkouts/dep/lib.rs":  "git-checkout",
		".m2/repository/org/x/x-1.jar":     "maven-jar",
		".npm/_cacache/index-v5/aa":        "npm-index",
	}
	for rel, content := range caches {
		write(t, filepath.Join(h.home, rel), content)
	}
	for _, rel := range []string{".cargo/credentials", ".m2/settings.xml", ".m2/settings-security.xml", ".npmrc", ".npm/_logs/debug.log"} {
		h.plant(t, filepath.Join(h.home, rel), "CANARY-"+rel)
	}
	lookup := func(k string) (string, bool) {
		if k == "npm_config_cache" {
			return filepath.Join(h.home, ".npm"), true // skip the npm probe
		}
		return os.LookupEnv(k)
	}
	tc, err := sandbox.Toolchains(t.Context(), lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".cargo/registry", ".cargo/git", ".m2/repository", ".npm/_cacache"} {
		if !contains(tc.RO(), filepath.Join(h.home, want)) {
			t.Errorf("RO %q lacks %s", tc.RO(), want)
		}
	}
	for _, p := range tc.RO() {
		for c := range h.canaries {
			if strings.HasPrefix(c, p+"/") {
				t.Errorf("RO path %s holds the credential %s", p, c)
			}
		}
	}
	script := `
cat "$CARGO_HOME/registry/index/crate.json" "$CARGO_HOME/git/checkouts/dep/lib.rs" \
  "$HOME/.m2/repository/org/x/x-1.jar" "$npm_config_cache/_cacache/index-v5/aa"; echo
for f in "$@"; do test -e "$f" && echo "VISIBLE $f"; done
ls -A "$CARGO_HOME"; echo "GOCACHE=$GOCACHE XDG=$XDG_CACHE_HOME OFFLINE=$CARGO_NET_OFFLINE $npm_config_offline"
echo poison > "$HOME/.m2/repository/org/x/x-1.jar" 2>/dev/null && echo WROTE-CACHE
true`
	var args []string
	for c := range h.canaries {
		args = append(args, c)
	}
	res := toolchainRun(t, tc, lookup, h.worktree, true, sh(script, args...)...)
	if !res.Success() {
		t.Fatalf("script: %s\n%s", res.Describe(), res.Output())
	}
	out := res.Stdout
	for _, want := range []string{"registry-index", "git-checkout", "maven-jar", "npm-index", "OFFLINE=true true", "GOCACHE=/tmp/go-build XDG=/tmp/cache"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"VISIBLE", "WROTE-CACHE", "credentials", "config.toml"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has %q:\n%s", bad, out)
		}
	}
	if leaked := h.leaked(out); len(leaked) > 0 {
		t.Errorf("canaries leaked: %q", leaked)
	}
	if changed := h.changed(); len(changed) > 0 {
		t.Errorf("canaries changed: %q", changed)
	}
	if b, _ := os.ReadFile(filepath.Join(h.home, ".m2/repository/org/x/x-1.jar")); string(b) != "maven-jar" {
		t.Errorf("the read-only cache was written: %q", b)
	}
}

// TestToolchainDeclared: sandbox.ro_paths are mounted when safe and refused,
// naming the path, when they would expose HOME, the host or credentials.
func TestToolchainDeclared(t *testing.T) {
	h := newHostile(t)
	ok := filepath.Join(t.TempDir(), "vendor-cache")
	write(t, filepath.Join(ok, "dep.tar"), "x")
	withNpmrc := filepath.Join(t.TempDir(), "npmdir")
	write(t, filepath.Join(withNpmrc, ".npmrc"), "//registry/:_authToken=CANARY")
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"a cache directory", ok, true},
		{"relative", "cache", false},
		{"not clean", ok + "/../vendor-cache", false},
		{"root", "/", false},
		{"HOME", h.home, false},
		{"an ancestor of HOME", filepath.Dir(h.home), false},
		{"inside .ssh", filepath.Join(h.home, ".ssh"), false},
		{"a credentials file", filepath.Join(h.home, ".cargo", "credentials.toml"), false},
		{"a directory holding credentials", filepath.Join(h.home, ".cargo"), false},
		{"a directory holding .npmrc", withNpmrc, false},
		{"missing", filepath.Join(ok, "nope"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, err := sandbox.Toolchains(t.Context(), os.LookupEnv, []string{tt.path})
			if tt.ok {
				if err != nil || !contains(tc.RO(), tt.path) {
					t.Fatalf("Toolchains(%s) = %q, %v; want it mounted", tt.path, tc.RO(), err)
				}
				return
			}
			if !errors.Is(err, sandbox.ErrROPath) || !strings.Contains(err.Error(), tt.path) {
				t.Fatalf("Toolchains(%s) error %v, want ErrROPath naming it", tt.path, err)
			}
		})
	}
}

func TestResultTail(t *testing.T) {
	tests := []struct {
		name string
		r    sandbox.Result
		n    int
		want string
	}{
		{"last lines across streams", sandbox.Result{Stdout: "a\nb\nc\n", Stderr: "d\ne\n"}, 3, "c\nd\ne"},
		{"fewer lines than n", sandbox.Result{Stdout: "one"}, 5, "one"},
		{"n zero", sandbox.Result{Stdout: "x\n"}, 0, ""},
		{"no trailing newline", sandbox.Result{Stdout: "a\nb", Stderr: "c"}, 2, "b\nc"},
		{"cap drop said", sandbox.Result{Stdout: "x\n", StdoutDropped: 7}, 1, "[output cap dropped 7 bytes]\nx"},
		{"empty", sandbox.Result{}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Tail(tt.n); got != tt.want {
				t.Errorf("Tail(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
	long := sandbox.Result{Stdout: strings.Repeat("é", sandbox.MaxTail)}
	got := long.Tail(1)
	if len(got) > sandbox.MaxTail || !strings.HasSuffix(got, "é") || !strings.HasPrefix(got, "é") {
		t.Errorf("a long line's tail is %d bytes, starts %q", len(got), got[:4])
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestToolchainPyenv: where pyenv's shims are on PATH (as on this project's
// machines), `python3` inside the sandbox is pyenv's interpreter, as outside;
// without the mount it is another one or none.
func TestToolchainPyenv(t *testing.T) {
	requireBwrap(t)
	tc, err := sandbox.Toolchains(t.Context(), os.LookupEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tc.Caches, func(c sandbox.Cache) bool { return c.Kind == "python" && strings.Contains(c.From, "shims") }) {
		t.Skip("pyenv's shims are not on PATH here")
	}
	script := []string{"python3", "-c", "import sys; print(sys.base_prefix)"}
	want, err := exec.Command(script[0], script[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	wt := t.TempDir()
	res := toolchainRun(t, tc, os.LookupEnv, wt, true, script...)
	if !res.Success() || res.Stdout != string(want) {
		t.Fatalf("python3 in the sandbox: %s, %q; want %q\n%s", res.Describe(), res.Stdout, want, res.Tail(10))
	}
	if res := toolchainRun(t, tc, os.LookupEnv, wt, false, script...); res.Success() && res.Stdout == string(want) {
		t.Fatalf("without the pyenv mount python3 is still %q", res.Stdout)
	}
}

// TestToolchainProbes: what `go env` reports is what is mounted — the
// module cache, and GOROOT when it lies in HOME (~/sdk/go1.x), which the
// PATH roots skip — and a probe that prints something other than absolute
// paths mounts nothing.
func TestToolchainProbes(t *testing.T) {
	h := newHostile(t)
	modcache := filepath.Join(h.home, "go", "pkg", "mod")
	goroot := filepath.Join(h.home, "sdk", "go1.99")
	for _, d := range []string{modcache, goroot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, out string
		want      []string
	}{
		{"both paths", modcache + "\n" + goroot + "\n", []string{modcache, goroot}},
		{"GOROOT outside HOME", modcache + "\n/usr/lib/go\n", []string{modcache}},
		{"not paths", "warning: something\nelse\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			write(t, filepath.Join(bin, "go"), "#!/bin/sh\nprintf '%s' '"+tc.out+"'\n")
			if err := os.Chmod(filepath.Join(bin, "go"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":/usr/bin:/bin")
			t.Setenv("npm_config_cache", filepath.Join(h.home, ".npm"))
			tc2, err := sandbox.Toolchains(t.Context(), os.LookupEnv, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range tc2.Caches {
				if strings.HasPrefix(c.Kind, "go ") {
					got = append(got, c.Path)
				}
			}
			if tc.want == nil {
				// The fallback: ~/go/pkg/mod from HOME.
				tc.want = []string{modcache}
			}
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("go paths mounted %q, want %q (%q)", got, tc.want, tc2.Describe())
			}
		})
	}
}

// TestToolchainsInAsksNPMOnlyForAPackage: ToolchainsIn runs `npm config get
// cache` (node's start-up is the costliest probe) only when the tree the
// commands run in holds a package.json, at any depth; then npm's cache is
// mounted as with Toolchains. Without one npm is never started, nothing of
// npm's is mounted and Skipped says why.
func TestToolchainsInAsksNPMOnlyForAPackage(t *testing.T) {
	h := newHostile(t)
	cache := filepath.Join(t.TempDir(), "npm-cache")
	if err := os.MkdirAll(filepath.Join(cache, "_cacache"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	write(t, filepath.Join(bin, "npm"), "#!/bin/sh\necho \"$*\" >>'"+calls+"'\necho '"+cache+"'\n")
	if err := os.Chmod(filepath.Join(bin, "npm"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("npm_config_cache", "")
	os.Unsetenv("npm_config_cache")
	for _, tc := range []struct {
		name  string
		files []string
		want  bool
	}{
		{"no package.json", []string{"src/main.go", "tests/package.json.orig", "docs/package-json"}, false},
		{"package.json at the top", []string{"package.json"}, true},
		{"package.json deep down", []string{"web/app/package.json", "src/x"}, true},
		{"a package.json directory", []string{"package.json/x"}, true},
		{"empty tree", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(calls, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			tree := filepath.Join(h.worktree, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.MkdirAll(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				write(t, filepath.Join(tree, f), "{}")
			}
			got, err := sandbox.ToolchainsIn(t.Context(), os.LookupEnv, nil, tree)
			if err != nil {
				t.Fatal(err)
			}
			log, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			mounted := slices.ContainsFunc(got.Caches, func(c sandbox.Cache) bool { return c.Kind == "npm cache" })
			asked := string(log) == "config get cache\n"
			if asked != tc.want || mounted != tc.want || (!asked && len(log) != 0) {
				t.Errorf("npm asked %v (log %q), cache mounted %v; want both %v (%q)", asked, log, mounted, tc.want, got.Describe())
			}
			if noted := slices.ContainsFunc(got.Skipped, func(s string) bool { return strings.Contains(s, "no package.json") }); noted == tc.want {
				t.Errorf("Skipped notes the missing package.json: %v, want %v (%q)", noted, !tc.want, got.Skipped)
			}
		})
	}
}
