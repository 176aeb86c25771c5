package manifest

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Declared is every place a repository declares one package: what Find
// returns, and what it found but cannot read or the bumper can never edit.
type Declared struct {
	Deps []Dep
	// Blocked are places that may decide the package's version and that
	// fixrail cannot read or edit: an include it cannot follow, a
	// lockfile of another tool, a Cargo source replacement or [patch].
	Blocked []Blocked
	// Replaces are Go replace directives for the package, in a go.mod that
	// declares it or in the go.work above one.
	Replaces []Replace
}

// Blocked is one such place, file and line.
type Blocked struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Why  string `json:"why"`
}

func (b Blocked) String() string {
	if b.Line == 0 {
		return fmt.Sprintf("%s: %s", b.File, b.Why)
	}
	return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Why)
}

// Replace is one replace directive of a Go module.
type Replace struct {
	File       string `json:"file"` // go.mod or go.work, repo-relative
	Line       int    `json:"line"`
	OldVersion string `json:"old_version"` // "" replaces every version
	New        string `json:"new"`         // a module path or a directory
	NewVersion string `json:"new_version"` // "" for a directory
}

// Applies reports whether the directive replaces version v of its module.
func (r Replace) Applies(v string) bool {
	return r.OldVersion == "" || strings.TrimPrefix(r.OldVersion, "v") == strings.TrimPrefix(v, "v")
}

// Local reports whether it replaces the module with a directory.
func (r Replace) Local() bool { return r.NewVersion == "" }

func (r Replace) String() string {
	old := ""
	if r.OldVersion != "" {
		old = " " + r.OldVersion
	}
	nv := ""
	if r.NewVersion != "" {
		nv = " " + r.NewVersion
	}
	return fmt.Sprintf("%s:%d: replace%s => %s%s", r.File, r.Line, old, r.New, nv)
}

// Limits on following requirement includes.
const (
	maxIncludeDepth = 4
	maxIncludes     = 64
)

// FindAll is Find with what Find leaves out: the requirement files that
// -r/-c lines include (their declarations are Deps, with Via naming the
// line), the includes it cannot follow, and for Go the replace
// directives of go.mod and go.work.
func FindAll(root string, eco vulndata.Ecosystem, name, hint string) (*Declared, error) {
	manifests, err := walkManifests(root, eco)
	if err != nil {
		return nil, err
	}
	if h, err := pathguard.CleanRel(hint); err == nil && hint != "" {
		for i, m := range manifests {
			if m == h {
				manifests = append([]string{m}, append(manifests[:i:i], manifests[i+1:]...)...)
				break
			}
		}
	}
	want := eco.NormalizeName(name)
	out := &Declared{}
	var searched []string
	read := map[string]bool{}
	type pending struct {
		rel, via string
		depth    int
	}
	var queue []pending
	for _, m := range manifests {
		queue = append(queue, pending{rel: m})
	}
	var unreadable []string
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		if read[q.rel] {
			continue
		}
		read[q.rel] = true
		var deps []Dep
		var data []byte
		if q.via == "" {
			deps, err = Read(root, q.rel)
		} else {
			deps, data, err = readIncluded(root, q.rel, q.via)
		}
		if err != nil {
			// A file the build reads that fixrail cannot (an include, a
			// manifest or its lockfile that does not parse, or holds a key
			// only a case-blind reader would take) may pin the package
			// anywhere: it is named, never passed over as declaring nothing.
			f, l, why := q.rel, 0, fmt.Sprintf("fixrail cannot read it: %v", err)
			if q.via != "" {
				f, l = splitVia(q.via)
				why = fmt.Sprintf("includes %s, which fixrail cannot read: %v", q.rel, err)
			}
			out.Blocked = append(out.Blocked, Blocked{File: f, Line: l, Why: why})
			unreadable = append(unreadable, fmt.Sprintf("%s (%v)", q.rel, err))
			continue
		}
		searched = append(searched, q.rel)
		for _, d := range deps {
			if eco.NormalizeName(d.Name) == want {
				out.Deps = append(out.Deps, d)
				// A lockfile of another tool decides what installs, and
				// fixrail reads none: judging package.json's specs (or a
				// package-lock.json the build may not read) is no verdict.
				for _, b := range otherNPMLocks(root, d) {
					if !slices.Contains(out.Blocked, b) {
						out.Blocked = append(out.Blocked, b)
					}
				}
				// A locked copy from git or a path is not the package
				// the advisories judge, whatever version it says.
				for _, f := range d.Foreign {
					b := Blocked{File: d.Lockfile, Why: fmt.Sprintf("%s %s, not the registry the advisories judge", d.Name, f)}
					if !slices.Contains(out.Blocked, b) {
						out.Blocked = append(out.Blocked, b)
					}
				}
			}
		}
		if eco != vulndata.PyPI || !isRequirementsFile(q.rel, q.via) {
			continue
		}
		if data == nil {
			if data, err = readIn(root, q.rel, MaxManifest); err != nil {
				continue
			}
		}
		for _, inc := range requirementIncludes(data) {
			via := fmt.Sprintf("%s:%d", q.rel, inc.line)
			target, why := includeTarget(q.rel, inc.target)
			switch {
			case why != "":
				out.Blocked = append(out.Blocked, Blocked{File: q.rel, Line: inc.line, Why: fmt.Sprintf("%s %s: %s", inc.flag, inc.target, why)})
			case q.depth+1 > maxIncludeDepth || len(read)+len(queue) >= maxIncludes:
				out.Blocked = append(out.Blocked, Blocked{File: q.rel, Line: inc.line, Why: fmt.Sprintf("%s %s: includes nested deeper than %d, or more than %d files", inc.flag, inc.target, maxIncludeDepth, maxIncludes)})
			case !read[target]:
				queue = append(queue, pending{rel: target, via: via, depth: q.depth + 1})
			}
		}
	}
	if eco == vulndata.Go {
		out.Replaces = goReplaces(root, out.Deps, name)
	}
	if eco == vulndata.Cargo && len(out.Deps) > 0 {
		out.Blocked = append(out.Blocked, cargoOverrides(root, manifests, out.Deps, name)...)
	}
	if len(out.Deps) == 0 {
		if len(unreadable) > 0 {
			// Not "not in the repository": it may be in what could not be read.
			return out, fmt.Errorf("%w: %s not found in what fixrail could read, and it cannot read %s", ErrParse, name, strings.Join(unreadable, ", "))
		}
		return out, &NotInManifestError{Ecosystem: eco, Name: name, Searched: searched}
	}
	return out, nil
}

