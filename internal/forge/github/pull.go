package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v93/github"
)

// PullRequest is what `fixrail verify --pr` needs of a pull request: the
// commit at its head, the branch it targets and its body.
type PullRequest struct {
	Number  int
	HeadSHA string
	HeadRef string
	BaseRef string
	Body    string
	Draft   bool
}

// PullRequest reads pull request number. Read only.
func (f *Forge) PullRequest(ctx context.Context, number int) (PullRequest, error) {
	var pr *gh.PullRequest
	err := f.call(ctx, fmt.Sprintf("read PR #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
		p, resp, err := f.c.PullRequests.Get(ctx, f.cfg.Owner, f.cfg.Repo, number)
		pr = p
		return resp, err
	})
	if err != nil {
		return PullRequest{}, err
	}
	out := PullRequest{Number: number, HeadSHA: pr.GetHead().GetSHA(), HeadRef: pr.GetHead().GetRef(), BaseRef: pr.GetBase().GetRef(), Body: pr.GetBody(), Draft: pr.GetDraft()}
	if !fullSHA(out.HeadSHA) || out.BaseRef == "" {
		return PullRequest{}, fmt.Errorf("github: PR #%d has no head commit or base branch", number)
	}
	return out, nil
}

func fullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}
