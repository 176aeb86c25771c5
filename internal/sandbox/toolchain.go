package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Cache is one dependency cache (or the interpreter a virtualenv needs) that
// a sandboxed command sees read-only, at its own path.
type Cache struct {
	Kind string // "go modules", "go toolchain", "cargo registry", "rust toolchain", "maven repository", "npm cache", "virtualenv", "python", "declared"
	Path string // absolute and clean; exists
	From string // how it was found: "go env GOMODCACHE", "$CARGO_HOME", "sandbox.ro_paths", …
}

// Toolchain is what the host's dependency caches add to a command: the
// read-only paths (for Spec.RO) and the environment that makes each
// toolchain use them offline (Env). Toolchains builds it once per run.
type Toolchain struct {
	Caches []Cache
	// Skipped says, for the run report and doctor, which candidate
	// paths were not mounted and why (missing, holds credentials, …).
	Skipped []string

	goCache, cargoRegistry, cargoGit, npmCache string
	hasGo                                      bool
}

// ErrROPath is a declared read-only path (sandbox.ro_paths) that cannot be
// mounted: not absolute or clean, the filesystem root, the operator's home or
// an ancestor of it, or a place that holds credentials.
var ErrROPath = errors.New("sandbox.ro_paths")

// toolProbeTimeout bounds `go env` and `npm config get`, which run
// unsandboxed with the build environment while the run is set up.
const toolProbeTimeout = 10 * time.Second

// Toolchains finds the dependency caches a test may need and returns them
// with the environment that makes the toolchains use them offline. lookup is
// the operator's environment (os.LookupEnv); declared are sandbox.ro_paths
// from the base commit's fixrail.yaml. A declared path that cannot be
// mounted is an error (wrapping ErrROPath); a detected cache that is missing
// or unsafe is skipped and said so in Skipped.
//
// Only the exact cache directories are bound, never their parents: the
// cargo registry and git checkouts but not ~/.cargo (credentials.toml), the
// Maven repository but not ~/.m2 (settings.xml), npm's _cacache but not
// ~/.npmrc. The probes (`go env GOMODCACHE`, `npm config get cache`) run
// unsandboxed with the build environment, in /, bounded by a timeout, with
// GOTOOLCHAIN=local so that go never fetches a toolchain to answer.
func Toolchains(ctx context.Context, lookup func(string) (string, bool), declared []string) (Toolchain, error) {
	return toolchains(ctx, lookup, declared, true)
}

// ToolchainsIn is Toolchains for commands that run in the checkout tree. It
// asks npm for its cache (`npm config get cache` starts node, which costs
// more than the rest of the harness's own work on a small repository) only
// when tree holds a file or link named package.json at any depth: without
// one there is nothing for npm to install or resolve, so its cache is not
// mounted and Skipped says why. Everything else is as in Toolchains.
func ToolchainsIn(ctx context.Context, lookup func(string) (string, bool), declared []string, tree string) (Toolchain, error) {
	return toolchains(ctx, lookup, declared, holdsPackageJSON(tree))
}

// holdsPackageJSON reports whether tree holds an entry named package.json,
// without following links. It errs towards true: a tree it cannot read
// completely counts as holding one, so npm is asked as before.
func holdsPackageJSON(tree string) bool { return holds(tree, "package.json") }

// HoldsGoModule reports whether tree holds a go.mod or go.work at any
// depth (links not followed; a tree it cannot read completely counts as
// holding one): a tree in which a Go command may build.
func HoldsGoModule(tree string) bool { return holds(tree, "go.mod", "go.work") }

// holds reports whether tree holds an entry with one of names, without
// following links, erring towards true as holdsPackageJSON says.
func holds(tree string, names ...string) bool {
	// The usual place first: the walk is lexical, so a file at the top
	// would otherwise wait for every directory named before it.
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(tree, n)); err == nil {
			return true
		}
	}
	found := false
	err := filepath.WalkDir(tree, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if slices.Contains(names, d.Name()) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found || err != nil
}

