package gates

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/verdict"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Advisories is the advisory data an added package is checked against:
// vulndata.Client behind its cache, the source the cve type decides with
// (the CLI binds the same one to both).
type Advisories interface {
	Vulns(ctx context.Context, eco vulndata.Ecosystem, name string) ([]vulndata.Vuln, vulndata.Meta, error)
}

// maxAddedPackages bounds how many distinct packages one fix may add and
// have checked one query at a time; past it the fix is not checked, and
// fails closed (a hostile lockfile cannot buy hours of queries).
const maxAddedPackages = 200

// maxListed bounds each list a verdict's detail spells out.
const maxListed = 20

// AddedPackages checks every package version the fix adds to a manifest or
// lockfile — a new package, or a new version of one — against src, the
// advisory data, malware advisories (OSV's MAL- records) included. A fix of
// any type can pull a package in: a bug fix adding a typosquat is a fix
// whose tests pass. Any advisory naming an added version ESCALATEs
// added-package-advisory; an addition that cannot be checked (no data,
// offline or unreachable; a declaration naming no registry version; a
// dependency file fixrail does not read or cannot parse) ESCALATEs
// added-package-unchecked. nil src checks nothing and fails every addition.
func AddedPackages(src Advisories) *Gate {
	return &Gate{
		Name:   "added-packages",
		Doc:    "every package version the fix adds to a manifest or lockfile is checked against the advisory data, malware advisories included",
		Reason: verdict.ReasonAddedAdvisory,
		Run: func(ctx context.Context, c *Change) (Verdict, error) {
			return checkAdded(ctx, src, c)
		},
	}
}

// addedPkg is one added package across the change's files.
type addedPkg struct {
	eco      vulndata.Ecosystem
	name     string   // as first written
	versions []string // exact versions added
	specs    []string // ranges added, checked only when no exact version is
	files    []string
}

func (p *addedPkg) String() string {
	return string(p.eco) + " " + show(p.name)
}

func checkAdded(ctx context.Context, src Advisories, c *Change) (Verdict, error) {
	var unchecked []string
	byKey := map[string]*addedPkg{}
	files := 0
	for _, p := range c.Changed {
		kind := manifest.Kind(p)
		if kind == manifest.NotDependency {
			continue
		}
		e, ok := c.Files[p]
		if !ok {
			return Verdict{}, fmt.Errorf("added-packages: %s changed without an entry", p)
		}
		if e.Deleted() {
			continue // a removal adds nothing
		}
		files++
		if kind == manifest.Unread {
			unchecked = append(unchecked, show(p)+": a dependency file fixrail does not read")
			continue
		}
		if c.Base == nil {
			return Verdict{}, errors.New("added-packages: the change has no reader of the base")
		}
		b, err := c.Base(ctx, p)
		if err != nil {
			unchecked = append(unchecked, show(p)+": the base's copy could not be read: "+err.Error())
			continue
		}
		var base []byte
		if !b.Deleted() {
			base = b.Data
			if base == nil {
				base = []byte{}
			}
		}
		a, err := manifest.Added(p, base, e.Data)
		if err != nil {
			unchecked = append(unchecked, show(p)+": does not parse: "+err.Error())
			continue
		}
		for _, u := range a.Unchecked {
			unchecked = append(unchecked, show(p)+": "+u)
		}
		for _, ap := range a.Packages {
			k := string(ap.Ecosystem) + "\x00" + ap.Ecosystem.NormalizeName(ap.Name)
			pk := byKey[k]
			if pk == nil {
				pk = &addedPkg{eco: ap.Ecosystem, name: ap.Name}
				byKey[k] = pk
			}
			if ap.Version != "" {
				pk.versions = appendNew(pk.versions, ap.Version)
			} else {
				pk.specs = appendNew(pk.specs, ap.Spec)
			}
			pk.files = appendNew(pk.files, p)
		}
	}
	pkgs := make([]*addedPkg, 0, len(byKey))
	for _, pk := range byKey {
		pkgs = append(pkgs, pk)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].String() < pkgs[j].String() })
	if len(pkgs) > maxAddedPackages {
		unchecked = append(unchecked, fmt.Sprintf("%d packages added: more than %d are not checked one by one", len(pkgs), maxAddedPackages))
		pkgs = nil
	}

	var hits, review, noRange, checked []string
	var oldest time.Time
	for _, pk := range pkgs {
		if src == nil {
			unchecked = append(unchecked, pk.String()+": could not be checked: no advisory source")
			continue
		}
		vulns, meta, err := src.Vulns(ctx, pk.eco, pk.name)
		if err != nil {
			if ctx.Err() != nil {
				return Verdict{}, fmt.Errorf("added-packages: %w", ctx.Err())
			}
			unchecked = append(unchecked, pk.String()+": could not be checked: "+err.Error())
			continue
		}
		if oldest.IsZero() || meta.FetchedAt.Before(oldest) {
			oldest = meta.FetchedAt
		}
		vs := make([]vulndata.Version, 0, len(pk.versions))
		bad := false
		for _, s := range pk.versions {
			v, err := pk.eco.Parse(s)
			if err != nil {
				unchecked = append(unchecked, pk.String()+"@"+show(s)+": could not be checked: not a "+string(pk.eco)+" version")
				bad = true
				continue
			}
			vs = append(vs, v)
		}
		hit, nr, rv := evaluateAdded(pk, vs, vulns)
		hits = append(hits, hit...)
		noRange = append(noRange, nr...)
		review = append(review, rv...)
		if !bad && len(hit) == 0 && len(nr) == 0 && len(rv) == 0 {
			checked = append(checked, pk.label())
		}
	}

	var parts []string
	if len(hits) > 0 {
		parts = append(parts, "named by an advisory: "+list(hits))
	}
	if len(unchecked) > 0 {
		parts = append(parts, "could not be checked: "+list(unchecked))
	}
	switch {
	case len(hits) > 0:
		return Verdict{Reason: verdict.ReasonAddedAdvisory, Detail: "the fix adds packages " + strings.Join(parts, "; ")}, nil
	case len(unchecked) > 0:
		return Verdict{Reason: verdict.ReasonAddedUnchecked, Detail: "the fix changes dependencies that " + strings.Join(parts, "; ")}, nil
	case len(pkgs) == 0 && files == 0:
		return Verdict{Pass: true, Detail: "no manifest or lockfile changed"}, nil
	case len(pkgs) == 0:
		return Verdict{Pass: true, Detail: fmt.Sprintf("%d manifest(s) or lockfile(s) changed, adding no package", files)}, nil
	}
	asOf := ""
	if !oldest.IsZero() {
		asOf = " (fetched " + oldest.UTC().Format(time.DateOnly) + ")"
	}
	detail := fmt.Sprintf("%d added package(s) checked against the advisory data%s", len(pkgs), asOf)
	if len(checked) > 0 {
		detail += "; no advisory affects " + list(checked)
	}
	if len(noRange) > 0 {
		detail += "; named with no range fixrail can evaluate (not blocking): " + list(noRange)
	}
	if len(review) > 0 {
		return Verdict{Pass: true, Unconfirmed: true, Label: LabelNeedsReview,
			Detail: detail + "; with no exact version added (the install decides which), named by advisories that affect some versions: " + list(review)}, nil
	}
	return Verdict{Pass: true, Detail: detail}, nil
}

