package fixtype

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/scanner"
	"github.com/fixrail/fixrail/internal/verdict"
)

// scannedType is a fix type whose oracle is a configured scanner: sast
// and iac. The harness plans from the finding's evidence (no
// investigation), the agent edits the one affected file with Read and
// Edit and no shell, and the scanner — run by the harness in the sandbox
// on the affected files — judges: red on the base at the finding's
// location, green on the candidate with the rule gone and nothing as
// severe new. With no scanner configured for the finding's tool, both
// pass unconfirmed (needs-review) and the LLM validation gate decides.
func scannedType(name, doc, subject string, budget int, implied []string, example string) *Type {
	return &Type{
		Name:       name,
		Doc:        doc,
		Subject:    subject,
		Budget:     Budget{MaxDiffLines: budget},
		Implied:    implied,
		Check:      func(*config.Config) error { return nil },
		Scope:      func(*config.Config) []string { return nil },
		Plan:       scannedPlan,
		Fix:        func(b Brief, p *Plan) string { return scannedFix(b, p, example) },
		Red:        scannedRed,
		Gates:      scannedGates,
		CommitNote: scannedNote,
		Section:    scannedSection,
		Replay:     scannedReplay,
	}
}

// scanPlan is a scanned type's Plan.Detail.
type scanPlan struct {
	Tool     string
	Rule     string
	Path     string
	Line     int
	EndLine  int
	Severity string
	Scanner  *config.Scanner
	Builds   []BuildCheck
	// Filled as the oracle runs, and kept in the report (rep).
	red, green *scanner.Report
	rep        *ScanPlanRef
}

// ScanPlanRef is what the run report keeps of a scanned plan.
type ScanPlanRef struct {
	Tool        string          `json:"tool"`
	Rule        string          `json:"rule"`
	Path        string          `json:"path"`
	Line        int             `json:"line,omitempty"`
	EndLine     int             `json:"end_line,omitempty"`
	Severity    string          `json:"severity,omitempty"`
	Scanner     string          `json:"scanner,omitempty"`
	BuildChecks []BuildCheck    `json:"build_checks,omitempty"`
	Red         *scanner.Report `json:"red,omitempty"`
	Green       *scanner.Report `json:"green,omitempty"`
	Unjudged    string          `json:"unjudged,omitempty"`
}

func scanOf(p *Plan) *scanPlan { return p.Detail.(*scanPlan) }

// evidenceFile validates the finding's path and that the base holds it as
// a regular file.
func evidenceFile(dir string, ev *findings.Evidence) (string, error) {
	p, err := pathguard.CleanRel(ev.Path)
	if err != nil {
		return "", &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonUnsafePath, Err: fmt.Errorf("the finding's path: %v", err)}
	}
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil || !fi.Mode().IsRegular() {
		return "", &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: fmt.Errorf("the finding names %s, which the base does not hold as a regular file", p)}
	}
	return p, nil
}

func scannedPlan(_ context.Context, e *Env, dir string, f *findings.Finding) (*Plan, error) {
	ev := f.Evidence
	if ev == nil || ev.Path == "" || ev.Rule == "" {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: errors.New("the finding names no file and rule the scanner can be asked about")}
	}
	if !ruleID().MatchString(ev.Rule) {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: errors.New("the finding's rule id is not one a scanner reports")}
	}
	p, err := evidenceFile(dir, ev)
	if err != nil {
		return nil, err
	}
	// The commit's trailers record these values for verify: only values
	// that parse back are planned on.
	alert := &Alert{Tool: ev.Tool, Rule: ev.Rule, Path: p, Line: ev.Line, EndLine: ev.EndLine, Severity: ev.Severity}
	if err := ValidAlert(*alert); err != nil {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: fmt.Errorf("the finding's %v", err)}
	}
	plan := scannedPlanOf(e, dir, alert)
	sp := scanOf(plan)
	loc := p
	if ev.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p, ev.Line)
	}
	scn := "(none configured: no oracle)"
	if sp.Scanner != nil {
		scn = sp.Scanner.Name
	}
	plan.Summary = fmt.Sprintf("%s reported %s at %s", orNone(ev.Tool), ev.Rule, loc)
	plan.Values = fmt.Sprintf("file: %s\nline: %d\nend line: %d\nrule: %s\ntool: %s\nseverity: %s\nscanner the harness runs: %s", p, ev.Line, max(ev.EndLine, ev.Line), ev.Rule, orNone(ev.Tool), orNone(ev.Severity), scn)
	return plan, nil
}

