package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/findings"
)

// The Forge is the findings.AlertSource for Dependabot intake.
var _ findings.AlertSource = (*Forge)(nil)

// AlertPermission is the token permission the Dependabot alerts endpoint
// needs, as GitHub names it for fine-grained tokens and GitHub Apps, and
// as an Actions workflow grants it.
const AlertPermission = `"Dependabot alerts: read" (an Actions workflow: permissions: vulnerability-alerts: read)`

// DependabotAlert reads alert number (GET /repos/{o}/{r}/dependabot/alerts/{n}).
// A refusal (403, 404) says which permission the token needs: GitHub answers
// 404 as well as 403 to a token that may not see the alerts. Rate limits
// and outages stop the intake (Halting), as for an issue.
func (f *Forge) DependabotAlert(ctx context.Context, number int) (findings.DependabotAlert, error) {
	var a *gh.DependabotAlert
	err := f.call(ctx, fmt.Sprintf("get Dependabot alert #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		a, resp, err = f.c.Dependabot.GetRepoAlert(ctx, f.cfg.Owner, f.cfg.Repo, number)
		return resp, err
	})
	if s := status(err); s == 403 || s == 404 {
		return findings.DependabotAlert{}, fmt.Errorf("%w: the token needs the repository permission %s, and the repository Dependabot alerts turned on (a 404 also means there is no alert #%d)", err, AlertPermission, number)
	}
	if err != nil {
		return findings.DependabotAlert{}, halting(err)
	}
	return alertData(a), nil
}

// alertData is what fixrail reads of an alert; everything else is ignored.
func alertData(a *gh.DependabotAlert) findings.DependabotAlert {
	d := findings.DependabotAlert{
		Number: a.GetNumber(), State: a.GetState(), DismissedReason: a.GetDismissedReason(),
		Ecosystem:    a.GetDependency().GetPackage().GetEcosystem(),
		Package:      a.GetDependency().GetPackage().GetName(),
		ManifestPath: a.GetDependency().GetManifestPath(),
		Scope:        a.GetDependency().GetScope(),
		GHSA:         a.GetSecurityAdvisory().GetGHSAID(),
		CVE:          a.GetSecurityAdvisory().GetCVEID(),
		URL:          a.GetHTMLURL(),
	}
	for _, id := range a.GetSecurityAdvisory().Identifiers {
		d.Identifiers = append(d.Identifiers, findings.AlertIdentifier{Type: id.GetType(), Value: id.GetValue()})
	}
	if v := a.SecurityVulnerability; v != nil {
		d.VulnEcosystem, d.VulnPackage = v.GetPackage().GetEcosystem(), v.GetPackage().GetName()
		d.VulnerableRange, d.FirstPatched = v.GetVulnerableVersionRange(), v.GetFirstPatchedVersion().GetIdentifier()
	}
	return d
}
