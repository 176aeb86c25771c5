// Package cve is the cve fix type's logic without the pipeline: the version
// decision (the lowest published version that clears every advisory for the
// package, at any distance), its JSON and PR-body renderings, and the oracle
// (red before, green after) as pure functions. Registry strings in a Decision
// are untrusted data.
package cve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fixrail/fixrail/internal/vulndata"
)

// Outcomes of a decision.
const (
	// Upgrade: Target is the lowest safe published version above Installed.
	Upgrade = "upgrade"
	// AlreadySafe: no known advisory affects Installed.
	AlreadySafe = "already-safe"
	// NoSafeVersion: every published candidate is affected; the pipeline
	// maps this to ESCALATE no-safe-version.
	NoSafeVersion = "no-safe-version"
)

// ErrNoSafeVersion is returned (wrapped in *NoSafeError) with a decision
// whose Outcome is NoSafeVersion.
var ErrNoSafeVersion = errors.New("no safe version")

// NoSafeError carries the decision that found no safe version.
type NoSafeError struct{ Decision *Decision }

func (e *NoSafeError) Error() string {
	return fmt.Sprintf("%s: %s %s %s", ErrNoSafeVersion, e.Decision.Ecosystem, e.Decision.Package, e.Decision.Installed)
}
func (e *NoSafeError) Unwrap() error { return ErrNoSafeVersion }

// Advisory is an OSV record as the decision reports it.
type Advisory struct {
	ID      string   `json:"id"`
	Aliases []string `json:"aliases,omitempty"`
	Summary string   `json:"summary,omitempty"`
}

// Passed is a published version above Installed that was not chosen.
type Passed struct {
	Version string `json:"version"`
	// Reason is "pre-release", "pseudo-version", "deprecated", "unorderable"
	// or "affected".
	Reason string `json:"reason"`
	// By lists the advisories that affect it (Reason "affected").
	By []string `json:"by,omitempty"`
}

// Decision is the whole version decision, reproducible on its own with
// `fixrail resolve-version`.
type Decision struct {
	Ecosystem string `json:"ecosystem"`
	Package   string `json:"package"`
	Installed string `json:"installed"`
	Outcome   string `json:"outcome"`
	Target    string `json:"target,omitempty"`
	// Bump is the distance Installed → Target (Upgrade only).
	Bump      *vulndata.Bump `json:"bump,omitempty"`
	Rationale string         `json:"rationale"`
	// Policy names the rule applied, so a reader can argue with it.
	Policy string `json:"policy"`
	// Affecting are the advisories that affect Installed; on Upgrade the
	// target clears all of them (Cleared).
	Affecting []Advisory `json:"affecting"`
	Cleared   []Advisory `json:"cleared"`
	// StillOpen are advisories that affect the target, or, with no safe
	// version, the newest candidate considered.
	StillOpen []Advisory `json:"still_open"`
	// WithoutRanges name the package but give no range or version list
	// fixrail can evaluate; they block nothing and are reported for review.
	WithoutRanges []Advisory `json:"without_ranges"`
	// PassedOver are candidates above Installed not chosen, lowest first,
	// at most maxPassed of them; PassedOverOmitted counts the rest.
	PassedOver        []Passed `json:"passed_over"`
	PassedOverOmitted int      `json:"passed_over_omitted,omitempty"`
	// Advisories is how many non-withdrawn records OSV holds for the package.
	Advisories int `json:"advisories"`
	// Published is how many versions deps.dev lists.
	Published int           `json:"published"`
	Data      vulndata.Meta `json:"osv_data"`
	Versions  vulndata.Meta `json:"version_data"`
	// Next are the safe candidates above Target, lowest first (at most
	// maxNext): where a retry goes when the target itself is refused after
	// the PR (a scanner's finding on it), so a second attempt advances
	// through the list instead of guessing. Not part of the printed
	// decision, which stands on Target.
	Next []string `json:"-"`
}

// maxNext bounds Decision.Next.
const maxNext = 3

// maxPassed bounds PassedOver: a package with hundreds of affected releases
// would otherwise make the PR body a release history.
const maxPassed = 40

// Policy is the version policy, stated in every decision.
const Policy = "lowest published version above the installed one that no advisory for the package affects (package-wide, not only the alerted one), at any distance; pre-releases (unless the installed version is one), Go pseudo-versions and deprecated versions are never candidates; ranges are evaluated strictly (an open-ended range blocks every later version)"

// Source is what the decision needs from the services: vulndata.Client.
type Source interface {
	Vulns(ctx context.Context, eco vulndata.Ecosystem, name string) ([]vulndata.Vuln, vulndata.Meta, error)
	Versions(ctx context.Context, eco vulndata.Ecosystem, name string) ([]vulndata.Published, vulndata.Meta, error)
}

// Decide resolves the version for eco/name installed at installed. A
// decision with Outcome NoSafeVersion comes with a *NoSafeError.
func Decide(ctx context.Context, src Source, eco vulndata.Ecosystem, name, installed string) (*Decision, error) {
	cur, err := eco.Parse(installed)
	if err != nil {
		return nil, err
	}
	vulns, vmeta, err := src.Vulns(ctx, eco, name)
	if err != nil {
		return nil, err
	}
	pub, pmeta, err := src.Versions(ctx, eco, name)
	if err != nil {
		return nil, err
	}
	d := DecideFrom(eco, name, cur, vulns, pub, vmeta, pmeta)
	if d.Outcome == NoSafeVersion {
		return d, &NoSafeError{d}
	}
	return d, nil
}