func toolchains(ctx context.Context, lookup func(string) (string, bool), declared []string, wantNPM bool) (Toolchain, error) {
	var t Toolchain
	get := func(k string) string { v, _ := lookup(k); return v }
	home := absClean(get("HOME"))
	inHome := func(rel string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(home, rel)
	}
	add := func(kind, path, from string) bool {
		path = absClean(path)
		if path == "" {
			return false
		}
		if why := unsafeRO(path, home); why != "" {
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s %s (%s): %s", kind, path, from, why))
			return false
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.IsDir() {
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s %s (%s): not a directory here", kind, path, from))
			return false
		}
		if !slices.ContainsFunc(t.Caches, func(c Cache) bool { return c.Path == path }) {
			t.Caches = append(t.Caches, Cache{Kind: kind, Path: path, From: from})
		}
		return true
	}
	buildEnv := Environ(lookup, BuildEnv...)

	// npm's probe starts node, the slowest of the probes: it runs while
	// go's does, and its answer is taken where npm's turn comes below.
	type npmAnswer struct {
		out []string
		err error
	}
	var npmProbe chan npmAnswer
	if wantNPM && get("npm_config_cache") == "" {
		if _, err := exec.LookPath("npm"); err == nil {
			npmProbe = make(chan npmAnswer, 1)
			go func() {
				out, err := probe(ctx, buildEnv, 1, "npm", "config", "get", "cache")
				npmProbe <- npmAnswer{out, err}
			}()
		}
	}

	// Go: the module cache. GOCACHE (the build cache) is per run, see Env.
	gomod, from := "", ""
	if _, err := exec.LookPath("go"); err == nil {
		t.hasGo = true
		if out, err := probe(ctx, With(buildEnv, "GOTOOLCHAIN", "local"), 2, "go", "env", "GOMODCACHE", "GOROOT"); err == nil {
			gomod, from = out[0], "go env GOMODCACHE"
			// A Go installed in HOME (golang.org/dl puts it in ~/sdk) is
			// not among the PATH roots the sandbox mounts.
			if goroot := absClean(out[1]); goroot != "" && inAHome(goroot, home) {
				add("go toolchain", goroot, "go env GOROOT")
			}
		} else {
			t.Skipped = append(t.Skipped, "go env: "+err.Error())
		}
	}
	if gomod == "" {
		switch gp, _, _ := strings.Cut(get("GOPATH"), string(filepath.ListSeparator)); {
		case get("GOMODCACHE") != "":
			gomod, from = get("GOMODCACHE"), "$GOMODCACHE"
		case gp != "":
			gomod, from = filepath.Join(gp, "pkg", "mod"), "$GOPATH/pkg/mod"
		case home != "":
			gomod, from = inHome("go/pkg/mod"), "~/go/pkg/mod"
		}
	}
	if gomod != "" && add("go modules", gomod, from) {
		t.goCache = absClean(gomod)
	}

	// Rust: the registry and git checkouts under CARGO_HOME, and the
	// rustup toolchains its bin directory's proxies run.
	cargoHome, from := get("CARGO_HOME"), "$CARGO_HOME"
	if cargoHome == "" && home != "" {
		cargoHome, from = inHome(".cargo"), "~/.cargo"
	}
	if cargoHome = absClean(cargoHome); cargoHome != "" {
		if reg := filepath.Join(cargoHome, "registry"); exists(reg) && add("cargo registry", reg, from+"/registry") {
			t.cargoRegistry = reg
		}
		if g := filepath.Join(cargoHome, "git"); exists(g) && add("cargo registry", g, from+"/git") {
			t.cargoGit = g
		}
		if b := filepath.Join(cargoHome, "bin"); exists(b) && onPath(get("PATH"), b) {
			add("rust toolchain", b, from+"/bin on PATH")
		}
	}
	rustup, from := get("RUSTUP_HOME"), "$RUSTUP_HOME"
	if rustup == "" && home != "" {
		rustup, from = inHome(".rustup"), "~/.rustup"
	}
	if rustup = absClean(rustup); rustup != "" && exists(rustup) {
		// rustup keeps toolchains and settings here, no credentials.
		add("rust toolchain", rustup, from)
	}

	// Maven: the local repository, never ~/.m2 itself (settings.xml holds
	// server passwords).
	if home != "" {
		if repo := inHome(".m2/repository"); exists(repo) {
			add("maven repository", repo, "~/.m2/repository")
		}
	}

	// npm: the content-addressed cache, never ~/.npmrc.
	npmRoot, from := get("npm_config_cache"), "$npm_config_cache"
	if npmProbe != nil {
		if a := <-npmProbe; a.err == nil {
			npmRoot, from = a.out[0], "npm config get cache"
		}
	}
	if npmRoot == "" && home != "" {
		npmRoot, from = inHome(".npm"), "~/.npm"
	}
	if !wantNPM {
		npmRoot = ""
		t.Skipped = append(t.Skipped, "npm cache: no package.json in the tree the commands run in")
	}
	if npmRoot = absClean(npmRoot); npmRoot != "" {
		if c := filepath.Join(npmRoot, "_cacache"); exists(c) && add("npm cache", c, from+"/_cacache") {
			t.npmCache = npmRoot
		}
	}

	// Python: a virtualenv outside the worktree and the interpreter it was
	// made from (pyvenv.cfg's home), which pyenv keeps under HOME.
	if venv := absClean(get("VIRTUAL_ENV")); venv != "" {
		if add("virtualenv", venv, "$VIRTUAL_ENV") {
			if base := venvBase(venv); base != "" {
				add("python", base, "pyvenv.cfg home of $VIRTUAL_ENV")
			}
		}
	}

	// pyenv: its shims on PATH run the interpreters it keeps in HOME.
	pyenv, from := get("PYENV_ROOT"), "$PYENV_ROOT"
	if pyenv == "" && home != "" {
		pyenv, from = inHome(".pyenv"), "~/.pyenv"
	}
	if pyenv = absClean(pyenv); pyenv != "" && onPath(get("PATH"), filepath.Join(pyenv, "shims")) {
		add("python", pyenv, from+" (its shims are on PATH)")
	}

	// Declared paths: refused, not skipped, when unsafe, so that the
	// operator hears about a bad fixrail.yaml.
	var errs []error
	for _, d := range declared {
		if err := CheckROPath(d); err != nil {
			errs = append(errs, err)
			continue
		}
		if why := unsafeRO(d, home); why != "" {
			errs = append(errs, fmt.Errorf("%w: %s: %s", ErrROPath, d, why))
			continue
		}
		if _, err := os.Stat(d); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrROPath, d, err))
			continue
		}
		if !slices.ContainsFunc(t.Caches, func(c Cache) bool { return c.Path == d }) {
			t.Caches = append(t.Caches, Cache{Kind: "declared", Path: d, From: "sandbox.ro_paths"})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Toolchain{}, err
	}
	return t, nil
}

