package gates_test

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/verdict"
)

// TestLockfileSources: a URL an npm lockfile or a uv.lock newly names
// passes only from a registry or index the operator named; one the base
// already held passes whatever its host; other files and removed
// lockfiles are not read.
func TestLockfileSources(t *testing.T) {
	const pub = "https://registry.npmjs.org/"
	lock := func(entries ...string) string {
		return `{"lockfileVersion": 3, "packages": {"": {}` + strings.Join(entries, "") + `}}`
	}
	entry := func(name, url string) string {
		return `, "node_modules/` + name + `": {"version": "1.0.2", "resolved": "` + url + `"}`
	}
	base := lock(entry("old", "https://git.corp.example/old/-/old-1.0.0.tgz"), entry("w", pub+"w/-/w-1.0.0.tgz"))
	for _, tc := range []struct {
		name       string
		registries gates.Sources
		base, cand map[string]string
		pass       bool
		want       []string
	}{
		{name: "no lockfile changed", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"src/a.js": "x"}, cand: map[string]string{"src/a.js": "y"},
			pass: true, want: []string{"no npm lockfile or uv.lock changed"}},
		{name: "under the registry; an old off-registry URL kept", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"package-lock.json": base},
			cand: map[string]string{"package-lock.json": lock(entry("old", "https://git.corp.example/old/-/old-1.0.0.tgz"), entry("w", pub+"w/-/w-1.0.2.tgz"))},
			pass: true, want: []string{"1 lockfile(s) changed; every URL they newly resolve comes from " + pub}},
		{name: "another host, registry-shaped", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"package-lock.json": base},
			cand: map[string]string{"package-lock.json": lock(entry("w", "https://npm.mirror.invalid/w/-/w-1.0.2.tgz"))},
			want: []string{"resolved outside the sources the operator named (" + pub + "): package-lock.json: https://npm.mirror.invalid/w/-/w-1.0.2.tgz (at /packages/node_modules/w)"}},
		{name: "a scope's registry the operator named", registries: gates.Sources{NPM: []string{"https://npm.corp.example/", pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"web/package-lock.json": base},
			cand: map[string]string{"web/package-lock.json": lock(entry("@corp/x", "https://npm.corp.example/@corp/x/-/x-1.0.2.tgz"))},
			pass: true},
		{name: "a new lockfile, shrinkwrap", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			cand: map[string]string{"npm-shrinkwrap.json": lock(entry("w", "http://registry.npmjs.org/w/-/w-1.0.2.tgz"))},
			want: []string{"npm-shrinkwrap.json: http://registry.npmjs.org/w/-/w-1.0.2.tgz"}},
		{name: "does not parse", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"package-lock.json": base}, cand: map[string]string{"package-lock.json": "{"},
			want: []string{"package-lock.json: ", "the lockfile after"}},
		{name: "removed", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"package-lock.json": base}, cand: map[string]string{"package-lock.json": ""},
			pass: true, want: []string{"no npm lockfile or uv.lock changed"}},
		{name: "uv.lock: a wheel on PyPI's file host, a new version", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"uv.lock": uvBase},
			cand: map[string]string{"uv.lock": strings.ReplaceAll(uvBase, "2.32.3", "2.32.4")},
			pass: true, want: []string{"every URL they newly resolve comes from https://pypi.org/simple"}},
		{name: "uv.lock: a wheel on another host", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"uv.lock": uvBase},
			cand: map[string]string{"uv.lock": strings.ReplaceAll(strings.ReplaceAll(uvBase, "2.32.3", "2.32.4"), "files.pythonhosted.org", "files.mirror.invalid")},
			want: []string{"uv.lock: https://files.mirror.invalid/packages/ab/requests-2.32.4-py3-none-any.whl (at requests 2.32.4)", "uv.lock: https://files.mirror.invalid/packages/cd/requests-2.32.4.tar.gz (at requests 2.32.4)"}},
		{name: "uv.lock: another index", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			base: map[string]string{"uv.lock": uvBase},
			cand: map[string]string{"uv.lock": strings.ReplaceAll(uvBase, "https://pypi.org/simple", "https://pypi.mirror.invalid/simple")},
			want: []string{"uv.lock: https://pypi.mirror.invalid/simple (at requests 2.32.3)"}},
		{name: "uv.lock: the operator's index and its files", registries: gates.Sources{NPM: []string{pub}, Python: []string{"https://pypi.corp.example/simple/"}},
			base: map[string]string{"uv.lock": uvBase},
			cand: map[string]string{"uv.lock": strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(uvBase, "2.32.3", "2.32.4"), "https://pypi.org/simple", "https://pypi.corp.example/simple"), "files.pythonhosted.org", "pypi.corp.example")},
			pass: true},
		{name: "yarn.lock is not npm's", registries: gates.Sources{NPM: []string{pub}, Python: []string{manifest.PyPIIndex}},
			cand: map[string]string{"yarn.lock": "w@1:\n  resolved \"https://npm.mirror.invalid/w.tgz\"\n"},
			pass: true, want: []string{"no npm lockfile or uv.lock changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := gates.LockfileSources(tc.registries).Run(t.Context(), depChange(tc.base, tc.cand))
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass {
				t.Fatalf("pass %v, want %v: %s", v.Pass, tc.pass, v.Detail)
			}
			for _, w := range tc.want {
				if !strings.Contains(v.Detail, w) {
					t.Errorf("detail %q lacks %q", v.Detail, w)
				}
			}
		})
	}
	if g := gates.LockfileSources(gates.Sources{}); g.Reason != verdict.ReasonLockfileSource || g.Terminal() != verdict.Escalate {
		t.Errorf("reason %q, terminal %q", g.Reason, g.Terminal())
	}
	// No registry, or no reader of the base, is the pipeline's bug: an
	// error, never a pass.
	if _, err := gates.LockfileSources(gates.Sources{Python: []string{manifest.PyPIIndex}}).Run(t.Context(), depChange(nil, map[string]string{"package-lock.json": "{}"})); err == nil {
		t.Error("no registries: no error")
	}
	c := depChange(nil, map[string]string{"package-lock.json": "{}"})
	c.Base = nil
	if _, err := gates.LockfileSources(gates.Sources{NPM: []string{pub}}).Run(t.Context(), c); err == nil {
		t.Error("no base reader: no error")
	}
}

// uvBase is a uv.lock as uv writes one: a package from PyPI, its sdist and
// wheel on PyPI's file host.
const uvBase = `version = 1
requires-python = ">=3.12"

[[package]]
name = "requests"
version = "2.32.3"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://files.pythonhosted.org/packages/cd/requests-2.32.3.tar.gz", hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000", size = 131218 }
wheels = [
    { url = "https://files.pythonhosted.org/packages/ab/requests-2.32.3-py3-none-any.whl", hash = "sha256:1111111111111111111111111111111111111111111111111111111111111111", size = 64928 },
]
`