// otherNPMLocks are the lockfiles of yarn, pnpm and bun that may decide
// which version of an npm declaration installs: in the package.json's
// directory and each one above it, up to the nearest holding one of
// them or the lockfile fixrail reads for it, else to the root (a
// workspace's lockfile is at its root). Each is blocked: fixrail reads
// none of them, and yarn's or pnpm's install keeps whatever they lock
// (a nested copy some other package's range pins) whatever package.json
// now says.
func otherNPMLocks(root string, d Dep) []Blocked {
	if d.Ecosystem != vulndata.NPM || path.Base(d.Manifest) != "package.json" {
		return nil
	}
	stop := "."
	if d.Lockfile != "" {
		stop = path.Dir(d.Lockfile)
	}
	var out []Blocked
	for dir := path.Dir(d.Manifest); ; dir = path.Dir(dir) {
		for _, f := range []struct{ file, tool string }{{"yarn.lock", "yarn"}, {"pnpm-lock.yaml", "pnpm"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"}} {
			// Present in any form (a link too): the tool would read it.
			rel := path.Join(dir, f.file)
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				continue
			}
			why := fmt.Sprintf("%s's lockfile may decide which version of %s installs for %s; fixrail does not read it", f.tool, d.Name, d.Manifest)
			if d.Lockfile != "" {
				why += fmt.Sprintf(" (it reads %s, which the build may not)", d.Lockfile)
			}
			out = append(out, Blocked{File: rel, Why: why})
		}
		// The nearest lockfile governs: none above it is read.
		if len(out) > 0 || dir == stop || dir == "." || dir == "/" {
			return out
		}
	}
}

func splitVia(via string) (string, int) {
	i := strings.LastIndexByte(via, ':')
	if i < 0 {
		return via, 0
	}
	n := 0
	fmt.Sscanf(via[i+1:], "%d", &n)
	return via[:i], n
}

// isRequirementsFile: a requirements-format file, found or included.
func isRequirementsFile(rel, via string) bool {
	return via != "" || formatFor(rel) == &formats[0]
}