// scannedPlanOf is the plan for alert on the base checked out in dir: the
// scanner the base's configuration runs for its tool, the affected file's
// build check.
func scannedPlanOf(e *Env, dir string, alert *Alert) *Plan {
	a := *alert
	sp := &scanPlan{Tool: a.Tool, Rule: a.Rule, Path: a.Path, Line: a.Line, EndLine: a.EndLine, Severity: a.Severity, Builds: BuildChecks(dir, []string{a.Path})}
	if a.Tool != "" {
		sp.Scanner = e.Config.ScannerFor(a.Tool)
	}
	return &Plan{Files: []string{a.Path}, Report: sp.ref(), Detail: sp, Alert: alert}
}

// scannedReplay is the plan a sast or iac commit's claim stands for: the
// alert its trailers name, judged again by the scanner the base's
// fixrail.yaml (e.Config) runs for the tool, on a fresh checkout of the
// base. The scanner sees the base and the commit as a run's did; with none
// configured, red and green say so (needs-review), as in the run.
func scannedReplay(ctx context.Context, e *Env, c Claimed) (*Plan, error) {
	a := c.Alert
	if a == nil {
		return nil, fmt.Errorf("%w: a scanned fix's claim names no scanner result (no Fixrail-Rule trailer)", ErrClaimDiffers)
	}
	if err := ValidAlert(*a); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrClaimDiffers, err)
	}
	var plan *Plan
	if err := e.Read(ctx, "scanner-plan", e.BaseSHA, func(dir string) error {
		if _, err := evidenceFile(dir, &findings.Evidence{Path: a.Path}); err != nil {
			return fmt.Errorf("%w: %v", ErrClaimDiffers, err)
		}
		plan = scannedPlanOf(e, dir, a)
		return nil
	}); err != nil {
		return nil, err
	}
	// A run changes only the file its plan names (diff-within-plan): the
	// alert's. A claimed file beside it is no scanned fix of a run's,
	// whatever the scanner says of the alert's file.
	for _, f := range c.Files {
		if !slices.Contains(plan.Files, f) {
			return nil, fmt.Errorf("%w: the claim's file %s is not the alert's %s, the one file a scanned fix changes", ErrClaimDiffers, f, a.Path)
		}
	}
	return plan, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (sp *scanPlan) ref() *ScanPlanRef {
	if sp.rep != nil {
		sp.rep.Red, sp.rep.Green = sp.red, sp.green
		return sp.rep
	}
	r := &ScanPlanRef{Tool: sp.Tool, Rule: sp.Rule, Path: sp.Path, Line: sp.Line, EndLine: sp.EndLine, Severity: sp.Severity, BuildChecks: sp.Builds, Red: sp.red, Green: sp.green}
	if sp.Scanner != nil {
		r.Scanner = sp.Scanner.Name
	} else {
		r.Unjudged = sp.unjudged()
	}
	sp.rep = r
	return r
}

func (sp *scanPlan) unjudged() string {
	// The tool is the finding's (a SARIF driver's name): a code span, as
	// every value a detail quotes, since the body prints this sentence as
	// prose ("www.example.com" would render as a link).
	return fmt.Sprintf("no scanner in fixrail.yaml answers for the tool %s: the harness cannot run the finding's scanner, so the LLM validation gate decides and the PR is labelled needs-review", markdown.Code(sp.Tool))
}

