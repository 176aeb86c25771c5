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
// records both sides through a git shim and checks that they match). Every
// tree is a plain directory with a private index (no linked worktree), and
// each check after repository code ran lists the clone's config and its refs:
//
//	Prepare      1 version                                           Snapshot: git >= 2.32
//	             2 config --list ... (from a new empty directory)    Snapshot: the operator's config
//	             3 config --file <snap> --no-includes --list -z      Snapshot: read back
//	             4 rev-parse --path-format=absolute ... --git-dir    Open: top, git and common dir
//	             5 config --list --includes --show-scope -z          Baseline: the clone's config
//	             6 remote get-url --push origin                      Baseline (exit 2: no origin)
//	             7 for-each-ref                                      Baseline: refs (state check)
//	             8 symbolic-ref --quiet --short HEAD                 base "" = current branch
//	          9-13 rev-parse ×3, cat-file ×2                         the base's SHA, fixrail.yaml
//	            14 ls-files -z --cached -- .fixrail                  the state directory is not the repository's
//	P1 intake 15-16 check-ref-format, show-ref                       the in-flight check
//	P2          17 read-tree --reset -u <base>                       Checkout: the agent's tree
//	               (agent #1 writes the test and PLAN.json)
//	         18-19 config --list, for-each-ref                       check after the agent
//	            20 ls-files -z --modified --deleted --others         Changed (against the index)
//	            21 ls-tree <base> -- <test>                          the evidence adds only?
//	            22 hash-object -w --no-filters --stdin               the evidence, as read
//	         23-25 read-tree, update-index --index-info, write-tree  the red tree
//	P3          26 read-tree --reset -u <red tree>                   a fresh checkout
//	               (the oracle, red)
//	         27-28 config --list, for-each-ref                       check after the test
//	         29-32 ls-tree, cat-file -s, cat-file blob <red> -- test   Stage A reads the red tree:
//	               ls-tree <red> -- <planned file>                   the evidence and the plan
//	P4             (agent #2 writes the fix and result.json)
//	         33-34 config --list, for-each-ref                       check after the agent
//	            35 ls-files ...                                      Changed
//	            36 ls-tree <base> -- <path>                          changed from the base?
//	            37 hash-object ...                                   the fix, as read
//	         38-40 read-tree, update-index, write-tree               the candidate tree
//	            41 commit-tree <tree> -p <base>                      the candidate, before any gate
//	         42-45 read-tree <base>, update-index, write-tree,       base + fix, no evidence
//	               commit-tree <tree> -p <base>                      (what the suite judges)
//	         46-48 diff-tree --text, --binary, --name-only           what the gates read
//	            49 read-tree --reset -u <candidate>                  a fresh checkout
//	               (the oracle, green)
//	         50-51 config --list, for-each-ref                       check after the test
//	            52 read-tree --reset -u <base + fix>                 a fresh checkout
//	               (the suite, green)
//	         53-54 config --list, for-each-ref                       check after the suite
//	            55 read-tree --reset -u <candidate>                  a fresh checkout
//	               (the suite again, with the evidence)
//	         56-57 config --list, for-each-ref                       check after the suite
//	P5          58 check-ref-format --branch fixrail/<id>            UpdateBranch
//	            59 update-ref --no-deref -m ... <ref> <new> <zero>   UpdateBranch (compare-and-swap)
//
// Cleanup runs no git: the trees are plain directories.
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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// gitCallsPerFinding is the length of the list above: what one finding
// costs in git processes, Prepare included.
const gitCallsPerFinding = 59

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

