package batch

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Summary is a batch's outcome: what --json prints.
type Summary struct {
	Source   string         `json:"source"`
	DryRun   bool           `json:"dry_run"`
	Parallel int            `json:"parallel"`
	Counts   map[string]int `json:"counts"`
	Exit     int            `json:"exit"`
	Duration string         `json:"duration"`
	Runs     []Result       `json:"runs"`
	// Listed are the source's findings no run took (a scanner's
	// unfixable and posture results), each with why.
	Listed []Item `json:"listed,omitempty"`
}

// Summarise counts results by terminal state ("error" for a run with
// none) and decides the exit code.
func Summarise(source string, dryRun bool, parallel int, took time.Duration, results []Result) *Summary {
	s := &Summary{Source: source, DryRun: dryRun, Parallel: parallel, Counts: map[string]int{}, Exit: ExitCode(results),
		Duration: took.Round(time.Millisecond).String(), Runs: results}
	for _, t := range verdict.Terminals {
		s.Counts[string(t)] = 0
	}
	for _, r := range results {
		k := string(r.Terminal)
		if k == "" {
			k = "error"
		}
		s.Counts[k]++
	}
	return s
}

// what is a result's last column: the PR, a dry run's plan, the detail,
// or the error; escaped and capped, for one line.
func what(r Result) string {
	s := r.Detail
	switch {
	case r.Terminal == "" || r.Error != "":
		s = r.Error
	case r.PR != "":
		s = r.PR
	}
	return capped(s)
}

// capped is untrusted text on one line, at most 160 bytes.
func capped(s string) string {
	s = untrusted.OneLine(s)
	if len(s) > 160 {
		// Cut on a rune boundary: half a character is not text.
		s = strings.ToValidUTF8(s[:157], "") + "..."
	}
	return s
}

// listedID is a listed finding's id; a posture note has none.
func listedID(it Item) string {
	if it.ID == "" {
		return "-"
	}
	return untrusted.OneLine(it.ID)
}

// Print writes the summary table.
func (s *Summary) Print(w io.Writer) {
	width := len("FINDING")
	for _, r := range s.Runs {
		width = max(width, len(untrusted.OneLine(r.Item.ID)))
	}
	fmt.Fprintf(w, "%-*s  %-9s  %-26s  %9s  %s\n", width, "FINDING", "TERMINAL", "REASON", "TIME", "WHAT")
	for _, r := range s.Runs {
		term := string(r.Terminal)
		if term == "" {
			term = fmt.Sprintf("exit %d", r.Exit)
		}
		fmt.Fprintf(w, "%-*s  %-9s  %-26s  %9s  %s\n", width, untrusted.OneLine(r.Item.ID), term, untrusted.OneLine(r.Reason),
			r.Duration.Round(100*time.Millisecond), what(r))
	}
	var parts []string
	for _, k := range append(append([]verdict.Terminal{}, verdict.Terminals...), "error") {
		if n := s.Counts[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(s.Listed) > 0 {
		parts = append(parts, fmt.Sprintf("%d not run", len(s.Listed)))
	}
	for i, it := range s.Listed {
		if i == 0 {
			fmt.Fprintf(w, "\nNOT RUN (%d): what the source lists that no run takes\n", len(s.Listed))
		}
		fmt.Fprintf(w, "%-*s  %-9s  %s\n", width, listedID(it), it.Listed, capped(it.Why))
	}
	mode := ""
	if s.DryRun {
		mode = ", dry run"
	}
	par := fmt.Sprintf("%d at a time", s.Parallel)
	if s.Parallel == 0 {
		par = "each repository at its own caps' width"
	}
	fmt.Fprintf(w, "%d finding(s)%s: %s; %s, %s; exit %d\n", len(s.Runs), mode, strings.Join(parts, ", "), s.Duration, par, s.Exit)
}

// StepSummary writes the terminal table as GitHub-flavoured Markdown, for
// $GITHUB_STEP_SUMMARY. Every cell is untrusted text made inert: no
// control characters, no pipe or HTML or link syntax that could change the
// table or the page.
func (s *Summary) StepSummary(w io.Writer) error {
	var b strings.Builder
	title := "fixrail batch"
	if len(s.Runs) == 1 {
		title = "fixrail run"
	}
	if s.DryRun {
		title += " (dry run: nothing published)"
	}
	fmt.Fprintf(&b, "### %s\n\n| finding | terminal | reason | what |\n|---|---|---|---|\n", title)
	for _, r := range s.Runs {
		term := string(r.Terminal)
		if term == "" {
			term = fmt.Sprintf("exit %d", r.Exit)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(r.Item.ID), mdCell(term), mdCell(r.Reason), mdCell(what(r)))
	}
	for _, it := range s.Listed {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(listedID(it)), mdCell(it.Listed+" (not run)"), "", mdCell(capped(it.Why)))
	}
	fmt.Fprintf(&b, "\n%d finding(s); exit %d.\n", len(s.Runs), s.Exit)
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes text inert in a Markdown table cell, as code: backticks
// and pipes cannot close it, and nothing in code renders as a link,
// mention or HTML.
func mdCell(s string) string {
	s = untrusted.OneLine(s)
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("`", "'", "|", "¦").Replace(s)
	return "`" + s + "`"
}
