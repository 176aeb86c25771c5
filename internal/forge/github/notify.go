package github

import (
	"context"
	"errors"
	"fmt"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
)

// ErrNoTarget means a notice without an issue or PR number has nowhere to go on
// GitHub (the finding did not come from an issue).
var ErrNoTarget = errors.New("github: the notice names no issue or PR")

// Notify comments n.Body on issue or PR n.Number and adds n.Labels
// (created on first use). It is best effort: both are tried, and the error
// joins whatever failed. The comment is not retried, since a retried
// create can post twice. The caller has redacted and leak-scanned Body.
func (f *Forge) Notify(ctx context.Context, n forge.Notice) error {
	if n.Number <= 0 {
		return ErrNoTarget
	}
	var errs []error
	if n.Body != "" {
		err := f.call(ctx, fmt.Sprintf("comment on #%d", n.Number), false, func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := f.c.Issues.CreateComment(ctx, f.cfg.Owner, f.cfg.Repo, n.Number, gh.IssueCommentRequest{Body: truncate(n.Body)})
			return resp, err
		})
		errs = append(errs, err)
	}
	if len(n.Labels) > 0 {
		errs = append(errs, f.label(ctx, n.Number, n.Labels))
	}
	return errors.Join(errs...)
}
