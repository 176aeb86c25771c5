package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
)

// maxDecls bounds what one manifest may declare.
const maxDecls = 10000

var errTooMany = errors.New("too many declarations")

// ---- requirements.txt ----

// reqName is a PEP 508 name, then optional extras.
// Patterns are compiled on first use, not at start-up: every fixrail
// command links this package.
var reqName = lazyRE(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*`)

// reqComment is pip's comment (req_file.COMMENT_RE): a '#' at the line's
// start or after whitespace, to the end of the line.
var reqComment = lazyRE(`(^|\s+)#.*$`)

// logicalLines joins backslash continuations as pip's join_lines does;
// each carries its first physical line number. A line that is a comment
// (pip: COMMENT_RE matching at its start) never continues, whatever it
// ends with: the next line is a requirement of its own.
func logicalLines(data []byte) (lines []string, nums []int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxLockfile)
	var cur strings.Builder
	start, n := 0, 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if cur.Len() == 0 {
			start = n
		}
		comment := strings.HasPrefix(strings.TrimLeft(l, " \t\n\v\f\r"), "#")
		if strings.HasSuffix(l, "\\") && !comment {
			// pip strips the backslashes and joins with nothing between.
			cur.WriteString(strings.Trim(l, "\\"))
			continue
		}
		if comment {
			l = " " + l // still a comment after what it ends
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		nums = append(nums, start)
		cur.Reset()
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
		nums = append(nums, start)
	}
	return lines, nums
}

// parseRequirement reads one PEP 508 requirement (no URL form): name,
// extras, version specifier, markers after ';'.
func parseRequirement(s string) (name, spec string, ok bool) {
	if i := strings.Index(s, ";"); i >= 0 {
		s = s[:i]
	}
	m := reqName().FindStringSubmatchIndex(s)
	if m == nil || m[3]-m[2] > 200 {
		return "", "", false
	}
	name = s[m[2]:m[3]]
	rest := strings.TrimSpace(s[m[1]:])
	if strings.HasPrefix(rest, "@") {
		return "", "", false // a URL requirement names no version
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "("), ")")
	return name, strings.TrimSpace(rest), true
}

// urlRequirement reads PEP 508's "name[extras] @ url" form.
func urlRequirement(s string) (name, url string, ok bool) {
	if i := strings.Index(s, ";"); i >= 0 {
		s = s[:i]
	}
	m := reqName().FindStringSubmatchIndex(s)
	if m == nil || m[3]-m[2] > 200 {
		return "", "", false
	}
	rest := strings.TrimSpace(s[m[1]:])
	if !strings.HasPrefix(rest, "@") {
		return "", "", false
	}
	return s[m[2]:m[3]], strings.TrimSpace(rest[1:]), true
}

// pinned is the version a specifier pins exactly: "==1.2" or "===1.2" as
// its only clause (a wildcard "==1.*" pins nothing).
func pinned(spec string) string {
	spec = strings.TrimSpace(spec)
	if strings.Contains(spec, ",") {
		return ""
	}
	for _, op := range []string{"===", "=="} {
		if v, ok := strings.CutPrefix(spec, op); ok {
			v = strings.TrimSpace(v)
			if v == "" || strings.ContainsAny(v, "* \t<>=!~") {
				return ""
			}
			return v
		}
	}
	return ""
}

