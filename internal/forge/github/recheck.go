package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
)

// After the draft exists: the watched checks and their annotations, a
// follow-up commit on the same branch, and fixrail's own section of the
// PR body. None of it can merge, mark ready, move the base or force: the
// push is the containment layer's (an explicit <sha>:refs/heads/fixrail/…
// refspec, never --force, so git refuses anything but a fast-forward), and
// the body edit sends the body alone.

// maxAnnotations bounds what one recheck reads of a check's annotations:
// enough to fix from, bounded for a check that reports thousands.
const maxAnnotations = 50

// Recheck polls the check runs of pub's head commit (the SHA, never the
// branch) until every watched check has finished, or the deadline. A
// watched check that concluded anything but success, neutral or skipped
// is red, and its annotations are read (at most maxAnnotations in all),
// once the PR is read back still open on its base and head. A watched
// check that names an app counts only that app's runs (others of its name
// are listed, not counted); one that names none and is green from more
// than one app is pending at once (forge.Answer).
// At the deadline a watched check that never reported is never-appeared,
// one still running pending.
func (f *Forge) Recheck(ctx context.Context, pub forge.Published, deadline time.Time, watch []forge.CheckRef) (forge.RecheckResult, error) {
	for {
		res, runs, running, err := f.watched(ctx, pub.Commit, watch)
		if err != nil {
			return res, err
		}
		if res.State == forge.CIRed {
			// Red sends the run to a follow-up (a retry reserved, the agent
			// run on these annotations): first, is the PR still the one
			// fixrail opened? PushFollowUp asks again before the push.
			if err := f.stillAsOpened(ctx, pub); err != nil {
				return res, err
			}
			return res, f.annotate(ctx, &res, runs)
		}
		if res.State == forge.CIGreen {
			return res, nil
		}
		if !running && len(res.Missing) == 0 && len(res.Ambiguous) > 0 {
			// Waiting cannot tell which app's green is the scanner's.
			res.Detail = "the watched checks did not pass on " + short(pub.Commit) + ": " + res.Detail
			return res, nil
		}
		if time.Now().Add(f.cfg.PollEvery).After(deadline) {
			if len(res.Missing) == len(watch) {
				res.State = forge.CINeverAppeared
				res.Detail = "the watched checks never reported on " + short(pub.Commit) + ": " + res.Detail
			} else {
				res.State = forge.CIPending
				res.Detail = "the watched checks had not finished on " + short(pub.Commit) + " at the deadline: " + res.Detail
			}
			return res, nil
		}
		if err := f.pause(ctx); err != nil {
			return res, err
		}
	}
}

// watched reads sha's check runs once and sums up the watched ones; the
// red ones are returned for their annotations, and whether any watched
// one was still running.
func (f *Forge) watched(ctx context.Context, sha string, watch []forge.CheckRef) (forge.RecheckResult, []*gh.CheckRun, bool, error) {
	res := forge.RecheckResult{HeadSHA: sha}
	all, err := f.checkRuns(ctx, sha)
	if err != nil {
		return res, nil, false, err
	}
	var runs []*gh.CheckRun
	var checks []forge.Check
	for _, r := range all {
		if sha := r.GetHeadSHA(); sha != "" && sha != res.HeadSHA {
			// A run of another commit answers nothing about this one.
			continue
		}
		runs = append(runs, r)
		checks = append(checks, runCheck(r))
	}
	var red []*gh.CheckRun
	var redNames, said []string
	running, listed := false, map[int]bool{}
	for _, w := range watch {
		a := forge.Answer(w, checks)
		for _, i := range a.Counted {
			if !listed[i] {
				listed[i] = true
				res.Checks = append(res.Checks, checks[i])
				if forge.Outcome(checks[i].State) == forge.OutcomeFailed {
					red = append(red, runs[i])
					redNames = append(redNames, fmt.Sprintf("%s (%s) from %s", checks[i].Name, checks[i].State, checks[i].From()))
				}
			}
		}
		switch a.State {
		case forge.OutcomeRunning:
			running = true
		case forge.OutcomeMissing:
			res.Missing = append(res.Missing, w.String())
		case forge.OutcomeAmbiguous:
			res.Ambiguous = append(res.Ambiguous, w.String())
		}
		said = append(said, a.Describe(checks))
	}
	switch {
	case len(red) > 0:
		res.State, res.Detail = forge.CIRed, "reported on "+short(sha)+": "+strings.Join(redNames, ", ")
	case running || len(res.Missing) > 0 || len(res.Ambiguous) > 0:
		n := 0
		for _, c := range res.Checks {
			if forge.Outcome(c.State) == forge.OutcomeRunning {
				n++
			}
		}
		res.State, res.Detail = forge.CIPending, fmt.Sprintf("%d running, %d not reported", n, len(res.Missing))
		if len(res.Ambiguous) > 0 {
			res.Detail += fmt.Sprintf(", %d reported green by more than one app with none named", len(res.Ambiguous))
		}
		res.Detail += "; " + strings.Join(said, "; ")
	default:
		res.State, res.Detail = forge.CIGreen, fmt.Sprintf("%d watched check(s) passed on %s: %s", len(res.Checks), short(sha), strings.Join(said, "; "))
	}
	return res, red, running, nil
}

