package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
)

// AssertProtected checks that base requires a pull request before merging,
// and that every one of requiredChecks is a required status check. It reads
// what any token with Metadata and Contents read may: the rules for the
// branch (active rulesets at any level) and the branch's protected flag and
// required contexts; the classic protection endpoint (Administration: read,
// which a GITHUB_TOKEN never has) only when those show protection that the
// rules do not explain.
//
// Nothing requiring a PR ⇒ *forge.ProtectionError, errors.Is ErrNoProtection.
// Protection that cannot be confirmed with this token ⇒ ErrProtectionUnreadable.
// Both are HALT no-branch-protection. Rate limits keep their own type.
func (f *Forge) AssertProtected(ctx context.Context, base string, requiredChecks []string) (forge.Protection, error) {
	p := forge.Protection{Branch: base, Applicable: true}
	var contexts []string
	var pins []forge.CheckRef
	branchRead, rulesRead, classicRead := true, true, false

	var b *gh.Branch
	err := f.call(ctx, "get branch "+base, true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		// Not Repositories.GetBranch: it skips go-github's response check,
		// so a rate limit would come back as a bare "unexpected status".
		// Do checks the response; a renamed branch's 301 is not followed.
		req, err := f.c.NewRequest(ctx, "GET", fmt.Sprintf("repos/%v/%v/branches/%v", f.cfg.Owner, f.cfg.Repo, url.PathEscape(base)), nil)
		if err != nil {
			return nil, err
		}
		resp, err = f.c.Do(req, &b)
		return resp, err
	})
	switch {
	case errors.Is(err, forge.ErrRateLimited):
		return p, err
	case status(err) == 404:
		return p, &forge.ProtectionError{Found: p, Detail: "the branch does not exist on " + f.Repo()}
	case err != nil:
		branchRead = false
		p.Unread = append(p.Unread, "branch: "+err.Error())
	default:
		p.Protected = b.GetProtected()
		if rsc := b.GetProtection().GetRequiredStatusChecks(); rsc != nil {
			contexts = append(contexts, checkNames(rsc)...)
			pins = append(pins, classicPins(rsc)...)
		}
	}

	for page := 1; page > 0 && page <= maxPages; {
		var rules *gh.BranchRules
		var resp *gh.Response
		err := f.call(ctx, "get rules for "+base, true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			rules, resp, err = f.c.Repositories.ListRulesForBranch(ctx, f.cfg.Owner, f.cfg.Repo, base, &gh.ListOptions{PerPage: 100, Page: page})
			return resp, err
		})
		if errors.Is(err, forge.ErrRateLimited) {
			return p, err
		}
		if err != nil {
			rulesRead = false
			p.Unread = append(p.Unread, "rules: "+err.Error())
			break
		}
		for _, r := range rules.PullRequest {
			p.RequiresPR = true
			p.Sources = append(p.Sources, fmt.Sprintf("ruleset %s#%d (pull_request, %d approval(s))", r.RulesetSource, r.RulesetID, r.Parameters.RequiredApprovingReviewCount))
		}
		for _, r := range rules.RequiredStatusChecks {
			for _, c := range r.Parameters.RequiredStatusChecks {
				contexts = append(contexts, c.Context)
				// integration_id: only that app's check run satisfies the rule.
				if id := c.GetIntegrationID(); id > 0 {
					pins = append(pins, forge.CheckRef{Name: c.Context, AppID: id, PinnedBy: fmt.Sprintf("ruleset %s#%d", r.RulesetSource, r.RulesetID)})
				}
			}
		}
		page = resp.NextPage
	}

	// Classic protection says whether it requires reviews only to admins.
	if !p.RequiresPR && (p.Protected || !branchRead) {
		var prot *gh.Protection
		err := f.call(ctx, "get classic protection of "+base, true, func(ctx context.Context) (*gh.Response, error) {
			var resp *gh.Response
			var err error
			prot, resp, err = f.c.Repositories.GetBranchProtection(ctx, f.cfg.Owner, f.cfg.Repo, base)
			return resp, err
		})
		switch {
		case errors.Is(err, forge.ErrRateLimited):
			return p, err
		case errors.Is(err, gh.ErrBranchNotProtected):
			// Classic protection is off; only rules could require a PR.
			classicRead = true
		case err != nil:
			p.Unread = append(p.Unread, "classic protection (needs Administration: read): "+err.Error())
		default:
			classicRead = true
			if prot.RequiredPullRequestReviews != nil {
				p.RequiresPR = true
				p.Sources = append(p.Sources, fmt.Sprintf("classic protection (%d approval(s))", prot.RequiredPullRequestReviews.RequiredApprovingReviewCount))
			}
			if rsc := prot.RequiredStatusChecks; rsc != nil {
				contexts = append(contexts, checkNames(rsc)...)
				pins = append(pins, classicPins(rsc)...)
			}
		}
	}
	slices.Sort(contexts)
	p.RequiredChecks = slices.Compact(contexts)
	p.PinnedChecks = compactPins(pins)

	if !p.RequiresPR {
		// Absent only when everything was readable and showed nothing;
		// protection we saw but could not read, or could not look for, is
		// unreadable.
		unreadable := !rulesRead || !branchRead && !classicRead || p.Protected && !classicRead
		detail := "no active ruleset or classic protection requires a pull request"
		if p.Protected && !classicRead {
			detail = "the branch is protected, but this token cannot see whether a pull request is required (use a ruleset, readable with Metadata: read, or a token with Administration: read)"
		} else if unreadable {
			detail = "the rules for the branch could not be read"
		}
		return p, &forge.ProtectionError{Found: p, Unreadable: unreadable, Detail: detail}
	}
	var missing []string
	for _, c := range requiredChecks {
		if !slices.Contains(p.RequiredChecks, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return p, &forge.ProtectionError{Found: p, MissingChecks: missing}
	}
	return p, nil
}

func checkNames(rsc *gh.RequiredStatusChecks) []string {
	var out []string
	if rsc.Contexts != nil {
		out = append(out, *rsc.Contexts...)
	}
	if rsc.Checks != nil {
		for _, c := range *rsc.Checks {
			out = append(out, c.Context)
		}
	}
	return out
}

// classicPins are classic protection's checks pinned to an app: app_id
// set and not -1 (-1, or none, lets any app set the check).
func classicPins(rsc *gh.RequiredStatusChecks) []forge.CheckRef {
	var out []forge.CheckRef
	if rsc.Checks != nil {
		for _, c := range *rsc.Checks {
			if id := c.GetAppID(); id > 0 {
				out = append(out, forge.CheckRef{Name: c.Context, AppID: id, PinnedBy: "classic protection"})
			}
		}
	}
	return out
}

// compactPins sorts pins by name and app id and keeps one of each (the
// branch endpoint and the classic one report the same pin).
func compactPins(pins []forge.CheckRef) []forge.CheckRef {
	slices.SortStableFunc(pins, func(a, b forge.CheckRef) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.AppID, b.AppID)
	})
	return slices.CompactFunc(pins, func(a, b forge.CheckRef) bool { return a.Name == b.Name && a.AppID == b.AppID })
}
