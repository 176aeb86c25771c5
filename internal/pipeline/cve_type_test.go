package pipeline_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// memSource answers the cve type from memory: one package's advisories
// and published versions; any other package is unknown to both services.
type memSource struct {
	name  string
	vulns []vulndata.Vuln
	pub   []vulndata.Published
	err   error // every query fails with it (OSV unreachable)
}

func (m memSource) Vulns(_ context.Context, _ vulndata.Ecosystem, name string) ([]vulndata.Vuln, vulndata.Meta, error) {
	if m.err != nil {
		return nil, vulndata.Meta{}, m.err
	}
	if name != m.name {
		return nil, fetched, nil
	}
	return m.vulns, fetched, nil
}

func (m memSource) Versions(_ context.Context, _ vulndata.Ecosystem, name string) ([]vulndata.Published, vulndata.Meta, error) {
	if m.err != nil {
		return nil, vulndata.Meta{}, m.err
	}
	if name != m.name {
		return nil, vulndata.Meta{}, vulndata.ErrNotFound
	}
	return m.pub, fetched, nil
}

// fetched is when memSource's answers were fetched, as the cache reports.
var fetched = vulndata.Meta{FetchedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}

func pypiVuln(id, introduced, fixed string) vulndata.Vuln {
	ev := []vulndata.Event{{Introduced: introduced}}
	if fixed != "" {
		ev = append(ev, vulndata.Event{Fixed: fixed})
	}
	return vulndata.Vuln{ID: id, Affected: []vulndata.Affected{{
		Package: vulndata.Package{Ecosystem: "PyPI", Name: "requests"},
		Ranges:  []vulndata.Range{{Type: "ECOSYSTEM", Events: ev}},
	}}}
}

func published(vs ...string) []vulndata.Published {
	var out []vulndata.Published
	for _, v := range vs {
		out = append(out, vulndata.Published{Version: v})
	}
	return out
}

// noAgent fails the test if the pipeline asks an agent anything: the cve
// type plans and, for a requirements.txt pin, edits without one, and the
// harness-only throwaway type never needs one.
type noAgent struct{ t *testing.T }

func (a noAgent) Run(context.Context, runner.Invocation) (runner.Result, error) {
	a.t.Error("the agent was invoked for a finding the harness plans and edits")
	return runner.Result{}, &runner.Error{Kind: runner.Failed, Detail: "no agent"}
}

