package cve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
)

// TestEveryDeclarationJudged: red reads every declaration and every copy
// a lockfile installs, the decision starts above the highest affected
// one, and green fails on any declaration or copy left behind — a second
// requirement line, an included constraints file, a nested npm copy.
func TestEveryDeclarationJudged(t *testing.T) {
	ctx := context.Background()
	src := newMemSource(t, "pypi_jinja2", "npm_scoped")
	ty := &Type{Source: src}
	const pj = `{"dependencies": {"@fixrail-demo/left-pad": "^1.1.0"}, "optionalDependencies": {"@fixrail-demo/left-pad": "1.1.0"}}`
	lock := func(top, nested string) string {
		return `{"lockfileVersion": 3, "packages": {"node_modules/@fixrail-demo/left-pad": {"version": "` + top + `"}, "node_modules/x/node_modules/@fixrail-demo/left-pad": {"version": "` + nested + `"}}}`
	}
	npmFinding := &findings.Vuln{Ecosystem: "npm", Package: "@fixrail-demo/left-pad", Version: "1.1.0"}
	reqs := "-c c.txt\nJinja2==2.7.2 ; sys_platform == \"linux\"\nJinja2==2.7.2 ; sys_platform == \"win32\"\n"
	// A library's pyproject.toml with no lockfile: its PEP 735 dev group
	// (what uv sync and pip install --group install) pins too.
	pyp := func(dep, dev string) string {
		return "[project]\nname = \"lib\"\ndependencies = [\"" + dep + "\"]\n[dependency-groups]\ndev = [\"" + dev + "\", \"pytest>=8\"]\n"
	}
	for _, c := range []struct {
		name      string
		files     map[string]string
		f         *findings.Vuln
		redWhere  []string          // red's detail names each
		bumped    int               // declarations the plan bumps
		after     map[string]string // the candidate's files, rewritten
		verdict   string
		failed    string
		failWhere string
	}{
		{name: "requirements: all bumped", files: map[string]string{"requirements.txt": reqs, "c.txt": "jinja2==2.7.2\n"}, f: jinjaFinding,
			redWhere: []string{"requirements.txt:2", "requirements.txt:3", "c.txt:1"}, bumped: 3, verdict: Green},
		{name: "requirements: second line left", files: map[string]string{"requirements.txt": reqs, "c.txt": "jinja2==2.7.2\n"}, f: jinjaFinding, bumped: 3,
			after:   map[string]string{"requirements.txt": "-c c.txt\nJinja2==2.8.1 ; sys_platform == \"linux\"\nJinja2==2.7.2 ; sys_platform == \"win32\"\n", "c.txt": "jinja2==2.8.1\n"},
			verdict: StillRed, failed: "moved", failWhere: "requirements.txt:3"},
		{name: "requirements: constraint left", files: map[string]string{"requirements.txt": reqs, "c.txt": "jinja2==2.7.2\n"}, f: jinjaFinding, bumped: 3,
			after:   map[string]string{"requirements.txt": "-c c.txt\nJinja2==2.8.1 ; sys_platform == \"linux\"\nJinja2==2.8.1 ; sys_platform == \"win32\"\n"},
			verdict: StillRed, failed: "moved", failWhere: "c.txt:1"},
		{name: "requirements: an unaffected line is judged, not bumped", files: map[string]string{"requirements.txt": "Jinja2==2.7.2 ; sys_platform == \"linux\"\nJinja2==2.9 ; sys_platform == \"win32\"\n"}, f: jinjaFinding,
			redWhere: []string{"requirements.txt:1"}, bumped: 1, verdict: Green},
		{name: "pyproject: a dependency group left on the affected pin", files: map[string]string{"pyproject.toml": pyp("Jinja2==2.7.2", "jinja2==2.7.2")}, f: jinjaFinding, bumped: 2,
			redWhere: []string{"pyproject.toml (project.dependencies)", "pyproject.toml (dependency-groups.dev)"},
			after:    map[string]string{"pyproject.toml": pyp("Jinja2==2.8.1", "jinja2==2.7.2")},
			verdict:  StillRed, failed: "moved", failWhere: "pyproject.toml (dependency-groups.dev)"},
		{name: "pyproject: every group moved", files: map[string]string{"pyproject.toml": pyp("Jinja2==2.7.2", "jinja2==2.7.2")}, f: jinjaFinding, bumped: 2,
			after:   map[string]string{"pyproject.toml": pyp("Jinja2==2.8.1", "jinja2==2.8.1")},
			verdict: Green},
		{name: "npm: a nested copy left on an affected version", files: map[string]string{"package.json": pj, "package-lock.json": lock("1.1.0", "1.1.0")}, f: npmFinding, bumped: 2,
			redWhere: []string{"package-lock.json node_modules/@fixrail-demo/left-pad", "package-lock.json node_modules/x/node_modules/@fixrail-demo/left-pad"},
			after:    map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}, "optionalDependencies": {"@fixrail-demo/left-pad": "1.2.3"}}`, "package-lock.json": lock("1.2.3", "1.1.0")},
			verdict:  StillRed, failed: "moved", failWhere: "node_modules/x/node_modules/@fixrail-demo/left-pad"},
		{name: "npm: every copy moved", files: map[string]string{"package.json": pj, "package-lock.json": lock("1.1.0", "1.1.0")}, f: npmFinding, bumped: 2,
			after:   map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}, "optionalDependencies": {"@fixrail-demo/left-pad": "1.2.3"}}`, "package-lock.json": lock("1.2.3", "1.2.3")},
			verdict: Green},
		{name: "npm: optional left on the old spec", files: map[string]string{"package.json": pj, "package-lock.json": lock("1.1.0", "1.1.0")}, f: npmFinding, bumped: 2,
			after:   map[string]string{"package.json": `{"dependencies": {"@fixrail-demo/left-pad": "^1.2.3"}, "optionalDependencies": {"@fixrail-demo/left-pad": "1.1.0"}}`, "package-lock.json": lock("1.2.3", "1.2.3")},
			verdict: StillRed, failed: "lockfile", failWhere: "optionalDependencies"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := tree(t, c.files)
			p, err := ty.Prepare(ctx, root, c.f)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.redWhere {
				if !strings.Contains(p.Red.Detail, w) {
					t.Errorf("red %q does not name %s", p.Red.Detail, w)
				}
			}
			if len(p.Bump) != c.bumped {
				t.Errorf("bumps %d declaration(s), want %d: %+v", len(p.Bump), c.bumped, p.Bump)
			}
			if c.after == nil {
				if _, err := ty.Edit(root, p); err != nil {
					t.Fatal(err)
				}
			}
			for f, content := range c.after {
				write(t, root, f, content)
			}
			g := ty.Verify(ctx, root, p)
			if g.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %+v", g.Verdict, c.verdict, g.Checks)
			}
			if c.failed != "" {
				last := g.Checks[len(g.Checks)-1]
				if last.Name != c.failed || last.OK || !strings.Contains(last.Detail, c.failWhere) {
					t.Fatalf("last check %+v, want %s failed naming %s", last, c.failed, c.failWhere)
				}
			}
		})
	}
}

// An include fixrail cannot follow stops the plan before any advisory is
// asked for: it may pin the package where no bump reaches.
func TestPrepareBlockedInclude(t *testing.T) {
	src := newMemSource(t, "pypi_jinja2")
	src.down = true // never asked
	root := tree(t, map[string]string{"requirements.txt": "-r https://example.invalid/r.txt\nJinja2==2.7.2\n"})
	_, err := (&Type{Source: src}).Prepare(context.Background(), root, jinjaFinding)
	if !errors.Is(err, ErrUnbumpable) || !strings.Contains(err.Error(), "requirements.txt:1: -r https://example.invalid/r.txt: a URL") {
		t.Fatalf("err = %v", err)
	}
}
