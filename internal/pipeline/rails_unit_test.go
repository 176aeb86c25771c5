package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// appAgent plans src/app.py: its test fails until the file says FIXED, and
// its fix appends that word (on the line after the last one).
func appAgent(inv runner.Invocation) (runner.Result, error) {
	switch inv.Phase {
	case runner.Investigate:
		os.WriteFile(filepath.Join(inv.Worktree, "tests", "check.sh"), []byte("grep -q FIXED src/app.py || { echo BROKEN; exit 1; }\n"), 0o644)
		os.WriteFile(inv.PlanPath, []byte(`{"summary": "s", "files": ["src/app.py"], "test": {"path": "tests/check.sh", "name": "check", "symptom": "BROKEN"}}`), 0o600)
	case runner.Fix:
		p := filepath.Join(inv.Worktree, "src", "app.py")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append(b, "FIXED = True\n"...), 0o644)
		os.WriteFile(inv.ResultPath, []byte(`{"summary": "fixed", "files_changed": ["src/app.py"]}`), 0o600)
	}
	return runner.Result{}, nil
}

// appRun runs appAgent on a repository whose src/app.py is app, with the
// extra config lines, and counts the agent's invocations.
func appRun(t *testing.T, app, extraYAML string, expect func(*forgetest.Fake)) (*pipeline.Report, int) {
	t.Helper()
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML + extraYAML, "src/app.py": app, "tests/.keep": ""})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	calls := 0
	rep := runOnce(t, s, "app", func(inv runner.Invocation) (runner.Result, error) {
		calls++
		return appAgent(inv)
	}, expect)
	return rep, calls
}

func untilP3(f *forgetest.Fake) {
	f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted)
}

func pastP3(f *forgetest.Fake) { untilP3(f); f.ExpectFixFiles(forgetest.NoFixes) }

// TestStageAReadsPlannedImports: Stage A checks the import lines a planned
// file holds in the red tree, before the fix phase runs. A fixable file
// that imports an auth module touches auth: the whole fix escalates in P3
// and no fix is asked for. The same file without the import goes through.
func TestStageAReadsPlannedImports(t *testing.T) {
	const body = "def handler(req):\n    return req\n"
	rep, calls := appRun(t, "from app.auth import session\n\n"+body, "", untilP3)
	if rep.Terminal != pipeline.Escalate || rep.Reason != "sensitive-path" {
		t.Fatalf("ended %s %s (%s), want ESCALATE sensitive-path", rep.Terminal, rep.Reason, rep.Detail)
	}
	if !strings.Contains(rep.Detail, "src/app.py imports") || !strings.Contains(rep.Detail, "import:auth") {
		t.Errorf("detail %q does not name the import", rep.Detail)
	}
	if !hasGate(rep, "P3", "stage-a", "fail") {
		t.Errorf("stage-a did not fail in P3: %+v", rep.Gates)
	}
	if calls != 1 {
		t.Errorf("%d agent invocation(s): the fix phase must not run", calls)
	}

	rep, calls = appRun(t, "import json\n\n"+body, "", func(f *forgetest.Fake) {
		pastP3(f)
		f.ExpectPublish(forgetest.Published(1)).ExpectWaitChecks(forgetest.NoCI)
	})
	if rep.Terminal != pipeline.DraftPR || calls != 2 {
		t.Fatalf("without the import: ended %s %s (%s) after %d call(s), want DRAFT-PR after 2", rep.Terminal, rep.Reason, rep.Detail, calls)
	}
}

// TestPatchLeakScanReadsContextLines: the shipped patch is the whole
// patch. A listed customer identifier on an unchanged line next to the fix
// is only a context line of it, and still escalates the run (leak) before
// anything is published.
func TestPatchLeakScanReadsContextLines(t *testing.T) {
	ids := filepath.Join(t.TempDir(), "customers.txt")
	if err := os.WriteFile(ids, []byte("CUST-4411-OTTER\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, _ := appRun(t, "def f():\n    pass\n# seen first for CUST-4411-OTTER\n", "redact: {customer_ids_file: "+ids+"}\n", pastP3)
	if rep.Terminal != pipeline.Escalate || rep.Reason != "leak" {
		t.Fatalf("ended %s %s (%s), want ESCALATE leak", rep.Terminal, rep.Reason, rep.Detail)
	}
	if !hasGate(rep, "P4", "leak-scan", "fail") {
		t.Errorf("the P4 leak-scan did not fail: %+v", rep.Gates)
	}
	if strings.Contains(rep.Detail, "CUST-4411-OTTER") {
		t.Errorf("the detail repeats the identifier: %q", rep.Detail)
	}
}

func hasGate(rep *pipeline.Report, phase, name, verdict string) bool {
	for _, g := range rep.Gates {
		if g.Phase == phase && g.Name == name && g.Verdict == verdict {
			return true
		}
	}
	return false
}
