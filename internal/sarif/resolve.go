package sarif

import (
	"net/url"
	"strings"
)

// Reading a result the way GitHub code scanning does: rules may live in an
// extension, a level may be the rule's default, a location may be an
// artifact index and a URI may be relative to a named base. These are the
// SARIF 2.1.0 defaults, applied in one place so that intake and an oracle
// rerun read a log alike.

// Rule returns the rule a result names: in the extension
// rule.toolComponent.index points at, else in the driver; by index when it
// is in range and its id agrees, else by id. nil when the log does not
// describe it (the result keeps its ruleId, without metadata).
func (r *Run) Rule(res *Result) *ReportingDescriptor {
	comp := &r.Tool.Driver
	idx := res.RuleIndex
	id := res.RuleID
	if ref := res.Rule; ref != nil {
		if ref.Index != nil {
			idx = ref.Index
		}
		if id == "" {
			id = ref.ID
		}
		if tc := ref.ToolComponent; tc != nil {
			switch {
			case tc.Index != nil && *tc.Index >= 0 && *tc.Index < len(r.Tool.Extensions):
				comp = &r.Tool.Extensions[*tc.Index]
			case tc.Index != nil:
				return nil
			case tc.Name != "" && tc.Name != comp.Name:
				comp = nil
				for i := range r.Tool.Extensions {
					if r.Tool.Extensions[i].Name == tc.Name {
						comp = &r.Tool.Extensions[i]
					}
				}
				if comp == nil {
					return nil
				}
			}
		}
	}
	if idx != nil && *idx >= 0 && *idx < len(comp.Rules) {
		if rule := &comp.Rules[*idx]; id == "" || rule.ID == id {
			return rule
		}
	}
	for i := range comp.Rules {
		if id != "" && comp.Rules[i].ID == id {
			return &comp.Rules[i]
		}
	}
	return nil
}

// RuleID is the result's rule id: ruleId, else rule.id, else the id of the
// rule its index names.
func (r *Run) RuleID(res *Result) string {
	if res.RuleID != "" {
		return res.RuleID
	}
	if res.Rule != nil && res.Rule.ID != "" {
		return res.Rule.ID
	}
	if rule := r.Rule(res); rule != nil {
		return rule.ID
	}
	return ""
}

// Level is the result's level: its own, else the rule's default, else
// SARIF's default, warning.
func Level(res *Result, rule *ReportingDescriptor) string {
	if res.Level != "" {
		return res.Level
	}
	if rule != nil && rule.DefaultConfiguration != nil && rule.DefaultConfiguration.Level != "" {
		return rule.DefaultConfiguration.Level
	}
	return LevelWarning
}

// Actionable reports whether a result is a finding at all: kind fail (the
// default) or open/review, not suppressed by an accepted or unreviewed
// suppression, and not absent from the current baseline.
func Actionable(res *Result) bool {
	switch res.Kind {
	case "", "fail", "open", "review":
	default: // pass, notApplicable, informational
		return false
	}
	for _, s := range res.Suppressions {
		if s.Status == "" || s.Status == "accepted" {
			return false
		}
	}
	return res.BaselineState != "absent"
}

// PrimaryLocation is the result's first location with a physical part
// (GitHub reads only the first), its artifact resolved through the run's
// artifacts when given by index. nil when there is none.
func (r *Run) PrimaryLocation(res *Result) (*ArtifactLocation, *Region) {
	if len(res.Locations) == 0 || res.Locations[0].PhysicalLocation == nil {
		return nil, nil
	}
	pl := res.Locations[0].PhysicalLocation
	al := pl.ArtifactLocation
	if al != nil && al.URI == "" && al.Index != nil && *al.Index >= 0 && *al.Index < len(r.Artifacts) {
		if a := r.Artifacts[*al.Index].Location; a != nil {
			al = a
		}
	}
	if al == nil || al.URI == "" {
		return nil, pl.Region
	}
	return al, pl.Region
}

// ResolveURI turns an artifact location into a path as the log states it:
// relative URIs joined onto their uriBaseId's chain (an undeclared base,
// such as %SRCROOT% from Semgrep, is the checkout root), percent-decoded.
// abs reports a file:// URI (its path returned without the scheme); a
// URI of any other scheme is refused (ok false). The caller validates the
// result as a repository path.
func (r *Run) ResolveURI(al *ArtifactLocation) (p string, abs, ok bool) {
	uri, base := al.URI, al.URIBaseID
	for depth := 0; ; depth++ {
		if depth > 8 {
			return "", false, false // a cycle of bases
		}
		u, err := url.Parse(uri)
		if err != nil {
			return "", false, false
		}
		switch {
		case u.Scheme == "file":
			if u.Host != "" && u.Host != "localhost" {
				return "", false, false
			}
			return u.Path, true, true
		case u.Scheme != "" || u.Opaque != "" || u.Host != "":
			return "", false, false
		}
		if base == "" {
			return u.Path, false, true
		}
		b, declared := r.OriginalURIBaseIDs[base]
		if !declared || b.URI == "" {
			return u.Path, false, true
		}
		prefix := b.URI
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		uri, base = prefix+uri, b.URIBaseID
	}
}
