package cve

import (
	"fmt"
	"testing"

	"github.com/fixrail/fixrail/internal/vulndata"
)

// largePackage is a package with a long history: n published versions and
// m advisories, each enumerating every affected version (as OSV does for
// PyPI) and a range.
func largePackage(n, m int) ([]vulndata.Vuln, []vulndata.Published) {
	var pub []vulndata.Published
	var all []string
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("1.%d.%d", i/10, i%10)
		pub = append(pub, vulndata.Published{Version: v})
		all = append(all, v)
	}
	var vulns []vulndata.Vuln
	for j := 0; j < m; j++ {
		fixed := all[(j*(n-1))/m+1]
		vulns = append(vulns, vulndata.Vuln{ID: fmt.Sprintf("PYSEC-%04d", j), Affected: []vulndata.Affected{{
			Package:  vulndata.Package{Ecosystem: "PyPI", Name: "big"},
			Ranges:   []vulndata.Range{{Type: "ECOSYSTEM", Events: []vulndata.Event{{Introduced: "0"}, {Fixed: fixed}}}},
			Versions: all[:(j*(n-1))/m+1],
		}}})
	}
	return vulns, pub
}

// BenchmarkDecideLargePackage: 300 versions, 60 advisories enumerating up
// to 300 versions each — the decision must stay well under a second.
func BenchmarkDecideLargePackage(b *testing.B) {
	vulns, pub := largePackage(300, 60)
	cur, _ := vulndata.PyPI.Parse("1.0.0")
	for b.Loop() {
		d := DecideFrom(vulndata.PyPI, "big", cur, vulns, pub, vulndata.Meta{}, vulndata.Meta{})
		if d.Outcome != Upgrade {
			b.Fatal(d.Rationale)
		}
	}
}

func TestDecideLargePackage(t *testing.T) {
	vulns, pub := largePackage(300, 60)
	cur, _ := vulndata.PyPI.Parse("1.0.0")
	d := DecideFrom(vulndata.PyPI, "big", cur, vulns, pub, vulndata.Meta{}, vulndata.Meta{})
	// The last advisory is fixed at the 296th version; everything below is
	// affected by at least one, so the target is exactly that version.
	want := pub[(59*299)/60+1].Version
	if d.Target != want || len(d.PassedOver) != maxPassed || d.PassedOverOmitted == 0 {
		t.Fatalf("target %s (want %s), passed %d + %d", d.Target, want, len(d.PassedOver), d.PassedOverOmitted)
	}
}
