package github

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

// expectPRProbe expects the pull-request probe: a draft from the head that
// cannot exist into main, answered status/body.
func expectPRProbe(srv *githubtest.Server, status int, body string) *githubtest.Expectation {
	return srv.On("POST", "/repos/o/r/pulls").Reply(status, body).Check(func(t testing.TB, b []byte) {
		for _, want := range []string{`"head":"` + probeHead + `"`, `"base":"main"`, `"draft":true`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the PR probe's body lacks %s: %s", want, b)
			}
		}
	})
}

// expectCommentProbe expects the comment probe on #42, with no body field.
func expectCommentProbe(srv *githubtest.Server, status int, body string) *githubtest.Expectation {
	return srv.On("POST", "/repos/o/r/issues/42/comments").Reply(status, body).Check(func(t testing.TB, b []byte) {
		if strings.TrimSpace(string(b)) != "{}" {
			t.Errorf("the comment probe sent a body: %s", b)
		}
	})
}

// TestCheckAccess: each probe's answers, on the strict fake, with the push
// dry run to a local bare remote (which has no credential to check).
func TestCheckAccess(t *testing.T) {
	for _, tc := range []struct {
		name    string
		issue   int
		expect  func(srv *githubtest.Server)
		missing []string // permissions the refusal names; nil for a pass
		is      []error  // what the error must also be
		proofs  int
	}{
		{name: "permitted", issue: 42, proofs: 3, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 422, githubtest.HeadInvalid)
			expectCommentProbe(srv, 422, githubtest.CommentBodyMissing)
		}},
		{name: "no issue: no comment probe", proofs: 3, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 422, githubtest.HeadInvalid)
		}},
		{name: "pull requests forbidden", issue: 42, missing: []string{PermPullRequests}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 403, githubtest.NotAccessible)
			expectCommentProbe(srv, 422, githubtest.CommentBodyMissing)
		}},
		{name: "pull requests forbidden to a PAT", issue: 42, missing: []string{PermPullRequests}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 403, githubtest.NotAccessiblePAT)
			expectCommentProbe(srv, 422, githubtest.CommentBodyMissing)
		}},
		{name: "Actions may not open PRs", issue: 42, missing: []string{PermPullRequests}, is: []error{forge.ErrActionsCannotOpenPRs}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 403, githubtest.ActionsCannotCreatePR)
			expectCommentProbe(srv, 422, githubtest.CommentBodyMissing)
		}},
		{name: "comments forbidden", issue: 42, missing: []string{PermIssues}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 422, githubtest.HeadInvalid)
			expectCommentProbe(srv, 403, githubtest.NotAccessible)
		}},
		{name: "both forbidden, both named", issue: 42, missing: []string{PermPullRequests, PermIssues}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 404, githubtest.NotFound)
			expectCommentProbe(srv, 404, githubtest.NotFound)
		}},
		{name: "rate limited: stops at once", issue: 42, is: []error{forge.ErrRateLimited}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 403, githubtest.SecondaryRateLimit).Header("Retry-After", "60")
		}},
		{name: "unavailable: retried, then stops", issue: 42, is: []error{forge.ErrUnavailable}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 502, githubtest.ServerError).Times(3)
		}},
		{name: "drafts unsupported", issue: 42, is: []error{forge.ErrDraftUnsupported}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 422, githubtest.DraftUnsupported)
		}},
		{name: "a probe that opened a PR is an error", issue: 42, is: []error{forge.ErrForge}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 201, githubtest.PullRequest("o", "r", 9, probeHead, "", "main", true))
		}},
		{name: "a probe that posted a comment is an error", issue: 42, is: []error{forge.ErrForge}, expect: func(srv *githubtest.Server) {
			expectPRProbe(srv, 422, githubtest.HeadInvalid)
			expectCommentProbe(srv, 201, githubtest.CreatedComment(1, ""))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, bare, base, _ := clone(t)
			srv := githubtest.New(t)
			tc.expect(srv)
			a, err := newForge(t, srv, repo).CheckAccess(t.Context(), forge.AccessRequest{Base: "main", BaseSHA: base, Branch: "fixrail/gh-42", Issue: tc.issue})
			var perr *forge.PermissionError
			switch {
			case tc.missing == nil && tc.is == nil && err != nil:
				t.Fatalf("CheckAccess: %v", err)
			case tc.missing != nil:
				if !errors.As(err, &perr) || !errors.Is(err, forge.ErrTokenLacksPermission) {
					t.Fatalf("err = %v, want a *forge.PermissionError", err)
				}
				var got []string
				for _, m := range perr.Missing {
					got = append(got, m.Permission)
					if !strings.Contains(err.Error(), m.Permission) {
						t.Errorf("the error does not name %s: %v", m.Permission, err)
					}
				}
				if strings.Join(got, ",") != strings.Join(tc.missing, ",") {
					t.Errorf("missing %v, want %v", got, tc.missing)
				}
			case tc.is != nil:
				if err == nil || errors.As(err, &perr) {
					t.Fatalf("err = %v, want %v and no permission error", err, tc.is)
				}
			}
			for _, want := range tc.is {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want errors.Is %v", err, want)
				}
			}
			if tc.proofs > 0 && len(a.Proofs) != tc.proofs {
				t.Errorf("proofs %+v, want %d", a.Proofs, tc.proofs)
			}
			if !a.Applicable {
				t.Error("Access.Applicable is false for GitHub")
			}
			// Whatever the answers, the remote holds main only.
			if refs := remoteRefs(t, bare); len(refs) != 1 || refs["refs/heads/main"] != base {
				t.Errorf("remote refs after the check: %v", refs)
			}
			assertNoForbidden(t, srv)
		})
	}
}

