package cve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/vulndata"
	"github.com/fixrail/fixrail/internal/vulndata/vulntest"
)

// memSource answers from stand-in scenarios in memory; down makes every
// call fail as an unreachable service does.
type memSource struct {
	vulns map[string][]vulndata.Vuln
	pub   map[string][]vulndata.Published
	down  bool
	// downErr is what a down service answers (ErrUnreachable if nil);
	// versionsDown fails only deps.dev.
	downErr      error
	versionsDown bool
}

func (m *memSource) fail() error {
	if m.downErr != nil {
		return m.downErr
	}
	return vulndata.ErrUnreachable
}

func newMemSource(t *testing.T, names ...string) *memSource {
	m := &memSource{vulns: map[string][]vulndata.Vuln{}, pub: map[string][]vulndata.Published{}}
	for _, n := range names {
		sc, err := vulntest.Load(n)
		if err != nil {
			t.Fatal(err)
		}
		vs, pub, err := sc.Records()
		if err != nil {
			t.Fatal(err)
		}
		eco := vulndata.Ecosystem(sc.Ecosystem)
		m.vulns[eco.NormalizeName(sc.Name)] = vs
		m.pub[eco.NormalizeName(sc.Name)] = pub
	}
	return m
}

func (m *memSource) Vulns(_ context.Context, eco vulndata.Ecosystem, name string) ([]vulndata.Vuln, vulndata.Meta, error) {
	if m.down {
		return nil, vulndata.Meta{}, m.fail()
	}
	return m.vulns[eco.NormalizeName(name)], vulndata.Meta{}, nil
}

func (m *memSource) Versions(_ context.Context, eco vulndata.Ecosystem, name string) ([]vulndata.Published, vulndata.Meta, error) {
	if m.down || m.versionsDown {
		return nil, vulndata.Meta{}, m.fail()
	}
	return m.pub[eco.NormalizeName(name)], vulndata.Meta{}, nil
}

func tree(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
	}
	return root
}

