package github

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
)

// OpenWork lists fixrail's open PRs on this repository (head fixrail/* in
// this repository, never a fork's: anyone can name a fork branch fixrail/x)
// with their checks' state, whether s's branch is on the remote without an
// open PR, and whether s's issue is open with the fixrail:escalated label.
func (f *Forge) OpenWork(ctx context.Context, s forge.Subject) (forge.Work, error) {
	var w forge.Work
	fixes, err := f.openFixes(ctx)
	if err != nil {
		return w, err
	}
	for _, fix := range fixes {
		res, _, err := f.ciState(ctx, fix.HeadSHA, nil)
		if err != nil {
			return w, err
		}
		fix.Checks = res.State
		w.Fixes = append(w.Fixes, fix)
	}
	if s.ID != "" && !slices.ContainsFunc(w.Fixes, func(x forge.OpenFix) bool { return x.ID == s.ID }) {
		branch := forge.BranchPrefix + s.ID
		owner, name := f.headRepo()
		err := f.call(ctx, "get branch "+branch, true, func(ctx context.Context) (*gh.Response, error) {
			req, err := f.c.NewRequest(ctx, "GET", fmt.Sprintf("repos/%v/%v/branches/%v", owner, name, url.PathEscape(branch)), nil)
			if err != nil {
				return nil, err
			}
			return f.c.Do(req, nil)
		})
		switch {
		case err == nil:
			w.LeftBranch = branch
		case status(err) != 404:
			return w, err
		}
	}
	if s.Issue > 0 {
		var is *gh.Issue
		err := f.call(ctx, fmt.Sprintf("get issue #%d", s.Issue), true, func(ctx context.Context) (*gh.Response, error) {
			var resp *gh.Response
			var err error
			is, resp, err = f.c.Issues.Get(ctx, f.cfg.Owner, f.cfg.Repo, s.Issue)
			return resp, err
		})
		if err != nil {
			return w, err
		}
		if is.GetState() == "open" {
			for _, l := range is.Labels {
				if l.GetName() == forge.LabelEscalated {
					w.Escalation = &forge.OpenEscalation{Number: s.Issue, Label: forge.LabelEscalated, Location: is.GetHTMLURL()}
				}
			}
		}
	}
	return w, nil
}

