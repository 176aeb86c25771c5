package manifest

import (
	"strings"
	"testing"
)

// Each parser reads attacker-controlled bytes: it must return, without
// panicking, with at most maxDecls declarations, every one with a name.
func fuzzParser(f *testing.F, seedKey string, parse func([]byte) ([]decl, error)) {
	for k, v := range repo {
		if strings.HasSuffix(k, seedKey) {
			f.Add([]byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := parse(data)
		if err != nil {
			return
		}
		if len(ds) > maxDecls {
			t.Fatalf("%d declarations", len(ds))
		}
		for _, d := range ds {
			if d.name == "" {
				t.Fatalf("empty name in %+v", d)
			}
		}
	})
}

func fuzzLock(f *testing.F, seedKey string, parse func([]byte) (map[string][]string, error)) {
	for k, v := range repo {
		if strings.HasSuffix(k, seedKey) {
			f.Add([]byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parse(data)
		if err != nil {
			return
		}
		for k, vs := range m {
			if k == "" || len(vs) == 0 {
				t.Fatalf("bad entry %q: %v", k, vs)
			}
		}
	})
}

func FuzzRequirements(f *testing.F) { fuzzParser(f, "requirements.txt", parseRequirements) }
func FuzzPyproject(f *testing.F)    { fuzzParser(f, "pyproject.toml", parsePyproject) }
func FuzzPackageJSON(f *testing.F)  { fuzzParser(f, "package.json", parsePackageJSON) }
func FuzzGoMod(f *testing.F)        { fuzzParser(f, "go.mod", parseGoMod) }
func FuzzPom(f *testing.F)          { fuzzParser(f, "pom.xml", parsePom) }
func FuzzCargoToml(f *testing.F)    { fuzzParser(f, "Cargo.toml", parseCargoToml) }
func FuzzGemfile(f *testing.F)      { fuzzParser(f, "Gemfile", parseGemfile) }
func FuzzTOMLLock(f *testing.F)     { fuzzLock(f, ".lock", parseTOMLLock) }
func FuzzPackageLock(f *testing.F)  { fuzzLock(f, "package-lock.json", parsePackageLock) }
func FuzzGoSum(f *testing.F)        { fuzzLock(f, "go.sum", parseGoSum) }
func FuzzGemfileLock(f *testing.F)  { fuzzLock(f, "Gemfile.lock", parseGemfileLock) }

// FuzzBumpPackageJSON: the byte-preserving edit either refuses or yields
// JSON that still parses and declares the target.
func FuzzBumpPackageJSON(f *testing.F) {
	f.Add([]byte(repo["web/package.json"]), "lodash")
	f.Add([]byte(`{"dependencies":{"a":"1.0.0"},"x":{"dependencies":{"a":"^1.0.0"}}}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		ds, err := parsePackageJSON(data)
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.name != name {
				continue
			}
			dep := Dep{Name: d.name, Spec: d.spec, Section: d.section}
			out, err := bumpPackageJSON(data, dep, "9.9.9")
			if err != nil {
				continue
			}
			after, err := parsePackageJSON(out)
			if err != nil {
				t.Fatalf("bumped JSON no longer parses: %v\n%s", err, out)
			}
			ok := false
			for _, a := range after {
				if a.name == name && a.section == d.section && strings.Contains(a.spec, "9.9.9") {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("bump of %q in %s did not land:\n%s", name, d.section, out)
			}
			return
		}
	})
}
