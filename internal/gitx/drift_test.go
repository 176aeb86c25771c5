package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/google/go-cmp/cmp"
)

// baselined opens dir and records its baseline.
func baselined(t *testing.T, dir string) *Repo {
	t.Helper()
	r := openRepo(t, dir)
	if err := r.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// runRepositoryCode runs a shell script in dir the way the pipeline runs a
// runner or a build check: holding the clone's gate shared, then marking
// that repository code ran.
func runRepositoryCode(t *testing.T, r *Repo, dir, script string) {
	t.Helper()
	release := r.Shared()
	defer release()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("repository code: %v: %s", err, out)
	}
	r.RepositoryCodeRan()
}

func wantDrift(t *testing.T, err error, added, changed, removed []string) {
	t.Helper()
	var de *DriftError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *DriftError", err)
	}
	if !errors.Is(err, ErrPoisoned) {
		t.Errorf("drift error %v is not ErrPoisoned", err)
	}
	got := [3][]string{de.Added, de.Changed, de.Removed}
	want := [3][]string{added, changed, removed}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("drift [added changed removed] (-want +got):\n%s", d)
	}
}

// TestConfigRewriterPoisons is the runner that rewrites .git/config
// between two git calls: the next guarded call finds the change, and from
// then on every call on the Repo fails before git runs.
func TestConfigRewriterPoisons(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := baselined(t, dir)
	wtPath := filepath.Join(t.TempDir(), "wt")
	wt, err := r.AddWorktree(ctx, wtPath, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "b\n"})
	if _, err := wt.Diff(ctx, nil); err != nil {
		t.Fatalf("Diff before any change: %v", err)
	}

	// The runner edits the shared config through the worktree's gitdir
	// link, as `git config` run by repository code would.
	runRepositoryCode(t, r, wt.Dir, `git config core.pager 'sh -c planted' && git config --unset user.email && git config user.name Mallory`)

	_, err = wt.Diff(ctx, nil)
	wantDrift(t, err, []string{"core.pager"}, []string{"user.name"}, []string{"user.email"})
	if err := r.Poisoned(); !errors.Is(err, ErrPoisoned) {
		t.Errorf("Poisoned() = %v, want ErrPoisoned", err)
	}

	// Later calls fail before running git: with no git on PATH they would
	// otherwise fail differently.
	t.Setenv("PATH", t.TempDir())
	calls := map[string]func() error{
		"RevParse":       func() error { _, err := r.RevParse(ctx, "HEAD"); return err },
		"ShowFile":       func() error { _, err := r.ShowFile(ctx, "HEAD", "a.txt"); return err },
		"Changes":        func() error { _, err := wt.Changes(ctx, false); return err },
		"Commit":         func() error { _, err := wt.Commit(ctx, []string{"a.txt"}, "m", Identity{"B", "b@x"}); return err },
		"UpdateBranch":   func() error { return r.UpdateBranch(ctx, "x", strings.Repeat("a", 40), "") },
		"Push":           func() error { return r.Push(ctx, strings.Repeat("a", 40)+":refs/heads/x") },
		"RemoveWorktree": func() error { return r.RemoveWorktree(ctx, wt.Dir) },
		"CheckDrift":     func() error { return r.CheckDrift(ctx) },
		"Baseline":       func() error { return r.Baseline(ctx) },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrPoisoned) {
			t.Errorf("%s on a poisoned Repo = %v, want ErrPoisoned", name, err)
		}
		var de *DriftError
		if !errors.As(err, &de) {
			t.Errorf("%s: error %v does not carry the drift", name, err)
		}
	}

	// Teardown without git: only the worktree this Repo added.
	foreign := t.TempDir()
	if err := r.DiscardWorktree(ctx, foreign); err == nil {
		t.Error("DiscardWorktree of a foreign directory = nil")
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("foreign directory removed: %v", err)
	}
	if err := r.DiscardWorktree(ctx, wtPath); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("worktree still there after DiscardWorktree: %v", err)
	}
	if err := r.DiscardWorktree(ctx, wtPath); err == nil {
		t.Error("second DiscardWorktree = nil; it was forgotten, so want refusal")
	}
}

