package cli

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var cmdInit = &command{
	Name:  "init",
	Usage: "[--dir DIR] [--force] [--sweep]",
	Short: "write fixrail.yaml (with the deny-list manifest) and the reference CI workflow",
	Long: `
Init writes four files into the repository at --dir (default: the current
directory):

  fixrail.yaml                  the configuration, commented; paths.sensitive
                                in it is the deny-list manifest (the globs
                                that extend the built-in deny list, which the
                                comment lists)
  .github/workflows/fixrail.yml the reference workflow: label-triggered, one
                                run per issue, least privilege, a fail-closed
                                budget precheck, fixrail run as the hard leg
  .github/workflows/fixrail-alerts.yml
                                the same envelope for Dependabot alerts: one
                                run per alert (fixrail run --alert N)
  .github/workflows/fixrail-verify.yml
                                the required check on fixrail's pull requests:
                                fixrail verify re-proves each from the
                                repository alone, read-only, sandboxed

paths.fixable comes from the tracked files (git ls-files): a Go package at
the root ("*.go") and each top-level directory of Go code (cmd/, internal/,
pkg/, ...); src/, lib/, packages/*, top-level Python packages and root
modules; never vendored code, tests or tooling. The test and suite commands
are the ecosystem's: go test by package and name; pytest when the project
uses it (a conftest.py, pytest in its manifests), else unittest; node --test
or the runner package.json names, and npm test. Check them, then commit
fixrail.yaml on the base branch: a run reads it from there, never from the
working tree. Init prints the CODEOWNERS lines that put the rails under
their owners' review; it does not write CODEOWNERS.

With --sweep, init writes only .github/workflows/fixrail-sweep.yml: on a
schedule, a scan job (fixrail scan --matrix) and a fix job that runs one
finding per matrix entry (max-parallel 4, each in the finding's own
concurrency group, the budget precheck and run of fixrail-alerts.yml, the
ledger's Postgres password from the FIXRAIL_LEDGER_PASSWORD secret).

Every workflow init writes passes fixrail lint with zero findings. Existing files are
never overwritten without --force; nothing is written unless every file
can be.`,
	Flags: func() *flag.FlagSet { fs, _ := initFlags(); return fs },
	Run:   runInit,
}

//go:embed initdata/fixrail.yaml
var initConfigTemplate string

type initOpts struct {
	dir   string
	force bool
	sweep bool
}

func initFlags() (*flag.FlagSet, *initOpts) {
	o := &initOpts{}
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".", "the repository `root` to write into")
	fs.BoolVar(&o.force, "force", false, "overwrite files that exist")
	fs.BoolVar(&o.sweep, "sweep", false, "write only .github/workflows/fixrail-sweep.yml: a scheduled scan fanning out one job per finding")
	return fs, o
}

// initConfig renders fixrail.yaml for the layout init read.
func initConfig(l initLayout) string {
	list := func(v []string) string {
		if v == nil {
			v = []string{}
		}
		b, _ := json.Marshal(v) // a JSON array of strings is a YAML flow sequence
		return strings.ReplaceAll(string(b), `","`, `", "`)
	}
	var b strings.Builder
	for _, g := range sensitive.DenyGlobs {
		fmt.Fprintf(&b, "  #   %s\n", g)
	}
	fmt.Fprintf(&b, "  #   and any path segment naming: %s", strings.Join(sensitive.DenyWords, ", "))
	glob, _ := json.Marshal(l.TestGlob)
	return strings.NewReplacer("@TEST@", list(l.Test), "@TESTGLOB@", string(glob), "@SUITE@", list(l.Suite), "@FIXABLE@", list(l.Fixable), "@BUILTIN@", b.String()).Replace(initConfigTemplate)
}

// maxManifest bounds a manifest init reads (package.json, pyproject.toml).
const maxManifest = 1 << 20

// readLayout lists the repository's tracked files (git ls-files, through
// gitx: the clone's own config runs no program) and reads its layout. A
// directory outside any git work tree is read from disk instead.
func readLayout(ctx context.Context, dir string) (initLayout, error) {
	top, files, onDisk, err := trackedFiles(ctx, dir)
	if err != nil {
		return initLayout{}, err
	}
	read := func(rel string) []byte {
		// A regular file only: a tracked link could point anywhere.
		p := filepath.Join(top, filepath.FromSlash(rel))
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxManifest {
			return nil
		}
		data, _ := os.ReadFile(p)
		return data
	}
	l := detectLayout(files, read)
	if onDisk {
		l.Notes = append(l.Notes, dir+" is not in a git work tree: the layout was read from the files on disk")
	}
	return l, nil
}

// trackedFiles is the repository's top and its tracked files, or, outside
// a git work tree (onDisk), dir and the regular files beneath it.
func trackedFiles(ctx context.Context, dir string) (top string, files []string, onDisk bool, err error) {
	snap, err := gitx.Snapshot(ctx)
	if err != nil {
		return "", nil, false, err
	}
	defer snap.Close()
	repo, err := snap.Open(ctx, dir)
	if err != nil {
		var disk []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if d.IsDir() && rel != "." && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && len(disk) < 100000 {
				disk = append(disk, filepath.ToSlash(rel))
			}
			return nil
		})
		return dir, disk, true, err
	}
	files, err = repo.Files(ctx)
	return repo.Top(), files, false, err
}

