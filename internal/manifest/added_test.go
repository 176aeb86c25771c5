package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pkgs renders additions as "name@version (spec)" for comparison.
func pkgs(a *Additions) []string {
	var out []string
	for _, p := range a.Packages {
		out = append(out, fmt.Sprintf("%s %s@%s (%s)", p.Ecosystem, p.Name, p.Version, p.Spec))
	}
	return out
}

// TestAdded: every package version a change adds, per format — a new
// name, a changed version or spec, an alias's real package, a nested
// lockfile install — and nothing for what the base already had, a
// removal, or a move within the file.
func TestAdded(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		base, cand string // base "-": the file is new
		want       []string
		unchecked  []string // substrings, in order
	}{
		{name: "requirements new pin", file: "requirements.txt",
			base: "flask==3.0.0\nrequests==2.31.0\n", cand: "flask==3.0.0\nrequests==2.31.0\nreqeusts==2.31.0\n",
			want: []string{"PyPI reqeusts@2.31.0 (==2.31.0)"}},
		{name: "requirements version bump", file: "requirements.txt",
			base: "requests==2.0.0\n", cand: "requests==2.0.2\n",
			want: []string{"PyPI requests@2.0.2 (==2.0.2)"}},
		{name: "requirements unchanged but reformatted", file: "requirements.txt",
			base: "requests==2.0.0\nflask>=3,<4\n", cand: "# pinned\nflask >= 3, < 4  # web\nrequests == 2.0.0\n"},
		{name: "requirements removal adds nothing", file: "requirements.txt",
			base: "requests==2.0.0\nflask==3.0.0\n", cand: "requests==2.0.0\n"},
		{name: "requirements range", file: "requirements-dev.txt",
			base: "-", cand: "pytest>=8\n",
			want: []string{"PyPI pytest@ (>=8)"}},
		{name: "requirements a second platform pin", file: "requirements.txt",
			base: "numpy==1.26.0; sys_platform == 'linux'\n", cand: "numpy==1.26.0; sys_platform == 'linux'\nnumpy==1.25.0; sys_platform == 'win32'\n",
			want: []string{"PyPI numpy@1.25.0 (==1.25.0)"}},
		{name: "requirements hashed continuation", file: "requirements.txt",
			base: "-", cand: "requests==2.31.0 \\\n    --hash=sha256:abc\n",
			want: []string{"PyPI requests@2.31.0 (==2.31.0)"}},
		{name: "requirements a comment ending in a backslash continues nothing", file: "requirements.txt",
			base: "requests==2.0.0\n", cand: "requests==2.0.0\n# kept for later \\\nreqeusts==2.31.0\t# typo'd\n",
			want: []string{"PyPI reqeusts@2.31.0 (==2.31.0)"}},
		{name: "requirements options and URLs fail closed", file: "requirements.txt",
			base: "requests==2.0.0\n", cand: "--extra-index-url https://pypi.example/simple\nrequests==2.0.0\n-e git+https://example.com/x.git#egg=x\nx @ https://example.com/x.whl\nhttps://example.com/y.whl\n",
			unchecked: []string{"--extra-index-url", "-e git+", "x @ https", "https://example.com/y.whl"}},
		{name: "constraints file", file: "constraints.txt",
			base: "urllib3==2.0.0\n", cand: "urllib3==2.0.7\n",
			want: []string{"PyPI urllib3@2.0.7 (==2.0.7)"}},
		{name: "package.json sections overrides resolutions alias", file: "package.json",
			base: `{"dependencies": {"left-pad": "1.3.0"}}`,
			cand: `{"dependencies": {"left-pad": "1.3.0", "crossenv": "^7.0.0"}, "optionalDependencies": {"fsevents": "2.3.3"},
			  "overrides": {"minimist": "1.2.8", "foo": {".": "2.0.0", "bar": "npm:evil-bar@1.0.1"}},
			  "resolutions": {"**/@scope/deep": "3.0.0"}, "scripts": {"test": "node t.js"}}`,
			want: []string{"npm @scope/deep@3.0.0 (3.0.0)", "npm crossenv@ (^7.0.0)", "npm evil-bar@1.0.1 (1.0.1)", "npm foo@2.0.0 (2.0.0)", "npm fsevents@2.3.3 (2.3.3)", "npm minimist@1.2.8 (1.2.8)"}},
		{name: "package.json moved between sections adds nothing", file: "package.json",
			base: `{"dependencies": {"a": "^1.0.0"}}`, cand: `{"devDependencies": {"a": "^1.0.0"}, "scripts": {"x": "y"}}`},
		{name: "package.json non-registry specs fail closed", file: "package.json",
			base: `{}`, cand: `{"dependencies": {"a": "git+https://example.com/a.git", "b": "user/repo", "c": "file:../c", "d": "https://example.com/d.tgz", "e": "workspace:*"}}`,
			unchecked: []string{`a: git+`, `b: user/repo`, `c: file:`, `d: https:`, `e: workspace:`}},
		{name: "package-lock nested install", file: "package-lock.json",
			base: `{"lockfileVersion": 3, "packages": {"": {"name": "app"}, "node_modules/a": {"version": "1.0.0"}}}`,
			cand: `{"lockfileVersion": 3, "packages": {"": {"name": "app"}, "node_modules/a": {"version": "1.0.0"}, "node_modules/a/node_modules/@evil/b": {"version": "0.0.1"}, "node_modules/c": {"name": "real-c", "version": "2.0.0"}, "packages/ws": {"version": "9.9.9"}, "node_modules/ws": {"link": true}}}`,
			want: []string{"npm @evil/b@0.0.1 ()", "npm real-c@2.0.0 ()"}},
		{name: "package-lock v1 nested", file: "npm-shrinkwrap.json",
			base: "-", cand: `{"lockfileVersion": 1, "dependencies": {"a": {"version": "1.0.0", "dependencies": {"b": {"version": "npm:evil@2.0.0"}}}, "g": {"version": "git+ssh://git@example.com/g.git#abc"}}}`,
			want: []string{"npm a@1.0.0 ()", "npm evil@2.0.0 ()"}, unchecked: []string{"g: git+ssh"}},
		{name: "go.mod require and replace", file: "go.mod",
			base: "module m\n\ngo 1.22\n\nrequire example.com/a v1.0.0\n",
			cand: "module m\n\ngo 1.22\n\nrequire (\n\texample.com/a v1.0.0\n\texample.com/b v0.2.0 // indirect\n)\n\nreplace example.com/a => example.org/fork v1.0.1\n\nreplace example.com/c => ../c\n",
			want: []string{"Go example.com/b@v0.2.0 (v0.2.0)", "Go example.org/fork@v1.0.1 (v1.0.1)"}, unchecked: []string{"replace by a directory"}},
		{name: "go.sum", file: "go.sum",
			base: "example.com/a v1.0.0 h1:x=\nexample.com/a v1.0.0/go.mod h1:y=\n",
			cand: "example.com/a v1.0.0 h1:x=\nexample.com/a v1.0.0/go.mod h1:y=\nexample.com/b v0.1.0 h1:z=\nexample.com/b v0.1.0/go.mod h1:w=\nexample.com/c v0.3.0/go.mod h1:v=\n",
			want: []string{"Go example.com/b@v0.1.0 ()"}},
		{name: "pyproject", file: "pyproject.toml",
			base: "[project]\ndependencies = [\"requests==2.0.0\"]\n",
			cand: "[project]\ndependencies = [\"requests==2.0.0\", \"reqeusts>=1\"]\n",
			want: []string{"PyPI reqeusts@ (>=1)"}},
		{name: "pyproject groups, build requires and poetry", file: "pyproject.toml",
			base: "[project]\ndependencies = []\n",
			cand: "[project]\ndependencies = []\n[dependency-groups]\ntest = [\"pytest==8.0.0\", {include-group = \"lint\"}]\n[build-system]\nrequires = [\"setuptools>=61\"]\n[tool.poetry.group.dev.dependencies]\nblack = \"24.1.0\"\nevil = {git = \"https://example.com/evil.git\"}\n",
			want: []string{"PyPI black@24.1.0 (24.1.0)", "PyPI pytest@8.0.0 (==8.0.0)", "PyPI setuptools@ (>=61)"}, unchecked: []string{"evil: git"}},
		// Where packages come from: a fix that adds, changes or removes an
		// index or a package's source is unchecked; the same settings
		// reformatted are not a change.
		{name: "pyproject adds an index", file: "pyproject.toml",
			base:      "[project]\ndependencies = [\"requests==2.0.0\"]\n",
			cand:      "[project]\ndependencies = [\"requests==2.0.0\"]\n[[tool.uv.index]]\nname = \"mirror\"\nurl = \"https://pypi.mirror.invalid/simple\"\ndefault = true\n",
			unchecked: []string{`package source settings changed (tool.uv.index)`}},
		{name: "pyproject moves a package off its private index", file: "pyproject.toml",
			base:      "[project]\ndependencies = [\"corp-lib==1.0.0\"]\n[tool.uv.sources]\ncorp-lib = { index = \"corp\" }\n[[tool.uv.index]]\nname = \"corp\"\nurl = \"https://pypi.corp.example/simple\"\nexplicit = true\n",
			cand:      "[project]\ndependencies = [\"corp-lib==1.0.0\"]\n[[tool.uv.index]]\nname = \"corp\"\nurl = \"https://pypi.corp.example/simple\"\nexplicit = true\n",
			unchecked: []string{`package source settings changed (tool.uv.index)`}},
		{name: "pyproject drops its private index", file: "pyproject.toml",
			base:      "[project]\ndependencies = [\"corp-lib==1.0.0\"]\n[[tool.uv.index]]\nname = \"corp\"\nurl = \"https://pypi.corp.example/simple\"\n",
			cand:      "[project]\ndependencies = [\"corp-lib==1.0.0\"]\n",
			unchecked: []string{`package source settings changed (tool.uv.index)`}},
		{name: "pyproject poetry source and pip index", file: "pyproject.toml",
			base:      "[project]\ndependencies = []\n",
			cand:      "[project]\ndependencies = []\n[[tool.poetry.source]]\nname = \"m\"\nurl = \"https://pypi.mirror.invalid/simple\"\n[tool.uv.pip]\nextra-index-url = [\"https://pypi.mirror.invalid/simple\"]\n",
			unchecked: []string{`package source settings changed (tool.uv.pip, tool.poetry.source)`}},
		{name: "pyproject sources reformatted", file: "pyproject.toml",
			base: "[tool.uv.sources]\ncorp-lib = { index = \"corp\" }\n",
			cand: "# sources\n[tool.uv.sources.corp-lib]\nindex = \"corp\"\n"},
		{name: "poetry dependency moved to a named source", file: "pyproject.toml",
			base:      "[tool.poetry.dependencies]\ncorp-lib = { version = \"1.0.0\", source = \"corp\" }\n",
			cand:      "[tool.poetry.dependencies]\ncorp-lib = { version = \"1.0.0\", source = \"mirror\" }\n",
			unchecked: []string{`dependency from a named source "corp-lib 1.0.0: source mirror"`}},
		{name: "poetry dependency on an unchanged source", file: "pyproject.toml",
			base: "[tool.poetry.dependencies]\ncorp-lib = { version = \"1.0.0\", source = \"corp\" }\n",
			cand: "[tool.poetry.dependencies]\ncorp-lib = {source = \"corp\", version = \"1.0.0\"}\nrequests = \"2.32.3\"\n",
			want: []string{"PyPI requests@2.32.3 (2.32.3)"}},
		{name: "Gemfile adds a source", file: "Gemfile",
			base:      "source \"https://rubygems.org\"\ngem \"rack\", \"3.0.0\"\n",
			cand:      "source \"https://rubygems.org\"\nsource \"https://gems.mirror.invalid\" do\n  gem \"rack\", \"3.0.0\"\nend\n",
			unchecked: []string{`package source settings changed (source, git, path)`}},
		{name: "Gemfile drops its private source", file: "Gemfile",
			base:      "source \"https://rubygems.org\"\nsource \"https://gems.corp.example\" do\n  gem \"corp\", \"1.0.0\"\nend\n",
			cand:      "source \"https://rubygems.org\"\ngem \"corp\", \"1.0.0\"\n",
			unchecked: []string{`package source settings changed (source, git, path)`}},
		{name: "a new Gemfile on rubygems.org", file: "Gemfile", base: "-",
			cand: "source \"https://rubygems.org\"\ngem \"rack\", \"3.0.0\"\n",
			want: []string{"RubyGems rack@3.0.0 (3.0.0)"}},
		{name: "Gemfile gem from git", file: "Gemfile",
			base:      "source \"https://rubygems.org\"\ngem \"rack\", \"3.0.0\"\n",
			cand:      "source \"https://rubygems.org\"\ngem \"rack\", \"3.0.0\", git: \"https://git.mirror.invalid/rack.git\"\n",
			unchecked: []string{`package source settings changed (source, git, path)`}},
		{name: "Gemfile gem from a path, old syntax", file: "Gemfile",
			base:      "gem \"rack\", \"3.0.0\"\n",
			cand:      "gem \"rack\", \"3.0.0\", :path => \"vendor/rack\"\n",
			unchecked: []string{`package source settings changed (source, git, path)`}},
		{name: "Cargo.toml dependency moved to git", file: "Cargo.toml",
			base:      "[dependencies]\nserde = \"1.0.200\"\n",
			cand:      "[dependencies]\nserde = { version = \"1.0.200\", git = \"https://git.mirror.invalid/serde\" }\n",
			unchecked: []string{`package source settings changed (dependencies.serde)`}},
		{name: "Cargo.toml adds a patch", file: "Cargo.toml",
			base:      "[dependencies]\nserde = \"1.0.200\"\n",
			cand:      "[dependencies]\nserde = \"1.0.200\"\n[patch.crates-io]\nserde = { path = \"../serde\" }\n",
			unchecked: []string{`package source settings changed (patch)`}},
		{name: "Cargo.toml path dependency unchanged, version bumped", file: "Cargo.toml",
			base: "[dependencies]\nlocal = { path = \"../local\" }\nserde = \"1.0.200\"\n",
			cand: "[dependencies]\nlocal = { path = \"../local\" }\nserde = \"=1.0.201\"\n",
			want: []string{"crates.io serde@1.0.201 (=1.0.201)"}},
		{name: "pom.xml adds a system path", file: "pom.xml",
			base:      "<project><dependencies><dependency><groupId>g</groupId><artifactId>a</artifactId><version>1.0</version></dependency></dependencies></project>",
			cand:      "<project><dependencies><dependency><groupId>g</groupId><artifactId>a</artifactId><version>1.0</version><scope>system</scope><systemPath>${basedir}/lib/a.jar</systemPath></dependency></dependencies></project>",
			unchecked: []string{`package source settings changed (repositories, pluginRepositories, systemPath)`}},
		{name: "Gemfile source reindented", file: "Gemfile",
			base: "source \"https://rubygems.org\"\ngem \"rack\", \"3.0.0\"\n",
			cand: "  source  \"https://rubygems.org\"\ngem \"rack\", \"3.0.0\"\n"},
		{name: "Gemfile.lock remote changed", file: "Gemfile.lock",
			base:      "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (3.0.0)\n",
			cand:      "GEM\n  remote: https://gems.mirror.invalid/\n  specs:\n    rack (3.0.0)\n",
			unchecked: []string{`package source settings changed (remote)`}},
		{name: "pom.xml adds a repository", file: "pom.xml",
			base:      "<project><dependencies><dependency><groupId>g</groupId><artifactId>a</artifactId><version>1.0</version></dependency></dependencies></project>",
			cand:      "<project><repositories><repository><id>m</id><url>https://maven.mirror.invalid/</url></repository></repositories><dependencies><dependency><groupId>g</groupId><artifactId>a</artifactId><version>1.0</version></dependency></dependencies></project>",
			unchecked: []string{`package source settings changed (repositories, pluginRepositories, systemPath)`}},
		// The tools read keys exactly: a look-alike table or field is not
		// what they install, and must not hide what they do.
		{name: "Cargo.lock look-alike table", file: "Cargo.lock",
			base: "-", cand: "[[pAckage]]\nname = \"decoy\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"evil\"\nversion = \"0.1.0\"\n",
			want: []string{"crates.io evil@0.1.0 ()"}},
		{name: "package-lock look-alike field", file: "package-lock.json",
			base: `{"packages": {"node_modules/a": {"version": "1.0.0"}}}`,
			cand: `{"packages": {"node_modules/a": {"version": "6.6.6", "Version": "1.0.0"}}, "Packages": {"node_modules/decoy": {"version": "1.0.0"}}}`,
			want: []string{"npm a@6.6.6 ()"}},
		{name: "Cargo.lock", file: "Cargo.lock",
			base: "[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\n",
			cand: "[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.1\"\n",
			want: []string{"crates.io serde@1.0.1 ()"}},
		{name: "Gemfile.lock", file: "Gemfile.lock",
			base: "-", cand: "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (3.0.0)\n\n",
			want: []string{"RubyGems rack@3.0.0 ()"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base []byte
			if tc.base != "-" {
				base = []byte(tc.base)
			}
			if Kind(tc.file) != Parsed {
				t.Fatalf("Kind(%s) = %v", tc.file, Kind(tc.file))
			}
			got, err := Added(tc.file, base, []byte(tc.cand))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, pkgs(got)); d != "" {
				t.Errorf("packages (-want +got):\n%s", d)
			}
			if len(got.Unchecked) != len(tc.unchecked) {
				t.Fatalf("unchecked = %q, want %d like %q", got.Unchecked, len(tc.unchecked), tc.unchecked)
			}
			for i, w := range tc.unchecked {
				if !strings.Contains(got.Unchecked[i], w) {
					t.Errorf("unchecked[%d] = %q, want it to contain %q", i, got.Unchecked[i], w)
				}
			}
		})
	}
}

