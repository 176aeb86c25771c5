package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/google/go-cmp/cmp"
)

func openRepo(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// canary returns an executable script that appends to a file when run,
// prints its first argument's contents (so it can pose as a textconv), and
// the path of that file.
func canary(t *testing.T) (script, file string) {
	t.Helper()
	dir := t.TempDir()
	file = filepath.Join(dir, "canary")
	script = filepath.Join(dir, "planted.sh")
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + file + "'\ncat \"$1\" 2>/dev/null\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, file
}

func ran(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"sub/a.txt": "a\n"})

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	gittest.Git(t, "", "init", "--quiet", "--bare", bare)

	tests := []struct {
		name string
		dir  string
		ok   bool
	}{
		{"top", dir, true},
		{"subdirectory", filepath.Join(dir, "sub"), true},
		{"through a symlink", filepath.Join(link, "sub"), true},
		{"inside .git", filepath.Join(dir, ".git"), false},
		{"bare", bare, false},
		{"not a repository", t.TempDir(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(ctx, tc.dir)
			if !tc.ok {
				if err == nil {
					t.Fatalf("Open(%s) = %s, want error", tc.dir, r.Top())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Top() != dir {
				t.Errorf("Top() = %s, want %s", r.Top(), dir)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "alpha\n", "d/in.txt": "in\n"})
	mainSHA := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "switch", "--quiet", "--create", "feature")
	gittest.WriteFiles(t, dir, map[string]string{"b.txt": "beta\n"})
	gittest.Git(t, dir, "add", "b.txt")
	gittest.Git(t, dir, "commit", "--quiet", "--message", "b")
	featSHA := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "switch", "--quiet", "main")
	r := openRepo(t, dir)

	t.Run("CurrentBranch", func(t *testing.T) {
		got, err := r.CurrentBranch(ctx)
		if err != nil || got != "main" {
			t.Errorf("CurrentBranch = %q, %v; want main", got, err)
		}
	})

	t.Run("RevParse", func(t *testing.T) {
		tests := []struct {
			rev  string
			want string // "" means error
		}{
			{"HEAD", mainSHA},
			{"main", mainSHA},
			{"feature", featSHA},
			{"feature~1", mainSHA},
			{mainSHA[:12], mainSHA},
			{"nope", ""},
			{"", ""},
			{"--all", ""},
			{"HEAD:a.txt", ""}, // a blob, not a commit
		}
		for _, tc := range tests {
			got, err := r.RevParse(ctx, tc.rev)
			if tc.want == "" {
				if err == nil {
					t.Errorf("RevParse(%q) = %s, want error", tc.rev, got)
				}
				continue
			}
			if err != nil || got != tc.want {
				t.Errorf("RevParse(%q) = %q, %v; want %s", tc.rev, got, err, tc.want)
			}
		}
	})

	t.Run("BranchExists", func(t *testing.T) {
		tests := []struct {
			name   string
			exists bool
			bad    bool
		}{
			{"main", true, false},
			{"feature", true, false},
			{"fix/deep", false, false},
			{"nope", false, false},
			{"", false, true},
			{"-x", false, true},
			{"a..b", false, true},
			{"@{-1}", false, true},
			{"HEAD", false, true},
			{"a b", false, true},
		}
		for _, tc := range tests {
			got, err := r.BranchExists(ctx, tc.name)
			if (err != nil) != tc.bad || got != tc.exists {
				t.Errorf("BranchExists(%q) = %v, %v; want %v, error %v", tc.name, got, err, tc.exists, tc.bad)
			}
		}
	})

	t.Run("CommitsAhead", func(t *testing.T) {
		tests := []struct {
			branch, base string
			want         int
			bad          bool
		}{
			{"feature", "main", 1, false},
			{"main", "feature", 0, false},
			{"main", "main", 0, false},
			{"nope", "main", 0, true},
			{"feature", "--all", 0, true},
		}
		for _, tc := range tests {
			got, err := r.CommitsAhead(ctx, tc.branch, tc.base)
			if (err != nil) != tc.bad || got != tc.want {
				t.Errorf("CommitsAhead(%q, %q) = %d, %v; want %d, error %v", tc.branch, tc.base, got, err, tc.want, tc.bad)
			}
		}
	})

	t.Run("ShowFile", func(t *testing.T) {
		tests := []struct {
			rev, path string
			want      string
			notExist  bool // error wraps ErrNotExist
			bad       bool // any other error
		}{
			{rev: "main", path: "a.txt", want: "alpha\n"},
			{rev: "feature", path: "b.txt", want: "beta\n"},
			{rev: "main", path: "d/in.txt", want: "in\n"},
			{rev: "main", path: "b.txt", notExist: true},
			{rev: "main", path: "d", notExist: true}, // a directory is not a file
			{rev: "nope", path: "a.txt", bad: true},
			{rev: "main", path: "../a.txt", bad: true},
			{rev: "main", path: "/a.txt", bad: true},
		}
		for _, tc := range tests {
			got, err := r.ShowFile(ctx, tc.rev, tc.path)
			switch {
			case tc.notExist:
				if !errors.Is(err, ErrNotExist) {
					t.Errorf("ShowFile(%q, %q) err = %v, want ErrNotExist", tc.rev, tc.path, err)
				}
			case tc.bad:
				if err == nil || errors.Is(err, ErrNotExist) {
					t.Errorf("ShowFile(%q, %q) err = %v, want an error other than ErrNotExist", tc.rev, tc.path, err)
				}
			default:
				if err != nil || string(got) != tc.want {
					t.Errorf("ShowFile(%q, %q) = %q, %v; want %q", tc.rev, tc.path, got, err, tc.want)
				}
			}
		}
	})

	t.Run("CurrentBranch detached", func(t *testing.T) {
		d := gittest.NewRepo(t, nil)
		gittest.Git(t, d, "switch", "--quiet", "--detach")
		if got, err := openRepo(t, d).CurrentBranch(ctx); err == nil {
			t.Errorf("CurrentBranch on detached HEAD = %q, want error", got)
		}
	})
}

func TestUpdateBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	c1 := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "commit", "--quiet", "--allow-empty", "--message", "two")
	c2 := gittest.Git(t, dir, "rev-parse", "HEAD")
	missing := strings.Repeat("1", len(c1))
	r := openRepo(t, dir)

	// Steps run in order against one repository: each sees the last one's ref.
	steps := []struct {
		name             string
		branch, new, old string
		ok               bool
		wantRef          string // fix's value afterwards; "" means absent
	}{
		{"create", "fix", c1, "", true, c1},
		{"create again fails", "fix", c2, "", false, c1},
		{"wrong old fails", "fix", c2, c2, false, c1},
		{"compare and swap", "fix", c2, c1, true, c2},
		{"stale old fails", "fix", c1, c1, false, c2},
		{"short new refused", "fix", c1[:12], c2, false, c2},
		{"revision expression refused", "fix", "HEAD~1", c2, false, c2},
		{"nonexistent object refused", "fix", missing, c2, false, c2},
		{"invalid name refused", "fix..x", c1, "", false, c2},
		{"option-like name refused", "-f", c1, "", false, c2},
	}
	for _, s := range steps {
		err := r.UpdateBranch(ctx, s.branch, s.new, s.old)
		if (err == nil) != s.ok {
			t.Errorf("%s: UpdateBranch(%q, %.8s, %.8s) = %v, want ok=%v", s.name, s.branch, s.new, s.old, err, s.ok)
		}
		got, _ := gittest.Run(t, dir, "rev-parse", "--verify", "--quiet", "refs/heads/fix")
		if got != s.wantRef {
			t.Errorf("%s: refs/heads/fix = %q, want %q", s.name, got, s.wantRef)
		}
	}
}

