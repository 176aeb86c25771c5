package gates_test

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/verdict"
)

// TestLockfileSources: a URL an npm lockfile newly resolves passes only
// under a registry the operator named; one the base already held passes
// whatever its host; other files and removed lockfiles are not read.
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
		registries []string
		base, cand map[string]string
		pass       bool
		want       []string
	}{
		{name: "no lockfile changed", registries: []string{pub},
			base: map[string]string{"src/a.js": "x"}, cand: map[string]string{"src/a.js": "y"},
			pass: true, want: []string{"no npm lockfile changed"}},
		{name: "under the registry; an old off-registry URL kept", registries: []string{pub},
			base: map[string]string{"package-lock.json": base},
			cand: map[string]string{"package-lock.json": lock(entry("old", "https://git.corp.example/old/-/old-1.0.0.tgz"), entry("w", pub+"w/-/w-1.0.2.tgz"))},
			pass: true, want: []string{"1 npm lockfile(s) changed; every URL they newly resolve lies under " + pub}},
		{name: "another host, registry-shaped", registries: []string{pub},
			base: map[string]string{"package-lock.json": base},
			cand: map[string]string{"package-lock.json": lock(entry("w", "https://npm.mirror.invalid/w/-/w-1.0.2.tgz"))},
			want: []string{"resolved outside the registries the operator named (" + pub + "): package-lock.json: https://npm.mirror.invalid/w/-/w-1.0.2.tgz (at /packages/node_modules/w)"}},
		{name: "a scope's registry the operator named", registries: []string{"https://npm.corp.example/", pub},
			base: map[string]string{"web/package-lock.json": base},
			cand: map[string]string{"web/package-lock.json": lock(entry("@corp/x", "https://npm.corp.example/@corp/x/-/x-1.0.2.tgz"))},
			pass: true},
		{name: "a new lockfile, shrinkwrap", registries: []string{pub},
			cand: map[string]string{"npm-shrinkwrap.json": lock(entry("w", "http://registry.npmjs.org/w/-/w-1.0.2.tgz"))},
			want: []string{"npm-shrinkwrap.json: http://registry.npmjs.org/w/-/w-1.0.2.tgz"}},
		{name: "does not parse", registries: []string{pub},
			base: map[string]string{"package-lock.json": base}, cand: map[string]string{"package-lock.json": "{"},
			want: []string{"package-lock.json: ", "the lockfile after"}},
		{name: "removed", registries: []string{pub},
			base: map[string]string{"package-lock.json": base}, cand: map[string]string{"package-lock.json": ""},
			pass: true, want: []string{"no npm lockfile changed"}},
		{name: "yarn.lock is not npm's", registries: []string{pub},
			cand: map[string]string{"yarn.lock": "w@1:\n  resolved \"https://npm.mirror.invalid/w.tgz\"\n"},
			pass: true, want: []string{"no npm lockfile changed"}},
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
	if g := gates.LockfileSources(nil); g.Reason != verdict.ReasonLockfileSource || g.Terminal() != verdict.Escalate {
		t.Errorf("reason %q, terminal %q", g.Reason, g.Terminal())
	}
	// No registry, or no reader of the base, is the pipeline's bug: an
	// error, never a pass.
	if _, err := gates.LockfileSources(nil).Run(t.Context(), depChange(nil, map[string]string{"package-lock.json": "{}"})); err == nil {
		t.Error("no registries: no error")
	}
	c := depChange(nil, map[string]string{"package-lock.json": "{}"})
	c.Base = nil
	if _, err := gates.LockfileSources([]string{pub}).Run(t.Context(), c); err == nil {
		t.Error("no base reader: no error")
	}
}
