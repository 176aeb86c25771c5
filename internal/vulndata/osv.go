package vulndata

import (
	"slices"
	"sort"
	"strings"
)

// Vuln is the subset of an OSV record (osv-schema) the decision reads. Every
// string in it came from a registry: data to show, never an instruction.
type Vuln struct {
	ID        string     `json:"id"`
	Summary   string     `json:"summary,omitempty"`
	Aliases   []string   `json:"aliases,omitempty"`
	Modified  string     `json:"modified,omitempty"`
	Published string     `json:"published,omitempty"`
	Withdrawn string     `json:"withdrawn,omitempty"`
	Affected  []Affected `json:"affected,omitempty"`
}

// Affected is one affected[] entry: one package, possibly one of several
// release branches of it.
type Affected struct {
	Package  Package  `json:"package"`
	Ranges   []Range  `json:"ranges,omitempty"`
	Versions []string `json:"versions,omitempty"`
}

// Package names what an affected[] entry is about.
type Package struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Purl      string `json:"purl,omitempty"`
}

// Range is SEMVER, ECOSYSTEM or GIT; only the first two order versions.
type Range struct {
	Type   string  `json:"type"`
	Events []Event `json:"events"`
}

// Event has exactly one field set.
type Event struct {
	Introduced   string `json:"introduced,omitempty"`
	Fixed        string `json:"fixed,omitempty"`
	LastAffected string `json:"last_affected,omitempty"`
	Limit        string `json:"limit,omitempty"`
}

// Verdict is what a record says about one version.
type Verdict int

const (
	// Unaffected: the record's ranges and versions exclude the version.
	Unaffected Verdict = iota
	// IsAffected: listed in versions[] or inside a SEMVER/ECOSYSTEM range.
	IsAffected
	// NoRange: the record names the package but has no range or version
	// list fixrail can evaluate (only GIT ranges, or unorderable bounds), so
	// it can say nothing either way.
	NoRange
)

// matches reports whether an affected[] entry is about eco/name; the
// ecosystem may carry a ":suffix" (e.g. "Maven:https://…").
func (a Affected) matches(eco Ecosystem, name string) bool {
	e := a.Package.Ecosystem
	if i := strings.IndexByte(e, ':'); i >= 0 {
		e = e[:i]
	}
	return e == string(eco) && eco.NormalizeName(a.Package.Name) == eco.NormalizeName(name)
}

// Evaluate applies osv-schema's evaluation to version v of eco/name: v is
// affected if it is in versions[] or inside any SEMVER or ECOSYSTEM range
// (introduced inclusive, fixed exclusive, last_affected inclusive, limit
// exclusive) of any affected[] entry for the package. GIT ranges are
// skipped, never read as "not affected" (a PYSEC record lists its GIT range
// first).
func (r *Vuln) Evaluate(eco Ecosystem, name string, v Version) Verdict {
	return r.evaluate(eco, name, v, eco.Parse, nil)
}

// EvaluateMemo is Evaluate parsing each version string once across calls
// (a decision evaluates every candidate against every record).
func (r *Vuln) EvaluateMemo(m *Memo, name string, v Version) Verdict {
	return r.evaluate(m.eco, name, v, m.Parse, m)
}

func (r *Vuln) evaluate(eco Ecosystem, name string, v Version, parse func(string) (Version, error), lists *Memo) Verdict {
	evaluable := false
	for _, a := range r.Affected {
		if !a.matches(eco, name) {
			continue
		}
		if len(a.Versions) > 0 {
			list := lists.sorted(a.Versions, parse)
			if len(list) > 0 {
				evaluable = true
			}
			i := sort.Search(len(list), func(i int) bool { return list[i].Compare(v) >= 0 })
			if i < len(list) && list[i].Equal(v) || slices.Contains(a.Versions, v.Raw) {
				return IsAffected
			}
		}
		for _, rg := range a.Ranges {
			if rg.Type != "SEMVER" && rg.Type != "ECOSYSTEM" {
				continue
			}
			hit, ok := rangeAffects(parse, rg.Events, v)
			if !ok {
				continue
			}
			evaluable = true
			if hit {
				return IsAffected
			}
		}
	}
	if !evaluable {
		return NoRange
	}
	return Unaffected
}