// HasGo reports whether go is on PATH: the commands may build Go.
func (t Toolchain) HasGo() bool { return t.hasGo }

// RO returns the paths to bind read-only (append them to Spec.RO).
func (t Toolchain) RO() []string {
	out := make([]string, 0, len(t.Caches))
	for _, c := range t.Caches {
		out = append(out, c.Path)
	}
	return out
}

// Describe is one line per cache mounted and per candidate skipped, for the
// run report and doctor.
func (t Toolchain) Describe() []string {
	var out []string
	for _, c := range t.Caches {
		out = append(out, fmt.Sprintf("%s: %s (%s), read-only", c.Kind, c.Path, c.From))
	}
	for _, s := range t.Skipped {
		out = append(out, "not mounted: "+s)
	}
	return out
}

// Env returns a copy of env that makes the toolchains work offline against
// the read-only caches, with every writable cache in scratch, which must be
// the command's throwaway TMPDIR (the directory given as Spec.Tmp: inside
// the sandbox it is /tmp, and Run rewrites these values to match).
//
// Always: XDG_CACHE_HOME and GOCACHE in scratch, so no build cache is shared
// with another run of repository code (a test that wrote into a shared cache
// could make a later run green, or poison what it compiles). With the Go
// module cache: GOMODCACHE (the operator's may be set only in the go env
// file, which the sandbox's empty HOME hides). With go on PATH, cache or
// not: GOPROXY=off (a module missing from the cache fails at once, naming
// it) and GOTOOLCHAIN=local (go.mod cannot make go fetch and run another
// toolchain). GOFLAGS and GOSUMDB are
// left as the operator has them: go test already defaults to -mod=readonly
// (or -mod=vendor with a vendor directory, which forcing readonly would
// break), and with readonly no go.sum line is ever added, so the checksum
// database is never consulted; go.sum still verifies each module when it is
// extracted. With the cargo registry: CARGO_HOME in scratch holding links to
// the read-only registry and git checkouts (cargo must write its lock file
// there; the operator's config.toml and credentials are not linked) and
// CARGO_NET_OFFLINE=true. Always npm_config_cache naming a directory in
// scratch, npm's logs there and no update check; with npm's cache that
// directory is a view of it (npmCacheView: the read-only content, a
// private copy of the index npm must write to read) and
// npm_config_offline=true, without one it starts empty (a project .npmrc
// never picks it). Always PIP_NO_INDEX=1:
// pip installs nothing from an index.
func (t Toolchain) Env(env []string, scratch string) ([]string, error) {
	scratch = absClean(scratch)
	if scratch == "" {
		return nil, errors.New("toolchain env: scratch must be an absolute directory (the command's TMPDIR)")
	}
	dir := func(name string) (string, error) {
		d := filepath.Join(scratch, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("toolchain env: %w", err)
		}
		return d, nil
	}
	xdg, err := dir("cache")
	if err != nil {
		return nil, err
	}
	gocache, err := dir("go-build")
	if err != nil {
		return nil, err
	}
	env = With(env, "XDG_CACHE_HOME", xdg)
	env = With(env, "GOCACHE", gocache)
	if t.goCache != "" {
		env = With(env, "GOMODCACHE", t.goCache)
	}
	if t.goCache != "" || t.hasGo {
		env = With(env, "GOPROXY", "off")
		env = With(env, "GOTOOLCHAIN", "local")
	}
	if t.cargoRegistry != "" || t.cargoGit != "" {
		ch, err := dir("cargo-home")
		if err != nil {
			return nil, err
		}
		for name, target := range map[string]string{"registry": t.cargoRegistry, "git": t.cargoGit} {
			if target == "" {
				continue
			}
			if err := os.Symlink(target, filepath.Join(ch, name)); err != nil && !errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("toolchain env: %w", err)
			}
		}
		env = With(env, "CARGO_HOME", ch)
		env = With(env, "CARGO_NET_OFFLINE", "true")
	}
	// npm: always a cache fixrail chose, never the one a project .npmrc
	// names (npm ranks its environment above the project's file): a
	// repository could otherwise commit a cache whose entries decide what
	// an offline lockfile regeneration writes.
	logs, err := dir("npm-logs")
	if err != nil {
		return nil, err
	}
	view, err := dir("npm-cache")
	if err != nil {
		return nil, err
	}
	env = With(env, "npm_config_cache", view)
	env = With(env, "npm_config_logs_dir", logs)
	env = With(env, "npm_config_update_notifier", "false")
	if t.npmCache != "" {
		switch err := npmCacheView(filepath.Join(t.npmCache, "_cacache"), filepath.Join(view, "_cacache")); {
		case errors.Is(err, errNPMIndexSize):
			// Too large to copy per command: npm gets the read-only cache,
			// in which its lookups miss.
			env = With(env, "npm_config_cache", t.npmCache)
		case err != nil:
			return nil, fmt.Errorf("toolchain env: npm cache: %w", err)
		}
		env = With(env, "npm_config_offline", "true")
	}
	env = With(env, "PIP_NO_INDEX", "1")
	env = With(env, "PIP_DISABLE_PIP_VERSION_CHECK", "1")
	return env, nil
}

