package github

import (
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
)

// The real scanner's app and an impostor: a repository workflow's token
// posts check runs as github-actions, under any name it likes.
var (
	scanner  = githubtest.Run{Name: "CodeQL", Status: "completed", Conclusion: "success", App: "github-advanced-security", AppID: 57789}
	impostor = githubtest.Run{Name: "CodeQL", Status: "completed", Conclusion: "success", App: "github-actions", AppID: githubtest.ActionsAppID}
)

func concluded(r githubtest.Run, conclusion string, id int64) githubtest.Run {
	r.Conclusion, r.ID = conclusion, id
	return r
}

// TestRecheckCountsOnlyTheNamedApp: a watch named CodeQL@github-advanced-
// security is not answered by a github-actions run named CodeQL, green or
// red (no annotation of the impostor's is read: the strict fake fails on
// the call); a watch with no app named that two apps report green is not
// green, and says so at once.
func TestRecheckCountsOnlyTheNamedApp(t *testing.T) {
	pub := forge.Published{Branch: "fixrail/gh-42", Commit: headSHA, Number: 43, Base: "main"}
	runs := "/repos/o/r/commits/" + headSHA + "/check-runs"
	named := []forge.CheckRef{{Name: "CodeQL", App: "github-advanced-security"}}
	plain := []forge.CheckRef{{Name: "CodeQL"}}
	for _, tc := range []struct {
		name   string
		watch  []forge.CheckRef
		setup  func(srv *githubtest.Server)
		state  forge.CIState
		detail []string
	}{
		{"an impostor's green is no answer", named, func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, impostor)).AnyTimes()
		}, forge.CINeverAppeared, []string{"CodeQL@github-advanced-security not reported", "not counted, from another source than the one named: app github-actions (id 15368) success"}},
		{"an impostor's red is no answer either", named, func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, concluded(impostor, "failure", 66), scanner))
		}, forge.CIGreen, []string{"1 watched check(s) passed", "reported by app github-advanced-security (id 57789)", "app github-actions (id 15368) failure"}},
		{"the named app's green", named, func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, scanner, impostor))
		}, forge.CIGreen, []string{"CodeQL@github-advanced-security passed, reported by app github-advanced-security (id 57789)"}},
		{"green from two apps, none named", plain, func(srv *githubtest.Server) {
			// Once: ambiguity does not wait for the deadline.
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, scanner, impostor))
		}, forge.CIPending, []string{"green from more than one source (app github-advanced-security (id 57789), app github-actions (id 15368)) and no app is named: not taken as passed"}},
		{"one app, none named", plain, func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, scanner))
		}, forge.CIGreen, []string{"CodeQL passed, reported by app github-advanced-security (id 57789)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			tc.setup(srv)
			res, err := newForge(t, srv, nil).Recheck(t.Context(), pub, time.Now().Add(time.Second), tc.watch)
			if err != nil || res.State != tc.state {
				t.Fatalf("Recheck = %+v, %v; want %s", res, err, tc.state)
			}
			for _, d := range tc.detail {
				if !strings.Contains(res.Detail, d) {
					t.Errorf("detail %q\nlacks %q", res.Detail, d)
				}
			}
			assertNoForbidden(t, srv)
		})
	}
}

// TestRecheckRedFromAnyAppWithNoAppNamed: with no app named, a red from
// any app is red, as before (its annotations are read).
func TestRecheckRedFromAnyAppWithNoAppNamed(t *testing.T) {
	srv := githubtest.New(t)
	srv.On("GET", "/repos/o/r/commits/"+headSHA+"/check-runs").Reply(200, githubtest.CheckRuns(headSHA, scanner, concluded(impostor, "failure", 66)))
	srv.On("GET", "/repos/o/r/pulls/43").Reply(200, githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "main", true))
	srv.On("GET", "/repos/o/r/check-runs/66/annotations").Reply(200, githubtest.Annotations())
	res, err := newForge(t, srv, nil).Recheck(t.Context(), forge.Published{Branch: "fixrail/gh-42", Commit: headSHA, Number: 43, Base: "main"}, time.Now().Add(time.Second), []forge.CheckRef{{Name: "CodeQL"}})
	if err != nil || res.State != forge.CIRed || !strings.Contains(res.Detail, "CodeQL (failure) from app github-actions (id 15368)") {
		t.Fatalf("Recheck = %+v, %v; want red naming the app", res, err)
	}
}

