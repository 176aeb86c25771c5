package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/fixrail/fixrail/internal/ledger/pgtest"
)

// TestSweepWorkflowRuns runs the sweep workflow `fixrail init --sweep`
// writes, pinned to this source tree, as Actions would: the scan job's
// steps for real (fixrail scan --matrix against the strict GitHub fake),
// its $GITHUB_OUTPUT through steps.scan.outputs.matrix to the job's
// outputs, the fix job's if: and strategy.matrix evaluated from
// needs.scan.outputs.matrix with fromJSON, and the fix job run once per
// matrix entry — each on a fresh runner, matrix.* substituted by the
// evaluator — each a `fixrail run --issue N` on the Postgres ledger the
// committed fixrail.yaml names, to a draft PR. The entries run one after
// another (max-parallel bounds them; the caps are the ledger's).
func TestSweepWorkflowRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixrail from the simulated module proxy")
	}
	proxy, pin := simProxy(t)
	wf := pinWorkflow(conformance.SweepWorkflow, pin)
	if fs := conformance.Lint("fixrail-sweep.yml", wf, conformance.Options{NoIgnores: true}); len(fs) > 0 {
		t.Fatalf("the pinned sweep workflow has lint findings: %+v", fs)
	}
	doc := parseSimWorkflow(t, wf)
	checkSweepKeys(t, doc)

	issues := []simIssue{
		{Number: 42, PR: 43, Title: "shout crashes on None", Body: "shout(None) raises AttributeError: 'NoneType' object has no attribute 'upper'"},
		{Number: 44, PR: 45, Title: "whisper crashes on None", Body: "whisper(None) raises AttributeError: 'NoneType' object has no attribute 'lower'"},
	}
	api := githubtest.New(t)
	simSweepScan(api, issues)
	for _, is := range issues {
		is.NoEvent = true
		simIssueRun(api, true, is)
	}
	apiURL := strings.TrimSuffix(api.URL(), "/")

	dsn := pgtest.URL(t)
	t.Cleanup(pgtest.Stop)
	repo := newSimJob(t, proxy)
	repo.apiURL = apiURL
	repo.extraConfig = "ledger: {url: \"" + dsn + "\"}\n"
	repo.extraFiles = map[string]string{
		"src/app/quiet.py":    "def whisper(text):\n    return text.lower() + \"...\"\n",
		"tests/test_quiet.py": "import os\nimport sys\nimport unittest\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), \"..\", \"src\"))\n\nfrom app.quiet import whisper  # noqa: E402\n\n\nclass WhisperTest(unittest.TestCase):\n    def test_hi(self):\n        self.assertEqual(whisper(\"HI\"), \"hi...\")\n",
	}
	repo.repository()
	// Issue 44's agent: its own directory, chosen by its title.
	writeFile(t, filepath.Join(repo.dir, "agent/route"), "whisper crashes on None\tagent/w44\n")
	writeFile(t, filepath.Join(repo.dir, "agent/w44/investigate/files/tests/test_whisper_none.py"), "import os\nimport sys\nimport unittest\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), \"..\", \"src\"))\n\nfrom app.quiet import whisper  # noqa: E402\n\n\nclass WhisperNoneTest(unittest.TestCase):\n    def test_none(self):\n        self.assertEqual(whisper(None), \"...\")\n")
	writeFile(t, filepath.Join(repo.dir, "agent/w44/investigate/plan.json"), `{"summary": "whisper calls .lower() on None", "files": ["src/app/quiet.py"], "test": {"path": "tests/test_whisper_none.py", "name": "test_none", "symptom": "'NoneType' object has no attribute 'lower'"}}`)
	writeFile(t, filepath.Join(repo.dir, "agent/w44/fix/edit"), "src/app/quiet.py\treturn text.lower() + \"...\"\treturn (text or \"\").lower() + \"...\"\n")
	writeFile(t, filepath.Join(repo.dir, "agent/w44/fix/result.json"), `{"summary": "treat None as empty", "files_changed": ["src/app/quiet.py"]}`)

	// A job is a fresh machine: its own workspace, home and tools, the
	// same repository, API and proxy.
	runner := func() *simJob {
		j := newSimJob(t, proxy)
		j.serverURL, j.remote, j.gitlog, j.apiURL = repo.serverURL, repo.remote, repo.gitlog, apiURL
		return j
	}
	event := map[string]any{"schedule": "17 3 * * 1-5", "workflow": ".github/workflows/fixrail-sweep.yml",
		"repository": map[string]any{"full_name": "o/r", "default_branch": "main"}, "sender": map[string]any{"login": "maint"}}

	// Job 1: scan.
	scan := runner()
	ctx := scan.contexts("schedule", event)
	start := time.Now()
	res := scan.runJob(doc.Jobs["scan"], "schedule", event, ctx)
	if res.failedStep != "" {
		t.Fatalf("scan job: step %q failed:\n%s", res.failedStep, res.log)
	}
	matrixOut, ok := res.outputs["matrix"]
	if !ok {
		t.Fatalf("the scan job has no output matrix: %v", res.outputs)
	}
	t.Logf("scan job took %v; matrix %s", time.Since(start).Round(time.Second), matrixOut)

	// Job 2: fix, once per entry of the matrix the scan's output makes.
	fix := doc.Jobs["fix"]
	ctx["needs"] = map[string]any{"scan": map[string]any{"outputs": map[string]any{"matrix": matrixOut}, "result": "success"}}
	if run, err := simCondition(fix.If, ctx); err != nil || !run {
		t.Fatalf("fix job: if %q = %v, %v with matrix %s", fix.If, run, err, matrixOut)
	}
	mx, ok := fix.Strategy.Matrix.(string)
	if !ok {
		t.Fatalf("fix job: strategy.matrix is %T, want the scan's output", fix.Strategy.Matrix)
	}
	mv, err := simValue(mx, ctx)
	if err != nil {
		t.Fatalf("fix job: strategy.matrix: %v", err)
	}
	entries := simMatrixEntries(t, mv)
	var got []string
	groups := map[string]bool{}
	for i, e := range entries {
		ectx := make(simCtx, len(ctx)+1)
		for k, v := range ctx {
			ectx[k] = v
		}
		ectx["matrix"] = e
		group := scan.eval(fix.Concurrency.Group, ectx)
		if groups[group] {
			t.Errorf("two entries share the concurrency group %q", group)
		}
		groups[group] = true
		// The entry's group is the event workflow's for the same finding.
		if e["kind"] == "issue" {
			ref := parseSimWorkflow(t, conformance.ReferenceWorkflow)
			evCtx := scan.contexts("issues", map[string]any{"issue": map[string]any{"number": e["number"]}})
			if want := scan.eval(ref.Concurrency.Group, evCtx); group != want {
				t.Errorf("entry %v: group %q, fixrail.yml's for the issue is %q", e, group, want)
			}
		}
		j := runner()
		start := time.Now()
		r := j.runJob(fix, "schedule", event, ectx)
		t.Logf("fix job %v (group %s) took %v", e, group, time.Since(start).Round(time.Second))
		if r.failedStep != "" {
			t.Fatalf("fix job %v: step %q failed:\n%s", e, r.failedStep, r.log)
		}
		if !strings.Contains(r.log, "DRAFT-PR") {
			t.Errorf("fix job %v did not end DRAFT-PR:\n%s", e, r.log)
		}
		got = append(got, fmt.Sprint(e["finding"]))
		if i == len(entries)-1 {
			checkSweepLedger(t, j, len(entries))
		}
	}
	if want := []string{"gh-42", "gh-44"}; !slices.Equal(got, want) {
		t.Errorf("the fix job ran for %v, want %v", got, want)
	}
	refs := repo.git(repo.remote, "for-each-ref", "--format=%(refname)", "refs/heads/fixrail")
	for _, want := range []string{"refs/heads/fixrail/gh-42\n", "refs/heads/fixrail/gh-44\n"} {
		if !strings.Contains(refs, want) {
			t.Errorf("%s was not pushed; the remote has:\n%s", strings.TrimSpace(want), refs)
		}
	}
}

