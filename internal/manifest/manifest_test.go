package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/vulndata"
)

// writeTree lays files (path → content) under a fresh directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var repo = map[string]string{
	"requirements.txt": `# pinned
Jinja2==2.7.2 ; python_version >= "3"  # templating
requests[socks]>=2.0,<3
flask
-r other.txt
hashed==1.0 \
    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000
`,
	"svc/pyproject.toml": `[project]
name = "svc"
dependencies = ["urllib3==1.26.4", "idna>=2"]
[project.optional-dependencies]
test = ["pytest==7.0.0"]
[tool.poetry.dependencies]
python = "^3.10"
Django = "3.0.1"
pillow = {version = "^8.0", extras = ["x"]}
`,
	"svc/poetry.lock": `[[package]]
name = "django"
version = "3.0.1"

[[package]]
name = "pillow"
version = "8.3.1"
`,
	"web/package.json": `{
  "name": "dependencies",
  "version": "1.0.0",
  "description": "lodash",
  "dependencies": {"@fixrail-demo/left-pad": "^1.1.0", "lodash": "4.17.20"},
  "devDependencies": {"typescript": "~5.4.0"}
}
`,
	"web/package-lock.json": `{
  "name": "web", "lockfileVersion": 3,
  "packages": {
    "": {"name": "web"},
    "node_modules/@fixrail-demo/left-pad": {"version": "1.1.0"},
    "node_modules/lodash": {"version": "4.17.20"},
    "node_modules/x/node_modules/lodash": {"version": "3.0.0"},
    "node_modules/typescript": {"version": "5.4.5"}
  }
}
`,
	"go.mod": `module example.com/app

go 1.21

require (
	golang.org/x/text v0.3.7
	example.com/replaced v1.0.0 // indirect
)

replace example.com/replaced => ./local
`,
	"go.sum": `golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=
golang.org/x/text v0.3.7/go.mod h1:u+2+/6zg+i71rQMx5EYifcz6MCKuco9NR6JIITiCfzQ=
example.com/replaced v1.0.0/go.mod h1:u+2+/6zg+i71rQMx5EYifcz6MCKuco9NR6JIITiCfzQ=
`,
	"java/pom.xml": `<?xml version="1.0"?>
<project>
  <properties><jackson.version>2.12.3</jackson.version></properties>
  <dependencies>
    <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId><version>${jackson.version}</version></dependency>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>[4.0,5.0)</version></dependency>
  </dependencies>
</project>
`,
	"rs/Cargo.toml": `[package]
name = "rs"
[dependencies]
smallvec = "1.6.0"
exact = "=0.2.0"
renamed = { package = "real-crate", version = "0.3" }
[dev-dependencies]
tokio = { version = "1", features = ["full"] }
`,
	"rs/Cargo.lock": `version = 3
[[package]]
name = "smallvec"
version = "1.6.0"
[[package]]
name = "real-crate"
version = "0.3.1"
[[package]]
name = "real-crate"
version = "0.2.9"
`,
	"rb/Gemfile": `source "https://rubygems.org"
gem "nokogiri", "~> 1.16"
gem 'rails', '7.1.0'
gem "rack", ">= 2", "< 4"
`,
	"rb/Gemfile.lock": `GEM
  remote: https://rubygems.org/
  specs:
    nokogiri (1.16.0-arm64-darwin)
      racc (~> 1.4)
    nokogiri (1.16.0-x86_64-linux)
      racc (~> 1.4)
    rails (7.1.0)

PLATFORMS
  arm64-darwin
  x86_64-linux
`,
	"node_modules/evil/package.json": `{"dependencies": {"lodash": "1.0.0"}}`,
}

