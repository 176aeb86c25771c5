package pipeline_test

// The Go oracle benchmark: a one-line fix on a small Go module (no
// dependencies) taken to DRAFT-PR by the pipeline, its P3 and P4 timed
// (the red oracle; the green oracle and the suite on base + fix and on the
// candidate, each in a fresh checkout, sandboxed, with its own GOCACHE
// seeded from the standard library's cache), beside the same four go test
// commands run raw in two ready trees on one warm GOCACHE. scripts/bench-go-oracle
// alternates the two and prints the medians and their ratio; nothing here
// asserts a timing.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

const goBenchConfig = `runner: {kind: command, command: ["false"]}
test:
  command: ["go", "test", "-count=1", "-run", "{test_name}", "./calc/"]
  path_glob: "**/*_test.go"
  timeout: 20m
suite: {command: ["go", "test", "-count=1", "./..."], timeout: 20m}
paths: {fixable: ["calc/**"]}
sandbox: required
budget:
  wall_clock: 60m
  day: {cost_usd: 1000000, runs: 1000000, turns: 100000000}
  repo_day: {cost_usd: 1000000, runs: 1000000, turns: 100000000}
  actor_day: {cost_usd: 1000000, runs: 1000000, turns: 100000000}
`

var (
	goBenchBuggy = "package calc\n\n// Abs returns the absolute value of x.\nfunc Abs(x int) int {\n\treturn x\n}\n"
	goBenchFixed = "package calc\n\n// Abs returns the absolute value of x.\nfunc Abs(x int) int {\n\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}\n"
	goBenchSuite = "package calc\n\nimport \"testing\"\n\nfunc TestAbsPositive(t *testing.T) {\n\tif Abs(3) != 3 {\n\t\tt.Fatal(\"Abs(3) != 3\")\n\t}\n}\n"
	goBenchTest  = "package calc\n\nimport \"testing\"\n\nfunc TestAbsNegative(t *testing.T) {\n\tif got := Abs(-2); got != 2 {\n\t\tt.Fatalf(\"ABS-NEGATIVE: Abs(-2) = %d\", got)\n\t}\n}\n"
	goBenchFiles = map[string]string{
		"go.mod":            "module example.com/benchcalc\n\ngo 1.26\n",
		"calc/calc.go":      goBenchBuggy,
		"calc/calc_test.go": goBenchSuite,
		"fixrail.yaml":      goBenchConfig,
	}
	goBenchPlan   = []byte(`{"summary": "Abs returns negative input unchanged", "files": ["calc/calc.go"], "test": {"path": "calc/abs_test.go", "name": "TestAbsNegative", "symptom": "ABS-NEGATIVE"}}`)
	goBenchResult = []byte(`{"summary": "negate negative input", "files_changed": ["calc/calc.go"]}`)
	goBenchOracle = []string{"go", "test", "-count=1", "-run", "TestAbsNegative", "./calc/"}
	goBenchSuiteC = []string{"go", "test", "-count=1", "./..."}
)

// goBenchAgent writes the reproducing test, then the one-line fix.
type goBenchAgent struct{}

func (goBenchAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	switch inv.Phase {
	case runner.Investigate:
		if err := writeFile(filepath.Join(inv.Worktree, "calc", "abs_test.go"), []byte(goBenchTest)); err != nil {
			return runner.Result{}, err
		}
		return runner.Result{}, os.WriteFile(inv.PlanPath, goBenchPlan, 0o600)
	case runner.Fix:
		if err := writeFile(filepath.Join(inv.Worktree, "calc", "calc.go"), []byte(goBenchFixed)); err != nil {
			return runner.Result{}, err
		}
		return runner.Result{}, os.WriteFile(inv.ResultPath, goBenchResult, 0o600)
	}
	return runner.Result{}, fmt.Errorf("go bench agent: unknown phase %q", inv.Phase)
}

func requireGoBench(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Fatal("go is not on PATH")
	}
}