// TestWaitChecksHonoursPins: a required check the protection pins to an
// app (or config names one for) is satisfied only by that app's check
// run — not by an impostor's green run, not by a commit status of the
// name (statuses name no app); with no app named, green from two sources
// is pending at once, not green.
func TestWaitChecksHonoursPins(t *testing.T) {
	sha := strings.Repeat("d", 40)
	runs, status := "/repos/o/r/commits/"+sha+"/check-runs", "/repos/o/r/commits/"+sha+"/status"
	pinned := []forge.CheckRef{{Name: "CodeQL", AppID: 57789, PinnedBy: "ruleset o/r#42"}}
	for _, tc := range []struct {
		name     string
		required []forge.CheckRef
		runs     []githubtest.Run
		statuses []githubtest.Status
		once     bool // answered at the first read
		want     forge.CIState
		detail   []string
	}{
		{name: "impostor's green against a pin", required: pinned, runs: []githubtest.Run{impostor}, want: forge.CIPending,
			detail: []string{"required: CodeQL (app id 57789, pinned by ruleset o/r#42) not reported; not counted, from another source than the one named: app github-actions (id 15368) success"}},
		{name: "a status against a pin", required: pinned, statuses: []githubtest.Status{{Context: "CodeQL", State: "success"}}, want: forge.CIPending,
			detail: []string{"not counted, from another source than the one named: a commit status (no app) success"}},
		{name: "impostor's green against a named app", required: []forge.CheckRef{{Name: "CodeQL", App: "github-advanced-security"}}, runs: []githubtest.Run{impostor}, want: forge.CIPending,
			detail: []string{"CodeQL@github-advanced-security not reported"}},
		{name: "the pinned app's green", required: pinned, runs: []githubtest.Run{scanner, impostor}, once: true, want: forge.CIGreen,
			detail: []string{"2 check(s) passed; required: CodeQL (app id 57789, pinned by ruleset o/r#42) passed, reported by app github-advanced-security (id 57789)"}},
		{name: "green from a run and a status, no app named", required: []forge.CheckRef{{Name: "CodeQL"}}, runs: []githubtest.Run{scanner}, statuses: []githubtest.Status{{Context: "CodeQL", State: "success"}}, once: true, want: forge.CIPending,
			detail: []string{"1 required reported green by more than one source with no app named", "and no app is named: not taken as passed"}},
		{name: "an impostor's red is red", required: pinned, runs: []githubtest.Run{scanner, concluded(impostor, "failure", 0)}, once: true, want: forge.CIRed,
			detail: []string{"failed: CodeQL (failure) from app github-actions (id 15368)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			r := srv.On("GET", runs).Reply(200, githubtest.CheckRuns(sha, tc.runs...))
			s := srv.On("GET", status).Reply(200, githubtest.CombinedStatus(sha, tc.statuses...))
			if !tc.once {
				r.AnyTimes()
				s.AnyTimes()
			}
			res, err := newForge(t, srv, nil).WaitChecks(t.Context(), forge.Published{Commit: sha, Number: 7}, time.Now().Add(60*time.Millisecond), tc.required)
			if err != nil || res.State != tc.want {
				t.Fatalf("WaitChecks = %+v, %v; want %s", res, err, tc.want)
			}
			for _, d := range tc.detail {
				if !strings.Contains(res.Detail, d) {
					t.Errorf("detail %q\nlacks %q", res.Detail, d)
				}
			}
		})
	}
}

// TestAssertProtectedCarriesPins: a ruleset's integration_id and classic
// protection's app_id reach forge.Protection; app_id null or -1 (any app)
// is no pin.
func TestAssertProtectedCarriesPins(t *testing.T) {
	srv := githubtest.New(t)
	srv.On("GET", "/repos/o/r/branches/main").Reply(200, githubtest.Branch("main", true))
	srv.On("GET", "/repos/o/r/rules/branches/main").Reply(200, githubtest.Rules(
		githubtest.Rule{Type: "required_status_checks", Checks: []string{"CodeQL"}, AppID: 57789},
		githubtest.Rule{Type: "required_status_checks", Checks: []string{"lint"}, AppID: -1}))
	classic := strings.Replace(githubtest.ClassicPinned(1, githubtest.ActionsAppID, "test", "docs"), `{"app_id":15368,"context":"docs"}`, `{"app_id":-1,"context":"docs"}`, 1)
	if !strings.Contains(classic, `"app_id":-1`) {
		t.Fatalf("fixture: %s", classic)
	}
	srv.On("GET", "/repos/o/r/branches/main/protection").Reply(200, classic)
	p, err := newForge(t, srv, nil).AssertProtected(t.Context(), "main", []string{"CodeQL", "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []forge.CheckRef{{Name: "CodeQL", AppID: 57789, PinnedBy: "ruleset o/r#42"}, {Name: "test", AppID: githubtest.ActionsAppID, PinnedBy: "classic protection"}}
	if len(p.PinnedChecks) != len(want) {
		t.Fatalf("pins = %+v, want %+v", p.PinnedChecks, want)
	}
	for i := range want {
		if p.PinnedChecks[i] != want[i] {
			t.Errorf("pin %d = %+v, want %+v", i, p.PinnedChecks[i], want[i])
		}
	}
	if strings.Join(p.RequiredChecks, ",") != "CodeQL,docs,lint,test" {
		t.Errorf("required = %v", p.RequiredChecks)
	}
	assertNoForbidden(t, srv)
}
