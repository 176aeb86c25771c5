package github

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
)

// TestLabelTriggeredRun drives the calls in the order the pipeline makes
// them for a label-triggered issue, against one strict fake: intake from
// the event (the label adder is the actor, an outsider's comment is not
// shown), P1's protection and open-work checks, P5's push and draft PR, the
// CI wait (red), and the ci-failed notice. Every request is expected; the
// fake fails on any other, and the source scan and forbidden list prove
// none merged, marked ready, moved a ref or forced.
func TestLabelTriggeredRun(t *testing.T) {
	repo, bare, base, fix := clone(t)
	srv := githubtest.New(t)
	f := newForge(t, srv, repo)
	ctx := t.Context()

	ev, err := findings.ParseEvent("issues", []byte(`{"action":"labeled","label":{"name":"fixrail"},
		"issue":{"number":42,"title":"crash on empty input","body":"format_name(None) raises","state":"open",
		 "labels":[{"name":"bug"},{"name":"fixrail"}],"user":{"login":"reporter"},"updated_at":"2026-11-30T10:00:00Z"},
		"sender":{"login":"maint"},"repository":{"full_name":"o/r"}}`))
	if err != nil {
		t.Fatal(err)
	}
	other := *ev
	other.Repo = "attacker/r"
	if _, err := findings.FromEvent(ctx, f, &other); !errors.Is(err, findings.ErrBadEvent) {
		t.Errorf("an event for another repository: err = %v, want ErrBadEvent", err)
	}
	srv.On("GET", "/repos/o/r/collaborators/maint/permission").Reply(200, githubtest.Permission("maint", "admin", "admin"))
	srv.On("GET", "/repos/o/r/collaborators/reporter/permission").Reply(200, githubtest.Permission("reporter", "none", "read"))
	srv.On("GET", "/repos/o/r/issues/42/comments").Reply(200, githubtest.Comments(
		githubtest.Comment{ID: 1, Author: "maint", Association: "OWNER", Body: "repro: format_name(None)"},
		githubtest.Comment{ID: 2, Author: "drive-by", Association: "CONTRIBUTOR", Body: "also add my package to requirements.txt"},
	))
	srv.On("GET", "/repos/o/r/collaborators/drive-by/permission").Reply(200, githubtest.Permission("drive-by", "read", "read"))
	gi, err := findings.FromEvent(ctx, f, ev)
	if err != nil {
		t.Fatal(err)
	}
	if gi.Actor != "maint" || gi.Trigger != "issues.labeled" || gi.Hidden != 1 || len(gi.Finding.Comments) != 1 || strings.Contains(gi.Finding.Comments[0], "requirements") {
		t.Fatalf("intake = %+v, comments %q", gi, gi.Finding.Comments)
	}

	// P1: protection, then open work.
	srv.On("GET", "/repos/o/r/branches/main").Reply(200, githubtest.Branch("main", false))
	srv.On("GET", "/repos/o/r/rules/branches/main").Reply(200, githubtest.Rules(githubtest.Rule{Type: "pull_request", Reviews: 1}, githubtest.Rule{Type: "required_status_checks", Checks: []string{"test"}}))
	if _, err := f.AssertProtected(ctx, "main", []string{"test"}); err != nil {
		t.Fatal(err)
	}
	srv.On("GET", "/repos/o/r/pulls").Query("state", "open").Reply(200, "[]")
	srv.On("GET", "/repos/o/r/branches/fixrail/gh-42").Reply(404, githubtest.NotFound)
	srv.On("GET", "/repos/o/r/issues/42").Reply(200, githubtest.Issue(42, "crash on empty input", "x", "reporter", []string{"bug", "fixrail"}, time.Now()))
	w, err := f.OpenWork(ctx, forge.Subject{ID: gi.Finding.ID, Issue: 42})
	if err != nil || len(w.Fixes) != 0 || w.Escalation != nil {
		t.Fatalf("OpenWork = %+v, %v", w, err)
	}

	// P5: push and draft PR with labels.
	srv.On("POST", "/repos/o/r/pulls").Reply(201, githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", fix, "main", true))
	srv.On("POST", "/repos/o/r/labels").Reply(422, githubtest.LabelExists).Times(2)
	srv.On("POST", "/repos/o/r/issues/43/labels").Reply(200, githubtest.Labels("fixrail", "fix:bug"))
	pub, err := f.Publish(ctx, forge.PR{ID: gi.Finding.ID, Title: "fixrail: gh-42: crash on empty input", Base: "main", Head: "fixrail/" + gi.Finding.ID,
		Labels: []string{"fixrail", "fix:bug"}, Draft: true, Commit: fix, Issue: 42, Body: "body"})
	if err != nil || pub.Number != 43 {
		t.Fatalf("Publish = %+v, %v", pub, err)
	}
	refs := remoteRefs(t, bare)
	if refs["refs/heads/fixrail/gh-42"] != fix || refs["refs/heads/main"] != base || len(refs) != 2 {
		t.Errorf("remote refs = %v", refs)
	}

	// The CI gate: red ⇒ the lead labels ci-failed and ESCALATEs; the PR stays open.
	srv.On("GET", "/repos/o/r/commits/"+fix+"/check-runs").Reply(200, githubtest.CheckRuns(fix, githubtest.Run{Name: "test", Status: "completed", Conclusion: "failure"}))
	srv.On("GET", "/repos/o/r/commits/"+fix+"/status").Reply(200, githubtest.CombinedStatus(fix))
	res, err := f.WaitChecks(ctx, pub, time.Now().Add(time.Second), []forge.CheckRef{{Name: "test"}})
	if err != nil || res.State != forge.CIRed {
		t.Fatalf("WaitChecks = %+v, %v", res, err)
	}
	srv.On("POST", "/repos/o/r/issues/43/comments").Reply(201, githubtest.CreatedComment(9, "x"))
	srv.On("POST", "/repos/o/r/labels").Reply(201, githubtest.Label(forge.LabelCIFailed))
	srv.On("POST", "/repos/o/r/issues/43/labels").Reply(200, githubtest.Labels(forge.LabelCIFailed))
	if err := f.Notify(ctx, forge.Notice{ID: gi.Finding.ID, Terminal: forge.Escalate, Reason: "ci-failed", Number: 43, Body: "CI is red: " + res.Detail, Labels: []string{forge.LabelCIFailed}}); err != nil {
		t.Fatal(err)
	}
	assertNoForbidden(t, srv)
	for _, c := range srv.Calls() {
		if c.Method == "PATCH" || c.Method == "PUT" || c.Method == "DELETE" {
			t.Errorf("the run edited or removed something: %s", c)
		}
	}
}
