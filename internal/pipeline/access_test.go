package pipeline_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// TestAccessGate: P1's access check runs after branch protection and open
// work, asks about the finding's branch, base commit and issue, and a
// refusal ends the run before any agent: a missing permission HALTs
// token-lacks-permission naming it (the Actions setting's 403 included),
// a rate limit and an outage HALT with the forge's own reasons.
func TestAccessGate(t *testing.T) {
	actions := &forge.APIError{Op: "o/r: access check", Status: 403, Message: "GitHub Actions is not permitted to create or approve pull requests.", Kind: forge.ErrActionsCannotOpenPRs}
	for _, tc := range []struct {
		name     string
		err      error
		terminal pipeline.Terminal
		reason   string
		detail   []string
		notify   bool
	}{
		{name: "cannot push", terminal: pipeline.Halt, reason: "token-lacks-permission",
			err:    &forge.PermissionError{Missing: []forge.AccessProof{{Permission: "contents: write", Detail: "git push --dry-run failed: 403"}}},
			detail: []string{"token-access", "contents: write", "403"}},
		{name: "cannot open PRs or comment", terminal: pipeline.Halt, reason: "token-lacks-permission",
			err: &forge.PermissionError{Missing: []forge.AccessProof{
				{Permission: "pull-requests: write", Detail: "POST /pulls was refused: HTTP 403"},
				{Permission: "issues: write", Detail: "POST /issues/7/comments was refused: HTTP 403"}}},
			detail: []string{"pull-requests: write", "issues: write"}},
		{name: "Actions may not open PRs", terminal: pipeline.Halt, reason: "token-lacks-permission",
			err:    &forge.PermissionError{Missing: []forge.AccessProof{{Permission: "pull-requests: write", Detail: "GitHub Actions is not permitted to create pull requests"}}, Errs: []error{actions}},
			detail: []string{"pull-requests: write", "Actions is not permitted"}},
		{name: "rate limited", terminal: pipeline.Halt, reason: "forge-rate-limited", err: &forge.RateLimitError{Reset: time.Now().Add(time.Minute)}},
		{name: "unavailable", terminal: pipeline.Halt, reason: "forge-unavailable", err: &forge.APIError{Op: "o/r: access check", Status: 502, Kind: forge.ErrUnavailable}},
		{name: "drafts unsupported", terminal: pipeline.Escalate, reason: "draft-unsupported", notify: true,
			err: &forge.APIError{Op: "o/r: access check", Status: 422, Message: "Draft pull requests are not supported in this repository.", Kind: forge.ErrDraftUnsupported}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked *forge.AccessRequest
			rep, agent, dir := forgeRunRepo(t, func(f *forgetest.Fake) {
				f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).
					ExpectCheckAccess(func(req forge.AccessRequest) (forge.Access, error) {
						asked = &req
						return forge.Access{Applicable: true}, tc.err
					})
				if tc.notify {
					f.ExpectNotify(func(forge.Notice) error { return nil })
				}
			})
			if rep.Terminal != tc.terminal || rep.Reason != tc.reason {
				t.Fatalf("ended %s %s (%s), want %s %s", rep.Terminal, rep.Reason, rep.Detail, tc.terminal, tc.reason)
			}
			if agent != 0 {
				t.Errorf("the agent ran %d time(s) before the access check stopped the run", agent)
			}
			for _, want := range tc.detail {
				if !strings.Contains(rep.Detail, want) {
					t.Errorf("detail %q does not say %q", rep.Detail, want)
				}
			}
			base := gittest.Git(t, dir, "rev-parse", "HEAD")
			if asked == nil || *asked != (forge.AccessRequest{Base: "main", BaseSHA: base, Branch: "fixrail/gh-7", Issue: 7}) {
				t.Errorf("CheckAccess asked %+v", asked)
			}
			if tc.reason == "token-lacks-permission" {
				// The check decided (fail), it did not error.
				wantGate(t, rep, "token-access", "fail", strings.TrimPrefix(rep.Detail, "token-access: "))
			}
			if rep.Branch != "" {
				t.Errorf("a %s run set branch %s", rep.Terminal, rep.Branch)
			}
		})
	}
}

// TestAccessGateRecordsProof: a pass records what each probe proved; the
// local forge's is "not applicable", as branch protection's is.
func TestAccessGateRecordsProof(t *testing.T) {
	rep, _ := forgeRun(t, func(f *forgetest.Fake) {
		f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).
			ExpectFixFiles(forgetest.NoFixes).ExpectPublish(forgetest.Published(9)).ExpectWaitChecks(forgetest.NoCI)
	})
	if rep.Terminal != pipeline.DraftPR {
		t.Fatalf("ended %s %s (%s)", rep.Terminal, rep.Reason, rep.Detail)
	}
	wantGate(t, rep, "token-access", "pass", "contents: write: forgetest; pull-requests: write: forgetest; issues: write: forgetest")

	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err = pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "local-1", Title: "broken", Body: "it is BROKEN"},
		Runner:  funcAgent(goodAgent),
		Forge:   &forge.Local{Dir: filepath.Join(dir, pipeline.StateDirName, "outbox")},
		TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Terminal != pipeline.DraftPR {
		t.Fatalf("local run ended %s %s (%s)", rep.Terminal, rep.Reason, rep.Detail)
	}
	wantGate(t, rep, "token-access", "pass", "not applicable: the forge pushes nothing")
}

func wantGate(t *testing.T, rep *pipeline.Report, name, verdict, detail string) {
	t.Helper()
	for _, g := range rep.Gates {
		if g.Phase == "P1" && g.Name == name {
			if g.Verdict != verdict || g.Detail != detail {
				t.Errorf("gate %s: %s %q, want %s %q", name, g.Verdict, g.Detail, verdict, detail)
			}
			return
		}
	}
	t.Errorf("no P1 gate %s in the report", name)
}