// checkSweepKeys: the keys that keep a sweep in bounds are present and
// well-formed — one sweep at a time, a bounded fan-out that does not
// cancel siblings, a per-finding group that never cancels a run.
func checkSweepKeys(t *testing.T, doc simWorkflow) {
	t.Helper()
	if c := doc.Concurrency; c.Group == "" || strings.Contains(c.Group, "${{") || c.CancelInProgress == nil || *c.CancelInProgress {
		t.Errorf("workflow concurrency %+v: want a fixed group, cancel-in-progress: false", c)
	}
	scan, fix := doc.Jobs["scan"], doc.Jobs["fix"]
	if len(doc.Jobs) != 2 || scan.Steps == nil || fix.Steps == nil || fix.Needs != "scan" {
		t.Fatalf("jobs %v: want scan, and fix needing scan", slices.Sorted(func(yield func(string) bool) {
			for k := range doc.Jobs {
				if !yield(k) {
					return
				}
			}
		}))
	}
	if _, ok := scan.Outputs["matrix"]; !ok {
		t.Error("the scan job declares no output matrix")
	}
	if s := fix.Strategy; s.MaxParallel < 1 || s.MaxParallel > 20 || s.FailFast == nil || *s.FailFast {
		t.Errorf("fix strategy: max-parallel %d, fail-fast %v: want 1..20 and false", s.MaxParallel, s.FailFast)
	}
	if c := fix.Concurrency; !strings.Contains(c.Group, "${{ matrix.finding }}") || c.CancelInProgress == nil || *c.CancelInProgress {
		t.Errorf("fix concurrency %+v: want a group per matrix.finding, cancel-in-progress: false", c)
	}
}

