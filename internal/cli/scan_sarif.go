package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/orca"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// configuredFixType is the scanners: mapping of fixrail.yaml on the base,
// as SARIF intake asks for it.
func configuredFixType(cfg *config.Config) func(string) string {
	return func(tool string) string {
		if sc := cfg.ScannerFor(tool); sc != nil {
			return sc.FixType
		}
		return ""
	}
}

// baseTree is the base commit a run works, as the findings.Tree an alert's
// file is read from: through git, never the working tree (which a
// checked-out PR or a build may have changed), one read per path.
type baseTree struct {
	ctx   context.Context
	setup *pipeline.Setup
	seen  map[string]baseFile
}

type baseFile struct {
	data []byte
	err  error
}

func newBaseTree(ctx context.Context, setup *pipeline.Setup) *baseTree {
	return &baseTree{ctx: ctx, setup: setup, seen: map[string]baseFile{}}
}

// ReadFile implements findings.Tree: a regular blob (mode 100644 or
// 100755) of the base; a symbolic link, a submodule or a directory is no
// file to edit.
func (t *baseTree) ReadFile(p string) ([]byte, error) {
	if f, ok := t.seen[p]; ok {
		return f.data, f.err
	}
	e, err := t.setup.Repo.TreeEntry(t.ctx, t.setup.BaseSHA, p, findings.MaxSourceBytes)
	var f baseFile
	switch {
	case err != nil:
		f.err = err
	case e.Mode == "":
		f.err = fmt.Errorf("the base %s has no file %s: %w", t.setup.Base, p, fs.ErrNotExist)
	case e.Mode == "120000":
		f.err = fmt.Errorf("it is a symbolic link on the base (name the file it resolves to)")
	case e.Mode != "100644" && e.Mode != "100755":
		f.err = fmt.Errorf("it is not a regular file on the base (mode %s)", e.Mode)
	default:
		f.data = e.Data
	}
	t.seen[p] = f
	return f.data, f.err
}

// readSARIFScan sorts a SARIF log against the clone setup opened: its
// paths are checked against the work tree, and fixrail.yaml's scanners:
// on the base map tools to fix types.
func readSARIFScan(ctx context.Context, setup *pipeline.Setup, file string) (*findings.SARIFScan, error) {
	return findings.ReadSARIF(file, findings.SARIFOptions{Root: setup.Repo.Top(), Tree: newBaseTree(ctx, setup), Configured: configuredFixType(setup.Config)})
}

// scanScanners adds what the scanners say to a scan: the SARIF log (the
// clone in --dir) and, with --orca, the Orca alerts of the repository.
func scanScanners(ctx context.Context, res *scanResult, o *scanOpts, inFlight func(string) string, progress io.Writer) error {
	setup, err := pipeline.Prepare(ctx, o.dir, o.base)
	if err != nil {
		return err
	}
	defer setup.Close()
	if res.Base == "" {
		res.Base = setup.Base
	}
	res.Dir = o.dir
	if o.sarif != "" {
		if err := scanSARIF(ctx, setup, res, o, inFlight, progress); err != nil {
			return err
		}
	}
	if o.orca {
		return scanOrca(ctx, setup, res, inFlight, progress)
	}
	return nil
}

// scanSARIF adds a SARIF log's results to a scan. A result whose branch
// fixrail/<id> exists in the clone (or, with --repo, on GitHub: inFlight)
// is work awaiting review.
func scanSARIF(ctx context.Context, setup *pipeline.Setup, res *scanResult, o *scanOpts, inFlight func(string) string, progress io.Writer) error {
	fmt.Fprintf(progress, "scan: the SARIF log %s\n", o.sarif)
	scan, err := readSARIFScan(ctx, setup, o.sarif)
	if err != nil {
		return &codedError{code: exitUsage, msg: err.Error()}
	}
	res.Skipped += scan.Skipped
	if res.SARIF, err = filepath.Abs(o.sarif); err != nil {
		return err
	}
	return addScannerItems(ctx, setup, res, "sarif", scan.Results, inFlight)
}

// addScannerItems adds a scanner's sorted results to a scan; one to fix
// whose branch already exists is moved to branch-exists.
func addScannerItems(ctx context.Context, setup *pipeline.Setup, res *scanResult, kind string, results []findings.ScannerResult, inFlight func(string) string) error {
	for _, r := range results {
		it := scannerItem(kind, r)
		if it.Group == groupToFix {
			why := ""
			if inFlight != nil {
				why = inFlight(r.ID)
			}
			if why == "" {
				ok, err := setup.Repo.BranchExists(ctx, forge.BranchPrefix+r.ID)
				if err != nil {
					return err
				}
				if ok {
					why = forge.BranchPrefix + r.ID + " is a branch of the clone: a run would HALT in-flight until it is merged or deleted"
				}
			}
			if why != "" {
				it.Group, it.Why = groupBranchExists, why
			}
		}
		res.Items = append(res.Items, it)
	}
	return nil
}

