package batch

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestListingSARIFLog: a scan listing's "sarif" is the log its runs
// read, and only a log beside the listing (or below it) is one: any
// spelling of it is one path, and an escape, a link out, a .git
// directory or something that is no file is refused, naming the item.
func TestListingSARIFLog(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "listing")
	for _, d := range []string{"sub", ".git", "adir.sarif"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	log := write(t, dir, "x.sarif", "{}")
	write(t, dir, ".git/x.sarif", "{}")
	outside := write(t, root, "outside.sarif", "{}")
	if err := os.Symlink(outside, filepath.Join(dir, "link.sarif")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("x.sarif", filepath.Join(dir, "alias.sarif")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		log     string
		wantErr string // "" for a log read from x.sarif
	}{
		{"x.sarif", ""},
		{"./sub/../x.sarif", ""},
		{log, ""},
		{filepath.Join(dir, "sub", "..", "x.sarif"), ""},
		{"alias.sarif", ""}, // a link to the log beside it is that log
		{"../outside.sarif", "not beside the listing"},
		{outside, "not beside the listing"},
		{"/etc/passwd", "not beside the listing"},
		{"link.sarif", "not beside the listing"},
		{".git/x.sarif", "inside a .git directory"},
		{"sub/../.GIT/x.sarif", "inside a .git directory"},
		{"adir.sarif", "not a regular file"},
		{".", "not beside the listing"},
	} {
		t.Run(tc.log, func(t *testing.T) {
			listing := write(t, dir, "scan.json", `{"base": "main", "sarif": "`+tc.log+`", "items": [
			  {"group": "to-fix", "finding": "gosec-0123456789abcdef", "kind": "sarif", "path": "db/users.go"}]}`)
			items, err := ReadSource(listing, Intake{Split: splitter(t)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `item "gosec-0123456789abcdef"`) {
					t.Fatalf("err = %v, want one naming the item: %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 1 || items[0].File != log {
				t.Fatalf("items %+v, want the run to read %s", items, log)
			}
		})
	}
}

// TestListingSARIFPathKey: a listing's to-fix SARIF item is keyed by its
// file, cleaned, so two spellings of one file are one key and their runs
// never overlap; a path that is no repository file, or none, is refused.
func TestListingSARIFPathKey(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.sarif", "{}")
	item := func(id, path string) string {
		return `{"group": "to-fix", "finding": "` + id + `", "kind": "sarif", "path": "` + path + `"}`
	}
	listing := write(t, dir, "scan.json", `{"base": "main", "sarif": "x.sarif", "items": [`+
		item("gosec-a", "db/users.go")+`,`+item("gosec-b", "db/./users.go")+`,`+item("gosec-c", "db//users.go")+`,`+
		item("gosec-d", "db/orders.go")+`]}`)
	items, err := ReadSource(listing, Intake{Split: splitter(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Chains(items), [][]int{{0, 1, 2}, {3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chains %v, want %v (keys %v %v %v)", got, want, items[0].Keys, items[1].Keys, items[2].Keys)
	}
	for _, p := range []string{"", "../etc/passwd", "/etc/passwd", ".git/config", "src/.Git/hooks/pre-commit", "a\\b.go", "db/\u202eog.sresu"} {
		t.Run(p, func(t *testing.T) {
			l := write(t, dir, "bad.json", `{"base": "main", "sarif": "x.sarif", "items": [`+item("gosec-e", strings.ReplaceAll(p, `\`, `\\`))+`]}`)
			if _, err := ReadSource(l, Intake{Split: splitter(t)}); err == nil || !strings.Contains(err.Error(), `item "gosec-e"`) {
				t.Fatalf("err = %v, want a refusal naming the item", err)
			}
		})
	}
}

// TestVulnReportsShareThePackageKey: a cve report with no manifest hint
// runs after any other finding on its package, however either spells
// the package, and a manifest hint is keyed as the run reads it.
func TestVulnReportsShareThePackageKey(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.json", `{"id": "cve-a", "title": "django", "fix_type": "cve", "evidence": {"ecosystem": "PyPI", "package": "Django", "version": "3.2.0"}}`)
	write(t, dir, "b.json", `{"id": "cve-b", "title": "django", "fix_type": "cve", "evidence": {"ecosystem": "pypi", "package": "django", "version": "3.2.0"}}`)
	write(t, dir, "c.json", `{"id": "cve-c", "title": "requests", "fix_type": "cve", "evidence": {"ecosystem": "PyPI", "package": "requests", "version": "2.0.0", "manifest": "./app/requirements.txt"}}`)
	write(t, dir, "d.json", `[{"id": "cve-d", "ecosystem": "PyPI", "package": "urllib3", "version": "1.0", "manifest": "app/requirements.txt"}]`)
	write(t, dir, "e.json", `{"id": "cve-e", "title": "flask", "fix_type": "cve", "evidence": {"ecosystem": "PyPI", "package": "flask", "version": "1.0"}}`)
	items, err := ReadSource(dir, Intake{Split: splitter(t)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if !slices.Equal(ids, []string{"cve-a", "cve-b", "cve-c", "cve-d", "cve-e"}) {
		t.Fatalf("ids %v", ids)
	}
	if got, want := Chains(items), [][]int{{0, 1}, {2, 3}, {4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chains %v, want %v (keys %v %v %v %v)", got, want, items[0].Keys, items[1].Keys, items[2].Keys, items[3].Keys)
	}
}

// TestListingAlertsInSequence: a listing's Dependabot alerts name no
// package the batch could trust, so one repository's alerts run one
// after another; its issues do not wait for them. One repository spelt
// in two cases is one repository.
func TestListingAlertsInSequence(t *testing.T) {
	listing := write(t, t.TempDir(), "scan.json", `[{"repo": "Octo/App", "base": "main", "items": [
	  {"group": "to-fix", "finding": "dependabot-3", "kind": "alert", "number": 3, "title": "lodash (npm)"},
	  {"group": "to-fix", "finding": "gh-7", "kind": "issue", "number": 7, "title": "broken"},
	  {"group": "to-fix", "finding": "dependabot-4", "kind": "alert", "number": 4, "title": "not lodash (npm)"}]},
	 {"repo": "octo/app", "base": "main", "items": [
	  {"group": "to-fix", "finding": "dependabot-5", "kind": "alert", "number": 5, "title": "x (npm)"}]},
	 {"repo": "octo/other", "base": "main", "items": [
	  {"group": "to-fix", "finding": "dependabot-3", "kind": "alert", "number": 3, "title": "lodash (npm)"}]}]`)
	items, err := ReadSource(listing, Intake{Split: splitter(t)})
	if err != nil {
		t.Fatal(err)
	}
	if items[0].Repo != "octo/app" || items[3].Repo != "octo/app" {
		t.Fatalf("repos %q %q, want one spelling", items[0].Repo, items[3].Repo)
	}
	if got, want := Chains(items), [][]int{{0, 2, 3}, {1}, {4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chains %v, want %v", got, want)
	}
}
