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

// TestUnpinned: which listed entries need a pin, and which pins accept them.
func TestUnpinned(t *testing.T) {
	v := func(key, value string) configEntry { return configEntry{Key: key, HasValue: true, Value: value} }
	lfs := Pin{"filter.lfs.process", "git-lfs filter-process"}
	inc := Pin{"include.path", "../gitconfig"}
	for _, tc := range []struct {
		name    string
		entries []configEntry
		pins    []Pin
		want    []string
	}{
		{"no program keys", []configEntry{v("user.name", "x"), v("core.bare", "false")}, nil, nil},
		{"pinned program", []configEntry{v("filter.lfs.process", "git-lfs filter-process")}, []Pin{lfs}, nil},
		{"pinned key, other value", []configEntry{v("filter.lfs.process", "sh -c evil")}, []Pin{lfs}, []string{"filter.lfs.process"}},
		{"value is not a prefix match", []configEntry{v("filter.lfs.process", "git-lfs filter-process; id")}, []Pin{lfs}, []string{"filter.lfs.process"}},
		{"unpinned program", []configEntry{v("diff.x.textconv", "cat")}, []Pin{lfs}, []string{"diff.x.textconv"}},
		{"key without a value", []configEntry{{Key: "filter.lfs.process"}}, []Pin{lfs, {"filter.lfs.process", ""}}, []string{"filter.lfs.process"}},
		{"empty value pinned", []configEntry{v("core.pager", "")}, []Pin{{"core.pager", ""}}, nil},
		{"one of two values unpinned", []configEntry{v("credential.helper", "a"), v("credential.helper", "b")}, []Pin{{"credential.helper", "a"}}, []string{"credential.helper"}},
		{"both values pinned", []configEntry{v("credential.helper", "a"), v("credential.helper", "b")}, []Pin{{"credential.helper", "b"}, {"credential.helper", "a"}}, nil},
		{"include unpinned", []configEntry{v("include.path", "../gitconfig")}, nil, []string{"include.path"}},
		{"include pinned", []configEntry{v("include.path", "../gitconfig")}, []Pin{inc}, nil},
		{"include pinned to another file", []configEntry{v("include.path", "../other")}, []Pin{inc}, []string{"include.path"}},
		{"includeIf unpinned", []configEntry{v("includeif.gitdir:/x/.path", "/y")}, nil, []string{"includeif.gitdir:/x/.path"}},
		{"includeIf pinned", []configEntry{v("includeif.gitdir:/x/.path", "/y")}, []Pin{{"includeif.gitdir:/x/.path", "/y"}}, nil},
		{"shell alias", []configEntry{v("alias.st", "!sh -c id")}, nil, []string{"alias.st"}},
		{"plain alias", []configEntry{v("alias.co", "checkout")}, nil, nil},
		{"key of another subsection", []configEntry{v("filter.LFS.process", "git-lfs filter-process")}, []Pin{lfs}, []string{"filter.LFS.process"}},
		{"secret in a key is redacted", []configEntry{v("credential.https://u:tok@h/.helper", "x")}, nil, []string{"credential.https://REDACTED@h/.helper"}},
		{"each key once, sorted", []configEntry{v("pager.log", "a"), v("core.pager", "a"), v("pager.log", "b")}, nil, []string{"core.pager", "pager.log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, unpinned(tc.entries, tc.pins)); d != "" {
				t.Errorf("unpinned (-want +got):\n%s", d)
			}
		})
	}
}

// includeRepo is a clone whose .git/config includes the tracked file
// gitconfig, which names a filter: the layout a project uses to share its
// git settings.
func includeRepo(t *testing.T, clean string) string {
	t.Helper()
	dir := gittest.NewRepo(t, map[string]string{
		"a.txt":     "a\n",
		"gitconfig": "[filter \"x\"]\n\tclean = " + clean + "\n",
	})
	gittest.Git(t, dir, "config", "include.path", "../gitconfig")
	return dir
}