func parseRequirements(data []byte) ([]decl, error) {
	var out []decl
	lines, nums := logicalLines(data)
	for i, l := range lines {
		hashed := strings.Contains(l, "--hash")
		l = reqComment().ReplaceAllString(l, "")
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		// Options on the requirement's line (--hash=…) end it.
		if j := strings.Index(l, " --"); j >= 0 {
			l = l[:j]
		}
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "-") {
			continue // -r, -c, -e, --index-url: not a requirement of a named version
		}
		markers := ""
		if j := strings.Index(l, ";"); j >= 0 {
			markers = strings.TrimSpace(l[j+1:])
		}
		name, spec, ok := parseRequirement(l)
		if !ok {
			// "name @ url" still declares name: the build installs
			// whatever the URL holds, which no bump can name.
			if name, url, isURL := urlRequirement(l); isURL {
				if len(out) == maxDecls {
					return nil, errTooMany
				}
				out = append(out, decl{name: name, spec: url, section: "requirements", line: nums[i], markers: markers, blocked: "a direct URL reference: the build installs what the URL holds"})
			}
			continue
		}
		if len(out) == maxDecls {
			return nil, errTooMany
		}
		out = append(out, decl{name: name, spec: spec, version: pinned(spec), section: "requirements", line: nums[i], hashed: hashed, unbounded: spec == "", markers: markers})
	}
	return out, nil
}

// ---- pyproject.toml ----

func parsePyproject(data []byte) ([]decl, error) {
	var doc struct {
		Project struct {
			Dependencies         []string            `toml:"dependencies"`
			OptionalDependencies map[string][]string `toml:"optional-dependencies"`
		} `toml:"project"`
		// PEP 735 groups: requirement strings, or {include-group = "…"}
		// tables (that group is read on its own).
		DependencyGroups map[string][]any `toml:"dependency-groups"`
		Tool             struct {
			Poetry struct {
				Dependencies    map[string]any `toml:"dependencies"`
				DevDependencies map[string]any `toml:"dev-dependencies"`
				Group           map[string]struct {
					Dependencies map[string]any `toml:"dependencies"`
				} `toml:"group"`
			} `toml:"poetry"`
			// uv installs its dev dependencies by default, and its
			// overrides and constraints decide what any requirement
			// resolves to.
			UV struct {
				DevDependencies        []string `toml:"dev-dependencies"`
				OverrideDependencies   []string `toml:"override-dependencies"`
				ConstraintDependencies []string `toml:"constraint-dependencies"`
			} `toml:"uv"`
		} `toml:"tool"`
	}
	if err := strictTOML(data, &doc); err != nil {
		return nil, err
	}
	var out []decl
	add := func(section string, reqs []string) {
		for _, r := range reqs {
			if name, spec, ok := parseRequirement(r); ok && len(out) < maxDecls {
				out = append(out, decl{name: name, spec: spec, version: pinned(spec), section: section, unbounded: spec == ""})
			}
		}
	}
	add("project.dependencies", doc.Project.Dependencies)
	for _, k := range sortedKeys(doc.Project.OptionalDependencies) {
		add("project.optional-dependencies."+k, doc.Project.OptionalDependencies[k])
	}
	for _, k := range sortedKeys(doc.DependencyGroups) {
		var reqs []string
		for _, e := range doc.DependencyGroups[k] {
			if r, ok := e.(string); ok {
				reqs = append(reqs, r)
			}
		}
		add("dependency-groups."+k, reqs)
	}
	add("tool.uv.dev-dependencies", doc.Tool.UV.DevDependencies)
	add("tool.uv.override-dependencies", doc.Tool.UV.OverrideDependencies)
	add("tool.uv.constraint-dependencies", doc.Tool.UV.ConstraintDependencies)
	poetry := func(section string, m map[string]any) {
		for _, name := range sortedKeys(m) {
			if name == "" || strings.EqualFold(name, "python") || len(out) >= maxDecls {
				continue
			}
			spec := tomlVersion(m[name])
			// Poetry's bare "1.2.3" is an exact pin; ^ and ~ are ranges.
			v := pinned(spec)
			if v == "" && spec != "" && !strings.ContainsAny(spec, "^~<>=!*, ") {
				v = spec
			}
			out = append(out, decl{name: name, spec: spec, version: v, section: section, unbounded: spec == "" || spec == "*"})
		}
	}
	poetry("tool.poetry.dependencies", doc.Tool.Poetry.Dependencies)
	poetry("tool.poetry.dev-dependencies", doc.Tool.Poetry.DevDependencies)
	for _, g := range sortedKeys(doc.Tool.Poetry.Group) {
		poetry("tool.poetry.group."+g+".dependencies", doc.Tool.Poetry.Group[g].Dependencies)
	}
	return out, nil
}

