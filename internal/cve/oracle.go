package cve

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Check is one oracle step and its verdict.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// RedResult is the oracle before the fix: is the repository's version of
// the package affected by a known advisory?
type RedResult struct {
	Red bool `json:"red"`
	// Version is the version judged: the locked one, else the pinned one.
	Version   string     `json:"version"`
	Affecting []Advisory `json:"affecting"`
	Detail    string     `json:"detail"`
}

// Red judges dep before the fix against the package-wide advisories. A
// range with no lockfile names no version, so nothing is red: the finding
// cannot be reproduced from the repository alone.
func Red(eco vulndata.Ecosystem, dep manifest.Dep, vulns []vulndata.Vuln) RedResult {
	r := RedResult{Affecting: []Advisory{}}
	versions := dep.Locked
	if len(versions) == 0 && dep.Version != "" {
		versions = []string{dep.Version}
	}
	if len(versions) == 0 {
		r.Detail = fmt.Sprintf("%s declares %q, which pins no version, and no lockfile says which is installed", dep.Manifest, dep.Spec)
		return r
	}
	seen := map[string]bool{}
	for _, s := range versions {
		v, err := eco.Parse(s)
		if err != nil {
			continue
		}
		for i := range vulns {
			a := &vulns[i]
			if a.Withdrawn == "" && a.Evaluate(eco, dep.Name, v) == vulndata.IsAffected && !seen[a.ID] {
				seen[a.ID] = true
				r.Affecting = append(r.Affecting, advisory(a))
				r.Red, r.Version = true, s
			}
		}
	}
	if r.Version == "" {
		r.Version = versions[0]
		r.Detail = fmt.Sprintf("no known advisory affects %s in %s", strings.Join(versions, ", "), dep.Manifest)
	} else {
		r.Detail = fmt.Sprintf("%s is affected by %s", r.Version, strings.Join(IDs(r.Affecting), ", "))
	}
	return r
}

// Verdicts of the oracle after the fix.
const (
	Green = "green"
	// StillRed: a check failed; the fix is rejected.
	StillRed = "red"
	// NoData: OSV could not be asked, so the applied version is unjudged;
	// every other check passed. Nothing ships unjudged: the pipeline HALTs
	// no-advisory-data.
	NoData = "no-advisory-data"
)

// GreenInput is what the oracle after the fix reads.
type GreenInput struct {
	Ecosystem vulndata.Ecosystem
	Name      string
	// Manifest is the manifest the plan bumped first; Alerted the version
	// the finding was raised against.
	Manifest, Alerted string
	// Manifests are every manifest the plan moved the package in (Manifest
	// alone if empty); RedVersions every version red found affected
	// (Alerted alone if empty).
	Manifests   []string
	RedVersions []string
	// After is what manifest.Find returns on the candidate, with FindErr.
	After   []manifest.Dep
	FindErr error
	// Vulns are the package-wide advisories; VulnsErr non-nil means OSV was
	// unreachable (or offline with nothing cached).
	Vulns    []vulndata.Vuln
	VulnsErr error
}

// GreenResult is the oracle's verdict after the fix, with every check.
type GreenResult struct {
	Verdict string  `json:"verdict"`
	Applied string  `json:"applied"`
	Checks  []Check `json:"checks"`
}

// depSections are the package.json sections whose spec the lockfile's
// top-level install must satisfy (an override or a resolution is judged
// through the copies the lockfile installs).
var depSections = map[string]bool{"dependencies": true, "devDependencies": true, "optionalDependencies": true, "peerDependencies": true}

