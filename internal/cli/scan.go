package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	ghforge "github.com/fixrail/fixrail/internal/forge/github"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var cmdScan = &command{
	Name:  "scan",
	Usage: "--repo OWNER/NAME | --repos OWNER/A,OWNER/B|@FILE; [--label NAME] [--base BRANCH] [--dir CLONE] [--sarif FILE] [--orca] [--json | --matrix] | --sarif FILE [--dir CLONE] [--base BRANCH] [--orca] [--json]",
	Short: "what is open on GitHub repositories, in a scanner's SARIF log or on Orca, partitioned: to-fix, branch-exists, posture, unfixable",
	Long: `
Scan reads, never writes: the open issues carrying the label (default
fixrail, the reference workflow's trigger), the open Dependabot,
code-scanning and secret-scanning alerts, the fixrail/* branches and
fixrail's open pull requests, and the base branch's protection; with
--sarif FILE, a scanner's SARIF 2.1.0 log (any tool: gosec, Semgrep,
CodeQL, ESLint, gitleaks, tfsec, checkov, KICS, Trivy, …) checked against
the clone in --dir; with --orca, the repository's open Orca alerts (the
orca: section of fixrail.yaml; ORCA_API_TOKEN). Then it sorts every
finding into one of four groups:

  to-fix         a run would start on it now (budget permitting)
  branch-exists  fixrail/<id> is on the repository (with its PR when one is
                 open): work awaiting review, a run would HALT in-flight
  unfixable      a human acts first: the issue carries fixrail:escalated or
                 fixrail:not-repro, the alert's ecosystem has no manifest
                 reader, or a scanner's result has no fix type, no file in
                 the repository, or a masked secret (each says why)
  posture        the repository, not a finding: a base branch that does not
                 require a pull request (every run would HALT
                 no-branch-protection), alerts the token cannot read,
                 and with --dir a fixrail.yaml on the base that loosened
                 the rails since the runs the ledger recorded, or that
                 pushes fixrail's branches to the repository itself while a
                 workflow on the base runs on pull_request with secrets; a
                 scanner run that did not complete; a posture alert (Orca's
                 scm_posture)

A scanner's result is named by a finding id, <tool>-<16 hex>: a hash of
the tool, the rule, the file and the flagged lines' content (whitespace
removed; not the line number, so an edit above it keeps the id), and its
occurrence; rerunning the scanner on the same tree gives the same ids.
run --sarif FILE --result ID works one. Its fix type (sast, secret, iac)
comes from fixrail.yaml's scanners: entry for the tool, else the rule's
tags, else the tool's name; never from a message.

With --dir CLONE, scan also reads that clone's fixrail.yaml on the base and
the ledger it names (the SQLite file in CLONE/.fixrail, or ledger.url) and
reports, as posture, a change that widened paths.fixable, shrank
paths.sensitive or raised a cap since the last run recorded for the
repository — as doctor does. Without it scan has no ledger to compare with
and says nothing of the rails.

The token comes from FIXRAIL_GITHUB_TOKEN or GITHUB_TOKEN, as for run. The
base is --base, else the repository's default branch. Titles and package
names are untrusted: --json escapes them, the text output replaces control
characters.

--repos owner/a,owner/b (or @FILE, one a line) scans each in turn; --json
prints an array of the results, which run --batch reads. --matrix prints
the to-fix findings of every repository scanned as a GitHub Actions
matrix on one line, {"include": [{"repo", "finding", "kind", "number"}]}
(at most 256: the rest waits for the next sweep), and exits 0 when it
could look — the input of fixrail init --sweep's fan-out job.

Exit codes (lint's and resolve-version's contract):
  0  nothing to do: no finding to fix, no posture problem
  5  found something: a finding to fix, or a posture problem
  2  usage: bad arguments, no token
  1  could not look: rate-limited (the note names the reset), GitHub
     unavailable, the repository or its issues unreadable; never 0, never
     5 (alerts the token may not read are posture, the rest is scanned)`,
	Flags: func() *flag.FlagSet { fs, _ := scanFlags(); return fs },
	Run:   runScan,
}