// Mentions reports whether any affected[] entry is about eco/name.
func (r *Vuln) Mentions(eco Ecosystem, name string) bool {
	for _, a := range r.Affected {
		if a.matches(eco, name) {
			return true
		}
	}
	return false
}

type sortedEvent struct {
	kind byte // 'i', 'f', 'l', 'L'
	zero bool // introduced "0": before every version
	v    Version
}

// rangeAffects walks one range's events in version order; ok is false when
// an event's version does not parse (the range cannot be judged).
func rangeAffects(parse func(string) (Version, error), events []Event, v Version) (hit, ok bool) {
	var evs []sortedEvent
	var limits []Version
	for _, e := range events {
		var se sortedEvent
		var s string
		switch {
		case e.Introduced != "":
			se.kind, s = 'i', e.Introduced
			if s == "0" {
				se.zero = true
			}
		case e.Fixed != "":
			se.kind, s = 'f', e.Fixed
		case e.LastAffected != "":
			se.kind, s = 'l', e.LastAffected
		case e.Limit != "":
			if e.Limit == "*" {
				continue
			}
			lv, err := parse(e.Limit)
			if err != nil {
				return false, false
			}
			limits = append(limits, lv)
			continue
		default:
			continue
		}
		if !se.zero {
			pv, err := parse(s)
			if err != nil {
				return false, false
			}
			se.v = pv
		}
		evs = append(evs, se)
	}
	if len(evs) == 0 {
		return false, false
	}
	// Events "should" be sorted but need not be (osv-schema): sort them,
	// introduced "0" first, an introduced before a fix at the same version.
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if a.zero || b.zero {
			return a.zero && !b.zero
		}
		if c := a.v.Compare(b.v); c != 0 {
			return c < 0
		}
		return a.kind == 'i' && b.kind != 'i'
	})
	if len(limits) > 0 {
		below := false
		for _, l := range limits {
			if v.Compare(l) < 0 {
				below = true
			}
		}
		if !below {
			return false, true
		}
	}
	vulnerable := false
	for _, e := range evs {
		switch e.kind {
		case 'i':
			if e.zero || v.Compare(e.v) >= 0 {
				vulnerable = true
			}
		case 'f':
			if v.Compare(e.v) >= 0 {
				vulnerable = false
			}
		case 'l':
			if v.Compare(e.v) > 0 {
				vulnerable = false
			}
		}
	}
	return vulnerable, true
}

// Memo parses version strings of one ecosystem, each once.
type Memo struct {
	eco   Ecosystem
	m     map[string]memoEntry
	lists map[*string][]Version // a versions[] list, parsed and sorted, by its first element
}

type memoEntry struct {
	v   Version
	err error
}

// NewMemo is an empty memo for e.
func (e Ecosystem) NewMemo() *Memo {
	return &Memo{eco: e, m: map[string]memoEntry{}, lists: map[*string][]Version{}}
}

// sorted is list's orderable versions in order; remembered when m is not
// nil (the list must not change meanwhile: records are read-only here).
func (m *Memo) sorted(list []string, parse func(string) (Version, error)) []Version {
	if m != nil {
		if l, ok := m.lists[&list[0]]; ok {
			return l
		}
	}
	out := make([]Version, 0, len(list))
	for _, s := range list {
		if pv, err := parse(s); err == nil {
			out = append(out, pv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Compare(out[j]) < 0 })
	if m != nil {
		m.lists[&list[0]] = out
	}
	return out
}

// Parse is e.Parse, remembered.
func (m *Memo) Parse(s string) (Version, error) {
	if r, ok := m.m[s]; ok {
		return r.v, r.err
	}
	v, err := m.eco.Parse(s)
	m.m[s] = memoEntry{v, err}
	return v, err
}