// annotate reads the red runs' annotations, at most maxAnnotations in all.
func (f *Forge) annotate(ctx context.Context, res *forge.RecheckResult, red []*gh.CheckRun) error {
	for _, r := range red {
		for page := 1; page > 0 && page <= maxPages; {
			var list []*gh.CheckRunAnnotation
			var resp *gh.Response
			err := f.call(ctx, fmt.Sprintf("list annotations of check run %d", r.GetID()), true, func(ctx context.Context) (*gh.Response, error) {
				var err error
				list, resp, err = f.c.Checks.ListCheckRunAnnotations(ctx, f.cfg.Owner, f.cfg.Repo, r.GetID(), &gh.ListOptions{PerPage: 50, Page: page})
				return resp, err
			})
			if err != nil {
				return err
			}
			for _, a := range list {
				if len(res.Annotations) == maxAnnotations {
					res.Truncated = true
					return nil
				}
				res.Annotations = append(res.Annotations, forge.Annotation{
					Check: r.GetName(), Path: a.GetPath(), StartLine: a.GetStartLine(), EndLine: a.GetEndLine(),
					Level: a.GetAnnotationLevel(), Title: a.GetTitle(), Message: a.GetMessage(),
				})
			}
			page = resp.NextPage
		}
	}
	return nil
}

// PushFollowUp pushes commit to pub's branch: the same containment-layer
// push as Publish, to the same repository (the fork, with forge.push_to).
// The refspec carries no "+" and git gets no --force, so the remote takes
// it only as a fast-forward of the branch; the caller builds commit on
// pub.Commit.
func (f *Forge) PushFollowUp(ctx context.Context, pub forge.Published, commit string) (forge.Published, error) {
	if err := forge.CheckHead(forge.PR{Head: pub.Branch, Base: "", Draft: true, Commit: commit}); err != nil {
		return pub, err
	}
	pusher, err := f.pusher()
	if err != nil {
		return pub, err
	}
	if err := f.stillAsOpened(ctx, pub); err != nil {
		return pub, err
	}
	if err := pusher.Push(ctx, commit+":refs/heads/"+pub.Branch); err != nil {
		return pub, fmt.Errorf("github: push the follow-up commit to %s: %w", pub.Branch, err)
	}
	pub.Commit = commit
	return pub, nil
}

