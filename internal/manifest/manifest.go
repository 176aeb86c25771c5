// Package manifest reads which version of a package a repository declares
// and locks — requirements.txt, pyproject.toml (+ poetry.lock / uv.lock),
// package.json + package-lock.json, go.mod + go.sum, pom.xml, Cargo.toml +
// Cargo.lock, Gemfile + Gemfile.lock — finds the manifest that declares a
// package (an alert's package is only a hint), and makes the built-in bump
// for go.mod, requirements.txt and package.json. Every file here is
// attacker-controlled: reads are bounded, non-blocking and regular-file only,
// and every parser is fuzzed.
package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Size limits: a manifest is small; a lockfile of a large monorepo is not.
const (
	MaxManifest = 1 << 20
	MaxLockfile = 32 << 20
)

// ErrNotInManifest means no manifest of the repository declares the
// package; the pipeline maps it to NOT-REPRO package-not-in-manifest.
var ErrNotInManifest = errors.New("package not declared in any manifest")

// ErrParse wraps a manifest or lockfile that could not be read as one.
var ErrParse = errors.New("unparsable manifest")

// NotInManifestError says what was looked for and where.
type NotInManifestError struct {
	Ecosystem vulndata.Ecosystem
	Name      string
	Searched  []string // manifests read, repo-relative
}

func (e *NotInManifestError) Error() string {
	return fmt.Sprintf("%s %q: %v (%d manifest(s) searched)", e.Ecosystem, e.Name, ErrNotInManifest, len(e.Searched))
}
func (e *NotInManifestError) Unwrap() error { return ErrNotInManifest }

// Dep is one declaration of a package in a manifest.
type Dep struct {
	Ecosystem vulndata.Ecosystem `json:"ecosystem"`
	Name      string             `json:"name"`      // as written in the manifest
	Manifest  string             `json:"manifest"`  // repo-relative, slash-separated
	Line      int                `json:"line"`      // 1-based, 0 if unknown
	Spec      string             `json:"spec"`      // the requirement as written: "==2.7.2", "^1.1.0", "v0.3.7"
	Version   string             `json:"version"`   // the exact version the spec pins, "" for a range
	Section   string             `json:"section"`   // dependencies, devDependencies, require, …
	Lockfile  string             `json:"lockfile"`  // repo-relative, "" if none beside the manifest
	Locked    []string           `json:"locked"`    // versions the lockfile holds for the package
	Replaced  bool               `json:"replaced"`  // go.mod: a replace directive overrides it
	Hashed    bool               `json:"hashed"`    // requirements.txt: --hash pinned (acts as a lockfile)
	Unbounded bool               `json:"unbounded"` // the spec names no version at all
	// Key is the manifest key that names the package when it is not Name
	// (a yarn resolution "**/name", an npm override "name@^1").
	Key string `json:"key,omitempty"`
	// Markers are a requirement's environment markers (after ';'): the
	// line applies only where they hold, and is bumped and judged anyway.
	Markers string `json:"markers,omitempty"`
	// Via is the -r/-c line (file:line) that includes Manifest, for a
	// requirements file found through another.
	Via string `json:"via,omitempty"`
	// Unbumpable says why the built-in bumper can never edit this
	// declaration (a nested npm override, a URL requirement); "" if it can.
	Unbumpable string `json:"unbumpable,omitempty"`
	// Resolved is the version the build selects (Go: go list -m with the
	// repository's go.mod, go.work and replaces), when fixrail asked.
	Resolved string `json:"resolved,omitempty"`
	// Foreign are the lockfile's entries for the package that do not come
	// from the registry ("1.2.4 comes from git+https://…", a path): the
	// advisories judge the registry's package, not what the build uses.
	Foreign []string `json:"foreign,omitempty"`
	// LockKey is the package-lock.json entry Locked reads
	// (node_modules/NAME; a workspace member's own copy is
	// MEMBER/node_modules/NAME).
	LockKey string `json:"lock_key,omitempty"`
	// Instances are the lockfile's other copies of the package (npm's
	// node_modules/a/node_modules/name), each installed too.
	Instances []Instance `json:"instances,omitempty"`
}

// Current is the version the repository is on: the locked version when a
// lockfile holds exactly one, else the pinned one.
func (d *Dep) Current() string {
	if len(d.Locked) == 1 {
		return d.Locked[0]
	}
	return d.Version
}

// InstalledAs is the name the package is installed under: an npm alias
// ("key": "npm:name@1.0.0" in a dependency section) installs it as
// node_modules/key; everything else under its own name.
func (d *Dep) InstalledAs() string {
	if d.Ecosystem == vulndata.NPM && d.Key != "" && slices.Contains(npmSections, d.Section) {
		return d.Key
	}
	return d.Name
}

// decl is what a manifest parser returns.
type decl struct {
	name, spec, version, section string
	line                         int
	hashed, unbounded            bool
	// key, markers, blocked: Dep's Key, Markers and Unbumpable.
	key, markers, blocked string
}

