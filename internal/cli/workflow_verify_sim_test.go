package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/fixrail/fixrail/internal/verify"
)

// TestVerifyWorkflowRuns runs the reference workflow to a pushed branch and
// a draft PR, then the verify workflow `fixrail init` writes on that PR as
// a hosted runner would: it passes. Then the branch is changed after the
// run (the reproducing test weakened, pushed) and the same job must fail
// at fixrail verify, naming the difference.
func TestVerifyWorkflowRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixrail from the simulated module proxy")
	}
	proxy, pin := simProxy(t)
	wf := pinWorkflow(conformance.ReferenceWorkflow, pin)
	vwf := pinWorkflow(conformance.VerifyWorkflow, pin)
	if fs := conformance.Lint("fixrail-verify.yml", vwf, conformance.Options{NoIgnores: true}); len(fs) > 0 {
		t.Fatalf("the pinned verify workflow has lint findings: %+v", fs)
	}
	j := newSimJob(t, proxy)
	j.apiURL = strings.TrimSuffix(simGitHub(t, true).URL(), "/")
	j.repository()
	if res := j.run(wf, "issues", simEvent()); res.failedStep != "" {
		t.Fatalf("the fix job failed at %q:\n%s", res.failedStep, res.log)
	}

	// verifyJob runs the verify workflow on PR 43, whose head is head and
	// whose body carries that commit's evidence block, in a fresh
	// workspace.
	verifyJob := func(head string) simResult {
		claim, err := verify.ParseTrailers(j.git(j.remote, "log", "-1", "--format=%B", head))
		if err != nil {
			t.Fatalf("the pushed commit's trailers: %v", err)
		}
		pr, _ := json.Marshal(map[string]any{"number": 43, "draft": true, "body": "## Draft fix for finding gh-42\n" + claim.BodySection(),
			"head": map[string]any{"sha": head, "ref": "fixrail/gh-42"}, "base": map[string]any{"ref": "main"}})
		api := githubtest.New(t)
		api.On("GET", "/repos/o/r/pulls/43").Reply(200, string(pr))
		j.apiURL = strings.TrimSuffix(api.URL(), "/")
		if err := os.RemoveAll(j.workspace); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(j.workspace, 0o755); err != nil {
			t.Fatal(err)
		}
		var ev map[string]any
		json.Unmarshal([]byte(`{"action":"synchronize","number":43,"pull_request":{"number":43,"head":{"ref":"fixrail/gh-42","sha":"`+head+`"},"base":{"ref":"main"}},"repository":{"full_name":"o/r"}}`), &ev)
		return j.run(vwf, "pull_request", ev)
	}

	head := strings.TrimSpace(j.git(j.remote, "rev-parse", "refs/heads/fixrail/gh-42"))
	res := verifyJob(head)
	if res.failedStep != "" {
		t.Fatalf("the verify job failed at %q on fixrail's own draft:\n%s", res.failedStep, res.log)
	}
	for _, want := range []string{"pass     oracle-red", "pass     suite-green", "re-proven: commit " + head} {
		if !strings.Contains(res.log, want) {
			t.Errorf("the verify job's log lacks %q:\n%s", want, res.log)
		}
	}

	// The branch changed after the run: the reproducing test weakened.
	clone := filepath.Join(j.dir, "tamper")
	j.git("", "clone", "-q", "-b", "fixrail/gh-42", j.remote, clone)
	test := filepath.Join(clone, "tests", "test_none.py")
	data, err := os.ReadFile(test)
	if err != nil {
		t.Fatal(err)
	}
	weak := strings.Replace(string(data), `self.assertEqual(shout(None), "!")`, `self.assertTrue(True)`, 1)
	if weak == string(data) {
		t.Fatal("the reproducing test no longer holds the assertion this test weakens")
	}
	writeFile(t, test, weak)
	j.git(clone, "-c", "user.name=x", "-c", "user.email=x@localhost", "commit", "-q", "-a", "--amend", "--no-edit")
	j.git(clone, "push", "-q", "--force", "origin", "fixrail/gh-42")
	amended := strings.TrimSpace(j.git(j.remote, "rev-parse", "refs/heads/fixrail/gh-42"))
	res = verifyJob(amended)
	if res.failedStep != "fixrail verify" {
		t.Fatalf("the verify job on a weakened test failed at %q, want fixrail verify:\n%s", res.failedStep, res.log)
	}
	if !strings.Contains(res.log, "DIFFERS: commit "+amended+": oracle-red: the test passes on the unpatched tree") {
		t.Errorf("the log does not name the difference:\n%s", res.log)
	}
}

// TestVerifyWorkflowRerunsOnWhatItReads: the verify job is a required
// check on the PR's head, and fixrail verify reads the head, the base
// branch and the body. Each change of one must run it again, or a check
// that went green on one base (a branch someone retargeted the PR to)
// or one body stays green after the PR is moved back or edited.
func TestVerifyWorkflowRerunsOnWhatItReads(t *testing.T) {
	wf, errs := actionlint.Parse(conformance.VerifyWorkflow)
	if len(errs) > 0 {
		t.Fatalf("the verify workflow does not parse: %v", errs[0])
	}
	var types []string
	for _, ev := range wf.On {
		if we, ok := ev.(*actionlint.WebhookEvent); ok && we.EventName() == "pull_request" {
			for _, ty := range we.Types {
				types = append(types, ty.Value)
			}
		}
	}
	// synchronize: a push to the head; edited: the base or the body.
	for _, want := range []string{"opened", "reopened", "synchronize", "edited"} {
		if !slices.Contains(types, want) {
			t.Errorf("the verify workflow does not run on pull_request %s (types %v)", want, types)
		}
	}
}
