package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/sarif"
)

var cmdLint = &command{
	Name:  "lint",
	Usage: "[--format text|json|sarif|github] [--no-ignores] [PATH...]",
	Short: "check CI workflows that run an agent on untrusted input against the rails",
	Long: `
Lint checks GitHub Actions workflows (default: .github/workflows/*.yml and
*.yaml; a directory argument means the workflow files in it) against the
conformance rules for running an agent on untrusted input:

  title-in-fence          attacker text reaches an agent only inside the fence
  nonce-delimiter         the fence marker carries a per-run random nonce
  gate-names              the operating prompt names the gates
  cost-cap                a fail-closed budget precheck runs before the agent
  no-merge                nothing merges, force-pushes or pushes to main
  default-deny-allowlist  explicit, non-wildcard tools; first call read-only
  mode-parity             modes differ by one step; no rail depends on mode
  template-injection      no attacker text expanded into run: or a script
  unparseable             anything not analysed is a finding, never a pass

A step that runs "fixrail run" is not an agent invocation: fixrail fences,
names the gates and stages the tools itself. Any agent the workflow calls
directly (an action or a CLI, even in the same step) is judged.

Inline ignores need a reason: "# fixrail-lint: ignore[rule] why", on the
finding's line or the line above; --no-ignores disables them. unparseable
cannot be ignored.

Exit status: 0 no findings, 5 findings (in every format, unparseable
included), 2 usage, 1 internal error.`,
	Flags: func() *flag.FlagSet { fs, _ := lintFlags(); return fs },
	Run:   runLint,
}

type lintOpts struct {
	format    string
	json      bool
	noIgnores bool
}

func lintFlags() (*flag.FlagSet, *lintOpts) {
	o := &lintOpts{}
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.StringVar(&o.format, "format", "text", "output `format`: text, json, sarif or github (workflow annotations)")
	fs.BoolVar(&o.json, "json", false, "same as --format json")
	fs.BoolVar(&o.noIgnores, "no-ignores", false, "report findings that inline ignore comments would suppress")
	return fs, o
}

// maxWorkflowSize bounds one workflow file; GitHub itself refuses far
// smaller ones.
const maxWorkflowSize = 4 << 20

func runLint(_ context.Context, stdio Stdio, args []string) error {
	fs, o := lintFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if o.json {
		o.format = "json"
	}
	switch o.format {
	case "text", "json", "sarif", "github":
	default:
		return usagef("unknown --format %q (text, json, sarif or github)", o.format)
	}
	paths, err := workflowPaths(fs.Args())
	if err != nil {
		return err
	}
	// A short batch run: trade memory for fewer collections.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	results := make([][]conformance.Finding, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	opt := conformance.Options{NoIgnores: o.noIgnores, Shell: conformance.NewShellCache()}
	for _, i := range largestFirst(paths) {
		p := paths[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = lintFile(p, opt)
		}()
	}
	wg.Wait()
	var all []conformance.Finding
	for _, r := range results {
		all = append(all, r...)
	}
	switch o.format {
	case "text":
		err = conformance.WriteText(stdio.Stdout, all)
	case "json":
		err = conformance.WriteJSON(stdio.Stdout, all)
	case "github":
		err = conformance.WriteGitHub(stdio.Stdout, all)
	case "sarif":
		err = sarif.Encode(stdio.Stdout, conformance.SARIF(all, moduleVersion()))
	}
	if err != nil {
		return err
	}
	if len(all) > 0 {
		fmt.Fprintf(stdio.Stderr, "fixrail lint: %d finding(s) in %d file(s)\n", len(all), len(paths))
		return &errFound{len(all)}
	}
	fmt.Fprintf(stdio.Stderr, "fixrail lint: %d file(s), no findings\n", len(paths))
	return nil
}

// largestFirst orders the indices of paths by file size, largest first:
// one lock file can take longer than all the others together, and
// starting it last would leave every other worker idle while it runs.
// Only the schedule changes; results keep the order of paths.
func largestFirst(paths []string) []int {
	size := make([]int64, len(paths))
	order := make([]int, len(paths))
	for i, p := range paths {
		order[i] = i
		if fi, err := os.Stat(p); err == nil {
			size[i] = fi.Size()
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size[b], size[a]) })
	return order
}