// scan runs the plan's scanner on paths at rev through the harness.
func scan(ctx context.Context, e *Env, label, rev string, sc *config.Scanner, paths []string) (*scanner.Report, error) {
	return scanner.Run(ctx, sc, paths, func(ctx context.Context, argv func(dir, out string) []string, ro []string, timeout time.Duration, read func(dir, out string) error) (sandbox.Result, error) {
		return e.Scan(ctx, label, rev, argv, ro, timeout, read)
	})
}

// scannerOutput is what a gate keeps of a scanner's run for the report:
// the scanner's own results, reduced (never its messages or snippets),
// and its exit.
func scannerOutput(rep *scanner.Report, where string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s: %s (%s, %s)\n", rep.Scanner, where, strings.Join(rep.Argv, " "), rep.Exit.Describe(), rep.Took.Round(time.Millisecond))
	if len(rep.Results) == 0 {
		b.WriteString("  no results\n")
	}
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	return b.String()
}

func scannedRed(e *Env, p *Plan) *gates.Gate {
	sp := scanOf(p)
	return &gates.Gate{
		Name:   "scanner-red",
		Doc:    "the configured scanner, run by the harness on the affected file of the base, reports the finding's rule at its location",
		Reason: verdict.ReasonGreenOnBase,
		Fails:  verdict.NotRepro,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			if sp.Scanner == nil {
				return gates.Verdict{Pass: true, Unconfirmed: true, Label: gates.LabelNeedsReview, Detail: sp.unjudged()}, nil
			}
			rep, err := scan(ctx, e, "scanner-red", c.Commit, sp.Scanner, []string{sp.Path})
			if err != nil {
				return gates.Verdict{}, err
			}
			sp.red = rep
			sp.ref()
			out := scannerOutput(rep, "the base")
			at := slices.DeleteFunc(scanner.Of(rep.Results, sp.Rule, sp.Path), func(r scanner.Result) bool { return !r.At(sp.Line, sp.EndLine) })
			if len(at) == 0 {
				return gates.Verdict{Detail: fmt.Sprintf("%s does not report %s at %s on the base", sp.Scanner.Name, markdown.Code(sp.Rule), markdown.Code(sp.loc())), Output: out}, nil
			}
			if sp.Severity == "" {
				sp.Severity = at[0].Severity
				if p.Alert != nil && severity().MatchString(sp.Severity) {
					p.Alert.Severity = sp.Severity
				}
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("%s reports %s on the base", sp.Scanner.Name, markdown.Code(at[0].String())), Output: out}, nil
		},
	}
}

func (sp *scanPlan) loc() string {
	if sp.Line > 0 {
		return fmt.Sprintf("%s:%d", sp.Path, sp.Line)
	}
	return sp.Path
}

// scannedGates are a scanned type's fix gates: no suppression, the
// scanner green, the build check.
func scannedGates(e *Env, p *Plan) []*gates.Gate {
	sp := scanOf(p)
	return []*gates.Gate{noSuppression(), scannedGreen(e, p), buildCheckGate(e, func() []BuildCheck { return sp.Builds })}
}