// GreenAfter judges the candidate: every declaration the repository has
// of the package, and every copy its lockfile installs. The order is seed
// 001's asymmetry: the checks that need no advisory data (still declared,
// off every affected version, lockfile agrees) come first, so an
// untouched manifest is red whatever the services say; an OSV outage
// after them is NoData, which ships nothing either.
func GreenAfter(in GreenInput) GreenResult {
	res := GreenResult{Verdict: Green}
	add := func(name string, ok bool, detail string, args ...any) bool {
		res.Checks = append(res.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(detail, args...)})
		if !ok {
			res.Verdict = StillRed
		}
		return ok
	}
	manifests := in.Manifests
	if len(manifests) == 0 {
		manifests = []string{in.Manifest}
	}
	red := in.RedVersions
	if len(red) == 0 {
		red = []string{in.Alerted}
	}
	byManifest := map[string][]manifest.Dep{}
	for _, d := range in.After {
		byManifest[d.Manifest] = append(byManifest[d.Manifest], d)
	}
	var gone []string
	for _, m := range manifests {
		if len(byManifest[m]) == 0 {
			gone = append(gone, m)
		}
	}
	if !add("declared", in.FindErr == nil && len(gone) == 0, "%s still declares %s", strings.Join(manifests, ", "), in.Name) {
		if in.FindErr != nil && !errors.Is(in.FindErr, manifest.ErrNotInManifest) {
			// Declared, but what the build uses could not be read or is
			// not the registry's module.
			res.Checks[len(res.Checks)-1].Detail = in.FindErr.Error()
			return res
		}
		if len(gone) == 0 {
			gone = manifests
		}
		res.Checks[len(res.Checks)-1].Detail = fmt.Sprintf("%s no longer declares %s (a removed dependency is not a fix)", strings.Join(gone, ", "), in.Name)
		return res
	}
	dep := &byManifest[in.Manifest][0]
	if len(byManifest[in.Manifest]) == 0 {
		dep = &in.After[0]
	}
	applied := dep.Current()
	res.Applied = applied
	ps := places(in.After)
	same := func(a, b string) bool {
		if a == b {
			return true
		}
		x, e1 := in.Ecosystem.Parse(a)
		y, e2 := in.Ecosystem.Parse(b)
		return e1 == nil && e2 == nil && x.Equal(y)
	}
	var stuck []string
	for _, p := range ps {
		for _, r := range red {
			if same(p.version, r) {
				stuck = append(stuck, p.version+" in "+p.where)
			}
		}
	}
	switch {
	case applied == "" && len(dep.Locked) > 1:
		stuck = append(stuck, fmt.Sprintf("%s locks %d versions for %s (%s), not one", dep.Lockfile, len(dep.Locked), dep.Where(), strings.Join(dep.Locked, ", ")))
	case applied == "":
		stuck = append(stuck, "no version pinned or locked in "+dep.Where())
	}
	if !add("moved", len(stuck) == 0, "the applied version %q is not the alerted %q", applied, in.Alerted) {
		res.Checks[len(res.Checks)-1].Detail = fmt.Sprintf("still on the alerted version %q (or no version is pinned or locked): %s", in.Alerted, strings.Join(stuck, ", "))
		return res
	}
	var lockOK, lockBad []string
	for i := range in.After {
		d := &in.After[i]
		if d.Lockfile == "" || (d.Ecosystem == vulndata.NPM && !depSections[d.Section]) {
			continue
		}
		if len(d.Locked) != 1 {
			lockBad = append(lockBad, fmt.Sprintf("%s holds %d versions of %s, want exactly one", d.Lockfile, len(d.Locked), in.Name))
			continue
		}
		match, known := in.Ecosystem.Satisfies(d.Spec, d.Locked[0])
		if d.Version != "" {
			if pv, e1 := in.Ecosystem.Parse(d.Version); e1 == nil {
				if lv, e2 := in.Ecosystem.Parse(d.Locked[0]); e2 == nil {
					match, known = pv.Equal(lv), true
				}
			}
		}
		where := "the manifest's"
		if len(in.After) > 1 {
			where = d.Where() + "'s"
		}
		switch {
		case !known:
			lockOK = append(lockOK, fmt.Sprintf("%s locks %s; the spec %q is not one fixrail can match (not judged)", d.Lockfile, d.Locked[0], d.Spec))
		case match:
			lockOK = append(lockOK, fmt.Sprintf("%s locks %s, which %s %q admits", d.Lockfile, d.Locked[0], where, d.Spec))
		default:
			lockBad = append(lockBad, fmt.Sprintf("%s locks %s, which %s %q does not admit", d.Lockfile, d.Locked[0], where, d.Spec))
		}
	}
	switch {
	case len(lockBad) > 0:
		add("lockfile", false, "%s", strings.Join(lockBad, "; "))
	case len(lockOK) > 0:
		add("lockfile", true, "%s", strings.Join(slices.Compact(lockOK), "; "))
	default:
		add("lockfile", true, "no lockfile beside %s", strings.Join(manifests, ", "))
	}
	if res.Verdict == StillRed {
		return res
	}
	if in.VulnsErr != nil {
		res.Checks = append(res.Checks, Check{Name: "clean", OK: false, Detail: fmt.Sprintf("advisories could not be fetched (%v): the applied version %s is unjudged", in.VulnsErr, applied)})
		res.Verdict = NoData
		return res
	}
	var hits, bad, where []string
	for _, p := range ps {
		got, err := affects(in.Ecosystem, in.Name, p.version, in.Vulns)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s in %s is not an orderable version: %v", p.version, p.where, err))
			continue
		}
		where = append(where, p.version+" in "+p.where)
		for _, a := range got {
			hits = append(hits, fmt.Sprintf("%s in %s is still affected by %s", p.version, p.where, a.ID))
		}
	}
	switch {
	case len(bad) > 0:
		add("clean", false, "%s", strings.Join(bad, "; "))
	case len(hits) > 0:
		add("clean", false, "%s", strings.Join(hits, "; "))
	case len(ps) == 1:
		add("clean", true, "no known advisory affects %s", applied)
	default:
		add("clean", true, "no known advisory affects %s", strings.Join(where, ", "))
	}
	return res
}