// TestPin: the pins are checked against the clone's config at start, and a
// pinned value that changes afterwards is drift.
func TestPin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pins := []Pin{{"include.path", "../gitconfig"}, {"filter.x.clean", "cat"}}

	t.Run("include and program pinned", func(t *testing.T) {
		t.Parallel()
		r := baselined(t, includeRepo(t, "cat"))
		if err := r.Pin(pins); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("include not pinned", func(t *testing.T) {
		t.Parallel()
		r := baselined(t, includeRepo(t, "cat"))
		wantUnpinned(t, r.Pin(pins[1:]), "include.path")
	})

	// The tracked file is rewritten by a later commit: the key is the same,
	// the command is not. The next start refuses the clone.
	t.Run("tracked include rewritten by a commit", func(t *testing.T) {
		t.Parallel()
		dir := includeRepo(t, "cat")
		if err := baselined(t, dir).Pin(pins); err != nil {
			t.Fatalf("control: the first start: %v", err)
		}
		gittest.WriteFiles(t, dir, map[string]string{"gitconfig": "[filter \"x\"]\n\tclean = sh -c 'cat ~/.ssh/id_ed25519'\n"})
		gittest.Git(t, dir, "commit", "--quiet", "-am", "share settings")
		wantUnpinned(t, baselined(t, dir).Pin(pins), "filter.x.clean")
	})

	// The same file rewritten by repository code during a run: the drift
	// check before the next guarded call sees the new value.
	t.Run("pinned value rewritten by repository code", func(t *testing.T) {
		t.Parallel()
		dir := includeRepo(t, "cat")
		r := baselined(t, dir)
		if err := r.Pin(pins); err != nil {
			t.Fatal(err)
		}
		runRepositoryCode(t, r, dir, "printf '[filter \"x\"]\\n\\tclean = sh -c id\\n' > gitconfig")
		_, err := r.Checkout(ctx, filepath.Join(t.TempDir(), "co"), filepath.Join(t.TempDir(), "index"), "HEAD")
		wantDrift(t, err, nil, []string{"filter.x.clean"}, nil)
	})

	t.Run("pinned local value rewritten by repository code", func(t *testing.T) {
		t.Parallel()
		dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
		gittest.Git(t, dir, "config", "filter.lfs.process", "git-lfs filter-process")
		r := baselined(t, dir)
		if err := r.Pin([]Pin{{"filter.lfs.process", "git-lfs filter-process"}}); err != nil {
			t.Fatal(err)
		}
		runRepositoryCode(t, r, dir, "git config filter.lfs.process 'sh -c id'")
		wantDrift(t, r.CheckDrift(ctx), nil, []string{"filter.lfs.process"}, nil)
	})

	t.Run("before the baseline", func(t *testing.T) {
		t.Parallel()
		r := openRepo(t, gittest.NewRepo(t, nil))
		if err := r.Pin(nil); !errors.Is(err, ErrNoBaseline) {
			t.Errorf("Pin before Baseline = %v, want ErrNoBaseline", err)
		}
	})
}

// TestPinWorktree: an includeIf that matches only a linked worktree brings
// in a program Top never shows; adding that worktree poisons the Repo.
func TestPinWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	inc := filepath.Join(t.TempDir(), "wt.cfg")
	if err := os.WriteFile(inc, []byte("[core]\n\tpager = sh -c id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const cond = "includeIf.gitdir:**/worktrees/**.path"
	gittest.Git(t, dir, "config", cond, inc)
	r := baselined(t, dir)
	if err := r.Pin([]Pin{{strings.ToLower("includeIf") + ".gitdir:**/worktrees/**.path", inc}}); err != nil {
		t.Fatalf("Top shows no program, so the pins hold there: %v", err)
	}
	_, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
	wantUnpinned(t, err, "core.pager")
	if !errors.Is(err, ErrPoisoned) {
		t.Errorf("err = %v, want ErrPoisoned too", err)
	}
}

func wantUnpinned(t *testing.T, err error, keys ...string) {
	t.Helper()
	var ue *UnpinnedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an *UnpinnedError", err)
	}
	if d := cmp.Diff(keys, ue.Keys); d != "" {
		t.Errorf("unpinned keys (-want +got):\n%s", d)
	}
}

// TestPinnedProgramsDoNotRun: a clone whose config names a program for
// every key that can name one, each pinned, and attributes that put every
// file under that filter, diff and merge driver. Nothing fixrail's own git
// calls do — checkouts, status, add, commit, diffs, trees, a push over
// file:// — runs any of them. The controls show plain git running the
// filter on checkout and the receive-pack on push.
func TestPinnedProgramsDoNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	script, file := canary(t)
	dir := gittest.NewRepo(t, map[string]string{
		"a.txt":          "one\n",
		".gitattributes": "* filter=x diff=x merge=x\n",
	})
	// A file:// URL: git takes remote.<url>.* for it (not for a bare path).
	url := "file://" + gittest.NewBare(t)
	gittest.Git(t, dir, "remote", "add", "origin", url)
	keys := []string{
		"filter.x.clean", "filter.x.smudge", "filter.x.process",
		"diff.x.command", "diff.x.textconv", "merge.x.driver",
		"core.sshCommand", "core.gitProxy", "core.fsmonitor", "core.hooksPath",
		"core.askPass", "core.editor", "core.pager", "sequence.editor",
		"gpg.program", "gpg.ssh.program", "credential.helper", "credential." + url + ".helper",
		"uploadpack.packObjectsHook", "remote." + url + ".receivepack", "remote." + url + ".uploadpack",
		"core.alternateRefsCommand", "pager.status", "pager.diff", "alias.st",
	}
	var pins []Pin
	for _, k := range keys {
		value := script
		if strings.HasPrefix(k, "alias.") {
			value = "!" + script
		}
		gittest.Git(t, dir, "config", k, value)
		pins = append(pins, Pin{canonicalKeyForTest(k), value})
	}
	gittest.Git(t, dir, "config", "filter.x.required", "true")
	gittest.Git(t, dir, "config", "diff.external", script)
	gittest.Git(t, dir, "config", "commit.gpgSign", "true")
	r := baselined(t, dir)
	if err := r.Pin(append(pins, Pin{"filter.x.required", "true"})); err != nil {
		t.Fatalf("every key pinned: %v", err)
	}
	if got := unpinned(r.base[r.top], r.pins); got != nil {
		t.Fatalf("keys the test meant to pin are not: %q", got)
	}

	tree, err := r.Checkout(ctx, filepath.Join(t.TempDir(), "co"), filepath.Join(t.TempDir(), "index"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, tree.Dir, map[string]string{"a.txt": "two\n", "b.txt": "new\n"})
	if _, err := tree.Changed(ctx); err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "two\n", "b.txt": "new\n"})
	if _, err := wt.Changes(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Diff(ctx, nil); err != nil {
		t.Fatal(err)
	}
	sha, err := wt.Commit(ctx, []string{"a.txt", "b.txt"}, "fix", Identity{"Bot", "bot@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	if _, err := r.DiffTrees(ctx, base, sha); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ShowFile(ctx, sha, "a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, sha+":refs/heads/fix"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt.Dir); err != nil {
		t.Fatal(err)
	}
	if ran(file) {
		b, _ := os.ReadFile(file)
		t.Fatalf("a program the clone's config names ran through gitx:\n%s", b)
	}

	// Controls: the same config is live for plain git.
	// (The planted filter speaks no filter protocol, so git fails after
	// running it: whether it ran is what counts.)
	gittest.Run(t, dir, "checkout", "--quiet", "--", "a.txt")
	if !ran(file) {
		t.Fatal("control: plain git checkout did not run the filter, so this proves nothing")
	}
	os.Remove(file)
	gittest.Run(t, dir, "push", "--quiet", url, sha+":refs/heads/control")
	if !ran(file) {
		t.Fatal("control: plain git push did not run remote.<url>.receivepack, so this proves nothing")
	}
}

// canonicalKeyForTest lower-cases a key's section and variable name, as
// git config --list prints them.
func canonicalKeyForTest(k string) string {
	first, last := strings.IndexByte(k, '.'), strings.LastIndexByte(k, '.')
	return strings.ToLower(k[:first]) + k[first:last] + strings.ToLower(k[last:])
}

// TestGitProxyNotRun: a push over git:// with a core.gitProxy in the
// clone's config (pinned) does not run the proxy; plain git does.
func TestGitProxyNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	script, file := canary(t)
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	const url = "git://fixrail-test.invalid/r.git"
	gittest.Git(t, dir, "remote", "add", "origin", url)
	gittest.Git(t, dir, "config", "core.gitProxy", script)
	r := baselined(t, dir)
	if err := r.Pin([]Pin{{"core.gitproxy", script}}); err != nil {
		t.Fatal(err)
	}
	sha := gittest.Git(t, dir, "rev-parse", "HEAD")
	if err := r.Push(ctx, sha+":refs/heads/fix"); err == nil {
		t.Fatal("a push to an unresolvable host succeeded")
	}
	if ran(file) {
		t.Fatal("the clone's core.gitProxy ran through gitx")
	}
	gittest.Run(t, dir, "push", url, sha+":refs/heads/fix")
	if !ran(file) {
		t.Fatal("control: plain git push did not run core.gitProxy, so this proves nothing")
	}
}