// tomlVersion is a TOML dependency's version: a string, or a table's
// "version" key.
func tomlVersion(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if s, ok := x["version"].(string); ok {
			return s
		}
	}
	return ""
}

// tomlLockFile is what fixrail reads of Cargo.lock, poetry.lock and uv.lock:
// their [[package]] tables.
type tomlLockFile struct {
	Package []struct {
		Name    string `toml:"name"`
		Version string `toml:"version"`
		Source  any    `toml:"source"`
	} `toml:"package"`
}

// parseTOMLLock reads poetry.lock, uv.lock and Cargo.lock: each has
// [[package]] tables with name and version (Cargo.lock may hold several
// versions of one crate).
func parseTOMLLock(data []byte) (map[string][]string, error) {
	var doc tomlLockFile
	if err := strictTOML(data, &doc); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range doc.Package {
		if p.Name != "" && p.Version != "" {
			out[p.Name] = append(out[p.Name], p.Version)
		}
	}
	return out, nil
}

// tomlLockForeign names the entries of Cargo.lock, poetry.lock and uv.lock
// that the build takes from somewhere other than a package index: Cargo's
// source is "registry+…" or "sparse+…" for an index (none for a path, a
// [patch] to a local copy), uv's a table whose key says which (registry,
// or git, path, directory, editable, virtual, url), poetry's
// [package.source] a type (git, directory, file, url; none or "legacy"
// for an index).
func tomlLockForeign(data []byte) (map[string][]string, error) {
	return tomlForeign(data, false)
}

// cargoLockForeign is tomlLockForeign for Cargo.lock, where an entry with
// no source is a path (the workspace's own crates, or a [patch]), and one
// from another registry ({ registry = "corp" }) is not crates.io's.
func cargoLockForeign(data []byte) (map[string][]string, error) {
	return tomlForeign(data, true)
}

// cratesIOSource are the sources Cargo.lock records for crates.io: the
// git index's URL whatever protocol fetched it, or the sparse index's.
var cratesIOSource = map[string]bool{
	"registry+https://github.com/rust-lang/crates.io-index": true,
	"sparse+https://index.crates.io/":                       true,
}

func tomlForeign(data []byte, cargo bool) (map[string][]string, error) {
	var doc tomlLockFile
	if err := strictTOML(data, &doc); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range doc.Package {
		if p.Name == "" || p.Version == "" {
			continue
		}
		var from string
		switch src := p.Source.(type) {
		case nil:
			if cargo {
				from = "a path (no registry source)"
			}
		case string:
			switch {
			case cargo:
				// Another registry's crate of the same name and version
				// is not crates.io's, which the advisories judge.
				if !cratesIOSource[src] {
					from = src
				}
			case !strings.HasPrefix(src, "registry+") && !strings.HasPrefix(src, "sparse+"):
				from = src
			}
		case map[string]any:
			if t, ok := src["type"].(string); ok {
				// poetry's [package.source]
				if t != "legacy" {
					from = fmt.Sprintf("%s %v", t, src["url"])
				}
				break
			}
			if _, ok := src["registry"]; !ok || len(src) != 1 {
				for _, k := range sortedKeys(src) {
					from += fmt.Sprintf("%s %v ", k, src[k])
				}
				from = strings.TrimSpace(from)
			}
		default:
			from = fmt.Sprintf("%v", src)
		}
		if from != "" {
			out[p.Name] = append(out[p.Name], p.Version+" comes from "+safeText(from))
		}
	}
	return out, nil
}

// safeText is untrusted lockfile text fit for a one-line detail.
func safeText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// ---- package.json / package-lock.json ----

var npmSections = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}

