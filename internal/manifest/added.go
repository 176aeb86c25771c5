package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/mod/modfile"

	"github.com/fixrail/fixrail/internal/vulndata"
)

// What a change to a dependency file adds: every package version a
// manifest or lockfile names in the candidate and not in the base, for the
// added-packages gate to check against the advisory data. A fix of any
// type may pull a package in (a bug fix adding a typosquat); this is how the
// harness sees it without running a package manager.

// FileKind says how the added-packages check treats a path.
type FileKind int

const (
	// NotDependency: not a file that declares or locks packages.
	NotDependency FileKind = iota
	// Parsed: a manifest or lockfile whose additions are extracted here.
	Parsed
	// Unread: a dependency file (or a package manager's registry
	// configuration) fixrail does not parse; a change to it cannot be
	// checked, and the check fails closed.
	Unread
)

// unreadFiles are dependency files by base name that nothing here parses:
// other package managers' lockfiles and manifests, and the files that
// point a package manager at another registry.
var unreadFiles = map[string]bool{
	"yarn.lock": true, "pnpm-lock.yaml": true, "pnpm-workspace.yaml": true, "bun.lock": true, "bun.lockb": true,
	".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true, ".pnpmfile.cjs": true,
	"Pipfile": true, "Pipfile.lock": true, "pdm.lock": true, "pylock.toml": true, "setup.py": true, "setup.cfg": true, "pip.conf": true,
	"go.work":      true,
	"build.gradle": true, "build.gradle.kts": true, "gradle.lockfile": true, "settings.gradle": true, "settings.gradle.kts": true,
	"composer.json": true, "composer.lock": true, "packages.lock.json": true, "gems.rb": true, "gems.locked": true,
}

// Kind classifies rel (repo-relative, slash-separated).
func Kind(rel string) FileKind {
	if addedFormatFor(rel) != nil {
		return Parsed
	}
	base := path.Base(rel)
	// vendor/modules.txt is Go's record of what is vendored; cargo's
	// configuration may replace crates.io (a vendor directory, a mirror)
	// or patch a crate, all of which Cargo.lock leaves unsaid.
	if unreadFiles[base] || rel == "vendor/modules.txt" || strings.HasSuffix(rel, "/vendor/modules.txt") ||
		rel == ".cargo/config.toml" || rel == ".cargo/config" || strings.HasSuffix(rel, "/.cargo/config.toml") || strings.HasSuffix(rel, "/.cargo/config") ||
		strings.HasSuffix(base, ".gemspec") || (strings.HasPrefix(base, "pylock.") && strings.HasSuffix(base, ".toml")) {
		return Unread
	}
	return NotDependency
}

// AddedPackage is one package version a change adds.
type AddedPackage struct {
	Ecosystem vulndata.Ecosystem
	Name      string
	// Version is the exact version; "" when the declaration names a range
	// (or nothing), so which version installs is decided at install time.
	Version string
	// Spec is the declaration as written (a range, an alias's target).
	Spec string
	File string
}

// Additions is what a change to one dependency file adds.
type Additions struct {
	Packages []AddedPackage
	// Unchecked are added declarations that name no registry package
	// version (a URL, a git source, a local path, an index or include
	// option): nothing advisory data says applies to them.
	Unchecked []string
}

// maxUnchecked bounds how many unchecked declarations one file reports.
const maxUnchecked = 20

// item is one declaration or locked version, with the key it is compared
// by: a manifest declaration by its name and spec (a changed spec adds the
// version it now names), a locked version by its name and version.
type item struct {
	name, version, spec string
	bad                 string // non-empty: names no registry version; this is what it says
}

func (it item) key(eco vulndata.Ecosystem) string {
	if it.bad != "" {
		return "\x00" + it.bad
	}
	return eco.NormalizeName(it.name) + "\x00" + it.version + "\x00" + it.spec
}

type addedFormat struct {
	eco   vulndata.Ecosystem
	items func([]byte) ([]item, error)
	// sources, when set, returns the file's package source settings as
	// text with their names ("" for none, or only the public default):
	// where the packages it declares are fetched from.
	sources func([]byte) (names, text string)
}