// TestDriftCheckPoints: which calls check, and when.
func TestDriftCheckPoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plant := func(t *testing.T, dir string) {
		gittest.Git(t, dir, "config", "core.editor", "planted")
	}

	t.Run("no check is due without repository code", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, nil)
		r := baselined(t, dir)
		plant(t, dir) // not through Shared or RepositoryCodeRan
		if _, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD"); err != nil {
			t.Fatalf("AddWorktree with no check due = %v", err)
		}
		if err := r.CheckDrift(ctx); err == nil {
			t.Fatal("explicit CheckDrift missed the change")
		}
	})

	t.Run("RepositoryCodeRan makes the next guarded call check", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, nil)
		r := baselined(t, dir)
		plant(t, dir)
		r.RepositoryCodeRan()
		if _, err := r.RevParse(ctx, "HEAD"); err != nil {
			t.Errorf("RevParse is not guarded, want it to run: %v", err)
		}
		_, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
		wantDrift(t, err, []string{"core.editor"}, nil, nil)
	})

	t.Run("Shared alone makes a check due", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, nil)
		r := baselined(t, dir)
		release := r.Shared()
		plant(t, dir)
		release()
		wantDrift(t, r.Prune(ctx), []string{"core.editor"}, nil, nil)
	})

	t.Run("a clean check clears the flag", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, nil)
		r := baselined(t, dir)
		r.RepositoryCodeRan()
		if err := r.CheckDrift(ctx); err != nil {
			t.Fatal(err)
		}
		plant(t, dir)
		if err := r.Prune(ctx); err != nil {
			t.Errorf("Prune after a clean check, no code since = %v", err)
		}
	})

	t.Run("no baseline: CheckDrift refuses, guarded calls run", func(t *testing.T) {
		t.Parallel()
		r := openRepo(t, gittest.NewRepo(t, nil))
		if err := r.CheckDrift(ctx); !errors.Is(err, ErrNoBaseline) {
			t.Errorf("CheckDrift = %v, want ErrNoBaseline", err)
		}
		r.RepositoryCodeRan()
		if err := r.Prune(ctx); err != nil {
			t.Errorf("Prune = %v", err)
		}
		if err := r.Push(ctx, strings.Repeat("a", 40)+":refs/heads/x"); !errors.Is(err, ErrNoBaseline) {
			t.Errorf("Push = %v, want ErrNoBaseline", err)
		}
	})

	t.Run("baseline stays fixed", func(t *testing.T) {
		t.Parallel()
		r := baselined(t, gittest.NewRepo(t, nil))
		if err := r.Baseline(ctx); err == nil {
			t.Error("second Baseline = nil")
		}
	})

	t.Run("unlistable config fails closed", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, nil)
		r := baselined(t, dir)
		f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("[core\n\tbroken = \"\n") // git cannot parse this
		f.Close()
		err = r.CheckDrift(ctx)
		var de *DriftError
		if !errors.Is(err, ErrPoisoned) || errors.As(err, &de) {
			t.Fatalf("CheckDrift on a broken config = %v, want ErrPoisoned without a DriftError", err)
		}
		if _, err := r.RevParse(ctx, "HEAD"); !errors.Is(err, ErrPoisoned) {
			t.Errorf("RevParse after = %v, want ErrPoisoned", err)
		}
	})
}

// TestIncludeDrift: an include.path the baseline already had, whose file
// the agent writes afterwards, and an include.path planted afterwards.
func TestIncludeDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("file written after the baseline", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
		later := filepath.Join(t.TempDir(), "later.cfg")
		gittest.Git(t, dir, "config", "include.path", later) // missing for now: git skips it
		r := baselined(t, dir)
		wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		runRepositoryCode(t, r, wt.Dir, "printf '[credential]\\n\\thelper = /planted\\n' > '"+later+"'")
		_, err = wt.Diff(ctx, nil)
		wantDrift(t, err, []string{"credential.helper"}, nil, nil)
	})

	t.Run("include.path planted after the baseline", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
		r := baselined(t, dir)
		wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		runRepositoryCode(t, r, wt.Dir, "printf '[core]\\n\\tpager = planted\\n' > ../inc.cfg && git config include.path \"$PWD/../inc.cfg\"")
		_, err = wt.Commit(ctx, []string{"a.txt"}, "m", Identity{"B", "b@example.com"})
		wantDrift(t, err, []string{"include.path", "core.pager"}, nil, nil)
	})
}

// TestWorktreeConfigDrift: with extensions.worktreeConfig on, a linked
// worktree reads its own config.worktree, which a listing from Top never
// shows. The check lists from each worktree the Repo added.
func TestWorktreeConfigDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, dir, "config", "core.repositoryFormatVersion", "1")
	gittest.Git(t, dir, "config", "extensions.worktreeConfig", "true")
	r := baselined(t, dir)
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	runRepositoryCode(t, r, wt.Dir, "git config --worktree core.pager planted")
	if top := gittest.Git(t, dir, "config", "--list"); strings.Contains(top, "core.pager") {
		t.Fatalf("control: Top sees the worktree's config too, so this proves nothing:\n%s", top)
	}
	_, err = wt.Diff(ctx, nil)
	wantDrift(t, err, []string{"core.pager"}, nil, nil)
	var de *DriftError
	if errors.As(err, &de) && de.Dir != wt.Dir {
		t.Errorf("drift found in %s, want %s", de.Dir, wt.Dir)
	}
}

