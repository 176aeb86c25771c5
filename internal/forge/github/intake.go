package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/findings"
)

// The Forge is the findings.IssueSource for GitHub intake.
var _ findings.IssueSource = (*Forge)(nil)

// Issue reads issue number (title, body, labels, state; whether it is a PR).
func (f *Forge) Issue(ctx context.Context, number int) (findings.IssueData, error) {
	var is *gh.Issue
	err := f.call(ctx, fmt.Sprintf("get issue #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		is, resp, err = f.c.Issues.Get(ctx, f.cfg.Owner, f.cfg.Repo, number)
		return resp, err
	})
	if err != nil {
		return findings.IssueData{}, halting(err)
	}
	d := findings.IssueData{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), Author: is.GetUser().GetLogin(),
		State: is.GetState(), IsPR: is.PullRequestLinks != nil, UpdatedAt: is.GetUpdatedAt().Time}
	for _, l := range is.Labels {
		d.Labels = append(d.Labels, l.GetName())
	}
	return d, nil
}

// IssueComments reads every comment of issue number, oldest first; more
// than max is an error (a cut thread is refused, not shortened).
func (f *Forge) IssueComments(ctx context.Context, number, max int) ([]findings.CommentData, error) {
	var out []findings.CommentData
	for page := 1; page > 0; {
		var cs []*gh.IssueComment
		var resp *gh.Response
		err := f.call(ctx, fmt.Sprintf("list comments of #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			cs, resp, err = f.c.Issues.ListComments(ctx, f.cfg.Owner, f.cfg.Repo, number, &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
			return resp, err
		})
		if err != nil {
			return nil, halting(err)
		}
		for _, c := range cs {
			out = append(out, findings.CommentData{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody()})
		}
		if len(out) > max {
			return nil, fmt.Errorf("issue #%d has more than %d comments; fixrail refuses a thread it cannot read whole", number, max)
		}
		page = resp.NextPage
	}
	return out, nil
}

// Permission is login's legacy permission (admin, write, read, none) from
// the collaborator-permission endpoint; maintain counts as write there. A
// 404 (not a collaborator, deleted user) is "none".
func (f *Forge) Permission(ctx context.Context, login string) (string, error) {
	if !findings.ValidLogin(login) {
		return "", fmt.Errorf("github: %q is not a user name", login)
	}
	var lvl *gh.RepositoryPermissionLevel
	err := f.call(ctx, "get permission of "+login, true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		lvl, resp, err = f.c.Repositories.GetPermissionLevel(ctx, f.cfg.Owner, f.cfg.Repo, login)
		return resp, err
	})
	if status(err) == 404 {
		return "none", nil
	}
	if err != nil {
		return "", halting(err)
	}
	return lvl.GetPermission(), nil
}