// addedFormatFor is the extraction for rel, or nil.
func addedFormatFor(rel string) *addedFormat {
	base := path.Base(rel)
	switch base {
	case "package.json":
		return &addedFormat{vulndata.NPM, packageJSONItems, nil}
	case "package-lock.json", "npm-shrinkwrap.json":
		return &addedFormat{vulndata.NPM, packageLockItems, nil}
	case "go.mod":
		return &addedFormat{vulndata.Go, goModItems, nil}
	case "go.sum", "go.work.sum":
		return &addedFormat{vulndata.Go, lockItems(parseGoSum), nil}
	case "poetry.lock", "uv.lock":
		return &addedFormat{vulndata.PyPI, tomlLockItems, nil}
	case "Cargo.lock":
		return &addedFormat{vulndata.Cargo, tomlLockItems, nil}
	case "pyproject.toml":
		return &addedFormat{vulndata.PyPI, pyprojectItems, pyprojectSources}
	case "Gemfile.lock":
		return &addedFormat{vulndata.RubyGems, lockItems(parseGemfileLock), gemfileLockSources}
	}
	// requirements.txt, requirements-dev.txt, requirements/prod.txt,
	// constraints.txt, and pip-tools' .in: pip's requirement-file format.
	reqDir := path.Base(path.Dir(rel)) == "requirements"
	if (reqDir || strings.HasPrefix(base, "requirements") || strings.HasPrefix(base, "constraints")) &&
		(strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".in")) {
		return &addedFormat{vulndata.PyPI, requirementItems, nil}
	}
	if f := formatFor(rel); f != nil {
		// pom.xml, Cargo.toml, Gemfile: the decision's own parsers.
		af := &addedFormat{f.eco, declItems(f.parse), nil}
		switch base {
		case "Gemfile":
			af.sources = gemfileSources
		case "pom.xml":
			af.sources = pomSources
		case "Cargo.toml":
			af.sources = cargoSources
		}
		return af
	}
	return nil
}

// Added compares a dependency file's base and candidate bytes (base nil:
// the file is new) and returns what the candidate adds. An error wraps
// ErrParse: a file that does not parse as its kind cannot be checked.
func Added(rel string, base, cand []byte) (*Additions, error) {
	f := addedFormatFor(rel)
	if f == nil {
		return nil, fmt.Errorf("%w: %s is not a dependency file fixrail reads", ErrParse, rel)
	}
	have := map[string]bool{}
	if base != nil {
		old, err := f.items(base)
		if err != nil {
			return nil, fmt.Errorf("%w: %s (base): %v", ErrParse, rel, err)
		}
		for _, it := range old {
			have[it.key(f.eco)] = true
		}
	}
	now, err := f.items(cand)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrParse, rel, err)
	}
	out := &Additions{}
	if f.sources != nil {
		// Added, changed or removed (a package moved off the private
		// index it came from lets a public one of the same name in); a
		// new file that names only the public default changes nothing.
		names, now := f.sources(cand)
		was := ""
		if base != nil {
			var bnames string
			bnames, was = f.sources(base)
			if names == "" {
				names = bnames
			}
		}
		if now != was {
			out.Unchecked = append(out.Unchecked, fmt.Sprintf("package source settings changed (%s)", names))
		}
	}
	seen := map[string]bool{}
	for _, it := range now {
		k := it.key(f.eco)
		if have[k] || seen[k] {
			continue
		}
		seen[k] = true
		if it.bad != "" {
			switch n := len(out.Unchecked); {
			case n < maxUnchecked:
				out.Unchecked = append(out.Unchecked, it.bad)
			case n == maxUnchecked:
				out.Unchecked = append(out.Unchecked, "and more")
			}
			continue
		}
		out.Packages = append(out.Packages, AddedPackage{Ecosystem: f.eco, Name: it.name, Version: it.version, Spec: it.spec, File: rel})
	}
	sort.Slice(out.Packages, func(i, j int) bool {
		a, b := out.Packages[i], out.Packages[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Spec < b.Spec
	})
	return out, nil
}

