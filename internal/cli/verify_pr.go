package cli

import (
	"context"
	"fmt"
	"os"

	ghforge "github.com/fixrail/fixrail/internal/forge/github"
)

// prHead is the pull request verify --pr judges: its head commit (which
// must be in the clone), its base branch, which the clone's copy of must
// hold the claimed base, and its body, whose evidence block must be the
// trailers' claim.
type prHead struct{ Head, Base, Body string }

// prToVerify reads PR o.pr of o.repo through the GitHub forge (read only;
// the token comes from the environment, as for scan).
func prToVerify(ctx context.Context, stdio Stdio, o *verifyOpts) (*prHead, error) {
	if o.repo == "" {
		return nil, usagef("--pr needs --repo OWNER/NAME")
	}
	if o.pr < 0 {
		return nil, usagef("--pr must be a positive number")
	}
	f, err := ghforge.FromEnv(os.LookupEnv, o.repo, nil)
	if err != nil {
		return nil, usagef("%v", err)
	}
	pr, err := f.PullRequest(ctx, o.pr)
	if err != nil {
		return nil, &errServiceUnavailable{err}
	}
	fmt.Fprintf(stdio.Stderr, "verify: %s#%d: head %s (%s), base %s\n", o.repo, o.pr, pr.HeadSHA, pr.HeadRef, pr.BaseRef)
	return &prHead{Head: pr.HeadSHA, Base: pr.BaseRef, Body: pr.Body}, nil
}
