package forge_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/forge"
)

func TestLocalPublishRefusesForeignHead(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*forge.PR)
		want error
	}{
		{"ready", func(p *forge.PR) { p.Draft = false }, forge.ErrNotDraft},
		{"head is the base", func(p *forge.PR) { p.Head, p.Base = "main", "main" }, forge.ErrBadHead},
		{"head outside fixrail/", func(p *forge.PR) { p.Head = "release" }, forge.ErrBadHead},
		{"bare prefix", func(p *forge.PR) { p.Head = "fixrail/" }, forge.ErrBadHead},
		{"refspec in head", func(p *forge.PR) { p.Head = "fixrail/x:refs/heads/main" }, forge.ErrBadHead},
		{"short commit", func(p *forge.PR) { p.Commit = "0123456" }, forge.ErrBadHead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "outbox")
			pr := draft("issue-42", "x")
			tc.edit(&pr)
			pub, err := (&forge.Local{Dir: dir}).Publish(t.Context(), pr)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Publish = %+v, %v; want %v", pub, err, tc.want)
			}
			if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused Publish created %s", dir)
			}
		})
	}
}

func TestLocalNotifyAndOpenWork(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	l := &forge.Local{Dir: dir}
	ctx := t.Context()
	w, err := l.OpenWork(ctx, forge.Subject{ID: "issue-42", Issue: 42})
	if err != nil || len(w.Fixes) != 0 || w.Escalation != nil {
		t.Fatalf("OpenWork on no outbox = %+v, %v; want nothing", w, err)
	}
	pub, err := l.Publish(ctx, draft("issue-7", "another"))
	if err != nil {
		t.Fatal(err)
	}
	if pub.Location != filepath.Join(dir, "issue-7") || pub.Branch != "fixrail/issue-7" {
		t.Errorf("Publish = %+v", pub)
	}
	// NOT-REPRO is recorded but is no open escalation.
	if err := l.Notify(ctx, forge.Notice{ID: "issue-42", Terminal: forge.NotRepro, Reason: "green-on-base", Body: "green on main\n", Labels: []string{forge.LabelNotRepro}}); err != nil {
		t.Fatal(err)
	}
	w, err = l.OpenWork(ctx, forge.Subject{ID: "issue-42", Issue: 42})
	if err != nil {
		t.Fatal(err)
	}
	wantFix := []forge.OpenFix{{ID: "issue-7", Branch: "fixrail/issue-7", Location: filepath.Join(dir, "issue-7"), HeadSHA: draft("x", "").Commit, Checks: forge.CINone}}
	if d := cmp.Diff(wantFix, w.Fixes); d != "" || w.Escalation != nil {
		t.Errorf("OpenWork after NOT-REPRO: escalation %+v, fixes (-want +got):\n%s", w.Escalation, d)
	}
	if err := l.Notify(ctx, forge.Notice{ID: "issue-42", Terminal: forge.Escalate, Reason: "sensitive-path", Body: "needs a human\n", Labels: []string{forge.LabelEscalated}}); err != nil {
		t.Fatal(err)
	}
	w, err = l.OpenWork(ctx, forge.Subject{ID: "issue-42", Issue: 42})
	if err != nil {
		t.Fatal(err)
	}
	want := &forge.OpenEscalation{Number: 42, Label: forge.LabelEscalated, Location: filepath.Join(dir, "issue-42", "notice.json")}
	if d := cmp.Diff(want, w.Escalation); d != "" {
		t.Errorf("escalation (-want +got):\n%s", d)
	}
	if got := tree(t, filepath.Join(dir, "issue-42"))["notice.md"]; got != "needs a human\n" {
		t.Errorf("notice.md = %q", got)
	}
	// Another finding's escalation is not this one's.
	if w, _ := l.OpenWork(ctx, forge.Subject{ID: "issue-7"}); w.Escalation != nil {
		t.Errorf("issue-7 sees issue-42's escalation: %+v", w.Escalation)
	}
	// A PR bundle may replace a directory that holds a notice: both are fixrail's.
	if _, err := l.Publish(ctx, draft("issue-42", "fixed later")); err != nil {
		t.Fatalf("Publish over a notice: %v", err)
	}
	// Nothing but the two bundles is left in the outbox (no temp files).
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("outbox holds %d entries, want 2", len(entries))
	}
	if err := l.Notify(ctx, forge.Notice{ID: "../x", Terminal: forge.Escalate}); err == nil {
		t.Error("Notify with an unsafe id succeeded")
	}
}

func TestLocalProtectionAndChecks(t *testing.T) {
	l := &forge.Local{Dir: t.TempDir()}
	p, err := l.AssertProtected(t.Context(), "main", []string{"ci"})
	if err != nil || p.Applicable {
		t.Errorf("AssertProtected = %+v, %v; want not applicable", p, err)
	}
	pub := forge.Published{Commit: draft("x", "").Commit}
	res, err := l.WaitChecks(t.Context(), pub, time.Now(), nil)
	if err != nil || res.State != forge.CINone {
		t.Errorf("WaitChecks = %+v, %v; want none", res, err)
	}
	res, _ = l.WaitChecks(t.Context(), pub, time.Now(), []forge.CheckRef{{Name: "ci"}})
	if res.State != forge.CINeverAppeared || len(res.Missing) != 1 {
		t.Errorf("WaitChecks with a required check = %+v; want never-appeared", res)
	}
}

// FixFiles reads each bundle's files back; a bundle that records none
// cannot be judged, so the answer is an error, never "touches nothing".
func TestLocalFixFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	l := &forge.Local{Dir: dir}
	ctx := t.Context()
	if fixes, err := l.FixFiles(ctx); err != nil || len(fixes) != 0 {
		t.Fatalf("FixFiles on no outbox = %+v, %v", fixes, err)
	}
	b := draft("issue-7", "b")
	b.Files = []string{"src/b.py", "tests/test_b.py"}
	for _, pr := range []forge.PR{b, draft("issue-3", "a")} {
		if _, err := l.Publish(ctx, pr); err != nil {
			t.Fatal(err)
		}
	}
	fixes, err := l.FixFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, f := range fixes {
		got = append(got, append([]string{f.ID}, f.Files...))
	}
	want := [][]string{{"issue-3", "src/a.py"}, {"issue-7", "src/b.py", "tests/test_b.py"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("FixFiles (-want +got):\n%s", d)
	}
	// OpenWork does not carry the files (it is not asked what they touch).
	if w, _ := l.OpenWork(ctx, forge.Subject{}); len(w.Fixes) != 2 || w.Fixes[0].Files != nil {
		t.Errorf("OpenWork fixes = %+v", w.Fixes)
	}
	old := draft("issue-9", "old")
	old.Files = nil
	if _, err := l.Publish(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := l.FixFiles(ctx); err == nil || !strings.Contains(err.Error(), "issue-9/pr.json records no files") {
		t.Fatalf("a bundle without files: %v, want an error naming it", err)
	}
}
