package vulndata

import (
	"encoding/json"
	"testing"
)

// FuzzEvaluate: an OSV record is registry data; evaluating any record
// against any version must return one of the three verdicts, never panic,
// and a version listed verbatim in versions[] is always affected.
func FuzzEvaluate(f *testing.F) {
	f.Add(`{"id":"X","affected":[{"package":{"ecosystem":"npm","name":"m"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.0"},{"limit":"*"}]}],"versions":["1.0.0"]}]}`, "npm", "m", "1.0.0")
	f.Add(`{"id":"Y","affected":[{"package":{"ecosystem":"PyPI","name":"p"},"ranges":[{"type":"ECOSYSTEM","events":[{"last_affected":"2.0"},{"introduced":"1!0"}]}]}]}`, "PyPI", "P", "1!0.5")
	f.Add(`{"id":"Z","affected":[{"package":{"ecosystem":"Go","name":"g"},"ranges":[{"type":"SEMVER","events":[{"introduced":"v1.0.0"}]}]}]}`, "Go", "g", "v1.0.0-0.20200101000000-abcdefabcdef")
	f.Fuzz(func(t *testing.T, rec, eco, name, version string) {
		var v Vuln
		if json.Unmarshal([]byte(rec), &v) != nil {
			return
		}
		e := Ecosystem(eco)
		pv, err := e.Parse(version)
		if err != nil {
			return
		}
		got := v.Evaluate(e, name, pv)
		if got != Unaffected && got != IsAffected && got != NoRange {
			t.Fatalf("verdict %d", got)
		}
		for _, a := range v.Affected {
			if a.matches(e, name) {
				for _, s := range a.Versions {
					if s == version && got != IsAffected {
						t.Fatalf("%q listed in versions[] but verdict %d", version, got)
					}
				}
			}
		}
		_ = e.IsPrerelease(version)
		_ = e.Distance(version, version)
	})
}
