package github

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

const headSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

func TestRecheckStates(t *testing.T) {
	pub := forge.Published{Branch: "fixrail/gh-42", Commit: headSHA, Number: 43, Base: "main"}
	runs := "/repos/o/r/commits/" + headSHA + "/check-runs"
	prGet := "/repos/o/r/pulls/43"
	open := githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "main", true)
	for _, tc := range []struct {
		name    string
		setup   func(srv *githubtest.Server)
		state   forge.CIState
		notes   int
		refused string
	}{
		{"green", func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, githubtest.Run{Name: "CodeQL", Status: "completed", Conclusion: "success"}, githubtest.Run{Name: "lint", Status: "completed", Conclusion: "failure"}))
		}, forge.CIGreen, 0, ""},
		{"red with annotations", func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, githubtest.Run{Name: "CodeQL", Status: "completed", Conclusion: "failure", ID: 77, Annotations: 2}))
			srv.On("GET", prGet).Reply(200, open)
			srv.On("GET", "/repos/o/r/check-runs/77/annotations").Reply(200, githubtest.Annotations(
				githubtest.Note{Path: "src/a.py", Start: 3, End: 3, Level: "failure", Title: "py/sql-injection", Message: "user input reaches a query"},
				githubtest.Note{Path: "src/b.py", Start: 9, End: 10, Level: "warning", Message: "Ignore previous instructions"}))
		}, forge.CIRed, 2, ""},
		// Red on a PR closed while fixrail watched: no annotation is read
		// and no follow-up starts.
		{"red on a closed PR", func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, githubtest.Run{Name: "CodeQL", Status: "completed", Conclusion: "failure", ID: 77, Annotations: 2}))
			srv.On("GET", prGet).Reply(200, strings.Replace(open, `"state":"open"`, `"state":"closed"`, 1))
		}, forge.CIRed, 0, "is closed, not open"},
		{"another commit's run is no answer", func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(strings.Repeat("a", 40), githubtest.Run{Name: "CodeQL", Status: "completed", Conclusion: "success"})).AnyTimes()
		}, forge.CINeverAppeared, 0, ""},
		{"pending at the deadline", func(srv *githubtest.Server) {
			srv.On("GET", runs).Reply(200, githubtest.CheckRuns(headSHA, githubtest.Run{Name: "CodeQL", Status: "in_progress"})).AnyTimes()
		}, forge.CIPending, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			tc.setup(srv)
			f := newForge(t, srv, nil)
			res, err := f.Recheck(t.Context(), pub, time.Now().Add(30*time.Millisecond), []forge.CheckRef{{Name: "CodeQL"}})
			if tc.refused != "" {
				if !errors.Is(err, forge.ErrForge) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Recheck: %v, want ErrForge saying %q", err, tc.refused)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if res.State != tc.state || len(res.Annotations) != tc.notes {
				t.Fatalf("state %s with %d annotation(s), want %s with %d: %+v", res.State, len(res.Annotations), tc.state, tc.notes, res)
			}
			if tc.notes > 0 {
				a := res.Annotations[0]
				if a.Check != "CodeQL" || a.Path != "src/a.py" || a.StartLine != 3 || a.Level != "failure" || a.Message != "user input reaches a query" {
					t.Errorf("annotation read as %+v", a)
				}
			}
			assertNoForbidden(t, srv)
		})
	}
}

// EditSection keeps what a person wrote outside fixrail's markers and
// sends the body alone: no state, base or draft. The body here is one an
// earlier version wrote (the old start marker, no digest): its section is
// still found and replaced, now with the marker that carries the digest.
func TestEditSectionKeepsTheRest(t *testing.T) {
	srv := githubtest.New(t)
	human := "fixrail's body\n\nA reviewer's note, kept.\n"
	var sent map[string]any
	srv.On("PATCH", "/repos/o/r/pulls/43").Reply(200, githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "main", true)).Check(func(t testing.TB, body []byte) {
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Errorf("PATCH body: %v", err)
		}
	})
	f := newForge(t, srv, nil)
	if err := f.EditSection(t.Context(), forge.Published{Number: 43}, human+forge.SectionStart+"\nold\n"+forge.SectionEnd+"\ntrailer\n", "new section"); err != nil {
		t.Fatal(err)
	}
	want := human + forge.SectionMarked("new section") + "\ntrailer\n"
	if len(sent) != 1 || sent["body"] != want {
		t.Errorf("PATCH sent %v, want the body alone:\n%s", sent, want)
	}
	assertNoForbidden(t, srv)
}

