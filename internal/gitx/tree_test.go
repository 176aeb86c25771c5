package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

// TestTreeCheckoutHasNoGitLink: a checked-out tree is a plain directory,
// so git run inside it finds no repository, and Changed sees every kind of
// change including ignored files; a planted .git is refused.
func TestTreeCheckoutHasNoGitLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", ".gitignore": "*.log\n"})
	r := baselined(t, dir)
	tmp := t.TempDir()
	tr, err := r.Checkout(ctx, filepath.Join(tmp, "wt"), filepath.Join(tmp, "wt.index"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(tr.Dir, ".git")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".git in the checkout: %v", err)
	}
	if out, err := gittest.Run(t, tr.Dir, "rev-parse", "--git-dir"); err == nil && strings.TrimSpace(out) != "" {
		// GIT_CEILING_DIRECTORIES in gittest stops discovery at the temp root.
		t.Logf("git inside the checkout found %q", out)
	}
	got, err := tr.Changed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("fresh checkout changed: %q", got)
	}
	gittest.WriteFiles(t, tr.Dir, map[string]string{"a.txt": "A\n", "new.txt": "n\n", "x.log": "ignored\n"})
	if err := os.Remove(filepath.Join(tr.Dir, "sub/b.txt")); err != nil {
		t.Fatal(err)
	}
	got, err = tr.Changed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.txt", "new.txt", "sub/b.txt", "x.log"}; !slices.Equal(got, want) {
		t.Fatalf("Changed = %q, want %q", got, want)
	}
	// A tree renamed away and replaced by a link to elsewhere is not ours.
	moved := filepath.Join(tmp, "moved")
	if err := os.Rename(tr.Dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, tr.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Changed(ctx); !errors.Is(err, ErrTreeReplaced) {
		t.Fatalf("replaced tree: err = %v, want ErrTreeReplaced", err)
	}
	if err := os.Remove(tr.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(moved, tr.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.Dir, ".git"), []byte("gitdir: "+dir+"/.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Changed(ctx); !errors.Is(err, ErrPlantedGit) {
		t.Fatalf("planted .git: err = %v, want ErrPlantedGit", err)
	}
}

// TestTreeChangedIgnoresHEAD: a tree checked out from another branch than
// the one the clone has checked out differs from the clone's HEAD, and
// Changed must not report that: it compares the directory with what
// Checkout wrote (the index), never with HEAD. A file touched but not
// changed is not reported either; a changed, a deleted, an untracked
// ignored file, a mode change and a file made a symlink are.
func TestTreeChangedIgnoresHEAD(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"README.md": "# app\n", "a.txt": "a\n", ".gitignore": "*.log\n"})
	gittest.Git(t, dir, "checkout", "-q", "-b", "release")
	gittest.WriteFiles(t, dir, map[string]string{"README.md": "# app\nrelease notes\n", "only-release.txt": "r\n"})
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "release")
	gittest.Git(t, dir, "checkout", "-q", "main")
	r := baselined(t, dir)
	tmp := t.TempDir()
	tr, err := r.Checkout(ctx, filepath.Join(tmp, "wt"), filepath.Join(tmp, "wt.index"), "release")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.Changed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("a fresh checkout of release, with main checked out, changed: %q", got)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(tr.Dir, "README.md"), later, later); err != nil {
		t.Fatal(err)
	}
	if got, err = tr.Changed(ctx); err != nil || len(got) != 0 {
		t.Fatalf("touched, not changed: Changed = %q, %v", got, err)
	}
	gittest.WriteFiles(t, tr.Dir, map[string]string{"a.txt": "A\n", "logs/x.log": "ignored\n"})
	if err := os.Remove(filepath.Join(tr.Dir, "only-release.txt")); err != nil {
		t.Fatal(err)
	}
	// A mode and a type change, the bytes the same.
	if err := os.Chmod(filepath.Join(tr.Dir, ".gitignore"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tr.Dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("# app\nrelease notes\n", filepath.Join(tr.Dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	got, err = tr.Changed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".gitignore", "README.md", "a.txt", "logs/x.log", "only-release.txt"}; !slices.Equal(got, want) {
		t.Fatalf("Changed = %q, want %q", got, want)
	}
}

// TestReadEntry: symlinks are read as links, a FIFO is refused without
// blocking, a symlinked parent is refused, and the exec bit is kept.
func TestReadEntry(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{"d/f.txt": "x", "run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "d"), filepath.Join(root, "ld")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, mode, data string
		err              error
	}{
		{"d/f.txt", "100644", "x", nil},
		{"run.sh", "100755", "#!/bin/sh\n", nil},
		{"link", "120000", "/etc/passwd", nil},
		{"gone.txt", "", "", nil},
		{"d/gone/x", "", "", nil},
		{"fifo", "", "", ErrFileType},
		{"ld/f.txt", "", "", ErrFileType},
	} {
		done := make(chan struct{})
		var e Entry
		var err error
		go func() { e, err = ReadEntry(root, tc.path, 1<<20); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadEntry(%s) blocked", tc.path)
		}
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ReadEntry(%s): err = %v, want %v", tc.path, err, tc.err)
			}
			continue
		}
		if err != nil || e.Mode != tc.mode || string(e.Data) != tc.data {
			t.Errorf("ReadEntry(%s) = %q %q, %v; want %q %q", tc.path, e.Mode, e.Data, err, tc.mode, tc.data)
		}
	}
	if _, err := ReadEntry(root, "d/f.txt", 0); !errors.Is(err, ErrFileType) {
		t.Errorf("over the limit: err = %v", err)
	}
}

