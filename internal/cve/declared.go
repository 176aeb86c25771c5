package cve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// place is one version the build can resolve for the package, and where
// it is written.
type place struct {
	version, where string
}

// places are the versions the declarations make the build use: every
// lockfile copy (the top-level install and each nested one), else the
// pinned version. A range with no lockfile names none.
func places(deps []manifest.Dep) []place {
	var out []place
	seen := map[place]bool{}
	add := func(p place) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for i := range deps {
		d := &deps[i]
		switch {
		case d.Resolved != "":
			add(place{d.Resolved, d.Where() + ", as the build resolves it"})
		case len(d.Locked) > 0 && d.Ecosystem != vulndata.Go:
			for _, v := range d.Locked {
				add(place{v, lockWhere(d)})
			}
		case d.Version != "":
			add(place{d.Version, d.Where()})
		}
		for _, in := range d.Instances {
			add(place{in.Version, d.Lockfile + " " + in.Path})
		}
	}
	return out
}

// lockWhere names a lockfile's top-level entry for the package.
func lockWhere(d *manifest.Dep) string {
	if d.Ecosystem == vulndata.NPM {
		if d.LockKey != "" {
			return d.Lockfile + " " + d.LockKey
		}
		return d.Lockfile + " node_modules/" + d.InstalledAs()
	}
	return d.Lockfile
}

// affects lists the advisories (not withdrawn) that affect version s.
func affects(eco vulndata.Ecosystem, name, s string, vulns []vulndata.Vuln) ([]*vulndata.Vuln, error) {
	v, err := eco.Parse(s)
	if err != nil {
		return nil, err
	}
	var hit []*vulndata.Vuln
	for i := range vulns {
		a := &vulns[i]
		if a.Withdrawn == "" && a.Evaluate(eco, name, v) == vulndata.IsAffected {
			hit = append(hit, a)
		}
	}
	return hit, nil
}

// RedAll judges every declaration before the fix: red if any version the
// build can resolve is affected. Version is the highest affected one (the
// decision starts above it, so its target is above them all).
func RedAll(eco vulndata.Ecosystem, deps []manifest.Dep, vulns []vulndata.Vuln) RedResult {
	if len(deps) == 0 {
		return RedResult{Affecting: []Advisory{}}
	}
	ps := places(deps)
	if len(ps) == 0 {
		return Red(eco, deps[0], vulns)
	}
	r := RedResult{Affecting: []Advisory{}}
	seen := map[string]bool{}
	var where []string
	var top vulndata.Version
	for _, p := range ps {
		hits, err := affects(eco, deps[0].Name, p.version, vulns)
		if err != nil || len(hits) == 0 {
			continue
		}
		where = append(where, p.version+" in "+p.where)
		for _, a := range hits {
			if !seen[a.ID] {
				seen[a.ID] = true
				r.Affecting = append(r.Affecting, advisory(a))
			}
		}
		if v, _ := eco.Parse(p.version); !r.Red || v.Compare(top) > 0 {
			r.Red, r.Version, top = true, p.version, v
		}
	}
	slices.SortFunc(r.Affecting, func(a, b Advisory) int { return strings.Compare(a.ID, b.ID) })
	if !r.Red {
		var all []string
		for _, p := range ps {
			all = append(all, p.version+" in "+p.where)
		}
		r.Version = ps[0].version
		r.Detail = "no known advisory affects " + strings.Join(all, ", ")
		return r
	}
	r.Detail = fmt.Sprintf("%s is affected by %s", strings.Join(where, ", "), strings.Join(IDs(r.Affecting), ", "))
	return r
}

// bumpSet is the declarations the fix must move to target: in a
// package.json whose install is affected, every declaration of the
// package (dependencies, optional, peer, dev, overrides, resolutions)
// except a "$name" override, which follows its dependency; elsewhere each
// declaration whose own version is affected. A declaration the bumper can
// never edit is in only when its version is affected or unknown.
// (manifest.BumpAll leaves a spec that already admits the target as is.)
func bumpSet(eco vulndata.Ecosystem, deps []manifest.Dep, vulns []vulndata.Vuln) []manifest.Dep {
	affected := func(d manifest.Dep) (hit, judged bool) {
		for _, p := range places([]manifest.Dep{d}) {
			judged = true
			if hits, err := affects(eco, d.Name, p.version, vulns); err != nil || len(hits) > 0 {
				hit = true
			}
		}
		return hit, judged
	}
	redManifest := map[string]bool{}
	for _, d := range deps {
		if hit, _ := affected(d); hit {
			redManifest[d.Manifest] = true
		}
	}
	var out []manifest.Dep
	for _, d := range deps {
		hit, judged := affected(d)
		in := hit
		if eco == vulndata.NPM {
			in = redManifest[d.Manifest] && !strings.HasPrefix(strings.TrimSpace(d.Spec), "$")
		}
		if d.Unbumpable != "" {
			in = hit || !judged
		}
		if in {
			out = append(out, d)
		}
	}
	return out
}