// format is one manifest kind.
type format struct {
	file  string
	eco   vulndata.Ecosystem
	parse func([]byte) ([]decl, error)
	// locks are lockfile names beside the manifest, each parser returning
	// name → versions; the first present is the one the tool reads (npm:
	// npm-shrinkwrap.json over package-lock.json).
	locks []lockFormat
}

type lockFormat struct {
	file  string
	parse func([]byte) (map[string][]string, error)
	// foreign, when set, names the locked entries that do not come from
	// the registry (a git checkout, a path): name → "1.2.4 comes from …".
	foreign func([]byte) (map[string][]string, error)
}

var formats = []format{
	{file: "requirements.txt", eco: vulndata.PyPI, parse: parseRequirements},
	{file: "pyproject.toml", eco: vulndata.PyPI, parse: parsePyproject, locks: []lockFormat{{"poetry.lock", parseTOMLLock, tomlLockForeign}, {"uv.lock", parseTOMLLock, tomlLockForeign}}},
	{file: "package.json", eco: vulndata.NPM, parse: parsePackageJSON, locks: []lockFormat{{"npm-shrinkwrap.json", parsePackageLock, npmLockForeign}, {"package-lock.json", parsePackageLock, npmLockForeign}}},
	{file: "go.mod", eco: vulndata.Go, parse: parseGoMod, locks: []lockFormat{{"go.sum", parseGoSum, nil}}},
	{file: "pom.xml", eco: vulndata.Maven, parse: parsePom},
	{file: "Cargo.toml", eco: vulndata.Cargo, parse: parseCargoToml, locks: []lockFormat{{"Cargo.lock", parseTOMLLock, cargoLockForeign}}},
	{file: "Gemfile", eco: vulndata.RubyGems, parse: parseGemfile, locks: []lockFormat{{"Gemfile.lock", parseGemfileLock, gemfileLockForeign}}},
}

func formatFor(rel string) *format {
	base := path.Base(rel)
	for i := range formats {
		if formats[i].file == base {
			return &formats[i]
		}
	}
	// requirements-dev.txt, requirements/prod.txt and the like.
	if strings.HasSuffix(base, ".txt") && strings.HasPrefix(base, "requirements") {
		return &formats[0]
	}
	return nil
}

// IsManifest reports whether rel names a manifest this package reads.
func IsManifest(rel string) bool { return formatFor(rel) != nil }

// Read parses the manifest at rel under root (and its lockfile beside it)
// and returns every declaration in it.
func Read(root, rel string) ([]Dep, error) {
	rel, err := pathguard.CleanRel(rel)
	if err != nil {
		return nil, err
	}
	f := formatFor(rel)
	if f == nil {
		return nil, fmt.Errorf("%w: %s is not a manifest fixrail reads", ErrParse, rel)
	}
	data, err := readIn(root, rel, MaxManifest)
	if err != nil {
		return nil, err
	}
	decls, err := f.parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrParse, rel, err)
	}
	lockRel, locked, foreign := "", map[string][]string(nil), map[string][]string(nil)
	// A Cargo or uv workspace member has no lockfile beside it: the build
	// resolves it from the workspace root's.
	dirs := []string{path.Dir(rel)}
	if ws := workspaceRoot(root, rel, f); ws != "" {
		dirs = append(dirs, ws)
	}
	for _, dir := range dirs {
		for _, lf := range f.locks {
			lr := path.Join(dir, lf.file)
			ld, err := readIn(root, lr, MaxLockfile)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if locked, err = lf.parse(ld); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrParse, lr, err)
			}
			if lf.foreign != nil {
				if foreign, err = lf.foreign(ld); err != nil {
					return nil, fmt.Errorf("%w: %s: %v", ErrParse, lr, err)
				}
			}
			lockRel = lr
			break
		}
		if lockRel != "" {
			break
		}
	}
	// An npm workspace member has no lockfile beside it: the build
	// resolves it from the workspace root's.
	var lockKeys map[string]string
	if lockRel == "" && f.eco == vulndata.NPM {
		if lockRel, locked, lockKeys, err = workspaceLock(root, rel); err != nil {
			return nil, err
		}
		if lockRel != "" {
			ld, err := readIn(root, lockRel, MaxLockfile)
			if err != nil {
				return nil, err
			}
			if foreign, err = npmLockForeign(ld); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrParse, lockRel, err)
			}
		}
	}
	var replaced map[string]bool
	if f.eco == vulndata.Go {
		replaced = goReplaced(data)
	}
	out := make([]Dep, 0, len(decls))
	var instances map[string][]Instance
	for _, d := range decls {
		dep := Dep{
			Ecosystem: f.eco, Name: d.name, Manifest: rel, Line: d.line, Spec: d.spec, Version: d.version,
			Section: d.section, Hashed: d.hashed, Unbounded: d.unbounded, Replaced: replaced[d.name],
			Key: d.key, Markers: d.markers, Unbumpable: d.blocked,
		}
		if lockRel != "" {
			dep.Lockfile = lockRel
			installed := dep.InstalledAs()
			dep.Locked = lookupLocked(f.eco, locked, installed, d.version)
			dep.Foreign = lookupLocked(f.eco, foreign, d.name, "")
			if f.eco == vulndata.NPM {
				if instances == nil {
					if instances, err = lockInstancesAll(root, lockRel); err != nil {
						return nil, err
					}
				}
				dep.LockKey = "node_modules/" + installed
				if k, ok := lockKeys[installed]; ok {
					dep.LockKey = k
				}
				dep.Instances = nestedInstances(instances, d.name, dep.LockKey)
			}
		}
		out = append(out, dep)
	}
	return out, nil
}

