package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/findings"
)

// The Forge is the findings.ScanAlertSource for code- and secret-scanning
// intake. It only reads: an alert is never dismissed, reopened or
// resolved by fixrail (the strict fake forbids the PATCH).
var _ findings.ScanAlertSource = (*Forge)(nil)

// Permissions the scanning endpoints need, as GitHub names them for
// fine-grained tokens and GitHub Apps, and as an Actions workflow grants them.
const (
	CodeScanningPermission   = `"Code scanning alerts: read" (an Actions workflow: permissions: security-events: read)`
	SecretScanningPermission = `"Secret scanning alerts: read" (GITHUB_TOKEN cannot be granted it: use a GitHub App or a fine-grained token)`
)

// CodeScanningAlert reads alert number (GET /repos/{o}/{r}/code-scanning/alerts/{n}).
func (f *Forge) CodeScanningAlert(ctx context.Context, number int) (findings.CodeScanningAlert, error) {
	var a *gh.Alert
	err := f.call(ctx, fmt.Sprintf("get code-scanning alert #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		a, resp, err = f.c.CodeScanning.GetAlert(ctx, f.cfg.Owner, f.cfg.Repo, int64(number))
		return resp, err
	})
	if s := status(err); s == 403 || s == 404 {
		return findings.CodeScanningAlert{}, fmt.Errorf("%w: the token needs the repository permission %s, and code scanning set up (a 404 also means there is no alert #%d)", err, CodeScanningPermission, number)
	}
	if err != nil {
		return findings.CodeScanningAlert{}, halting(err)
	}
	return codeScanningData(a), nil
}

// SecretScanningAlert reads alert number (GET /repos/{o}/{r}/secret-scanning/alerts/{n}).
func (f *Forge) SecretScanningAlert(ctx context.Context, number int) (findings.SecretScanningAlert, error) {
	var a *gh.SecretScanningAlert
	err := f.call(ctx, fmt.Sprintf("get secret-scanning alert #%d", number), true, func(ctx context.Context) (*gh.Response, error) {
		var resp *gh.Response
		var err error
		a, resp, err = f.c.SecretScanning.GetAlert(ctx, f.cfg.Owner, f.cfg.Repo, int64(number))
		return resp, err
	})
	if s := status(err); s == 403 || s == 404 {
		return findings.SecretScanningAlert{}, fmt.Errorf("%w: the token needs the repository permission %s, and secret scanning turned on (a 404 also means there is no alert #%d)", err, SecretScanningPermission, number)
	}
	if err != nil {
		return findings.SecretScanningAlert{}, halting(err)
	}
	return secretScanningData(a), nil
}

func codeScanningData(a *gh.Alert) findings.CodeScanningAlert {
	r, in := a.GetRule(), a.GetMostRecentInstance()
	loc := in.GetLocation()
	return findings.CodeScanningAlert{
		Number: a.GetNumber(), State: a.GetState(), DismissedReason: a.GetDismissedReason(),
		Tool:   a.GetTool().GetName(),
		RuleID: r.GetID(), RuleName: r.GetName(), RuleDescription: r.GetDescription(),
		RuleFullDescription: r.GetFullDescription(), RuleHelp: r.GetHelp(), Tags: r.Tags,
		RuleSeverity: r.GetSeverity(), SecuritySeverity: r.GetSecuritySeverityLevel(),
		Message: in.GetMessage().GetText(),
		Path:    loc.GetPath(), StartLine: loc.GetStartLine(), EndLine: loc.GetEndLine(),
		URL: a.GetHTMLURL(),
	}
}

func secretScanningData(a *gh.SecretScanningAlert) findings.SecretScanningAlert {
	loc := a.GetFirstLocationDetected()
	return findings.SecretScanningAlert{
		Number: a.GetNumber(), State: a.GetState(), Resolution: a.GetResolution(),
		SecretType: a.GetSecretType(), SecretTypeName: a.GetSecretTypeDisplayName(), Secret: a.GetSecret(),
		Path: loc.GetPath(), StartLine: loc.GetStartline(), EndLine: loc.GetEndLine(),
		HasMoreLocations: a.GetHasMoreLocations(), Validity: a.GetValidity(), URL: a.GetHTMLURL(),
	}
}

// OpenCodeScanningAlerts lists the repository's open code-scanning alerts
// (at most maxPages pages of 100).
func (f *Forge) OpenCodeScanningAlerts(ctx context.Context) ([]findings.CodeScanningAlert, error) {
	return listOpen(ctx, f, "code-scanning", CodeScanningPermission+", and code scanning set up", func(ctx context.Context, page int) ([]*gh.Alert, *gh.Response, error) {
		return f.c.CodeScanning.ListAlertsForRepo(ctx, f.cfg.Owner, f.cfg.Repo, &gh.AlertListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
	}, codeScanningData)
}

// OpenSecretScanningAlerts lists the repository's open secret-scanning
// alerts (at most maxPages pages of 100).
func (f *Forge) OpenSecretScanningAlerts(ctx context.Context) ([]findings.SecretScanningAlert, error) {
	return listOpen(ctx, f, "secret-scanning", SecretScanningPermission+", and secret scanning turned on", func(ctx context.Context, page int) ([]*gh.SecretScanningAlert, *gh.Response, error) {
		return f.c.SecretScanning.ListAlertsForRepo(ctx, f.cfg.Owner, f.cfg.Repo, &gh.SecretScanningAlertListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
	}, secretScanningData)
}

// listOpen reads every page of an alert list (page-number pagination), at
// most maxPages; a refusal (403, 404) names the permission the token needs.
func listOpen[A, D any](ctx context.Context, f *Forge, kind, need string, list func(context.Context, int) ([]A, *gh.Response, error), data func(A) D) ([]D, error) {
	var out []D
	for page, n := 1, 0; page > 0; n++ {
		if n == maxPages {
			return nil, fmt.Errorf("more than %d open %s alerts", maxPages*100, kind)
		}
		var as []A
		var resp *gh.Response
		err := f.call(ctx, "list open "+kind+" alerts", true, func(ctx context.Context) (*gh.Response, error) {
			var err error
			as, resp, err = list(ctx, page)
			return resp, err
		})
		if s := status(err); s == 403 || s == 404 {
			return nil, fmt.Errorf("%w: the token needs the repository permission %s", err, need)
		}
		if err != nil {
			return nil, halting(err)
		}
		for _, a := range as {
			out = append(out, data(a))
		}
		page = resp.NextPage
	}
	return out, nil
}