// TestDiffTreesIgnoresAttributes: a -diff attribute, committed or in
// info/attributes, cannot hide the lines of a file from the gates.
func TestDiffTreesIgnoresAttributes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt -diff\n"})
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), []byte("* -diff binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := baselined(t, dir)
	entries := []Entry{
		{Path: "a.txt", Mode: "100644", Data: []byte("a\nSECRET-LINE\n")},
		{Path: "b/new.txt", Mode: "100644", Data: []byte("++ looks like a header\nplain\n")},
		{Path: "ln", Mode: "120000", Data: []byte("a.txt")},
	}
	if err := r.WriteBlobs(ctx, entries); err != nil {
		t.Fatal(err)
	}
	tree, err := r.BuildTree(ctx, "HEAD", entries, filepath.Join(t.TempDir(), "idx"))
	if err != nil {
		t.Fatal(err)
	}
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	c, err := r.CommitTree(ctx, tree, base, "msg\n", Identity{Name: "fixrail", Email: "fixrail@localhost"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.DiffTrees(ctx, base, c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Text, "+SECRET-LINE") || !strings.Contains(d.Text, "+++ looks like a header") {
		t.Fatalf("text diff hides lines:\n%s", d.Text)
	}
	if d.Added != 4 || d.Deleted != 0 {
		t.Errorf("Added, Deleted = %d, %d; want 4, 0", d.Added, d.Deleted)
	}
	if want := []string{"a.txt", "b/new.txt", "ln"}; !slices.Equal(d.Files, want) {
		t.Errorf("Files = %q, want %q", d.Files, want)
	}
	// What the commit holds is exactly the entries' bytes.
	if got := gittest.Git(t, dir, "cat-file", "blob", c+":a.txt"); got != "a\nSECRET-LINE" {
		t.Errorf("committed a.txt = %q", got)
	}
	// Deleting restores the base.
	del := []Entry{{Path: "a.txt"}}
	tree2, err := r.BuildTree(ctx, "HEAD", del, filepath.Join(t.TempDir(), "idx"))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := r.DiffTrees(ctx, base, tree2)
	if err != nil || d2.Deleted != 1 || !slices.Equal(d2.Files, []string{"a.txt"}) {
		t.Errorf("deletion diff = %+v, %v", d2.Diff, err)
	}
}

// TestStateCheck: a hook planted, a ref moved or info/attributes written
// after repository code ran poisons the clone, the poison outlives the
// process, and ClearPoison lifts it.
func TestStateCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"hook", "printf '#!/bin/sh\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout", "hooks/post-checkout"},
		{"attributes", "echo '* -diff' > .git/info/attributes", "info/attributes"},
		{"base-ref", "git update-ref refs/heads/main HEAD~0^{tree} 2>/dev/null || git commit -q --allow-empty -m x", "ref refs/heads/main"},
		{"head", "git symbolic-ref HEAD refs/heads/other", "HEAD"},
		{"git-link", "mv .git .real-git && echo 'gitdir: .real-git' > .git", ".git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
			r := baselined(t, dir)
			common := r.CommonDir()
			runRepositoryCode(t, r, dir, "export GIT_AUTHOR_NAME=x GIT_AUTHOR_EMAIL=x@x GIT_COMMITTER_NAME=x GIT_COMMITTER_EMAIL=x@x; "+tc.script)
			err := r.CheckDrift(ctx)
			if tc.name == "git-link" {
				// The recorded git directory is gone from where it was:
				// the listing itself fails, which poisons as well.
				if !errors.Is(err, ErrPoisoned) {
					t.Fatalf("CheckDrift = %v, want ErrPoisoned", err)
				}
				return
			}
			var se *StateError
			if !errors.As(err, &se) || !errors.Is(err, ErrPoisoned) {
				t.Fatalf("CheckDrift = %v, want a StateError", err)
			}
			if !strings.Contains(strings.Join(se.Changed, " "), tc.want) {
				t.Errorf("changed %q, want one naming %s", se.Changed, tc.want)
			}
			again := openRepo(t, dir)
			if err := again.Poisoned(); !errors.Is(err, ErrPoisoned) {
				t.Fatalf("reopened clone not poisoned: %v", err)
			}
			p, err := ClearPoison(common)
			if err != nil || p == nil || !strings.Contains(p.Cause, tc.want) {
				t.Fatalf("ClearPoison = %+v, %v", p, err)
			}
			if err := openRepo(t, dir).Poisoned(); err != nil {
				t.Fatalf("still poisoned after ClearPoison: %v", err)
			}
		})
	}
}

