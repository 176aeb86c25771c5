package pipeline_test

// The harness-overhead benchmark: one finding taken end to end to DRAFT-PR
// by pipeline.Prepare + pipeline.Run, beside the same git calls run raw.
// The agent is an in-process fake that writes its files with os.WriteFile,
// and the test and suite commands are a shell builtin and `true`, so what is
// left is the harness's own cost. scripts/bench-overhead prints the ratio of
// the medians; nothing here asserts a timing.
//
// The git calls one finding costs, read from internal/gitx and the pipeline
// (rawFinding makes the same calls in the same order, with the same
// arguments, minus gitx's -c prefix and environment; TestBenchFixtureReachesDraftPR
// records both sides through a git shim and checks that they match). A
// drift check lists the clone's config from the main work tree and from the
// run's worktree, in path order (the fixture's worktree sorts after it):
//
//	Prepare      1 version                                           Snapshot: git >= 2.32
//	             2 config --list --includes --show-scope --show-origin -z
//	               (from a new empty directory)                      Snapshot: the operator's config
//	             3 config --file <snap> --no-includes --list -z      Snapshot: read back
//	             4 rev-parse --is-inside-work-tree --show-toplevel   Open
//	             5 config --list --includes --show-scope -z          Baseline: the clone's config
//	             6 remote get-url --push origin                      Baseline (exit 2: no origin)
//	             7 symbolic-ref --quiet --short HEAD                 base "" = current branch
//	             8 rev-parse --verify refs/heads/main^{commit}       the base's SHA
//	             9 rev-parse --verify <sha>^{commit}                 ShowFile: resolve the rev
//	            10 rev-parse --verify --quiet <sha>:fixrail.yaml     ShowFile: blob id
//	            11 cat-file -t <oid>                                 ShowFile: is a blob
//	            12 cat-file blob <oid>                               ShowFile: the bytes
//	P1 intake   13 worktree list --porcelain -z                      sweep
//	            14 check-ref-format --branch fixrail/<id>            BranchExists
//	            15 show-ref --verify --quiet refs/heads/fixrail/<id> BranchExists (exit 1: absent)
//	P2          16 rev-parse --verify <sha>^{commit}                 AddWorktree
//	            17 worktree add --quiet --detach <wt> <sha>          AddWorktree
//	            18 config --list ... (in <wt>)                       AddWorktree: the worktree's baseline
//	               (agent #1 writes the test and PLAN.json)
//	         19-20 config --list ... (main, <wt>)                    drift check after the agent
//	            21 status --porcelain=v1 -z -uall --ignored          read-only check
//	P3             (the oracle, red)
//	         22-23 config --list ... (main, <wt>)                    drift check after the test
//	            24 status ...                                        snapshotArtifacts
//	P4             (agent #2 writes the fix and result.json)
//	         25-26 config --list ... (main, <wt>)                    drift check after the agent
//	            27 status ...                                        fixChanges
//	            28 ls-files -z --others --exclude-standard -- paths  Diff
//	            29 add --intent-to-add --pathspec-from-file=-        Diff: untracked made visible
//	            30 update-index -q --refresh                         Diff
//	            31 diff-index --patch --binary HEAD -- paths         Diff: the patch
//	            32 diff-index --numstat -z HEAD -- paths             Diff: the line count
//	            33 reset --quiet --pathspec-from-file=-              Diff: index restored
//	               (the oracle, green)
//	         34-35 config --list ... (main, <wt>)                    drift check after the test
//	               (the suite, green)
//	         36-37 config --list ... (main, <wt>)                    drift check after the suite
//	            38 reset --quiet                                     Commit
//	            39 add --all -- paths                                Commit
//	            40 diff-index --cached --name-only -z HEAD --        Commit: staged == declared
//	            41 commit --no-verify --quiet --cleanup=whitespace -F -
//	            42 rev-parse --verify HEAD^{commit}                  Commit: the new SHA
//	P5          43 check-ref-format --branch fixrail/<id>            UpdateBranch
//	            44 update-ref --no-deref -m ... <ref> <new> <zero>   UpdateBranch (compare-and-swap)
//	cleanup     45 worktree list --porcelain -z                      RemoveWorktree: registered?
//	            46 worktree remove --force --force <wt>              RemoveWorktree
//	            47 worktree prune                                    RemoveWorktree
//
// Diff, Commit, AddWorktree, UpdateBranch, RemoveWorktree and Prune check
// for drift first only when repository code ran since the last check; here
// every such run is followed by its own check, so none of them lists again.
//
// What the raw side leaves out is everything that is not git: the lock, the
// event log and run report, the marker, hashing, the gates, the prompts, the
// outbox, and gitx's rails (the -c prefix, the allowlisted environment, the
// snapshot in GIT_CONFIG_GLOBAL: the raw side's repository calls read no
// global config at all). It does write its own snapshot, so that the
// read-back reads the same file, and compares each listing byte for byte
// with its baseline, as an operator checking by hand would.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// gitCallsPerFinding is the length of the list above: what one finding
// costs in git processes, Prepare included.
const gitCallsPerFinding = 47

