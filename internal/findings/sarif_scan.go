package findings

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/sarif"
)

// SARIF intake from any scanner. A log's results are read as GitHub code
// scanning reads them (sarif's resolution: rules in extensions, default
// levels, artifact indexes, uri bases), suppressed and passing results
// are left out, and every other result is sorted: to-fix, unfixable with
// the reason, or posture.

// Limits on a log, after GitHub's own ingestion limits.
const (
	maxSARIFRuns    = 20
	maxSARIFResults = 25000
)

// ScannerResult is one result of a scan, sorted.
type ScannerResult struct {
	// ID is the finding id (ScannerFindingID); "" for a fact about a
	// whole run (posture).
	ID    string `json:"finding,omitempty"`
	Group string `json:"group"`
	Why   string `json:"why"`
	// Finding is what a run works; its Secret is never serialised.
	Finding *Finding `json:"-"`
}

// SARIFScan is what ParseSARIF read.
type SARIFScan struct {
	Results []ScannerResult
	// Skipped counts results that are not findings: suppressed, passing,
	// not applicable, or absent from the baseline.
	Skipped int
}

// SARIFOptions are what sorting a log needs besides the log.
type SARIFOptions struct {
	// Tree is where a result's file must be (the base commit a run
	// works): the flagged lines are read from it for the id.
	Tree Tree
	// Root is the checkout the scanner ran in: a file:// URI beneath it
	// is made relative to it (as GitHub strips the checkout path).
	Root string
	// Configured is the fix type fixrail.yaml's scanners: give a tool's
	// results, "" when no entry answers for it (config.ScannerFor).
	Configured func(tool string) string
	// Source names the log in each finding's Source.
	Source string
}

// ReadSARIF reads and sorts a SARIF log file (a regular file of at most
// sarif.MaxLogSize bytes).
func ReadSARIF(path string, opt SARIFOptions) (*SARIFScan, error) {
	data, err := readLimited(path, sarif.MaxLogSize)
	if err != nil {
		return nil, err
	}
	if opt.Source == "" {
		opt.Source = "sarif:" + path
	}
	return ParseSARIF(data, opt)
}

// ParseSARIF sorts a SARIF log's results.
func ParseSARIF(data []byte, opt SARIFOptions) (*SARIFScan, error) {
	log, err := sarif.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	if len(log.Runs) > maxSARIFRuns {
		return nil, fmt.Errorf("%w: the SARIF log has %d runs (limit %d)", ErrBadReport, len(log.Runs), maxSARIFRuns)
	}
	n := 0
	for _, r := range log.Runs {
		n += len(r.Results)
	}
	if n > maxSARIFResults {
		return nil, fmt.Errorf("%w: the SARIF log has %d results (limit %d)", ErrBadReport, n, maxSARIFResults)
	}
	out := &SARIFScan{Results: []ScannerResult{}}
	occ := map[string]int{}
	for ri := range log.Runs {
		run := &log.Runs[ri]
		tool := run.Tool.Driver.Name
		if why := runIncomplete(run); why != "" {
			out.Results = append(out.Results, ScannerResult{Group: GroupPosture, Why: fmt.Sprintf("run %d of %s did not complete (%s): its results may be partial; a result it missed is not listed", ri, bound(tool, 60), why)})
		}
		configured := ""
		if opt.Configured != nil {
			configured = opt.Configured(tool)
		}
		for i := range run.Results {
			res := &run.Results[i]
			if !sarif.Actionable(res) {
				out.Skipped++
				continue
			}
			a := sarifAlert(run, res, opt)
			f, group, why := a.classify(opt.Tree, configured, occ)
			out.Results = append(out.Results, ScannerResult{ID: f.ID, Group: group, Why: why, Finding: f})
		}
	}
	return out, nil
}

// runIncomplete says why a run did not complete, or "" (sarif's
// Incomplete, with the tool's message bounded).
func runIncomplete(run *sarif.Run) string {
	why, text := run.Incomplete()
	if why == "executionSuccessful is false" || why == "" {
		return why
	}
	return why + ": " + bound(text, 200)
}

// sarifAlert reduces a result to a ScannerAlert: the rule's metadata, the
// primary location (a file:// URI made relative when it lies in the
// checkout), the region, the snippet and, for a secret, its value.
func sarifAlert(run *sarif.Run, res *sarif.Result, opt SARIFOptions) *ScannerAlert {
	rule := run.Rule(res)
	level := sarif.Level(res, rule)
	a := &ScannerAlert{
		Tool:     run.Tool.Driver.Name,
		Rule:     run.RuleID(res),
		Level:    level,
		Severity: sarif.Severity(res, rule),
		Message:  res.Message.Text,
		Source:   opt.Source,
	}
	if a.Message == "" {
		a.Message = res.Message.Markdown
	}
	if rule != nil {
		a.RuleName = rule.Name
		if d := rule.ShortDescription; d != nil && d.Text != "" {
			a.RuleName = d.Text
		}
		if d := rule.FullDescription; d != nil {
			a.Description = firstText(d)
		}
		if h := rule.Help; h != nil {
			a.Help = firstText(h)
		}
		if rule.Properties != nil {
			a.Tags = slices.Clone(rule.Properties.Tags)
		}
	}
	if res.Properties != nil {
		a.Tags = append(a.Tags, res.Properties.Tags...)
	}
	if len(a.RuleName) > 200 || strings.ContainsAny(a.RuleName, "\n\r") {
		a.RuleName = "" // a sentence, not a name: the rule id titles it
	}
	al, reg := run.PrimaryLocation(res)
	if al != nil {
		p, abs, ok := run.ResolveURI(al)
		a.Path = p
		switch {
		case !ok:
			a.Path, a.PathProblem = al.URI, "its location is not a file of the repository (a URI fixrail does not take)"
		case abs:
			if rel, in := absUnder(opt.Root, p); in {
				a.Path = rel
			} else {
				a.PathProblem = "its file is outside the repository (an absolute path elsewhere)"
			}
		}
	}
	if reg != nil {
		a.Line, a.EndLine = reg.StartLine, reg.EndLine
		if reg.Snippet != nil {
			a.Snippet = reg.Snippet.Text
			a.Secret = reg.Snippet.Text
		}
	}
	return a
}

func firstText(m *sarif.Message) string {
	if m.Text != "" {
		return m.Text
	}
	return m.Markdown
}