// BenchmarkGoOracle is one finding to DRAFT-PR per iteration; it reports
// P3 + P4 (oracle-ms/op) and P3 alone (red-ms/op), and how the standard
// library's cache was had (std-built/op: 1 when this iteration built it).
func BenchmarkGoOracle(b *testing.B) {
	requireGoBench(b)
	repo := gittest.NewRepo(b, goBenchFiles)
	gittest.Git(b, repo, "config", "maintenance.auto", "false")
	gittest.Git(b, repo, "config", "gc.auto", "0")
	tmp, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var oracle, red time.Duration
	built, n := 0, 0
	for b.Loop() {
		n++
		r, o, bu := goOracleOnce(b, repo, tmp, fmt.Sprintf("g%d", n))
		red, oracle = red+r, oracle+o
		if bu {
			built++
		}
	}
	b.ReportMetric(float64(oracle.Milliseconds())/float64(n), "oracle-ms/op")
	b.ReportMetric(float64(red.Milliseconds())/float64(n), "red-ms/op")
	b.ReportMetric(float64(built)/float64(n), "std-built/op")
}

// BenchmarkGoTestWarm is the same four commands per iteration, run raw on
// a warm GOCACHE: the oracle red (base + test) and green (fix + test), the
// suite twice (fix + test). It reports their sum (oracle-ms/op) and the red
// oracle alone (red-ms/op).
func BenchmarkGoTestWarm(b *testing.B) {
	requireGoBench(b)
	root := b.TempDir()
	tree := func(name string, files map[string]string) string {
		dir := filepath.Join(root, name)
		for p, data := range files {
			if err := writeFile(filepath.Join(dir, filepath.FromSlash(p)), []byte(data)); err != nil {
				b.Fatal(err)
			}
		}
		return dir
	}
	redFiles := map[string]string{"calc/abs_test.go": goBenchTest}
	greenFiles := map[string]string{"calc/abs_test.go": goBenchTest, "calc/calc.go": goBenchFixed}
	for p, data := range goBenchFiles {
		if _, ok := greenFiles[p]; !ok {
			greenFiles[p] = data
		}
		redFiles[p] = data
	}
	red, green := tree("red", redFiles), tree("green", greenFiles)
	env := append(os.Environ(), "GOCACHE="+filepath.Join(root, "gocache"), "GOFLAGS=", "GOPROXY=off", "GOTOOLCHAIN=local")
	run := func(dir string, argv []string, pass bool) time.Duration {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if (err == nil) != pass {
			b.Fatalf("%s in %s: %v, want pass=%v:\n%s", strings.Join(argv, " "), dir, err, pass, out)
		}
		return d
	}
	round := func() (sum, r time.Duration) {
		r = run(red, goBenchOracle, false)
		return r + run(green, goBenchOracle, true) + run(green, goBenchSuiteC, true) + run(green, goBenchSuiteC, true), r
	}
	round() // warms the cache: the standard library and both trees' packages
	var sum, reds time.Duration
	n := 0
	for b.Loop() {
		n++
		s, r := round()
		sum, reds = sum+s, reds+r
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(n), "oracle-ms/op")
	b.ReportMetric(float64(reds.Milliseconds())/float64(n), "red-ms/op")
}

// goOracleOnce takes finding id to DRAFT-PR and withdraws it, and returns
// how long P3 took, P3 + P4, and whether the run built the standard
// library's cache.
func goOracleOnce(b *testing.B, repo, tmp, id string) (red, oracle time.Duration, built bool) {
	ctx := context.Background()
	s, err := pipeline.Prepare(ctx, repo, "")
	if err != nil {
		b.Fatal(err)
	}
	rep, err := pipeline.Run(ctx, s, pipeline.Params{
		Finding: &findings.Finding{ID: id, Title: "Abs(-2) returns -2", Body: "calc.Abs of a negative number is negative"},
		Runner:  goBenchAgent{},
		Forge:   localForge(b, s),
		TempDir: tmp,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if rep.Terminal != pipeline.DraftPR {
		b.Fatalf("finding %s: %s %s: %s", id, rep.Terminal, rep.Reason, rep.Detail)
	}
	for _, p := range rep.Phases {
		d, err := time.ParseDuration(p.Duration)
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasPrefix(p.Phase, "P3 ") {
			red += d
		}
		if strings.HasPrefix(p.Phase, "P3 ") || strings.HasPrefix(p.Phase, "P4 ") {
			oracle += d
		}
	}
	if red == 0 || oracle == red {
		b.Fatalf("no P3 or P4 time in the report's phases: %+v", rep.Phases)
	}
	for _, line := range rep.Toolchains {
		built = built || strings.HasPrefix(line, "go build cache:") && strings.Contains(line, "built by this run")
	}
	if err := (&forge.Local{Dir: filepath.Join(repo, pipeline.StateDirName, "outbox")}).Withdraw(ctx, id); err != nil {
		b.Fatal(err)
	}
	return red, oracle, built
}