func parsePackageJSON(data []byte) ([]decl, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []decl
	for _, sec := range npmSections {
		raw, ok := doc[sec]
		if !ok {
			continue
		}
		var deps map[string]string
		if err := json.Unmarshal(raw, &deps); err != nil {
			return nil, fmt.Errorf("%s: %v", sec, err)
		}
		for _, name := range sortedKeys(deps) {
			if len(out) == maxDecls {
				return nil, errTooMany
			}
			spec := deps[name]
			if name == "" {
				continue
			}
			if real, rng, ok := npmAlias(spec); ok {
				// "name": "npm:real@1.0.0" installs real 1.0.0 in
				// node_modules/name: it declares real, under another key.
				out = append(out, decl{name: real, key: name, spec: rng, version: npmExact(rng), section: sec, unbounded: rng == "" || rng == "*" || rng == "latest",
					blocked: fmt.Sprintf("an npm alias (%s.%s: %q): the built-in bumper does not edit it", sec, name, spec)})
				continue
			}
			out = append(out, decl{name: name, spec: spec, version: npmExact(spec), section: sec, unbounded: spec == "" || spec == "*" || spec == "latest"})
		}
	}
	if raw, ok := doc["overrides"]; ok {
		var err error
		if out, err = npmOverrides(out, raw, "overrides", 0); err != nil {
			return nil, err
		}
	}
	if raw, ok := doc["resolutions"]; ok {
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("resolutions: %v", err)
		}
		for _, key := range sortedKeys(res) {
			// yarn's keys: name, a/name, **/name, a/**/name.
			name := npmKeyName(key)
			if name == "" {
				continue
			}
			if len(out) == maxDecls {
				return nil, errTooMany
			}
			d := decl{name: name, section: "resolutions", key: key}
			if err := json.Unmarshal(res[key], &d.spec); err != nil {
				d.blocked = "a resolution that is not a string"
			}
			d.version = npmExact(d.spec)
			out = append(out, d)
		}
	}
	return out, nil
}

// npmAlias splits an alias spec "npm:real@range" (or "npm:real") into
// the package it installs and that package's range.
func npmAlias(spec string) (real, rng string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "npm:")
	if !ok {
		return "", "", false
	}
	real = rest
	if i := strings.LastIndexByte(rest, '@'); i > 0 {
		real, rng = rest[:i], rest[i+1:]
	}
	if real == "" || len(real) > 214 {
		return "", "", false
	}
	return real, rng, true
}

// npmKeyName is the package a yarn resolution key or npm override key
// names: its last path segment (a scope kept), without a "@range".
func npmKeyName(key string) string {
	segs := strings.Split(key, "/")
	name := segs[len(segs)-1]
	if len(segs) >= 2 && strings.HasPrefix(segs[len(segs)-2], "@") && segs[len(segs)-2] != "**" {
		name = segs[len(segs)-2] + "/" + name
	}
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	if name == "" || name == "**" || strings.HasPrefix(name, "@") && !strings.Contains(name, "/") || len(name) > 214 {
		return ""
	}
	return name
}