// readIncluded reads an included requirements file (any name: a
// constraints.txt is one) and its declarations, each with Via set.
func readIncluded(root, rel, via string) ([]Dep, []byte, error) {
	data, err := readIn(root, rel, MaxManifest)
	if err != nil {
		return nil, nil, err
	}
	decls, err := parseRequirements(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrParse, rel, err)
	}
	out := make([]Dep, 0, len(decls))
	for _, d := range decls {
		out = append(out, Dep{
			Ecosystem: vulndata.PyPI, Name: d.name, Manifest: rel, Line: d.line, Spec: d.spec, Version: d.version,
			Section: d.section, Hashed: d.hashed, Unbounded: d.unbounded, Markers: d.markers, Unbumpable: d.blocked, Via: via,
		})
	}
	return out, data, nil
}

// include is one -r/-c line of a requirements file.
type include struct {
	flag, target string
	line         int
}

// requirementIncludes reads the -r/--requirement and -c/--constraint
// lines of a requirements file, in order.
func requirementIncludes(data []byte) []include {
	var out []include
	lines, nums := logicalLines(data)
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if j := strings.Index(l, " #"); j >= 0 {
			l = strings.TrimSpace(l[:j])
		}
		for _, f := range []struct{ short, long, name string }{{"-r", "--requirement", "-r"}, {"-c", "--constraint", "-c"}} {
			var rest string
			switch {
			case strings.HasPrefix(l, f.long):
				rest = strings.TrimPrefix(l, f.long)
				if !strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "\t") {
					continue
				}
				rest = strings.TrimPrefix(rest, "=")
			case strings.HasPrefix(l, f.short):
				rest = strings.TrimPrefix(l, f.short)
			default:
				continue
			}
			if rest = strings.TrimSpace(rest); rest != "" && len(out) < maxDecls {
				out = append(out, include{flag: f.name, target: rest, line: nums[i]})
			}
		}
	}
	return out
}

// includeTarget resolves an include against the including file's
// directory (pip's rule), or says why fixrail cannot follow it.
func includeTarget(from, target string) (string, string) {
	if strings.Contains(target, "://") {
		return "", "a URL: fixrail neither fetches nor edits it"
	}
	if strings.HasPrefix(target, "/") || strings.HasPrefix(target, "~") || strings.ContainsAny(target, "$%") {
		return "", "a path outside the repository (or one the environment decides)"
	}
	rel, err := pathguard.CleanRel(path.Join(path.Dir(from), target))
	if err != nil {
		return "", "a path outside the repository"
	}
	return rel, ""
}

// walkManifests lists the repository's manifests of eco, sorted.
func walkManifests(root string, eco vulndata.Ecosystem) ([]string, error) {
	var manifests []string
	err := walk(root, func(rel string, regular bool) {
		if regular {
			if f := formatFor(rel); f != nil && f.eco == eco {
				manifests = append(manifests, rel)
			}
		}
	})
	sort.Strings(manifests)
	return manifests, err
}