// TestStateCheckOwnBranch: fixrail's own branch updates are expected.
func TestStateCheckOwnBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := baselined(t, dir)
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	if err := r.UpdateBranch(ctx, "other", head, ""); err != nil {
		t.Fatal(err)
	}
	runRepositoryCode(t, r, dir, "true")
	if err := r.CheckDrift(ctx); err != nil {
		t.Fatalf("own branch update read as drift: %v", err)
	}
}

// TestProgramKeys: the keys that name programs, and so need a pin.
func TestProgramKeys(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{"filter.a.b.smudge": true, "filter.clean": false, "core.pager": true, "pager.log": true, "core.bare": false, "credential.https://x.helper": true} {
		if IsProgramKey(key) != want {
			t.Errorf("IsProgramKey(%q) = %v", key, !want)
		}
	}
}

func TestCountLines(t *testing.T) {
	for _, tc := range []struct {
		patch    string
		add, del int
	}{
		{"", 0, 0},
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", 1, 1},
		{"@@ -0,0 +1 @@\n+++ x\n\\ No newline at end of file\n", 1, 0},
		{"@@ -1 +0,0 @@\n--- gone\n", 0, 1},
	} {
		if a, d := CountLines(tc.patch); a != tc.add || d != tc.del {
			t.Errorf("CountLines(%q) = %d, %d; want %d, %d", tc.patch, a, d, tc.add, tc.del)
		}
	}
}