// evaluateAdded applies the advisories to one added package: each exact
// version by osv-schema's evaluation; a package added only as a range by
// malware records alone (a malicious package is malicious in every
// version), the rest reported for review. A malware record naming the
// package with no range fixrail can evaluate is a hit.
func evaluateAdded(pk *addedPkg, vs []vulndata.Version, vulns []vulndata.Vuln) (hits, noRange, review []string) {
	type key struct{ at, id string }
	seen := map[key]bool{}
	byAt := map[string][]string{}
	var order []string
	note := func(at, id string) {
		if seen[key{at, id}] {
			return
		}
		seen[key{at, id}] = true
		if _, ok := byAt[at]; !ok {
			order = append(order, at)
		}
		byAt[at] = append(byAt[at], id)
	}
	var nr, rv []string
	for i := range vulns {
		v := &vulns[i]
		if v.Withdrawn != "" || !v.Mentions(pk.eco, pk.name) {
			continue
		}
		id := show(v.ID)
		mal := isMalware(v)
		if mal {
			id += " (malware)"
		}
		if len(pk.versions) == 0 {
			if mal {
				note(pk.String()+" "+showSpecs(pk.specs), id)
			} else {
				rv = appendNew(rv, pk.String()+" "+showSpecs(pk.specs)+": "+id)
			}
			continue
		}
		for _, ver := range vs {
			at := pk.String() + "@" + show(ver.Raw)
			switch v.Evaluate(pk.eco, pk.name, ver) {
			case vulndata.IsAffected:
				note(at, id)
			case vulndata.NoRange:
				if mal {
					note(at, id)
				} else {
					nr = appendNew(nr, at+": "+id)
				}
			}
		}
	}
	for _, at := range order {
		hits = append(hits, at+": "+strings.Join(byAt[at], ", "))
	}
	return hits, nr, rv
}

// label names what was checked: the exact versions, else the ranges.
func (p *addedPkg) label() string {
	if len(p.versions) == 0 {
		return p.String() + " " + showSpecs(p.specs)
	}
	vs := make([]string, len(p.versions))
	for i, v := range p.versions {
		vs[i] = show(v)
	}
	return p.String() + "@" + strings.Join(vs, ",")
}

func showSpecs(specs []string) string {
	out := make([]string, len(specs))
	for i, s := range specs {
		if s == "" {
			s = "(any version)"
		}
		out[i] = show(s)
	}
	return strings.Join(out, " ")
}

// isMalware: OSV's malicious-packages records are MAL- ids, and a
// GitHub malware advisory carries one as an alias.
func isMalware(v *vulndata.Vuln) bool {
	if strings.HasPrefix(v.ID, "MAL-") {
		return true
	}
	for _, a := range v.Aliases {
		if strings.HasPrefix(a, "MAL-") {
			return true
		}
	}
	return false
}

// show is a name, version or id as a reader may see it: the agent wrote
// the manifest and a registry the advisory, so anything but short plain
// ASCII is quoted with its controls escaped.
func show(s string) string {
	const max = 120
	plain := len(s) <= max && s != ""
	for i := 0; plain && i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f || s[i] == '`' || s[i] == '"' || s[i] == '\\' {
			plain = false
		}
	}
	if plain {
		return s
	}
	if len(s) > max {
		s = s[:max]
	}
	return strconv.QuoteToASCII(s)
}

// list joins at most maxListed items, saying how many more there were.
func list(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxListed], "; ") + fmt.Sprintf("; and %d more", len(items)-maxListed)
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
