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
	alert  int // an alert number instead of an issue
	// kind is the alert's: findings.DependabotKind, CodeScanningKind or
	// SecretScanningKind.
	kind  string
	event *findings.Event
}

// intake resolves --repo's two meanings. With --report or --vuln it is the clone
// directory, as it always was; with --issue, --alert or an Actions event it is
// the GitHub repository (the reference workflow passes
// --repo "$GITHUB_REPOSITORY"), and --dir is the clone.
func (o *runOpts) intake(fs *flag.FlagSet, lookup func(string) (string, bool)) (runIntake, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// The three alert flags are one: an alert of a kind.
	alertFlag, kind, number := "", "", 0
	for _, a := range []struct {
		flag, kind string
		n          int
	}{{"alert", findings.DependabotKind, o.alert}, {"code-scanning-alert", findings.CodeScanningKind, o.csAlert}, {"secret-scanning-alert", findings.SecretScanningKind, o.ssAlert}} {
		if !set[a.flag] {
			continue
		}
		if alertFlag != "" {
			return runIntake{}, usagef("--%s and --%s name two findings; pass one", alertFlag, a.flag)
		}
		alertFlag, kind, number = a.flag, a.kind, a.n
	}
	if alertFlag != "" {
		set["alert"] = true
	}
	env := func(k string) string { v, _ := lookup(k); return v }
	if o.report != "" && o.vuln != "" {
		return runIntake{}, usagef("--report and --vuln name two findings; pass one")
	}
	if o.sarif != "" || set["result"] || set["orca-alert"] {
		switch {
		case o.report != "" || o.vuln != "" || set["issue"] || set["alert"] || set["event"] || o.sarif != "" && set["orca-alert"]:
			return runIntake{}, usagef("--sarif and --orca-alert each name a finding; pass one, and no other (--report, --vuln, --issue, --alert, --event)")
		case set["orca-alert"] && o.orcaAlert == "":
			return runIntake{}, usagef("--orca-alert needs an alert id (orca-<digits>; fixrail scan --orca lists them)")
		case set["result"] && o.sarif == "":
			return runIntake{}, usagef("--result goes with --sarif FILE")
		case o.sarif != "" && o.result == "":
			return runIntake{}, usagef("--sarif needs --result ID, the result to work (fixrail scan --sarif %s lists them)", o.sarif)
		}
		if !set["dir"] {
			return runIntake{dir: o.repo}, nil
		}
		// With --dir, --repo is the GitHub repository the draft PR is
		// opened on (a CI job: --repo "$GITHUB_REPOSITORY" --dir .).
		if _, _, err := github.ParseRepo(o.repo); err != nil {
			return runIntake{}, usagef("with --dir, --repo names the GitHub repository as owner/name (without --dir it is the clone): %v", err)
		}
		return runIntake{dir: o.dir, github: o.repo}, nil
	}
	if set["alert"] && set["issue"] {
		return runIntake{}, usagef("--issue and --%s name two findings; pass one", alertFlag)
	}
	if o.report != "" || o.vuln != "" {
		if set["issue"] || set["event"] {
			return runIntake{}, usagef("--report and --issue/--event name two findings; pass one")
		}
		if set["alert"] {
			return runIntake{}, usagef("--report/--vuln and --%s name two findings; pass one", alertFlag)
		}
		if set["dir"] {
			return runIntake{}, usagef("with --report the clone is --repo DIR; --dir goes with --issue")
		}
		return runIntake{dir: o.repo}, nil
	}
	event := o.event
	// A sweep's fix job (init --sweep) names its finding by flag and runs
	// on the sweep's triggers, a schedule or a dispatch with no issue
	// input: under Actions that trigger names no finding to check the
	// flag against, and is not read. Any other trigger still is.
	sweep := o.event == "" && (set["issue"] || set["alert"])
	if event == "" && env("GITHUB_ACTIONS") == "true" && !(sweep && env("GITHUB_EVENT_NAME") == "schedule") {
		event = env("GITHUB_EVENT_PATH")
	}
	if !set["issue"] && !set["alert"] && event == "" {
		return runIntake{}, usagef("--report is required (or --vuln FILE, for a vulnerable dependency; --sarif FILE --result ID, for a scanner's result; or --issue N, --alert N, --code-scanning-alert N or --secret-scanning-alert N with --repo owner/name)")
	}
	if set["issue"] && o.issue <= 0 {
		return runIntake{}, usagef("--issue must be a positive issue number, not %d", o.issue)
	}
	if set["alert"] && number <= 0 {
		return runIntake{}, usagef("--%s must be a positive %s alert number, not %d", alertFlag, alertName(kind), number)
	}
	in := runIntake{dir: o.dir, github: o.repo, issue: o.issue, alert: number, kind: kind}
	if !set["repo"] {
		in.github = env("GITHUB_REPOSITORY")
	}
	if _, _, err := github.ParseRepo(in.github); err != nil {
		name := "--issue"
		if set["alert"] {
			name = "--" + alertFlag
		}
		return runIntake{}, usagef("with %s, --repo names the GitHub repository as owner/name (the clone is --dir): %v", name, err)
	}
	if event != "" {
		ev, err := findings.ReadEvent(event, env("GITHUB_EVENT_NAME"))
		if sweep && errors.Is(err, findings.ErrNoDispatchInput) {
			return in, nil
		}
		if err != nil {
			return runIntake{}, usagef("%v", err)
		}
		if ev.Alert > 0 {
			// The alert is read through the API by number (its state now,
			// not the payload's); the payload must be this repository's.
			switch {
			case set["issue"]:
				return runIntake{}, usagef("--issue %d, but the event names %s alert #%d", in.issue, alertName(ev.AlertKind), ev.Alert)
			case in.alert != 0 && (ev.Alert != in.alert || ev.AlertKind != in.kind):
				return runIntake{}, usagef("--%s %d, but the event names %s alert #%d", alertFlag, in.alert, alertName(ev.AlertKind), ev.Alert)
			case !strings.EqualFold(ev.Repo, in.github):
				return runIntake{}, usagef("the event is for %s, not %s", ev.Repo, in.github)
			}
			in.alert, in.kind, in.event = ev.Alert, ev.AlertKind, ev
			return in, nil
		}
		if in.alert != 0 {
			return runIntake{}, usagef("--%s %d, but the event names issue #%d", alertFlag, in.alert, ev.Number)
		}
		if in.issue != 0 && ev.Number != in.issue {
			return runIntake{}, usagef("--issue %d, but the event names issue #%d", in.issue, ev.Number)
		}
		in.issue, in.event = ev.Number, ev
	}
	return in, nil
}