func TestRead(t *testing.T) {
	root := writeTree(t, repo)
	type row struct {
		name, spec, version, section string
		locked                       []string
		line                         int
		hashed, replaced             bool
	}
	for _, c := range []struct {
		manifest string
		want     []row
	}{
		{"requirements.txt", []row{
			{"Jinja2", "==2.7.2", "2.7.2", "requirements", nil, 2, false, false},
			{"requests", ">=2.0,<3", "", "requirements", nil, 3, false, false},
			{"flask", "", "", "requirements", nil, 4, false, false},
			{"hashed", "==1.0", "1.0", "requirements", nil, 6, true, false},
		}},
		{"svc/pyproject.toml", []row{
			{"urllib3", "==1.26.4", "1.26.4", "project.dependencies", nil, 0, false, false},
			{"idna", ">=2", "", "project.dependencies", nil, 0, false, false},
			{"pytest", "==7.0.0", "7.0.0", "project.optional-dependencies.test", nil, 0, false, false},
			{"Django", "3.0.1", "3.0.1", "tool.poetry.dependencies", []string{"3.0.1"}, 0, false, false},
			{"pillow", "^8.0", "", "tool.poetry.dependencies", []string{"8.3.1"}, 0, false, false},
		}},
		{"web/package.json", []row{
			{"@fixrail-demo/left-pad", "^1.1.0", "", "dependencies", []string{"1.1.0"}, 0, false, false},
			{"lodash", "4.17.20", "4.17.20", "dependencies", []string{"4.17.20"}, 0, false, false},
			{"typescript", "~5.4.0", "", "devDependencies", []string{"5.4.5"}, 0, false, false},
		}},
		{"go.mod", []row{
			{"golang.org/x/text", "v0.3.7", "v0.3.7", "require", []string{"v0.3.7"}, 6, false, false},
			{"example.com/replaced", "v1.0.0", "v1.0.0", "require (indirect)", nil, 7, false, true},
		}},
		{"java/pom.xml", []row{
			{"com.fasterxml.jackson.core:jackson-databind", "${jackson.version}", "2.12.3", "dependencies", nil, 0, false, false},
			{"junit:junit", "[4.0,5.0)", "", "dependencies", nil, 0, false, false},
		}},
		{"rs/Cargo.toml", []row{
			{"exact", "=0.2.0", "0.2.0", "dependencies", nil, 0, false, false},
			{"real-crate", "0.3", "", "dependencies", []string{"0.2.9", "0.3.1"}, 0, false, false},
			{"smallvec", "1.6.0", "", "dependencies", []string{"1.6.0"}, 0, false, false},
			{"tokio", "1", "", "dev-dependencies", nil, 0, false, false},
		}},
		{"rb/Gemfile", []row{
			{"nokogiri", "~> 1.16", "", "gem", []string{"1.16.0"}, 2, false, false}, // one release, two platforms
			{"rails", "7.1.0", "7.1.0", "gem", []string{"7.1.0"}, 3, false, false},
			{"rack", ">= 2, < 4", "", "gem", nil, 4, false, false},
		}},
	} {
		t.Run(c.manifest, func(t *testing.T) {
			deps, err := Read(root, c.manifest)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, d := range deps {
				got = append(got, row{d.Name, d.Spec, d.Version, d.Section, d.Locked, d.Line, d.Hashed, d.Replaced})
			}
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(row{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFind(t *testing.T) {
	root := writeTree(t, repo)
	deps, err := Find(root, vulndata.NPM, "lodash", "")
	if err != nil || len(deps) != 1 || deps[0].Manifest != "web/package.json" || deps[0].Current() != "4.17.20" {
		t.Fatalf("lodash: %v %+v (node_modules must not count)", err, deps)
	}
	deps, err = Find(root, vulndata.PyPI, "jinja2", "../../etc/passwd")
	if err != nil || len(deps) != 1 || deps[0].Name != "Jinja2" {
		t.Fatalf("jinja2 with a hostile hint: %v %+v", err, deps)
	}
	deps, err = Find(root, vulndata.RubyGems, "nokogiri", "rb/Gemfile")
	if err != nil || deps[0].Current() != "1.16.0" {
		t.Fatalf("nokogiri: %v %+v", err, deps)
	}
	// Named in the alert, declared nowhere: typed, with what was searched.
	_, err = Find(root, vulndata.NPM, "left-pad", "web/package.json")
	var nim *NotInManifestError
	if !errors.As(err, &nim) || !errors.Is(err, ErrNotInManifest) || len(nim.Searched) != 1 {
		t.Fatalf("absent: %v", err)
	}
}

func TestHostileFiles(t *testing.T) {
	root := writeTree(t, map[string]string{"a/x": ""})
	outside := writeTree(t, map[string]string{"package.json": `{"dependencies":{"lodash":"1.0.0"}}`})
	// A manifest that is a symlink out of the repository is never read.
	if err := os.Symlink(filepath.Join(outside, "package.json"), filepath.Join(root, "package.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(root, "package.json"); err == nil {
		t.Fatal("read through a symlink out of the repository")
	}
	if _, err := Find(root, vulndata.NPM, "lodash", ""); !errors.Is(err, ErrNotInManifest) {
		t.Fatalf("found through a symlink: %v", err)
	}
	// A FIFO where go.mod should be: an error at once, never a stall.
	if err := syscall.Mkfifo(filepath.Join(root, "go.mod"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(root, "go.mod"); err == nil {
		t.Fatal("read a FIFO")
	}
	// Oversized.
	big := writeTree(t, map[string]string{"requirements.txt": strings.Repeat("a==1\n", MaxManifest/5+1)})
	if _, err := Read(big, "requirements.txt"); err == nil {
		t.Fatal("read an oversized manifest")
	}
	if _, err := Read(root, "../x/go.mod"); err == nil {
		t.Fatal("read outside the root")
	}
}
