package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/vulndata"
)

// TestFindAll: every place a package is declared — each requirement line
// with its markers, the files -r/-c include, npm's sections, overrides
// and resolutions, the lockfile's nested copies, Go's replace directives
// in go.mod and go.work — and each include it cannot follow.
func TestFindAll(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		eco     vulndata.Ecosystem
		pkg     string
		want    []string // Where() = version / locked, in order
		blocked []string
		repl    []string
	}{
		{
			name: "requirements markers and includes",
			files: map[string]string{
				"requirements.txt":     "-c constraints.txt\n--requirement=sub/more.txt\nrequests==2.0.0 ; sys_platform == \"linux\"\nrequests==1.9.0; sys_platform == \"win32\"  # old\n",
				"constraints.txt":      "requests==2.0.0\n",
				"sub/more.txt":         "-r ../constraints.txt\nrequests>=1\n",
				"requirements-dev.txt": "requests @ https://example.invalid/r.tgz\n",
			},
			eco: vulndata.PyPI, pkg: "Requests",
			want: []string{
				"requirements-dev.txt:1=|unbumpable",
				"requirements.txt:3 [; sys_platform == \"linux\"]=2.0.0|",
				"requirements.txt:4 [; sys_platform == \"win32\"]=1.9.0|",
				"constraints.txt:1=2.0.0|via requirements.txt:1",
				"sub/more.txt:2=|via requirements.txt:2",
			},
		},
		{
			// As pip reads it: a comment line ending in a backslash
			// continues nothing; a '#' after a tab starts a comment; a
			// continuation joins with nothing between.
			name: "requirements comments and continuations",
			files: map[string]string{
				"requirements.txt": "# legacy \\\nrequests==2.0.0\t# pinned\nrequests==1.9.\\\n0 ; sys_platform == \"win32\"\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			want: []string{
				"requirements.txt:2=2.0.0|",
				"requirements.txt:3 [; sys_platform == \"win32\"]=1.9.0|",
			},
		},
		{
			name: "includes fixrail cannot follow",
			files: map[string]string{
				"requirements.txt": "-c https://example.invalid/c.txt\n-r /etc/passwd\n-r ../../out.txt\n-r missing.txt\nrequests==2.0.0\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			want: []string{"requirements.txt:5=2.0.0|"},
			blocked: []string{
				"requirements.txt:1: -c https://example.invalid/c.txt: a URL",
				"requirements.txt:2: -r /etc/passwd: a path outside the repository",
				"requirements.txt:3: -r ../../out.txt: a path outside the repository",
				"requirements.txt:4: includes missing.txt, which fixrail cannot read",
			},
		},
		{
			name: "npm sections, overrides, resolutions, nested copies",
			files: map[string]string{
				"package.json": `{"dependencies": {"w": "1.0.0"}, "optionalDependencies": {"w": "^1.0.0"}, "peerDependencies": {"w": ">=1"},
 "overrides": {"w": "1.0.0", "x": {"w": "1.0.0"}, "y": "$w"}, "resolutions": {"**/w": "1.0.0", "a/w": "1.0.0", "a/wx": "1"}}`,
				"package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.0"},
 "node_modules/x/node_modules/w": {"version": "0.9.0"}, "node_modules/@s/x/node_modules/w": {"version": "0.8.0"}, "node_modules/wx": {"version": "1.0.0"}}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{
				"package.json (dependencies)=1.0.0||locked 1.0.0|2 nested",
				"package.json (optionalDependencies)=||locked 1.0.0|2 nested",
				"package.json (peerDependencies)=||locked 1.0.0|2 nested",
				"package.json (overrides)=1.0.0||locked 1.0.0|2 nested",
				"package.json (overrides)=1.0.0|unbumpable|locked 1.0.0|2 nested",
				"package.json (resolutions.**/w)=1.0.0||locked 1.0.0|2 nested",
				"package.json (resolutions.a/w)=1.0.0||locked 1.0.0|2 nested",
			},
		},
		{
			// "old": "npm:w@1.0.0" installs w as node_modules/old (the
			// lockfile's "name" says so; v1 writes "npm:w@1.0.0" as the
			// version); "w": "npm:other@2" installs other, not w.
			name: "npm aliases, v3 and v1",
			files: map[string]string{
				"package.json": `{"dependencies": {"old": "npm:w@1.0.0", "w": "npm:other@2.0.0"}}`,
				"package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/old": {"name": "w", "version": "1.0.0"},
 "node_modules/w": {"name": "other", "version": "2.0.0"}, "node_modules/x/node_modules/y": {"name": "w", "version": "0.9.0"}}}`,
				"v1/package.json":      `{"dependencies": {"old": "npm:w@1.0.0"}}`,
				"v1/package-lock.json": `{"lockfileVersion": 1, "dependencies": {"old": {"version": "npm:w@1.0.0"}, "x": {"version": "1.0.0", "dependencies": {"y": {"version": "npm:w@0.9.0"}}}}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{
				"package.json (dependencies.old)=1.0.0|unbumpable|locked 1.0.0|1 nested",
				"v1/package.json (dependencies.old)=1.0.0|unbumpable|locked 1.0.0|1 nested",
			},
		},
		{
			// npm reads npm-shrinkwrap.json and ignores package-lock.json
			// when both are there.
			name: "npm shrinkwrap over package-lock",
			files: map[string]string{
				"package.json":        `{"dependencies": {"w": "^1.0.0"}}`,
				"package-lock.json":   `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.2"}}}`,
				"npm-shrinkwrap.json": `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.0"}}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{"package.json (dependencies)=||locked 1.0.0"},
		},
		{
			// A workspace member has no lockfile beside it: the root's,
			// which lists the member's directory, is what it resolves —
			// its own MEMBER/node_modules copy, else the hoisted one. A
			// package.json the lockfile does not list is no member.
			name: "npm workspace members",
			files: map[string]string{
				"package.json": `{"workspaces": ["packages/*"]}`,
				"package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "packages/a": {}, "packages/b": {},
 "node_modules/w": {"version": "1.0.0"}, "packages/b/node_modules/w": {"version": "0.9.0"}}}`,
				"packages/a/package.json": `{"dependencies": {"w": "^1.0.0"}}`,
				"packages/b/package.json": `{"dependencies": {"w": "0.9.0"}}`,
				"other/c/package.json":    `{"dependencies": {"w": "0.8.0"}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{
				"other/c/package.json (dependencies)=0.8.0|",
				"packages/a/package.json (dependencies)=||locked 1.0.0|1 nested",
				"packages/b/package.json (dependencies)=0.9.0||locked 0.9.0|1 nested",
			},
		},
		{
			// npm's lockfiles record where each copy came from: a git
			// repository, a local tarball, a link to a directory (v3's
			// resolved and link; v1's version holds the source). Any
			// copy counts, a workspace root's too; a registry tarball of
			// any host is the registry's.
			name: "npm lockfile entries not from the registry",
			files: map[string]string{
				"g/package.json": `{"dependencies": {"w": "github:x/w#v1.0.2"}}`,
				"g/package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.2", "resolved": "git+ssh://git@github.com/x/w.git#0123"},
 "node_modules/x/node_modules/w": {"version": "1.0.0", "resolved": "file:vendor/w-1.0.0.tgz"}}}`,
				"l/package.json":       `{"dependencies": {"w": "file:../w"}}`,
				"l/package-lock.json":  `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"resolved": "../w", "link": true}}}`,
				"r/package.json":       `{"dependencies": {"w": "1.0.2"}}`,
				"r/package-lock.json":  `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.2", "resolved": "https://npm.pkg.example.invalid/download/w/1.0.2/abc"}}}`,
				"v1/package.json":      `{"dependencies": {"w": "git+https://example.invalid/w.git"}}`,
				"v1/package-lock.json": `{"lockfileVersion": 1, "dependencies": {"w": {"version": "git+https://example.invalid/w.git#0123"}}}`,
				"ws/package.json":      `{"workspaces": ["app"]}`,
				"ws/package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "app": {}, "node_modules/w": {"version": "1.0.2", "resolved": "git+https://example.invalid/w.git#0123"}}}`,
				"ws/app/package.json":  `{"dependencies": {"w": "^1.0.0"}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{
				"g/package.json (dependencies)=||locked 1.0.2|1 nested",
				"l/package.json (dependencies)=|",
				"r/package.json (dependencies)=1.0.2||locked 1.0.2",
				"v1/package.json (dependencies)=||locked git+https://example.invalid/w.git#0123",
				"ws/app/package.json (dependencies)=||locked 1.0.2",
			},
			blocked: []string{
				"g/package-lock.json: w 1.0.0 comes from file:vendor/w-1.0.0.tgz, not the registry",
				"g/package-lock.json: w 1.0.2 comes from git+ssh://git@github.com/x/w.git#0123, not the registry",
				"l/package-lock.json: w comes from a link to ../w, not the registry",
				"v1/package-lock.json: w comes from git+https://example.invalid/w.git#0123, not the registry",
				"ws/package-lock.json: w 1.0.2 comes from git+https://example.invalid/w.git#0123, not the registry",
			},
		},
		{
			// A Cargo or uv workspace member has no lockfile beside it:
			// the workspace root's ([workspace], [tool.uv.workspace]) is
			// what it resolves from.
			name: "cargo workspace members",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\"]\n",
				"Cargo.lock":          "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"crates/a/Cargo.toml": "[package]\nname = \"a\"\n[dependencies]\nfoo = \"1.2\"\n",
			},
			eco: vulndata.Cargo, pkg: "foo",
			want: []string{"crates/a/Cargo.toml (dependencies)=||locked 1.2.3"},
		},
		{
			name: "uv workspace members",
			files: map[string]string{
				"py/pyproject.toml":            "[project]\nname = \"root\"\n[tool.uv.workspace]\nmembers = [\"packages/*\"]\n",
				"py/uv.lock":                   "version = 1\n[[package]]\nname = \"requests\"\nversion = \"2.0.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
				"py/packages/b/pyproject.toml": "[project]\nname = \"b\"\ndependencies = [\"requests>=2\"]\n",
				"other/pyproject.toml":         "[project]\nname = \"o\"\ndependencies = [\"requests>=2\"]\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			want: []string{
				"other/pyproject.toml (project.dependencies)=|",
				"py/packages/b/pyproject.toml (project.dependencies)=||locked 2.0.0",
			},
		},
		{
			// A locked copy from git or a path is not the registry's
			// package: Cargo's source (none for a path, another
			// registry's index; crates.io's by either protocol is fine), uv's source
			// table, poetry's [package.source], Gemfile.lock's GIT and
			// PATH sections. An index is fine (poetry's "legacy" too).
			name: "lockfile entries not from the registry",
			files: map[string]string{
				"c/Cargo.toml": "[dependencies]\nfoo = \"1\"\n[patch.crates-io]\nfoo = { path = \"../foo\" }\n",
				"c/Cargo.lock": "[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\n",
				"r/Cargo.toml": "[dependencies]\nfoo = \"=1.2.3\"\n",
				"r/Cargo.lock": "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"g/Cargo.toml": "[dependencies]\nfoo = { git = \"https://example.invalid/foo\" }\n",
				"g/Cargo.lock": "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.4\"\nsource = \"git+https://example.invalid/foo#0123\"\n",
				"a/Cargo.toml": "[dependencies]\nfoo = { version = \"=1.2.4\", registry = \"corp\" }\n",
				"a/Cargo.lock": "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.4\"\nsource = \"sparse+https://crates.example.invalid/index/\"\n",
				"s/Cargo.toml": "[dependencies]\nfoo = \"=1.2.3\"\n",
				"s/Cargo.lock": "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"sparse+https://index.crates.io/\"\n",
			},
			eco: vulndata.Cargo, pkg: "foo",
			want: []string{
				"a/Cargo.toml (dependencies)=1.2.4||locked 1.2.4",
				"c/Cargo.toml (dependencies)=||locked 1.2.3",
				"g/Cargo.toml (dependencies)=||locked 1.2.4",
				"r/Cargo.toml (dependencies)=1.2.3||locked 1.2.3",
				"s/Cargo.toml (dependencies)=1.2.3||locked 1.2.3",
			},
			blocked: []string{
				"a/Cargo.lock: foo 1.2.4 comes from sparse+https://crates.example.invalid/index/, not the registry",
				"c/Cargo.lock: foo 1.2.3 comes from a path (no registry source), not the registry",
				"g/Cargo.lock: foo 1.2.4 comes from git+https://example.invalid/foo#0123, not the registry",
				"c/Cargo.toml: [patch.crates-io] foo: cargo builds the patch",
			},
		},
		{
			// A platform's dependencies and the workspace's, which its
			// members inherit, declare the crate too: only the first was
			// read as not declaring it ("not in the repository"), the
			// second judged the member's { workspace = true } alone.
			name: "cargo target and workspace dependencies",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\"]\n[workspace.dependencies]\nfoo = \"=1.2.3\"\n",
				"Cargo.lock":          "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"crates/a/Cargo.toml": "[package]\nname = \"a\"\n[dependencies]\nfoo = { workspace = true }\n",
				"crates/b/Cargo.toml": "[package]\nname = \"b\"\n[target.'cfg(unix)'.dependencies]\nfoo = \"1.2\"\n[target.x86_64-pc-windows-msvc.build-dependencies]\nfoo = { version = \"=1.2.3\" }\n",
			},
			eco: vulndata.Cargo, pkg: "foo",
			want: []string{
				"Cargo.toml (workspace.dependencies)=1.2.3||locked 1.2.3",
				"crates/a/Cargo.toml (dependencies)=||locked 1.2.3",
				"crates/b/Cargo.toml (target.cfg(unix).dependencies)=||locked 1.2.3",
				"crates/b/Cargo.toml (target.x86_64-pc-windows-msvc.build-dependencies)=1.2.3||locked 1.2.3",
			},
		},
		{
			// Cargo.lock records crates.io for a crate cargo builds from
			// elsewhere: cargo vendor's source replacement in a parent
			// directory's .cargo/config.toml (the workspace root above a
			// member), a config [patch], paths overrides, a [patch] not
			// used yet (the bump would make it apply) and a [replace] in
			// a Cargo.toml, a renaming patch. Configuration beside an
			// unrelated crate, and a patch of another crate, are not.
			name: "cargo source replacement, patches and overrides",
			files: map[string]string{
				"Cargo.toml":                      "[workspace]\nmembers = [\"crates/*\"]\n[patch.crates-io]\nbar = { path = \"third_party/bar\" }\n",
				"Cargo.lock":                      "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"00\"\n",
				".cargo/config.toml":              "[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n[source.vendored-sources]\ndirectory = \"vendor\"\n",
				"crates/a/Cargo.toml":             "[package]\nname = \"a\"\n[dependencies]\nfoo = \"1.2\"\n",
				"crates/a/.cargo/config":          "paths = [\"../../local/foo\"]\n[patch.crates-io]\nfoo = { path = \"../../local/foo\" }\n",
				"vendor/foo/Cargo.toml":           "[package]\nname = \"foo\"\nversion = \"1.2.3\"\n",
				"vendor/foo/.cargo-checksum.json": `{"files": {}, "package": "00"}`,
				"p/Cargo.toml":                    "[dependencies]\nfoo = \"=1.2.3\"\n[patch.crates-io]\nfoo = { version = \"1.2.4\", registry = \"corp\" }\n[replace]\n\"foo:1.2.3\" = { git = \"https://example.invalid/foo\" }\n",
				"p/Cargo.lock":                    "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"q/Cargo.toml":                    "[dependencies]\nfoo = \"=1.2.3\"\n[patch.crates-io]\nfoo-fork = { path = \"fork\", package = \"foo\" }\n",
				"q/Cargo.lock":                    "version = 4\n[[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"r/Cargo.toml":                    "[dependencies]\nfoo = \"=1.2.3\"\n[replace]\n\"https://github.com/rust-lang/crates.io-index#foo@1.2.3\" = { path = \"f\" }\n\"https://github.com/rust-lang/crates.io-index#bar@1.0.0\" = { path = \"b\" }\n",
				"r/.cargo/config.toml":            "[source.crates-io]\nregistry = \"sparse+https://mirror.example.invalid/\"\n",
				"other/.cargo/config.toml":        "[source.crates-io]\nreplace-with = \"mirror\"\n",
				"other/Cargo.toml":                "[dependencies]\nbar = \"1\"\n",
			},
			eco: vulndata.Cargo, pkg: "foo",
			want: []string{
				"crates/a/Cargo.toml (dependencies)=||locked 1.2.3",
				"p/Cargo.toml (dependencies)=1.2.3||locked 1.2.3",
				"q/Cargo.toml (dependencies)=1.2.3||locked 1.2.3",
				"r/Cargo.toml (dependencies)=1.2.3||locked 1.2.3",
			},
			blocked: []string{
				"p/Cargo.toml: [patch.crates-io] foo: cargo builds the patch, not the registry's foo",
				"p/Cargo.toml: [replace] \"foo:1.2.3\": cargo builds the replacement",
				"q/Cargo.toml: [patch.crates-io] foo-fork: cargo builds the patch",
				"r/Cargo.toml: [replace] \"https://github.com/rust-lang/crates.io-index#foo@1.2.3\": cargo builds the replacement",
				".cargo/config.toml: [source.crates-io] replace-with = vendored-sources (directory vendor): cargo builds that source's crates (foo among them) from the replacement while Cargo.lock still records the original source",
				"vendor/foo: a cargo vendor copy of foo",
				"crates/a/.cargo/config: [patch.crates-io] foo: cargo builds the patch",
				"crates/a/.cargo/config: paths = [../../local/foo]: cargo builds a crate found there",
				"r/.cargo/config.toml: [source.crates-io] sets registry: it may change where cargo takes crates.io's crates (foo among them) from",
			},
		},
		{
			// What cargo reads but fixrail cannot is blocked too: a
			// config that does not parse, an include.
			name: "cargo configuration fixrail cannot read",
			files: map[string]string{
				// cargo vendor's output kept with no configuration in the
				// repository: CI's --config may build from it. Another
				// crate's copy, and foo without its checksum file, are not.
				"sub/vendor/foo-1.2.3/Cargo.toml":           "[package]\nname = \"foo\"\nversion = \"1.2.3\"\n",
				"sub/vendor/foo-1.2.3/.cargo-checksum.json": `{"files": {}, "package": "00"}`,
				"sub/vendor/foobar/.cargo-checksum.json":    `{"files": {}, "package": "00"}`,
				"vendor/foo/Cargo.toml":                     "[package]\nname = \"foo\"\nversion = \"1.2.3\"\n",
				"Cargo.toml":                                "[dependencies]\nfoo = \"=1.2.3\"\n",
				".cargo/config.toml":                        "[source.crates-io\n",
				"sub/Cargo.toml":                            "[dependencies]\nfoo = \"=1.2.3\"\n",
				"sub/.cargo/config.toml":                    "include = \"more.toml\"\n",
			},
			eco: vulndata.Cargo, pkg: "foo",
			want: []string{
				"Cargo.toml (dependencies)=1.2.3|",
				"sub/Cargo.toml (dependencies)=1.2.3|",
			},
			blocked: []string{
				".cargo/config.toml: cargo's configuration may decide where foo comes from, and fixrail cannot read it",
				"sub/.cargo/config.toml: include = more.toml: configuration fixrail does not follow",
				"sub/vendor/foo-1.2.3: a cargo vendor copy of foo",
			},
		},
		{
			name: "python lockfile entries not from the registry",
			files: map[string]string{
				"u/pyproject.toml": "[project]\nname = \"app\"\ndependencies = [\"requests==2.0.2\"]\n",
				"u/uv.lock":        "version = 1\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\nsource = { virtual = \".\" }\n[[package]]\nname = \"requests\"\nversion = \"2.0.2\"\nsource = { git = \"https://example.invalid/requests#ab\" }\n",
				"v/pyproject.toml": "[project]\nname = \"app\"\ndependencies = [\"requests==2.0.2\"]\n",
				"v/uv.lock":        "version = 1\n[[package]]\nname = \"requests\"\nversion = \"2.0.2\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
				"p/pyproject.toml": "[tool.poetry.dependencies]\nrequests = \"2.0.2\"\n",
				"p/poetry.lock":    "[[package]]\nname = \"requests\"\nversion = \"2.0.2\"\n[package.source]\ntype = \"directory\"\nurl = \"../requests\"\n",
				"q/pyproject.toml": "[tool.poetry.dependencies]\nrequests = \"2.0.2\"\n",
				"q/poetry.lock":    "[[package]]\nname = \"requests\"\nversion = \"2.0.2\"\n[package.source]\ntype = \"legacy\"\nurl = \"https://pypi.example.invalid/simple\"\nreference = \"corp\"\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			want: []string{
				"p/pyproject.toml (tool.poetry.dependencies)=2.0.2||locked 2.0.2",
				"q/pyproject.toml (tool.poetry.dependencies)=2.0.2||locked 2.0.2",
				"u/pyproject.toml (project.dependencies)=2.0.2||locked 2.0.2",
				"v/pyproject.toml (project.dependencies)=2.0.2||locked 2.0.2",
			},
			blocked: []string{
				"p/poetry.lock: requests 2.0.2 comes from directory ../requests, not the registry",
				"u/uv.lock: requests 2.0.2 comes from git https://example.invalid/requests#ab, not the registry",
			},
		},
		{
			// npm ci fetches the resolved URL and checks only its
			// integrity: an entry saying 1.0.5 that resolves w-1.0.0.tgz
			// installs 1.0.0 (lockfile injection), and a "name" on a
			// nested entry does not make w's tarball another package.
			// A workspace member's own copy and a mirror's URL, as npm 10
			// writes them.
			name: "npm lockfile entries resolving another tarball",
			files: map[string]string{
				"package.json":              `{"name": "root", "private": true, "workspaces": ["packages/*"]}`,
				"packages/app/package.json": `{"name": "app", "dependencies": {"w": "^1.0.0", "x": "1.0.0"}}`,
				"package-lock.json": `{"name": "root", "lockfileVersion": 3, "requires": true, "packages": {
 "": {"name": "root", "workspaces": ["packages/*"]},
 "node_modules/app": {"resolved": "packages/app", "link": true},
 "packages/app": {"name": "app", "dependencies": {"w": "^1.0.0", "x": "1.0.0"}},
 "node_modules/w": {"version": "1.0.5", "resolved": "https://registry.npmjs.org/w/-/w-1.0.5.tgz", "integrity": "sha512-AA=="},
 "packages/app/node_modules/w": {"version": "1.0.5", "resolved": "https://registry.npmjs.org/w/-/w-1.0.0.tgz", "integrity": "sha512-AB=="},
 "node_modules/x": {"version": "1.0.0", "resolved": "https://npm.example.invalid/api/npm/npm-remote/x/-/x-1.0.0.tgz"},
 "node_modules/x/node_modules/w": {"name": "y", "version": "1.0.5", "resolved": "https://npm.example.invalid/api/npm/npm-remote/w/-/w-1.0.0.tgz"}}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{"packages/app/package.json (dependencies)=||locked 1.0.5|1 nested"},
			blocked: []string{
				"package-lock.json: w 1.0.5 resolves https://npm.example.invalid/api/npm/npm-remote/w/-/w-1.0.0.tgz, not the registry tarball of y 1.0.5",
				"package-lock.json: w 1.0.5 resolves https://registry.npmjs.org/w/-/w-1.0.0.tgz, not the registry tarball of w 1.0.5",
			},
		},
		{
			// Tarballs that are the entry's: the public registry's, a
			// scoped one, a mirror's layout, a host with another layout
			// (GitHub Packages), v1's resolved.
			name: "npm lockfile tarballs that are the entry's",
			files: map[string]string{
				"package.json": `{"dependencies": {"@s/w": "1.0.0", "old": "npm:@s/w@1.0.0"}}`,
				"package-lock.json": `{"lockfileVersion": 3, "packages": {"": {},
 "node_modules/@s/w": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/@s/w/-/w-1.0.0.tgz"},
 "node_modules/old": {"name": "@s/w", "version": "1.0.0", "resolved": "https://registry.yarnpkg.com/@s/w/-/w-1.0.0.tgz"},
 "node_modules/a/node_modules/@s/w": {"version": "1.0.0", "resolved": "https://npm.pkg.github.com/download/@s/w/1.0.0/0123abcd"},
 "node_modules/b/node_modules/@s/w": {"version": "1.0.0", "resolved": "http://127.0.0.1:4873/@s/w/-/w-1.0.0.tgz"}}}`,
				"v1/package.json":      `{"dependencies": {"@s/w": "1.0.0"}}`,
				"v1/package-lock.json": `{"lockfileVersion": 1, "dependencies": {"@s/w": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/@s/w/-/w-1.0.0.tgz"}}}`,
			},
			eco: vulndata.NPM, pkg: "@s/w",
			want: []string{
				"package.json (dependencies)=1.0.0||locked 1.0.0|3 nested",
				"package.json (dependencies.old)=1.0.0|unbumpable|locked 1.0.0|3 nested",
				"v1/package.json (dependencies)=1.0.0||locked 1.0.0",
			},
		},
		{
			name: "npm v1 lockfile resolving another tarball",
			files: map[string]string{
				"package.json":      `{"dependencies": {"w": "1.0.5"}}`,
				"package-lock.json": `{"lockfileVersion": 1, "dependencies": {"w": {"version": "1.0.5", "resolved": "https://registry.npmjs.org/evil/-/evil-1.0.5.tgz"}}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{"package.json (dependencies)=1.0.5||locked 1.0.5"},
			blocked: []string{
				"package-lock.json: w 1.0.5 resolves https://registry.npmjs.org/evil/-/evil-1.0.5.tgz, not the registry tarball of w 1.0.5",
			},
		},
		{
			// yarn, pnpm and bun install from their own lockfile, which
			// fixrail does not read: a pnpm workspace member (its
			// lockfile at the root), a yarn project, a yarn.lock beside
			// a package-lock.json. A project with its own
			// package-lock.json below them is governed by that one.
			name: "npm projects under another tool's lockfile",
			files: map[string]string{
				"package.json":              `{"name": "root", "private": true}`,
				"pnpm-workspace.yaml":       "packages:\n  - 'packages/*'\n",
				"pnpm-lock.yaml":            "lockfileVersion: '9.0'\nimporters:\n  packages/app:\n    dependencies:\n      w:\n        specifier: ^1.0.0\n        version: 1.0.0\n",
				"packages/app/package.json": `{"name": "app", "dependencies": {"w": "^1.0.0"}}`,
				"tools/package.json":        `{"devDependencies": {"w": "1.0.5"}}`,
				"tools/package-lock.json":   `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.5"}}}`,
				"y/package.json":            `{"dependencies": {"w": "1.0.5"}}`,
				"y/yarn.lock":               "w@1.0.5:\n  version \"1.0.5\"\n\nw@^1.0.0:\n  version \"1.0.0\"\n",
				"both/package.json":         `{"dependencies": {"w": "1.0.5"}}`,
				"both/package-lock.json":    `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/w": {"version": "1.0.5"}}}`,
				"both/yarn.lock":            "w@1.0.0:\n  version \"1.0.0\"\n",
			},
			eco: vulndata.NPM, pkg: "w",
			want: []string{
				"both/package.json (dependencies)=1.0.5||locked 1.0.5",
				"packages/app/package.json (dependencies)=|",
				"tools/package.json (devDependencies)=1.0.5||locked 1.0.5",
				"y/package.json (dependencies)=1.0.5|",
			},
			blocked: []string{
				"both/yarn.lock: yarn's lockfile may decide which version of w installs for both/package.json; fixrail does not read it (it reads both/package-lock.json, which the build may not)",
				"pnpm-lock.yaml: pnpm's lockfile may decide which version of w installs for packages/app/package.json; fixrail does not read it",
				"y/yarn.lock: yarn's lockfile may decide which version of w installs for y/package.json; fixrail does not read it",
			},
		},
		{
			// pyproject.toml's other places: PEP 735 dependency groups
			// (an include-group table is read as its own group), Poetry's
			// groups, uv's dev, override and constraint dependencies.
			name: "pyproject groups, poetry groups, uv settings",
			files: map[string]string{
				"app/pyproject.toml": "[project]\nname = \"app\"\ndependencies = [\"requests>=2\"]\n[dependency-groups]\ndev = [\"requests==2.0.0\", {include-group = \"test\"}]\ntest = [\"Requests[socks]==2.0.1\"]\n[tool.uv]\ndev-dependencies = [\"requests==2.0.0\"]\noverride-dependencies = [\"requests==2.0.0\"]\nconstraint-dependencies = [\"requests<2.1\"]\n",
				"poe/pyproject.toml": "[tool.poetry.dependencies]\npython = \"^3.11\"\nrequests = \"^2.0\"\n[tool.poetry.group.lint.dependencies]\nrequests = \"2.0.0\"\n[tool.poetry.group.docs.dependencies]\nrequests = { version = \"2.0.1\", optional = true }\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			want: []string{
				"app/pyproject.toml (project.dependencies)=|",
				"app/pyproject.toml (dependency-groups.dev)=2.0.0|",
				"app/pyproject.toml (dependency-groups.test)=2.0.1|",
				"app/pyproject.toml (tool.uv.dev-dependencies)=2.0.0|",
				"app/pyproject.toml (tool.uv.override-dependencies)=2.0.0|",
				"app/pyproject.toml (tool.uv.constraint-dependencies)=|",
				"poe/pyproject.toml (tool.poetry.dependencies)=|",
				"poe/pyproject.toml (tool.poetry.group.docs.dependencies)=2.0.1|",
				"poe/pyproject.toml (tool.poetry.group.lint.dependencies)=2.0.0|",
			},
		},
		{
			name: "Gemfile.lock GIT and PATH sections",
			files: map[string]string{
				"Gemfile":        "source \"https://rubygems.org\"\ngem \"rack\", git: \"https://example.invalid/rack\"\n",
				"Gemfile.lock":   "GIT\n  remote: https://example.invalid/rack\n  revision: 0123\n  specs:\n    rack (2.2.9)\n\nGEM\n  remote: https://rubygems.org/\n  specs:\n    rake (13.0.0)\n\nDEPENDENCIES\n  rack!\n",
				"b/Gemfile":      "gem \"rack\", \"2.2.8\"\n",
				"b/Gemfile.lock": "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (2.2.8)\n\nDEPENDENCIES\n  rack (= 2.2.8)\n",
			},
			eco: vulndata.RubyGems, pkg: "rack",
			want: []string{
				"Gemfile:2 (gem)=||locked 2.2.9",
				"b/Gemfile:1 (gem)=2.2.8||locked 2.2.8",
			},
			blocked: []string{
				"Gemfile.lock: rack 2.2.9 comes from GIT https://example.invalid/rack, not the registry",
			},
		},
		{
			name: "go replaces in go.mod and go.work",
			files: map[string]string{
				"go.work":                    "go 1.22\n\nuse ./app\n\nreplace example.com/lib v1.0.2 => ./third_party/lib\n",
				"app/go.mod":                 "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v1.0.0\n\nreplace example.com/lib => example.com/fork v1.0.3\n",
				"third_party/lib/go.mod":     "module example.com/lib\n\ngo 1.22\n",
				"other/go.work":              "go 1.22\n\nreplace example.com/lib => ./nowhere\n",
				"unrelated/go.mod":           "module example.com/u\n\ngo 1.22\n",
				"app/node_modules/x/go.work": "go 1.22\n",
			},
			eco: vulndata.Go, pkg: "example.com/lib",
			want: []string{"app/go.mod:5 (require)=v1.0.0|"},
			repl: []string{
				"app/go.mod:7: replace => example.com/fork v1.0.3",
				"go.work:5: replace v1.0.2 => ./third_party/lib",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			d, err := FindAll(root, tc.eco, tc.pkg, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, dep := range d.Deps {
				s := dep.Where() + "=" + dep.Version + "|"
				if dep.Unbumpable != "" {
					s += "unbumpable"
				}
				if dep.Via != "" {
					s += "via " + dep.Via
				}
				if len(dep.Locked) > 0 {
					s += "|locked " + strings.Join(dep.Locked, ",")
				}
				if len(dep.Instances) > 0 {
					s += "|" + string(rune('0'+len(dep.Instances))) + " nested"
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("deps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			var blocked []string
			for _, b := range d.Blocked {
				blocked = append(blocked, b.String())
			}
			if len(blocked) != len(tc.blocked) {
				t.Fatalf("blocked %q, want %q", blocked, tc.blocked)
			}
			for i := range blocked {
				if !strings.HasPrefix(blocked[i], tc.blocked[i]) {
					t.Errorf("blocked[%d] = %q, want prefix %q", i, blocked[i], tc.blocked[i])
				}
			}
			var repl []string
			for _, r := range d.Replaces {
				repl = append(repl, r.String())
			}
			if strings.Join(repl, "\n") != strings.Join(tc.repl, "\n") {
				t.Errorf("replaces %q, want %q", repl, tc.repl)
			}
		})
	}
}

func TestReplaceApplies(t *testing.T) {
	for _, tc := range []struct {
		r     Replace
		v     string
		local bool
		want  bool
	}{
		{Replace{OldVersion: ""}, "v1.0.0", true, true},
		{Replace{OldVersion: "v1.0.2"}, "v1.0.2", true, true},
		{Replace{OldVersion: "v1.0.2"}, "1.0.2", true, true},
		{Replace{OldVersion: "v1.0.2"}, "v1.0.0", true, false},
		{Replace{OldVersion: "v1.0.2", NewVersion: "v1.0.3"}, "v1.0.2", false, true},
	} {
		if got := tc.r.Applies(tc.v); got != tc.want || tc.r.Local() != tc.local {
			t.Errorf("%+v.Applies(%s) = %v local %v", tc.r, tc.v, got, tc.r.Local())
		}
	}
}

// TestBumpAll: all or nothing — every declaration bumped in one pass (two
// lines of one file, an included file, package.json's sections), a range
// that admits the target left as is, and nothing written when one
// declaration cannot be edited beside others that can.
func TestBumpAll(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		eco    vulndata.Ecosystem
		pkg    string
		want   map[string]string // files after; nil: unchanged
		err    error
		regens int
	}{
		{
			name: "requirements lines and constraints",
			files: map[string]string{
				"requirements.txt": "-c c.txt\nrequests==2.0.0 ; sys_platform == \"linux\"\nrequests==2.0.0 ; sys_platform == \"win32\"\n",
				"c.txt":            "requests==2.0.0\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			want: map[string]string{
				"requirements.txt": "-c c.txt\nrequests==2.0.2 ; sys_platform == \"linux\"\nrequests==2.0.2 ; sys_platform == \"win32\"\n",
				"c.txt":            "requests==2.0.2\n",
			},
		},
		{
			name: "npm sections, one regeneration; a range that admits the target left",
			files: map[string]string{
				"package.json":      `{"dependencies": {"w": "1.0.0"}, "optionalDependencies": {"w": "^1.0.0"}, "peerDependencies": {"w": ">=1"}, "overrides": {"w": "1.0.0"}, "resolutions": {"**/w": "~1.0.0"}}`,
				"package-lock.json": `{"lockfileVersion": 3, "packages": {"node_modules/w": {"version": "1.0.0"}}}`,
			},
			eco: vulndata.NPM, pkg: "w",
			want: map[string]string{
				"package.json": `{"dependencies": {"w": "1.0.2"}, "optionalDependencies": {"w": "^1.0.2"}, "peerDependencies": {"w": ">=1"}, "overrides": {"w": "1.0.2"}, "resolutions": {"**/w": "~1.0.2"}}`,
			},
			regens: 1,
		},
		{
			name: "one not editable beside others: nothing written",
			files: map[string]string{
				"requirements.txt": "requests==2.0.0 ; sys_platform == \"linux\"\nrequests @ https://example.invalid/r.tgz ; sys_platform == \"win32\"\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			err: ErrUnbumpable,
		},
		{
			name: "none editable: the agent's",
			files: map[string]string{
				"requirements.txt": "requests==2.0.0 --hash=sha256:00\n",
			},
			eco: vulndata.PyPI, pkg: "requests",
			err: ErrNoBuiltIn,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			deps, err := Find(root, tc.eco, tc.pkg, "")
			if err != nil {
				t.Fatal(err)
			}
			checkErr := CheckBumpAll(root, deps, "1.0.2")
			target := "1.0.2"
			if tc.eco == vulndata.PyPI {
				target = "2.0.2"
				checkErr = CheckBumpAll(root, deps, target)
			}
			e, err := BumpAll(root, deps, target)
			if !errors.Is(err, tc.err) || !errors.Is(checkErr, tc.err) {
				t.Fatalf("BumpAll: %v, CheckBumpAll: %v, want %v", err, checkErr, tc.err)
			}
			for p, c := range tc.files {
				want := c
				if w, ok := tc.want[p]; ok {
					want = w
				}
				got, _ := os.ReadFile(filepath.Join(root, p))
				if string(got) != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			if err == nil && len(e.Regens) != tc.regens {
				t.Errorf("%d regenerations, want %d", len(e.Regens), tc.regens)
			}
		})
	}
}

// CheckBumpAll never writes, even when every edit would succeed.
func TestCheckBumpAllWritesNothing(t *testing.T) {
	root := writeTree(t, map[string]string{"requirements.txt": "requests==2.0.0\n"})
	deps, err := Find(root, vulndata.PyPI, "requests", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckBumpAll(root, deps, "2.0.2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "requirements.txt")); string(got) != "requests==2.0.0\n" {
		t.Fatalf("CheckBumpAll wrote %q", got)
	}
}
