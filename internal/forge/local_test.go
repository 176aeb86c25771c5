package forge_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/forge"
)

func draft(id, title string) forge.PR {
	return forge.PR{
		ID:     id,
		Title:  title,
		Base:   "main",
		Head:   "fixrail/" + id,
		Labels: []string{"fixrail", "bug"},
		Draft:  true,
		Commit: "0123456789abcdef0123456789abcdef01234567",
		Files:  []string{"src/a.py"},
		Body:   "## Reproduced\n\n" + title + "\n",
		Patch:  "diff --git a/src/a.py b/src/a.py\n",
	}
}

// tree lists every file and directory under dir, relative and sorted, with
// the content of each file.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenDraftRefusesUnsafeID: the ID names a directory under Dir, so a name
// that is empty, "." or ".." or holds a separator would make the bundle
// replace Dir itself or its parent.
func TestOpenDraftRefusesUnsafeID(t *testing.T) {
	for _, id := range []string{"", ".", "..", "../x", "a/b", "/abs"} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "state", "outbox")
			if err := os.MkdirAll(filepath.Join(dir, "other"), 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"state/run.ndjson":           "log",
				"state/outbox/other/pr.json": "{}",
			}
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := tree(t, root)
			loc, err := (&forge.Local{Dir: dir}).OpenDraft(t.Context(), draft(id, "x"))
			if err == nil {
				t.Errorf("OpenDraft(ID %q) = %q, want an error", id, loc)
			}
			if diff := cmp.Diff(want, tree(t, root)); diff != "" {
				t.Errorf("OpenDraft(ID %q) changed the state dir (-want +got):\n%s", id, diff)
			}
		})
	}
}

