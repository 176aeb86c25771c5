package cve

import (
	"fmt"
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
	// Manifest is the manifest the plan bumped; Alerted the version the
	// finding was raised against.
	Manifest, Alerted string
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

// GreenAfter judges the candidate. The order is seed 001's asymmetry: the
// checks that need no advisory data (still declared, no longer on the
// alerted version, lockfile agrees) come first, so an untouched manifest is
// red whatever the services say; an OSV outage after them is NoData, which
// ships nothing either.
func GreenAfter(in GreenInput) GreenResult {
	res := GreenResult{Verdict: Green}
	add := func(name string, ok bool, detail string, args ...any) bool {
		res.Checks = append(res.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(detail, args...)})
		if !ok {
			res.Verdict = StillRed
		}
		return ok
	}
	var dep *manifest.Dep
	for i := range in.After {
		if in.After[i].Manifest == in.Manifest {
			dep = &in.After[i]
			break
		}
	}
	if !add("declared", in.FindErr == nil && dep != nil, "%s still declares %s", in.Manifest, in.Name) {
		res.Checks[len(res.Checks)-1].Detail = fmt.Sprintf("%s no longer declares %s (a removed dependency is not a fix)", in.Manifest, in.Name)
		return res
	}
	applied := dep.Current()
	res.Applied = applied
	moved := applied != ""
	if moved {
		if a, err := in.Ecosystem.Parse(applied); err == nil {
			if b, err := in.Ecosystem.Parse(in.Alerted); err == nil && a.Equal(b) {
				moved = false
			}
		}
		if applied == in.Alerted {
			moved = false
		}
	}
	if !add("moved", moved, "the applied version %q is not the alerted %q", applied, in.Alerted) {
		res.Checks[len(res.Checks)-1].Detail = fmt.Sprintf("still on the alerted version %q (or no version is pinned or locked)", in.Alerted)
		return res
	}
	switch {
	case dep.Lockfile == "":
		add("lockfile", true, "no lockfile beside %s", in.Manifest)
	case len(dep.Locked) != 1:
		add("lockfile", false, "%s holds %d versions of %s, want exactly one", dep.Lockfile, len(dep.Locked), in.Name)
	default:
		match, known := in.Ecosystem.Satisfies(dep.Spec, dep.Locked[0])
		if dep.Version != "" {
			if pv, e1 := in.Ecosystem.Parse(dep.Version); e1 == nil {
				if lv, e2 := in.Ecosystem.Parse(dep.Locked[0]); e2 == nil {
					match, known = pv.Equal(lv), true
				}
			}
		}
		switch {
		case !known:
			add("lockfile", true, "%s locks %s; the spec %q is not one fixrail can match (not judged)", dep.Lockfile, dep.Locked[0], dep.Spec)
		default:
			add("lockfile", match, "%s locks %s, which the manifest's %q admits", dep.Lockfile, dep.Locked[0], dep.Spec)
			if !match {
				res.Checks[len(res.Checks)-1].Detail = fmt.Sprintf("%s locks %s, which the manifest's %q does not admit", dep.Lockfile, dep.Locked[0], dep.Spec)
			}
		}
	}
	if res.Verdict == StillRed {
		return res
	}
	if in.VulnsErr != nil {
		res.Checks = append(res.Checks, Check{Name: "clean", OK: false, Detail: fmt.Sprintf("advisories could not be fetched (%v): the applied version %s is unjudged", in.VulnsErr, applied)})
		res.Verdict = NoData
		return res
	}
	v, err := in.Ecosystem.Parse(applied)
	if err != nil {
		add("clean", false, "%s is not an orderable version: %v", applied, err)
		return res
	}
	var hits []string
	for i := range in.Vulns {
		a := &in.Vulns[i]
		if a.Withdrawn == "" && a.Evaluate(in.Ecosystem, in.Name, v) == vulndata.IsAffected {
			hits = append(hits, a.ID)
		}
	}
	if len(hits) == 0 {
		add("clean", true, "no known advisory affects %s", applied)
	} else {
		add("clean", false, "%s is still affected by %s", applied, strings.Join(hits, ", "))
	}
	return res
}