// goReplaces reads the replace directives for name in every go.mod that
// declares it and in the go.work files above those modules (the nearest
// one is the workspace go uses; every one is read, as any may be active
// for some build).
func goReplaces(root string, deps []Dep, name string) []Replace {
	var out []Replace
	files := map[string]bool{}
	for _, d := range deps {
		if path.Base(d.Manifest) != "go.mod" {
			continue
		}
		files[d.Manifest] = true
		for dir := path.Dir(d.Manifest); ; dir = path.Dir(dir) {
			files[path.Join(dir, "go.work")] = true
			if dir == "." || dir == "/" {
				break
			}
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		data, err := readIn(root, f, MaxManifest)
		if err != nil {
			continue
		}
		out = append(out, parseReplaces(f, data, name)...)
	}
	return out
}

// parseReplaces is the replace directives for name in a go.mod or go.work.
func parseReplaces(file string, data []byte, name string) []Replace {
	var reps []*modfile.Replace
	if path.Base(file) == "go.work" {
		wf, err := modfile.ParseWork(file, data, nil)
		if err != nil {
			return nil
		}
		reps = wf.Replace
	} else {
		mf, err := modfile.Parse(file, data, nil)
		if err != nil {
			return nil
		}
		reps = mf.Replace
	}
	var out []Replace
	for _, r := range reps {
		if r.Old.Path != name {
			continue
		}
		line := 0
		if r.Syntax != nil {
			line = r.Syntax.Start.Line
		}
		out = append(out, Replace{File: file, Line: line, OldVersion: r.Old.Version, New: r.New.Path, NewVersion: r.New.Version})
	}
	return out
}

// Instance is one copy of a package a lockfile installs.
type Instance struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// parseLockInstances reads every copy package-lock.json installs, nested
// ones included (node_modules/a/node_modules/pkg, or v1's nested
// "dependencies"), name → copies sorted by path.
func parseLockInstances(data []byte) (map[string][]Instance, error) {
	type v1dep struct {
		Version      string           `json:"version"`
		Dependencies map[string]v1dep `json:"dependencies"`
	}
	var doc struct {
		Packages map[string]struct {
			Version string `json:"version"`
			Name    string `json:"name"`
		} `json:"packages"`
		Dependencies map[string]v1dep `json:"dependencies"`
	}
	if err := strictJSON(data, &doc); err != nil {
		return nil, err
	}
	out := map[string][]Instance{}
	if doc.Packages != nil {
		for k, p := range doc.Packages {
			i := strings.LastIndex(k, "node_modules/")
			if i < 0 || p.Version == "" || (i > 0 && k[i-1] != '/') {
				continue
			}
			name := k[i+len("node_modules/"):]
			if name == "" || strings.Count(strings.TrimPrefix(name, "@"), "/") > boolInt(strings.HasPrefix(name, "@")) {
				continue
			}
			// An aliased install (node_modules/alias) names the package it
			// is: that is what the advisories judge.
			if p.Name != "" {
				name = p.Name
			}
			out[name] = append(out[name], Instance{Path: k, Version: p.Version})
		}
	} else {
		var visit func(prefix string, deps map[string]v1dep, depth int)
		visit = func(prefix string, deps map[string]v1dep, depth int) {
			if depth > 64 {
				return
			}
			for name, d := range deps {
				p := prefix + "node_modules/" + name
				if real, v, ok := npmAlias(d.Version); ok {
					out[real] = append(out[real], Instance{Path: p, Version: v})
				} else if d.Version != "" && name != "" {
					out[name] = append(out[name], Instance{Path: p, Version: d.Version})
				}
				visit(p+"/", d.Dependencies, depth+1)
			}
		}
		visit("", doc.Dependencies, 0)
	}
	for k := range out {
		slices.SortFunc(out[k], func(a, b Instance) int { return strings.Compare(a.Path, b.Path) })
	}
	return out, nil
}

// workspaceLock finds the lockfile of the npm workspace whose member is
// the package.json at rel: the nearest package-lock.json above it whose
// "packages" lists the member's directory (npm records every member
// there). locked is what the member resolves, name → version: its own
// MEMBER/node_modules/NAME, else the root's hoisted node_modules/NAME;
// keys names the member's own copies' entries. "" when it is no member.
func workspaceLock(root, rel string) (lockRel string, locked map[string][]string, keys map[string]string, err error) {
	member := path.Dir(rel)
	if member == "." {
		return "", nil, nil, nil
	}
	for d := path.Dir(member); ; d = path.Dir(d) {
		lr := path.Join(d, "package-lock.json")
		data, rerr := readIn(root, lr, MaxLockfile)
		switch {
		case errors.Is(rerr, os.ErrNotExist):
		case rerr != nil:
			return "", nil, nil, rerr
		default:
			var doc struct {
				Packages map[string]struct {
					Version string `json:"version"`
				} `json:"packages"`
			}
			if err := strictJSON(data, &doc); err != nil {
				return "", nil, nil, fmt.Errorf("%w: %s: %v", ErrParse, lr, err)
			}
			key := member
			if d != "." {
				key = strings.TrimPrefix(member, d+"/")
			}
			if _, ok := doc.Packages[key]; ok {
				if locked, err = parsePackageLock(data); err != nil {
					return "", nil, nil, fmt.Errorf("%w: %s: %v", ErrParse, lr, err)
				}
				keys = map[string]string{}
				own := key + "/node_modules/"
				for k, p := range doc.Packages {
					name, ok := strings.CutPrefix(k, own)
					if !ok || p.Version == "" || strings.Contains(name, "/node_modules/") {
						continue
					}
					locked[name] = []string{p.Version}
					keys[name] = k
				}
				return lr, locked, keys, nil
			}
		}
		if d == "." {
			return "", nil, nil, nil
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nestedInstances are the copies of name other than the one at lock key
// top (that one is Dep.Locked).
func nestedInstances(all map[string][]Instance, name, top string) []Instance {
	var out []Instance
	for _, in := range all[name] {
		if in.Path != top {
			out = append(out, in)
		}
	}
	return out
}

// ErrUnbumpable (wrapped in *UnbumpableError) means the bumper edits some
// declarations of the package and not others: a partial bump would leave
// the build on the old version, so the pipeline escalates naming them.
var ErrUnbumpable = errors.New("a declaration the built-in bumper cannot edit")

// UnbumpableError names each declaration BumpAll could not edit.
type UnbumpableError struct{ Why []string }

func (e *UnbumpableError) Error() string {
	return fmt.Sprintf("%v: %s", ErrUnbumpable, strings.Join(e.Why, "; "))
}
func (e *UnbumpableError) Unwrap() error { return ErrUnbumpable }

// Where names a declaration for a human: file:line and section.
func (d *Dep) Where() string {
	s := d.Manifest
	if d.Line > 0 {
		s += fmt.Sprintf(":%d", d.Line)
	}
	sec := d.Section
	if d.Key != "" && d.Key != d.Name {
		sec += "." + d.Key
	}
	if sec != "" && sec != "requirements" {
		s += " (" + sec + ")"
	}
	if d.Markers != "" {
		s += " [; " + d.Markers + "]"
	}
	return s
}

// BumpAll makes the built-in bump of every one of deps to target, or none:
// each file is edited in memory first, and nothing is written unless every
// declaration was. All of them beyond the bumper is ErrNoBuiltIn (the
// agent edits); some of them is *UnbumpableError.
func BumpAll(root string, deps []Dep, target string) (*Edit, error) {
	return bumpAll(root, deps, target, false)
}

// CheckBumpAll is BumpAll without writing: the same answer, nothing
// changed (the plan asks it before any edit).
func CheckBumpAll(root string, deps []Dep, target string) error {
	_, err := bumpAll(root, deps, target, true)
	return err
}

func bumpAll(root string, deps []Dep, target string, dryRun bool) (*Edit, error) {
	if len(deps) == 0 {
		return nil, fmt.Errorf("%w: nothing to bump", ErrNoBuiltIn)
	}
	type file struct {
		full string
		data []byte
	}
	files := map[string]*file{}
	var order []string
	var why []string
	skipped := 0
	edit := &Edit{}
	regens := map[string]bool{}
	for _, dep := range deps {
		f := files[dep.Manifest]
		if f == nil {
			full, err := pathguard.ResolveWithin(root, dep.Manifest)
			if err != nil {
				return nil, err
			}
			data, err := pathguard.ReadRegular(full, MaxManifest)
			if err != nil {
				return nil, err
			}
			f = &file{full: full, data: data}
			files[dep.Manifest] = f
			order = append(order, dep.Manifest)
		}
		out, regen, err := bumpData(f.data, dep, target)
		if errors.Is(err, ErrNoBuiltIn) {
			// A range that already admits the target needs no edit (the
			// regeneration moves the lock); anything else is not bumped.
			if ok, known := dep.Ecosystem.Satisfies(dep.Spec, target); known && ok && dep.Version == "" {
				skipped++
				continue
			}
			why = append(why, dep.Where()+": "+strings.TrimPrefix(err.Error(), ErrNoBuiltIn.Error()+": "))
			continue
		}
		if err != nil {
			return nil, err
		}
		f.data = out
		if regen != nil && !regens[regen.Dir] {
			regens[regen.Dir] = true
			edit.Regens = append(edit.Regens, regen)
		}
	}
	switch {
	case len(why) > 0 && len(why)+skipped == len(deps):
		return nil, fmt.Errorf("%w: %s", ErrNoBuiltIn, strings.Join(why, "; "))
	case len(why) > 0:
		return nil, &UnbumpableError{Why: why}
	case skipped == len(deps):
		return nil, fmt.Errorf("%w: every declaration already admits %s", ErrNoBuiltIn, target)
	}
	if dryRun {
		return edit, nil
	}
	for _, rel := range order {
		if err := writeKeepMode(files[rel].full, files[rel].data); err != nil {
			return nil, err
		}
		edit.Files = append(edit.Files, rel)
	}
	if len(edit.Regens) > 0 {
		edit.Regen = edit.Regens[0]
	}
	return edit, nil
}

// writeKeepMode replaces a manifest's content, keeping its mode.
func writeKeepMode(full string, data []byte) error {
	fi, err := os.Stat(full)
	if err != nil {
		return err
	}
	return os.WriteFile(full, data, fi.Mode().Perm())
}