// TestAddedParseErrors: a dependency file that does not parse — in the
// candidate or the base — is an ErrParse, never "nothing added".
func TestAddedParseErrors(t *testing.T) {
	for _, tc := range []struct{ file, base, cand string }{
		{"package.json", `{}`, `{"dependencies": `},
		{"package.json", `{}`, `{"dependencies": {"a": 1}}`},
		{"package-lock.json", `{}`, `[`},
		{"go.mod", "module m\n", "module m\nrequire (\n"},
		{"go.sum", "", "example.com/a v1.0.0\n"},
		{"package.json", `{"dependencies": `, `{}`},
		{"pyproject.toml", "", "[project\n"},
	} {
		_, err := Added(tc.file, []byte(tc.base), []byte(tc.cand))
		if !errors.Is(err, ErrParse) {
			t.Errorf("%s %q → %q: err = %v, want ErrParse", tc.file, tc.base, tc.cand, err)
		}
	}
}

// TestKind: which paths are dependency files, read or not.
func TestKind(t *testing.T) {
	for path, want := range map[string]FileKind{
		"requirements.txt": Parsed, "sub/requirements-dev.txt": Parsed, "requirements/prod.in": Parsed,
		"constraints.txt": Parsed, "web/package.json": Parsed, "package-lock.json": Parsed, "npm-shrinkwrap.json": Parsed,
		"go.mod": Parsed, "go.sum": Parsed, "go.work.sum": Parsed, "pyproject.toml": Parsed, "poetry.lock": Parsed,
		"uv.lock": Parsed, "Cargo.toml": Parsed, "Cargo.lock": Parsed, "Gemfile": Parsed, "Gemfile.lock": Parsed, "pom.xml": Parsed,
		"yarn.lock": Unread, "web/pnpm-lock.yaml": Unread, "Pipfile.lock": Unread, "setup.py": Unread, "go.work": Unread,
		".npmrc": Unread, "vendor/modules.txt": Unread, "x.gemspec": Unread, "pylock.dev.toml": Unread, "build.gradle.kts": Unread,
		".cargo/config.toml": Unread, "crates/a/.cargo/config": Unread, "config.toml": NotDependency, ".cargo/credentials.toml": NotDependency,
		"src/app.py": NotDependency, "README.md": NotDependency, "docs/requirements.md": NotDependency, "modules.txt": NotDependency,
	} {
		if got := Kind(path); got != want {
			t.Errorf("Kind(%s) = %v, want %v", path, got, want)
		}
	}
}