// TestCVEFixType: the cve type through the pipeline with no agent — the
// package from the manifest, the lowest safe version across every
// advisory, the built-in bump, the oracle after it — and its three other
// endings.
func TestCVEFixType(t *testing.T) {
	two := memSource{name: "requests",
		vulns: []vulndata.Vuln{pypiVuln("PYSEC-1", "0", "2.0.1"), pypiVuln("PYSEC-2", "2.0.0", "2.0.2")},
		pub:   published("2.0.0", "2.0.1", "2.0.2", "3.0.0")}
	cases := []struct {
		name     string
		pkg      string
		src      memSource
		terminal pipeline.Terminal
		reason   string
	}{
		{"bumped", "requests", two, pipeline.DraftPR, "fixed"},
		{"not-in-manifest", "urllib3", two, pipeline.NotRepro, "package-not-in-manifest"},
		{"no-safe-version", "requests", memSource{name: "requests", vulns: []vulndata.Vuln{pypiVuln("PYSEC-3", "0", "")}, pub: published("2.0.0", "2.0.1")}, pipeline.Escalate, "no-safe-version"},
		{"not-affected", "requests", memSource{name: "requests", vulns: []vulndata.Vuln{pypiVuln("PYSEC-4", "2.1.0", "2.2.0")}, pub: published("2.0.0", "2.2.0")}, pipeline.NotRepro, "green-on-base"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{
				"fixrail.yaml": `runner: {kind: command, command: ["false"]}
suite:  {command: ["true"]}
paths:  {fixable: ["requirements.txt"]}
sandbox: off
`,
				"requirements.txt": "flask==3.0.0\nrequests==2.0.0\n",
			})
			s, outbox := prepared(t, dir)
			v := &findings.Vuln{ID: "cve-" + tc.name, Ecosystem: "PyPI", Package: tc.pkg, Version: "2.0.0", Advisories: []string{"PYSEC-1"}, Manifest: "requirements.txt", Source: "finding"}
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: v.Finding(),
				Types:   []*fixtype.Type{fixtype.NewCVE(tc.src)},
				// The added-packages gate checks the bumped version against
				// the same data, as the CLI binds it.
				Advisories: tc.src,
				Runner:     noAgent{t},
				Forge:      &forge.Local{Dir: outbox},
				TempDir:    t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != tc.terminal || rep.Reason != tc.reason || rep.FixType != "cve" {
				for _, g := range rep.Gates {
					t.Logf("%s %s %s %s", g.Phase, g.Name, g.Verdict, g.Detail)
				}
				t.Fatalf("ended %s %s (%s) as %s, want %s %s", rep.Terminal, rep.Reason, rep.Detail, rep.FixType, tc.terminal, tc.reason)
			}
			if rep.Agent.Invocations != 0 {
				t.Errorf("%d agent invocations, want none", rep.Agent.Invocations)
			}
			if tc.terminal != pipeline.DraftPR {
				return
			}
			// The lowest version clearing both advisories: 2.0.1 clears
			// the alerted PYSEC-1 and is passed over for PYSEC-2.
			got, err := exec.Command("git", "-C", dir, "show", "fixrail/cve-bumped:requirements.txt").Output()
			if err != nil || string(got) != "flask==3.0.0\nrequests==2.0.2\n" {
				t.Errorf("the branch's requirements.txt = %q, %v", got, err)
			}
			body, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"### What was reproduced", "built-in bumper", "`2.0.1`: affected by `PYSEC-2`", "Oracle after the fix: green"} {
				if !strings.Contains(string(body), want) {
					t.Errorf("the PR body lacks %q:\n%s", want, body)
				}
			}
			// The whole body, as reviewers read it: the decision, the
			// oracle's checks, every gate.
			matchGolden(t, filepath.Join("testdata", "body", "draft-pr-cve.md"), normalise(string(body)))
			var order []string
			for _, g := range rep.Gates {
				if strings.HasPrefix(g.Name, "cve-") || g.Name == "harness-edit" {
					order = append(order, g.Phase+" "+g.Name+" "+g.Verdict)
				}
			}
			if strings.Join(order, ", ") != "P3 cve-red pass, P4 harness-edit pass, P4 cve-green pass" {
				t.Errorf("the cve steps ran as %v", order)
			}
		})
	}
}

// bumpAgent is the fix invocation for an edit the harness hands over: it
// sets requests to version (hash-pinned), and checks what it was allowed.
type bumpAgent struct {
	t       *testing.T
	version string
}

const hashPin = " --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000"

func (a bumpAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	if inv.Phase != runner.Fix {
		a.t.Errorf("the agent was asked to %s; the cve type plans itself", inv.Phase)
	}
	if len(inv.Allow) != 1 || inv.Allow[0] != "requirements.txt" || len(inv.BashRules) == 0 {
		a.t.Errorf("fix phase may write %v with Bash %v", inv.Allow, inv.BashRules)
	}
	if !strings.Contains(inv.Prompt, "target: 2.0.2") {
		a.t.Errorf("the fix prompt does not name the decided target:\n%s", inv.Prompt)
	}
	os.WriteFile(filepath.Join(inv.Worktree, "requirements.txt"), []byte("flask==3.0.0\nrequests=="+a.version+hashPin+"\n"), 0o644)
	os.WriteFile(inv.ResultPath, []byte(`{"summary": "bumped", "files_changed": ["requirements.txt"]}`), 0o600)
	return runner.Result{}, nil
}

