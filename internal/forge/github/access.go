package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx"
)

// Permission names, as a workflow's permissions: block spells them.
const (
	PermContents     = "contents: write"
	PermPullRequests = "pull-requests: write"
	PermIssues       = "issues: write"
)

// probeHead is the head the pull-request probe names: a component ending
// in ".lock" is a name git refuses for every ref, so no branch by it can
// exist and the create can only fail validation, never open a PR.
const probeHead = forge.BranchPrefix + "access-probe.lock"

// CheckAccess probes, before any agent runs, the three rights a run uses
// later, with requests that cannot write:
//
//   - contents: write — git push --dry-run of req.BaseSHA to req.Branch
//     through the containment layer's push (the pinned URL, the operator's
//     credential path): the remote's receive-pack advertisement, which a
//     forge gives only to a credential that may push; no objects are sent
//     and no ref is written. Not proven: what a ruleset or push
//     restriction would do with the ref, and nothing at all for a local
//     path (it has no credential).
//   - pull-requests: write — POST /pulls from a head no branch can have:
//     422 (GitHub refused the content, not the token) passes; 403/404/401
//     is the missing permission, and GitHub's "Actions is not permitted to
//     create pull requests" the repository setting. Whether GitHub checks
//     that setting before it validates the head is not documented, so a
//     pass does not prove the setting is on (doctor reads it where the
//     token may).
//   - issues: write — POST /issues/{n}/comments without a body on the
//     finding's issue: 422 passes, 403/404/401 is the missing permission.
//     Skipped when the finding has no issue (notices have nowhere to go).
//
// Every probe runs, so the refusal names every missing permission at once
// (*forge.PermissionError). A rate limit, an outage or a containment error
// (the clone's config changed) stops at once with its own type.
func (f *Forge) CheckAccess(ctx context.Context, req forge.AccessRequest) (forge.Access, error) {
	a := forge.Access{Applicable: true}
	perr := &forge.PermissionError{}
	record := func(perm, proven string, err error) error {
		var d *denied
		switch {
		case err == nil:
			a.Proofs = append(a.Proofs, forge.AccessProof{Permission: perm, Detail: proven})
		case errors.As(err, &d):
			perr.Missing = append(perr.Missing, forge.AccessProof{Permission: perm, Detail: d.why})
			perr.Errs = append(perr.Errs, d.err)
		default:
			return err
		}
		return nil
	}
	proven, err := f.probePush(ctx, req)
	if err := record(PermContents, proven, err); err != nil {
		return a, err
	}
	proven, err = f.ProbePullRequests(ctx, req.Base)
	if err := record(PermPullRequests, proven, err); err != nil {
		return a, err
	}
	if req.Issue > 0 {
		proven, err = f.probeComment(ctx, req.Issue)
		if err := record(PermIssues, proven, err); err != nil {
			return a, err
		}
	} else {
		a.Proofs = append(a.Proofs, forge.AccessProof{Permission: PermIssues, Detail: "not probed: the finding has no issue to comment on"})
	}
	if len(perr.Missing) > 0 {
		return a, perr
	}
	return a, nil
}

// denied is a probe's answer that the permission is missing.
type denied struct {
	why string
	err error
}

func (d *denied) Error() string { return d.why }

// probePush is the contents: write probe.
func (f *Forge) probePush(ctx context.Context, req forge.AccessRequest) (string, error) {
	if f.cfg.Remote == nil {
		return "", errors.New("github: the access check needs the repository's push (Config.Remote)")
	}
	url := f.cfg.Remote.PushURL()
	if err := f.checkPushURL(url); err != nil {
		return "", err
	}
	err := f.cfg.Remote.PushDryRun(ctx, req.BaseSHA+":refs/heads/"+req.Branch)
	host, path := splitRemote(url)
	if err == nil {
		if host == "" {
			return "not proven: the remote is the local path " + path + ", which has no credential (a dry-run push to it succeeded)", nil
		}
		return fmt.Sprintf("git push --dry-run of the base commit to %s: the remote at %s gave this credential its receive-pack advertisement, which GitHub gives only to a credential that may push (no objects sent, no ref written; rulesets on the ref not checked)", req.Branch, host), nil
	}
	var ge *gitx.Error
	if ctx.Err() != nil || errors.Is(err, gitx.ErrPoisoned) || !errors.As(err, &ge) {
		return "", err
	}
	line := scrubURLs(pushErrorLine(ge.Stderr))
	op := f.Repo() + ": push --dry-run to " + redactURL(url)
	switch {
	case pushTransient().MatchString(ge.Stderr):
		return "", &forge.APIError{Op: op, Message: line, Kind: forge.ErrUnavailable, Err: err}
	case pushRejected().MatchString(ge.Stderr):
		return "", &forge.APIError{Op: op, Message: req.Branch + " is on the remote and the push would not fast-forward: " + line, Kind: forge.ErrForge, Err: err}
	}
	return "", &denied{why: "git push --dry-run to " + redactURL(url) + " failed: " + line + " (the credential did not reach the push, or may not write)", err: err}
}