type scanOpts struct {
	repo, label, base, dir string
	sarif                  string
	orca                   bool
	json                   bool
	x                      scanMoreOpts // --repos, --matrix (scan_repos.go)
}

func scanFlags() (*flag.FlagSet, *scanOpts) {
	o := &scanOpts{}
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", "", "the GitHub repository, `owner/name`")
	fs.StringVar(&o.label, "label", "fixrail", "the label that starts a run on an issue")
	fs.StringVar(&o.base, "base", "", "the base branch whose protection is checked (default: the repository's default branch)")
	fs.StringVar(&o.dir, "dir", "", "also compare this clone's fixrail.yaml on the base with the rails the ledger recorded (posture)")
	fs.StringVar(&o.sarif, "sarif", "", "also sort the results of a scanner's SARIF 2.1.0 log `file` (the clone is --dir, default .)")
	fs.BoolVar(&o.orca, "orca", false, "also sort the repository's open Orca alerts (orca: in fixrail.yaml; the token from ORCA_API_TOKEN)")
	fs.BoolVar(&o.json, "json", false, "print the scan as JSON")
	o.x.flags(fs)
	return fs, o
}

// Scan groups.
const (
	groupToFix        = "to-fix"
	groupBranchExists = "branch-exists"
	groupUnfixable    = "unfixable"
	groupPosture      = "posture"
)

// scanItem is one finding, or one fact about the repository, and its group.
type scanItem struct {
	Group   string `json:"group"`
	Finding string `json:"finding,omitempty"` // gh-N, dependabot-N
	Kind    string `json:"kind"`              // issue, alert, repository
	Number  int    `json:"number,omitempty"`
	Title   string `json:"title,omitempty"`
	URL     string `json:"url,omitempty"`
	Why     string `json:"why"`
	// A scanner's alert: what it is, by the scanner (untrusted).
	FixType  string `json:"fix_type,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity,omitempty"`
}

type scanResult struct {
	Repo  string `json:"repo,omitempty"`
	Dir   string `json:"dir,omitempty"`
	Base  string `json:"base"`
	Label string `json:"label,omitempty"`
	// SARIF is the log --sarif read, absolute: run --batch runs its
	// kind-sarif items from it.
	SARIF string     `json:"sarif,omitempty"`
	Items []scanItem `json:"items"`
	// Skipped counts scanner results that are no findings (suppressed,
	// passing, absent from the baseline).
	Skipped int `json:"skipped,omitempty"`
}

