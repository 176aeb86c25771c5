package cli

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
	"github.com/fixrail/fixrail/internal/ledger/pgtest"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
	"github.com/fixrail/fixrail/internal/scanner/scannertest"
)

var update = flag.Bool("update", false, "rewrite testscript files whose cmp fails")

// goModCache is the module cache of the go that runs the tests.
var goModCache = func() string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}()

// userCacheHome is the cache directory of the user running the tests.
// Every scenario's HOME links .cache/fixrail/gocache to the one in it, so
// that the standard library's build cache a Go scenario's run builds (`go
// build std`, minutes on a loaded machine) is built once per machine and
// Go version, as for an operator, not once per scenario. The rest of the
// scenario's cache directory stays its own.
var userCacheHome, _ = os.UserCacheDir()

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		// The same wiring as cmd/fixrail: signals cancel the run's context.
		"fixrail": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := Main(ctx, os.Args[1:], Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
			stop()
			os.Exit(code)
		},
		// cmd/fixrail's egress forwarder, as the sandbox mounts it.
		egress.ForwarderName: func() { os.Exit(egress.Forward(os.Args[1:], os.Stderr)) },
		// The same wiring as cmd/fixrail-resolve.
		"fixrail-resolve": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := resolvecmd.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
	})
}

// TestScript runs every CLI scenario in testdata/script through the real
// binary, real git and real python3.
func TestScript(t *testing.T) {
	// The cluster pgstart starts is shared by the scenarios that ask for one.
	t.Cleanup(pgtest.Stop)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup:               setupScenario,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"initrepo":      cmdInitRepo,
			"fixrail-exit":  cmdFixrailExit,
			"waitfile":      cmdWaitFile,
			"noleftovers":   cmdNoLeftovers,
			"pgstart":       cmdPgStart,
			"ghfake":        cmdGHFake,
			"orcafake":      cmdOrcaFake,
			"pgrole":        cmdPgRole,
			"gitserve":      cmdGitServe,
			"npmregistry":   cmdNPMRegistry,
			"nocontrol":     cmdNoControl,
			"scanner":       cmdScanner,
			"webhookrecv":   cmdWebhookRecv,
			"gitserverurl":  cmdGitServerURL,
			"listener":      cmdListener,
			"listener-seen": cmdListenerSeen,
		},
	})
}

// setupScenario lays the base project under $WORK/repo (files the script
// itself provides win) and the scenario agent at $WORK/scenario_agent.py.
func setupScenario(env *testscript.Env) error {
	env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
	// The real-layout scenarios build a Go module whose dependency comes
	// from the module cache (CI warms it with go mod download before the
	// tests): HOME is the scenario's, so name the cache explicitly.
	env.Setenv("GOMODCACHE", goModCache)
	if err := os.MkdirAll(filepath.Join(env.WorkDir, "home", ".cache", "fixrail"), 0o755); err != nil {
		return err
	}
	if userCacheHome != "" {
		shared := filepath.Join(userCacheHome, "fixrail", "gocache")
		if err := os.MkdirAll(shared, 0o700); err != nil {
			return err
		}
		if err := os.Symlink(shared, filepath.Join(env.WorkDir, "home", ".cache", "fixrail", "gocache")); err != nil {
			return err
		}
	}
	base := os.DirFS("testdata/base")
	err := fs.WalkDir(base, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		dst := filepath.Join(env.WorkDir, "repo", p)
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		data, err := fs.ReadFile(base, p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return err
	}
	// The agent's directory exists from the start: the agent's sandbox
	// binds it read-write.
	if err := os.MkdirAll(filepath.Join(env.WorkDir, "agent"), 0o755); err != nil {
		return err
	}
	agent, err := os.ReadFile("testdata/scenario_agent.py")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(env.WorkDir, "scenario_agent.py"), agent, 0o755)
}

// envRef is initrepo's @ENV:NAME@.
var envRef = regexp.MustCompile(`@ENV:([A-Z0-9_]+)@`)