// workflowPaths expands the arguments: files as given, directories to the
// workflow files directly inside them, nothing to .github/workflows.
func workflowPaths(args []string) ([]string, error) {
	explicit := len(args) > 0
	if !explicit {
		args = []string{filepath.Join(".github", "workflows")}
	}
	var out []string
	for _, a := range args {
		if err := noSymlinkedDir(a); err != nil {
			return nil, err
		}
		fi, err := os.Stat(a)
		if err != nil {
			if !explicit && errors.Is(err, fs.ErrNotExist) {
				return nil, usagef("no workflows: %s does not exist (give paths, or run fixrail init)", a)
			}
			return nil, usagef("%v", err)
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".yaml") {
				out = append(out, filepath.Join(a, n))
			}
		}
	}
	if len(out) == 0 {
		return nil, usagef("no workflow files (*.yml, *.yaml) in %s", strings.Join(args, ", "))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// noSymlinkedDir refuses a relative path argument with a symlink among
// its directories (.github linked elsewhere): what lint would read there is
// not in the repository, and its findings quote it.
func noSymlinkedDir(a string) error {
	if filepath.IsAbs(a) {
		return nil
	}
	dir := filepath.Dir(filepath.Clean(a))
	if fi, err := os.Stat(a); err == nil && fi.IsDir() {
		dir = filepath.Clean(a)
	}
	for p := dir; p != "." && p != string(filepath.Separator) && filepath.Base(p) != ".."; p = filepath.Dir(p) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return usagef("%s is a symlink: lint reads no workflow through one (GitHub does not follow it)", p)
		}
	}
	return nil
}

// lintFile reads one workflow (a regular file, bounded, opened without
// blocking on a FIFO) and lints it; what cannot be read is a finding.
func lintFile(path string, opt conformance.Options) []conformance.Finding {
	data, err := readWorkflow(path)
	if err != nil {
		return []conformance.Finding{{Rule: conformance.Unparseable, Path: filepath.ToSlash(path), Line: 1, Column: 1, Message: "not read: " + err.Error()}}
	}
	opt.LocalAction = localActions(repoRootOf(path))
	return conformance.Lint(filepath.ToSlash(path), data, opt)
}

// repoRootOf is the directory a workflow's `uses: ./dir` is relative to:
// the repository holding .github/workflows, or the current directory for
// a workflow file anywhere else.
func repoRootOf(path string) string {
	dir := filepath.Dir(filepath.Clean(path))
	if filepath.Base(dir) == "workflows" && filepath.Base(filepath.Dir(dir)) == ".github" {
		return filepath.Dir(filepath.Dir(dir))
	}
	return "."
}

// readInside reads root/rel as a workflow is read, after resolving its
// symlinks: a repository under lint cannot point an action file at one
// outside itself (a secret of the machine running lint, a device).
func readInside(root, rel string) ([]byte, error) {
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	if r, err := filepath.Rel(top, real); err != nil || !filepath.IsLocal(r) {
		return nil, fmt.Errorf("a symlink leads outside the repository")
	} else if first, _, _ := strings.Cut(filepath.ToSlash(r), "/"); first == ".git" {
		return nil, fmt.Errorf("it is in .git, where a checkout keeps its credential")
	}
	return readWorkflow(real)
}

// localActions reads a local action's metadata file under root, read as
// a workflow is (a regular file, bounded); a reference that leaves root
// is refused.
func localActions(root string) conformance.LocalActionReader {
	return func(ref string) (string, []byte, error) {
		rel := filepath.Clean(filepath.FromSlash(ref))
		if !filepath.IsLocal(rel) {
			return "", nil, fmt.Errorf("%s leaves the repository", ref)
		}
		var err error
		for _, n := range []string{"action.yml", "action.yaml"} {
			name := filepath.ToSlash(filepath.Join(rel, n))
			var data []byte
			if data, err = readInside(root, filepath.Join(rel, n)); err == nil {
				return name, data, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return name, nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		return "", nil, err
	}
}

func readWorkflow(path string) ([]byte, error) {
	// Never through a symlink: GitHub reads a workflow from the git tree,
	// where a symlink is its target's name, and a finding quotes the line
	// it is on — a link to a credential file would print the credential.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("a symlink: GitHub runs no workflow through one, and lint does not follow it")
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	// Sized from Stat, so a large lock file is not read through a chain of
	// doubling copies; the limit, not the size Stat claims, bounds it.
	buf := bytes.NewBuffer(make([]byte, 0, min(fi.Size(), maxWorkflowSize)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxWorkflowSize+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if len(data) > maxWorkflowSize {
		return nil, fmt.Errorf("larger than %d bytes", maxWorkflowSize)
	}
	return data, nil
}

// moduleVersion is the version SARIF reports as the tool's.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "0.0.0-devel"
}