func write(t *testing.T, root, p, c string) {
	if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

var jinjaFinding = &findings.Vuln{ID: "cve-1", Ecosystem: "PyPI", Package: "jinja2", Version: "2.7.2", Advisories: []string{"PYSEC-2014-82"}, Manifest: "requirements.txt"}

// TestTypeEndToEnd: prepare (find, red, decide) → the built-in bump →
// verify green; the PR section carries the decision and the checks.
func TestTypeEndToEnd(t *testing.T) {
	ctx := context.Background()
	root := tree(t, map[string]string{"requirements.txt": "flask==2.0.0\nJinja2==2.7.2\n"})
	ty := &Type{Source: newMemSource(t, "pypi_jinja2")}
	p, err := ty.Prepare(ctx, root, jinjaFinding)
	if err != nil || !p.Red.Red || p.Decision.Target != "2.8.1" {
		t.Fatalf("prepare: %v %+v", err, p)
	}
	e, err := ty.Edit(root, p)
	if err != nil || len(e.Files) != 1 || e.Files[0] != "requirements.txt" || e.Regen != nil {
		t.Fatalf("edit: %v %+v", err, e)
	}
	g := ty.Verify(ctx, root, p)
	if g.Verdict != Green || g.Applied != "2.8.1" || len(g.Checks) != 4 {
		t.Fatalf("verify: %+v", g)
	}
	md := p.PRSection(&g)
	for _, want := range []string{"### Version decision", "- target: `2.8.1`", "### Oracle after the fix: green", "- clean — ok", "- `PYSEC-2014-82`: cleared by the target"} {
		if !strings.Contains(md, want) {
			t.Errorf("PR section lacks %q:\n%s", want, md)
		}
	}
}

func TestPrepareOutcomes(t *testing.T) {
	ctx := context.Background()
	src := newMemSource(t, "pypi_jinja2", "cargo_unfixed")
	ty := &Type{Source: src}
	// The alert names a package no manifest declares.
	root := tree(t, map[string]string{"requirements.txt": "flask==2.0.0\n"})
	_, err := ty.Prepare(ctx, root, jinjaFinding)
	var nim *manifest.NotInManifestError
	if !errors.As(err, &nim) {
		t.Fatalf("err = %v, want NotInManifestError", err)
	}
	// Declared, but on a version no advisory affects.
	root = tree(t, map[string]string{"requirements.txt": "jinja2==2.9\n"})
	if _, err := ty.Prepare(ctx, root, jinjaFinding); !errors.Is(err, ErrNotAffected) {
		t.Fatalf("err = %v, want ErrNotAffected", err)
	}
	// No safe version (Cargo: locked in Cargo.lock).
	root = tree(t, map[string]string{
		"Cargo.toml": "[dependencies]\nfixrail-demo-unfixed = \"0.1\"\n",
		"Cargo.lock": "[[package]]\nname = \"fixrail-demo-unfixed\"\nversion = \"0.1.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
	})
	p, err := ty.Prepare(ctx, root, &findings.Vuln{Ecosystem: "cargo", Package: "fixrail-demo-unfixed", Version: "0.1.0"})
	var ns *NoSafeError
	if !errors.As(err, &ns) || p.Decision.Outcome != NoSafeVersion {
		t.Fatalf("err = %v, want NoSafeError", err)
	}
	if _, err := ty.Edit(root, p); !errors.Is(err, manifest.ErrNoBuiltIn) {
		t.Fatalf("edit with no target: %v", err)
	}
	// A lockfile only a case-blind reader would read is named, never taken
	// as declaring nothing ("not in the repository" would be false).
	root = tree(t, map[string]string{
		"requirements.txt": "jinja2==2.7.2\n",
		"pyproject.toml":   "[Project]\ndependencies = [\"jinja2==2.8.1\"]\n",
	})
	_, err = ty.Prepare(ctx, root, jinjaFinding)
	if !errors.Is(err, ErrUnbumpable) || !strings.Contains(err.Error(), "pyproject.toml") || !strings.Contains(err.Error(), `"Project"`) {
		t.Fatalf("a pyproject with a [Project] table: %v", err)
	}
	root = tree(t, map[string]string{"pyproject.toml": "[Project]\ndependencies = [\"jinja2==2.7.2\"]\n"})
	if _, err := ty.Prepare(ctx, root, jinjaFinding); !errors.Is(err, manifest.ErrParse) || errors.As(err, &nim) {
		t.Fatalf("the only manifest unreadable: %v, want ErrParse and not not-in-manifest", err)
	}
	// No advisory data, for either reason the services give: no decision,
	// and an error the pipeline HALTs on (never a plan taken on trust).
	root = tree(t, map[string]string{"requirements.txt": "jinja2==2.7.2\n"})
	for _, down := range []error{vulndata.ErrUnreachable, vulndata.ErrOfflineMiss} {
		src.down = true
		src.downErr = down
		p, err = ty.Prepare(ctx, root, jinjaFinding)
		if !errors.Is(err, ErrNoAdvisoryData) || !errors.Is(err, down) || p == nil || p.Decision != nil {
			t.Fatalf("down (%v): %v %+v", down, err, p)
		}
		if _, err := ty.Edit(root, p); !errors.Is(err, manifest.ErrNoBuiltIn) {
			t.Fatalf("edit with no data: %v", err)
		}
	}
	// Versions down after Vulns answered: no decision either.
	src.down, src.versionsDown = false, true
	if _, err := ty.Prepare(ctx, root, jinjaFinding); !errors.Is(err, ErrNoAdvisoryData) {
		t.Fatalf("deps.dev down: %v", err)
	}
}

// TestGreenAfter is the oracle after the fix on each way a candidate can
// be wrong; the OSV-down rows are seed 001's asymmetry.
func TestGreenAfter(t *testing.T) {
	ctx := context.Background()
	src := newMemSource(t, "pypi_jinja2", "npm_scoped", "rubygems_nokogiri")
	ty := &Type{Source: src}
	prep := func(files map[string]string, f *findings.Vuln) (string, *Plan) {
		root := tree(t, files)
		src.down = false
		p, err := ty.Prepare(ctx, root, f)
		if err != nil {
			t.Fatal(err)
		}
		return root, p
	}
	const pj = `{"dependencies": {"@fixrail-demo/left-pad": "^1.1.0"}}`
	lock := func(v string) string {
		return `{"lockfileVersion": 3, "packages": {"node_modules/@fixrail-demo/left-pad": {"version": "` + v + `"}}}`
	}
	npmFinding := &findings.Vuln{Ecosystem: "npm", Package: "@fixrail-demo/left-pad", Version: "1.1.0"}
	// Bundler locks a native gem once per platform the lockfile lists, each
	// line the same release with its platform's suffix.
	gemLock := func(vs ...string) string {
		s := "GEM\n  remote: https://rubygems.org/\n  specs:\n"
		for _, v := range vs {
			s += "    nokogiri (" + v + ")\n"
		}
		return s + "\nPLATFORMS\n  arm64-darwin\n  x86_64-linux\n\nDEPENDENCIES\n  nokogiri (>= 1.16)\n"
	}
	const gemfile = "source \"https://rubygems.org\"\ngem \"nokogiri\", \">= 1.16\"\n"
	gemFinding := &findings.Vuln{Ecosystem: "RubyGems", Package: "nokogiri", Version: "1.16.0"}
	for _, c := range []struct {
		name    string
		npm     bool
		gem     bool
		after   map[string]string // files rewritten on the candidate
		down    bool
		verdict string
		failed  string // the check that fails
		detail  string // in its detail
	}{
		{name: "bumped", after: map[string]string{"requirements.txt": "Jinja2==2.8.1\n"}, verdict: Green},
		{name: "untouched", after: nil, verdict: StillRed, failed: "moved"},
		{name: "untouched, OSV down", after: nil, down: true, verdict: StillRed, failed: "moved"},
		{name: "bumped, OSV down", after: map[string]string{"requirements.txt": "Jinja2==2.8.1\n"}, down: true, verdict: NoData, failed: "clean"},
		{name: "PEP 440 equal is not moved", after: map[string]string{"requirements.txt": "Jinja2==2.7.2.0\n"}, verdict: StillRed, failed: "moved"},
		{name: "still vulnerable", after: map[string]string{"requirements.txt": "Jinja2==2.7.3\n"}, verdict: StillRed, failed: "clean"},
		{name: "removed", after: map[string]string{"requirements.txt": "flask==1.0\n"}, verdict: StillRed, failed: "declared"},
		{name: "npm bumped and relocked", npm: true, after: map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}}`, "package-lock.json": lock("1.2.3")}, verdict: Green},
		{name: "npm lockfile disagrees", npm: true, after: map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}}`, "package-lock.json": lock("1.2.2")}, verdict: StillRed, failed: "lockfile"},
		// npm installs the "version" it reads; a look-alike "Version" key
		// must not make the oracle read a safe one.
		{name: "npm lockfile spoofs a safe version by case", npm: true, after: map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}}`, "package-lock.json": `{"lockfileVersion": 3, "packages": {"node_modules/@fixrail-demo/left-pad": {"Version": "1.2.3", "version": "1.1.0"}}}`}, verdict: StillRed, failed: "declared"},
		{name: "gem relocked on every platform", gem: true, after: map[string]string{"Gemfile.lock": gemLock("1.16.5-arm64-darwin", "1.16.5-x86_64-linux")}, verdict: Green},
		{name: "gem relocked on one platform only", gem: true, after: map[string]string{"Gemfile.lock": gemLock("1.16.0-arm64-darwin", "1.16.5-x86_64-linux")}, verdict: StillRed, failed: "moved"},
		{name: "gem platforms locked apart", gem: true, after: map[string]string{"Gemfile.lock": gemLock("1.16.5-arm64-darwin", "1.16.6-x86_64-linux")}, verdict: StillRed, failed: "moved", detail: "Gemfile.lock locks 2 versions for Gemfile:2 (gem) (1.16.5, 1.16.6), not one"},
		{name: "npm lockfile disagrees, OSV down", npm: true, down: true, after: map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}}`, "package-lock.json": lock("1.2.2")}, verdict: StillRed, failed: "lockfile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var root string
			var p *Plan
			switch {
			case c.npm:
				root, p = prep(map[string]string{"package.json": pj, "package-lock.json": lock("1.1.0")}, npmFinding)
			case c.gem:
				root, p = prep(map[string]string{"Gemfile": gemfile, "Gemfile.lock": gemLock("1.16.0-arm64-darwin", "1.16.0-x86_64-linux")}, gemFinding)
			default:
				root, p = prep(map[string]string{"requirements.txt": "Jinja2==2.7.2\n"}, jinjaFinding)
			}
			for f, content := range c.after {
				write(t, root, f, content)
			}
			src.down = c.down
			g := ty.Verify(ctx, root, p)
			if g.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %+v", g.Verdict, c.verdict, g.Checks)
			}
			if c.failed != "" {
				last := g.Checks[len(g.Checks)-1]
				if last.Name != c.failed || last.OK || !strings.Contains(last.Detail, c.detail) {
					t.Fatalf("last check %+v, want %s failed with %q", last, c.failed, c.detail)
				}
			}
		})
	}
}
