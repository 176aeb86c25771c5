package github

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
)

// TestDependabotAlertThroughTheAPI: go-github's Dependabot service reads
// the alert; the finding is the cve type's input with both advisory ids,
// the manifest beside the alerted lockfile, and no version (the manifest
// says which is installed).
func TestDependabotAlertThroughTheAPI(t *testing.T) {
	srv := githubtest.New(t)
	srv.On("GET", "/repos/o/r/dependabot/alerts/7").Reply(200, githubtest.DependabotAlert("o", "r", githubtest.Alert{
		Number: 7, State: "open", Ecosystem: "npm", Package: "lodash", Manifest: "web/package-lock.json",
		GHSA: "GHSA-jf85-cpcp-j695", CVE: "CVE-2019-10744", Range: "< 4.17.12", Patched: "4.17.12",
	}))
	v, err := findings.FromDependabot(t.Context(), newForge(t, srv, nil), "o/r", 7)
	if err != nil {
		t.Fatal(err)
	}
	want := &findings.Vuln{ID: "dependabot-7", Ecosystem: "npm", Package: "lodash", Advisories: []string{"GHSA-jf85-cpcp-j695", "CVE-2019-10744"},
		Manifest: "web/package.json", Source: "dependabot:github:o/r#7", Range: "< 4.17.12", FirstPatched: "4.17.12", Scope: "runtime"}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("vuln (-want +got):\n%s", d)
	}
	if srv.Count("PATCH", "/repos/o/r/dependabot/alerts/7") != 0 {
		t.Error("the alert was changed")
	}
}

func TestDependabotAlertRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		header [2]string
		is     error
		want   string
	}{
		{name: "dismissed", status: 200, body: githubtest.DependabotAlert("o", "r", githubtest.Alert{Number: 7, State: "dismissed", DismissedReason: "tolerable_risk", Ecosystem: "pip", Package: "requests", GHSA: "GHSA-9wx4-h78v-vm56"}),
			is: findings.ErrAlertNotOpen, want: "alert #7 is dismissed (tolerable_risk)"},
		{name: "fixed", status: 200, body: githubtest.DependabotAlert("o", "r", githubtest.Alert{Number: 7, State: "fixed", Ecosystem: "pip", Package: "requests", GHSA: "GHSA-9wx4-h78v-vm56"}),
			is: findings.ErrAlertNotOpen, want: "alert #7 is fixed"},
		{name: "unsupported ecosystem", status: 200, body: githubtest.DependabotAlert("o", "r", githubtest.Alert{Number: 7, State: "open", Ecosystem: "composer", Package: "guzzlehttp/guzzle", GHSA: "GHSA-9wx4-h78v-vm56"}),
			is: findings.ErrBadReport, want: `Dependabot alert #7: ecosystem "composer" (OSV Packagist) is not supported`},
		{name: "forbidden", status: 403, body: githubtest.NotAccessible, is: forge.ErrForge, want: `"Dependabot alerts: read"`},
		{name: "not found", status: 404, body: githubtest.NotFound, is: forge.ErrForge, want: "vulnerability-alerts: read"},
		{name: "rate limited", status: 403, body: githubtest.SecondaryRateLimit, header: [2]string{"Retry-After", "60"}, is: forge.ErrRateLimited, want: "secondary rate limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			e := srv.On("GET", "/repos/o/r/dependabot/alerts/7").Reply(tc.status, tc.body)
			if tc.header[0] != "" {
				e.Header(tc.header[0], tc.header[1])
			}
			_, err := findings.FromDependabot(t.Context(), newForge(t, srv, nil), "o/r", 7)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %v containing %q", err, tc.is, tc.want)
			}
			var ae *forge.APIError
			if tc.status == 403 && tc.is == forge.ErrForge && (!errors.As(err, &ae) || ae.Status != 403) {
				t.Errorf("the API error lost its type: %#v", err)
			}
		})
	}
}
