package findings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Limits on vulnerable-dependency intake.
const (
	MaxVulnFileBytes = 16 << 20
	maxVulns         = 10000
	maxField         = 512
	maxAdvisories    = 200
)

// Vuln is a vulnerable-dependency finding (the cve fix type's input). Every
// field is untrusted: the package is only a hint until a manifest of the
// repository declares it, the manifest path only a hint of where to look.
type Vuln struct {
	// ID names the branch, lock and outbox: given (and SafeName), or derived
	// from ecosystem, package and version.
	ID        string `json:"id"`
	Ecosystem string `json:"ecosystem"`
	Package   string `json:"package"`
	// Version is the installed version the alert was raised against; ""
	// for a Dependabot alert, which names none (the manifest says).
	Version    string   `json:"version"`
	Advisories []string `json:"advisories"`
	// Manifest is a repository-relative path, or "" when the input gave
	// none usable (absolute paths from a scanner keep only their base name).
	Manifest string `json:"manifest"`
	// Source is "finding", "osv-scanner", "osv-scanner-sarif" or
	// "dependabot" (with the repository and alert number when read from
	// GitHub).
	Source string `json:"source"`
	// Range, FirstPatched and Scope are a Dependabot alert's vulnerable
	// range, first patched version and dependency scope: hints for the
	// reader of the finding (the decision is OSV's), bounded text.
	Range        string `json:"range,omitempty"`
	FirstPatched string `json:"first_patched,omitempty"`
	Scope        string `json:"scope,omitempty"`
}

