package findings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Dependabot alerts, as GET /repos/{o}/{r}/dependabot/alerts/{n} returns
// them (a file saved from the API, or the GitHub forge's read). Everything
// in one is untrusted: the package name and manifest path come from the
// repository's own files, the advisory from the GitHub Advisory Database.
// An alert carries no installed version: the cve type reads it from the
// repository's manifest or lockfile, which is the authority.

// MaxAlertBytes bounds one alert; the REST object is a few kilobytes, most
// of it the advisory's description, which fixrail does not read.
const MaxAlertBytes = 1 << 20

// ErrAlertNotOpen means the alert is dismissed, fixed or auto-dismissed:
// someone decided it, or it is already resolved, and fixrail does not
// reopen that decision. The run is refused before it starts (exit 2, like
// a closed issue).
var ErrAlertNotOpen = errors.New("the Dependabot alert is not open")

// DependabotSource is the Dependabot alert finding's source (a VulnFixType
// finding), for the run report.
const DependabotSource = "dependabot"

// DependabotAlert is the part of an alert fixrail reads, as the source read it.
type DependabotAlert struct {
	Number int
	// State is open, dismissed, fixed or auto_dismissed.
	State           string
	DismissedReason string
	// Ecosystem is Dependabot's name (pip, npm, go, …), not OSV's.
	Ecosystem, Package, ManifestPath, Scope string
	GHSA, CVE                               string
	Identifiers                             []AlertIdentifier
	// VulnerableRange and FirstPatched are the alerted advisory's, for
	// that range only: a hint for the reader, never the decided target.
	VulnerableRange, FirstPatched string
	// VulnEcosystem and VulnPackage are security_vulnerability.package,
	// which must agree with the dependency's.
	VulnEcosystem, VulnPackage string
	// URL is the alert's page on the forge (html_url), for the reader.
	URL string
}

// AlertIdentifier is one of security_advisory.identifiers.
type AlertIdentifier struct{ Type, Value string }

// AlertSource reads Dependabot alerts; the GitHub forge implements it.
type AlertSource interface {
	DependabotAlert(ctx context.Context, number int) (DependabotAlert, error)
}

// dependabotEcosystems maps Dependabot's ecosystem names onto OSV's. The
// ones whose OSV name is not among supportedOSV are known but refused: the
// cve type has no manifest reader or version order for them.
var dependabotEcosystems = map[string]string{
	"pip": "PyPI", "npm": "npm", "go": "Go", "maven": "Maven", "rubygems": "RubyGems",
	"rust": "crates.io", "cargo": "crates.io",
	"composer": "Packagist", "nuget": "NuGet", "pub": "Pub", "erlang": "Hex",
	"actions": "GitHub Actions", "swift": "SwiftURL",
}

// supportedOSV are the OSV ecosystems the cve type resolves (vulndata's).
var supportedOSV = []string{"PyPI", "npm", "Go", "Maven", "crates.io", "RubyGems"}

// DependabotEcosystem is the OSV name of a Dependabot ecosystem, or an
// error saying why fixrail cannot work it.
func DependabotEcosystem(s string) (string, error) {
	osv, ok := dependabotEcosystems[strings.ToLower(s)]
	switch {
	case !ok:
		return "", fmt.Errorf("ecosystem %q is not one fixrail knows", bound(s, 40))
	case !slices.Contains(supportedOSV, osv):
		return "", fmt.Errorf("ecosystem %q (OSV %s) is not supported: the cve type reads manifests of %s only", s, osv, strings.Join(supportedOSV, ", "))
	}
	return osv, nil
}

// Compiled on first use, not at start-up: the slim fixrail-resolve links
// this package and pays its init on every call.
var (
	ghsaRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^GHSA(-[23456789cfghjmpqrvwx]{4}){3}$`) })
	cveRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^CVE-\d{4}-\d{4,7}$`) })
)

// dismissedReasons are GitHub's; another value is not repeated.
var dismissedReasons = []string{"fix_started", "inaccurate", "no_bandwidth", "not_used", "tolerable_risk"}