// stillAsOpened reads pub's PR back before a follow-up leaves: the watch
// and the fix phase take long enough for anyone with write access to close
// or merge the draft, or retarget it at another base. git's fast-forward
// rule does not see any of that, and a push then would add a change to a PR
// that is no longer the one fixrail opened and judged (or recreate the
// branch a merge deleted).
func (f *Forge) stillAsOpened(ctx context.Context, pub forge.Published) error {
	if pub.Number == 0 || pub.Base == "" {
		return fmt.Errorf("%w: no PR and base to push a follow-up to", forge.ErrForge)
	}
	now, err := f.ReadBack(ctx, pub)
	if err != nil {
		return err
	}
	if now.Drift != "" {
		return fmt.Errorf("%w: PR #%d %s; no follow-up pushed", forge.ErrForge, pub.Number, now.Drift)
	}
	return nil
}

// ReadBack reads pub's PR as it stands: its body, and how it is no longer
// the PR fixrail opened on pub.Base and last pushed pub.Commit to (merged,
// closed, retargeted, another head branch, or a head commit someone else
// pushed). The follow-up push asks it before it leaves; the pipeline asks
// it after the CI gate's wait, before it labels the PR or writes its
// section of the body.
func (f *Forge) ReadBack(ctx context.Context, pub forge.Published) (forge.PRNow, error) {
	if pub.Number == 0 {
		return forge.PRNow{}, fmt.Errorf("%w: no PR to read back", forge.ErrForge)
	}
	var p *gh.PullRequest
	err := f.call(ctx, fmt.Sprintf("get PR #%d", pub.Number), true, func(ctx context.Context) (*gh.Response, error) {
		got, resp, err := f.c.PullRequests.Get(ctx, f.cfg.Owner, f.cfg.Repo, pub.Number)
		p = got
		return resp, err
	})
	if err != nil {
		return forge.PRNow{}, err
	}
	now := forge.PRNow{Body: p.GetBody()}
	why := ""
	switch {
	case p.GetMerged() || p.MergedAt != nil:
		why, now.Closed = "was merged", true
	case p.GetState() != "open":
		why, now.Closed = "is "+p.GetState()+", not open", true
	case pub.Base != "" && p.GetBase().GetRef() != pub.Base:
		why = "now targets " + p.GetBase().GetRef() + ", not " + pub.Base
	case p.GetHead().GetRef() != pub.Branch:
		why = "has head " + p.GetHead().GetRef() + ", not " + pub.Branch
	case p.GetHead().GetSHA() != "" && p.GetHead().GetSHA() != pub.Commit:
		why = "has head commit " + short(p.GetHead().GetSHA()) + ", not " + short(pub.Commit) + ": someone else pushed to " + pub.Branch
	}
	if why != "" {
		now.Drift = why + " since fixrail opened it"
	}
	return now, nil
}

// EditSection writes fixrail's marked section into body, the PR's body as
// ReadBack returned it (forge.ReplaceSection: its own unchanged section
// replaced, else the section appended), keeping every byte a person wrote
// outside it. The PATCH sends the body and nothing else.
func (f *Forge) EditSection(ctx context.Context, pub forge.Published, body, section string) error {
	if pub.Number == 0 {
		return errors.New("github: no PR to edit")
	}
	body = forge.ReplaceSection(body, section)
	if n := utf8.RuneCountInString(body); n > maxBody {
		// Cutting to fit would cut fixrail's section (appended last, so
		// its reasons for review go and its end marker with them, and the
		// next rewrite appends another) or a person's text after it:
		// nothing is sent, and the run says the section was not written.
		return fmt.Errorf("github: PR #%d's body with fixrail's section would be %d characters, past GitHub's %d: not edited", pub.Number, n, maxBody)
	}
	return f.call(ctx, fmt.Sprintf("edit fixrail's section of PR #%d", pub.Number), false, func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := f.c.PullRequests.Edit(ctx, f.cfg.Owner, f.cfg.Repo, pub.Number, &gh.PullRequest{Body: new(body)})
		return resp, err
	})
}

// AddLabels labels the PR (creating fixrail's labels on first use).
func (f *Forge) AddLabels(ctx context.Context, pub forge.Published, labels []string) error {
	if pub.Number == 0 {
		return errors.New("github: no PR to label")
	}
	return f.label(ctx, pub.Number, labels)
}