// TestCheckAccessPush: the push probe over smart HTTP through the
// operator's credential helper: a token that may write passes, a read-only
// one (403) and a missing credential (401) are contents: write missing,
// the API probes still run, and no ref is written either way.
func TestCheckAccessPush(t *testing.T) {
	t.Setenv("no_proxy", "*")
	t.Setenv("NO_PROXY", "*")
	t.Setenv("GITHUB_TOKEN", githubtest.Token)
	for _, tc := range []struct {
		name             string
		readOnly, helper bool
		wantDenied       string // in the detail; "" for a pass
	}{
		{name: "writable", helper: true},
		{name: "read-only token", helper: true, readOnly: true, wantDenied: "403"},
		{name: "no credential", wantDenied: "could not read Username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "gitconfig")
			global := ""
			if tc.helper {
				global = "[credential]\n\thelper = \"!f() { test \\\"$1\\\" = get && echo username=x-access-token && echo \\\"password=$GITHUB_TOKEN\\\"; }; f\"\n"
			}
			if err := os.WriteFile(cfg, []byte(global), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT_CONFIG_GLOBAL", cfg)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			snap, err := gitx.Snapshot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { snap.Close() })
			dir := gittest.NewRepo(t, map[string]string{"src/a.py": "x = 1\n"})
			bare := filepath.Join(t.TempDir(), "o", "r")
			gittest.Git(t, "", "init", "--quiet", "--bare", "--initial-branch=main", bare)
			gittest.Git(t, dir, "push", "--quiet", bare, "main")
			remote := gittest.ServeHTTP(t, bare, githubtest.Token, tc.readOnly)
			gittest.Git(t, dir, "remote", "add", "origin", remote.URL)
			repo, err := snap.Open(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := repo.Baseline(t.Context()); err != nil {
				t.Fatal(err)
			}
			srv := githubtest.New(t)
			expectPRProbe(srv, 422, githubtest.HeadInvalid)
			expectCommentProbe(srv, 422, githubtest.CommentBodyMissing)
			base := gittest.Git(t, dir, "rev-parse", "HEAD")
			a, err := newForge(t, srv, repo).CheckAccess(t.Context(), forge.AccessRequest{Base: "main", BaseSHA: base, Branch: "fixrail/gh-42", Issue: 42})
			var perr *forge.PermissionError
			if tc.wantDenied == "" {
				if err != nil {
					t.Fatalf("CheckAccess: %v\nserver: %v", err, remote.Log())
				}
				if got := a.Proofs[0]; got.Permission != PermContents || !strings.Contains(got.Detail, "receive-pack advertisement") {
					t.Errorf("contents proof %+v", got)
				}
			} else {
				if !errors.As(err, &perr) || len(perr.Missing) != 1 || perr.Missing[0].Permission != PermContents || !strings.Contains(perr.Missing[0].Detail, tc.wantDenied) {
					t.Fatalf("err = %v, want contents: write missing, saying %q", err, tc.wantDenied)
				}
				if strings.Contains(err.Error(), githubtest.Token) {
					t.Errorf("the refusal holds the token: %v", err)
				}
			}
			if out, _ := gittest.Run(t, bare, "for-each-ref", "refs/heads/fixrail"); out != "" {
				t.Errorf("the check wrote %s", out)
			}
			assertNoForbidden(t, srv)
		})
	}
}