// DecideFrom is Decide on data already fetched: a pure function.
func DecideFrom(eco vulndata.Ecosystem, name string, cur vulndata.Version, vulns []vulndata.Vuln, pub []vulndata.Published, vmeta, pmeta vulndata.Meta) *Decision {
	d := &Decision{
		Ecosystem: string(eco), Package: name, Installed: cur.Raw, Policy: Policy,
		Affecting: []Advisory{}, Cleared: []Advisory{}, StillOpen: []Advisory{}, WithoutRanges: []Advisory{}, PassedOver: []Passed{},
		Advisories: 0, Published: len(pub), Data: vmeta, Versions: pmeta,
	}
	var relevant []*vulndata.Vuln
	for i := range vulns {
		v := &vulns[i]
		if v.Withdrawn != "" || !v.Mentions(eco, name) {
			continue
		}
		relevant = append(relevant, v)
	}
	sort.Slice(relevant, func(i, j int) bool { return relevant[i].ID < relevant[j].ID })
	d.Advisories = len(relevant)
	memo := eco.NewMemo()
	affecting := func(v vulndata.Version) []*vulndata.Vuln {
		var hit []*vulndata.Vuln
		for _, r := range relevant {
			if r.EvaluateMemo(memo, name, v) == vulndata.IsAffected {
				hit = append(hit, r)
			}
		}
		return hit
	}
	for _, r := range relevant {
		if r.EvaluateMemo(memo, name, cur) == vulndata.NoRange {
			d.WithoutRanges = append(d.WithoutRanges, advisory(r))
		}
	}
	installedHits := affecting(cur)
	for _, r := range installedHits {
		d.Affecting = append(d.Affecting, advisory(r))
	}
	if len(installedHits) == 0 {
		d.Outcome = AlreadySafe
		d.Rationale = fmt.Sprintf("none of the %d advisories for the package affects the installed version", len(relevant))
		return d
	}

	type cand struct {
		v    vulndata.Version
		p    vulndata.Published
		skip string
	}
	var cands []cand
	seen := map[string]bool{}
	curPre := eco.IsPrerelease(cur.Raw)
	for _, p := range pub {
		if seen[p.Version] {
			continue
		}
		seen[p.Version] = true
		pv, err := memo.Parse(p.Version)
		if err != nil {
			continue // unorderable: cannot be placed above or below
		}
		if pv.Compare(cur) <= 0 {
			continue
		}
		c := cand{v: pv, p: p}
		switch {
		case eco.IsPseudo(p.Version):
			c.skip = "pseudo-version"
		case !curPre && eco.IsPrerelease(p.Version):
			c.skip = "pre-release"
		case p.Deprecated:
			c.skip = "deprecated"
		}
		cands = append(cands, c)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].v.Compare(cands[j].v) < 0 })

	var lastHits []*vulndata.Vuln
	for i, c := range cands {
		if c.skip != "" {
			d.pass(Passed{Version: c.p.Version, Reason: c.skip})
			continue
		}
		hits := affecting(c.v)
		if len(hits) > 0 {
			var by []string
			for _, h := range hits {
				by = append(by, h.ID)
			}
			d.pass(Passed{Version: c.p.Version, Reason: "affected", By: by})
			lastHits = hits
			continue
		}
		d.Outcome = Upgrade
		d.Target = c.p.Version
		b := eco.Distance(cur.Raw, c.p.Version)
		d.Bump = &b
		d.Cleared = d.Affecting
		n := len(d.PassedOver) + d.PassedOverOmitted
		d.Rationale = fmt.Sprintf("%s is the lowest published version above %s that none of the %d advisories for the package affects; it clears the %d that affect %s (%s bump, %d major(s) crossed); %d candidate(s) between the two were passed over",
			c.p.Version, cur.Raw, len(relevant), len(installedHits), cur.Raw, b.Class, b.MajorsCrossed, n)
		for _, later := range cands[i+1:] {
			if len(d.Next) == maxNext {
				break
			}
			if later.skip == "" && len(affecting(later.v)) == 0 {
				d.Next = append(d.Next, later.p.Version)
			}
		}
		return d
	}
	d.Outcome = NoSafeVersion
	for _, r := range lastHits {
		d.StillOpen = append(d.StillOpen, advisory(r))
	}
	if len(lastHits) == 0 {
		d.StillOpen = d.Affecting
	}
	d.Rationale = fmt.Sprintf("no published version above %s is clear of the %d advisories for the package (%d candidate(s) considered)", cur.Raw, len(relevant), len(cands))
	return d
}

func (d *Decision) pass(p Passed) {
	if len(d.PassedOver) < maxPassed {
		d.PassedOver = append(d.PassedOver, p)
		return
	}
	d.PassedOverOmitted++
}

func advisory(r *vulndata.Vuln) Advisory {
	a := Advisory{ID: r.ID, Summary: r.Summary}
	a.Aliases = slices.Clone(r.Aliases)
	slices.Sort(a.Aliases)
	return a
}

// IDs lists the advisory ids.
func IDs(as []Advisory) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

// Names reports whether id is one of the advisories or their aliases.
func Names(as []Advisory, id string) bool {
	for _, a := range as {
		if strings.EqualFold(a.ID, id) || slices.ContainsFunc(a.Aliases, func(s string) bool { return strings.EqualFold(s, id) }) {
			return true
		}
	}
	return false
}