// TestMeasure: bytes are every added and deleted line's content, and the
// longest added line is measured without its "+" — a line padded with
// spaces counts every space; context lines, headers and the "no newline"
// marker count nothing.
func TestMeasure(t *testing.T) {
	pad := "x" + strings.Repeat(" ", 3000) + "y"
	for _, tc := range []struct {
		name  string
		patch string
		want  Stats
	}{
		{"empty", "", Stats{}},
		{"one changed line", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-bb\n+ccc\n", Stats{Added: 1, Deleted: 1, Bytes: 5, Longest: 3}},
		{"padded line", "@@ -1 +1 @@\n-a\n+" + pad + "\n", Stats{Added: 1, Deleted: 1, Bytes: 1 + len(pad), Longest: len(pad)}},
		{"header-like content", "@@ -0,0 +1 @@\n+++ x\n\\ No newline at end of file\n", Stats{Added: 1, Bytes: 4, Longest: 4}},
		{"deletion only", "@@ -1 +0,0 @@\n--- gone\n", Stats{Deleted: 1, Bytes: 7}},
		{"no final newline", "@@ -0,0 +1,2 @@\n+ab\n+abcd", Stats{Added: 2, Bytes: 6, Longest: 4}},
		{"empty added line", "@@ -0,0 +1 @@\n+\n", Stats{Added: 1}},
	} {
		if got := Measure(tc.patch); got != tc.want {
			t.Errorf("%s: Measure = %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

// TestSnapshotSweep: a snapshot directory left by a process that is gone
// (killed with SIGKILL before Close) is removed by the next Snapshot; a
// live owner's, or one holding anything else, is left alone.
func TestSnapshotSweep(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := filepath.Join(tmp, snapDirPrefix+"999999999-abc")
	alive := filepath.Join(tmp, fmt.Sprintf("%s%d-abc", snapDirPrefix, os.Getppid()))
	foreign := filepath.Join(tmp, snapDirPrefix+"999999998-abc")
	for _, d := range []string{gone, alive, foreign} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, snapFile), nil, 0o400); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(foreign, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead owner's snapshot is still there: %v", err)
	}
	for _, d := range []string{alive, foreign} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

func TestCaseVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		some []string
	}{
		{".fixrail", 128, []string{".fixrail", ".FIXRAIL", ".FixRail", ".fIxRaIl"}},
		{".FIXRAIL", 128, []string{".fixrail"}},
		{"a-1", 2, []string{"a-1", "A-1"}},
		{"._-", 1, []string{"._-"}},
		{"été", 2, []string{"été", "éTé"}}, // non-ASCII letters are left as they are
	} {
		got := CaseVariants(tc.name)
		if len(got) != tc.n {
			t.Errorf("%q: %d variants, want %d", tc.name, len(got), tc.n)
		}
		for _, want := range tc.some {
			if !slices.Contains(got, want) {
				t.Errorf("%q: %q missing", tc.name, want)
			}
		}
		slices.Sort(got)
		if len(slices.Compact(got)) != tc.n {
			t.Errorf("%q: duplicates in %v", tc.name, got)
		}
	}
}

// TestTrackedEveryCase: the index entries under any spelling are found in
// one call, and a name that merely starts like one is not.
func TestTrackedEveryCase(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{
		".FixRail/state.db": "x",
		".fixrails/a":       "x",
		"src/.fixrail/b":    "x",
		"a.txt":             "a\n",
	})
	r := openRepo(t, dir)
	got, err := r.Tracked(context.Background(), CaseVariants(".fixrail")...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{".FixRail/state.db"}) {
		t.Errorf("tracked %q, want only .FixRail/state.db", got)
	}
	if got, err := r.Tracked(context.Background(), ".fixrail"); err != nil || len(got) != 0 {
		t.Errorf("the literal spelling alone: %q, %v (this file system is case-sensitive)", got, err)
	}
	if _, err := r.Tracked(context.Background(), "../x"); err == nil {
		t.Error("a path outside the repository was listed")
	}
}

// TestFiles: every tracked path, a name with a newline or a space
// included, and nothing untracked.
func TestFiles(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{
		"go.mod":        "module x\n",
		"calc/calc.go":  "package calc\n",
		"odd\nname.txt": "x",
		"a b.py":        "x",
	})
	if err := os.WriteFile(filepath.Join(dir, "untracked.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := openRepo(t, dir).Files(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"a b.py", "calc/calc.go", "go.mod", "odd\nname.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}
}

// TestCheckoutRefusesLinkedDir: Checkout into a path that is a symbolic
// link writes nothing through it. The retry's tree (wt-2, …) is made in
// the hand-off directory, which the sandboxed agent can write: a link it
// planted there to an empty directory anywhere on the host would have git,
// run as the operator and unsandboxed, write the branch's files there, and
// the next agent's tree be that directory.
func TestCheckoutRefusesLinkedDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := baselined(t, dir)
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	handoff := filepath.Join(tmp, "handoff")
	if err := os.Mkdir(handoff, 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(handoff, "wt-2")
	if err := os.Symlink(outside, planted); err != nil {
		t.Fatal(err)
	}
	tr, err := r.Checkout(ctx, planted, filepath.Join(tmp, "wt-2.index"), "HEAD")
	if err == nil {
		t.Errorf("Checkout into a link succeeded: tree at %s", tr.Dir)
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("Checkout wrote through the link: %s holds %d entries", outside, len(ents))
	}
	// Control: the same checkout into a real directory works.
	if _, err := r.Checkout(ctx, filepath.Join(handoff, "wt-3"), filepath.Join(tmp, "wt-3.index"), "HEAD"); err != nil {
		t.Fatalf("Checkout into a fresh directory: %v", err)
	}
}