// TestDeleteBranch: deletion is a compare-and-swap on the commit the
// caller read, and deletes a symbolic ref itself, never what it names.
func TestDeleteBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	c1 := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "branch", "fixrail/x")
	gittest.Git(t, dir, "commit", "--quiet", "--allow-empty", "--message", "two")
	c2 := gittest.Git(t, dir, "rev-parse", "HEAD")
	r := openRepo(t, dir)

	if err := r.DeleteBranch(ctx, "fixrail/x", c2); err == nil {
		t.Fatal("deleted a branch that does not hold the commit named")
	}
	if got, _ := gittest.Run(t, dir, "rev-parse", "--verify", "--quiet", "refs/heads/fixrail/x"); got != c1 {
		t.Fatalf("after a refused delete: %q, want %q", got, c1)
	}
	for _, bad := range []string{"HEAD", c1[:12], ""} {
		if err := r.DeleteBranch(ctx, "fixrail/x", bad); err == nil {
			t.Errorf("DeleteBranch with old %q: want refused", bad)
		}
	}
	if err := r.DeleteBranch(ctx, "-d", c1); err == nil {
		t.Error("an option-like branch name was accepted")
	}
	if err := r.DeleteBranch(ctx, "fixrail/x", c1); err != nil {
		t.Fatal(err)
	}
	if got, _ := gittest.Run(t, dir, "rev-parse", "--verify", "--quiet", "refs/heads/fixrail/x"); got != "" {
		t.Fatalf("fixrail/x still at %q", got)
	}

	// A symbolic ref planted at the name goes; main, which it names, stays.
	gittest.Git(t, dir, "symbolic-ref", "refs/heads/fixrail/y", "refs/heads/main")
	if err := r.DeleteBranch(ctx, "fixrail/y", c2); err != nil {
		t.Fatal(err)
	}
	if got, _ := gittest.Run(t, dir, "rev-parse", "--verify", "--quiet", "refs/heads/main"); got != c2 {
		t.Fatalf("main = %q after deleting a symref to it, want %q", got, c2)
	}
	if got, _ := gittest.Run(t, dir, "rev-parse", "--verify", "--quiet", "refs/heads/fixrail/y"); got != "" {
		t.Fatalf("fixrail/y still at %q", got)
	}
}

