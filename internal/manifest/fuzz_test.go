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

// The readers of where a locked copy came from read the same files.
func FuzzPackageLockForeign(f *testing.F) { fuzzLock(f, "package-lock.json", npmLockForeign) }
func FuzzTOMLLockForeign(f *testing.F)    { fuzzLock(f, ".lock", tomlLockForeign) }
func FuzzCargoLockForeign(f *testing.F)   { fuzzLock(f, "Cargo.lock", cargoLockForeign) }
func FuzzGemfileLockForeign(f *testing.F) { fuzzLock(f, "Gemfile.lock", gemfileLockForeign) }

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

// The include reader, the lockfile's copies and the replace reader read
// attacker-controlled bytes too: no panic, and every answer well formed.
func FuzzRequirementIncludes(f *testing.F) {
	f.Add([]byte("-c constraints.txt\n--requirement=a/b.txt\n-rx.txt  # c\n--constraint https://x/y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range requirementIncludes(data) {
			if in.target == "" || in.line < 1 || (in.flag != "-r" && in.flag != "-c") {
				t.Fatalf("bad include %+v", in)
			}
			if rel, why := includeTarget("dir/requirements.txt", in.target); why == "" && (strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") || rel == "..") {
				t.Fatalf("include %q resolves outside the repository: %q", in.target, rel)
			}
		}
	})
}

func FuzzLockInstances(f *testing.F) {
	f.Add([]byte(repo["web/package-lock.json"]))
	f.Add([]byte(`{"dependencies": {"a": {"version": "1", "dependencies": {"w": {"version": "2"}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseLockInstances(data)
		if err != nil {
			return
		}
		for name, ins := range m {
			for _, in := range ins {
				if name == "" || in.Version == "" || !strings.HasSuffix(in.Path, "node_modules/"+name) {
					t.Fatalf("bad copy of %q: %+v", name, in)
				}
			}
		}
	})
}

func FuzzReplaces(f *testing.F) {
	f.Add("go.work", []byte("go 1.22\nuse ./a\nreplace example.com/lib v1.0.2 => ./third_party/lib\n"))
	f.Add("go.mod", []byte("module m\ngo 1.22\nreplace (\n\texample.com/lib => example.com/fork v1.0.3\n)\n"))
	f.Fuzz(func(t *testing.T, file string, data []byte) {
		if file != "go.work" {
			file = "go.mod"
		}
		for _, r := range parseReplaces(file, data, "example.com/lib") {
			if r.File != file || r.New == "" {
				t.Fatalf("bad replace %+v", r)
			}
		}
	})
}