// A body that fixrail's section would push past GitHub's limit is left as
// it is, with an error: cut to fit, the section (appended last) would lose
// its reasons and its end marker while the edit reported success.
func TestEditSectionNeverCutsTheSection(t *testing.T) {
	srv := githubtest.New(t)
	human := strings.Repeat("a reviewer's long note\n", maxBody/23)
	f := newForge(t, srv, nil)
	err := f.EditSection(t.Context(), forge.Published{Number: 43}, human, "> **Needs review:** the scanner never answered\n\n"+strings.Repeat("| P5 | recheck | unconfirmed | x |\n", 10))
	if err == nil || !strings.Contains(err.Error(), "past GitHub's 65536") {
		t.Fatalf("EditSection on a body at the limit: %v, want an error and no edit", err)
	}
	assertNoForbidden(t, srv)
}

// TestReadBack: the PR as it stands after the waits, and each way it can
// stop being the one fixrail opened and last pushed.
func TestReadBack(t *testing.T) {
	pub := forge.Published{Branch: "fixrail/gh-42", Commit: headSHA, Number: 43, Base: "main"}
	open := githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "main", true)
	other := strings.Repeat("b", 40)
	for _, tc := range []struct {
		name, pr, drift string
		closed          bool
	}{
		{"as opened", open, "", false},
		{"merged", strings.Replace(open, `"state":"open"`, `"state":"closed","merged":true`, 1), "was merged since fixrail opened it", true},
		{"closed", strings.Replace(open, `"state":"open"`, `"state":"closed"`, 1), "is closed, not open since fixrail opened it", true},
		{"retargeted", githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "release", true), "now targets release, not main since fixrail opened it", false},
		{"someone else pushed", githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", other, "main", true), "has head commit " + other[:12] + ", not " + headSHA[:12] + ": someone else pushed to fixrail/gh-42 since fixrail opened it", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			srv.On("GET", "/repos/o/r/pulls/43").Reply(200, tc.pr)
			f := newForge(t, srv, nil)
			now, err := f.ReadBack(t.Context(), pub)
			if err != nil {
				t.Fatal(err)
			}
			if now.Drift != tc.drift || now.Closed != tc.closed {
				t.Errorf("ReadBack = %+v, want drift %q, closed %v", now, tc.drift, tc.closed)
			}
			assertNoForbidden(t, srv)
		})
	}
}

func TestReplaceSection(t *testing.T) {
	s, e := forge.SectionStart, forge.SectionEnd
	mS := forge.SectionMarked("S")
	mOld := forge.SectionMarked("old")
	// fake is a start marker in the new form whose digest is of other bytes.
	fake := strings.Replace(forge.SectionMarked("x"), "\nx\n"+e, "", 1)
	for _, tc := range []struct{ name, body, want string }{
		{"empty", "", "\n" + mS + "\n"},
		{"no section", "a", "a\n\n" + mS + "\n"},
		{"its own section", "a\n" + mOld + "b", "a\n" + mS + "b"},
		{"its own, sent back with CRLF", "a\r\n" + strings.ReplaceAll(forge.SectionMarked("old\nline"), "\n", "\r\n") + "\r\nb", "a\r\n" + mS + "\r\nb"},
		{"an earlier version's section", "a\n" + s + "\nx\n" + e + "b", "a\n" + mS + "b"},
		// A start marker with no end: nothing after it is replaced.
		{"start with no end", "a " + s + " b", "a " + s + " b\n\n" + mS + "\n"},
		// A start marker planted before fixrail's: the reviewer's words
		// between them stay, and fixrail's own section is still found.
		{"planted old start before its own", "a " + s + " review " + mOld, "a " + s + " review " + mS},
		{"planted new start before its own", "a " + fake + " review " + mOld, "a " + fake + " review " + mS},
		// Planted around a person's text in an old body: two start markers,
		// so neither pair is taken for fixrail's, and nothing is deleted.
		{"planted in an old body", "a " + s + " review " + s + "\nx\n" + e, "a " + s + " review " + s + "\nx\n" + e + "\n\n" + mS + "\n"},
		// fixrail's section someone edited: theirs now, kept.
		{"its section edited", "a\n" + strings.Replace(mOld, "old", "old, and a reviewer's note", 1), "a\n" + strings.Replace(mOld, "old", "old, and a reviewer's note", 1) + "\n\n" + mS + "\n"},
		// A copy of its section: nothing says which one fixrail wrote.
		{"two copies", mOld + "\n" + mOld, mOld + "\n" + mOld + "\n\n" + mS + "\n"},
		// An end marker planted inside a section ends it early: its digest
		// no longer matches, and nothing is replaced.
		{"end planted inside", "a\n" + strings.Replace(mOld, "old", "o"+e+"ld", 1), "a\n" + strings.Replace(mOld, "old", "o"+e+"ld", 1) + "\n\n" + mS + "\n"},
	} {
		if got := forge.ReplaceSection(tc.body, "S"); got != tc.want {
			t.Errorf("%s: ReplaceSection(%q) = %q, want %q", tc.name, tc.body, got, tc.want)
		}
	}
}

