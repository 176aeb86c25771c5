package cve

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/vulndata"
	"github.com/fixrail/fixrail/internal/vulndata/vulntest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// scenarioDecision decides from a stand-in scenario's data directly (no
// HTTP), with fixed fetch times so the rendering is stable.
func scenarioDecision(t *testing.T, name string, eco vulndata.Ecosystem, pkg, installed string) *Decision {
	t.Helper()
	sc, err := vulntest.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	vulns, pub, err := sc.Records()
	if err != nil {
		t.Fatal(err)
	}
	cur, err := eco.Parse(installed)
	if err != nil {
		t.Fatal(err)
	}
	at := vulndata.Meta{FetchedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	return DecideFrom(eco, pkg, cur, vulns, pub, at, at)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from golden (run with -update to accept):\n--- got ---\n%s", name, got)
	}
}

func TestRenderGolden(t *testing.T) {
	for _, c := range []struct {
		file, scenario string
		eco            vulndata.Ecosystem
		pkg, installed string
	}{
		{"upgrade_rubygems", "rubygems_nokogiri", vulndata.RubyGems, "nokogiri", "1.16.0-x86_64-linux"},
		{"no_safe_cargo", "cargo_unfixed", vulndata.Cargo, "fixrail-demo-unfixed", "0.1.0"},
	} {
		t.Run(c.file, func(t *testing.T) {
			d := scenarioDecision(t, c.scenario, c.eco, c.pkg, c.installed)
			golden(t, c.file+".md", []byte(d.Markdown()))
			j, err := d.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.file+".json", j)
		})
	}
}

// TestCodeSpanHoldsHostileText: whatever a registry string holds, its code
// span closes only where Code closed it, and no newline survives.
func TestCodeSpanHoldsHostileText(t *testing.T) {
	for _, s := range []string{
		"plain", "`", "``", "a ` b `` c ```", "`start", "end`", " spaced ", "[x](https://evil.invalid) ![i](y) <img src=x> @someone",
		"line1\nline2\r\n## Heading", "bidi\u202eevil\u200b", strings.Repeat("`", 300), "",
	} {
		got := Code(s)
		if strings.ContainsAny(got, "\n\r\u202e\u200b") {
			t.Errorf("Code(%q) = %q keeps a line break or format char", s, got)
		}
		n := 0
		for n < len(got) && got[n] == '`' {
			n++
		}
		fence := got[:n]
		inner := got[n : len(got)-n]
		if !strings.HasSuffix(got, fence) || strings.Contains(inner, fence) {
			t.Errorf("Code(%q) = %q: the fence %q occurs inside", s, got, fence)
		}
		if got[n] == '`' || got[len(got)-n-1] == '`' {
			t.Errorf("Code(%q) = %q: fence touches a backtick", s, got)
		}
	}
}

// TestMarkdownFencesEveryRegistryString: a decision built from hostile
// registry strings renders none of them outside a code span.
func TestMarkdownFencesEveryRegistryString(t *testing.T) {
	evil := "x`](https://evil.invalid)\n# owned @org/team"
	d := &Decision{
		Ecosystem: "npm", Package: evil, Installed: evil, Outcome: Upgrade, Target: evil,
		Bump:       &vulndata.Bump{Class: "patch"},
		Cleared:    []Advisory{{ID: evil, Aliases: []string{evil}, Summary: evil}},
		PassedOver: []Passed{{Version: evil, Reason: "affected", By: []string{evil}}},
	}
	md := d.Markdown()
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "# owned") {
			t.Fatalf("registry text became a heading:\n%s", md)
		}
		// Outside code spans, nothing of evil may remain.
		if out := stripCode(line); strings.Contains(out, "evil.invalid") || strings.Contains(out, "@org") {
			t.Fatalf("registry text outside a code span in %q", line)
		}
	}
}

// stripCode removes CommonMark code spans from one line.
func stripCode(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := i
		for n < len(line) && line[n] == '`' {
			n++
		}
		fence := line[i:n]
		end := -1
		for j := n; j < len(line); {
			k := strings.Index(line[j:], fence)
			if k < 0 {
				break
			}
			k += j
			e := k + len(fence)
			if (k == 0 || line[k-1] != '`') && (e == len(line) || line[e] != '`') {
				end = e
				break
			}
			j = e
			for j < len(line) && line[j] == '`' {
				j++
			}
		}
		if end < 0 {
			b.WriteString(line[i:])
			break
		}
		i = end
	}
	return b.String()
}