const (
	benchTestPath = "tests/repro.sh"
	benchFixPath  = "src/fixed"
	benchSymptom  = "SYMPTOM"
)

// The oracle is red until the fix writes src/fixed, and costs one process:
// `test` is a shell builtin.
var (
	benchTestArgv  = []string{"sh", "-c", "test -f " + benchFixPath + " || { echo " + benchSymptom + "; exit 1; }", "repro", benchTestPath}
	benchSuiteArgv = []string{"true"}
)

const benchConfig = `runner: {kind: command, command: ["false"]}
test:
  command: ["sh", "-c", "test -f src/fixed || { echo SYMPTOM; exit 1; }", "repro", "{test_path}"]
  path_glob: "tests/**"
suite: {command: ["true"]}
paths: {fixable: ["src/**"]}
`

var (
	benchPlan = []byte(`{"summary": "bench", "files": ["` + benchFixPath + `"],
 "test": {"path": "` + benchTestPath + `", "name": "", "symptom": "` + benchSymptom + `"}}`)
	benchResult = []byte(`{"summary": "bench", "files_changed": ["` + benchFixPath + `"]}`)
)

// agentInvestigate is agent #1: the reproducing test and PLAN.json.
func agentInvestigate(wt, planPath string) error {
	if err := writeFile(filepath.Join(wt, filepath.FromSlash(benchTestPath)), []byte("# reproduces the bench finding\n")); err != nil {
		return err
	}
	return os.WriteFile(planPath, benchPlan, 0o600)
}

