package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
)

// maxBody is GitHub's limit on a PR body or comment (characters).
const maxBody = 65536

// Publish pushes pr.Commit to refs/heads/pr.Head through the containment
// layer, then opens a draft PR and checks that it came back a draft.
// Labels are created on first use and added afterwards; a label that fails
// is a warning (the body says the same), not an error.
//
// A repository that cannot have drafts answers 422: that is
// forge.ErrDraftUnsupported, and no PR exists. fixrail never retries as a
// ready PR. The pushed branch stays (fixrail deletes no refs).
func (f *Forge) Publish(ctx context.Context, pr forge.PR) (forge.Published, error) {
	if err := forge.CheckHead(pr); err != nil {
		return forge.Published{}, err
	}
	pusher, err := f.pusher()
	if err != nil {
		return forge.Published{}, err
	}
	pub := forge.Published{Branch: pr.Head, Commit: pr.Commit, Base: pr.Base}
	if err := pusher.Push(ctx, pr.Commit+":refs/heads/"+pr.Head); err != nil {
		return pub, fmt.Errorf("github: push %s: %w", pr.Head, err)
	}
	head := pr.Head
	if f.cfg.PushTo != "" {
		// Across repositories GitHub names the head owner:branch.
		owner, _ := f.headRepo()
		head = owner + ":" + pr.Head
	}
	req := gh.CreatePullRequest{
		Title:               new(pr.Title),
		Head:                head,
		Base:                pr.Base,
		Body:                new(truncate(pr.Body)),
		Draft:               new(true),
		MaintainerCanModify: new(false),
	}
	var got *gh.PullRequest
	// Not retried blindly: a create that reached GitHub before the 5xx would
	// be made twice. An outage is followed by one lookup of the head instead.
	err = f.call(ctx, "open draft PR", false, func(ctx context.Context) (*gh.Response, error) {
		p, resp, err := f.c.PullRequests.Create(ctx, f.cfg.Owner, f.cfg.Repo, req)
		got = p
		return resp, err
	})
	if errors.Is(err, forge.ErrUnavailable) {
		if found, lerr := f.openPRFor(ctx, pr.Head); lerr == nil && found != nil {
			got, err = found, nil
		}
	}
	if err != nil {
		return pub, err
	}
	pub.Number, pub.Location = got.GetNumber(), got.GetHTMLURL()
	if !got.GetDraft() {
		return pub, fmt.Errorf("%w: PR #%d came back as ready for review; fixrail cannot turn it back into a draft", forge.ErrNotDraft, got.GetNumber())
	}
	if hr := got.GetHead().GetRepo().GetFullName(); hr != "" && !strings.EqualFold(hr, f.HeadRepo()) {
		return pub, fmt.Errorf("github: PR #%d's head is in %s, not %s, where fixrail pushed", got.GetNumber(), hr, f.HeadRepo())
	}
	if sha := got.GetHead().GetSHA(); sha != "" && sha != pr.Commit {
		return pub, fmt.Errorf("github: PR #%d's head is %s, not the pushed %s: the branch moved", got.GetNumber(), sha, pr.Commit)
	}
	if len(pr.Labels) > 0 {
		if err := f.label(ctx, got.GetNumber(), pr.Labels); err != nil {
			pub.Warnings = append(pub.Warnings, "labels: "+err.Error())
		}
	}
	return pub, nil
}

// openPRFor finds the open PR whose head is this repository's branch.
func (f *Forge) openPRFor(ctx context.Context, branch string) (*gh.PullRequest, error) {
	var prs []*gh.PullRequest
	err := f.call(ctx, "look up PR for "+branch, true, func(ctx context.Context) (*gh.Response, error) {
		owner, _ := f.headRepo()
		p, resp, err := f.c.PullRequests.List(ctx, f.cfg.Owner, f.cfg.Repo, &gh.PullRequestListOptions{State: "open", Head: owner + ":" + branch})
		prs = p
		return resp, err
	})
	if err != nil || len(prs) == 0 {
		return nil, err
	}
	return prs[0], nil
}