func scannedGreen(e *Env, p *Plan) *gates.Gate {
	sp := scanOf(p)
	return &gates.Gate{
		Name:   "scanner-green",
		Doc:    "on the candidate the scanner no longer reports the rule in the affected files, and reports nothing new as severe as the finding in any changed file",
		Reason: verdict.ReasonOracleStillRed,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			if sp.Scanner == nil {
				return gates.Verdict{Pass: true, Unconfirmed: true, Label: gates.LabelNeedsReview, Detail: sp.unjudged()}, nil
			}
			paths := slices.Clone(p.Files)
			for _, f := range c.Changed {
				if e, ok := c.Files[f]; ok && !e.Deleted() && !slices.Contains(paths, f) {
					paths = append(paths, f)
				}
			}
			paths = slices.DeleteFunc(paths, func(f string) bool { e, ok := c.Files[f]; return ok && e.Deleted() })
			if len(paths) == 0 {
				return gates.Verdict{Detail: "the fix deleted the affected file: nothing is left for the scanner to judge"}, nil
			}
			rep, err := scan(ctx, e, "scanner-green", c.Commit, sp.Scanner, paths)
			if err != nil {
				return gates.Verdict{}, err
			}
			sp.green = rep
			sp.ref()
			out := scannerOutput(rep, "the candidate")
			var still []scanner.Result
			for _, f := range p.Files {
				still = append(still, scanner.Of(rep.Results, sp.Rule, f)...)
			}
			if len(still) > 0 {
				return gates.Verdict{Detail: fmt.Sprintf("%s still reports %s on the candidate: %s", sp.Scanner.Name, markdown.Code(sp.Rule), markdown.Code(scanner.Describe(still, 5))), Output: out}, nil
			}
			var base []scanner.Result
			if sp.red != nil {
				base = sp.red.Results
			}
			floor := sp.Severity
			if floor == "" {
				floor = "high"
			}
			if n := scanner.New(base, rep.Results, floor); len(n) > 0 {
				return gates.Verdict{Reason: verdict.ReasonNewScannerResult, Detail: fmt.Sprintf("the fix brings a result as severe as the finding (%s or worse): %s", floor, markdown.Code(scanner.Describe(n, 5))), Output: out}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("%s reports no %s in %s and nothing new of %s severity or worse in %d changed file(s)", sp.Scanner.Name, markdown.Code(sp.Rule), markdown.Code(sp.Path), floor, len(paths)), Output: out}, nil
		},
	}
}

// suppressions are the in-source markers scanners honour to ignore a
// result: a fix that adds one silences the oracle instead of fixing the
// code, so it is refused whatever the scanner then says. gosec honours
// //gosec:disable as it does #nosec, and drops what it silences from its
// log. Semgrep reads " nosem" with or without "grep", in any case, as
// the start of its marker (whatever follows it).
// ESLint's are eslint-disable… and a configuration comment
// (/* eslint security/detect-eval-with-expression: off */) that turns the
// rule off for the file.
var suppressions = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(#nosec|nosec\b|gosec:disable|nolint|nosem|semgrep-ignore|codeql\[|lgtm\[|NOSONAR|checkov:skip|tfsec:ignore|trivy:ignore|kics-scan ignore|gitleaks:allow|eslint-disable|/\*\s*eslint\s|noqa|bandit:|pragma: allowlist|detect-secrets)`)
})

// goHides are the lines that take a Go file out of what a scanner reads
// while the file stays in the tree: a build constraint (gosec loads
// packages as the default build does, so a file //go:build ignore — or a
// tag only the release build sets — leaves is not scanned, and go build
// ./... does not build it either), cgo's import "C" (gosec drops the
// file's results, or the whole file when cgo is off), and the
// generated-code header (gosec -exclude-generated skips the file).
var goHides = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*//\s*go:build\b|^\s*//\s*\+build\b|^\s*(import\s+)?"C"\s*(//.*)?$|^// Code generated .* DO NOT EDIT\.$`)
})

// noSuppression refuses a fix that adds a scanner-suppression marker, or
// a line that hides a Go file from the scanner.
func noSuppression() *gates.Gate {
	return &gates.Gate{
		Name:   "no-suppression",
		Doc:    "the fix adds no marker that makes a scanner ignore a result (#nosec, nosemgrep, checkov:skip, gitleaks:allow, …) nor a Go build constraint, import \"C\" or generated-code header that takes the file out of the scan",
		Reason: verdict.ReasonScannerSuppressed,
		Run: func(_ context.Context, c *gates.Change) (gates.Verdict, error) {
			for _, l := range addedLines(c.Diff) {
				if m := suppressions().FindString(l.text); m != "" {
					return gates.Verdict{Detail: fmt.Sprintf("%s adds %s, a scanner suppression", markdown.Code(l.path), markdown.Code(m))}, nil
				}
				if strings.HasSuffix(l.path, ".go") && goHides().MatchString(l.text) {
					return gates.Verdict{Detail: fmt.Sprintf("%s adds %s, which takes the file out of what the scanner reads", markdown.Code(l.path), markdown.Code(strings.TrimSpace(l.text)))}, nil
				}
			}
			return gates.Verdict{Pass: true, Detail: "no suppression marker added"}, nil
		},
	}
}

