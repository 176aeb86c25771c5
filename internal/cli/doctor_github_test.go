package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/forge/githubtest"
)

func TestDoctorGitHub(t *testing.T) {
	readsProbe := func(s *githubtest.Server, private bool, admin bool, prStatus int, prBody string) {
		s.On("GET", "/repos/o/r").Reply(200, githubtest.Repository("o", "r", private, true, admin)).Header("X-OAuth-Scopes", "repo")
		s.On("GET", "/repos/o/r/pulls").Reply(200, "[]")
		s.On("GET", "/repos/o/r/labels").Reply(200, githubtest.Labels("bug"))
		s.On("GET", "/repos/o/r/commits/main/check-runs").Reply(200, githubtest.CheckRuns("main"))
		s.On("GET", "/repos/o/r/commits/main/status").Reply(200, githubtest.CombinedStatus("main"))
		// The pull-request probe: a head that cannot exist.
		s.On("POST", "/repos/o/r/pulls").Reply(prStatus, prBody).Check(func(t testing.TB, b []byte) {
			if !strings.Contains(string(b), `"head":"fixrail/access-probe.lock"`) {
				t.Errorf("doctor's PR probe names another head: %s", b)
			}
		})
	}
	reads := func(s *githubtest.Server, private bool, admin bool) {
		readsProbe(s, private, admin, 422, githubtest.HeadInvalid)
	}
	for _, tc := range []struct {
		name  string
		setup func(s *githubtest.Server)
		want  []string
	}{
		{
			name: "public, ruleset, Actions may open PRs",
			setup: func(s *githubtest.Server) {
				reads(s, false, true)
				s.On("GET", "/repos/o/r/dependabot/alerts").Query("per_page", "1").Reply(200, "[]")
				s.On("GET", "/repos/o/r/actions/permissions/workflow").Reply(200, githubtest.WorkflowPermissions("read", true))
				s.On("GET", "/repos/o/r/branches/main").Reply(200, githubtest.Branch("main", false))
				s.On("GET", "/repos/o/r/rules/branches/main").Reply(200, githubtest.Rules(githubtest.Rule{Type: "pull_request", Reviews: 1}))
			},
			want: []string{
				"ok github-token from FIXRAIL_GITHUB_TOKEN",
				"ok github-repo o/r (public, default branch main); token rights: push yes, admin yes",
				"ok github-scopes classic token scopes: repo",
				"ok github-permission Metadata: read: readable",
				"ok github-permission Checks: read: readable",
				"ok github-permission Administration: read (optional): readable",
				"ok github-permission Dependabot alerts: read, for run --alert (optional): readable",
				"ok github-permission Pull requests: write: POST /pulls was answered 422 (GitHub refused the request's content, not the token; nothing was created)",
				"ok github-permission Contents: write and Issues: write are probed when a run starts (P1",
				"ok branch-protection main requires a pull request (ruleset o/r#42 (pull_request, 1 approval(s)))",
				"ok draft-prs available (public repository)",
				"ok actions-prs GitHub Actions may create pull requests",
			},
		},
		{
			name: "private, classic protection unreadable, no admin",
			setup: func(s *githubtest.Server) {
				reads(s, true, false)
				s.On("GET", "/repos/o/r/dependabot/alerts").Reply(403, githubtest.NotAccessible)
				s.On("GET", "/repos/o/r/actions/permissions/workflow").Reply(403, githubtest.NotAccessible)
				s.On("GET", "/repos/o/r/branches/main").Reply(200, githubtest.Branch("main", true))
				s.On("GET", "/repos/o/r/rules/branches/main").Reply(200, githubtest.Rules())
				s.On("GET", "/repos/o/r/branches/main/protection").Reply(403, githubtest.NotAccessible)
			},
			want: []string{
				"warn github-permission Administration: read (optional): o/r: probe Administration: read (optional): HTTP 403: Resource not accessible by integration",
				"warn github-permission Dependabot alerts: read, for run --alert (optional): o/r: probe Dependabot alerts: read, for run --alert (optional): HTTP 403",
				"fail branch-protection base branch main protection cannot be confirmed with this token",
				"warn draft-prs private repository",
				"warn actions-prs unknown",
			},
		},
		{
			name: "the token may not open PRs",
			setup: func(s *githubtest.Server) {
				readsProbe(s, false, false, 403, githubtest.NotAccessiblePAT)
				s.On("GET", "/repos/o/r/dependabot/alerts").Reply(200, "[]")
				s.On("GET", "/repos/o/r/actions/permissions/workflow").Reply(403, githubtest.NotAccessible)
				s.On("GET", "/repos/o/r/branches/main").Reply(200, githubtest.Branch("main", false))
				s.On("GET", "/repos/o/r/rules/branches/main").Reply(200, githubtest.Rules(githubtest.Rule{Type: "pull_request", Reviews: 1}))
			},
			want: []string{
				"fail github-permission Pull requests: write: POST /pulls was refused: HTTP 403: Resource not accessible by personal access token",
			},
		},
		{
			name: "a private repository on a plan without drafts",
			setup: func(s *githubtest.Server) {
				readsProbe(s, true, false, 422, githubtest.DraftUnsupported)
				s.On("GET", "/repos/o/r/dependabot/alerts").Reply(200, "[]")
				s.On("GET", "/repos/o/r/actions/permissions/workflow").Reply(403, githubtest.NotAccessible)
				s.On("GET", "/repos/o/r/branches/main").Reply(200, githubtest.Branch("main", false))
				s.On("GET", "/repos/o/r/rules/branches/main").Reply(200, githubtest.Rules(githubtest.Rule{Type: "pull_request", Reviews: 1}))
			},
			want: []string{
				"ok github-permission Pull requests: write: POST /pulls was answered 422",
				"fail draft-prs GitHub answered \"Draft pull requests are not supported in this repository\": every run would ESCALATE draft-unsupported",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			tc.setup(srv)
			env := map[string]string{"FIXRAIL_GITHUB_TOKEN": githubtest.Token, "FIXRAIL_GITHUB_API_URL": srv.URL()}
			checks := githubChecks(context.Background(), "o", "r", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			var lines []string
			for _, c := range checks {
				lines = append(lines, fmt.Sprintf("%s %s %s", c.Status, c.Name, c.Detail))
			}
			all := strings.Join(lines, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("doctor output lacks %q:\n%s", w, all)
				}
			}
			if strings.Contains(all, githubtest.Token) {
				t.Error("doctor printed the token")
			}
		})
	}
	if checks := githubChecks(context.Background(), "o", "r", func(string) (string, bool) { return "", false }); len(checks) != 1 || checks[0].Status != "fail" {
		t.Errorf("no token: %+v", checks)
	}
}

func TestGitHubRepoArg(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, _, ok := githubRepoArg("o/r"); !ok {
		t.Error("o/r is not read as a GitHub repository")
	}
	for _, v := range []string{".", "repo", "./o/r", "/abs/path", "o/r/x"} {
		if _, _, ok := githubRepoArg(v); ok {
			t.Errorf("%q read as a GitHub repository", v)
		}
	}
	// An existing directory wins.
	if err := os.MkdirAll("o/r", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := githubRepoArg("o/r"); ok {
		t.Error("the directory o/r was read as a GitHub repository")
	}
}