// labelColors gives fixrail's own labels a colour; others get GitHub's grey.
var labelColors = map[string]string{
	"fixrail":            "5319e7",
	"needs-review":       "fbca04",
	forge.LabelCIFailed:  "d93f0b",
	forge.LabelEscalated: "b60205",
	forge.LabelNotRepro:  "c5def5",
}

// label creates each label (an existing one is success) and adds them all
// to issue or PR number.
func (f *Forge) label(ctx context.Context, number int, labels []string) error {
	var errs []error
	for _, name := range labels {
		color := labelColors[name]
		if color == "" {
			color = "ededed"
		}
		err := f.call(ctx, "create label "+name, true, func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := f.c.Issues.CreateLabel(ctx, f.cfg.Owner, f.cfg.Repo, gh.CreateIssueLabelRequest{
				Name: name, Color: new(color), Description: new("Set by fixrail"),
			})
			return resp, err
		})
		if err != nil && !alreadyExists(err) {
			if errors.Is(err, forge.ErrRateLimited) {
				return err
			}
			errs = append(errs, err)
		}
	}
	err := f.call(ctx, fmt.Sprintf("add labels to #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := f.c.Issues.AddLabelsToIssue(ctx, f.cfg.Owner, f.cfg.Repo, number, labels)
		return resp, err
	})
	return errors.Join(append(errs, err)...)
}

// alreadyExists is the 422 POST /labels answers for an existing name.
func alreadyExists(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != 422 {
		return false
	}
	for _, e := range er.Errors {
		if e.Code == "already_exists" {
			return true
		}
	}
	return false
}

// truncate cuts text to GitHub's body limit, after its last whole line,
// saying so. Whole lines: every value fixrail quotes inline is a code span
// on one line (markdown.Code, a table cell), and a cut inside one would
// leave its opening backticks unmatched, so the rest of the line — an
// agent's path, a test's name — would render as Markdown (a mention, a
// link). A cut inside a fenced block leaves the fence open: the rest is
// code.
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxBody {
		return s
	}
	const marker = "\n\n…(truncated by fixrail: GitHub's 65536-character limit)\n"
	cut := string([]rune(s)[:maxBody-utf8.RuneCountInString(marker)])
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	return cut + marker
}

// pusher is the containment layer's push, once its recorded URL is shown
// to name the repository fixrail pushes to.
func (f *Forge) pusher() (Pusher, error) {
	if f.cfg.Remote == nil {
		return nil, errors.New("github: a push needs the repository's push (Config.Remote)")
	}
	if err := f.checkPushURL(f.cfg.Remote.PushURL()); err != nil {
		return nil, err
	}
	return f.cfg.Remote, nil
}

// checkPushURL refuses to open a PR after pushing anywhere but the
// repository fixrail pushes to: a push URL on a forge host must name
// owner/name — with forge.push_to, the fork's, so a configured fork never
// silently becomes a push to the base. A local path (a mirror, the tests'
// bare remote) has no owner to compare.
func (f *Forge) checkPushURL(raw string) error {
	host, path := splitRemote(raw)
	if host == "" {
		return nil
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if !strings.EqualFold(path, f.HeadRepo()) {
		what := f.HeadRepo()
		if f.cfg.PushTo != "" {
			what += " (forge.push_to; set the clone's push URL to the fork: git remote set-url --push origin <fork URL>)"
		}
		return fmt.Errorf("%w: the push URL names %q, not %s", forge.ErrBadHead, path, what)
	}
	return nil
}

// splitRemote returns a remote URL's host and path; host is "" for a local
// path or file:// URL.
func splitRemote(raw string) (host, path string) {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && strings.Contains(raw, "://") {
		if u.Scheme == "file" {
			return "", u.Path
		}
		return u.Hostname(), u.Path
	}
	// scp-like user@host:path (a colon before any slash).
	colon, slash := strings.IndexByte(raw, ':'), strings.IndexByte(raw, '/')
	if colon > 0 && (slash < 0 || colon < slash) {
		h := raw[:colon]
		if at := strings.LastIndexByte(h, '@'); at >= 0 {
			h = h[at+1:]
		}
		return h, raw[colon+1:]
	}
	return "", raw
}
