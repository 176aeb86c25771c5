package cve

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
)

// TestAlertWithoutVersion: a Dependabot alert names no installed version
// and two advisory ids; the installed version comes from the manifest,
// and the alert's CVE matches the OSV record that carries it as an alias
// (PYSEC-2014-82 aliases CVE-2014-0012), while a GHSA OSV does not hold
// is reported as such, never counted as cleared.
func TestAlertWithoutVersion(t *testing.T) {
	ctx := t.Context()
	root := tree(t, map[string]string{"requirements.txt": "flask==2.0.0\nJinja2==2.7.2\n"})
	alert := &findings.Vuln{ID: "dependabot-2", Ecosystem: "PyPI", Package: "jinja2", Advisories: []string{"GHSA-2222-3333-4444", "CVE-2014-0012"}, Manifest: "requirements.txt", Source: findings.DependabotSource}
	ty := &Type{Source: newMemSource(t, "pypi_jinja2")}
	p, err := ty.Prepare(ctx, root, alert)
	if err != nil || !p.Red.Red || p.Red.Version != "2.7.2" || p.Decision.Installed != "2.7.2" || p.Decision.Target != "2.8.1" {
		t.Fatalf("prepare: %v %+v", err, p)
	}
	if _, err := ty.Edit(root, p); err != nil {
		t.Fatal(err)
	}
	g := ty.Verify(ctx, root, p)
	if g.Verdict != Green || g.Applied != "2.8.1" {
		t.Fatalf("verify: %+v", g)
	}
	md := p.PRSection(&g)
	for _, want := range []string{
		"- `CVE-2014-0012`: cleared by the target",
		"- `GHSA-2222-3333-4444`: not among the advisories OSV lists",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("PR section lacks %q:\n%s", want, md)
		}
	}
	// Unbumped, the candidate is still on the manifest's version: the
	// oracle compares against it, not against the alert's empty one.
	root = tree(t, map[string]string{"requirements.txt": "Jinja2==2.7.2\n"})
	if g := ty.Verify(ctx, root, p); g.Verdict != StillRed {
		t.Errorf("an untouched manifest verified %s: %+v", g.Verdict, g.Checks)
	}
}