// simMatrixEntries expands an evaluated strategy.matrix: the sweep's is
// an include list of {repo, finding, kind, number}; any other shape
// (axes to combine) is not simulated.
func simMatrixEntries(t *testing.T, v any) []map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		t.Fatalf("matrix %v: want {\"include\": [...]}", v)
	}
	inc, ok := m["include"].([]any)
	if !ok || len(inc) == 0 {
		t.Fatalf("matrix %v: want a non-empty include list", v)
	}
	var out []map[string]any
	for _, e := range inc {
		em, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("matrix entry %v is not an object", e)
		}
		for _, k := range []string{"repo", "finding", "kind", "number"} {
			if _, ok := em[k]; !ok {
				t.Fatalf("matrix entry %v lacks %s", em, k)
			}
		}
		out = append(out, em)
	}
	return out
}

// simSweepScan expects what `fixrail scan --repo o/r --matrix` asks of the
// API: the repository's facts, its labelled issues (these) and its
// alerts (none). Writes are forbidden by the fake.
func simSweepScan(api *githubtest.Server, issues []simIssue) {
	var list []map[string]any
	for _, is := range issues {
		list = append(list, map[string]any{"number": is.Number, "title": is.Title, "state": "open",
			"html_url": fmt.Sprintf("https://github.com/o/r/issues/%d", is.Number), "labels": []any{map[string]any{"name": "fixrail"}}})
	}
	data, _ := json.Marshal(list)
	// The default branch: the scan job's token reads, never pushes.
	api.On("GET", "/repos/o/r").Reply(200, githubtest.Repository("o", "r", true, false, false))
	api.On("GET", "/repos/o/r/branches/main").Reply(200, `{"commit":{"sha":"1111111111111111111111111111111111111111"},"name":"main","protected":true}`)
	api.On("GET", "/repos/o/r/rules/branches/main").Reply(200, `[{"parameters":{"required_approving_review_count":1},"ruleset_id":42,"ruleset_source":"o/r","ruleset_source_type":"Repository","type":"pull_request"}]`)
	api.On("GET", "/repos/o/r/git/matching-refs/heads/fixrail/").Reply(200, `[]`)
	api.On("GET", "/repos/o/r/pulls").Query("state", "open").Reply(200, `[]`)
	api.On("GET", "/repos/o/r/issues").Query("labels", "fixrail").Query("state", "open").Reply(200, string(data))
	api.On("GET", "/repos/o/r/dependabot/alerts").Reply(200, `[]`)
	api.On("GET", "/repos/o/r/code-scanning/alerts").Query("state", "open").Reply(200, `[]`)
	api.On("GET", "/repos/o/r/secret-scanning/alerts").Query("state", "open").Reply(200, `[]`)
}

// checkSweepLedger: every entry was admitted and settled by the one
// Postgres ledger (read with the fixrail the last job installed, from its
// clone's fixrail.yaml).
func checkSweepLedger(t *testing.T, j *simJob, runs int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(j.temp, "bin", "fixrail"), "budget", "--repo", j.workspace, "--json")
	cmd.Env = append(os.Environ(), "HOME="+j.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fixrail budget: %v\n%s", err, out)
	}
	var b struct {
		Store  string `json:"store"`
		Scopes []struct {
			Scope    string  `json:"scope"`
			Runs     int     `json:"runs"`
			Reserved float64 `json:"reserved_cost_usd"`
		} `json:"scopes"`
		InFlight []any `json:"in_flight"`
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("fixrail budget --json: %v\n%s", err, out)
	}
	found := false
	for _, s := range b.Scopes {
		if s.Scope == "global" {
			found = true
			if s.Runs != runs || s.Reserved != 0 {
				t.Errorf("the ledger's global scope: %d runs, %v reserved; want %d settled runs:\n%s", s.Runs, s.Reserved, runs, out)
			}
		}
	}
	if !found || len(b.InFlight) != 0 || !strings.HasPrefix(b.Store, "postgres") {
		t.Errorf("the ledger: not Postgres, no global scope, or runs still in flight:\n%s", out)
	}
}