// FuzzAdded: the extraction reads the agent's bytes: it must return
// without panicking, every package with a name, and a file compared with
// itself adds nothing.
func FuzzAdded(f *testing.F) {
	files := []string{"requirements.txt", "package.json", "package-lock.json", "go.mod", "go.sum", "pyproject.toml", "Cargo.lock", "Gemfile.lock"}
	for _, v := range repo {
		f.Add(uint8(0), []byte(v))
	}
	f.Add(uint8(1), []byte(`{"overrides": {"a": {".": "1.0.0", "b": {"c": "npm:d@1.0.0"}}}, "resolutions": {"**/@s/x@1": "2.0.0"}}`))
	f.Add(uint8(2), []byte(`{"packages": {"node_modules/a/node_modules/b": {"version": "npm:c@1.0.0"}}}`))
	// Found by the fuzzer: a nameless install, and a look-alike table the
	// TOML decoder matched case-insensitively.
	f.Add(uint8(2), []byte(`{"packages": {"node_modules/": {"version": "0.0.0"}}}`))
	f.Add(uint8(6), []byte("[[pAckage]]\nYA8C8= \"779018\"\nversion = \"18772\"\n\n[[package]]\nname = \"b71710\"\nversion = \"12710\"\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		file := files[int(which)%len(files)]
		a, err := Added(file, nil, data)
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("error is not ErrParse: %v", err)
			}
			return
		}
		for _, p := range a.Packages {
			if p.Name == "" || p.File != file {
				t.Fatalf("package %+v", p)
			}
		}
		if len(a.Unchecked) > maxUnchecked+1 {
			t.Fatalf("%d unchecked", len(a.Unchecked))
		}
		same, err := Added(file, data, data)
		if err != nil || len(same.Packages)+len(same.Unchecked) != 0 {
			t.Fatalf("a file compared with itself adds %+v, %v", same, err)
		}
	})
}