// alertJSON is the REST shape, trimmed to what fixrail reads; every other
// field (the description, CVSS, EPSS, references, URLs) is ignored.
type alertJSON struct {
	Number          *int   `json:"number"`
	State           string `json:"state"`
	DismissedReason string `json:"dismissed_reason"`
	Dependency      *struct {
		Package      alertPackage `json:"package"`
		ManifestPath string       `json:"manifest_path"`
		Scope        string       `json:"scope"`
	} `json:"dependency"`
	SecurityAdvisory *struct {
		GHSA        string            `json:"ghsa_id"`
		CVE         *string           `json:"cve_id"`
		Identifiers []AlertIdentifier `json:"identifiers"`
	} `json:"security_advisory"`
	SecurityVulnerability *struct {
		Package         alertPackage `json:"package"`
		VulnerableRange string       `json:"vulnerable_version_range"`
		FirstPatched    *struct {
			Identifier string `json:"identifier"`
		} `json:"first_patched_version"`
	} `json:"security_vulnerability"`
}

type alertPackage struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
}

// isDependabotAlert reports whether a JSON object has a Dependabot alert's
// shape: a dependency and a security advisory.
func isDependabotAlert(probe map[string]json.RawMessage) bool {
	_, dep := probe["dependency"]
	_, adv := probe["security_advisory"]
	return dep && adv
}

// ParseDependabotAlert reads one alert in the REST shape. It only decodes
// and bounds; DependabotAlert.Vuln decides whether it can be worked.
func ParseDependabotAlert(data []byte) (*DependabotAlert, error) {
	if len(data) > MaxAlertBytes {
		return nil, fmt.Errorf("%w: Dependabot alert is %d bytes (limit %d)", ErrBadReport, len(data), MaxAlertBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: Dependabot alert: not UTF-8", ErrBadReport)
	}
	var in alertJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: Dependabot alert: %v", ErrBadReport, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: Dependabot alert: trailing data after the JSON object", ErrBadReport)
	}
	if in.Number == nil || in.Dependency == nil || in.SecurityAdvisory == nil {
		return nil, fmt.Errorf("%w: Dependabot alert: want number, dependency and security_advisory", ErrBadReport)
	}
	if len(in.SecurityAdvisory.Identifiers) > maxAdvisories {
		return nil, fmt.Errorf("%w: Dependabot alert: %d identifiers (limit %d)", ErrBadReport, len(in.SecurityAdvisory.Identifiers), maxAdvisories)
	}
	a := &DependabotAlert{
		Number: *in.Number, State: in.State, DismissedReason: in.DismissedReason,
		Ecosystem: in.Dependency.Package.Ecosystem, Package: in.Dependency.Package.Name,
		ManifestPath: in.Dependency.ManifestPath, Scope: in.Dependency.Scope,
		GHSA: in.SecurityAdvisory.GHSA, Identifiers: in.SecurityAdvisory.Identifiers,
	}
	if in.SecurityAdvisory.CVE != nil {
		a.CVE = *in.SecurityAdvisory.CVE
	}
	if sv := in.SecurityVulnerability; sv != nil {
		a.VulnEcosystem, a.VulnPackage, a.VulnerableRange = sv.Package.Ecosystem, sv.Package.Name, sv.VulnerableRange
		if sv.FirstPatched != nil {
			a.FirstPatched = sv.FirstPatched.Identifier
		}
	}
	return a, nil
}

// AlertID is the finding id of Dependabot alert n: it names the branch
// fixrail/dependabot-n.
func AlertID(n int) string { return "dependabot-" + strconv.Itoa(n) }