// ReadVulnFile reads a vulnerable-dependency finding file: fixrail's own
// JSON (one object, or an array of them), osv-scanner's --format json,
// osv-scanner's --format sarif, or one Dependabot alert as the REST API
// returns it.
func ReadVulnFile(p string) ([]*Vuln, error) {
	data, err := pathguard.ReadRegular(p, MaxVulnFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	vs, err := ParseVuln(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return vs, nil
}

// ParseVuln parses finding JSON from memory.
func ParseVuln(data []byte) ([]*Vuln, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrBadReport)
	}
	trim := bytes.TrimSpace(data)
	var probe map[string]json.RawMessage
	if len(trim) > 0 && trim[0] == '{' {
		if err := json.Unmarshal(trim, &probe); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
		}
		if _, ok := probe["results"]; ok {
			return parseOSVScanner(trim)
		}
		if isSARIF(probe) {
			return parseOSVScannerSARIF(trim)
		}
		if isDependabotAlert(probe) {
			a, err := ParseDependabotAlert(trim)
			if err != nil {
				return nil, err
			}
			v, err := a.Vuln()
			if err != nil {
				return nil, err
			}
			return []*Vuln{v}, nil
		}
		trim = append(append([]byte("["), trim...), ']')
	}
	if len(trim) > 0 && trim[0] == '[' {
		var first []map[string]json.RawMessage
		if json.Unmarshal(trim, &first) == nil && len(first) > 0 && isDependabotAlert(first[0]) {
			return nil, fmt.Errorf("%w: a list of Dependabot alerts; pass one alert (GET /repos/{owner}/{repo}/dependabot/alerts/{number}), or run --alert N", ErrBadReport)
		}
	}
	var in []struct {
		ID         string   `json:"id"`
		Ecosystem  string   `json:"ecosystem"`
		Package    string   `json:"package"`
		Version    string   `json:"version"`
		Advisories []string `json:"advisories"`
		Manifest   string   `json:"manifest"`
	}
	dec := json.NewDecoder(bytes.NewReader(trim))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	if len(in) == 0 || len(in) > maxVulns {
		return nil, fmt.Errorf("%w: %d findings (want 1 to %d)", ErrBadReport, len(in), maxVulns)
	}
	out := make([]*Vuln, 0, len(in))
	for i, f := range in {
		v, err := newVuln(f.ID, f.Ecosystem, f.Package, f.Version, f.Advisories, f.Manifest, "finding")
		if err != nil {
			return nil, fmt.Errorf("%w: finding %d: %v", ErrBadReport, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseOSVScanner reads osv-scanner's JSON: results[].source.path and
// results[].packages[] with package{name, version, ecosystem} and
// vulnerabilities[].id (groups[].ids when present).
func parseOSVScanner(data []byte) ([]*Vuln, error) {
	var doc struct {
		Results []struct {
			Source struct {
				Path string `json:"path"`
			} `json:"source"`
			Packages []struct {
				Package struct {
					Name      string `json:"name"`
					Version   string `json:"version"`
					Ecosystem string `json:"ecosystem"`
				} `json:"package"`
				Vulnerabilities []struct {
					ID string `json:"id"`
				} `json:"vulnerabilities"`
				Groups []struct {
					IDs []string `json:"ids"`
				} `json:"groups"`
			} `json:"packages"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: osv-scanner JSON: %v", ErrBadReport, err)
	}
	var out []*Vuln
	for _, r := range doc.Results {
		for _, p := range r.Packages {
			var ids []string
			for _, g := range p.Groups {
				if len(g.IDs) > 0 {
					ids = append(ids, g.IDs[0]) // one id per alias group
				}
			}
			if len(ids) == 0 {
				for _, v := range p.Vulnerabilities {
					ids = append(ids, v.ID)
				}
			}
			if len(ids) == 0 {
				continue
			}
			if len(out) == maxVulns {
				return nil, fmt.Errorf("%w: more than %d findings", ErrBadReport, maxVulns)
			}
			v, err := newVuln("", p.Package.Ecosystem, p.Package.Name, p.Package.Version, ids, r.Source.Path, "osv-scanner")
			if err != nil {
				return nil, fmt.Errorf("%w: osv-scanner package %d: %v", ErrBadReport, len(out), err)
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: osv-scanner output lists no vulnerable package", ErrBadReport)
	}
	return out, nil
}

// plainField is a bounded, printable, single-line identifier.
func plainField(name, s string, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		if required {
			return "", fmt.Errorf("%s is missing", name)
		}
		return "", nil
	}
	if len(s) > maxField {
		return "", fmt.Errorf("%s is %d bytes (limit %d)", name, len(s), maxField)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) }) {
		return "", fmt.Errorf("%s has a space or control character", name)
	}
	return s, nil
}

func newVuln(id, eco, pkg, version string, advisories []string, manifest, source string) (*Vuln, error) {
	v := &Vuln{Source: source}
	var err error
	if v.Ecosystem, err = plainField("ecosystem", eco, true); err != nil {
		return nil, err
	}
	if v.Package, err = plainField("package", pkg, true); err != nil {
		return nil, err
	}
	if v.Version, err = plainField("version", version, !versionOptional(source)); err != nil {
		return nil, err
	}
	if len(advisories) > maxAdvisories {
		return nil, fmt.Errorf("%d advisories (limit %d)", len(advisories), maxAdvisories)
	}
	for i, a := range advisories {
		a, err := plainField(fmt.Sprintf("advisories[%d]", i), a, true)
		if err != nil {
			return nil, err
		}
		if len(a) > 128 {
			return nil, fmt.Errorf("advisories[%d] is over 128 bytes", i)
		}
		v.Advisories = append(v.Advisories, a)
	}
	if m := strings.TrimPrefix(strings.TrimSpace(manifest), "file://"); m != "" {
		if c, err := pathguard.CleanRel(m); err == nil {
			v.Manifest = c
		} else if b := path.Base(m); pathguard.SafeName(b) {
			v.Manifest = b // an absolute scanner path: only its name is a hint
		}
	}
	if id != "" {
		if !pathguard.SafeName(id) {
			return nil, fmt.Errorf("id %q is not a safe name", id)
		}
		v.ID = id
	} else {
		sum := sha256.Sum256([]byte(v.Ecosystem + "\x00" + v.Package + "\x00" + v.Version))
		v.ID = "cve-" + hex.EncodeToString(sum[:6])
	}
	return v, nil
}

// versionOptional: a Dependabot alert names no installed version; the cve
// type reads it from the manifest, which is the authority anyway.
func versionOptional(source string) bool {
	return source == DependabotSource || strings.HasPrefix(source, DependabotSource+":")
}

// VulnFixType is the fix type that takes a vulnerable-dependency finding.
const VulnFixType = "cve"

// Finding turns v into the finding a run takes: fix type cve, with the
// alert's facts as typed evidence (as untrusted as the alert) and a title
// and body for the prompt and the PR, made from the same checked fields.
//
// The advisory ids (CVE ones too) are in the title: intake's risk rule
// does not score "cve" for this type (fixtype's Implied), since every
// finding of it names one.
func (v *Vuln) Finding() *Finding {
	advisories := strings.Join(v.Advisories, ", ")
	if advisories == "" {
		advisories = "no advisory named"
	}
	at, title := " at "+v.Version, v.Version
	if v.Version == "" {
		at, title = " (the alert names no installed version: the manifest says)", "(installed version from the manifest)"
	}
	body := fmt.Sprintf("%s reports %s %s%s as vulnerable (%s).", v.Source, v.Ecosystem, v.Package, at, advisories)
	if v.Manifest != "" {
		body += " Manifest hint: " + v.Manifest + "."
	}
	if v.Range != "" {
		body += " Vulnerable range (the alerted advisory's): " + v.Range + "."
	}
	if v.FirstPatched != "" {
		body += " First patched version (that advisory's only): " + v.FirstPatched + "."
	}
	if v.Scope != "" {
		body += " Scope: " + v.Scope + "."
	}
	return &Finding{
		ID:      v.ID,
		Title:   fmt.Sprintf("%s %s %s: %s", v.Ecosystem, v.Package, title, advisories),
		Body:    body,
		Source:  v.Source,
		FixType: VulnFixType,
		Evidence: &Evidence{
			Ecosystem: v.Ecosystem, Package: v.Package, Version: v.Version,
			Manifest: v.Manifest, Advisories: slices.Clone(v.Advisories),
		},
	}
}

// VulnOf reads a finding's evidence back as a vulnerable dependency, with
// the same checks intake makes: a report file may say fix_type cve and
// carry any evidence at all.
func VulnOf(f *Finding) (*Vuln, error) {
	e := f.Evidence
	if e == nil {
		return nil, fmt.Errorf("%w: finding %s has no evidence naming a package", ErrBadReport, f.ID)
	}
	v, err := newVuln(f.ID, e.Ecosystem, e.Package, e.Version, e.Advisories, e.Manifest, f.Source)
	if err != nil {
		return nil, fmt.Errorf("%w: finding %s: %v", ErrBadReport, f.ID, err)
	}
	return v, nil
}