// TestGate: repository code holds the gate shared; a guarded call waits for
// it; a waiting guarded call keeps new repository code out; a wait can be
// cancelled.
func TestGate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const settle = 200 * time.Millisecond
	dir := gittest.NewRepo(t, nil)
	r := baselined(t, dir)

	release := r.Shared()
	writer := make(chan error, 1)
	go func() { writer <- r.CheckDrift(ctx) }()
	select {
	case err := <-writer:
		t.Fatalf("CheckDrift ran while repository code held the gate: %v", err)
	case <-time.After(settle):
	}
	reader := make(chan struct{})
	go func() {
		rel := r.Shared()
		close(reader)
		rel()
	}()
	select {
	case <-reader:
		t.Fatal("new repository code got the gate ahead of a waiting check")
	case <-time.After(settle):
	}
	// While the check waits, the code still running changes the config.
	gittest.Git(t, dir, "config", "core.editor", "planted")
	release()
	wantDrift(t, <-writer, []string{"core.editor"}, nil, nil)
	<-reader

	r2 := baselined(t, gittest.NewRepo(t, nil))
	release2 := r2.Shared()
	cctx, cancel := context.WithTimeout(ctx, settle)
	defer cancel()
	if err := r2.CheckDrift(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CheckDrift with the gate held and a deadline = %v, want DeadlineExceeded", err)
	}
	release2()
	release2() // a second release is a no-op
	if err := r2.CheckDrift(ctx); err != nil {
		t.Errorf("CheckDrift after the abandoned wait = %v; the gate was not given back", err)
	}
}

func TestDiffConfig(t *testing.T) {
	e := func(scope, key, value string) configEntry {
		return configEntry{Scope: scope, Key: key, Value: value, HasValue: true}
	}
	base := []configEntry{
		e("local", "core.bare", "false"),
		e("local", "remote.origin.url", "https://github.com/o/r"),
		e("local", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
		e("local", "lfs.https://github.com/o/r.git/info/lfs.access", "basic"),
	}
	tests := []struct {
		name                    string
		got                     []configEntry
		added, changed, removed []string
	}{
		{"same", base, nil, nil, nil},
		{"lfs access and locksverify added", append(slices.Clone(base),
			e("local", "lfs.https://github.com/o/other.git/info/lfs.access", "basic"),
			e("local", "lfs.https://github.com/o/r.git/info/lfs.locksverify", "false")), nil, nil, nil},
		{"lfs key already in the baseline changed", []configEntry{base[0], base[1], base[2],
			e("local", "lfs.https://github.com/o/r.git/info/lfs.access", "none")},
			nil, []string{"lfs.https://github.com/o/r.git/info/lfs.access"}, nil},
		{"filter.lfs is not git-lfs's own write", append(slices.Clone(base), e("local", "filter.lfs.clean", "sh -c planted")),
			[]string{"filter.lfs.clean"}, nil, nil},
		{"other lfs keys are not either", append(slices.Clone(base), e("local", "lfs.url", "https://evil"), e("local", "lfs.https://x.standalonetransferagent", "evil")),
			[]string{"lfs.url", "lfs.https://x.standalonetransferagent"}, nil, nil},
		{"second value for a key", append(slices.Clone(base), e("local", "remote.origin.fetch", "+refs/pull/*:refs/pr/*")),
			nil, []string{"remote.origin.fetch"}, nil},
		{"same value moved to worktree scope", []configEntry{base[0], base[1], e("worktree", "remote.origin.fetch", base[2].Value), base[3]},
			nil, []string{"remote.origin.fetch"}, nil},
		{"value to no value", []configEntry{{Scope: "local", Key: "core.bare"}, base[1], base[2], base[3]},
			nil, []string{"core.bare"}, nil},
		{"removed", base[1:], nil, nil, []string{"core.bare"}},
		{"userinfo in a key is redacted", append(slices.Clone(base), e("local", "url.https://me:ghp_secret@github.com/.insteadof", "https://github.com/")),
			[]string{"url.https://REDACTED@github.com/.insteadof"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := diffConfig(base, tc.got)
			if tc.added == nil && tc.changed == nil && tc.removed == nil {
				if d != nil {
					t.Fatalf("diffConfig = %v, want no drift", d)
				}
				return
			}
			if d == nil {
				t.Fatal("diffConfig = nil, want drift")
			}
			if diff := cmp.Diff([3][]string{tc.added, tc.changed, tc.removed}, [3][]string{d.Added, d.Changed, d.Removed}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if strings.Contains(d.Error(), "ghp_secret") || strings.Contains(d.Error(), "sh -c planted") {
				t.Errorf("drift message leaks a value: %s", d.Error())
			}
		})
	}
}