// npmOverrides reads npm's overrides: at the top level a string value is
// an override the bumper can edit; "$name" follows that dependency's spec;
// an object overrides inside a package's tree ("." its own version), which
// the bumper does not edit.
func npmOverrides(out []decl, raw json.RawMessage, where string, depth int) ([]decl, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if depth > 16 {
		return nil, fmt.Errorf("%s: nested deeper than 16", where)
	}
	for _, key := range sortedKeys(m) {
		if key == "." {
			continue
		}
		name := npmKeyName(key)
		var spec string
		isString := json.Unmarshal(m[key], &spec) == nil
		if name != "" {
			if len(out) == maxDecls {
				return nil, errTooMany
			}
			d := decl{name: name, section: "overrides", key: key, spec: spec, version: npmExact(spec)}
			switch {
			case !isString:
				var obj map[string]json.RawMessage
				if json.Unmarshal(m[key], &obj) == nil {
					json.Unmarshal(obj["."], &d.spec)
					d.version = npmExact(d.spec)
				}
				d.blocked = fmt.Sprintf("an object override (%s.%s): the built-in bumper edits only a top-level string", where, key)
			case depth > 0:
				d.blocked = fmt.Sprintf("a nested override (%s.%s): the built-in bumper edits only a top-level string", where, key)
			}
			if d.key == d.name {
				d.key = ""
			}
			if depth > 0 || !isString {
				d.key = key
			}
			out = append(out, d)
		}
		if !isString {
			var err error
			if out, err = npmOverrides(out, m[key], where+"."+key, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

var npmExactRe = lazyRE(`^=?v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`)

// npmExact is the version an npm spec pins exactly ("1.2.3", "=1.2.3").
func npmExact(spec string) string {
	if spec = strings.TrimSpace(spec); len(spec) > 128 {
		return ""
	}
	if m := npmExactRe().FindStringSubmatch(spec); m != nil {
		return m[1]
	}
	return ""
}

// packageLock is what fixrail reads of package-lock.json and
// npm-shrinkwrap.json: v2/v3's "packages" by install path, v1's
// "dependencies" by name.
type packageLock struct {
	LockfileVersion int `json:"lockfileVersion"`
	Packages        map[string]struct {
		Version  string `json:"version"`
		Name     string `json:"name"`
		Resolved string `json:"resolved"`
		Link     bool   `json:"link"`
	} `json:"packages"`
	Dependencies map[string]struct {
		Version  string `json:"version"`
		Resolved string `json:"resolved"`
	} `json:"dependencies"`
}

func parsePackageLock(data []byte) (map[string][]string, error) {
	var doc packageLock
	if err := strictJSON(data, &doc); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	if doc.Packages != nil {
		// Only the top-level install, node_modules/<name>: nested copies
		// belong to other packages' ranges and are not what the manifest
		// declares.
		for k, p := range doc.Packages {
			name, ok := strings.CutPrefix(k, "node_modules/")
			if !ok || strings.Contains(strings.TrimPrefix(name, "@"), "/node_modules/") || p.Version == "" {
				continue
			}
			if strings.HasPrefix(name, "@") {
				if strings.Count(name, "/") != 1 {
					continue
				}
			} else if strings.Contains(name, "/") {
				continue
			}
			out[name] = append(out[name], p.Version)
		}
		return out, nil
	}
	for name, d := range doc.Dependencies {
		if d.Version == "" {
			continue
		}
		// v1 writes an aliased install's version as "npm:real@1.0.0".
		if _, v, ok := npmAlias(d.Version); ok {
			out[name] = append(out[name], v)
			continue
		}
		out[name] = append(out[name], d.Version)
	}
	return out, nil
}

// npmLockForeign names the copies of a package that package-lock.json (or
// npm-shrinkwrap.json) installs from somewhere other than a registry: a
// git checkout, a local tarball, a link to a directory. Any copy counts,
// nested ones too (each is installed), keyed by the package's own name
// (an alias's entry carries it in "name"). A registry tarball URL of any
// host is a registry's: mirrors and scoped registries lay their URLs out
// differently, and the advisory judges the package, not the host.
func npmLockForeign(data []byte) (map[string][]string, error) {
	var doc packageLock
	if err := strictJSON(data, &doc); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	if doc.Packages != nil {
		for k, p := range doc.Packages {
			i := strings.LastIndex(k, "node_modules/")
			if i < 0 || (i > 0 && k[i-1] != '/') {
				continue // the root, a workspace member's own directory
			}
			name := k[i+len("node_modules/"):]
			if p.Name != "" {
				name = p.Name
			}
			if name == "" {
				continue
			}
			switch {
			case p.Link:
				out[name] = append(out[name], "comes from a link to "+safeText(p.Resolved))
			case npmForeignSpec(p.Resolved):
				out[name] = append(out[name], safeText(p.Version)+" comes from "+safeText(p.Resolved))
			default:
				npmTarballOther(out, name, p.Version, p.Resolved)
			}
		}
		return out, nil
	}
	// v1: a dependency not from a registry has its source as its version.
	for name, d := range doc.Dependencies {
		switch {
		case name == "":
		case npmForeignSpec(d.Version):
			out[name] = append(out[name], "comes from "+safeText(d.Version))
		default:
			v := d.Version
			if _, av, ok := npmAlias(v); ok {
				v = av
			}
			npmTarballOther(out, name, v, d.Resolved)
		}
	}
	return out, nil
}

// npmTarballOther records an entry whose resolved URL is a registry
// tarball of another package or version than the entry says: npm ci
// fetches the URL (and checks only its integrity), so "lib 1.0.5" that
// resolves lib-1.0.0.tgz installs 1.0.0 (lockfile injection). It is
// recorded under the name the entry claims and the one the URL's path
// names. A URL without the registry layout (NAME/-/BASENAME-VERSION.tgz)
// is not judged, except on the public registry, which serves no other.
func npmTarballOther(out map[string][]string, name, version, resolved string) {
	if version == "" || resolved == "" {
		return
	}
	u, err := url.Parse(resolved)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return
	}
	public := u.Host == "registry.npmjs.org" || u.Host == "registry.yarnpkg.com"
	pkg, ver, ok := npmTarballOf(u.Path)
	switch {
	case pkg == "" && !public:
		return
	case ok && pkg == name && ver == version && u.RawQuery == "" && u.Fragment == "":
		return
	}
	msg := fmt.Sprintf("%s resolves %s, not the registry tarball of %s %s", safeText(version), safeText(resolved), safeText(name), safeText(version))
	out[name] = append(out[name], msg)
	if pkg != "" && pkg != name {
		out[pkg] = append(out[pkg], msg)
	}
}

// npmTarballOf reads a registry tarball path, .../NAME/-/FILE: NAME (which
// may be @scope/name), and the version when FILE is BASENAME-VERSION.tgz
// (BASENAME is NAME without its scope, or NAME); ok is false when FILE is
// not NAME's tarball, and pkg is "" when the path has no such layout.
func npmTarballOf(p string) (pkg, version string, ok bool) {
	i := strings.LastIndex(p, "/-/")
	if i < 0 {
		return "", "", false
	}
	dir, file := p[:i], p[i+len("/-/"):]
	segs := strings.Split(dir, "/")
	pkg = segs[len(segs)-1]
	if len(segs) > 1 && strings.HasPrefix(segs[len(segs)-2], "@") {
		pkg = segs[len(segs)-2] + "/" + pkg
	}
	if pkg == "" {
		return "", "", false
	}
	base := pkg[strings.LastIndexByte(pkg, '/')+1:]
	file, isTgz := strings.CutSuffix(file, ".tgz")
	if !isTgz {
		return pkg, "", false
	}
	for _, prefix := range []string{base + "-", pkg + "-"} {
		if v, cut := strings.CutPrefix(file, prefix); cut && v != "" && !strings.Contains(v, "/") {
			return pkg, v, true
		}
	}
	return pkg, "", false
}

// npmForeignSpec reports whether a lockfile's resolved source (or a v1
// version) is a git repository or a local file, as npm writes them.
func npmForeignSpec(s string) bool {
	for _, p := range []string{"git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:", "file:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// ---- go.mod / go.sum ----

func parseGoMod(data []byte) ([]decl, error) {
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	var out []decl
	for _, r := range f.Require {
		if len(out) == maxDecls {
			return nil, errTooMany
		}
		line := 0
		if r.Syntax != nil {
			line = r.Syntax.Start.Line
		}
		sec := "require"
		if r.Indirect {
			sec = "require (indirect)"
		}
		out = append(out, decl{name: r.Mod.Path, spec: r.Mod.Version, version: r.Mod.Version, section: sec, line: line})
	}
	return out, nil
}

// goReplaced lists modules a replace directive overrides (any version or
// the required one): bumping the require line would change nothing.
func goReplaced(data []byte) map[string]bool {
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, r := range f.Replace {
		out[r.Old.Path] = true
	}
	return out
}

// parseGoSum records a version only when go.sum holds both its module hash
// and its go.mod hash (what go needs to build with it).
func parseGoSum(data []byte) (map[string][]string, error) {
	type key struct{ mod, ver string }
	zip, mod := map[key]bool{}, map[key]bool{}
	for i, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") {
			return nil, fmt.Errorf("go.sum line %d: not \"module version h1:hash\"", i+1)
		}
		if v, ok := strings.CutSuffix(f[1], "/go.mod"); ok {
			mod[key{f[0], v}] = true
		} else {
			zip[key{f[0], f[1]}] = true
		}
	}
	out := map[string][]string{}
	for k := range zip {
		if mod[k] {
			out[k.mod] = append(out[k.mod], k.ver)
		}
	}
	return out, nil
}

// ---- pom.xml ----

func parsePom(data []byte) ([]decl, error) {
	type dep struct {
		GroupID    string `xml:"groupId"`
		ArtifactID string `xml:"artifactId"`
		Version    string `xml:"version"`
	}
	var doc struct {
		Properties struct {
			Any []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"properties"`
		Dependencies         []dep `xml:"dependencies>dependency"`
		DependencyManagement []dep `xml:"dependencyManagement>dependencies>dependency"`
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	// No external entities or DTD expansion: encoding/xml never fetches or
	// expands them, and Entity stays nil.
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	props := map[string]string{}
	for _, p := range doc.Properties.Any {
		props[p.XMLName.Local] = strings.TrimSpace(p.Value)
	}
	var out []decl
	add := func(section string, deps []dep) {
		for _, x := range deps {
			g, a := strings.TrimSpace(x.GroupID), strings.TrimSpace(x.ArtifactID)
			if g == "" || a == "" || len(out) >= maxDecls {
				continue
			}
			spec := strings.TrimSpace(x.Version)
			v := spec
			if strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}") {
				v = props[v[2:len(v)-1]]
			}
			if strings.ContainsAny(v, "[](),${} ") {
				v = "" // a range or an unresolved property pins nothing
			}
			out = append(out, decl{name: g + ":" + a, spec: spec, version: v, section: section, unbounded: spec == ""})
		}
	}
	add("dependencies", doc.Dependencies)
	add("dependencyManagement", doc.DependencyManagement)
	return out, nil
}

// ---- Cargo.toml ----

// cargoTable is one of a Cargo.toml's dependency tables, by its dotted
// name.
type cargoTable struct {
	name string
	deps map[string]any
}

// cargoDepTables are a Cargo.toml's dependency tables: the package's, a
// platform's ([target.'cfg(unix)'.dependencies], built on that platform),
// and the workspace's [workspace.dependencies] its members inherit with
// { workspace = true }.
func cargoDepTables(doc map[string]any) []cargoTable {
	var tables []cargoTable
	kinds := []string{"dependencies", "dev-dependencies", "build-dependencies"}
	for _, k := range kinds {
		d, _ := doc[k].(map[string]any)
		tables = append(tables, cargoTable{k, d})
	}
	targets, _ := doc["target"].(map[string]any)
	for _, t := range sortedKeys(targets) {
		tt, _ := targets[t].(map[string]any)
		for _, k := range kinds {
			if d, ok := tt[k].(map[string]any); ok {
				tables = append(tables, cargoTable{"target." + safeText(t) + "." + k, d})
			}
		}
	}
	if ws, ok := doc["workspace"].(map[string]any); ok {
		d, _ := ws["dependencies"].(map[string]any)
		tables = append(tables, cargoTable{"workspace.dependencies", d})
	}
	return tables
}

func parseCargoToml(data []byte) ([]decl, error) {
	var doc map[string]any
	if err := strictTOML(data, &doc); err != nil {
		return nil, err
	}
	var out []decl
	for _, tb := range cargoDepTables(doc) {
		sec, deps := tb.name, tb.deps
		for _, name := range sortedKeys(deps) {
			if len(out) == maxDecls {
				return nil, errTooMany
			}
			crate := name
			if t, ok := deps[name].(map[string]any); ok {
				if p, ok := t["package"].(string); ok && p != "" {
					crate = p // a renamed dependency
				}
			}
			if crate == "" {
				continue
			}
			spec := tomlVersion(deps[name])
			v := ""
			if s, ok := strings.CutPrefix(strings.TrimSpace(spec), "="); ok {
				v = strings.TrimSpace(s)
			}
			out = append(out, decl{name: crate, spec: spec, version: v, section: sec, unbounded: spec == "" || spec == "*"})
		}
	}
	return out, nil
}

// ---- Gemfile / Gemfile.lock ----

var gemLine = lazyRE(`^\s*gem\s*\(?\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']((?:\s*,\s*["'][^"']*["'])*)`)
var gemReq = lazyRE(`["']([^"']*)["']`)

func parseGemfile(data []byte) ([]decl, error) {
	var out []decl
	for i, l := range strings.Split(string(data), "\n") {
		if len(l) > 4096 {
			continue
		}
		m := gemLine().FindStringSubmatch(l)
		if m == nil || len(m[1]) > 200 {
			continue
		}
		if len(out) == maxDecls {
			return nil, errTooMany
		}
		var reqs []string
		for _, r := range gemReq().FindAllStringSubmatch(m[2], -1) {
			reqs = append(reqs, strings.TrimSpace(r[1]))
		}
		spec := strings.Join(reqs, ", ")
		v := ""
		if len(reqs) == 1 {
			if s, ok := strings.CutPrefix(reqs[0], "="); ok {
				v = strings.TrimSpace(s)
			} else if !strings.ContainsAny(reqs[0], "<>~! ") {
				v = reqs[0]
			}
		}
		out = append(out, decl{name: m[1], spec: spec, version: v, section: "gem", line: i + 1, unbounded: spec == ""})
	}
	return out, nil
}

// gemfileLockForeign names the gems Gemfile.lock takes from a GIT or
// PATH section (or a plugin's source), not from a GEM remote.
func gemfileLockForeign(data []byte) (map[string][]string, error) {
	out := map[string][]string{}
	section, remote, inSpecs := "", "", false
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		switch {
		case l != "" && !strings.HasPrefix(l, " "):
			section, remote, inSpecs = l, "", false
			continue
		case l == "  specs:":
			inSpecs = true
			continue
		case l == "":
			inSpecs = false
			continue
		}
		if r, ok := strings.CutPrefix(l, "  remote: "); ok {
			remote = r
		}
		if !inSpecs || section == "GEM" {
			continue
		}
		if m := gemSpecLine().FindStringSubmatch(l); m != nil && len(l) <= 512 {
			out[m[1]] = append(out[m[1]], m[2]+" comes from "+safeText(section+" "+remote))
		}
	}
	return out, nil
}

var gemSpecLine = lazyRE(`^    ([A-Za-z0-9][A-Za-z0-9._-]*) \(([^)\s]+)\)$`)

// parseGemfileLock reads the 4-space "name (version)" lines under a
// "specs:" of a GEM (or PATH/GIT) section; the version may carry a
// platform suffix, which the ecosystem's ordering strips.
func parseGemfileLock(data []byte) (map[string][]string, error) {
	out := map[string][]string{}
	inSpecs := false
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		switch {
		case l == "  specs:":
			inSpecs = true
			continue
		case l == "" || !strings.HasPrefix(l, " "):
			inSpecs = false
			continue
		}
		if !inSpecs {
			continue
		}
		if m := gemSpecLine().FindStringSubmatch(l); m != nil && len(l) <= 512 {
			out[m[1]] = append(out[m[1]], m[2])
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
