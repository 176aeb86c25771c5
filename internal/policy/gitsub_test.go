package policy

import (
	"path/filepath"
	"testing"
)

// TestGitSubcommandsAreKnown guards the subcommand table against an entry
// gitArgs can never reach: it dispatches only after the name passed
// gitCommands, so a handler for a name missing there would be dead while the
// command it was written for is reported as unknown instead.
func TestGitSubcommandsAreKnown(t *testing.T) {
	gitSubcommandsOnce.Do(initGitSubcommands)
	if len(gitSubcommands) == 0 {
		t.Fatal("gitSubcommands is empty: initGitSubcommands did not fill it")
	}
	for name := range gitSubcommands {
		if !gitCommands.has(name) {
			t.Errorf("gitSubcommands has %q, which gitCommands does not list", name)
		}
	}
}

// TestGitCheckoutTree: a directory restored from a commit lands a tree the
// hook cannot read; where that directory is one protected names sit in,
// the tree may hold them.
func TestGitCheckoutTree(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "checkout-claude", in: "git checkout other -- .claude", want: "self-mod? discard"},
		{id: "restore-claude", in: "git restore --source other .claude", want: "self-mod? discard"},
		{id: "restore-nested", in: "git restore --source other pkg/.claude", want: "self-mod? discard"},
		{id: "checkout-file", in: "git checkout other -- .claude/settings.json", want: "self-mod discard"},
		{id: "checkout-src", in: "git checkout other -- src", want: "discard"},
		{id: "restore-staged", in: "git restore --staged .claude", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestGitAm: git am writes what its mailbox's patches name, as git apply
// does.
func TestGitAm(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "0001-settings.patch"), "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n"+
		"diff --git a/.claude/settings.json b/.claude/settings.json\nnew file mode 100644\n--- /dev/null\n+++ b/.claude/settings.json\n@@ -0,0 +1 @@\n+{}\n")
	write(t, filepath.Join(repo, "0001-src.patch"), "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] y\n\n---\n"+
		"diff --git a/src/a.go b/src/a.go\n--- a/src/a.go\n+++ b/src/a.go\n@@ -1 +1 @@\n-a\n+b\n")
	for _, c := range []tc{
		{id: "am", in: "git am 0001-settings.patch", want: "self-mod"},
		{id: "am-3way", in: "git am -3 --signoff 0001-settings.patch", want: "self-mod"},
		{id: "am-stdin", in: "git am < 0001-settings.patch", want: "self-mod"},
		{id: "am-src", in: "git am 0001-src.patch", want: ""},
		{id: "am-continue", in: "git am --continue", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
