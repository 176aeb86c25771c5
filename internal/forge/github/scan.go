package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
)

// OpenIssue is what scan reads of an open issue.
type OpenIssue struct {
	Number int
	Title  string
	Labels []string
	URL    string
}

// LabelledIssues lists the open issues carrying label (pull requests,
// which the issues endpoint lists too, are left out), at most maxPages
// pages of 100.
func (f *Forge) LabelledIssues(ctx context.Context, label string) ([]OpenIssue, error) {
	var out []OpenIssue
	for page := 1; page > 0; {
		if page > maxPages {
			return nil, fmt.Errorf("more than %d open issues labelled %q: narrow the label", maxPages*100, label)
		}
		var is []*gh.Issue
		var resp *gh.Response
		err := f.call(ctx, "list issues labelled "+label, true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			is, resp, err = f.c.Issues.ListByRepo(ctx, f.cfg.Owner, f.cfg.Repo, &gh.IssueListByRepoOptions{State: "open", Labels: []string{label}, ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
			return resp, err
		})
		if err != nil {
			return nil, halting(err)
		}
		for _, i := range is {
			if i.IsPullRequest() {
				continue
			}
			o := OpenIssue{Number: i.GetNumber(), Title: i.GetTitle(), URL: i.GetHTMLURL()}
			for _, l := range i.Labels {
				o.Labels = append(o.Labels, l.GetName())
			}
			out = append(out, o)
		}
		page = resp.NextPage
	}
	return out, nil
}

// OpenAlerts lists the repository's open Dependabot alerts (cursor
// pagination, at most maxPages pages of 100). A refusal says which
// permission the token needs.
func (f *Forge) OpenAlerts(ctx context.Context) ([]findings.DependabotAlert, error) {
	var out []findings.DependabotAlert
	after := ""
	for n := 0; ; n++ {
		if n == maxPages {
			return nil, fmt.Errorf("more than %d open Dependabot alerts", maxPages*100)
		}
		var as []*gh.DependabotAlert
		var resp *gh.Response
		err := f.call(ctx, "list open Dependabot alerts", true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			as, resp, err = f.c.Dependabot.ListRepoAlerts(ctx, f.cfg.Owner, f.cfg.Repo, &gh.ListAlertsOptions{State: new("open"), ListCursorOptions: gh.ListCursorOptions{PerPage: 100, After: after}})
			return resp, err
		})
		if s := status(err); s == 403 || s == 404 {
			return nil, fmt.Errorf("%w: the token needs the repository permission %s, and the repository Dependabot alerts turned on", err, AlertPermission)
		}
		if err != nil {
			return nil, halting(err)
		}
		for _, a := range as {
			out = append(out, alertData(a))
		}
		if resp.After == "" {
			return out, nil
		}
		after = resp.After
	}
}

// FixBranches lists the fixrail/* branches on the repository.
func (f *Forge) FixBranches(ctx context.Context) ([]string, error) {
	var refs []*gh.Reference
	err := f.call(ctx, "list fixrail branches", true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		refs, resp, err = f.c.Git.ListMatchingRefs(ctx, f.cfg.Owner, f.cfg.Repo, "heads/"+forge.BranchPrefix)
		return resp, err
	})
	if err != nil {
		return nil, halting(err)
	}
	var out []string
	for _, r := range refs {
		if b, ok := strings.CutPrefix(r.GetRef(), "refs/heads/"); ok && strings.HasPrefix(b, forge.BranchPrefix) {
			out = append(out, b)
		}
	}
	return out, nil
}

// OpenFixes lists fixrail's open PRs on this repository (never a fork's).
func (f *Forge) OpenFixes(ctx context.Context) ([]forge.OpenFix, error) {
	fixes, err := f.openFixes(ctx)
	if err != nil {
		return nil, halting(err)
	}
	return fixes, nil
}

// DefaultBranch is the repository's default branch.
func (f *Forge) DefaultBranch(ctx context.Context) (string, error) {
	var repo *gh.Repository
	err := f.call(ctx, "get repository", true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		repo, resp, err = f.c.Repositories.Get(ctx, f.cfg.Owner, f.cfg.Repo)
		return resp, err
	})
	if err != nil {
		return "", halting(err)
	}
	return repo.GetDefaultBranch(), nil
}