// bad is an item that names no registry version, quoted and cut for a
// message (the text is the agent's).
func bad(what, raw string) item {
	if len(raw) > 120 {
		raw = raw[:120] + "…"
	}
	return item{bad: fmt.Sprintf("%s %q", what, raw)}
}

// ---- pip requirement files ----

// pep440Spec is a version specifier: clauses of an operator and a version,
// comma-separated, or nothing.
var pep440Spec = lazyRE(`^(?:(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+)(?:\s*,\s*(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+)*$`)

func requirementItems(data []byte) ([]item, error) {
	var out []item
	lines, _ := logicalLines(data)
	for _, l := range lines {
		l = reqComment().ReplaceAllString(l, "")
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if len(out) == maxDecls {
			return nil, errTooMany
		}
		// An option (-r, -c, -e, --index-url, --extra-index-url,
		// --find-links, --pre, …) changes what is installed or from where:
		// it names no version advisory data can speak for.
		if strings.HasPrefix(l, "-") {
			out = append(out, bad("requirement-file option", l))
			continue
		}
		req := l
		if j := strings.Index(req, " --"); j >= 0 {
			req = req[:j] // --hash=… ends the requirement
		}
		out = append(out, requirementItem(req))
	}
	return out, nil
}

// requirementItem is one PEP 508 requirement; a direct reference (name @
// URL), a bare URL or path, or a specifier that is not one names no
// registry version.
func requirementItem(req string) item {
	name, spec, ok := parseRequirement(req)
	spec = strings.Join(strings.Fields(spec), "")
	if !ok || (spec != "" && !pep440Spec().MatchString(spec)) {
		return bad("requirement that names no registry version", strings.TrimSpace(req))
	}
	return item{name: name, spec: spec, version: pinned(spec)}
}

// ---- package.json ----

// npmDepSections map a name to a spec.
var npmDepSections = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}

