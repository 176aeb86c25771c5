package findings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/sarif"
)

// osvSARIFMessage is osv-scanner's result text: "Package '<name>@<version>'
// is vulnerable to '<ID>' (also known as …)." The name may hold '@' (npm
// scopes); the version is what follows the last one.
var osvSARIFMessage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Package '([^']+)@([^'@]+)' is vulnerable to '([^']+)'`)
})

// lockfileEcosystems names the ecosystem of a lockfile or manifest:
// osv-scanner's SARIF carries none, only the file.
var lockfileEcosystems = map[string]string{
	"go.mod": "Go", "go.sum": "Go",
	"package.json": "npm", "package-lock.json": "npm", "npm-shrinkwrap.json": "npm", "yarn.lock": "npm", "pnpm-lock.yaml": "npm",
	"requirements.txt": "PyPI", "poetry.lock": "PyPI", "Pipfile.lock": "PyPI", "pyproject.toml": "PyPI", "uv.lock": "PyPI", "pdm.lock": "PyPI",
	"Cargo.lock": "crates.io", "Cargo.toml": "crates.io",
	"Gemfile.lock": "RubyGems", "Gemfile": "RubyGems",
	"pom.xml": "Maven", "gradle.lockfile": "Maven",
}

// isSARIF reports whether a JSON object is a SARIF log.
func isSARIF(probe map[string]json.RawMessage) bool {
	_, runs := probe["runs"]
	v, ok := probe["version"]
	return runs && ok && bytes.Equal(bytes.TrimSpace(v), []byte(`"2.1.0"`))
}

// parseOSVScannerSARIF reads osv-scanner's --format sarif: one result per
// package and advisory group, the package and version only in the message
// text, the lockfile the only location. Results of one package in one file
// are one finding with every advisory. Runs of another tool are refused:
// their results are not vulnerable dependencies.
func parseOSVScannerSARIF(data []byte) ([]*Vuln, error) {
	log, err := sarif.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	type key struct{ eco, pkg, version, manifest string }
	var order []key
	ids := map[key][]string{}
	for ri, run := range log.Runs {
		if name := run.Tool.Driver.Name; name != "osv-scanner" {
			return nil, fmt.Errorf("%w: SARIF run %d is from %q, not osv-scanner: not a vulnerable-dependency report", ErrBadReport, ri, name)
		}
		for i, r := range run.Results {
			m := osvSARIFMessage().FindStringSubmatch(r.Message.Text)
			if m == nil {
				return nil, fmt.Errorf("%w: SARIF result %d: message is not osv-scanner's \"Package 'name@version' is vulnerable to 'ID'\"", ErrBadReport, i)
			}
			uri := ""
			if len(r.Locations) > 0 && r.Locations[0].PhysicalLocation != nil && r.Locations[0].PhysicalLocation.ArtifactLocation != nil {
				uri = r.Locations[0].PhysicalLocation.ArtifactLocation.URI
			}
			uri = strings.TrimPrefix(uri, "file://")
			eco := lockfileEcosystems[path.Base(uri)]
			if eco == "" {
				return nil, fmt.Errorf("%w: SARIF result %d: no ecosystem for the file %q", ErrBadReport, i, path.Base(uri))
			}
			k := key{eco, m[1], m[2], uri}
			if _, seen := ids[k]; !seen {
				if len(order) == maxVulns {
					return nil, fmt.Errorf("%w: more than %d findings", ErrBadReport, maxVulns)
				}
				order = append(order, k)
			}
			if !slices.Contains(ids[k], m[3]) {
				ids[k] = append(ids[k], m[3])
			}
		}
	}
	out := make([]*Vuln, 0, len(order))
	for i, k := range order {
		v, err := newVuln("", k.eco, k.pkg, k.version, ids[k], k.manifest, "osv-scanner-sarif")
		if err != nil {
			return nil, fmt.Errorf("%w: SARIF package %d: %v", ErrBadReport, i, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the SARIF log lists no vulnerable package", ErrBadReport)
	}
	return out, nil
}