func runInit(ctx context.Context, stdio Stdio, args []string) error {
	flags, o := initFlags()
	if err := parseFlags(flags, stdio, args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usagef("init takes no arguments (use --dir)")
	}
	layout, err := readLayout(ctx, o.dir)
	if err != nil {
		return fmt.Errorf("read the repository's layout: %w", err)
	}
	cfg := initConfig(layout)
	// What init writes, the loader must accept: checked before writing.
	if _, err := config.Parse(config.FileName, []byte(cfg)); err != nil {
		return fmt.Errorf("the fixrail.yaml init would write is refused by the loader: %w", err)
	}
	bi, _ := debug.ReadBuildInfo()
	pin, dirty := selfPin(bi)
	files := []struct {
		rel  string
		data []byte
	}{
		{config.FileName, []byte(cfg)},
		{filepath.Join(".github", "workflows", "fixrail.yml"), pinWorkflow(conformance.ReferenceWorkflow, pin)},
		{filepath.Join(".github", "workflows", "fixrail-alerts.yml"), pinWorkflow(conformance.AlertsWorkflow, pin)},
		{filepath.Join(".github", "workflows", "fixrail-verify.yml"), pinWorkflow(conformance.VerifyWorkflow, pin)},
	}
	if o.sweep {
		files = files[:0]
		files = append(files, struct {
			rel  string
			data []byte
		}{filepath.Join(".github", "workflows", "fixrail-sweep.yml"), pinWorkflow(conformance.SweepWorkflow, pin)})
	}
	// A directory on the way that is a symbolic link (a committed
	// .github/workflows -> ../../elsewhere) would put the files wherever it
	// points: refused before anything is written.
	for _, f := range files {
		if bad := linkOnTheWay(o.dir, filepath.Dir(f.rel)); bad != "" {
			return usagef("%s is a symbolic link or not a directory: init writes only into real directories beneath %s; nothing written", filepath.ToSlash(bad), o.dir)
		}
	}
	if !o.force {
		var exist []string
		for _, f := range files {
			if _, err := os.Lstat(filepath.Join(o.dir, f.rel)); err == nil {
				exist = append(exist, f.rel)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if len(exist) > 0 {
			return usagef("%s already exist(s); nothing written (use --force to overwrite)", strings.Join(exist, ", "))
		}
	}
	for _, f := range files {
		// Beneath --dir, through real directories only; a link at the file
		// itself is replaced, never followed.
		if err := pathguard.WriteBeneath(o.dir, filepath.ToSlash(f.rel), f.data, 0o644, true); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Stdout, "wrote %s\n", filepath.ToSlash(f.rel))
	}
	switch {
	case pin == "":
		fmt.Fprintln(stdio.Stderr, "fixrail init: this fixrail knows neither its version nor its commit: set FIXRAIL_VERSION in the workflows to the version or commit you reviewed (their install step stops until you do)")
	case dirty:
		fmt.Fprintf(stdio.Stderr, "fixrail init: the workflows pin commit %s, but this fixrail was built with uncommitted changes: pin what you reviewed\n", pin)
	}
	printNextSteps(stdio.Stdout, layout)
	return nil
}

// printNextSteps says what init read and what is left to the operator:
// above all that a run reads fixrail.yaml from the base branch, so the
// file on disk does nothing until it is committed there.
func printNextSteps(w io.Writer, l initLayout) {
	eco := l.Ecosystem
	if eco == "" {
		eco = "no recognised ecosystem"
	}
	fmt.Fprintf(w, "layout: %s; paths.fixable %s\n", eco, untrusted.OneLine(strings.Join(quoteAll(l.Fixable), ", ")))
	fmt.Fprintf(w, "test:   %s\nsuite:  %s\n", untrusted.OneLine(strings.Join(l.Test, " ")), untrusted.OneLine(strings.Join(l.Suite, " ")))
	for _, n := range l.Notes {
		fmt.Fprintf(w, "note:   %s\n", untrusted.OneLine(n))
	}
	fmt.Fprintln(w, "next:   check paths.fixable, test and suite, add your sensitive paths to paths.sensitive, run fixrail lint,")
	fmt.Fprintln(w, "        then commit fixrail.yaml on the base branch: a run reads it from the base branch, never from the working tree")
	// CODEOWNERS is itself on the deny list (a governance file): init
	// suggests the lines, a person adds them.
	fmt.Fprintln(w, "owners: have the rails' owners review every change to them; add to CODEOWNERS (init does not write it),")
	fmt.Fprintln(w, "        with code-owner review required on the base branch, replacing @OWNERS with that team:")
	fmt.Fprintln(w, "          /fixrail.yaml @OWNERS")
	fmt.Fprintln(w, "          /.github/workflows/fixrail*.yml @OWNERS")
}

func quoteAll(v []string) []string {
	if len(v) == 0 {
		return []string{"(none)"}
	}
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = strconv.Quote(s)
	}
	return out
}

// linkOnTheWay returns the first existing component of rel beneath root
// that is not a real directory (a symbolic link, a file), or "".
func linkOnTheWay(root, rel string) string {
	at := ""
	for _, name := range strings.Split(filepath.ToSlash(rel), "/") {
		if name == "." || name == "" {
			continue
		}
		at = filepath.Join(at, name)
		fi, err := os.Lstat(filepath.Join(root, at))
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if err != nil || !fi.IsDir() {
			return at
		}
	}
	return ""
}