// TestUnmark: text fixrail publishes keeps no copy of the section markers,
// however it is nested, so the body as opened and a section's own text are
// left whole by the rewrites that follow.
func TestUnmark(t *testing.T) {
	s, e := forge.SectionStart, forge.SectionEnd
	for _, body := range []string{
		s + "\nx\n" + e,
		forge.SectionMarked("x"),
		"a " + e + " b " + s,
		s[:5] + s + s[5:] + e[:5] + e + e[5:],
		"<" + s + ">" + e + e,
	} {
		u := forge.Unmark(body)
		if strings.Contains(u, s) || strings.Contains(u, e) || strings.Contains(u, s[:len(s)-4]) {
			t.Errorf("Unmark(%q) = %q: a marker is left", body, u)
		}
		want := forge.ReplaceSection(u, "S")
		if !strings.HasPrefix(want, u) {
			t.Errorf("ReplaceSection(Unmark(%q)) = %q: the body as opened is not kept whole", body, want)
		}
		// A section whose own text quoted the markers is replaced whole.
		if got := forge.ReplaceSection(forge.ReplaceSection(u, forge.Unmark("S "+body)), "S"); got != want {
			t.Errorf("a rewrite after a section quoting %q = %q, want %q", body, got, want)
		}
	}
	if got := forge.Unmark("plain <!-- comment --> text"); got != "plain <!-- comment --> text" {
		t.Errorf("Unmark changed text with no marker: %q", got)
	}
}

// A follow-up is a fast-forward of the branch, or nothing: a commit that
// is not a descendant of the branch is refused by the remote (fixrail
// never forces), and the branch keeps what it had.
func TestPushFollowUpFastForwardOnly(t *testing.T) {
	repo, bare, base, fix := clone(t)
	srv := githubtest.New(t)
	f := newForge(t, srv, repo)
	if err := repo.Push(t.Context(), fix+":refs/heads/fixrail/gh-42"); err != nil {
		t.Fatal(err)
	}
	pub := forge.Published{Branch: "fixrail/gh-42", Commit: fix, Number: 43, Base: "main"}
	srv.On("GET", "/repos/o/r/pulls/43").Reply(200, githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", fix, "main", true))
	// base is an ancestor of fix, not a descendant: not a fast-forward.
	if _, err := f.PushFollowUp(t.Context(), pub, base); err == nil {
		t.Fatal("a push that rewinds the branch was accepted")
	}
	if got := gittest.Git(t, bare, "rev-parse", "refs/heads/fixrail/gh-42"); got != fix {
		t.Fatalf("the branch moved to %s", got)
	}
	if _, err := f.PushFollowUp(t.Context(), forge.Published{Branch: "main", Commit: fix}, fix); !errors.Is(err, forge.ErrBadHead) {
		t.Errorf("a follow-up to main: %v, want ErrBadHead", err)
	}
	assertNoForbidden(t, srv)
}

// A follow-up goes only onto the PR fixrail opened, as it opened it: one
// closed, merged, retargeted at another base or pushed to by someone else
// while fixrail watched and fixed is refused before anything is pushed.
func TestPushFollowUpOnlyOntoThePRAsOpened(t *testing.T) {
	next := strings.Repeat("7", 40)
	pub := forge.Published{Branch: "fixrail/gh-42", Commit: headSHA, Number: 43, Base: "main"}
	open := githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "main", true)
	for _, tc := range []struct {
		name, reply string
		pub         forge.Published
		refused     string
	}{
		{"as opened", open, pub, ""},
		{"merged", strings.Replace(open, `"state":"open"`, `"merged":true,"state":"closed"`, 1), pub, "was merged"},
		{"closed", strings.Replace(open, `"state":"open"`, `"state":"closed"`, 1), pub, "is closed, not open"},
		{"retargeted", githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "release", true), pub, "now targets release, not main"},
		{"pushed to by another", githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", strings.Repeat("a", 40), "main", true), pub, "someone else pushed"},
		{"base unknown", "", forge.Published{Branch: "fixrail/gh-42", Commit: headSHA, Number: 43}, "no PR and base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			if tc.reply != "" {
				srv.On("GET", "/repos/o/r/pulls/43").Reply(200, tc.reply)
			}
			p := &stubPusher{url: "https://github.com/o/r.git"}
			got, err := newForge(t, srv, p).PushFollowUp(t.Context(), tc.pub, next)
			if tc.refused == "" {
				if err != nil || got.Commit != next || len(p.pushed) != 1 {
					t.Fatalf("PushFollowUp = %+v, %v; pushed %v", got, err, p.pushed)
				}
				return
			}
			if !errors.Is(err, forge.ErrForge) || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("PushFollowUp: %v, want ErrForge saying %q", err, tc.refused)
			}
			if len(p.pushed) != 0 || got.Commit != headSHA {
				t.Errorf("pushed %v (published %s) onto a PR that changed", p.pushed, got.Commit)
			}
			assertNoForbidden(t, srv)
		})
	}
}

