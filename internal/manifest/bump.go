package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// ErrNoBuiltIn means the built-in bumper does not make this edit (another
// ecosystem, a range it would have to rewrite, a hash-pinned file, a
// replace directive); the fix goes to the agent instead.
var ErrNoBuiltIn = errors.New("no built-in bump for this declaration")

// Regen is the lockfile regeneration the harness runs after the edit,
// inside its sandbox (the bumper never runs it): Argv in Dir (relative to
// the repository root) with Env added to the sandbox's environment.
type Regen struct {
	Dir  string   `json:"dir"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// Writes are the files the command may change, repo-relative.
	Writes []string `json:"writes"`
	// Fill is the command that puts what the regeneration reads offline
	// into the operator's cache, run by the operator where the registry
	// is reachable (never by the harness); nil if there is none.
	Fill []string `json:"fill,omitempty"`
}

// Edit is what Bump changed.
type Edit struct {
	Files []string `json:"files"` // repo-relative, edited by Bump
	Regen *Regen   `json:"regen,omitempty"`
	// Regens are every regeneration the edit needs, one per manifest
	// directory with a lockfile (Regen is the first).
	Regens []*Regen `json:"regens,omitempty"`
}

// Bump edits dep's manifest under root to require target and returns the
// files it changed and the regeneration the harness must run. It makes the
// edit only where it is deterministic: go.mod requires, requirements.txt
// pins (and those of a file a -r/-c line includes), and package.json
// exact, ^ and ~ specs (in any section, overrides and resolutions too).
// BumpAll bumps several declarations at once.
func Bump(root string, dep Dep, target string) (*Edit, error) {
	full, err := pathguard.ResolveWithin(root, dep.Manifest)
	if err != nil {
		return nil, err
	}
	data, err := pathguard.ReadRegular(full, MaxManifest)
	if err != nil {
		return nil, err
	}
	out, regen, err := bumpData(data, dep, target)
	if err != nil {
		return nil, err
	}
	if err := writeKeepMode(full, out); err != nil {
		return nil, err
	}
	e := &Edit{Files: []string{dep.Manifest}, Regen: regen}
	if regen != nil {
		e.Regens = []*Regen{regen}
	}
	return e, nil
}

// bumpData is Bump on the manifest's bytes: the new bytes and the
// regeneration to run after them.
func bumpData(data []byte, dep Dep, target string) ([]byte, *Regen, error) {
	if !plainArg(target) {
		return nil, nil, fmt.Errorf("%w: target version %q is not a plain version", ErrNoBuiltIn, target)
	}
	if dep.Unbumpable != "" {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoBuiltIn, dep.Unbumpable)
	}
	var out []byte
	var regen *Regen
	var err error
	dir := path.Dir(dep.Manifest)
	switch {
	case dep.Ecosystem == vulndata.Go && path.Base(dep.Manifest) == "go.mod":
		out, err = bumpGoMod(data, dep, target)
		regen = &Regen{
			Dir:  dir,
			Argv: []string{"go", "mod", "tidy"},
			// Offline from the module cache: no proxy, no toolchain
			// download, no workspace. GOSUMDB=off because the checksum
			// database cannot be reached without a network; the hashes
			// go.sum gains are those of the module cache, which was
			// verified when it was filled.
			Env:    []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOWORK=off"},
			Writes: []string{dep.Manifest, path.Join(dir, "go.sum")},
		}
		if plainArg(dep.Name) {
			t := target
			if !strings.HasPrefix(t, "v") {
				t = "v" + t
			}
			regen.Fill = []string{"go", "mod", "download", dep.Name + "@" + t}
		}
	case dep.Ecosystem == vulndata.PyPI && (formatFor(dep.Manifest) == &formats[0] || dep.Via != ""):
		out, err = bumpRequirement(data, dep, target)
	case dep.Ecosystem == vulndata.NPM && path.Base(dep.Manifest) == "package.json":
		out, err = bumpPackageJSON(data, dep, target)
		if dep.Lockfile != "" {
			regen = npmRegen(dep, target)
		}
	default:
		return nil, nil, fmt.Errorf("%w: %s in %s", ErrNoBuiltIn, dep.Ecosystem, dep.Manifest)
	}
	if err != nil {
		return nil, nil, err
	}
	return out, regen, nil
}

func bumpGoMod(data []byte, dep Dep, target string) ([]byte, error) {
	if dep.Replaced {
		return nil, fmt.Errorf("%w: a replace directive overrides %s", ErrNoBuiltIn, dep.Name)
	}
	if !strings.HasPrefix(target, "v") {
		target = "v" + target
	}
	if err := module.Check(dep.Name, target); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBuiltIn, err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	found := false
	for _, r := range f.Require {
		if r.Mod.Path == dep.Name {
			found = true
		}
	}
	if !found {
		return nil, &NotInManifestError{Ecosystem: vulndata.Go, Name: dep.Name, Searched: []string{dep.Manifest}}
	}
	if err := f.AddRequire(dep.Name, target); err != nil {
		return nil, err
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

func bumpRequirement(data []byte, dep Dep, target string) ([]byte, error) {
	if dep.Hashed {
		return nil, fmt.Errorf("%w: %s is hash-pinned (--hash): the hashes must be regenerated", ErrNoBuiltIn, dep.Manifest)
	}
	if dep.Version == "" || dep.Line <= 0 {
		return nil, fmt.Errorf("%w: %s is not pinned with == in %s", ErrNoBuiltIn, dep.Name, dep.Manifest)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if dep.Line > len(lines) {
		return nil, fmt.Errorf("%w: line %d is gone", ErrParse, dep.Line)
	}
	l := lines[dep.Line-1]
	re := regexp.MustCompile(`(===?\s*)` + regexp.QuoteMeta(dep.Version) + `\b`)
	loc := re.FindStringSubmatchIndex(l)
	if loc == nil {
		return nil, fmt.Errorf("%w: %s line %d does not pin %s", ErrParse, dep.Manifest, dep.Line, dep.Version)
	}
	lines[dep.Line-1] = l[:loc[3]] + target + l[loc[1]:]
	return []byte(strings.Join(lines, "")), nil
}

// bumpPackageJSON rewrites the one string value of dep in its section,
// byte for byte elsewhere (no re-encoding: key order and formatting stay).
func bumpPackageJSON(data []byte, dep Dep, target string) ([]byte, error) {
	spec := strings.TrimSpace(dep.Spec)
	var next string
	switch {
	case npmExact(spec) != "":
		next = target
	case (strings.HasPrefix(spec, "^") || strings.HasPrefix(spec, "~")) && npmExact(spec[1:]) != "":
		next = spec[:1] + target
	default:
		return nil, fmt.Errorf("%w: npm spec %q is not exact, ^ or ~", ErrNoBuiltIn, spec)
	}
	key := dep.Name
	if dep.Key != "" {
		key = dep.Key
	}
	start, end, err := findJSONValue(data, dep.Section, key)
	if err != nil {
		return nil, err
	}
	enc, _ := json.Marshal(next)
	var b bytes.Buffer
	b.Write(data[:start])
	b.Write(enc)
	b.Write(data[end:])
	return b.Bytes(), nil
}

// findJSONValue finds the byte span of the string value at
// top-level[section][key] (the first occurrence), walking tokens with a
// key/value state per container, so a key-like string elsewhere (a value,
// a nested object) never matches.
func findJSONValue(data []byte, section, key string) (start, end int, err error) {
	type level struct {
		object, expectKey bool
		key               string
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %q not found in %s", ErrParse, key, section)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *level
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.expectKey {
			top.key, top.expectKey = s, false
			if len(stack) == 2 && stack[0].key == section && s == key {
				vstart := int(dec.InputOffset())
				v, err := dec.Token()
				if err != nil {
					return 0, 0, fmt.Errorf("%w: %v", ErrParse, err)
				}
				if _, ok := v.(string); !ok {
					return 0, 0, fmt.Errorf("%w: %s.%s is not a string", ErrParse, section, key)
				}
				vend := int(dec.InputOffset())
				for vstart < vend && data[vstart] != '"' {
					vstart++
				}
				return vstart, vend, nil
			}
			continue
		}
		// A value: the container now expects its next key.
		if top != nil && top.object {
			top.expectKey = true
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, level{object: d == '{', expectKey: d == '{'})
		}
	}
}

// NPMRegenArgv is npm's lockfile regeneration: the lockfile only (no
// node_modules), no lifecycle script (nothing the repository wrote runs),
// and --offline: packuments come from npm's cache alone, never the
// network, so a cache that lacks the target fails (ETARGET or ENOTCACHED)
// instead of reaching a registry from the harness.
var NPMRegenArgv = []string{"npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", "--offline"}

func npmRegen(dep Dep, target string) *Regen {
	// In the lockfile's directory: a workspace member's is the root's.
	dir := path.Dir(dep.Manifest)
	if dep.Lockfile != "" {
		dir = path.Dir(dep.Lockfile)
	}
	r := &Regen{
		Dir:  dir,
		Argv: slices.Clone(NPMRegenArgv),
		// npm's environment beats a project .npmrc: these pin what the
		// repository must not choose (the harness adds the registry,
		// NPMRegistryEnv, and the sandbox the cache). CheckNPMRC refuses
		// what the environment cannot override.
		Env:    npmRegenEnv(),
		Writes: []string{dep.Manifest, dep.Lockfile},
	}
	if plainArg(dep.Name) {
		// npm cache add stores the packument npm install reads and the
		// tarball; a target with new dependencies needs theirs too (an
		// online npm install --package-lock-only fills them all).
		r.Fill = []string{"npm", "cache", "add", dep.Name + "@" + target}
	}
	return r
}

// AgentRegen is the one lockfile-regeneration command an agent may run
// (the phase hook allows exactly this argv and nothing else) for a
// declaration the built-in bumper does not edit (for package.json: a spec
// that is not exact, ^ or ~); nil means none exists (pom.xml has no
// lockfile; a requirements file is its own). The package
// name and target come from the repository and the registry: both are
// checked to be plain before they reach an argv, and each is a separate
// argument, never shell text.
func AgentRegen(dep Dep, target string) (*Regen, error) {
	if !plainArg(dep.Name) || !plainArg(target) {
		return nil, fmt.Errorf("%w: %q@%q is not plain enough for an argv", ErrNoBuiltIn, dep.Name, target)
	}
	dir := path.Dir(dep.Manifest)
	base := path.Base(dep.Manifest)
	r := &Regen{Dir: dir}
	switch {
	case base == "package.json" && dep.Lockfile != "":
		return npmRegen(dep, target), nil
	case base == "Cargo.toml":
		r.Argv = []string{"cargo", "update", "--offline", "--package", dep.Name, "--precise", target}
		r.Writes = []string{path.Join(dir, "Cargo.lock")}
	case base == "Gemfile":
		r.Argv = []string{"bundle", "lock", "--local", "--update", dep.Name}
		r.Writes = []string{path.Join(dir, "Gemfile.lock")}
	case base == "pyproject.toml" && dep.Lockfile != "" && path.Base(dep.Lockfile) == "poetry.lock":
		r.Argv = []string{"poetry", "lock", "--no-update"}
		r.Writes = []string{dep.Lockfile}
	case base == "pyproject.toml" && dep.Lockfile != "" && path.Base(dep.Lockfile) == "uv.lock":
		r.Argv = []string{"uv", "lock", "--offline", "--upgrade-package", dep.Name}
		r.Writes = []string{dep.Lockfile}
	default:
		return nil, nil
	}
	r.Writes = append([]string{dep.Manifest}, r.Writes...)
	return r, nil
}

// plainArg is a package name or version safe as one argv element: no
// leading '-', no spaces, controls or shell metacharacters.
func plainArg(s string) bool {
	if s == "" || len(s) > 256 || s[0] == '-' {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("\"'\\`$;&|<>(){}*?!#~", r)
	})
}