func packageJSONItems(data []byte) ([]item, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []item
	add := func(name, spec string) error {
		if len(out) == maxDecls {
			return errTooMany
		}
		out = append(out, npmItem(name, spec))
		return nil
	}
	for _, sec := range npmDepSections {
		raw, ok := doc[sec]
		if !ok {
			continue
		}
		var deps map[string]string
		if err := json.Unmarshal(raw, &deps); err != nil {
			return nil, fmt.Errorf("%s: %v", sec, err)
		}
		for _, name := range sortedKeys(deps) {
			if err := add(name, deps[name]); err != nil {
				return nil, err
			}
		}
	}
	// overrides (npm) nest: a key is a package (optionally name@range), a
	// value its spec or an object whose "." is its own spec.
	if raw, ok := doc["overrides"]; ok {
		var walk func(raw json.RawMessage, depth int) error
		walk = func(raw json.RawMessage, depth int) error {
			if depth > 32 {
				return errors.New("overrides: nested too deep")
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("overrides: %v", err)
			}
			for _, k := range sortedKeys(m) {
				if k == "." {
					continue
				}
				var spec string
				if json.Unmarshal(m[k], &spec) != nil {
					var sub map[string]json.RawMessage
					if err := json.Unmarshal(m[k], &sub); err != nil {
						return fmt.Errorf("overrides: %q: %v", k, err)
					}
					if dot, ok := sub["."]; ok {
						if err := json.Unmarshal(dot, &spec); err != nil {
							return fmt.Errorf("overrides: %q: %v", k, err)
						}
					}
					if err := walk(m[k], depth+1); err != nil {
						return err
					}
				}
				if spec == "" {
					continue
				}
				if err := add(overrideName(k), spec); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(raw, 0); err != nil {
			return nil, err
		}
	}
	// resolutions (yarn): "name", "a/b", "**/name" or "name@range" → spec.
	if raw, ok := doc["resolutions"]; ok {
		var res map[string]string
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("resolutions: %v", err)
		}
		for _, k := range sortedKeys(res) {
			if err := add(resolutionName(k), res[k]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// overrideName strips an override key's "@range" (keeping a scope's @,
// which starts a segment).
func overrideName(k string) string {
	if i := strings.LastIndexByte(k, '@'); i > 0 && k[i-1] != '/' {
		return k[:i]
	}
	return k
}

// resolutionName is the package a yarn resolution key ends in.
func resolutionName(k string) string {
	k = overrideName(k)
	parts := strings.Split(k, "/")
	// The last segment, or the last two when they are @scope/name.
	if n := len(parts); n >= 2 && strings.HasPrefix(parts[n-2], "@") {
		return parts[n-2] + "/" + parts[n-1]
	}
	return parts[len(parts)-1]
}

// npmRange is a registry spec: a version, a range, or a dist-tag.
var npmRange = lazyRE(`^[A-Za-z0-9.*xX^~<>=|+ -]*$`)

// npmItem classifies one declaration: an alias ("npm:real@spec") is the
// real package; a URL, git, GitHub shorthand, file, link or workspace
// spec names no registry version.
func npmItem(name, spec string) item {
	spec = strings.TrimSpace(spec)
	if name == "" || len(name) > 214 {
		return bad("dependency name", name)
	}
	if rest, ok := strings.CutPrefix(spec, "npm:"); ok {
		real, rng := rest, ""
		if i := strings.LastIndexByte(rest, '@'); i > 0 {
			real, rng = rest[:i], rest[i+1:]
		}
		if real == "" || !npmRange().MatchString(rng) {
			return bad("dependency that names no registry version", name+": "+spec)
		}
		return item{name: real, spec: rng, version: npmExact(rng)}
	}
	if !npmRange().MatchString(spec) {
		return bad("dependency that names no registry version", name+": "+spec)
	}
	return item{name: name, spec: spec, version: npmExact(spec)}
}

// ---- package-lock.json / npm-shrinkwrap.json ----

// jsonObject decodes an object with its keys exactly as written:
// encoding/json matches struct fields case-insensitively, so a "Version"
// beside "version" would be read where npm reads the other.
func jsonObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// jsonString is m[key] as a string ("" when absent or null).
func jsonString(m map[string]json.RawMessage, key string) (string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q: %v", key, err)
	}
	return s, nil
}

// packageLockItems is every installed instance, nested ones included (a
// transitive dependency installs as surely as a direct one): v2/v3's
// "packages" (node_modules/…/node_modules/NAME; an aliased install says its
// real name), else v1's nested "dependencies".
func packageLockItems(data []byte) ([]item, error) {
	doc, err := jsonObject(data)
	if err != nil {
		return nil, err
	}
	var out []item
	add := func(name, version string) error {
		if len(out) == maxDecls*10 {
			return errTooMany
		}
		switch rest, alias := strings.CutPrefix(version, "npm:"); {
		case name == "":
			out = append(out, bad("locked install with no name", version))
		case alias:
			i := strings.LastIndexByte(rest, '@')
			if i <= 0 || npmExact(rest[i+1:]) == "" {
				out = append(out, bad("locked install that names no registry version", name+": "+version))
				return nil
			}
			out = append(out, item{name: rest[:i], version: rest[i+1:]})
		case npmExact(version) == "":
			out = append(out, bad("locked install that names no registry version", name+": "+version))
		default:
			out = append(out, item{name: name, version: version})
		}
		return nil
	}
	if raw, ok := doc["packages"]; ok && string(raw) != "null" {
		pkgs, err := jsonObject(raw)
		if err != nil {
			return nil, fmt.Errorf("packages: %v", err)
		}
		for _, k := range sortedKeys(pkgs) {
			i := strings.LastIndex(k, "node_modules/")
			if i < 0 {
				continue // the root, or a workspace's own directory
			}
			p, err := jsonObject(pkgs[k])
			if err != nil {
				return nil, fmt.Errorf("packages %q: %v", k, err)
			}
			var link bool
			if raw, ok := p["link"]; ok && json.Unmarshal(raw, &link) != nil {
				return nil, fmt.Errorf("packages %q: link is not a boolean", k)
			}
			if link {
				continue // a link to a workspace directory, itself in the repository
			}
			name := k[i+len("node_modules/"):]
			alias, err := jsonString(p, "name")
			if err != nil {
				return nil, fmt.Errorf("packages %q: %v", k, err)
			}
			if alias != "" {
				name = alias
			}
			version, err := jsonString(p, "version")
			if err != nil {
				return nil, fmt.Errorf("packages %q: %v", k, err)
			}
			if err := add(name, version); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var walk func(raw json.RawMessage, depth int) error
	walk = func(raw json.RawMessage, depth int) error {
		if depth > 64 {
			return errors.New("dependencies nested too deep")
		}
		deps, err := jsonObject(raw)
		if err != nil {
			return fmt.Errorf("dependencies: %v", err)
		}
		for _, name := range sortedKeys(deps) {
			d, err := jsonObject(deps[name])
			if err != nil {
				return fmt.Errorf("dependencies %q: %v", name, err)
			}
			version, err := jsonString(d, "version")
			if err != nil {
				return fmt.Errorf("dependencies %q: %v", name, err)
			}
			if err := add(name, version); err != nil {
				return err
			}
			if sub, ok := d["dependencies"]; ok && string(sub) != "null" {
				if err := walk(sub, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if raw, ok := doc["dependencies"]; ok && string(raw) != "null" {
		if err := walk(raw, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ---- go.mod ----

// goModItems are the requires and every replacement module (a replace
// pointing at a directory names no registry version).
func goModItems(data []byte) ([]item, error) {
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	var out []item
	for _, r := range f.Require {
		out = append(out, item{name: r.Mod.Path, spec: r.Mod.Version, version: r.Mod.Version})
	}
	for _, r := range f.Replace {
		if r.New.Version == "" {
			out = append(out, bad("replace by a directory", r.Old.String()+" => "+r.New.Path))
			continue
		}
		out = append(out, item{name: r.New.Path, spec: r.New.Version, version: r.New.Version})
	}
	if len(out) > maxDecls {
		return nil, errTooMany
	}
	return out, nil
}

// ---- TOML: poetry.lock, uv.lock, Cargo.lock, pyproject.toml ----

// The TOML files are decoded into maps, never structs: the decoder matches
// struct fields case-insensitively, so a [[Package]] table could stand in
// for the [[package]] the tools read.

func tomlDoc(data []byte) (map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// tomlLockItems reads [[package]] tables' name and version.
func tomlLockItems(data []byte) ([]item, error) {
	doc, err := tomlDoc(data)
	if err != nil {
		return nil, err
	}
	raw, ok := doc["package"]
	if !ok {
		return nil, nil
	}
	tables, ok := raw.([]map[string]any)
	if !ok {
		return nil, errors.New("package is not an array of tables")
	}
	var out []item
	for i, t := range tables {
		if len(out) == maxDecls*10 {
			return nil, errTooMany
		}
		name, nok := t["name"].(string)
		version, vok := t["version"].(string)
		if !nok || !vok || name == "" {
			return nil, fmt.Errorf("package %d has no name and version", i+1)
		}
		out = append(out, item{name: name, version: version})
	}
	return out, nil
}

// pyprojectItems reads PEP 621's dependencies and optional-dependencies,
// PEP 735's dependency-groups, build-system.requires, and Poetry's
// dependency tables (main, dev and groups). A Poetry git, path or url
// dependency names no registry version.
func pyprojectItems(data []byte) ([]item, error) {
	doc, err := tomlDoc(data)
	if err != nil {
		return nil, err
	}
	var out []item
	pep508 := func(where string, v any) error {
		list, ok := v.([]any)
		if v == nil {
			return nil
		}
		if !ok {
			return fmt.Errorf("%s is not a list", where)
		}
		for _, e := range list {
			if len(out) == maxDecls {
				return errTooMany
			}
			s, ok := e.(string)
			if !ok {
				if _, table := e.(map[string]any); table && strings.HasPrefix(where, "dependency-groups") {
					continue // {include-group = "…"}: that group is read on its own
				}
				return fmt.Errorf("%s holds a non-string", where)
			}
			out = append(out, requirementItem(s))
		}
		return nil
	}
	table := func(v any) map[string]any { m, _ := v.(map[string]any); return m }
	project := table(doc["project"])
	if err := pep508("project.dependencies", project["dependencies"]); err != nil {
		return nil, err
	}
	for k, v := range table(project["optional-dependencies"]) {
		if err := pep508("project.optional-dependencies."+k, v); err != nil {
			return nil, err
		}
	}
	for k, v := range table(doc["dependency-groups"]) {
		if err := pep508("dependency-groups."+k, v); err != nil {
			return nil, err
		}
	}
	if err := pep508("build-system.requires", table(doc["build-system"])["requires"]); err != nil {
		return nil, err
	}
	poetry := table(table(doc["tool"])["poetry"])
	deps := []map[string]any{table(poetry["dependencies"]), table(poetry["dev-dependencies"])}
	for _, g := range table(poetry["group"]) {
		deps = append(deps, table(table(g)["dependencies"]))
	}
	for _, m := range deps {
		for _, name := range sortedKeys(m) {
			if strings.EqualFold(name, "python") {
				continue
			}
			if len(out) == maxDecls {
				return nil, errTooMany
			}
			out = append(out, poetryItem(name, m[name]))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key(vulndata.PyPI) < out[j].key(vulndata.PyPI) })
	return out, nil
}

// pyprojectSourceKeys are the settings in which a pyproject.toml says
// where packages come from: uv's indexes and per-package sources, its pip
// interface's index options, Poetry's and PDM's sources.
var pyprojectSourceKeys = [][]string{
	{"tool", "uv", "sources"}, {"tool", "uv", "index"}, {"tool", "uv", "index-url"},
	{"tool", "uv", "extra-index-url"}, {"tool", "uv", "find-links"}, {"tool", "uv", "no-index"},
	{"tool", "uv", "index-strategy"}, {"tool", "uv", "allow-insecure-host"}, {"tool", "uv", "pip"},
	{"tool", "poetry", "source"}, {"tool", "pdm", "source"},
}

// pyprojectSources are a pyproject.toml's source settings (names and
// canonical JSON; "" for none, or a file that does not parse, which its
// items report).
func pyprojectSources(data []byte) (string, string) {
	doc, err := tomlDoc(data)
	if err != nil {
		return "", ""
	}
	found := map[string]any{}
	var names []string
	for _, k := range pyprojectSourceKeys {
		var v any = doc
		for _, part := range k {
			m, _ := v.(map[string]any)
			v = m[part]
		}
		if v != nil {
			name := strings.Join(k, ".")
			found[name] = v
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", ""
	}
	canon, err := json.Marshal(found) // maps marshal with sorted keys
	if err != nil {
		canon = []byte(fmt.Sprintf("%v", found))
	}
	return strings.Join(names, ", "), string(canon)
}

// gemfileSources are a Gemfile's source, git_source, git, path and github
// lines (a block's gems come from its source) and its gem lines with such
// an option, whitespace folded: where Bundler fetches gems.
func gemfileSources(data []byte) (string, string) {
	return "source, git, path", linesMatching(data, gemfileSourceLine(), `source "https://rubygems.org"`)
}

var gemfileSourceLine = lazyRE(`^\s*(source|git_source|git|path|github)\b|^\s*gem\b.*(\b(source|git|github|gitlab|bitbucket|path)\s*:|:(source|git|github|gitlab|bitbucket|path)\s*=>)`)

// gemfileLockSources are Gemfile.lock's remote lines: the source each
// section's gems were resolved from.
func gemfileLockSources(data []byte) (string, string) {
	return "remote", linesMatching(data, gemfileLockRemote(), "remote: https://rubygems.org/")
}

var gemfileLockRemote = lazyRE(`^\s+remote:`)

// pomSources are pom.xml's repositories and pluginRepositories blocks,
// whitespace folded: where Maven fetches artifacts besides Central.
func pomSources(data []byte) (string, string) {
	var b strings.Builder
	for _, m := range pomRepositories().FindAllString(string(data), -1) {
		b.WriteString(strings.Join(strings.Fields(m), " "))
		b.WriteByte('\n')
	}
	return "repositories, pluginRepositories, systemPath", b.String()
}

var pomRepositories = lazyRE(`(?s)<(repositories|pluginRepositories)>.*?</(repositories|pluginRepositories)>|<systemPath>.*?</systemPath>`)

// cargoSourceKeys are what makes a Cargo.toml dependency come from
// somewhere other than crates.io: a git repository, a path, another
// registry.
var cargoSourceKeys = []string{"git", "branch", "tag", "rev", "path", "registry", "registry-index"}

// cargoSources are a Cargo.toml's dependencies that name a source (each
// table's entry, its source keys only) and its [patch] and [replace]
// tables, as canonical JSON: where cargo fetches crates besides crates.io.
func cargoSources(data []byte) (string, string) {
	doc, err := tomlDoc(data)
	if err != nil {
		return "", ""
	}
	found := map[string]any{}
	for _, k := range []string{"patch", "replace"} {
		if v, ok := doc[k]; ok {
			found[k] = v
		}
	}
	var tables []string
	for _, tb := range cargoDepTables(doc) {
		for name, v := range tb.deps {
			t, ok := v.(map[string]any)
			if !ok {
				continue
			}
			src := map[string]any{}
			for _, k := range cargoSourceKeys {
				if x, ok := t[k]; ok {
					src[k] = x
				}
			}
			if len(src) > 0 {
				found[tb.name+"."+name] = src
			}
		}
	}
	if len(found) == 0 {
		return "", ""
	}
	for k := range found {
		tables = append(tables, k)
	}
	sort.Strings(tables)
	if len(tables) > 5 {
		tables = append(tables[:5], "…")
	}
	canon, err := json.Marshal(found)
	if err != nil {
		canon = []byte(fmt.Sprintf("%v", found))
	}
	return strings.Join(tables, ", "), string(canon)
}

// linesMatching joins the lines of data re matches, each with its
// whitespace folded, leaving out the public default (def, folded).
func linesMatching(data []byte, re interface{ MatchString(string) bool }, def string) string {
	var b strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Join(strings.Fields(l), " "); re.MatchString(l) && f != def {
			b.WriteString(f)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// poetrySpec is a Poetry version constraint.
var poetrySpec = lazyRE(`^[0-9A-Za-z.*^~<>=!, |+-]*$`)

func poetryItem(name string, v any) item {
	spec := ""
	switch x := v.(type) {
	case string:
		spec = x
	case map[string]any:
		for _, src := range []string{"git", "path", "url"} {
			if _, ok := x[src]; ok {
				return bad("dependency that names no registry version", name+": "+src)
			}
		}
		spec, _ = x["version"].(string)
		if src, ok := x["source"]; ok {
			// From a named source, not the default index: what the
			// advisories judge is PyPI's package of that name.
			return bad("dependency from a named source", fmt.Sprintf("%s %s: source %v", name, spec, src))
		}
	case []any:
		return bad("dependency with several constraints", name)
	default:
		return bad("dependency", name)
	}
	spec = strings.TrimSpace(spec)
	if !poetrySpec().MatchString(spec) {
		return bad("dependency that names no registry version", name+": "+spec)
	}
	// Poetry's bare "1.2.3" is an exact pin; ^ and ~ are ranges.
	ver := pinned(spec)
	if ver == "" && spec != "" && !strings.ContainsAny(spec, "^~<>=!*, |") {
		ver = spec
	}
	return item{name: name, spec: spec, version: ver}
}

// ---- lockfiles and the other manifests ----

func lockItems(parse func([]byte) (map[string][]string, error)) func([]byte) ([]item, error) {
	return func(data []byte) ([]item, error) {
		m, err := parse(data)
		if err != nil {
			return nil, err
		}
		var out []item
		for _, name := range sortedKeys(m) {
			for _, v := range m[name] {
				out = append(out, item{name: name, version: v})
			}
		}
		return out, nil
	}
}

func declItems(parse func([]byte) ([]decl, error)) func([]byte) ([]item, error) {
	return func(data []byte) ([]item, error) {
		ds, err := parse(data)
		if err != nil {
			return nil, err
		}
		out := make([]item, 0, len(ds))
		for _, d := range ds {
			out = append(out, item{name: d.name, spec: d.spec, version: d.version})
		}
		return out, nil
	}
}