var (
	// pushTransient is git's wording for a remote it could not reach or
	// that failed (5xx): an outage, not a refusal.
	pushTransient = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)could not resolve host|failed to connect|connection (refused|timed out|reset)|operation timed out|returned error: 5\d\d|the remote end hung up unexpectedly`)
	})
	// pushRejected: the ref exists and the dry run would not fast-forward.
	pushRejected = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[rejected\]|non-fast-forward|\(fetch first\)`) })
	urlUserinfo  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(://)[^/@\s]+@`) })
)

// pushErrorLine is the line of git's stderr that says why: the first
// "fatal:" or "error:" line, else the first line.
func pushErrorLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			return bound(strings.TrimSpace(l))
		}
	}
	return bound(strings.TrimSpace(lines[0]))
}

// scrubURLs drops userinfo from URLs in git's words: a push URL may carry
// a credential.
func scrubURLs(s string) string { return urlUserinfo().ReplaceAllString(s, "${1}redacted@") }

// ProbePullRequests is the pull-requests: write probe: POST /pulls from a
// head no branch can have into base. It returns what a pass proves, a
// *denied for a refusal of the token, and any other error as is (a rate
// limit, an outage, draft-unsupported).
func (f *Forge) ProbePullRequests(ctx context.Context, base string) (string, error) {
	req := gh.CreatePullRequest{
		Title:               new("fixrail access check (never opened: its head cannot exist)"),
		Head:                probeHead,
		Base:                base,
		Draft:               new(true),
		MaintainerCanModify: new(false),
	}
	var got *gh.PullRequest
	// Retried on an outage: the head cannot exist, so no try can open a PR.
	err := f.call(ctx, "access check: open a pull request from "+probeHead, true, func(ctx context.Context) (*gh.Response, error) {
		p, resp, err := f.c.PullRequests.Create(ctx, f.cfg.Owner, f.cfg.Repo, req)
		got = p
		return resp, err
	})
	switch {
	case err == nil:
		return "", &forge.APIError{Op: f.Repo() + ": access check", Status: http.StatusCreated,
			Message: fmt.Sprintf("GitHub opened PR #%d from %s, a head that cannot exist; close it by hand", got.GetNumber(), probeHead), Kind: forge.ErrForge}
	case errors.Is(err, forge.ErrActionsCannotOpenPRs):
		return "", &denied{why: "GitHub Actions is not permitted to create pull requests in this repository: turn on Settings → Actions → General → \"Allow GitHub Actions to create and approve pull requests\", or use FIXRAIL_GITHUB_TOKEN", err: err}
	case errors.Is(err, forge.ErrDraftUnsupported):
		return "", err
	}
	return probeAnswer(err, "POST /pulls")
}

// probeComment is the issues: write probe: POST /issues/{n}/comments with
// no body, which GitHub can only refuse.
func (f *Forge) probeComment(ctx context.Context, issue int) (string, error) {
	var got gh.IssueComment
	err := f.call(ctx, fmt.Sprintf("access check: comment on #%d without a body", issue), true, func(ctx context.Context) (*gh.Response, error) {
		r, err := f.c.NewRequest(ctx, "POST", fmt.Sprintf("repos/%v/%v/issues/%d/comments", f.cfg.Owner, f.cfg.Repo, issue), struct{}{})
		if err != nil {
			return nil, err
		}
		return f.c.Do(r, &got)
	})
	if err == nil {
		return "", &forge.APIError{Op: f.Repo() + ": access check", Status: http.StatusCreated,
			Message: fmt.Sprintf("GitHub posted a comment without a body on #%d (%s)", issue, got.GetHTMLURL()), Kind: forge.ErrForge}
	}
	return probeAnswer(err, fmt.Sprintf("POST /issues/%d/comments", issue))
}

// probeAnswer reads a probe's refusal: 422 is the content refused after
// the token was authorised (a pass); 401, 403 and 404 (GitHub's answer
// for a repository the token may not write) are the permission missing.
// Anything else keeps its type.
func probeAnswer(err error, what string) (string, error) {
	var ae *forge.APIError
	if !errors.As(err, &ae) || errors.Is(err, forge.ErrRateLimited) || errors.Is(err, forge.ErrUnavailable) {
		return "", err
	}
	switch ae.Status {
	case http.StatusUnprocessableEntity:
		return fmt.Sprintf("%s was answered 422 (GitHub refused the request's content, not the token; nothing was created)", what), nil
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return "", &denied{why: fmt.Sprintf("%s was refused: HTTP %d: %s", what, ae.Status, ae.Message), err: err}
	}
	return "", err
}
