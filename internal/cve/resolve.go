package cve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Resolved is the version the build selects for a module, as `go list -m
// -json` reports it with the repository's own go.mod, go.work and
// replace directives.
type Resolved struct {
	Path    string `json:"Path"`
	Version string `json:"Version"`
	Replace *struct {
		Path    string `json:"Path"`
		Version string `json:"Version"`
	} `json:"Replace"`
	Error *struct {
		Err string `json:"Err"`
	} `json:"Error"`
}

// Replaced names what the build uses instead of the registry's module, or
// "" if it uses the registry's.
func (r *Resolved) Replaced() string {
	if r.Replace == nil {
		return ""
	}
	if r.Replace.Version == "" {
		return r.Replace.Path + " (a directory)"
	}
	return r.Replace.Path + " " + r.Replace.Version
}

// GoListArgv is the question asked of go, run at the repository's root
// for the module in dir (repo-relative): read-only (never -mod=mod, which
// workspace mode refuses and which could write go.mod), with whatever
// go.work the module sits under, so the answer is what a build of the
// checkout would use.
func GoListArgv(dir, name string) []string {
	return []string{"go", "list", "-C", dir, "-mod=readonly", "-m", "-json", "--", name}
}

// ParseGoList reads one module's `go list -m -json` answer: untrusted
// output of repository-controlled configuration, bounded by the caller.
func ParseGoList(out []byte, name string) (*Resolved, error) {
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var r Resolved
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("go list -m -json: %v", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("go list -m: %s", r.Error.Err)
	}
	if r.Path != name {
		return nil, fmt.Errorf("go list -m answered for %q, not %q", r.Path, name)
	}
	if r.Version == "" {
		return nil, fmt.Errorf("go list -m names no version of %s (the main module, or one the build does not use)", name)
	}
	return &r, nil
}

// Resolver asks, in the repository's module directory modDir
// (repo-relative), what the build resolves name to.
type Resolver func(ctx context.Context, modDir, name string) (*Resolved, error)

// ErrNotResolved means the version the build uses could not be read.
var ErrNotResolved = errors.New("the version the build resolves could not be read")

// resolveGo asks resolve for each Go module declaring the package and
// records the answer on its declarations (Dep.Resolved). A module the
// build replaces is an error naming the replace: the advisory data judges
// the registry's module, and no bump moves a replaced copy.
func resolveGo(ctx context.Context, resolve Resolver, deps []manifest.Dep, replaces []manifest.Replace) error {
	if resolve == nil {
		return nil
	}
	answers := map[string]*Resolved{}
	for i := range deps {
		d := &deps[i]
		if d.Ecosystem != vulndata.Go || path.Base(d.Manifest) != "go.mod" {
			continue
		}
		dir := path.Dir(d.Manifest)
		r, ok := answers[dir]
		if !ok {
			var err error
			if r, err = resolve(ctx, dir, d.Name); err != nil {
				return fmt.Errorf("%w: %s in %s: %v", ErrNotResolved, d.Name, dir, err)
			}
			answers[dir] = r
		}
		if rep := r.Replaced(); rep != "" {
			return fmt.Errorf("%w: %s: the build (go list -m in %s) uses %s instead of %s %s%s", ErrUnbumpable, d.Where(), dir, rep, d.Name, r.Version, replaceLines(replaces, r.Version))
		}
		d.Resolved = r.Version
	}
	return nil
}

// replaceLines names the replace directives that apply to version v.
func replaceLines(replaces []manifest.Replace, v string) string {
	var out []string
	for _, r := range replaces {
		if r.Applies(v) {
			out = append(out, r.String())
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// replacesApplying are the replace directives that replace any of vs.
func replacesApplying(replaces []manifest.Replace, vs ...string) []string {
	var out []string
	for _, r := range replaces {
		if slices.ContainsFunc(vs, r.Applies) {
			out = append(out, r.String())
		}
	}
	return out
}
