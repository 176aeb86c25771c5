package findings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// osvScannerJSON is osv-scanner v2's --format json shape (trimmed: the
// vulnerabilities carry full OSV records, here only ids).
const osvScannerJSON = `{"results": [{
  "source": {"path": "/home/ci/work/app/go.mod", "type": "lockfile"},
  "packages": [
    {"package": {"name": "golang.org/x/text", "version": "0.3.7", "ecosystem": "Go"},
     "vulnerabilities": [{"id": "GO-2022-1059"}, {"id": "GHSA-69ch-w2m2-3vjp"}],
     "groups": [{"ids": ["GO-2022-1059", "GHSA-69ch-w2m2-3vjp"], "aliases": ["CVE-2022-32149"]}]},
    {"package": {"name": "clean", "version": "1.0.0", "ecosystem": "Go"}, "vulnerabilities": []}
  ]}]}`

func TestParseVuln(t *testing.T) {
	vs, err := ParseVuln([]byte(`{"ecosystem": "npm", "package": "@fixrail-demo/left-pad", "version": "1.1.0", "advisories": ["GHSA-fxr1-0000-0001"], "manifest": "web/package.json"}`))
	if err != nil || len(vs) != 1 || vs[0].Manifest != "web/package.json" || !strings.HasPrefix(vs[0].ID, "cve-") || vs[0].Source != "finding" {
		t.Fatalf("%v %+v", err, vs)
	}
	vs, err = ParseVuln([]byte(osvScannerJSON))
	if err != nil || len(vs) != 1 {
		t.Fatalf("%v %+v", err, vs)
	}
	if v := vs[0]; v.Ecosystem != "Go" || v.Package != "golang.org/x/text" || v.Manifest != "go.mod" || strings.Join(v.Advisories, ",") != "GO-2022-1059" || v.Source != "osv-scanner" {
		t.Fatalf("%+v", v)
	}
	for _, bad := range []string{
		`{"ecosystem": "npm", "package": "x"}`,                                    // no version
		`{"ecosystem": "npm", "package": "x\u001b[31m", "version": "1"}`,          // control character
		`{"ecosystem": "npm", "package": "x", "version": "1", "id": "../../etc"}`, // unsafe id
		`{"ecosystem": "npm", "package": "x", "version": "1", "extra": 1}`,        // unknown field
		`[]`, `{"results": []}`, "\xff",
		`{"ecosystem": "npm", "package": "` + strings.Repeat("a", 600) + `", "version": "1"}`,
	} {
		if _, err := ParseVuln([]byte(bad)); !errors.Is(err, ErrBadReport) {
			t.Errorf("%.60q: err = %v", bad, err)
		}
	}
	// A traversing manifest hint is dropped to its name, never kept as a path.
	vs, _ = ParseVuln([]byte(`{"ecosystem": "PyPI", "package": "jinja2", "version": "2.7.2", "manifest": "../../requirements.txt"}`))
	if vs[0].Manifest != "requirements.txt" {
		t.Fatalf("manifest = %q", vs[0].Manifest)
	}
}

func TestReadVulnFileRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.json")
	if err := mkfifo(p); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadVulnFile(p); !errors.Is(err, ErrBadReport) {
		t.Fatalf("err = %v", err)
	}
	os.Remove(p)
}

func FuzzParseVuln(f *testing.F) {
	f.Add([]byte(osvScannerJSON))
	f.Add([]byte(osvSARIF))
	f.Add([]byte(dependabotAlert))
	f.Add([]byte(`[{"ecosystem": "npm", "package": "a", "version": "1", "advisories": ["X"], "manifest": "a/package.json"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := ParseVuln(data)
		if err != nil {
			return
		}
		for _, v := range vs {
			if v.ID == "" || v.Package == "" || (v.Version == "") != (v.Source == DependabotSource) {
				t.Fatalf("%+v", v)
			}
			if v.Manifest != "" {
				if _, err := pathguard.CleanRel(v.Manifest); err != nil {
					t.Fatalf("manifest %q: %v", v.Manifest, err)
				}
			}
		}
	})
}

// TestVulnFindingRoundTrip: a vulnerable dependency becomes a cve finding
// whose evidence reads back as the same dependency, and VulnOf holds a
// report's evidence to intake's checks (a report may claim fix_type cve).
func TestVulnFindingRoundTrip(t *testing.T) {
	vs, err := ParseVuln([]byte(`{"id": "cve-1", "ecosystem": "PyPI", "package": "requests", "version": "2.0.0", "advisories": ["PYSEC-1", "GHSA-x"], "manifest": "api/requirements.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	f := vs[0].Finding()
	if f.Type() != "cve" || f.ID != "cve-1" || f.Evidence == nil || f.Evidence.Package != "requests" {
		t.Fatalf("finding %+v", f)
	}
	var ev string
	for _, fl := range f.Untrusted() {
		if fl.Name == "evidence" {
			ev = fl.Value
		}
	}
	if !strings.Contains(ev, "package: requests") || !strings.Contains(ev, "advisories: PYSEC-1, GHSA-x") {
		t.Errorf("the evidence is not among the fenced fields: %q", ev)
	}
	back, err := VulnOf(f)
	if err != nil {
		t.Fatal(err)
	}
	back.Source = vs[0].Source
	if !reflect.DeepEqual(back, vs[0]) {
		t.Errorf("VulnOf(Finding()) = %+v, want %+v", back, vs[0])
	}
	for name, ev := range map[string]*Evidence{
		"no evidence":       nil,
		"no package":        {Ecosystem: "PyPI", Version: "1"},
		"space in package":  {Ecosystem: "PyPI", Package: "a b", Version: "1"},
		"control character": {Ecosystem: "PyPI", Package: "a", Version: "1\x1b[2J"},
		"long advisory":     {Ecosystem: "PyPI", Package: "a", Version: "1", Advisories: []string{strings.Repeat("A", 129)}},
	} {
		if _, err := VulnOf(&Finding{ID: "r", FixType: "cve", Evidence: ev}); !errors.Is(err, ErrBadReport) {
			t.Errorf("%s: VulnOf = %v, want ErrBadReport", name, err)
		}
	}
	// An escaping manifest hint keeps only its base name, as at intake.
	v, err := VulnOf(&Finding{ID: "r", Evidence: &Evidence{Ecosystem: "Go", Package: "m", Version: "v1.0.0", Manifest: "/etc/../go.mod"}})
	if err != nil || v.Manifest != "go.mod" {
		t.Errorf("manifest hint %q, %v", v.Manifest, err)
	}
}