// workspaceRoot is the directory of the Cargo or uv workspace the manifest
// at rel is a member of, as the tools find it: the nearest directory above
// whose Cargo.toml has a [workspace] table (pyproject.toml a
// [tool.uv.workspace] one). "" for another format, or none found.
func workspaceRoot(root, rel string, f *format) string {
	var isRoot func(map[string]any) bool
	switch f.file {
	case "Cargo.toml":
		isRoot = func(doc map[string]any) bool { _, ok := doc["workspace"].(map[string]any); return ok }
	case "pyproject.toml":
		isRoot = func(doc map[string]any) bool {
			tool, _ := doc["tool"].(map[string]any)
			uv, _ := tool["uv"].(map[string]any)
			_, ok := uv["workspace"].(map[string]any)
			return ok
		}
	default:
		return ""
	}
	for d := path.Dir(rel); d != "."; {
		d = path.Dir(d)
		data, err := readIn(root, path.Join(d, f.file), MaxManifest)
		if err != nil {
			continue
		}
		var doc map[string]any
		if strictTOML(data, &doc) == nil && isRoot(doc) {
			return d
		}
	}
	return ""
}

// lookupLocked is what the lockfile holds for name. go.sum holds every
// version in the module graph, so for Go only the declared version counts
// (present in go.sum or not).
func lookupLocked(eco vulndata.Ecosystem, locked map[string][]string, name, declared string) []string {
	if eco == vulndata.Go {
		for _, v := range locked[name] {
			if v == declared {
				return []string{v}
			}
		}
		return nil
	}
	n := eco.NormalizeName(name)
	for k, vs := range locked {
		if eco.NormalizeName(k) == n {
			out := append([]string(nil), vs...)
			if eco == vulndata.RubyGems {
				// Bundler locks a native gem once per platform the lockfile
				// lists ("1.16.5-x86_64-linux", "1.16.5-arm64-darwin"): one
				// release, since a RubyGems version never holds '-' (a
				// prerelease is ".pre"). Counted as one version; platforms
				// locked to different releases stay apart.
				for i, v := range out {
					if j := strings.IndexByte(v, '-'); j > 0 {
						out[i] = v[:j]
					}
				}
				sort.Strings(out)
				return slices.Compact(out)
			}
			sort.Strings(out)
			return out
		}
	}
	return nil
}

// readIn reads rel under root: resolved within root (a symlink out of the
// repository is refused), a regular file, at most limit bytes, never
// blocking on a FIFO.
func readIn(root, rel string, limit int64) ([]byte, error) {
	full, err := pathguard.ResolveWithin(root, rel)
	if err != nil {
		return nil, err
	}
	return pathguard.ReadRegular(full, limit)
}

// skipDirs are never searched for manifests: vendored and installed copies
// declare other people's dependencies.
var skipDirs = map[string]bool{"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true, "__pycache__": true, "venv": true}

// Limits on the search, so a hostile tree cannot make it unbounded.
const (
	maxDepth   = 8
	maxEntries = 20000
)

// Find returns every declaration of eco/name in the repository at root,
// hint's manifest first when it declares the package (hint is the alert's
// manifest path: untrusted, and only a hint), and those of the requirement
// files a -r/-c line includes. No declaration is a *NotInManifestError.
// FindAll says, besides, what it could not read.
func Find(root string, eco vulndata.Ecosystem, name, hint string) ([]Dep, error) {
	d, err := FindAll(root, eco, name, hint)
	if err != nil {
		return nil, err
	}
	return d.Deps, nil
}

// walk calls fn for every entry under root that the search visits (rel is
// slash-separated), bounded and skipping what skipDirs names.
func walk(root string, fn func(rel string, regular bool)) error {
	seen := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		seen++
		if seen > maxEntries {
			return fs.SkipAll
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()] || strings.Count(rel, "/") >= maxDepth) {
				return fs.SkipDir
			}
			return nil
		}
		fn(rel, d.Type().IsRegular())
		return nil
	})
}

// lockInstancesAll reads every copy a package-lock.json installs.
func lockInstancesAll(root, lockRel string) (map[string][]Instance, error) {
	data, err := readIn(root, lockRel, MaxLockfile)
	if err != nil {
		return nil, err
	}
	all, err := parseLockInstances(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrParse, lockRel, err)
	}
	return all, nil
}

func sortStrings(s []string) { sort.Strings(s) }