// agentFix is agent #2: the fix and result.json.
func agentFix(wt, resultPath string) error {
	if err := writeFile(filepath.Join(wt, filepath.FromSlash(benchFixPath)), []byte("fixed\n")); err != nil {
		return err
	}
	return os.WriteFile(resultPath, benchResult, 0o600)
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// benchAgent is the in-process fake Runner: no process, no model.
type benchAgent struct{}

func (benchAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	switch inv.Phase {
	case runner.Investigate:
		return runner.Result{}, agentInvestigate(inv.Worktree, inv.PlanPath)
	case runner.Fix:
		return runner.Result{}, agentFix(inv.Worktree, inv.ResultPath)
	}
	return runner.Result{}, fmt.Errorf("bench agent: unknown phase %q", inv.Phase)
}

// benchFixture is a small repository with the bench fixrail.yaml on main.
type benchFixture struct {
	repo string // the main work tree
	tmp  string // where the runs' disposable directories go
}

func newBenchFixture(tb testing.TB) *benchFixture {
	tb.Helper()
	repo := gittest.NewRepo(tb, map[string]string{
		"fixrail.yaml": benchConfig,
		"src/lib.txt":  "library\n",
	})
	// Both sides skip the auto-maintenance child a commit would otherwise
	// start: gitx forces this off, and the raw side should not pay for work
	// the harness does not do.
	gittest.Git(tb, repo, "config", "maintenance.auto", "false")
	gittest.Git(tb, repo, "config", "gc.auto", "0")
	tmp, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return &benchFixture{repo: repo, tmp: tmp}
}

// runPipeline takes finding id to a terminal state, as `fixrail run` does,
// Setup.Close included, and fails unless it is DRAFT-PR.
func (fx *benchFixture) runPipeline(tb testing.TB, ctx context.Context, id string) *pipeline.Report {
	s, err := pipeline.Prepare(ctx, fx.repo, "")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	}()
	rep, err := pipeline.Run(ctx, s, pipeline.Params{
		Finding: &findings.Finding{ID: id, Title: "bench finding " + id, Body: "the bench symptom"},
		Runner:  benchAgent{},
		TempDir: fx.tmp,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if rep.Terminal != pipeline.DraftPR {
		tb.Fatalf("finding %s: %s %s: %s", id, rep.Terminal, rep.Reason, rep.Detail)
	}
	return rep
}

// rawGit runs plain git: no -c prefix, the test's own environment minus
// GIT_* variables, and no system or global config (as gittest does), so a
// developer's ~/.gitconfig cannot sign or hook the raw side's commits. The
// one exception is the snapshot's listing, which reads the operator's own
// config as their git would (opEnv), as gitx's does.
type rawGit struct {
	tb    testing.TB
	env   []string
	opEnv []string
	calls int
}

func newRawGit(tb testing.TB) *rawGit {
	var base, op []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			base = append(base, kv)
		}
	}
	op = append(op, base...)
	for _, name := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"} {
		if v, ok := os.LookupEnv(name); ok {
			op = append(op, name+"="+v)
		}
	}
	env := append(base, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
	op = append(op, "GIT_TERMINAL_PROMPT=0")
	return &rawGit{tb: tb, env: env, opEnv: op}
}

// exec runs git args in dir with stdin and extra env, requires exit code
// want, and returns stdout.
func (g *rawGit) exec(dir string, stdin []byte, env []string, want int, args ...string) []byte {
	g.tb.Helper()
	return g.run(g.env, dir, stdin, env, want, args...)
}