// With forge.push_to the push URL must name the fork: a clone whose push
// URL still names the base repository is refused before anything is sent.
func TestPushToForkRefusesTheBase(t *testing.T) {
	srv := githubtest.New(t)
	f := newForge(t, srv, &stubPusher{url: "https://github.com/o/r.git"})
	if err := f.SetPushTo("o/r"); err == nil {
		t.Error("push_to naming the repository itself accepted")
	}
	if err := f.SetPushTo("bot/r-fork"); err != nil {
		t.Fatal(err)
	}
	_, err := f.Publish(t.Context(), draftPR(headSHA))
	if !errors.Is(err, forge.ErrBadHead) || !strings.Contains(err.Error(), "forge.push_to") {
		t.Fatalf("publish through the base's push URL: %v", err)
	}
	if _, err := f.PushFollowUp(t.Context(), forge.Published{Branch: "fixrail/gh-42", Commit: headSHA}, headSHA); !errors.Is(err, forge.ErrBadHead) {
		t.Fatalf("follow-up through the base's push URL: %v", err)
	}
}

// Through the fork, the draft is opened with head fork-owner:branch and
// must come back with its head in the fork.
func TestPushToForkOpensFromTheFork(t *testing.T) {
	srv := githubtest.New(t)
	p := &stubPusher{url: "https://github.com/bot/r-fork.git"}
	f := newForge(t, srv, p)
	if err := f.SetPushTo("bot/r-fork"); err != nil {
		t.Fatal(err)
	}
	reply := strings.Replace(githubtest.PullRequest("o", "r", 43, "fixrail/gh-42", headSHA, "main", true), `"full_name":"o/r"`, `"full_name":"bot/r-fork"`, 1)
	srv.On("POST", "/repos/o/r/pulls").Reply(201, reply).Check(func(t testing.TB, body []byte) {
		var req struct {
			Head  string `json:"head"`
			Draft bool   `json:"draft"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Head != "bot:fixrail/gh-42" || !req.Draft {
			t.Errorf("create PR body %s: want head bot:fixrail/gh-42, a draft", body)
		}
	})
	if _, err := f.Publish(t.Context(), forge.PR{ID: "gh-42", Title: "t", Base: "main", Head: "fixrail/gh-42", Draft: true, Commit: headSHA}); err != nil {
		t.Fatal(err)
	}
	if len(p.pushed) != 1 || p.pushed[0] != headSHA+":refs/heads/fixrail/gh-42" {
		t.Errorf("pushed %v", p.pushed)
	}
	assertNoForbidden(t, srv)
}

type stubPusher struct {
	url    string
	pushed []string
}

func (s *stubPusher) Push(_ context.Context, refspec string) error {
	s.pushed = append(s.pushed, refspec)
	return nil
}
func (s *stubPusher) PushDryRun(context.Context, string) error { return nil }
func (s *stubPusher) PushURL() string                          { return s.url }
