package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/forge"
)

// Probe is one read-only request doctor makes to see whether the token
// holds a permission.
type Probe struct {
	Permission string `json:"permission"` // fine-grained name, e.g. "Checks: read"
	OK         bool   `json:"ok"`
	Detail     string `json:"detail"`
}

// Diagnosis is what doctor reports about a repository and the token.
type Diagnosis struct {
	Repo          string `json:"repo"`
	Private       bool   `json:"private"`
	DefaultBranch string `json:"default_branch"`
	// Push and Admin are the token's rights as GitHub reports them on the
	// repository (absent for some installation tokens).
	Push  *bool `json:"push,omitempty"`
	Admin *bool `json:"admin,omitempty"`
	// Scopes is X-OAuth-Scopes (classic personal access tokens only).
	Scopes string  `json:"scopes,omitempty"`
	Probes []Probe `json:"probes"`

	Protection    forge.Protection `json:"protection"`
	ProtectionErr string           `json:"protection_error,omitempty"`
	// DraftsKnown is false for a private repository: drafts there depend
	// on the plan, which the API does not show.
	DraftsKnown bool `json:"drafts_known"`
	// DraftsUnsupported: the pull-request probe was answered "Draft pull
	// requests are not supported in this repository".
	DraftsUnsupported bool `json:"drafts_unsupported,omitempty"`
	// ActionsCanOpenPRs is the "Allow GitHub Actions to create and approve
	// pull requests" setting; nil when the token cannot read it.
	ActionsCanOpenPRs *bool `json:"actions_can_open_prs,omitempty"`
}

// Diagnose writes nothing: the repository, a probe per read permission a
// run needs, the pull-request probe CheckAccess makes (a create GitHub can
// only refuse), the default branch's protection, and the Actions setting.
// The error is set only when the repository itself is unreadable.
func (f *Forge) Diagnose(ctx context.Context) (Diagnosis, error) {
	d := Diagnosis{Repo: f.Repo()}
	var repo *gh.Repository
	var resp *gh.Response
	err := f.call(ctx, "get repository", true, func(ctx context.Context) (*gh.Response, error) {
		var err error
		repo, resp, err = f.c.Repositories.Get(ctx, f.cfg.Owner, f.cfg.Repo)
		return resp, err
	})
	if err != nil {
		return d, err
	}
	d.Private, d.DefaultBranch = repo.GetPrivate(), repo.GetDefaultBranch()
	d.DraftsKnown = !d.Private
	if p := repo.GetPermissions(); p != nil {
		d.Push, d.Admin = new(p.GetPush()), new(p.GetAdmin())
	}
	if resp != nil {
		d.Scopes = resp.Header.Get("X-OAuth-Scopes")
	}
	base := d.DefaultBranch
	probe := func(perm string, fn func(ctx context.Context) (*gh.Response, error)) {
		err := f.call(ctx, "probe "+perm, true, fn)
		p := Probe{Permission: perm, OK: err == nil, Detail: "readable"}
		if err != nil {
			p.Detail = err.Error()
		}
		d.Probes = append(d.Probes, p)
	}
	one := &gh.ListOptions{PerPage: 1}
	probe("Metadata: read", func(context.Context) (*gh.Response, error) { return resp, nil })
	probe("Pull requests: read", func(ctx context.Context) (*gh.Response, error) {
		_, r, err := f.c.PullRequests.List(ctx, f.cfg.Owner, f.cfg.Repo, &gh.PullRequestListOptions{State: "open", ListOptions: *one})
		return r, err
	})
	probe("Issues: read", func(ctx context.Context) (*gh.Response, error) {
		_, r, err := f.c.Issues.ListLabels(ctx, f.cfg.Owner, f.cfg.Repo, one)
		return r, err
	})
	probe("Checks: read", func(ctx context.Context) (*gh.Response, error) {
		_, r, err := f.c.Checks.ListCheckRunsForRef(ctx, f.cfg.Owner, f.cfg.Repo, base, &gh.ListCheckRunsOptions{ListOptions: *one})
		return r, err
	})
	probe("Commit statuses: read", func(ctx context.Context) (*gh.Response, error) {
		_, r, err := f.c.Repositories.GetCombinedStatus(ctx, f.cfg.Owner, f.cfg.Repo, base, one)
		return r, err
	})
	// Only run --alert N needs it; GitHub answers 403 as well when
	// Dependabot alerts are off for the repository, and the detail says so.
	probe("Dependabot alerts: read, for run --alert (optional)", func(ctx context.Context) (*gh.Response, error) {
		_, r, err := f.c.Dependabot.ListRepoAlerts(ctx, f.cfg.Owner, f.cfg.Repo, &gh.ListAlertsOptions{ListCursorOptions: gh.ListCursorOptions{PerPage: 1}})
		return r, err
	})
	// The one write doctor can probe without a clone or an issue: a PR
	// from a head that cannot exist (CheckAccess's probe), which GitHub
	// can only refuse.
	pr := Probe{Permission: "Pull requests: write", OK: true}
	var err2 error
	pr.Detail, err2 = f.ProbePullRequests(ctx, base)
	switch {
	case errors.Is(err2, forge.ErrDraftUnsupported):
		pr.Detail = "POST /pulls was answered 422 (GitHub refused the request's content, not the token): " + err2.Error()
		d.DraftsUnsupported = true
	case err2 != nil:
		pr.OK, pr.Detail = false, err2.Error()
	}
	d.Probes = append(d.Probes, pr)
	var wp *gh.DefaultWorkflowPermissionRepository
	probe("Administration: read (optional)", func(ctx context.Context) (*gh.Response, error) {
		var r *gh.Response
		var err error
		wp, r, err = f.c.Repositories.GetDefaultWorkflowPermissions(ctx, f.cfg.Owner, f.cfg.Repo)
		return r, err
	})
	if wp != nil && wp.CanApprovePullRequestReviews != nil {
		d.ActionsCanOpenPRs = new(*wp.CanApprovePullRequestReviews)
	}
	p, err := f.AssertProtected(ctx, base, nil)
	d.Protection = p
	if err != nil {
		d.ProtectionErr = err.Error()
	}
	if errors.Is(err, forge.ErrRateLimited) {
		return d, err
	}
	return d, nil
}