// TestCVEAgentEdit: a hash-pinned requirement is one the bumper does not
// edit (the hashes must be regenerated), so the agent makes the edit to
// the decided target; the oracle after it still judges the result, and the
// body keeps each account under its author.
func TestCVEAgentEdit(t *testing.T) {
	two := memSource{name: "requests",
		vulns: []vulndata.Vuln{pypiVuln("PYSEC-1", "0", "2.0.1"), pypiVuln("PYSEC-2", "2.0.0", "2.0.2")},
		pub:   published("2.0.0", "2.0.1", "2.0.2", "3.0.0")}
	for _, tc := range []struct {
		version  string
		terminal pipeline.Terminal
		reason   string
	}{
		{"2.0.2", pipeline.DraftPR, "fixed"},
		{"2.0.1", pipeline.Escalate, "added-package-advisory"},   // off the alerted version, onto another advisory: the added version is judged before the oracle
		{"2.0.0  # held", pipeline.Escalate, "oracle-still-red"}, // a changed line, still the alerted version
		{"2.0.0 ", pipeline.Escalate, "oracle-still-red"},        // an inner space before the hash: a changed line, still the alerted version
	} {
		t.Run(strings.ReplaceAll(tc.version, "#", "hash"), func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{
				"fixrail.yaml": `runner: {kind: command, command: ["false"]}
suite:  {command: ["true"]}
paths:  {fixable: ["requirements.txt"]}
sandbox: off
`,
				"requirements.txt": "flask==3.0.0\nrequests==2.0.0" + hashPin + "\n",
			})
			s, outbox := prepared(t, dir)
			v := &findings.Vuln{ID: "cve-agent", Ecosystem: "PyPI", Package: "requests", Version: "2.0.0", Manifest: "requirements.txt", Source: "finding"}
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: v.Finding(),
				Types:   []*fixtype.Type{fixtype.NewCVE(two)},
				// The added-packages gate bound to the same source, as the
				// CLI binds it.
				Advisories: two,
				Runner:     bumpAgent{t, tc.version},
				Forge:      &forge.Local{Dir: outbox},
				TempDir:    t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != tc.terminal || rep.Reason != tc.reason {
				for _, g := range rep.Gates {
					t.Logf("%s %s %s %s", g.Phase, g.Name, g.Verdict, g.Detail)
				}
				t.Fatalf("ended %s %s (%s), want %s %s", rep.Terminal, rep.Reason, rep.Detail, tc.terminal, tc.reason)
			}
			if rep.Agent.Invocations != 1 {
				t.Errorf("%d agent invocations, want the fix only", rep.Agent.Invocations)
			}
			if tc.terminal != pipeline.DraftPR {
				return
			}
			body, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"### Version decision", "The agent made the edit", "Oracle after the fix: green"} {
				if !strings.Contains(string(body), want) {
					t.Errorf("the PR body lacks %q:\n%s", want, body)
				}
			}
			// The harness planned, the agent edited: each account under
			// its author.
			_, words, _ := strings.Cut(string(body), "### The harness's account\n\n```text\nplan: ")
			harnessPart, agentPart, ok := strings.Cut(words, "### The agent's own words (unverified)\n\n```text\nresult: ")
			if !ok || strings.Contains(harnessPart, "result:") || strings.Contains(agentPart, "plan:") {
				t.Errorf("the accounts are not each under their author:\n%s", body)
			}
		})
	}
}

// TestCVENoAdvisoryData: with the advisory services unreachable (or
// offline with nothing cached) nothing can be decided or judged: the run
// HALTs no-advisory-data before any edit, no agent is asked, no branch is
// made.
func TestCVENoAdvisoryData(t *testing.T) {
	for _, down := range []error{vulndata.ErrUnreachable, vulndata.ErrOfflineMiss} {
		t.Run(down.Error(), func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{
				"fixrail.yaml": `runner: {kind: command, command: ["false"]}
suite:  {command: ["true"]}
paths:  {fixable: ["requirements.txt"]}
sandbox: off
`,
				"requirements.txt": "flask==3.0.0\nrequests==2.0.0\n",
			})
			s, outbox := prepared(t, dir)
			v := &findings.Vuln{ID: "cve-nodata", Ecosystem: "PyPI", Package: "requests", Version: "2.0.0", Manifest: "requirements.txt", Source: "finding"}
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: v.Finding(),
				Types:   []*fixtype.Type{fixtype.NewCVE(memSource{err: down})},
				Runner:  noAgent{t},
				Forge:   &forge.Local{Dir: outbox},
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != pipeline.Halt || rep.Reason != "no-advisory-data" || !strings.Contains(rep.Detail, down.Error()) {
				t.Fatalf("ended %s %s (%s), want HALT no-advisory-data naming %q", rep.Terminal, rep.Reason, rep.Detail, down)
			}
			if out, _ := exec.Command("git", "-C", dir, "for-each-ref", "refs/heads/fixrail").Output(); len(out) != 0 {
				t.Errorf("a branch was made: %s", out)
			}
		})
	}
}
