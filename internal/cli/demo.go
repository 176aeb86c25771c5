package cli

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/examples"
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/sandbox"
)

var cmdDemo = &command{
	Name:  "demo",
	Usage: "[--cve | --sast | --secret] [--dir DIR] [--json]",
	Short: "run the whole pipeline on a bundled example, offline",
	Long: `
Demo copies the bundled example — a small Python library with a real bug, a
bug report about it, and a scripted agent — into a fresh git repository, runs
the pipeline on it, and prints the terminal state, the gates and the outbox.

The scripted agent is not a model: it always writes the same failing test and
the same fix. It stands in for one so the rails can be watched end to end with
no credentials and no network. Needs git and python3, and bubblewrap for the
sandbox: without it the agent and the tests run unsandboxed (the demo says
so, and the draft is labelled needs-review).

With --cve it runs the bundled vulnerable-dependency example instead: a Go
program requiring example.com/fakelib v1.0.0 (a tiny module made for the
demo, served from a file:// proxy beside it), an alert for it, and the
advisory answers as fixrail's cache. No agent and no model: the harness
finds the package in go.mod, decides the lowest version that clears every
advisory (v1.0.2: v1.0.1 clears the alerted one but not another), bumps it,
runs go mod tidy offline in the sandbox, judges the result and builds it.
Needs git and go; the module cache it fills is DIR/gomodcache.

With --sast or --secret it runs the bundled scanned-findings example: a Go
service with a SQL query built from a request (a gosec G201 finding) and a
committed API key (generated for the run, named by the finding only by its
SHA-256). The harness plans from the finding; the scripted agent makes the
one edit. --sast: gosec, when on PATH, is the oracle — it reports G201 on
the base and not on the fix; without it the draft is labelled
needs-review. --secret: the harness recovers the key from the tree by its
digest, and the draft's body opens with "rotate first"; the key is in no
published text. Needs git, go and python3.`,
	Flags: func() *flag.FlagSet { fs, _ := demoFlags(); return fs },
	Run:   runDemo,
}

type demoOpts struct {
	dir          string
	json, cve    bool
	sast, secret bool
}

func demoFlags() (*flag.FlagSet, *demoOpts) {
	o := &demoOpts{}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", "", "where to create the demo repository (default: a new temporary directory, kept)")
	fs.BoolVar(&o.json, "json", false, "print the run report as JSON on stdout")
	fs.BoolVar(&o.cve, "cve", false, "run the vulnerable-dependency example (Go, built-in bump) instead")
	fs.BoolVar(&o.sast, "sast", false, "run the static-analysis example (a gosec finding; gosec, when installed, is the oracle)")
	fs.BoolVar(&o.secret, "secret", false, "run the committed-secret example (the key recovered by its digest; rotate first)")
	return fs, o
}

func runDemo(ctx context.Context, stdio Stdio, args []string) error {
	fsys, o := demoFlags()
	if err := parseFlags(fsys, stdio, args); err != nil {
		return err
	}
	if fsys.NArg() > 0 {
		return usagef("unexpected argument %q", fsys.Arg(0))
	}
	if n := btoi(o.cve) + btoi(o.sast) + btoi(o.secret); n > 1 {
		return usagef("--cve, --sast and --secret each name one example; pass one")
	}
	root := o.dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "fixrail-demo-"); err != nil {
			return err
		}
	} else if entries, err := os.ReadDir(root); err == nil && len(entries) > 0 {
		return usagef("--dir %s is not empty", root)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if o.cve {
		return demoCVE(ctx, stdio, root, o)
	}
	if o.sast || o.secret {
		return demoScanned(ctx, stdio, root, o)
	}
	sub, err := fs.Sub(examples.FS, "textfmt")
	if err != nil {
		return err
	}
	if err := os.CopyFS(root, sub); err != nil {
		return fmt.Errorf("copy example: %w", err)
	}
	repoDir := filepath.Join(root, "repo")
	agent := filepath.Join(root, "agent", "scripted_agent.py")
	cfgPath := filepath.Join(repoDir, "fixrail.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfgPath, []byte(strings.ReplaceAll(string(cfg), "@AGENT@", agent)), 0o644); err != nil {
		return err
	}
	if _, err := gitx.Init(ctx, repoDir, "main", gitx.Identity{Name: "fixrail demo", Email: "demo@localhost"}, "textfmt: initial import"); err != nil {
		return fmt.Errorf("demo repository: %w", err)
	}
	fmt.Fprintf(stdio.Stderr, "fixrail demo: repository %s (kept; remove it when done)\n", repoDir)
	if _, ok := sandbox.Detect(); !ok {
		// sandbox: auto runs on without it; say so before the run, not
		// only in the draft's body.
		fmt.Fprintln(stdio.Stderr, "fixrail demo: bubblewrap is not available here, so the scripted agent and the tests run without a sandbox, with your user's rights (the draft is labelled needs-review for it); install bubblewrap to watch the sandbox")
	}

	fin, err := findings.ReadFile(filepath.Join(root, "report.json"))
	if err != nil {
		return err
	}
	return demoRun(ctx, stdio, repoDir, fin, nil, o)
}

// demoRun runs fin on the demo repository and prints what it made.
func demoRun(ctx context.Context, stdio Stdio, repoDir string, fin *findings.Finding, vulns cve.Source, o *demoOpts) error {
	if err := hideEnvironment(); err != nil {
		return fmt.Errorf("make fixrail non-dumpable: %w", err)
	}
	guardRuntime()
	setup, err := pipeline.Prepare(ctx, repoDir, "")
	if err != nil {
		return err
	}
	defer setup.Close()
	console, done, err := liveConsole(stdio)
	if err != nil {
		return err
	}
	defer done()
	sm, err := compose(setup, "", vulns)
	if err != nil {
		return err
	}
	rep, err := pipeline.Run(ctx, setup, pipeline.Params{Finding: fin, Console: console, Types: sm.types,
		Runner: sm.runner, Forge: sm.forge, Model: sm.model, Advisories: vulns,
		Confirm: confirmer(Stdio{Stdin: stdio.Stdin, Stdout: stdio.Stdout, Stderr: console})})
	done()
	if err != nil {
		return err
	}
	if err := printReport(stdio.Stdout, rep, o.json); err != nil {
		return err
	}
	if !o.json && rep.PR != "" {
		fmt.Fprintf(stdio.Stdout, "\nThe draft PR is in %s:\n  pr.json    title, base, head, labels, draft: true\n  body.md    what was reproduced, how it was proved, every gate\n  fix.patch  the change\n", rep.PR)
	}
	return &terminalError{rep.Terminal}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