// openFixes lists fixrail's open PRs on this repository: head fixrail/* in
// the repository fixrail pushes to (this one, or forge.push_to's fork),
// never another fork's (anyone can name a fork branch fixrail/x).
func (f *Forge) openFixes(ctx context.Context) ([]forge.OpenFix, error) {
	var fixes []forge.OpenFix
	for page := 1; page > 0 && page <= maxPages; {
		var prs []*gh.PullRequest
		var resp *gh.Response
		err := f.call(ctx, "list open PRs", true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			prs, resp, err = f.c.PullRequests.List(ctx, f.cfg.Owner, f.cfg.Repo, &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, p := range prs {
			ref := p.GetHead().GetRef()
			id, ok := strings.CutPrefix(ref, forge.BranchPrefix)
			if !ok || p.GetHead().GetRepo() == nil || !strings.EqualFold(p.GetHead().GetRepo().GetFullName(), f.HeadRepo()) {
				continue
			}
			fixes = append(fixes, forge.OpenFix{ID: id, Branch: ref, Number: p.GetNumber(), Location: p.GetHTMLURL(), HeadSHA: p.GetHead().GetSHA()})
		}
		page = resp.NextPage
	}
	return fixes, nil
}

// FixFiles lists fixrail's open PRs with the files each changes (both
// names of a rename), from the PR files endpoint. GitHub lists at most
// 3000 files of a PR; a PR that reaches that bound is an error, since the
// rest are unknown.
func (f *Forge) FixFiles(ctx context.Context) ([]forge.OpenFix, error) {
	fixes, err := f.openFixes(ctx)
	if err != nil {
		return nil, err
	}
	for i := range fixes {
		fix := &fixes[i]
		fix.Files = []string{}
		for page := 1; page > 0; {
			if page > maxFilePages {
				return nil, fmt.Errorf("PR #%d changes more files than GitHub lists (%d): cannot tell what it touches", fix.Number, maxFilePages*100)
			}
			var files []*gh.CommitFile
			var resp *gh.Response
			err := f.call(ctx, fmt.Sprintf("list files of PR #%d", fix.Number), true, func(ctx context.Context) (*gh.Response, error) {
				var err error
				files, resp, err = f.c.PullRequests.ListFiles(ctx, f.cfg.Owner, f.cfg.Repo, fix.Number, &gh.ListOptions{PerPage: 100, Page: page})
				return resp, err
			})
			if err != nil {
				return nil, err
			}
			for _, cf := range files {
				fix.Files = append(fix.Files, cf.GetFilename())
				if prev := cf.GetPreviousFilename(); prev != "" {
					fix.Files = append(fix.Files, prev)
				}
			}
			page = resp.NextPage
		}
	}
	return fixes, nil
}

// maxFilePages is GitHub's limit on a PR's file listing: 3000 files.
const maxFilePages = 30

// WaitChecks polls the check runs and commit statuses of pub's head commit
// (the SHA, never the branch, which can move) until they are all finished,
// one fails, or the deadline. Red as soon as anything fails, from any app;
// green when everything reported finished and passed and every required
// check passed (a pinned one from its app only, forge.Answer). A required
// check with no app named that two sources report green is pending at once
// (waiting cannot say which is real). At the deadline: pending if something
// was running or reported, never-appeared if required checks are missing
// and nothing reported, none if nothing ever did. With nothing required,
// nothing reported within Config.AppearWithin is none at once: a
// repository without CI does not hold the run to the deadline.
func (f *Forge) WaitChecks(ctx context.Context, pub forge.Published, deadline time.Time, required []forge.CheckRef) (forge.CIResult, error) {
	start := time.Now()
	for {
		res, sum, err := f.ciState(ctx, pub.Commit, required)
		if err != nil {
			return res, err
		}
		if res.State == forge.CIGreen || res.State == forge.CIRed {
			return res, nil
		}
		if sum.running == 0 && len(res.Missing) == 0 && len(res.Ambiguous) > 0 {
			return res, nil
		}
		if res.State == forge.CINone && len(required) == 0 && time.Since(start) >= f.cfg.AppearWithin {
			res.Detail = fmt.Sprintf("no check run or status appeared within %s: no CI configured, or it did not start", f.cfg.AppearWithin)
			return res, nil
		}
		if time.Now().Add(f.cfg.PollEvery).After(deadline) {
			switch {
			case len(res.Checks) == 0 && len(required) == 0:
				res.State, res.Detail = forge.CINone, "no check run or status reported before the deadline: no CI configured, or it never started"
			case len(res.Missing) > 0 && len(res.Checks) == 0:
				res.State = forge.CINeverAppeared
				res.Detail = "required checks never reported: " + strings.Join(res.Missing, ", ")
			default:
				res.State = forge.CIPending
				if sum.running > 0 {
					res.Detail = "checks still running at the deadline"
				} else {
					res.Detail = "nothing running at the deadline, but the required checks did not pass"
				}
				if len(res.Missing) > 0 || len(res.Ambiguous) > 0 {
					res.Detail += "; required: " + sum.required
				}
			}
			return res, nil
		}
		if err := f.pause(ctx); err != nil {
			return res, err
		}
	}
}

// ciSum is what ciState saw beside its result: how many checks had not
// finished, and each required check's answer in words.
type ciSum struct {
	running  int
	required string
}

// ciState reads sha's check runs and combined status once.
func (f *Forge) ciState(ctx context.Context, sha string, required []forge.CheckRef) (forge.CIResult, ciSum, error) {
	var sum ciSum
	res := forge.CIResult{HeadSHA: sha}
	runs, err := f.checkRuns(ctx, sha)
	if err != nil {
		return res, sum, err
	}
	for _, r := range runs {
		res.Checks = append(res.Checks, runCheck(r))
	}
	var cs *gh.CombinedStatus
	err = f.call(ctx, "get combined status of "+short(sha), true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		cs, resp, err = f.c.Repositories.GetCombinedStatus(ctx, f.cfg.Owner, f.cfg.Repo, sha, &gh.ListOptions{PerPage: 100})
		return resp, err
	})
	if err != nil {
		return res, sum, err
	}
	// "pending" with total_count 0 means no statuses at all, not CI running.
	// A status names no app: it never satisfies a check pinned to one.
	for _, s := range cs.Statuses {
		res.Checks = append(res.Checks, forge.Check{Name: s.GetContext(), Kind: "status", State: s.GetState(), URL: s.GetTargetURL()})
	}
	var failed []string
	running := 0
	for _, c := range res.Checks {
		switch forge.Outcome(c.State) {
		case forge.OutcomeFailed:
			failed = append(failed, c.Name+" ("+c.State+") from "+c.From())
		case forge.OutcomeRunning:
			running++
		}
	}
	var said []string
	for _, want := range required {
		a := forge.Answer(want, res.Checks)
		switch a.State {
		case forge.OutcomeMissing:
			res.Missing = append(res.Missing, want.String())
		case forge.OutcomeAmbiguous:
			res.Ambiguous = append(res.Ambiguous, want.String())
		}
		said = append(said, a.Describe(res.Checks))
	}
	sum.running, sum.required = running, strings.Join(said, "; ")
	switch {
	case len(failed) > 0:
		res.State, res.Detail = forge.CIRed, "failed: "+strings.Join(failed, ", ")
	case running > 0 || len(res.Missing) > 0 || len(res.Ambiguous) > 0:
		res.State, res.Detail = forge.CIPending, fmt.Sprintf("%d running, %d required not reported", running, len(res.Missing))
		if len(res.Ambiguous) > 0 {
			res.Detail += fmt.Sprintf(", %d required reported green by more than one source with no app named", len(res.Ambiguous))
		}
	case len(res.Checks) == 0:
		res.State, res.Detail = forge.CINone, "no check run or status"
	default:
		res.State, res.Detail = forge.CIGreen, fmt.Sprintf("%d check(s) passed", len(res.Checks))
	}
	if sum.required != "" && res.State != forge.CIRed {
		res.Detail += "; required: " + sum.required
	}
	return res, sum, nil
}

// runCheck is r as fixrail reports it: its name, state and the app that
// posted it, which is half its identity.
func runCheck(r *gh.CheckRun) forge.Check {
	return forge.Check{Name: r.GetName(), Kind: "check-run", State: runState(r), URL: r.GetDetailsURL(), App: r.GetApp().GetSlug(), AppID: r.GetApp().GetID()}
}

// pause waits one poll interval, or until ctx ends.
func (f *Forge) pause(ctx context.Context) error {
	t := time.NewTimer(f.cfg.PollEvery)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// checkRuns lists sha's latest check runs, every page up to maxPages.
func (f *Forge) checkRuns(ctx context.Context, sha string) ([]*gh.CheckRun, error) {
	var all []*gh.CheckRun
	for page := 1; page > 0 && page <= maxPages; {
		var runs *gh.ListCheckRunsResults
		var resp *gh.Response
		err := f.call(ctx, "list check runs of "+short(sha), true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			runs, resp, err = f.c.Checks.ListCheckRunsForRef(ctx, f.cfg.Owner, f.cfg.Repo, sha, &gh.ListCheckRunsOptions{Filter: new("latest"), ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, runs.CheckRuns...)
		page = resp.NextPage
	}
	return all, nil
}

// runState is a check run's conclusion once completed, else its status.
func runState(r *gh.CheckRun) string {
	if r.GetStatus() == "completed" {
		return r.GetConclusion()
	}
	return r.GetStatus()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
