package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fixrail/fixrail/internal/conformance"
)

// TestSweepMatrixFeedsTheFixJob: what scan --matrix prints is what the
// sweep's fix job reads — each key it names exists in an entry, the
// finding's concurrency group is the one fixrail.yml and fixrail-alerts.yml
// use for it, and the run line the entry's kind and number make parses as
// run's own flags. (A quick check of the seam between the two jobs;
// TestSweepWorkflowRuns runs both in the simulated runner.)
func TestSweepMatrixFeedsTheFixJob(t *testing.T) {
	var out bytes.Buffer
	err := printMatrix(Stdio{Stdout: &out, Stderr: &bytes.Buffer{}}, []*scanResult{
		{Repo: "o/r", Items: []scanItem{
			{Group: groupToFix, Finding: "gh-7", Kind: "issue", Number: 7},
			{Group: groupBranchExists, Finding: "gh-8", Kind: "issue", Number: 8},
			{Group: groupToFix, Finding: "dependabot-3", Kind: "alert", Number: 3},
			{Group: groupPosture, Kind: "repository", Why: "x"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Include []map[string]any `json:"include"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || len(m.Include) != 2 {
		t.Fatalf("matrix %s: %v", out.String(), err)
	}
	var wf struct {
		Jobs map[string]struct {
			Needs       any               `yaml:"needs"`
			Env         map[string]string `yaml:"env"`
			Concurrency struct {
				Group string `yaml:"group"`
			} `yaml:"concurrency"`
			Strategy struct {
				MaxParallel int    `yaml:"max-parallel"`
				Matrix      string `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(conformance.SweepWorkflow, &wf); err != nil {
		t.Fatal(err)
	}
	fix, ok := wf.Jobs["fix"]
	if !ok || fix.Needs != "scan" || !strings.Contains(fix.Strategy.Matrix, "needs.scan.outputs.matrix") || fix.Strategy.MaxParallel < 1 {
		t.Fatalf("the fix job does not fan out over the scan's matrix: %+v", fix)
	}
	if !strings.Contains(wf.Jobs["scan"].Steps[len(wf.Jobs["scan"].Steps)-1].Run, "fixrail scan --repo \"$GITHUB_REPOSITORY\" --matrix") {
		t.Fatal("the scan job does not print the matrix")
	}
	// Every matrix.<key> the workflow reads is in every entry.
	for _, ref := range []string{fix.Env["FINDING_KIND"], fix.Env["FINDING_NUMBER"], fix.Concurrency.Group} {
		_, key, ok := strings.Cut(ref, "matrix.")
		if !ok {
			t.Fatalf("%q reads no matrix value", ref)
		}
		key = strings.TrimSuffix(strings.TrimSpace(key), "}}")
		key = strings.TrimSpace(key)
		for _, e := range m.Include {
			if _, ok := e[key]; !ok {
				t.Errorf("the workflow reads matrix.%s, which %v lacks", key, e)
			}
		}
	}
	// The group is the event workflows' group for the same finding.
	for _, e := range m.Include {
		group := strings.Replace(fix.Concurrency.Group, "${{ matrix.finding }}", e["finding"].(string), 1)
		other := map[string]string{"issue": string(conformance.ReferenceWorkflow), "alert": string(conformance.AlertsWorkflow)}[e["kind"].(string)]
		prefix := strings.TrimSuffix(group, strings.TrimLeft(e["finding"].(string), "abcdefghijklmnopqrstuvwxyz-")) // fixrail-gh- / fixrail-dependabot-
		if !strings.Contains(other, "group: "+prefix+"${{ github.event.") {
			t.Errorf("sweep group %q is not the event workflow's for %v", group, e)
		}
	}
	// The run line an entry makes is run's own: --issue N / --alert N.
	var runLine string
	for _, s := range fix.Steps {
		if strings.HasPrefix(s.Run, "fixrail run ") {
			runLine = s.Run
		}
	}
	if !strings.Contains(runLine, `"--$FINDING_KIND" "$FINDING_NUMBER"`) {
		t.Fatalf("run line %q", runLine)
	}
	for _, e := range m.Include {
		fs, o := runFlags()
		args := []string{"--repo", "o/r", "--" + e["kind"].(string), jsonNumber(e["number"])}
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if o.issue+o.alert != int(e["number"].(float64)) {
			t.Fatalf("%v parsed as issue %d alert %d", args, o.issue, o.alert)
		}
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