// The day caps are far above what a benchmark reaches (the defaults admit
// three runs per actor per day, so b.N = 4 would HALT budget-exhausted).
const benchConfig = `runner: {kind: command, command: ["false"]}
test:
  command: ["sh", "-c", "test -f src/fixed || { echo SYMPTOM; exit 1; }", "repro", "{test_path}"]
  path_glob: "tests/**"
suite: {command: ["true"]}
paths: {fixable: ["src/**"]}
budget:
  day: {cost_usd: 1000000, runs: 1000000, turns: 100000000}
  repo_day: {cost_usd: 1000000, runs: 1000000, turns: 100000000}
  actor_day: {cost_usd: 1000000, runs: 1000000, turns: 100000000}
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

func newBenchFixture(tb testing.TB) *benchFixture { return newBenchFixtureN(tb, 0) }

// newBenchFixtureN is the fixture with n more files, 100 to a directory,
// for the large-repository figure: fresh checkouts cost what the tree does.
func newBenchFixtureN(tb testing.TB, n int) *benchFixture {
	tb.Helper()
	files := map[string]string{
		"fixrail.yaml": benchConfig,
		"src/lib.txt":  "library\n",
	}
	for i := range n {
		files[fmt.Sprintf("vendor/d%03d/f%05d.txt", i/100, i)] = fmt.Sprintf("file %d\n", i)
	}
	repo := gittest.NewRepo(tb, files)
	// The fixture's own writes are flushed before anything is timed: a
	// large tree's writeback would otherwise land on whichever side runs
	// first.
	syscall.Sync()
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
		Forge:   localForge(tb, s),
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

// loopFinding is one iteration of the benchmark's loop: finding id to
// DRAFT-PR, then its fix closed, as a reviewer merges or closes it. The
// next finding changes the same files, and an open fix of them would HALT
// it (the path locks). Closing is removing three small files, beside a run
// of tens of milliseconds.
func (fx *benchFixture) loopFinding(tb testing.TB, ctx context.Context, id string) {
	fx.runPipeline(tb, ctx, id)
	if err := (&forge.Local{Dir: filepath.Join(fx.repo, pipeline.StateDirName, "outbox")}).Withdraw(ctx, id); err != nil {
		tb.Fatal(err)
	}
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
	// repository, the baseline of its config, push URL (there is no
	// origin: exit 2) and refs, the base and fixrail.yaml.
	snap := rawSnapshot(tb, g)
	defer os.RemoveAll(snap)
	lines := strings.Split(g.git(fx.repo, "rev-parse", "--path-format=absolute", "--is-inside-work-tree", "--show-toplevel", "--git-dir", "--git-common-dir"), "\n")
	top, gitDir := lines[1], lines[2]
	baseline := g.configList(top)
	g.exec(top, nil, nil, 2, "remote", "get-url", "--push", "origin")
	refs := g.refs(top)
	base := g.git(top, "symbolic-ref", "--quiet", "--short", "HEAD")
	sha := g.git(top, "rev-parse", "--verify", "--end-of-options", "refs/heads/"+base+"^{commit}")
	commit := g.git(top, "rev-parse", "--verify", "--end-of-options", sha+"^{commit}")
	oid := g.git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+":fixrail.yaml")
	g.git(top, "cat-file", "-t", oid)
	g.git(top, "cat-file", "blob", oid)
	g.git(top, "ls-files", "-z", "--cached", "--", ".fixrail")

	// P1: the in-flight check.
	g.git(top, "check-ref-format", "--branch", branch)
	g.exec(top, nil, nil, 1, "show-ref", "--verify", "--quiet", "--", ref)

	// P2: the agent's tree, a checkout with a private index; the evidence.
	dir, err := os.MkdirTemp(fx.tmp, "raw-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "wt")
	checkout := func(tree, rev string) {
		tb.Helper()
		if err := os.Mkdir(tree, 0o755); err != nil {
			tb.Fatal(err)
		}
		g.tree(gitDir, tree, tree+".index", "read-tree", "--reset", "-u", rev)
	}
	check := func() {
		tb.Helper()
		if got := g.configList(top); !bytes.Equal(got, baseline) {
			tb.Fatalf("git config drifted")
		}
		if got := g.refs(top); got != refs {
			tb.Fatalf("refs moved")
		}
	}
	status := []string{"ls-files", "-z", "--modified", "--deleted", "--others"}
	checkout(wt, sha)
	planPath, resultPath := filepath.Join(dir, "PLAN.json"), filepath.Join(dir, "result.json")
	if err := agentInvestigate(wt, planPath); err != nil {
		tb.Fatal(err)
	}
	check()
	g.tree(gitDir, wt, wt+".index", status...)
	g.git(top, "ls-tree", "-z", "--full-tree", sha, "--", benchTestPath)
	test, err := os.ReadFile(filepath.Join(wt, benchTestPath))
	if err != nil {
		tb.Fatal(err)
	}
	testOID := g.bare(gitDir, "", test, "hash-object", "-w", "--no-filters", "-t", "blob", "--stdin")
	idx := filepath.Join(dir, "red.index")
	g.bare(gitDir, idx, nil, "read-tree", sha)
	g.bare(gitDir, idx, []byte("100644 "+testOID+"\t"+benchTestPath+"\x00"), "update-index", "-z", "--index-info")
	red := g.bare(gitDir, idx, nil, "write-tree")

	// P3: the oracle, red, in a fresh checkout; Stage A reads the test and
	// the planned file from the red tree.
	checkout(filepath.Join(dir, "red-1"), red)
	if ok, out := rawCommand(tb, filepath.Join(dir, "red-1"), benchTestArgv); ok || !strings.Contains(out, benchSymptom) {
		tb.Fatalf("raw oracle on the base: passed=%v, output %q", ok, out)
	}
	check()
	testRec := g.git(top, "ls-tree", "-z", "--full-tree", red, "--", benchTestPath)
	testBlob := strings.Fields(strings.SplitN(testRec, "\t", 2)[0])[2]
	g.git(top, "cat-file", "-s", testBlob)
	g.git(top, "cat-file", "blob", testBlob)
	g.git(top, "ls-tree", "-z", "--full-tree", red, "--", benchFixPath)

	// P4: the fix, read back once; the candidate commit and base + fix;
	// the candidate's diff; the oracle in a fresh checkout of the
	// candidate, the suite in one of base + fix and one of the candidate.
	if err := agentFix(wt, resultPath); err != nil {
		tb.Fatal(err)
	}
	check()
	g.tree(gitDir, wt, wt+".index", status...)
	g.git(top, "ls-tree", "-z", "--full-tree", sha, "--", benchFixPath)
	fixed, err := os.ReadFile(filepath.Join(wt, benchFixPath))
	if err != nil {
		tb.Fatal(err)
	}
	fixOID := g.bare(gitDir, "", fixed, "hash-object", "-w", "--no-filters", "-t", "blob", "--stdin")
	idx = filepath.Join(dir, "candidate.index")
	g.bare(gitDir, idx, nil, "read-tree", red)
	g.bare(gitDir, idx, []byte("100644 "+fixOID+"\t"+benchFixPath+"\x00"), "update-index", "-z", "--index-info")
	tree := g.bare(gitDir, idx, nil, "write-tree")
	msg := fmt.Sprintf("fixrail: fix finding %s\n\nReproduced by %s (red on %s, green after).\n", id, benchTestPath, sha[:12])
	who := []string{
		"GIT_AUTHOR_NAME=fixrail", "GIT_AUTHOR_EMAIL=fixrail@localhost",
		"GIT_COMMITTER_NAME=fixrail", "GIT_COMMITTER_EMAIL=fixrail@localhost",
	}
	head := strings.TrimSpace(string(g.exec(gitDir, []byte(msg), append(who, "GIT_DIR="+gitDir), 0, "commit-tree", tree, "-p", sha, "-F", "-")))
	idx = filepath.Join(dir, "fix-only.index")
	g.bare(gitDir, idx, nil, "read-tree", sha)
	g.bare(gitDir, idx, []byte("100644 "+fixOID+"\t"+benchFixPath+"\x00"), "update-index", "-z", "--index-info")
	fixTree := g.bare(gitDir, idx, nil, "write-tree")
	fixOnlyMsg := "fixrail: the base plus the fix, without the evidence (judged by the suite; never shipped)\n"
	fixOnly := strings.TrimSpace(string(g.exec(gitDir, []byte(fixOnlyMsg), append(who, "GIT_DIR="+gitDir), 0, "commit-tree", fixTree, "-p", sha, "-F", "-")))
	diff := []string{"diff-tree", "-r", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", "--full-index", "--src-prefix=a/", "--dst-prefix=b/"}
	for _, extra := range [][]string{{"--patch", "--text"}, {"--patch", "--binary"}, {"--name-only", "-z"}} {
		g.bare(gitDir, "", nil, append(append(slices.Clone(diff), extra...), sha, head, "--")...)
	}
	checkout(filepath.Join(dir, "green-2"), head)
	if ok, out := rawCommand(tb, filepath.Join(dir, "green-2"), benchTestArgv); !ok {
		tb.Fatalf("raw oracle after the fix: %q", out)
	}
	check()
	checkout(filepath.Join(dir, "suite-3"), fixOnly)
	if ok, out := rawCommand(tb, filepath.Join(dir, "suite-3"), benchSuiteArgv); !ok {
		tb.Fatalf("raw suite on base + fix: %q", out)
	}
	check()
	checkout(filepath.Join(dir, "suite-4"), head)
	if ok, out := rawCommand(tb, filepath.Join(dir, "suite-4"), benchSuiteArgv); !ok {
		tb.Fatalf("raw suite on the candidate: %q", out)
	}
	check()

	// P5.
	g.git(top, "check-ref-format", "--branch", branch)
	g.git(top, "update-ref", "--no-deref", "-m", "fixrail: update "+branch, ref, head, strings.Repeat("0", len(head)))
}

// refs lists every ref with its target, as the state check does.
func (g *rawGit) refs(top string) string {
	g.tb.Helper()
	return g.git(top, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)")
}

// tree runs git on a checkout fixrail-style: the git directory and the
// work tree named, a private index.
func (g *rawGit) tree(gitDir, wt, index string, args ...string) string {
	g.tb.Helper()
	return strings.TrimSpace(string(g.exec(wt, nil, []string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + wt, "GIT_INDEX_FILE=" + index}, 0, args...)))
}

// bare runs git on the git directory alone, with an optional index.
func (g *rawGit) bare(gitDir, index string, stdin []byte, args ...string) string {
	g.tb.Helper()
	env := []string{"GIT_DIR=" + gitDir}
	if index != "" {
		env = append(env, "GIT_INDEX_FILE="+index)
	}
	return strings.TrimSpace(string(g.exec(gitDir, stdin, env, 0, args...)))
}

// BenchmarkRunOverhead is one finding through pipeline.Prepare and
// pipeline.Run, to DRAFT-PR, per iteration. Each iteration is a new finding
// id, so each makes a new branch fixrail/b<n>, as the raw side does.
func BenchmarkRunOverhead(b *testing.B) { benchRunOverhead(b, newBenchFixture(b)) }

func benchRunOverhead(b *testing.B, fx *benchFixture) {
	ctx := context.Background()
	n := 0
	for b.Loop() {
		n++
		fx.loopFinding(b, ctx, fmt.Sprintf("b%d", n))
	}
	b.ReportMetric(gitCallsPerFinding, "git-calls/op")
}

// BenchmarkRawGit is the same git calls per iteration, run raw.
func BenchmarkRawGit(b *testing.B) { benchRawGit(b, newBenchFixture(b)) }

// largeRepoFiles is the size of the large-repository fixture.
const largeRepoFiles = 50000

// BenchmarkRunOverheadLarge and BenchmarkRawGitLarge are the pair on a
// repository of 50,000 files: five checkouts of the whole tree per finding.
func BenchmarkRunOverheadLarge(b *testing.B) {
	benchRunOverhead(b, newBenchFixtureN(b, largeRepoFiles))
}

// BenchmarkRawGitLarge is BenchmarkRawGit on the large fixture.
func BenchmarkRawGitLarge(b *testing.B) { benchRawGit(b, newBenchFixtureN(b, largeRepoFiles)) }

func benchRawGit(b *testing.B, fx *benchFixture) {
	g := newRawGit(b)
	n := 0
	for b.Loop() {
		n++
		rawFinding(b, fx, g, fmt.Sprintf("b%d", n))
	}
	b.ReportMetric(float64(g.calls)/float64(n), "git-calls/op")
}

// TestBenchLoopRunsAgain: the benchmark's loop, two findings on one
// fixture, reaches DRAFT-PR every time (scripts/bench-overhead runs it; the
// test below runs one finding only).
func TestBenchLoopRunsAgain(t *testing.T) {
	fx := newBenchFixture(t)
	for _, id := range []string{"b1", "b2"} {
		fx.loopFinding(t, t.Context(), id)
	}
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
		for len(args) >= 1 && (args[0] == "-c" && len(args) >= 2 || strings.HasPrefix(args[0], "--git-dir=") || strings.HasPrefix(args[0], "--work-tree=")) {
			if args[0] == "-c" {
				args = args[1:]
			}
			args = args[1:]
		}
		if len(args) > 2 {
			args = args[:2]
		}
		calls = append(calls, strings.Join(args, " "))
	}
	return calls
}

// localForge is the embedded default forge, the repository's outbox, as
// the CLI builds it.
func localForge(tb testing.TB, s *pipeline.Setup) *forge.Local {
	tb.Helper()
	dir, err := s.StateDir("outbox")
	if err != nil {
		tb.Fatal(err)
	}
	return &forge.Local{Dir: dir}
}