// initrepo [dir]: replace @WORK@ in fixrail.yaml, then git init and commit
// everything on main. Test code may call git directly; fixrail may not.
func cmdInitRepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("initrepo does not take !")
	}
	dir := ts.MkAbs("repo")
	if len(args) > 0 {
		dir = ts.MkAbs(args[0])
	}
	cfg := filepath.Join(dir, "fixrail.yaml")
	if data, err := os.ReadFile(cfg); err == nil {
		s := strings.ReplaceAll(string(data), "@WORK@", ts.Getenv("WORK"))
		// @ENV:NAME@ is a variable a helper set (a listener's port).
		for _, m := range envRef.FindAllStringSubmatch(s, -1) {
			s = strings.ReplaceAll(s, m[0], ts.Getenv(m[1]))
		}
		ts.Check(os.WriteFile(cfg, []byte(s), 0o644))
	}
	for _, argv := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-q", "-m", "initial"},
	} {
		cmd := exec.Command("git", argv...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"))
		if out, err := cmd.CombinedOutput(); err != nil {
			ts.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
}

// scanner NAME...: put the pinned scanners' directory first on PATH, or
// fail naming the install command: a scenario whose oracle is a scanner
// proves nothing without it, so it never skips.
func cmdScanner(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: scanner NAME...")
	}
	for _, name := range args {
		p, err := scannertest.Find(name)
		if err != nil {
			ts.Fatalf("%v", err)
		}
		if root := scannertest.NodePrefix(p); root != "" {
			// ESLint and its plugins are a Node.js prefix: the scenario
			// gets a copy of the whole prefix (its bin on PATH, mounted
			// whole by the sandbox), at $WORK/scanner-NAME.
			dst := ts.MkAbs("scanner-" + name)
			if out, err := exec.Command("cp", "-a", root, dst).CombinedOutput(); err != nil {
				ts.Fatalf("copy the %s prefix: %v\n%s", name, err, out)
			}
			ts.Setenv("PATH", filepath.Join(dst, "bin")+string(os.PathListSeparator)+ts.Getenv("PATH"))
			continue
		}
		// The cache is under the operator's home, which the sandbox never
		// mounts (nor a PATH entry inside it): the scenario gets its own
		// copy, on a PATH entry outside it.
		bin := ts.MkAbs("scanners-bin")
		ts.Check(os.MkdirAll(bin, 0o755))
		dst := filepath.Join(bin, name)
		if err := os.Link(p, dst); err != nil {
			data, err := os.ReadFile(p)
			ts.Check(err)
			ts.Check(os.WriteFile(dst, data, 0o755))
		}
		if !strings.HasPrefix(ts.Getenv("PATH"), bin+string(os.PathListSeparator)) {
			ts.Setenv("PATH", bin+string(os.PathListSeparator)+ts.Getenv("PATH"))
		}
	}
}

// fixrail-exit N args...: run fixrail and require exit code N exactly
// (testscript's `! exec` only knows non-zero).
func cmdFixrailExit(ts *testscript.TestScript, neg bool, args []string) {
	execExit(ts, neg, "fixrail", args)
}

// fixrail-resolve-exit CODE [args...]: the slim fixrail-resolve exits CODE.
func cmdResolveExit(ts *testscript.TestScript, neg bool, args []string) {
	execExit(ts, neg, "fixrail-resolve", args)
}

func execExit(ts *testscript.TestScript, neg bool, prog string, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: %s-exit CODE [args...]", prog)
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(prog, args[1:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", prog, err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", prog, got, want)
	}
}

// waitfile path: wait up to 30s for a file to appear.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile path")
	}
	p := ts.MkAbs(args[0])
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear within 30s", p)
}

// noleftovers [dir]: no disposable run directory is left in $TMPDIR and the
// repository has no worktree but its main one.
func cmdNoLeftovers(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("noleftovers does not take !")
	}
	dir := ts.MkAbs("repo")
	if len(args) > 0 {
		dir = ts.MkAbs(args[0])
	}
	entries, err := os.ReadDir(ts.Getenv("TMPDIR"))
	ts.Check(err)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "fixrail-run-") {
			ts.Fatalf("disposable dir left behind: %s", e.Name())
		}
	}
	cmd := exec.Command("git", "worktree", "list", "--porcelain")
	cmd.Dir = dir
	out, err := cmd.Output()
	ts.Check(err)
	if n := strings.Count(string(out), "worktree "); n != 1 {
		ts.Fatalf("%d worktrees registered, want only the main one:\n%s", n, out)
	}
}

// pgstart file...: a fresh database on the tests' throwaway Postgres
// cluster (started on first use, internal/ledger/pgtest): its URL goes in
// $PGURL and replaces @PGURL@ in each file. No server fails the scenario.
func cmdPgStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("pgstart does not take !")
	}
	dsn, drop, err := pgtest.Database()
	if err != nil {
		ts.Fatalf("postgres for the scenario: %v", err)
	}
	ts.Defer(drop)
	ts.Setenv("PGURL", dsn)
	for _, f := range args {
		p := ts.MkAbs(f)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "@PGURL@", dsn)), 0o644))
	}
}