type diffLine struct{ path, text string }

// addedLines are the diff's added lines, with their file.
func addedLines(d gitx.TreeDiff) []diffLine {
	var out []diffLine
	cur := ""
	for _, l := range strings.Split(d.Text, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			cur = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
		case strings.HasPrefix(l, "+"):
			out = append(out, diffLine{cur, l[1:]})
		}
	}
	return out
}

func scannedFix(b Brief, p *Plan, example string) string {
	sp := scanOf(p)
	var s strings.Builder
	if sp.Scanner != nil {
		fmt.Fprintf(&s, "The harness ran the scanner %s on the affected file of the unpatched tree and saw it report the finding's rule at the finding's location (the plan below says which). Now:\n", sp.Scanner.Name)
	} else {
		s.WriteString("No scanner is configured for this finding's tool, so the harness could not confirm it; fix what the finding describes if the code shows it (the plan below says where). Now:\n")
	}
	fmt.Fprintf(&s, "- make the smallest change to the planned file that removes the cause (%s), keeping its behaviour and the existing suite green;\n", example)
	s.WriteString("- never silence the scanner instead: no suppression comment (#nosec, nolint, nosemgrep, checkov:skip, …), no renaming or indirection that only hides the pattern — the harness refuses such a change;\n")
	s.WriteString("- introduce no other weakness: the scanner runs again on every file you change, and a new result as severe as this one fails the fix;\n")
	s.WriteString("- change only the planned file: you can read and edit files, and you have no shell;\n")
	fmt.Fprintf(&s, "- write the result to %s (also in $FIXRAIL_RESULT): {\"summary\": \"…\", \"files_changed\": [every file you changed]}.\n", b.ResultPath)
	return s.String()
}

func scannedNote(e *Env, p *Plan) string {
	sp := scanOf(p)
	if sp.Scanner == nil {
		return fmt.Sprintf("Addresses %s in %s; no scanner configured to confirm it (needs review).\n", sp.Rule, sp.Path)
	}
	return fmt.Sprintf("Removes %s from %s: %s reported it on %s and does not after.\n", sp.Rule, sp.Path, sp.Scanner.Name, short(e.BaseSHA))
}

func scannedSection(e *Env, p *Plan, commit string) string {
	sp := scanOf(p)
	var b strings.Builder
	b.WriteString("### What was reproduced\n\n")
	if sp.Scanner == nil {
		fmt.Fprintf(&b, "Nothing was reproduced: %s The finding names %s in %s.\n\n", sp.unjudged()+".", markdown.Code(sp.Rule), markdown.Code(sp.loc()))
		return b.String()
	}
	fmt.Fprintf(&b, "The harness ran the scanner %s (%s) on %s of a fresh checkout of %s (%s): it reported %s at the finding's location. ",
		markdown.Code(sp.Scanner.Name), markdown.Code(strings.Join(sp.redArgv(), " ")), markdown.Code(sp.Path), markdown.Code(e.Base), short(e.BaseSHA), markdown.Code(sp.Rule))
	fmt.Fprintf(&b, "On a fresh checkout of commit %s, the same scanner, run on every file the fix changed, reports no %s in %s and nothing new of %s severity or worse.\n\n",
		short(commit), markdown.Code(sp.Rule), markdown.Code(sp.Path), markdown.Code(orNone(sp.Severity)))
	b.WriteString("### What the scanner does not prove\n\n")
	b.WriteString("The scanner judges the patterns its rules know: a fix it accepts can still be wrong in ways it cannot see, and the rule's absence is not a proof the weakness is gone. The LLM validation and the suite are the other checks; the reviewer is the last.\n")
	return b.String()
}

func (sp *scanPlan) redArgv() []string {
	if sp.red != nil {
		return sp.red.Argv
	}
	return sp.Scanner.Command
}