// alertName names an alert kind in a message.
func alertName(kind string) string {
	if kind == findings.DependabotKind {
		return "Dependabot"
	}
	return kind
}

// refuseClosedAlert makes a dismissed, fixed or auto-dismissed alert a
// refusal before any run (exit 2, as a closed issue is): nothing is
// written, locked or posted, and it says why.
func refuseClosedAlert(err error) error {
	if errors.Is(err, findings.ErrAlertNotOpen) || errors.Is(err, findings.ErrScanAlertNotOpen) {
		return &codedError{code: exitUsage, msg: "refused: " + err.Error()}
	}
	return err
}

// forgeHalt is the HALT (exit 3) for a rate limit or an outage while the
// finding is read, before any run exists; nil for any other error.
func forgeHalt(err error, what string) error {
	if !errors.Is(err, forge.ErrRateLimited) && !errors.Is(err, forge.ErrUnavailable) {
		return nil
	}
	// Nothing is wrong with the finding or the call: the run would not
	// start now, so it HALTs rather than fail.
	reason := verdict.ReasonForgeRateLimited
	if !errors.Is(err, forge.ErrRateLimited) {
		reason = verdict.ReasonForgeUnavailable
	}
	return &codedError{code: exitHalt, msg: fmt.Sprintf("HALT %s: read %s before the run started: %v", reason, what, err)}
}

// readAlert reads the Dependabot alert from the forge as the cve finding.
// A closed alert is refused; a bad one is a run that would not start; a
// refusal by GitHub names the permission the token lacks.
func (in runIntake) readAlert(ctx context.Context, src findings.AlertSource, p *pipeline.Params) error {
	if src == nil {
		return fmt.Errorf("%w: the forge cannot read Dependabot alerts", pipeline.ErrSetup)
	}
	v, err := findings.FromDependabot(ctx, src, in.github, in.alert)
	if err != nil {
		return alertReadError(err, fmt.Sprintf("Dependabot alert #%d of %s", in.alert, in.github))
	}
	in.alertParams(p, v.Finding())
	return nil
}

// alertReadError is how an alert that could not be read ends: not open, a
// refusal (exit 2); malformed or unfixable, a run that does not start; a
// rate limit or an outage, a HALT.
func alertReadError(err error, what string) error {
	switch {
	case errors.Is(err, findings.ErrAlertNotOpen), errors.Is(err, findings.ErrScanAlertNotOpen):
		return refuseClosedAlert(err)
	case errors.Is(err, findings.ErrBadReport):
		return fmt.Errorf("%w: %v", pipeline.ErrSetup, err)
	}
	if h := forgeHalt(err, what); h != nil {
		return h
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// alertParams sets an alert's finding on the run, charged like a
// label-triggered run: to whoever the event names.
func (in runIntake) alertParams(p *pipeline.Params, fin *findings.Finding) {
	p.Finding = fin
	p.ForgeRepo = "github.com/" + strings.ToLower(in.github)
	if in.event != nil && in.event.Sender != "" {
		p.Actor = "github:" + in.event.Sender
	}
}

// readScanAlert reads a code- or secret-scanning alert from the forge and
// sorts it against the clone, as scan does; one scan would not list to fix
// is a run that does not start, one not open a refusal.
func (in runIntake) readScanAlert(ctx context.Context, src findings.ScanAlertSource, setup *pipeline.Setup, p *pipeline.Params) error {
	if src == nil {
		return fmt.Errorf("%w: the forge cannot read scanning alerts", pipeline.ErrSetup)
	}
	fin, err := findings.FromScanAlert(ctx, src, in.kind, in.github, in.alert, newBaseTree(ctx, setup), configuredFixType(setup.Config))
	if err != nil {
		return alertReadError(err, fmt.Sprintf("%s alert #%d of %s", in.kind, in.alert, in.github))
	}
	in.alertParams(p, fin)
	return nil
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
		if h := forgeHalt(err, fmt.Sprintf("issue #%d of %s", in.issue, in.github)); h != nil {
			return h
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