// TestParentEnvIgnored shows that variables which would redirect git, or
// inject config, do not reach it from fixrail's own environment.
func TestParentEnvIgnored(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "mine\n"})
	other := gittest.NewRepo(t, map[string]string{"a.txt": "other\n"})
	want := gittest.Git(t, dir, "rev-parse", "HEAD")
	script, file := canary(t)
	hooks := t.TempDir()
	if err := os.Symlink(script, filepath.Join(hooks, "pre-commit")); err != nil {
		t.Fatal(err)
	}

	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
	t.Setenv("GIT_CONFIG_VALUE_0", hooks)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='"+hooks+"'")

	r := openRepo(t, dir)
	if r.Top() != dir {
		t.Errorf("Top() = %s, want %s", r.Top(), dir)
	}
	if got, err := r.RevParse(ctx, "HEAD"); err != nil || got != want {
		t.Errorf("RevParse(HEAD) = %q, %v; want %s", got, err, want)
	}
	if got, err := r.ShowFile(ctx, "HEAD", "a.txt"); err != nil || string(got) != "mine\n" {
		t.Errorf("ShowFile(HEAD, a.txt) = %q, %v; want mine", got, err)
	}
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "changed\n"})
	if _, err := wt.Commit(ctx, []string{"a.txt"}, "change", Identity{"Bot", "bot@example.com"}); err != nil {
		t.Fatal(err)
	}
	if ran(file) {
		t.Error("pre-commit hook from GIT_CONFIG_* in the parent environment ran")
	}
	if got := gittest.Git(t, other, "log", "--format=%s"); got != "initial" {
		t.Errorf("other repository's log = %q, want only initial", got)
	}
}

func TestHooksDoNotRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		plant   func(t *testing.T, dir, script string)
		control bool // plain git must run the planted hook, or the case proves nothing
	}{
		{
			name: ".git/hooks",
			plant: func(t *testing.T, dir, script string) {
				for _, ev := range hookEvents {
					if err := os.Symlink(script, filepath.Join(dir, ".git", "hooks", ev)); err != nil {
						t.Fatal(err)
					}
				}
			},
			control: true,
		},
		{
			name: "core.hooksPath in repository config",
			plant: func(t *testing.T, dir, script string) {
				hooks := t.TempDir()
				for _, ev := range hookEvents {
					if err := os.Symlink(script, filepath.Join(hooks, ev)); err != nil {
						t.Fatal(err)
					}
				}
				gittest.Git(t, dir, "config", "core.hooksPath", hooks)
			},
			control: true,
		},
		{
			// Config-defined hooks exist from git 2.54; older git ignores them,
			// so the control is only checked where they run.
			name: "hook.<name>.command in repository config",
			plant: func(t *testing.T, dir, script string) {
				gittest.Git(t, dir, "config", "hook.planted.command", script)
				for _, ev := range hookEvents {
					gittest.Git(t, dir, "config", "--add", "hook.planted.event", ev)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
			script, file := canary(t)
			tc.plant(t, dir, script)

			r := openRepo(t, dir)
			wtPath := filepath.Join(t.TempDir(), "wt")
			wt, err := r.AddWorktree(ctx, wtPath, "main")
			if err != nil {
				t.Fatal(err)
			}
			gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "b\n", "new.txt": "n\n"})
			if _, err := wt.Changes(ctx, true); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Diff(ctx, nil); err != nil {
				t.Fatal(err)
			}
			sha, err := wt.Commit(ctx, []string{"a.txt", "new.txt"}, "fix", Identity{"Bot", "bot@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateBranch(ctx, "fix", sha, ""); err != nil {
				t.Fatal(err)
			}
			if err := r.RemoveWorktree(ctx, wtPath); err != nil {
				t.Fatal(err)
			}
			if ran(file) {
				b, _ := os.ReadFile(file)
				t.Fatalf("planted hook ran through gitx:\n%s", b)
			}

			gittest.Git(t, dir, "commit", "--quiet", "--allow-empty", "--message", "control")
			switch {
			case ran(file):
			case tc.control:
				t.Fatal("control: plain git commit did not run the planted hook either")
			default:
				t.Logf("this git does not run config-defined hooks; case is vacuous here")
			}
		})
	}
}

// TestConfiguredCommandsDoNotRun plants the repository-config helpers that
// SAFE_GIT calls must not run, each with a plain-git control showing it is
// live.
func TestConfiguredCommandsDoNotRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		config  func(script string) [][2]string
		control []string // plain git command, run in the worktree, that runs it
	}{
		{
			name:    "diff.external",
			config:  func(s string) [][2]string { return [][2]string{{"diff.external", s}} },
			control: []string{"diff"},
		},
		{
			name:    "textconv",
			config:  func(s string) [][2]string { return [][2]string{{"diff.planted.textconv", s}} },
			control: []string{"diff"},
		},
		{
			name:    "diff driver command",
			config:  func(s string) [][2]string { return [][2]string{{"diff.planted.command", s}} },
			control: []string{"diff"},
		},
		{
			name:    "fsmonitor",
			config:  func(s string) [][2]string { return [][2]string{{"core.fsmonitor", s}} },
			control: []string{"status"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := gittest.NewRepo(t, map[string]string{
				"a.txt":          "one\n",
				".gitattributes": "*.txt diff=planted\n",
			})
			script, file := canary(t)
			for _, kv := range tc.config(script) {
				gittest.Git(t, dir, "config", kv[0], kv[1])
			}
			// Settings that would reshape the patch a gate reads.
			gittest.Git(t, dir, "config", "color.ui", "always")
			gittest.Git(t, dir, "config", "diff.noprefix", "true")
			gittest.Git(t, dir, "config", "diff.mnemonicPrefix", "true")

			r := openRepo(t, dir)
			wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "two\n", "n.txt": "new\n"})
			if _, err := wt.Changes(ctx, false); err != nil {
				t.Fatal(err)
			}
			d, err := wt.Diff(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.ShowFile(ctx, "HEAD", "a.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Commit(ctx, []string{"a.txt"}, "fix", Identity{"Bot", "bot@example.com"}); err != nil {
				t.Fatal(err)
			}
			if ran(file) {
				b, _ := os.ReadFile(file)
				t.Fatalf("planted command ran through gitx:\n%s", b)
			}
			for _, want := range []string{"diff --git a/a.txt b/a.txt\n", "-one\n+two\n", "diff --git a/n.txt b/n.txt\n"} {
				if !strings.Contains(d.Patch, want) {
					t.Errorf("patch lacks %q:\n%s", want, d.Patch)
				}
			}
			if strings.Contains(d.Patch, "\x1b") {
				t.Errorf("patch contains color escapes:\n%q", d.Patch)
			}

			gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "three\n"})
			gittest.Git(t, wt.Dir, tc.control...)
			if !ran(file) {
				t.Fatalf("control: plain git %s did not run the planted command either", tc.control[0])
			}
		})
	}
}

func TestWorktreeLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{
		"a.txt":      "a1\na2\na3\n",
		"b.txt":      "b\n",
		"del.txt":    "gone soon\n",
		"keep.txt":   "keep\n",
		".gitignore": "*.log\n",
	})
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	r := openRepo(t, dir)
	wtPath := filepath.Join(t.TempDir(), "wt")
	wt, err := r.AddWorktree(ctx, wtPath, "main")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, wt.Dir, "rev-parse", "HEAD"); got != base {
		t.Fatalf("worktree HEAD = %s, want %s", got, base)
	}
	if got := gittest.Git(t, wt.Dir, "branch", "--show-current"); got != "" {
		t.Errorf("worktree is on branch %q, want detached", got)
	}
	if list, err := r.Worktrees(ctx); err != nil || !cmp.Equal(list, []string{wt.Dir}) {
		t.Errorf("Worktrees() = %q, %v; want [%s]", list, err, wt.Dir)
	}

	gittest.WriteFiles(t, wt.Dir, map[string]string{
		"a.txt":          "a1\nA2\na3\na4\n",
		"b.txt":          "b changed\n",
		"new/deep/n.txt": "n1\nn2\n",
		"bin.dat":        "\x00\x01\x02",
		"debug.log":      "ignored\n",
	})
	if err := os.Remove(filepath.Join(wt.Dir, "del.txt")); err != nil {
		t.Fatal(err)
	}

	t.Run("Changes", func(t *testing.T) {
		tracked := []Change{
			{"a.txt", "M"}, {"b.txt", "M"}, {"bin.dat", "??"}, {"del.txt", "D"}, {"new/deep/n.txt", "??"},
		}
		tests := []struct {
			ignored bool
			want    []Change
		}{
			{false, tracked},
			{true, []Change{tracked[0], tracked[1], tracked[2], {"debug.log", "!!"}, tracked[3], tracked[4]}},
		}
		for _, tc := range tests {
			got, err := wt.Changes(ctx, tc.ignored)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Changes(%v) (-want +got):\n%s", tc.ignored, diff)
			}
		}
	})

	t.Run("Diff", func(t *testing.T) {
		tests := []struct {
			name           string
			paths          []string
			added, deleted int
			files          []string
		}{
			{"all", nil, 5, 3, []string{"a.txt", "b.txt", "bin.dat", "del.txt", "new/deep/n.txt"}},
			{"restricted", []string{"a.txt", "new/deep/n.txt"}, 4, 1, []string{"a.txt", "new/deep/n.txt"}},
			{"directory", []string{"new"}, 2, 0, []string{"new/deep/n.txt"}},
			{"binary counts zero", []string{"bin.dat"}, 0, 0, []string{"bin.dat"}},
			{"glob is literal", []string{"*.txt"}, 0, 0, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				d, err := wt.Diff(ctx, tc.paths)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.files, d.Files); diff != "" {
					t.Errorf("Files (-want +got):\n%s", diff)
				}
				if d.Added != tc.added || d.Deleted != tc.deleted {
					t.Errorf("Added, Deleted = %d, %d; want %d, %d", d.Added, d.Deleted, tc.added, tc.deleted)
				}
			})
		}
		if _, err := wt.Diff(ctx, []string{"../x"}); err == nil {
			t.Error("Diff(../x) succeeded, want error")
		}
		// Diff leaves the index alone: untracked files are still untracked.
		if got := gittest.Git(t, wt.Dir, "status", "--porcelain", "--", "new"); got != "?? new/" {
			t.Errorf("status after Diff = %q, want untracked new/", got)
		}
	})

	t.Run("Diff applies", func(t *testing.T) {
		d, err := wt.Diff(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		other, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "other"), "main")
		if err != nil {
			t.Fatal(err)
		}
		defer r.RemoveWorktree(ctx, other.Dir)
		patch := filepath.Join(t.TempDir(), "p.diff")
		if err := os.WriteFile(patch, []byte(d.Patch), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, other.Dir, "apply", "--binary", patch)
		for _, f := range []string{"a.txt", "bin.dat", "new/deep/n.txt"} {
			want, _ := os.ReadFile(filepath.Join(wt.Dir, f))
			got, _ := os.ReadFile(filepath.Join(other.Dir, f))
			if string(got) != string(want) {
				t.Errorf("%s after apply = %q, want %q", f, got, want)
			}
		}
	})

	t.Run("Commit rejects", func(t *testing.T) {
		id := Identity{"Bot", "bot@example.com"}
		tests := []struct {
			name  string
			paths []string
			msg   string
			id    Identity
		}{
			{"no paths", nil, "m", id},
			{"absolute", []string{"/etc/passwd"}, "m", id},
			{"dotdot", []string{"../a.txt"}, "m", id},
			{"unclean", []string{"./a.txt"}, "m", id},
			{"git dir", []string{".git/config"}, "m", id},
			{"unchanged file", []string{"a.txt", "keep.txt"}, "m", id},
			{"missing file", []string{"nope.txt"}, "m", id},
			{"directory", []string{"new"}, "m", id},
			{"ignored file", []string{"debug.log"}, "m", id},
			{"empty message", []string{"a.txt"}, " \n", id},
			{"no email", []string{"a.txt"}, "m", Identity{Name: "Bot"}},
			{"bracket in name", []string{"a.txt"}, "m", Identity{"Bot <x@y>", "bot@example.com"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if sha, err := wt.Commit(ctx, tc.paths, tc.msg, tc.id); err == nil {
					t.Errorf("Commit(%q) = %s, want error", tc.paths, sha)
				}
				if got := gittest.Git(t, wt.Dir, "rev-parse", "HEAD"); got != base {
					t.Errorf("HEAD moved to %s", got)
				}
			})
		}
	})

	t.Run("Commit", func(t *testing.T) {
		// Something else staged by the agent must not ride along.
		gittest.Git(t, wt.Dir, "add", "b.txt")
		msg := "Fix the thing\n\nCloses #123\n"
		sha, err := wt.Commit(ctx, []string{"a.txt", "del.txt", "new/deep/n.txt"}, msg, Identity{"Fix Bot", "bot@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if got := gittest.Git(t, wt.Dir, "rev-parse", "HEAD"); got != sha {
			t.Errorf("Commit returned %s, HEAD is %s", sha, got)
		}
		if got := gittest.Git(t, dir, "rev-parse", "HEAD"); got != base {
			t.Errorf("main worktree HEAD moved to %s", got)
		}
		files := gittest.Git(t, dir, "diff-tree", "--no-commit-id", "--name-status", "-r", sha)
		if want := "M\ta.txt\nD\tdel.txt\nA\tnew/deep/n.txt"; files != want {
			t.Errorf("committed:\n%s\nwant:\n%s", files, want)
		}
		meta := gittest.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", sha)
		if want := "Fix Bot <bot@example.com>|Fix Bot <bot@example.com>|" + strings.TrimSuffix(msg, "\n"); meta != want {
			t.Errorf("commit metadata = %q, want %q", meta, want)
		}
		got, err := wt.Changes(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		want := []Change{{"b.txt", "M"}, {"bin.dat", "??"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Changes after Commit (-want +got):\n%s", diff)
		}
	})

	t.Run("RemoveWorktree", func(t *testing.T) {
		if err := r.RemoveWorktree(ctx, wtPath); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(wt.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("worktree dir still there: %v", err)
		}
		if list := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, wt.Dir) {
			t.Errorf("git worktree list still shows %s:\n%s", wt.Dir, list)
		}
		if err := r.RemoveWorktree(ctx, wtPath); err != nil {
			t.Errorf("second RemoveWorktree = %v, want nil", err)
		}
	})
}

func TestAddWorktreePaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := openRepo(t, dir)
	tmp := t.TempDir()
	for _, d := range []string{"empty", "full"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gittest.WriteFiles(t, tmp, map[string]string{"full/x": "x", "file": "f"})
	if err := os.Symlink(filepath.Join(tmp, "empty"), filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path, commit string
		ok                 bool
	}{
		{"new", filepath.Join(tmp, "new"), "HEAD", true},
		{"new with parents", filepath.Join(tmp, "p", "q", "wt"), "main", true},
		{"empty dir", filepath.Join(tmp, "empty"), "HEAD", true},
		{"non-empty dir", filepath.Join(tmp, "full"), "HEAD", false},
		{"file", filepath.Join(tmp, "file"), "HEAD", false},
		{"symlink", filepath.Join(tmp, "link"), "HEAD", false},
		{"bad commit", filepath.Join(tmp, "bad"), "nope", false},
		{"option commit", filepath.Join(tmp, "opt"), "--orphan", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wt, err := r.AddWorktree(ctx, tc.path, tc.commit)
			if !tc.ok {
				if err == nil {
					t.Fatalf("AddWorktree(%s) = %s, want error", tc.path, wt.Dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(wt.Dir, "a.txt")); string(got) != "a\n" {
				t.Errorf("a.txt in worktree = %q", got)
			}
		})
	}
	if got, _ := os.ReadFile(filepath.Join(tmp, "full", "x")); string(got) != "x" {
		t.Errorf("non-empty dir was touched: x = %q", got)
	}
}

func TestRemoveWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := openRepo(t, dir)

	t.Run("already deleted directory is pruned", func(t *testing.T) {
		wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(wt.Dir); err != nil {
			t.Fatal(err)
		}
		if err := r.RemoveWorktree(ctx, wt.Dir); err != nil {
			t.Fatalf("RemoveWorktree of deleted dir = %v, want nil", err)
		}
		if list, err := r.Worktrees(ctx); err != nil || len(list) != 0 {
			t.Errorf("Worktrees() = %q, %v; want none", list, err)
		}
	})

	t.Run("locked and dirty", func(t *testing.T) {
		wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "worktree", "lock", wt.Dir)
		gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "dirty\n", "u.txt": "u", "x/y.txt": "y"})
		if err := r.RemoveWorktree(ctx, wt.Dir); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(wt.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("worktree dir still there: %v", err)
		}
	})

	t.Run("foreign directory refused", func(t *testing.T) {
		foreign := t.TempDir()
		gittest.WriteFiles(t, foreign, map[string]string{"precious": "p"})
		if err := r.RemoveWorktree(ctx, foreign); err == nil {
			t.Error("RemoveWorktree of a foreign directory succeeded")
		}
		if err := r.RemoveWorktree(ctx, dir); err == nil {
			t.Error("RemoveWorktree of the main worktree succeeded")
		}
		if _, err := os.Stat(filepath.Join(foreign, "precious")); err != nil {
			t.Errorf("foreign directory damaged: %v", err)
		}
	})

	t.Run("never existed", func(t *testing.T) {
		if err := r.RemoveWorktree(ctx, filepath.Join(t.TempDir(), "never")); err != nil {
			t.Errorf("RemoveWorktree of a missing path = %v, want nil", err)
		}
	})
}

// TestReplaceObjectsIgnored shows that a refs/replace entry, which repository
// code can create, does not change what a gate reads at a revision.
func TestReplaceObjectsIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"policy.txt": "strict\n"})
	orig := gittest.Git(t, dir, "rev-parse", "HEAD:policy.txt")
	gittest.WriteFiles(t, dir, map[string]string{"fake": "lax\n"})
	fake := gittest.Git(t, dir, "hash-object", "-w", "fake")
	gittest.Git(t, dir, "replace", orig, fake)
	if got := gittest.Git(t, dir, "cat-file", "blob", "HEAD:policy.txt"); got != "lax" {
		t.Fatalf("control: plain git reads %q, want the replacement", got)
	}
	got, err := openRepo(t, dir).ShowFile(ctx, "HEAD", "policy.txt")
	if err != nil || string(got) != "strict\n" {
		t.Errorf("ShowFile = %q, %v; want the original blob", got, err)
	}
}
