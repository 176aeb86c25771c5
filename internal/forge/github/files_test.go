package github

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
)

// prFiles is the PR files endpoint's reply: each entry a filename, or
// "old=>new" for a rename.
func prFiles(names ...string) string {
	var items []string
	for _, n := range names {
		if old, name, ok := strings.Cut(n, "=>"); ok {
			items = append(items, fmt.Sprintf(`{"sha":"%s","filename":%q,"previous_filename":%q,"status":"renamed","additions":0,"deletions":0,"changes":0}`, strings.Repeat("e", 40), name, old))
			continue
		}
		items = append(items, fmt.Sprintf(`{"sha":"%s","filename":%q,"status":"modified","additions":1,"deletions":1,"changes":2,"patch":"@@ -1 +1 @@\n-a\n+b"}`, strings.Repeat("e", 40), n))
	}
	return "[" + strings.Join(items, ",") + "]"
}

// TestFixFiles: every open fixrail PR of this repository (never a fork's)
// with every file it changes, across pages, both names of a rename, and
// no checks looked up (P3 asks only what the PRs touch).
func TestFixFiles(t *testing.T) {
	srv := githubtest.New(t)
	sha := strings.Repeat("a", 40)
	srv.On("GET", "/repos/o/r/pulls").Query("state", "open").Reply(200, githubtest.PullRequests("o", "r", "main",
		githubtest.PR{Number: 3, Head: "fixrail/gh-7", SHA: sha, Draft: true},
		githubtest.PR{Number: 5, Head: "feature/x", SHA: sha},
		githubtest.PR{Number: 6, Head: "fixrail/gh-9", SHA: sha, Fork: "attacker/r"},
		githubtest.PR{Number: 8, Head: "fixrail/gh-8", SHA: sha, Draft: true},
	))
	srv.On("GET", "/repos/o/r/pulls/3/files").Query("page", "1").
		Header("Link", `<`+srv.URL()+`repos/o/r/pulls/3/files?per_page=100&page=2>; rel="next"`).
		Reply(200, prFiles("src/a.py", "docs/old.md=>docs/new.md"))
	srv.On("GET", "/repos/o/r/pulls/3/files").Query("page", "2").Reply(200, prFiles("tests/test_a.py"))
	srv.On("GET", "/repos/o/r/pulls/8/files").Query("page", "1").Reply(200, "[]")
	fixes, err := newForge(t, srv, nil).FixFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []forge.OpenFix{
		{ID: "gh-7", Branch: "fixrail/gh-7", Number: 3, Location: "https://github.com/o/r/pull/3", HeadSHA: sha, Files: []string{"src/a.py", "docs/new.md", "docs/old.md", "tests/test_a.py"}},
		{ID: "gh-8", Branch: "fixrail/gh-8", Number: 8, Location: "https://github.com/o/r/pull/8", HeadSHA: sha, Files: []string{}},
	}
	if d := cmp.Diff(want, fixes); d != "" {
		t.Errorf("FixFiles (-want +got):\n%s", d)
	}
}

// TestFixFilesTooMany: GitHub lists at most 3000 files of a PR; one whose
// listing points past that is an error, never a partial answer.
func TestFixFilesTooMany(t *testing.T) {
	srv := githubtest.New(t)
	sha := strings.Repeat("a", 40)
	srv.On("GET", "/repos/o/r/pulls").Reply(200, githubtest.PullRequests("o", "r", "main", githubtest.PR{Number: 3, Head: "fixrail/gh-7", SHA: sha, Draft: true}))
	srv.On("GET", "/repos/o/r/pulls/3/files").
		Header("Link", `<`+srv.URL()+`repos/o/r/pulls/3/files?per_page=100&page=999>; rel="next"`).
		Reply(200, prFiles("src/a.py"))
	_, err := newForge(t, srv, nil).FixFiles(t.Context())
	if err == nil || !strings.Contains(err.Error(), "PR #3 changes more files than GitHub lists") {
		t.Fatalf("FixFiles = %v, want the listing bound named", err)
	}
}

// TestTruncateKeepsWholeLines: a body past GitHub's limit is cut after a
// whole line. Here the limit falls inside a gate table's cell, a code span
// quoting an agent's paths: cut there, the span's opening backtick would be
// left unmatched and "@victim" in the rest of the line would render as a
// mention (and notify).
func TestTruncateKeepsWholeLines(t *testing.T) {
	head := "## Draft fix\n\n| phase | gate | verdict | detail |\n|---|---|---|---|\n" + strings.Repeat("| P1 | x | pass | ` fine ` |\n", 2000)
	cell := "| P2 | plan | pass | ` " + strings.Repeat("tests/fx/a/@victim 1.txt, ", 3000) + "` |\n"
	body := head + cell + "| P4 | leak-scan | pass | ` clean ` |\n"
	if utf8.RuneCountInString(head) >= maxBody || utf8.RuneCountInString(head+cell) <= maxBody {
		t.Fatal("the limit must fall inside the long cell")
	}
	got := truncate(body)
	if n := utf8.RuneCountInString(got); n > maxBody {
		t.Fatalf("%d characters, over GitHub's %d", n, maxBody)
	}
	if strings.Contains(got, "@victim") {
		t.Errorf("the cut kept part of a code span: its text renders as Markdown")
	}
	if !strings.HasPrefix(got, head) || !strings.Contains(got, "truncated by fixrail") {
		t.Errorf("the whole lines before the limit are not kept, or the cut is not said")
	}
}