// scannerItem is a scanner's result as a scan item.
func scannerItem(kind string, r findings.ScannerResult) scanItem {
	it := scanItem{Group: r.Group, Finding: r.ID, Kind: kind, Why: r.Why}
	if r.Finding == nil {
		if it.Finding == "" {
			it.Kind = "scan"
		}
		return it
	}
	it.Title = r.Finding.Title
	it.FixType = r.Finding.FixType
	if e := r.Finding.Evidence; e != nil {
		it.Tool, it.Rule, it.Path, it.Line, it.Severity = e.Tool, e.Rule, e.Path, e.Line, e.Severity
	}
	return it
}

// scanOrca adds the repository's open Orca alerts (orca: in fixrail.yaml
// on the base; the token from ORCA_API_TOKEN), sorted against the clone.
func scanOrca(ctx context.Context, setup *pipeline.Setup, res *scanResult, inFlight func(string) string, progress io.Writer) error {
	repo := setup.Config.Orca.Repository
	if repo == "" {
		return usagef("--orca: name the repository as Orca's inventory knows it (orca: {repository: owner/name}) in %s on %s", config.FileName, setup.Base)
	}
	c, err := orca.New(setup.Config.OrcaURL(), os.LookupEnv)
	if err != nil {
		return usagef("--orca: %v", err)
	}
	fmt.Fprintf(progress, "scan: the open Orca alerts of %s\n", repo)
	as, err := c.Alerts(ctx, repo)
	if err != nil {
		return &errServiceUnavailable{err}
	}
	var sorted []findings.ScannerResult
	tree := newBaseTree(ctx, setup)
	for _, a := range as {
		sorted = append(sorted, a.Sort(tree, repo))
	}
	return addScannerItems(ctx, setup, res, "orca", sorted, inFlight)
}

// readScanner reads run's finding from a scanner: a SARIF log's result or
// an Orca alert, sorted against the clone setup opened.
func (in runIntake) readScanner(ctx context.Context, setup *pipeline.Setup, o *runOpts, p *pipeline.Params) error {
	var err error
	if o.sarif != "" {
		p.Finding, err = sarifFinding(ctx, setup, o.sarif, o.result)
	} else {
		p.Finding, err = orcaFinding(ctx, setup, o.orcaAlert)
	}
	if err != nil {
		return err
	}
	if in.github != "" {
		p.ForgeRepo = "github.com/" + strings.ToLower(in.github)
	}
	return nil
}

// orcaFinding is run's finding from Orca: the open alert id of the
// repository orca: names. One scan --orca would not list as to-fix, or
// one Orca does not return as open, is refused before any run (exit 2).
func orcaFinding(ctx context.Context, setup *pipeline.Setup, id string) (*findings.Finding, error) {
	if !orca.ValidID(id) {
		return nil, usagef("--orca-alert: %q is not an Orca alert id (orca-<digits>)", id)
	}
	repo := setup.Config.Orca.Repository
	if repo == "" {
		return nil, usagef("--orca-alert: name the repository as Orca's inventory knows it (orca: {repository: owner/name}) in %s on %s", config.FileName, setup.Base)
	}
	c, err := orca.New(setup.Config.OrcaURL(), os.LookupEnv)
	if err != nil {
		return nil, usagef("--orca-alert: %v", err)
	}
	a, err := c.Alert(ctx, repo, id)
	if errors.Is(err, orca.ErrNotFound) {
		return nil, &codedError{code: exitUsage, msg: "refused: " + err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("read Orca alert %s: %w", id, err)
	}
	r := a.Sort(newBaseTree(ctx, setup), repo)
	if r.Group != findings.GroupToFix {
		return nil, &codedError{code: exitUsage, msg: fmt.Sprintf("refused: Orca alert %s is %s: %s", id, r.Group, r.Why)}
	}
	return r.Finding, nil
}

// sarifFinding is run's finding from a SARIF log: the result whose id is
// id, sorted as scan sorts it. One scan would not list as to-fix is
// refused before any run starts (exit 2) with its reason.
func sarifFinding(ctx context.Context, setup *pipeline.Setup, file, id string) (*findings.Finding, error) {
	scan, err := readSARIFScan(ctx, setup, file)
	if err != nil {
		return nil, &codedError{code: exitUsage, msg: err.Error()}
	}
	for _, r := range scan.Results {
		if r.ID != id {
			continue
		}
		if r.Group != findings.GroupToFix {
			return nil, &codedError{code: exitUsage, msg: fmt.Sprintf("refused: result %s of %s is %s: %s", id, file, r.Group, r.Why)}
		}
		return r.Finding, nil
	}
	return nil, &codedError{code: exitUsage, msg: fmt.Sprintf("%s has no result %s (%d results; fixrail scan --sarif %s lists them)", file, id, len(scan.Results), file)}
}