// Vuln checks the alert and turns it into the cve type's input. A state
// other than open is ErrAlertNotOpen; an ecosystem the cve type cannot
// work, malformed advisory ids, or a vulnerability for another package
// than the dependency are ErrBadReport. The version is left empty: the
// manifest says which is installed.
func (a *DependabotAlert) Vuln() (*Vuln, error) {
	if a.Number <= 0 || a.Number > 1<<31-1 {
		return nil, fmt.Errorf("%w: Dependabot alert number %d", ErrBadReport, a.Number)
	}
	if a.State != "open" {
		why := fmt.Sprintf("alert #%d is %s", a.Number, bound(a.State, 20))
		if a.State == "" {
			why = fmt.Sprintf("alert #%d has no state", a.Number)
		}
		if slices.Contains(dismissedReasons, a.DismissedReason) {
			why += " (" + a.DismissedReason + ")"
		}
		return nil, fmt.Errorf("%w: %s; fixrail works open alerts only (reopen it on GitHub to have it fixed)", ErrAlertNotOpen, why)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: Dependabot alert #%d: %s", ErrBadReport, a.Number, fmt.Sprintf(format, args...))
	}
	eco, err := DependabotEcosystem(a.Ecosystem)
	if err != nil {
		return nil, bad("%v", err)
	}
	if a.VulnEcosystem != "" && !strings.EqualFold(a.VulnEcosystem, a.Ecosystem) || a.VulnPackage != "" && a.VulnPackage != a.Package {
		return nil, bad("security_vulnerability is for %s %q, the dependency is %s %q", bound(a.VulnEcosystem, 40), bound(a.VulnPackage, 80), bound(a.Ecosystem, 40), bound(a.Package, 80))
	}
	var ids []string
	add := func(kind, id string) error {
		if id == "" {
			return nil
		}
		re := ghsaRE()
		if kind == "CVE" {
			re = cveRE()
		}
		if !re.MatchString(id) {
			return bad("%s id %q is not one", kind, bound(id, 40))
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		return nil
	}
	if a.GHSA == "" {
		return nil, bad("the advisory has no ghsa_id")
	}
	if err := add("GHSA", a.GHSA); err != nil {
		return nil, err
	}
	if err := add("CVE", a.CVE); err != nil {
		return nil, err
	}
	// Other identifier types are not advisory ids OSV aliases; skipped.
	for _, id := range a.Identifiers {
		if id.Type == "GHSA" || id.Type == "CVE" {
			if err := add(id.Type, id.Value); err != nil {
				return nil, err
			}
		}
	}
	v, err := newVuln(AlertID(a.Number), eco, a.Package, "", ids, alertManifest(a.ManifestPath), DependabotSource)
	if err != nil {
		return nil, bad("%v", err)
	}
	for name, s := range map[string]string{"vulnerable_version_range": a.VulnerableRange, "first_patched_version": a.FirstPatched, "scope": a.Scope} {
		if _, err := hintField(name, s); err != nil {
			return nil, bad("%v", err)
		}
	}
	v.Range, v.FirstPatched, v.Scope = a.VulnerableRange, a.FirstPatched, a.Scope
	return v, nil
}

// lockfileManifests names the manifest beside a lockfile: Dependabot's
// manifest_path is often the lockfile, while the manifest is what
// fixrail's search prefers by the hint.
var lockfileManifests = map[string]string{
	"package-lock.json": "package.json", "npm-shrinkwrap.json": "package.json", "yarn.lock": "package.json", "pnpm-lock.yaml": "package.json",
	"poetry.lock": "pyproject.toml", "uv.lock": "pyproject.toml", "pdm.lock": "pyproject.toml",
	"Cargo.lock": "Cargo.toml", "Gemfile.lock": "Gemfile", "go.sum": "go.mod",
}

func alertManifest(p string) string {
	if m, ok := lockfileManifests[path.Base(p)]; ok {
		return path.Join(path.Dir(p), m)
	}
	return p
}

// hintField is a bounded single line of printable text (spaces allowed:
// ">= 2.0.0, < 2.3.1").
func hintField(name, s string) (string, error) {
	if len(s) > 128 {
		return "", fmt.Errorf("%s is %d bytes (limit 128)", name, len(s))
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return "", fmt.Errorf("%s has a control character", name)
	}
	return s, nil
}

// bound quotes nothing but keeps an error message short and printable.
func bound(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '?'
		}
		return r
	}, s)
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// FromDependabot reads alert number of repo from src and checks it.
func FromDependabot(ctx context.Context, src AlertSource, repo string, number int) (*Vuln, error) {
	if number <= 0 {
		return nil, fmt.Errorf("%w: Dependabot alert number %d: must be positive", ErrBadReport, number)
	}
	a, err := src.DependabotAlert(ctx, number)
	if err != nil {
		return nil, err
	}
	if a.Number != number {
		return nil, fmt.Errorf("%w: asked for Dependabot alert #%d, GitHub answered #%d", ErrBadReport, number, a.Number)
	}
	v, err := a.Vuln()
	if err != nil {
		return nil, err
	}
	v.Source = fmt.Sprintf("%s:github:%s#%d", DependabotSource, repo, number)
	return v, nil
}
