package github

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/forge/githubtest"
)

// TestLabelledIssues: every open issue with the label, across pages, and
// no pull request (the issues endpoint lists those too).
func TestLabelledIssues(t *testing.T) {
	srv := githubtest.New(t)
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	srv.On("GET", "/repos/o/r/issues").Query("labels", "fixrail").Query("state", "open").Query("page", "1").
		Header("Link", `<`+srv.URL()+`repos/o/r/issues?labels=fixrail&state=open&per_page=100&page=2>; rel="next"`).
		Reply(200, "["+githubtest.Issue(7, "crash", "b", "alice", []string{"fixrail"}, at)+"]")
	srv.On("GET", "/repos/o/r/issues").Query("page", "2").
		Reply(200, `[`+githubtest.Issue(8, "off by one", "b", "bob", []string{"fixrail", "fixrail:escalated"}, at)+`,{"number":9,"title":"a PR","state":"open","labels":[{"name":"fixrail"}],"pull_request":{"url":"https://api.github.com/repos/o/r/pulls/9"}}]`)
	got, err := newForge(t, srv, nil).LabelledIssues(t.Context(), "fixrail")
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, i := range got {
		nums = append(nums, i.Number)
	}
	if d := cmp.Diff([]int{7, 8}, nums); d != "" {
		t.Errorf("issues (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"fixrail", "fixrail:escalated"}, got[1].Labels); d != "" {
		t.Errorf("labels of #8 (-want +got):\n%s", d)
	}
}

// TestLabelledIssuesBounded: a listing that points past the bound is an
// error, never a partial answer that would call the rest nothing.
func TestLabelledIssuesBounded(t *testing.T) {
	srv := githubtest.New(t)
	srv.On("GET", "/repos/o/r/issues").AnyTimes().
		Header("Link", `<`+srv.URL()+`repos/o/r/issues?labels=fixrail&state=open&per_page=100&page=999>; rel="next"`).
		Reply(200, "[]")
	if _, err := newForge(t, srv, nil).LabelledIssues(t.Context(), "fixrail"); err == nil || !strings.Contains(err.Error(), "more than 1000 open issues") {
		t.Fatalf("LabelledIssues = %v, want the bound named", err)
	}
}

// TestOpenAlertsRefused: GitHub answers 404 as well as 403 to a token that
// may not see the alerts; the error names the permission.
func TestOpenAlertsRefused(t *testing.T) {
	srv := githubtest.New(t)
	srv.On("GET", "/repos/o/r/dependabot/alerts").Reply(404, `{"message":"Not Found"}`)
	if _, err := newForge(t, srv, nil).OpenAlerts(t.Context()); err == nil || !strings.Contains(err.Error(), "Dependabot alerts: read") {
		t.Fatalf("OpenAlerts = %v, want the permission named", err)
	}
}