func runScan(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := scanFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.label == "" {
		return usagef("--label must not be empty")
	}
	if o.x.repos != "" || o.x.matrix {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		return scanMany(ctx, stdio, o)
	}
	if o.repo == "" && o.sarif == "" && !o.orca {
		return usagef("--repo OWNER/NAME is required (or --repos, --sarif FILE, or --orca)")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	res := &scanResult{Base: o.base, Items: []scanItem{}}
	var inFlight func(string) string
	if o.repo != "" {
		if _, _, err := ghforge.ParseRepo(o.repo); err != nil {
			return usagef("--repo: %v", err)
		}
		f, err := ghforge.FromEnv(os.LookupEnv, o.repo, nil)
		if err != nil {
			return usagef("%v", err)
		}
		if res, inFlight, err = scan(ctx, f, o, stdio.Stderr); err != nil {
			return &errServiceUnavailable{err}
		}
		if o.dir != "" {
			if err := scanRails(ctx, res, o, stdio.Stderr); err != nil {
				return err
			}
		}
	}
	if o.sarif != "" || o.orca {
		if o.dir == "" {
			o.dir = "."
		}
		if err := scanScanners(ctx, res, o, inFlight, stdio.Stderr); err != nil {
			return err
		}
	}
	if o.json {
		if err := writeJSON(stdio.Stdout, res); err != nil {
			return err
		}
		return res.verdict()
	}
	printScan(stdio.Stdout, res)
	return res.verdict()
}

// verdict is lint's contract: something to act on is 5.
func (r *scanResult) verdict() error {
	n := 0
	for _, it := range r.Items {
		if it.Group == groupToFix || it.Group == groupPosture {
			n++
		}
	}
	if n > 0 {
		return &errFound{n}
	}
	return nil
}

// scan reads what scan needs, a progress line per read on progress, and
// sorts it; inFlight says why a finding id is already being worked.
func scan(ctx context.Context, f *ghforge.Forge, o *scanOpts, progress io.Writer) (_ *scanResult, inFlight func(string) string, _ error) {
	step := func(s string) { fmt.Fprintf(progress, "scan: %s\n", s) }
	res := &scanResult{Repo: f.Repo(), Base: o.base, Label: o.label, Items: []scanItem{}}
	if res.Base == "" {
		step("the default branch")
		b, err := f.DefaultBranch(ctx)
		if err != nil {
			return nil, nil, err
		}
		res.Base = b
	}
	posture := func(why string) {
		res.Items = append(res.Items, scanItem{Group: groupPosture, Kind: "repository", Why: why})
	}
	step("the protection of " + res.Base)
	if _, err := f.AssertProtected(ctx, res.Base, nil); err != nil {
		if errors.Is(err, forge.ErrRateLimited) || errors.Is(err, forge.ErrUnavailable) {
			return nil, nil, err
		}
		posture("every run would HALT no-branch-protection: " + err.Error())
	}
	step("fixrail branches and open pull requests")
	branches, err := f.FixBranches(ctx)
	if err != nil {
		return nil, nil, err
	}
	fixes, err := f.OpenFixes(ctx)
	if err != nil {
		return nil, nil, err
	}
	// inFlight says why a finding is already being worked, or "".
	inFlight = func(id string) string {
		for _, fx := range fixes {
			if fx.ID == id {
				return fmt.Sprintf("%s%s is open as PR #%d, awaiting review", forge.BranchPrefix, id, fx.Number)
			}
		}
		if slices.Contains(branches, forge.BranchPrefix+id) {
			return forge.BranchPrefix + id + " is on the repository with no open PR: a run would HALT in-flight until it is merged or deleted"
		}
		return ""
	}

	step("open issues labelled " + o.label)
	issues, err := f.LabelledIssues(ctx, o.label)
	if err != nil {
		return nil, nil, err
	}
	for _, is := range issues {
		id := "gh-" + strconv.Itoa(is.Number)
		it := scanItem{Finding: id, Kind: "issue", Number: is.Number, Title: is.Title, URL: is.URL}
		switch {
		case slices.Contains(is.Labels, forge.LabelEscalated):
			it.Group, it.Why = groupUnfixable, "escalated: a human takes it from here; remove "+forge.LabelEscalated+" to let fixrail try again"
		case slices.Contains(is.Labels, forge.LabelNotRepro):
			it.Group, it.Why = groupUnfixable, "not reproduced: add detail to the issue, then remove "+forge.LabelNotRepro
		default:
			if why := inFlight(id); why != "" {
				it.Group, it.Why = groupBranchExists, why
			} else {
				it.Group, it.Why = groupToFix, "labelled "+o.label+", no fixrail branch"
			}
		}
		res.Items = append(res.Items, it)
	}

	step("open Dependabot alerts")
	alerts, err := f.OpenAlerts(ctx)
	if errors.Is(err, forge.ErrRateLimited) || errors.Is(err, forge.ErrUnavailable) {
		return nil, nil, err
	}
	if err != nil {
		posture("Dependabot alerts not read: " + err.Error())
	}
	for _, a := range alerts {
		id := "dependabot-" + strconv.Itoa(a.Number)
		it := scanItem{Finding: id, Kind: "alert", Number: a.Number, Title: a.Package + " (" + a.Ecosystem + ")", URL: a.URL}
		if _, err := findings.DependabotEcosystem(a.Ecosystem); err != nil {
			it.Group, it.Why = groupUnfixable, err.Error()
		} else if why := inFlight(id); why != "" {
			it.Group, it.Why = groupBranchExists, why
		} else {
			it.Group, it.Why = groupToFix, "open alert ("+a.GHSA+"), no fixrail branch"
		}
		res.Items = append(res.Items, it)
	}
	if err := scanGitHubScanning(ctx, f, res, inFlight, step, posture); err != nil {
		return nil, nil, err
	}
	return res, inFlight, nil
}

// scanGitHubScanning lists the open code- and secret-scanning alerts,
// sorted as a SARIF result is but without a clone: the path's shape is
// checked here, its presence in the tree (and a secret's) by the run.
// Alerts the token may not read are posture, as Dependabot's are.
func scanGitHubScanning(ctx context.Context, f *ghforge.Forge, res *scanResult, inFlight func(string) string, step, posture func(string)) error {
	halts := func(err error) bool {
		return errors.Is(err, forge.ErrRateLimited) || errors.Is(err, forge.ErrUnavailable)
	}
	var sorted []findings.ScannerResult
	step("open code-scanning alerts")
	cs, err := f.OpenCodeScanningAlerts(ctx)
	if halts(err) {
		return err
	}
	if err != nil {
		posture("code-scanning alerts not read: " + err.Error())
	}
	for _, a := range cs {
		sorted = append(sorted, a.Sort(nil, "", res.Repo))
	}
	step("open secret-scanning alerts")
	ss, err := f.OpenSecretScanningAlerts(ctx)
	if halts(err) {
		return err
	}
	if err != nil {
		posture("secret-scanning alerts not read: " + err.Error())
	}
	for _, a := range ss {
		sorted = append(sorted, a.Sort(nil, "", res.Repo))
	}
	for _, r := range sorted {
		it := scannerItem("alert", r)
		if it.Group == groupToFix {
			if why := inFlight(r.ID); why != "" {
				it.Group, it.Why = groupBranchExists, why
			}
		}
		res.Items = append(res.Items, it)
	}
	return nil
}

func printScan(w io.Writer, res *scanResult) {
	if res.Repo != "" {
		fmt.Fprintf(w, "%s (base %s, label %s)\n", untrusted.OneLine(res.Repo), untrusted.OneLine(res.Base), untrusted.OneLine(res.Label))
	} else {
		fmt.Fprintf(w, "clone %s (base %s)\n", untrusted.OneLine(res.Dir), untrusted.OneLine(res.Base))
	}
	for _, g := range []string{groupToFix, groupBranchExists, groupUnfixable, groupPosture} {
		var in []scanItem
		for _, it := range res.Items {
			if it.Group == g {
				in = append(in, it)
			}
		}
		fmt.Fprintf(w, "\n%s (%d)\n", g, len(in))
		for _, it := range in {
			if it.Finding == "" {
				fmt.Fprintf(w, "  %s\n", untrusted.OneLine(it.Why))
				continue
			}
			title := it.Title
			if it.Tool != "" {
				title = fmt.Sprintf("%s [%s %s, %s]", it.Title, orDash(it.FixType), orDash(it.Severity), it.Tool)
			}
			fmt.Fprintf(w, "  %-16s %s\n  %-16s %s\n", it.Finding, untrusted.OneLine(title), "", untrusted.OneLine(it.Why))
		}
	}
	if res.Skipped > 0 {
		fmt.Fprintf(w, "\n(%d scanner results are no findings: suppressed, passing or absent from the baseline)\n", res.Skipped)
	}
}

// scanRails adds doctor's rails check, as posture, for the clone in
// o.dir: the base's fixrail.yaml against the rails the ledger recorded for
// the repository's runs (keyed as a GitHub run keys them).
func scanRails(ctx context.Context, res *scanResult, o *scanOpts, progress io.Writer) error {
	fmt.Fprintf(progress, "scan: the rails of %s against the ledger\n", o.dir)
	setup, err := pipeline.Prepare(ctx, o.dir, o.base)
	if err != nil {
		return err
	}
	defer setup.Close()
	c := railsCheck(ctx, setup, "github.com/"+strings.ToLower(o.repo))
	if c.Status != "ok" {
		res.Items = append(res.Items, scanItem{Group: groupPosture, Kind: "repository", Why: c.Detail})
	}
	// Where fixrail's branches go, against what the PR's CI gives them.
	if c := prSecretsCheck(ctx, setup); c.Status != "ok" {
		res.Items = append(res.Items, scanItem{Group: groupPosture, Kind: "repository", Why: c.Detail})
	}
	return nil
}