func TestOpenDraftRefusesReadyPR(t *testing.T) {
	tests := []struct {
		name    string
		outbox  bool // whether Dir exists beforehand
		present map[string]string
	}{
		{name: "no outbox yet"},
		{name: "existing bundle is kept", outbox: true, present: map[string]string{"issue-42/pr.json": "old"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "outbox")
			if tc.outbox {
				for name, content := range tc.present {
					p := filepath.Join(dir, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			pr := draft("issue-42", "fix it")
			pr.Draft = false
			loc, err := (&forge.Local{Dir: dir}).OpenDraft(t.Context(), pr)
			if !errors.Is(err, forge.ErrNotDraft) {
				t.Fatalf("OpenDraft(Draft: false) = %q, %v; want ErrNotDraft", loc, err)
			}
			if loc != "" {
				t.Errorf("location = %q, want none", loc)
			}
			if !tc.outbox {
				if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("OpenDraft created %s (stat: %v)", dir, err)
				}
				return
			}
			want := map[string]string{"issue-42/": ""}
			for k, v := range tc.present {
				want[k] = v
			}
			if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
				t.Errorf("outbox changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenDraftWritesBundle(t *testing.T) {
	// created_at is UTC even where the machine's zone is not.
	defer func(loc *time.Location) { time.Local = loc }(time.Local)
	time.Local = time.FixedZone("UTC+5", 5*3600)
	dir := filepath.Join(t.TempDir(), "state", "outbox") // parents are created
	pr := draft("issue-42", "textfmt: format_name(None) raises")
	before := time.Now().UTC().Truncate(time.Second)
	loc, err := (&forge.Local{Dir: dir}).OpenDraft(t.Context(), pr)
	after := time.Now().UTC()
	if err != nil {
		t.Fatalf("OpenDraft: %v", err)
	}
	if want := filepath.Join(dir, "issue-42"); loc != want {
		t.Errorf("location = %q, want %q", loc, want)
	}
	got := tree(t, dir)
	meta := got["issue-42/pr.json"]
	delete(got, "issue-42/pr.json")
	want := map[string]string{
		"issue-42/":          "",
		"issue-42/body.md":   pr.Body,
		"issue-42/fix.patch": pr.Patch,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outbox (-want +got, pr.json left out):\n%s", diff)
	}

	if !bytes.HasSuffix([]byte(meta), []byte("}\n")) {
		t.Errorf("pr.json does not end in a newline: %q", meta)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(meta), &fields); err != nil {
		t.Fatalf("pr.json: %v\n%s", err, meta)
	}
	created, err := time.Parse(time.RFC3339Nano, fields["created_at"].(string))
	if err != nil {
		t.Fatalf("created_at: %v", err)
	}
	if created.Location() != time.UTC || created.Before(before) || created.After(after) {
		t.Errorf("created_at = %v, want UTC between %v and %v", created, before, after)
	}
	delete(fields, "created_at")
	// Body and Patch live in their own files, not in pr.json.
	wantFields := map[string]any{
		"id":     "issue-42",
		"title":  "textfmt: format_name(None) raises",
		"base":   "main",
		"head":   "fixrail/issue-42",
		"labels": []any{"fixrail", "bug"},
		"draft":  true,
		"commit": "0123456789abcdef0123456789abcdef01234567",
		"files":  []any{"src/a.py"},
	}
	if diff := cmp.Diff(wantFields, fields); diff != "" {
		t.Errorf("pr.json (-want +got):\n%s", diff)
	}
}

func TestOpenDraftReplacesBundle(t *testing.T) {
	dir := t.TempDir()
	l := &forge.Local{Dir: dir}
	first := draft("issue-42", "first attempt")
	if _, err := l.OpenDraft(t.Context(), first); err != nil {
		t.Fatalf("first OpenDraft: %v", err)
	}
	other := draft("issue-7", "another finding")
	if _, err := l.OpenDraft(t.Context(), other); err != nil {
		t.Fatalf("OpenDraft(issue-7): %v", err)
	}
	second := draft("issue-42", "second attempt")
	second.Body, second.Patch = "new body\n", "new patch\n"
	loc, err := l.OpenDraft(t.Context(), second)
	if err != nil {
		t.Fatalf("second OpenDraft: %v", err)
	}
	if want := filepath.Join(dir, "issue-42"); loc != want {
		t.Errorf("location = %q, want %q", loc, want)
	}

	// Dir holds the two bundles and nothing else: no temp or old directory.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"issue-42", "issue-7"}, names); diff != "" {
		t.Errorf("outbox entries (-want +got):\n%s", diff)
	}

	got := tree(t, filepath.Join(dir, "issue-42"))
	var meta forge.PR
	if err := json.Unmarshal([]byte(got["pr.json"]), &meta); err != nil {
		t.Fatalf("pr.json: %v", err)
	}
	if meta.Title != "second attempt" || !meta.Draft {
		t.Errorf("pr.json = %+v, want the second, draft PR", meta)
	}
	delete(got, "pr.json")
	want := map[string]string{"body.md": "new body\n", "fix.patch": "new patch\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replaced bundle (-want +got, pr.json left out):\n%s", diff)
	}

	// The other finding's bundle is untouched.
	if got := tree(t, filepath.Join(dir, "issue-7"))["body.md"]; got != other.Body {
		t.Errorf("issue-7 body.md = %q, want %q", got, other.Body)
	}
}

// TestOpenDraftForeignFile: a bundle directory holding a file fixrail did not
// write is not fixrail's to delete. OpenDraft refuses, keeps the file and
// leaves no temporary directory behind.
func TestOpenDraftForeignFile(t *testing.T) {
	dir := t.TempDir()
	l := &forge.Local{Dir: dir}
	if _, err := l.OpenDraft(t.Context(), draft("issue-42", "first attempt")); err != nil {
		t.Fatalf("first OpenDraft: %v", err)
	}
	foreign := filepath.Join(dir, "issue-42", "review-notes.md")
	if err := os.WriteFile(foreign, []byte("a reviewer's notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	loc, err := l.OpenDraft(t.Context(), draft("issue-42", "second attempt"))
	if err == nil {
		t.Fatalf("OpenDraft over a foreign file = %q, want an error", loc)
	}
	if got, err := os.ReadFile(foreign); err != nil || string(got) != "a reviewer's notes" {
		t.Errorf("foreign file = %q, %v; want it kept", got, err)
	}
	// A refused replacement keeps the earlier bundle whole.
	for _, name := range []string{"pr.json", "body.md", "fix.patch"} {
		if _, err := os.Stat(filepath.Join(dir, "issue-42", name)); err != nil {
			t.Errorf("earlier bundle lost %s: %v", name, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "issue-42" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("outbox entries = %q, want only issue-42", names)
	}
}

// TestOpenDraftEscapesMeta: pr.json holds no raw control (encoding/json
// leaves C1 and bidi controls raw) and still decodes to the PR as given.
func TestOpenDraftEscapesMeta(t *testing.T) {
	title := "fixrail: x: \u009b2J \u202eevil\u202c \u200b \U000E0041"
	loc, err := (&forge.Local{Dir: t.TempDir()}).OpenDraft(t.Context(), draft("x", title))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(loc, "pr.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []rune{0x9b, 0x202e, 0x202c, 0x200b, 0xe0041} {
		if bytes.ContainsRune(b, r) {
			t.Errorf("pr.json holds %U raw:\n%s", r, b)
		}
	}
	var pr forge.PR
	if err := json.Unmarshal(b, &pr); err != nil || pr.Title != title {
		t.Errorf("pr.json decodes to title %q, %v; want %q", pr.Title, err, title)
	}
}
