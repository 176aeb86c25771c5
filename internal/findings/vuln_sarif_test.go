package findings

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// osvSARIF is osv-scanner's SARIF shape (alerts-intake.md §2.4, from its
// fixture test-vuln-results-a.sarif): the package and version only in the
// message, the lockfile as an absolute file:// URI, no region, no ecosystem.
const osvSARIF = `{"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
 "runs": [{"tool": {"driver": {"name": "osv-scanner", "informationUri": "https://github.com/google/osv-scanner", "rules": []}},
  "results": [
   {"ruleId": "CVE-2021-3121", "ruleIndex": 1, "level": "warning",
    "message": {"text": "Package 'github.com/gogo/protobuf@1.3.1' is vulnerable to 'CVE-2021-3121' (also known as 'GO-2021-0053', 'GHSA-c3h9-896r-86jm')."},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///path/to/go.mod"}}}]},
   {"ruleId": "GO-2099-7", "level": "warning",
    "message": {"text": "Package 'github.com/gogo/protobuf@1.3.1' is vulnerable to 'GO-2099-7'."},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///path/to/go.mod"}}}]},
   {"ruleId": "GHSA-1", "level": "warning",
    "message": {"text": "Package '@babel/traverse@7.22.0' is vulnerable to 'GHSA-1'."},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "web/package-lock.json"}}}]}
  ]}]}`

func TestParseOSVScannerSARIF(t *testing.T) {
	vs, err := ParseVuln([]byte(osvSARIF))
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ Eco, Pkg, Ver, Manifest, Adv string }
	var g []got
	for _, v := range vs {
		g = append(g, got{v.Ecosystem, v.Package, v.Version, v.Manifest, strings.Join(v.Advisories, ",")})
		if v.Source != "osv-scanner-sarif" || v.ID == "" {
			t.Errorf("source %q id %q", v.Source, v.ID)
		}
	}
	want := []got{
		{"Go", "github.com/gogo/protobuf", "1.3.1", "go.mod", "CVE-2021-3121,GO-2099-7"},
		{"npm", "@babel/traverse", "7.22.0", "web/package-lock.json", "GHSA-1"},
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("got %+v\nwant %+v", g, want)
	}
	for name, doc := range map[string]string{
		"another tool":     strings.Replace(osvSARIF, `"name": "osv-scanner"`, `"name": "semgrep"`, 1),
		"not its message":  strings.Replace(osvSARIF, "Package 'github.com/gogo/protobuf@1.3.1' is vulnerable", "Something", 1),
		"unknown file":     strings.Replace(osvSARIF, "web/package-lock.json", "web/deps.lock", 1),
		"space in version": strings.Replace(osvSARIF, "@7.22.0'", "@7.22 0'", 1),
		"no results":       `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "osv-scanner"}}, "results": []}]}`,
		"sarif 2.0":        strings.Replace(osvSARIF, `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
	} {
		if _, err := ParseVuln([]byte(doc)); !errors.Is(err, ErrBadReport) {
			t.Errorf("%s: ParseVuln = %v, want ErrBadReport", name, err)
		}
	}
}