// run is exec on the base environment base.
func (g *rawGit) run(base []string, dir string, stdin []byte, env []string, want int, args ...string) []byte {
	g.tb.Helper()
	g.calls++
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(base[:len(base):len(base)], env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		g.tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	if code != want {
		g.tb.Fatalf("git %s: exit %d, want %d: %s", strings.Join(args, " "), code, want, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes()
}

// git runs git args in dir and returns stdout without trailing newlines.
func (g *rawGit) git(dir string, args ...string) string {
	g.tb.Helper()
	return strings.TrimRight(string(g.exec(dir, nil, nil, 0, args...)), "\n")
}

// rawSnapshot is the snapshot by hand: `git version`, the operator's
// effective config listed from a new empty directory that git cannot find a
// repository above, its system and global entries (include keys dropped)
// written to a read-only file, and that file read back and compared. It
// returns the snapshot's directory, which the caller removes, as
// Setup.Close does.
func rawSnapshot(tb testing.TB, g *rawGit) string {
	tb.Helper()
	g.git(string(filepath.Separator), "version")
	dir, err := os.MkdirTemp("", "fixrail-raw-gitconfig-")
	if err != nil {
		tb.Fatal(err)
	}
	listing := g.run(g.opEnv, dir, nil, []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}, 0,
		"config", "--list", "--includes", "--show-scope", "--show-origin", "-z")
	data, want := encodeSnapshot(tb, listing)
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, data, 0o400); err != nil {
		tb.Fatal(err)
	}
	if got := g.exec(dir, nil, nil, 0, "config", "--file", path, "--no-includes", "--list", "-z"); !bytes.Equal(got, want) {
		tb.Fatalf("raw snapshot reads back as %q, want %q", got, want)
	}
	return dir
}

// encodeSnapshot turns a `config --list --show-scope --show-origin -z`
// listing into a config file holding its system and global entries, in
// order, include.path and includeIf keys dropped, each value quoted. It
// also returns what `config --list -z` must print for that file.
func encodeSnapshot(tb testing.TB, listing []byte) (file, list []byte) {
	tb.Helper()
	fields := bytes.Split(listing, []byte{0})
	if len(fields)%3 != 1 || len(fields[len(fields)-1]) != 0 {
		tb.Fatalf("config listing: %d NUL-separated fields", len(fields))
	}
	var f, l bytes.Buffer
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
	for i := 0; i+3 <= len(fields); i += 3 {
		scope, kv := string(fields[i]), string(fields[i+2])
		key, value, hasValue := strings.Cut(kv, "\n")
		if scope != "system" && scope != "global" || key == "include.path" || strings.HasPrefix(key, "includeif.") {
			continue
		}
		first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if first <= 0 || last == len(key)-1 {
			tb.Fatalf("config listing: key %q", key)
		}
		f.WriteString("[" + key[:first])
		if first != last {
			f.WriteString(` "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key[first+1:last]) + `"`)
		}
		f.WriteString("]\n\t" + key[last+1:])
		if hasValue {
			f.WriteString(` = "` + quote.Replace(value) + `"`)
		}
		f.WriteString("\n")
		l.WriteString(kv)
		l.WriteByte(0)
	}
	return f.Bytes(), l.Bytes()
}

// configList lists the clone's config from dir, local and worktree scope
// only (the raw side reads no system or global config), includes followed.
func (g *rawGit) configList(dir string) []byte {
	g.tb.Helper()
	return g.exec(dir, nil, nil, 0, "config", "--list", "--includes", "--show-scope", "-z")
}

// checkDrift lists the config again from each directory of base, in path
// order as gitx does, and requires each listing to equal its baseline.
func (g *rawGit) checkDrift(base map[string][]byte) {
	g.tb.Helper()
	for _, dir := range slices.Sorted(maps.Keys(base)) {
		if got := g.configList(dir); !bytes.Equal(got, base[dir]) {
			g.tb.Fatalf("git config in %s drifted:\n%q\nwant\n%q", dir, got, base[dir])
		}
	}
}

// rawCommand runs a test or suite command in dir and reports whether it
// passed.
func rawCommand(tb testing.TB, dir string, argv []string) (bool, string) {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		tb.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return err == nil, string(out)
}

// rawFinding makes, for finding id, the git calls listed at the top of this
// file, with the same fake agent writes and the same test and suite runs,
// and none of fixrail's logic.
func rawFinding(tb testing.TB, fx *benchFixture, g *rawGit, id string) {
	tb.Helper()
	branch := "fixrail/" + id
	ref := "refs/heads/" + branch

	// Prepare: the snapshot (removed at the end, as Setup.Close does), the
	// repository, the baseline of its config and push URL (there is no
	// origin: exit 2), the base and fixrail.yaml.
	snap := rawSnapshot(tb, g)
	defer os.RemoveAll(snap)
	_, top, _ := strings.Cut(g.git(fx.repo, "rev-parse", "--is-inside-work-tree", "--show-toplevel"), "\n")
	baseline := map[string][]byte{top: g.configList(top)}
	g.exec(top, nil, nil, 2, "remote", "get-url", "--push", "origin")
	base := g.git(top, "symbolic-ref", "--quiet", "--short", "HEAD")
	sha := g.git(top, "rev-parse", "--verify", "--end-of-options", "refs/heads/"+base+"^{commit}")
	commit := g.git(top, "rev-parse", "--verify", "--end-of-options", sha+"^{commit}")
	oid := g.git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+":fixrail.yaml")
	g.git(top, "cat-file", "-t", oid)
	g.git(top, "cat-file", "blob", oid)

	// P1: the sweep's listing, then the in-flight check.
	g.git(top, "worktree", "list", "--porcelain", "-z")
	g.git(top, "check-ref-format", "--branch", branch)
	g.exec(top, nil, nil, 1, "show-ref", "--verify", "--quiet", "--", ref)

	// P2.
	dir, err := os.MkdirTemp(fx.tmp, "raw-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "wt")
	g.git(top, "rev-parse", "--verify", "--end-of-options", sha+"^{commit}")
	g.git(top, "worktree", "add", "--quiet", "--detach", "--", wt, sha)
	baseline[wt] = g.configList(wt)
	planPath, resultPath := filepath.Join(dir, "PLAN.json"), filepath.Join(dir, "result.json")
	if err := agentInvestigate(wt, planPath); err != nil {
		tb.Fatal(err)
	}
	g.checkDrift(baseline)
	status := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignored=matching"}
	g.git(wt, status...)

	// P3.
	if ok, out := rawCommand(tb, wt, benchTestArgv); ok || !strings.Contains(out, benchSymptom) {
		tb.Fatalf("raw oracle on the base: passed=%v, output %q", ok, out)
	}
	g.checkDrift(baseline)
	g.git(wt, status...)

	// P4: the diff, the gates' two commands, the commit.
	if err := agentFix(wt, resultPath); err != nil {
		tb.Fatal(err)
	}
	g.checkDrift(baseline)
	g.git(wt, status...)
	paths := []string{benchFixPath, benchTestPath} // sorted, as status lists them
	untracked := g.exec(wt, nil, nil, 0, append([]string{"ls-files", "-z", "--others", "--exclude-standard", "--"}, paths...)...)
	g.exec(wt, untracked, nil, 0, "add", "--intent-to-add", "--pathspec-from-file=-", "--pathspec-file-nul")
	g.git(wt, "update-index", "-q", "--refresh")
	diff := []string{"diff-index", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color"}
	g.git(wt, append(append(diff[:len(diff):len(diff)], "--patch", "--binary", "HEAD", "--"), paths...)...)
	g.git(wt, append(append(diff[:len(diff):len(diff)], "--numstat", "-z", "HEAD", "--"), paths...)...)
	g.exec(wt, untracked, nil, 0, "reset", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul")
	if ok, out := rawCommand(tb, wt, benchTestArgv); !ok {
		tb.Fatalf("raw oracle after the fix: %q", out)
	}
	g.checkDrift(baseline)
	if ok, out := rawCommand(tb, wt, benchSuiteArgv); !ok {
		tb.Fatalf("raw suite: %q", out)
	}
	g.checkDrift(baseline)
	g.git(wt, "reset", "--quiet")
	g.git(wt, append([]string{"add", "--all", "--"}, paths...)...)
	g.git(wt, "diff-index", "--cached", "--no-renames", "--name-only", "-z", "HEAD", "--")
	msg := fmt.Sprintf("fixrail: fix finding %s\n\nReproduced by %s (red on %s, green after).\n", id, benchTestPath, sha[:12])
	who := []string{
		"GIT_AUTHOR_NAME=fixrail", "GIT_AUTHOR_EMAIL=fixrail@localhost",
		"GIT_COMMITTER_NAME=fixrail", "GIT_COMMITTER_EMAIL=fixrail@localhost",
	}
	g.exec(wt, []byte(msg), who, 0, "commit", "--no-verify", "--quiet", "--cleanup=whitespace", "-F", "-")
	head := g.git(wt, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")

	// P5.
	g.git(top, "check-ref-format", "--branch", branch)
	g.git(top, "update-ref", "--no-deref", "-m", "fixrail: update "+branch, ref, head, strings.Repeat("0", len(head)))

	// Cleanup.
	g.git(top, "worktree", "list", "--porcelain", "-z")
	g.git(top, "worktree", "remove", "--force", "--force", "--", wt)
	g.git(top, "worktree", "prune")
}

// BenchmarkRunOverhead is one finding through pipeline.Prepare and
// pipeline.Run, to DRAFT-PR, per iteration. Each iteration is a new finding
// id, so each makes a new branch fixrail/b<n>, as the raw side does.
func BenchmarkRunOverhead(b *testing.B) {
	fx := newBenchFixture(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		n++
		fx.runPipeline(b, ctx, fmt.Sprintf("b%d", n))
	}
	b.ReportMetric(gitCallsPerFinding, "git-calls/op")
}

// BenchmarkRawGit is the same git calls per iteration, run raw.
func BenchmarkRawGit(b *testing.B) {
	fx := newBenchFixture(b)
	g := newRawGit(b)
	n := 0
	for b.Loop() {
		n++
		rawFinding(b, fx, g, fmt.Sprintf("b%d", n))
	}
	b.ReportMetric(float64(g.calls)/float64(n), "git-calls/op")
}

// TestBenchFixtureReachesDraftPR keeps the benchmarks honest: the fixture
// reaches DRAFT-PR, and a git shim on PATH shows that the pipeline and the
// raw side make the same git calls, gitCallsPerFinding of them, and end in
// the same tree, and that each removes its config snapshot when done.
func TestBenchFixtureReachesDraftPR(t *testing.T) {
	fx := newBenchFixture(t)
	log := installGitShim(t)
	// The snapshots go under os.TempDir: a private one shows what is left.
	snaps := t.TempDir()
	t.Setenv("TMPDIR", snaps)
	leftBehind := func(side string) {
		t.Helper()
		ents, err := os.ReadDir(snaps)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("%s left %s behind in TMPDIR", side, e.Name())
		}
	}

	rep := fx.runPipeline(t, context.Background(), "t1")
	leftBehind("the pipeline (Setup.Close)")
	harness := readGitLog(t, log)
	if err := os.WriteFile(log, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g := newRawGit(t)
	rawFinding(t, fx, g, "t2")
	leftBehind("the raw side")
	raw := readGitLog(t, log)

	if len(harness) != gitCallsPerFinding {
		t.Errorf("the pipeline made %d git calls, gitCallsPerFinding is %d:\n%s", len(harness), gitCallsPerFinding, strings.Join(harness, "\n"))
	}
	if g.calls != len(raw) {
		t.Errorf("rawGit counted %d calls, the shim saw %d", g.calls, len(raw))
	}
	if d := cmp.Diff(harness, raw); d != "" {
		t.Errorf("the raw side's git calls differ from the pipeline's (-pipeline +raw):\n%s", d)
	}

	if rep.Branch != "fixrail/t1" || rep.Commit == "" {
		t.Errorf("report: branch %q, commit %q", rep.Branch, rep.Commit)
	}
	if _, err := os.Stat(filepath.Join(fx.repo, ".fixrail", "outbox", "t1", "pr.json")); err != nil {
		t.Errorf("no draft PR in the outbox: %v", err)
	}
	t1 := gittest.Git(t, fx.repo, "rev-parse", "fixrail/t1^{tree}")
	t2 := gittest.Git(t, fx.repo, "rev-parse", "fixrail/t2^{tree}")
	if t1 != t2 {
		t.Errorf("the pipeline's tree %s differs from the raw side's %s", t1, t2)
	}
	if wts := gittest.Git(t, fx.repo, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("worktrees left behind:\n%s", wts)
	}
}

// installGitShim puts a git on PATH that logs its argv, one call per line
// with tab-separated arguments, and execs the real git. It returns the log.
func installGitShim(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	for _, p := range []string{real, log} {
		if strings.ContainsRune(p, '\'') {
			t.Fatalf("path %q holds a quote, which the fake git script cannot carry", p)
		}
	}
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\t' \"$@\" >>'%s'\nprintf '\\n' >>'%s'\nexec '%s' \"$@\"\n", log, log, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// readGitLog returns each logged call as its subcommand and first argument,
// after gitx's "-c key=value" prefix: enough to tell every call in the list
// apart without the paths and SHAs that differ between runs.
func readGitLog(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for line := range strings.Lines(string(data)) {
		args := strings.Split(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\t"), "\t")
		for len(args) >= 2 && args[0] == "-c" {
			args = args[2:]
		}
		if len(args) > 2 {
			args = args[:2]
		}
		calls = append(calls, strings.Join(args, " "))
	}
	return calls
}
