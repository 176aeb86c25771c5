package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/github"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/risk"
	"github.com/fixrail/fixrail/internal/verdict"
)

// runIntake is where a run's finding comes from: a report file in the
// clone dir, or (github set) an issue of that GitHub repository.
type runIntake struct {
	dir    string
	github string // owner/name; "" for a report file
	issue  int
	event  *findings.Event
}

// intake resolves --repo's two meanings. With --report or --vuln it is the clone
// directory, as it always was; with --issue or an Actions event it is
// the GitHub repository (the reference workflow passes
// --repo "$GITHUB_REPOSITORY"), and --dir is the clone.
func (o *runOpts) intake(fs *flag.FlagSet, lookup func(string) (string, bool)) (runIntake, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	env := func(k string) string { v, _ := lookup(k); return v }
	if o.report != "" && o.vuln != "" {
		return runIntake{}, usagef("--report and --vuln name two findings; pass one")
	}
	if o.report != "" || o.vuln != "" {
		if set["issue"] || set["event"] {
			return runIntake{}, usagef("--report and --issue/--event name two findings; pass one")
		}
		if set["dir"] {
			return runIntake{}, usagef("with --report the clone is --repo DIR; --dir goes with --issue")
		}
		return runIntake{dir: o.repo}, nil
	}
	event := o.event
	if event == "" && env("GITHUB_ACTIONS") == "true" {
		event = env("GITHUB_EVENT_PATH")
	}
	if !set["issue"] && event == "" {
		return runIntake{}, usagef("--report is required (or --vuln FILE, for a vulnerable dependency; or --issue N with --repo owner/name)")
	}
	if set["issue"] && o.issue <= 0 {
		return runIntake{}, usagef("--issue must be a positive issue number, not %d", o.issue)
	}
	in := runIntake{dir: o.dir, github: o.repo, issue: o.issue}
	if !set["repo"] {
		in.github = env("GITHUB_REPOSITORY")
	}
	if _, _, err := github.ParseRepo(in.github); err != nil {
		return runIntake{}, usagef("with --issue, --repo names the GitHub repository as owner/name (the clone is --dir): %v", err)
	}
	if event != "" {
		ev, err := findings.ReadEvent(event, env("GITHUB_EVENT_NAME"))
		if err != nil {
			return runIntake{}, usagef("%v", err)
		}
		if in.issue != 0 && ev.Number != in.issue {
			return runIntake{}, usagef("--issue %d, but the event names issue #%d", in.issue, ev.Number)
		}
		in.issue, in.event = ev.Number, ev
	}
	return in, nil
}

// readIssue reads the finding from the forge and records who it is from.
// A refused or malformed issue is a run that would not start.
func (in runIntake) readIssue(ctx context.Context, src findings.IssueSource, p *pipeline.Params) error {
	if src == nil {
		return fmt.Errorf("%w: the forge cannot read issues", pipeline.ErrSetup)
	}
	var gi *findings.GitHubIssue
	var err error
	if in.event != nil {
		gi, err = findings.FromEvent(ctx, src, in.event)
	} else {
		gi, err = findings.FromGitHubIssue(ctx, src, in.github, in.issue, "")
	}
	if err != nil {
		if errors.Is(err, findings.ErrBadEvent) || errors.Is(err, findings.ErrNotIssue) || errors.Is(err, findings.ErrNotAuthorized) || errors.Is(err, findings.ErrBadReport) {
			return fmt.Errorf("%w: %v", pipeline.ErrSetup, err)
		}
		if errors.Is(err, forge.ErrRateLimited) || errors.Is(err, forge.ErrUnavailable) {
			// Nothing is wrong with the finding or the call: the run
			// would not start now, so it HALTs (exit 3) rather than fail.
			reason := verdict.ReasonForgeRateLimited
			if !errors.Is(err, forge.ErrRateLimited) {
				reason = verdict.ReasonForgeUnavailable
			}
			return &codedError{code: exitHalt, msg: fmt.Sprintf("HALT %s: read issue #%d of %s before the run started: %v", reason, in.issue, in.github, err)}
		}
		return fmt.Errorf("read issue #%d of %s: %w", in.issue, in.github, err)
	}
	p.Finding = gi.Finding
	p.ForgeRepo = "github.com/" + strings.ToLower(in.github)
	if gi.Actor != "" {
		p.Actor = "github:" + gi.Actor
	}
	p.Access = reporterAccess(gi)
	return nil
}

// reporterAccess is what the issue's author may do, by the collaborator
// permission intake read; unreadable is none, which only raises the risk
// (an issue is anyone's text).
func reporterAccess(gi *findings.GitHubIssue) risk.Access {
	if a := risk.ParseAccess(gi.AuthorPermission); a != risk.AccessUnknown {
		return a
	}
	return risk.AccessNone
}