// maxNPMIndex bounds the npm index npmCacheView copies per command (files
// and bytes); past it the copy stops with errNPMIndexSize. A copy costs
// about 0.17 ms a file on a loaded 2-core VM (BenchmarkNPMCacheView). Vars
// so that a test can lower them.
var (
	maxNPMIndexFiles       = 20_000
	maxNPMIndexBytes int64 = 32 << 20
)

var errNPMIndexSize = errors.New("npm index too large to copy")

// npmCacheView lays out in view a cacache npm can read offline against the
// read-only cache src: content-v2 is a link to src's (read-only, shared,
// verified by its integrity on every read), index-v5 a private copy. npm
// cannot look anything up in a read-only cache: every lookup compacts the
// entry's index bucket (a write), and a failed compaction is a cache miss
// (ENOTCACHED offline). The copy is the command's own, so nothing it
// writes reaches the operator's cache or the next command. Only
// directories and regular files are copied; links are not followed.
func npmCacheView(src, view string) error {
	if err := os.MkdirAll(view, 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(filepath.Join(src, "content-v2")); err == nil && fi.IsDir() {
		if err := os.Symlink(filepath.Join(src, "content-v2"), filepath.Join(view, "content-v2")); err != nil {
			return err
		}
	}
	index := filepath.Join(src, "index-v5")
	if fi, err := os.Lstat(index); err != nil || !fi.IsDir() {
		return nil
	}
	files, size := 0, int64(0)
	return filepath.WalkDir(index, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(view, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if files, size = files+1, size+fi.Size(); files > maxNPMIndexFiles || size > maxNPMIndexBytes {
			return fmt.Errorf("%w: %s holds more than %d files or %d MiB", errNPMIndexSize, index, maxNPMIndexFiles, maxNPMIndexBytes>>20)
		}
		data, err := pathguard.ReadRegular(p, maxNPMIndexBytes)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
}

// CheckROPath checks a declared read-only path as config reads it, before
// the filesystem is looked at: absolute, written clean, not /, not fixrail's
// HOME (or the password database's home) nor an ancestor of it, and not a
// place that holds credentials by name (~/.ssh, .cargo/credentials.toml,
// …). Toolchains also refuses a directory that directly holds a credential
// file, and one that does not exist.
func CheckROPath(p string) error {
	switch {
	case !filepath.IsAbs(p):
		return fmt.Errorf("%w: %q is not an absolute path", ErrROPath, p)
	case filepath.Clean(p) != p:
		return fmt.Errorf("%w: %q is not clean (write %s)", ErrROPath, p, filepath.Clean(p))
	case p == "/":
		return fmt.Errorf("%w: / would expose the whole host", ErrROPath)
	}
	for _, h := range operatorHomes() {
		if pathguard.Within(p, h) {
			return fmt.Errorf("%w: %s is or contains the operator's home %s (name the cache directory inside it)", ErrROPath, p, h)
		}
	}
	if why := credentialName(p); why != "" {
		return fmt.Errorf("%w: %s %s", ErrROPath, p, why)
	}
	return nil
}

// credentialDirs are directory names whose content is credentials; a path
// through one is never bound.
var credentialDirs = []string{".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".vault-token"}

// credentialConfigDirs are ~/.config subdirectories that hold tokens.
var credentialConfigDirs = []string{"gh", "hub", "gcloud", "git", "op", "doctl"}

// credentialFile reports a file name that holds credentials: the
// registries' and tools' login files. A directory that directly holds one
// is not bound whole (bind the cache subdirectory instead).
func credentialFile(name string) bool {
	switch name {
	case ".npmrc", ".yarnrc", ".yarnrc.yml", ".netrc", "_netrc", ".pypirc", "pip.conf", ".git-credentials",
		".gitconfig", ".pgpass", ".my.cnf", ".env", "auth.json", "hosts.yml", ".boto", ".s3cfg":
		return true
	}
	return strings.HasPrefix(name, "credentials") ||
		strings.HasPrefix(name, "settings") && strings.HasSuffix(name, ".xml") ||
		strings.HasPrefix(name, "id_") && !strings.Contains(name, ".")
}

// credentialName says why p names a credential location by its path alone,
// or "".
func credentialName(p string) string {
	parts := strings.Split(p, string(filepath.Separator))
	for i, part := range parts {
		if slices.Contains(credentialDirs, part) {
			return "lies in " + part + ", which holds credentials"
		}
		if part == ".config" && i+1 < len(parts) && slices.Contains(credentialConfigDirs, parts[i+1]) {
			return "lies in .config/" + parts[i+1] + ", which holds credentials"
		}
	}
	if credentialFile(filepath.Base(p)) {
		return "is a credentials file"
	}
	return ""
}

// unsafeRO says why p (absolute, clean) must not be bound, or "": the root,
// an operator home or an ancestor of one, a credential location, or a
// directory that directly holds a credential file.
func unsafeRO(p, home string) string {
	if p == "/" {
		return "the filesystem root"
	}
	homes := operatorHomes()
	if home != "" && !slices.Contains(homes, home) {
		homes = append(homes, home)
	}
	for _, h := range homes {
		if pathguard.Within(p, h) {
			return "is or contains the operator's home " + h
		}
	}
	if why := credentialName(p); why != "" {
		return why
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if credentialFile(e.Name()) || slices.Contains(credentialDirs, e.Name()) {
			return "holds " + e.Name() + " (bind the cache directory beside it instead)"
		}
	}
	return ""
}

// probe runs a toolchain's own query unsandboxed (it only prints paths),
// in / so that no repository file (go.mod, .npmrc) takes part, and returns
// its n lines of output, each an absolute path.
func probe(ctx context.Context, env []string, n int, argv ...string) ([]string, error) {
	out, err := probeLines(ctx, env, n, argv...)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(out, func(p string) bool { return absClean(p) == "" }) {
		return nil, fmt.Errorf("%s: not %d absolute paths: %q", strings.Join(argv, " "), n, strings.Join(out, "\n"))
	}
	return out, nil
}

// probeLines runs a toolchain's query as probe does and returns its n
// lines of output, empty ones included.
func probeLines(ctx context.Context, env []string, n int, argv ...string) ([]string, error) {
	res, err := Run(ctx, Cmd{Args: argv, Dir: "/", Env: env, Timeout: toolProbeTimeout, OutputCap: 64 << 10})
	if err != nil {
		return nil, err
	}
	if !res.Success() {
		return nil, fmt.Errorf("%s: %s: %s", strings.Join(argv, " "), res.Describe(), strings.TrimSpace(res.Stderr))
	}
	out := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if len(out) != n {
		return nil, fmt.Errorf("%s: not %d lines: %q", strings.Join(argv, " "), n, res.Stdout)
	}
	return out, nil
}

// inAHome reports whether p lies in the operator's home (home, or one of
// operatorHomes).
func inAHome(p, home string) bool {
	for _, h := range append(operatorHomes(), home) {
		if h != "" && pathguard.Within(h, p) {
			return true
		}
	}
	return false
}

// venvBase is the install prefix of the interpreter a virtualenv was made
// from: the parent of pyvenv.cfg's "home" (a bin directory), or "" when that
// lies in the system toolchain already or cannot be read.
func venvBase(venv string) string {
	b, err := pathguard.ReadRegular(filepath.Join(venv, "pyvenv.cfg"), 64<<10)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(k) != "home" {
			continue
		}
		bin := absClean(strings.TrimSpace(v))
		if bin == "" {
			return ""
		}
		prefix := bin
		if filepath.Base(bin) == "bin" {
			prefix = filepath.Dir(bin)
		}
		for _, r := range systemRoots {
			if pathguard.Within(r, prefix) {
				return ""
			}
		}
		return prefix
	}
	return ""
}

func absClean(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func onPath(path, dir string) bool {
	for _, e := range filepath.SplitList(path) {
		if absClean(e) == dir {
			return true
		}
	}
	return false
}