// Summary lines for doctor, one per aspect: name, status (ok, warn, fail),
// detail. viaActionsToken says the token is the workflow's GITHUB_TOKEN.
func (d Diagnosis) Summary(viaActionsToken bool) [][3]string {
	var out [][3]string
	add := func(name, status, detail string) { out = append(out, [3]string{name, status, detail}) }
	vis := "public"
	if d.Private {
		vis = "private"
	}
	rights := "not reported for this token"
	if d.Push != nil {
		rights = fmt.Sprintf("push %s, admin %s", yesNo(*d.Push), yesNo(*d.Admin))
	}
	add("github-repo", "ok", fmt.Sprintf("%s (%s, default branch %s); token rights: %s", d.Repo, vis, d.DefaultBranch, rights))
	if d.Scopes != "" {
		add("github-scopes", "ok", "classic token scopes: "+d.Scopes)
	}
	for _, p := range d.Probes {
		st := "ok"
		if !p.OK {
			st = "fail"
			if strings.HasSuffix(p.Permission, "(optional)") {
				st = "warn"
			}
		}
		add("github-permission", st, p.Permission+": "+p.Detail)
	}
	add("github-permission", "ok", "Contents: write and Issues: write are probed when a run starts (P1; the push dry run needs the clone, the comment probe the finding's issue)")
	if d.ProtectionErr != "" {
		add("branch-protection", "fail", d.ProtectionErr+" (runs would HALT no-branch-protection)")
	} else {
		add("branch-protection", "ok", fmt.Sprintf("%s requires a pull request (%s)", d.Protection.Branch, strings.Join(d.Protection.Sources, "; ")))
	}
	if d.DraftsUnsupported {
		add("draft-prs", "fail", "GitHub answered \"Draft pull requests are not supported in this repository\": every run would ESCALATE draft-unsupported (fixrail never opens a ready PR)")
	} else if d.DraftsKnown {
		add("draft-prs", "ok", "available (public repository)")
	} else {
		add("draft-prs", "warn", "private repository: drafts need GitHub Team or Enterprise; on Free/Pro every run would ESCALATE draft-unsupported (fixrail never opens a ready PR)")
	}
	switch {
	case d.ActionsCanOpenPRs == nil:
		add("actions-prs", "warn", "unknown: reading \"Allow GitHub Actions to create and approve pull requests\" needs Administration: read")
	case *d.ActionsCanOpenPRs:
		add("actions-prs", "ok", "GitHub Actions may create pull requests")
	case viaActionsToken:
		add("actions-prs", "fail", "GitHub Actions may not create pull requests: turn on Settings → Actions → General → \"Allow GitHub Actions to create and approve pull requests\", or use FIXRAIL_GITHUB_TOKEN")
	default:
		add("actions-prs", "warn", "GitHub Actions may not create pull requests with GITHUB_TOKEN (this token is not GITHUB_TOKEN)")
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
