package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fixrail/fixrail/internal/fsname"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// zone is a protected absolute path: a directory and everything below it, or
// a single file.
type zone struct {
	rule  Rule
	what  string
	comps []string // path components, folded (splitPath)
	file  bool     // only the path itself, not what lies below
	path  string   // as given, for resolving later (secretList)
}

// nameRule protects a run of path components wherever it occurs, for files
// that live in every project (.claude/settings.json, .git/hooks/...).
type nameRule struct {
	rule  Rule
	what  string
	elems []nameElem
	under bool // also everything below the run
}

type nameElem struct {
	pat string // glob on a lower-cased component
}

// zoneResolved is the zone path p as the file system resolves it, found
// cheaply: each zone resolved on its own cost a lookup per zone, some
// hundred per call that writes. The home directory is resolved once and
// a zone below it moved onto it; a zone whose top entry in the home
// directory is a symbolic link (one listing of the home directory says
// which) is resolved whole, and so is one whose entry in ~/.config is (a
// second listing: most zones two deep live there, and a dotfile manager
// such as GNU stow links its entries one by one, ~/.config/nvim to
// ~/dotfiles/nvim); so is $FIXRAIL_HOME's. A link deeper still, or in
// another directory of the home (~/.local/bin), is not followed here.
func (a *analyzer) zoneResolved(p string) string {
	if h := a.home; h != "" && filepath.IsAbs(h) {
		h = filepath.Clean(h)
		if rel, ok := strings.CutPrefix(p, h); ok && (rel == "" || rel[0] == filepath.Separator) {
			parts := strings.SplitN(strings.TrimPrefix(rel, string(filepath.Separator)), string(filepath.Separator), 3)
			if links := a.dirLinks(h); parts[0] != "" && (links[parts[0]] || links[tooMany]) {
				return a.resolve(p)
			}
			if len(parts) > 1 && parts[0] == ".config" {
				if links := a.dirLinks(filepath.Join(h, ".config")); links[parts[1]] || links[tooMany] {
					return a.resolve(p)
				}
			}
			return a.resolve(h) + rel
		}
	}
	if fx := a.fxHome; fx != "" && (p == fx || strings.HasPrefix(p, fx+string(filepath.Separator))) {
		return a.resolve(p)
	}
	return p
}

// tooMany marks a directory too large to list whole; no file name holds a
// NUL.
const tooMany = "\x00"

// dirLinks are the entries of dir that are symbolic links (all of them,
// when it is too large to list), read once per call.
func (a *analyzer) dirLinks(dir string) map[string]bool {
	if m, ok := a.linkedIn[dir]; ok {
		return m
	}
	m := map[string]bool{}
	if a.linkedIn == nil {
		a.linkedIn = map[string]map[string]bool{}
	}
	a.linkedIn[dir] = m
	// A blocking descriptor from syscall.Open: os.OpenFile would set up
	// Go's poller (an epoll instance, an eventfd) for one listing.
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return m
	}
	f := os.NewFile(uintptr(fd), dir)
	ents, _ := f.ReadDir(maxDirEntries + 1)
	f.Close()
	if len(ents) > maxDirEntries {
		m[tooMany] = true // not all listed: any entry may be one
	}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			m[e.Name()] = true
		}
	}
	return m
}

// secretList returns what no call may read, each also at the path the
// file system resolves it to (a $FIXRAIL_HOME below a linked directory),
// resolved on first use.
func (a *analyzer) secretList() []zone {
	if !a.secretsOK {
		a.secretsOK = true
		for _, z := range a.secretList() {
			if r := a.resolve(z.path); r != z.path {
				z.comps, z.path = splitPath(r), r
				a.secrets = append(a.secrets, z)
			}
		}
	}
	return a.secrets
}

// zoneList returns the protected zones, built on first use: resolving the
// fixrail binaries touches the file system, and most calls write nothing.
func (a *analyzer) zoneList() []zone {
	if !a.zonesOK {
		a.zonesOK = true
		a.buildZones()
	}
	return a.zones
}

func (a *analyzer) buildZones() {
	add := func(z zone, p string) {
		z.comps = splitPath(p)
		a.zones = append(a.zones, z)
		// The same file by the path the file system resolves it to: a
		// home below a linked /home, a dotfile a manager links elsewhere
		// (~/.bashrc to ~/dotfiles/bashrc), $FIXRAIL_HOME below a link.
		// A command's path is judged as written and resolved, so the zone
		// is too.
		if filepath.IsAbs(p) {
			if r := a.zoneResolved(p); r != p {
				z.comps = splitPath(r)
				a.zones = append(a.zones, z)
			}
		}
	}
	dir := func(r Rule, what string, p ...string) {
		add(zone{rule: r, what: what}, filepath.Join(p...))
	}
	file := func(r Rule, what string, p ...string) {
		add(zone{rule: r, what: what, file: true}, filepath.Join(p...))
	}
	if h := a.home; h != "" {
		dir(SelfMod, "agent settings", h, ".claude")
		file(SelfMod, "agent settings", h, ".claude.json")
		dir(SelfMod, "agent settings", h, ".codex")
		dir(SelfMod, "agent settings", h, ".gemini")
		file(SelfMod, "global git config", h, ".gitconfig")
		file(SelfMod, "global git config", h, ".config", "git", "config")
		for _, f := range []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
			".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
			".tcshrc", ".xprofile", ".xsessionrc", ".xinitrc", ".xsession", ".pam_environment"} {
			file(ScopeEscalation, "shell start-up file", h, f)
		}
		file(ScopeEscalation, "shell start-up file", h, ".bash_aliases") // Debian's and Ubuntu's .bashrc source it
		dir(ScopeEscalation, "shell start-up file", h, ".bashrc.d")      // Fedora's .bashrc sources it
		// What the common zsh setups source from .zshrc: oh-my-zsh every
		// *.zsh in its custom directory, powerlevel10k's configuration,
		// and a ZDOTDIR kept in ~/.config/zsh. A starship prompt runs its
		// custom modules' commands on every prompt.
		dir(ScopeEscalation, "shell start-up file", h, ".oh-my-zsh", "custom")
		file(ScopeEscalation, "shell start-up file", h, ".p10k.zsh")
		dir(ScopeEscalation, "shell start-up file", h, ".config", "zsh")
		file(ScopeEscalation, "prompt configuration that runs commands", h, ".config", "starship.toml")
		// What an editor or terminal multiplexer runs when it starts, as a
		// shell runs its rc files (:! and autocommands, run-shell).
		for _, f := range []string{".vimrc", ".exrc", ".gvimrc", ".tmux.conf", ".screenrc", ".emacs"} {
			file(ScopeEscalation, "editor start-up file", h, f)
		}
		// tmux's plugin manager runs each plugin's script when tmux starts.
		for _, d := range [][]string{{".vim"}, {".config", "nvim"}, {".emacs.d"}, {".config", "tmux"}, {".tmux", "plugins"}} {
			dir(ScopeEscalation, "editor start-up file", append([]string{h}, d...)...)
		}
		// What a debugger, database client or language shell runs when it
		// starts: gdb/lldb commands (shell included), psql's \! and
		// sqlite3's .shell, mysql's pager, Ruby/R/Julia/Python code, the
		// direnv library every .envrc runs with, PowerShell profiles,
		// less's key bindings and environment (LESSOPEN runs a command).
		for _, f := range [][]string{{".gdbinit"}, {".lldbinit"}, {".psqlrc"}, {".sqliterc"}, {".my.cnf"}, {".irbrc"},
			{".pryrc"}, {".Rprofile"}, {".direnvrc"}, {".lesskey"}, {".config", "lesskey"}} {
			file(ScopeEscalation, "tool start-up file", append([]string{h}, f...)...)
		}
		for _, d := range [][]string{{".config", "gdb"}, {".julia", "config"}, {".ipython"}, {".jupyter"},
			{".config", "direnv"}, {".config", "powershell"}} {
			dir(ScopeEscalation, "tool start-up file", append([]string{h}, d...)...)
		}
		// Tool configuration that names a command the tool runs on every
		// use: the AWS CLI's credential_process, kubeconfig's exec
		// credential plugins, Docker's credential helpers, gpg-agent's
		// pinentry-program.
		for _, f := range [][]string{{".aws", "config"}, {".kube", "config"}, {".docker", "config.json"}, {".gnupg", "gpg-agent.conf"},
			{".hgrc"}, {".config", "hg", "hgrc"}} { // Mercurial's [hooks] run commands
			file(ScopeEscalation, "configuration that runs commands", append([]string{h}, f...)...)
		}
		dir(ScopeEscalation, "ssh login configuration", h, ".ssh")
		dir(ScopeEscalation, "user services", h, ".config", "systemd")
		dir(ScopeEscalation, "autostart entries", h, ".config", "autostart")
		dir(ScopeEscalation, "shell start-up file", h, ".config", "fish")
		dir(ScopeEscalation, "session environment", h, ".config", "environment.d")
		dir(ScopeEscalation, "launch agents", h, "Library", "LaunchAgents")
		dir(ScopeEscalation, "a directory on PATH", h, ".local", "bin")
		// Package managers' user configuration (pkgconfig.go).
		for _, f := range [][]string{{".npmrc"}, {".yarnrc"}, {".yarnrc.yml"}, {".pydistutils.cfg"}, {".pypirc"}, {".gemrc"}, {".condarc"},
			{".bunfig.toml"}, {".cargo", "config"}, {".cargo", "config.toml"}, {".config", "go", "env"}, {".m2", "settings.xml"},
			{".gradle", "init.gradle"}, {".gradle", "init.gradle.kts"}, {".gradle", "gradle.properties"}} {
			file(ScopeEscalation, "package manager configuration", append([]string{h}, f...)...)
		}
		for _, d := range [][]string{{".config", "pip"}, {".pip"}, {".config", "uv"}, {".config", "pnpm"}, {".gradle", "init.d"}} {
			dir(ScopeEscalation, "package manager configuration", append([]string{h}, d...)...)
		}
		// What every later curl and wget reads first (fetchconfig.go).
		for _, f := range [][]string{{".curlrc"}, {".config", "curlrc"}, {".wgetrc"}} {
			file(ScopeEscalation, "downloader configuration", append([]string{h}, f...)...)
		}
	}
	dir(SelfMod, "managed agent settings", "/etc/claude-code")
	dir(SelfMod, "managed agent settings", "/Library/Application Support/ClaudeCode")
	dir(SelfMod, "managed agent settings", "/etc/codex")
	dir(SelfMod, "managed agent settings", "/etc/gemini-cli")
	if a.fxHome != "" {
		dir(SelfMod, "fixrail's policy, keys and receipts", a.fxHome)
	}
	for _, z := range a.secretList() {
		if z.file {
			a.zones = append(a.zones, z) // a signing key: replaced, it signs for whoever made it
		}
	}
	for _, b := range a.env.FixrailBinaries {
		if !filepath.IsAbs(b) {
			continue
		}
		file(SelfMod, "the fixrail binary", b)
	}
	a.hooksPathZones(dir)
	for _, d := range []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/System",
		"/var/spool/cron", "/Library/LaunchAgents", "/Library/LaunchDaemons"} {
		dir(ScopeEscalation, "system files", d)
	}

	el := func(pat string) nameElem { return nameElem{pat: pat} }
	a.names = []nameRule{
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".claude"), el("settings*.json")}},
		{rule: SelfMod, what: "project hook scripts", elems: []nameElem{el(".claude"), el("hooks")}, under: true},
		// A subagent's, a skill's or a command's frontmatter registers
		// hooks as settings do (a subagent's also its permissionMode and
		// MCP servers); Claude Code loads .claude/commands as skills.
		{rule: SelfMod, what: "project subagents, whose frontmatter can register hooks", elems: []nameElem{el(".claude"), el("agents")}, under: true},
		{rule: SelfMod, what: "project skills, whose frontmatter can register hooks", elems: []nameElem{el(".claude"), el("skills")}, under: true},
		{rule: SelfMod, what: "project commands, whose frontmatter can register hooks", elems: []nameElem{el(".claude"), el("commands")}, under: true},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".codex")}, under: true},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".gemini")}, under: true},
		{rule: SelfMod, what: "project MCP servers", elems: []nameElem{el(".mcp.json")}},
		{rule: SelfMod, what: "agent hooks", elems: []nameElem{el(".cursor"), el("hooks.json")}},
		// Other agents' project settings: what they may run without
		// asking, the MCP servers and plugins they start, the commands
		// they run after each edit (aider's lint-cmd; test-cmd with
		// auto-test), their hooks.
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el("opencode.json")}},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el("opencode.jsonc")}},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".opencode")}, under: true},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".aider.conf.yml")}},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".continue")}, under: true},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".kiro"), el("settings")}, under: true},
		{rule: SelfMod, what: "agent hooks", elems: []nameElem{el(".kiro"), el("hooks")}, under: true},
		{rule: SelfMod, what: "project agent settings", elems: []nameElem{el(".kiro"), el("agents")}, under: true},
		{rule: SelfMod, what: "project MCP servers", elems: []nameElem{el(".roo"), el("mcp.json")}},
		{rule: ScopeEscalation, what: "git hooks", elems: []nameElem{el(".git"), el("hooks")}, under: true},
		{rule: ScopeEscalation, what: "repository git config", elems: []nameElem{el(".git"), el("config")}},
		// A worktree's own configuration (read with
		// extensions.worktreeConfig) and a submodule's repository, whose
		// hooks and config run when git works in the submodule.
		{rule: ScopeEscalation, what: "repository git config", elems: []nameElem{el(".git"), el("config.worktree")}},
		{rule: ScopeEscalation, what: "repository git config", elems: []nameElem{el(".git"), el("worktrees"), el("*"), el("config.worktree")}},
		{rule: ScopeEscalation, what: "a submodule's repository (its hooks and config)", elems: []nameElem{el(".git"), el("modules")}, under: true},
		// commondir names the directory git takes a repository's config,
		// hooks and refs from (a linked worktree's is ../..); written in
		// any .git directory it makes another directory's config and
		// hooks run there.
		{rule: ScopeEscalation, what: "the repository's common directory (where git reads its config and hooks)", elems: []nameElem{el(".git"), el("commondir")}},
		{rule: ScopeEscalation, what: "the repository's common directory (where git reads its config and hooks)", elems: []nameElem{el(".git"), el("worktrees"), el("*"), el("commondir")}},
		// An interactive rebase's state: git rebase --continue runs the
		// exec lines of its todo list (a planted one shows as a rebase in
		// progress).
		{rule: ScopeEscalation, what: "an interactive rebase's state (git rebase --continue runs its todo list's exec lines)", elems: []nameElem{el(".git"), el("rebase-merge")}, under: true},
		{rule: ScopeEscalation, what: "an interactive rebase's state (git rebase --continue runs its todo list's exec lines)", elems: []nameElem{el(".git"), el("worktrees"), el("*"), el("rebase-merge")}, under: true},
		{rule: ScopeEscalation, what: "direnv start-up file", elems: []nameElem{el(".envrc")}},
		// mise runs a config's env directives, templates and hooks on cd
		// and on every mise command once the file is trusted, and trust is
		// by path, not content: a trusted file's later edits run unasked.
		// (mise.toml anywhere covers .config/mise.toml.)
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el("mise.toml")}},
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el("mise.*.toml")}},
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el(".mise.toml")}},
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el(".mise.*.toml")}},
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el("mise"), el("config.toml")}},
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el(".mise"), el("config.toml")}},
		{rule: ScopeEscalation, what: "mise configuration", elems: []nameElem{el(".config"), el("mise")}, under: true},
		// What an editor reads from the project it opens. Workspace
		// settings steer another agent in the same editor (Copilot's
		// chat.tools.autoApprove, CVE-2025-53773) and name programs the
		// editor and its extensions run; an MCP file names commands an
		// agent starts; a task may run when the folder opens
		// (runOptions.runOn: folderOpen); a dev container's
		// initializeCommand runs on this machine before the container is
		// built. launch.json is left out: it runs only when someone starts
		// a debug session, as a Makefile runs only when someone runs make.
		{rule: SelfMod, what: "editor workspace settings", elems: []nameElem{el(".vscode"), el("settings.json")}},
		{rule: SelfMod, what: "editor workspace settings", elems: []nameElem{el("*.code-workspace")}},
		{rule: SelfMod, what: "project MCP servers", elems: []nameElem{el(".vscode"), el("mcp.json")}},
		{rule: SelfMod, what: "project MCP servers", elems: []nameElem{el(".cursor"), el("mcp.json")}},
		{rule: ScopeEscalation, what: "editor tasks, which can run when the folder opens", elems: []nameElem{el(".vscode"), el("tasks.json")}},
		// A JetBrains IDE's startup tasks launch run configurations when
		// the project opens; a private configuration lives in
		// workspace.xml, a shared one in runConfigurations by default or,
		// stored as a project file elsewhere, in a *.run.xml anywhere in
		// the project.
		{rule: ScopeEscalation, what: "IDE run configurations, which a startup task runs when the project opens", elems: []nameElem{el(".idea"), el("workspace.xml")}},
		{rule: ScopeEscalation, what: "IDE run configurations, which a startup task runs when the project opens", elems: []nameElem{el(".idea"), el("runconfigurations")}, under: true},
		{rule: ScopeEscalation, what: "IDE run configurations, which a startup task runs when the project opens", elems: []nameElem{el("*.run.xml")}},
		{rule: ScopeEscalation, what: "dev container configuration, whose initializeCommand runs on this machine", elems: []nameElem{el(".devcontainer.json")}},
		{rule: ScopeEscalation, what: "dev container configuration, whose initializeCommand runs on this machine", elems: []nameElem{el(".devcontainer")}, under: true},
	}
	// Python runs these on every start of the interpreter that owns the
	// directory: a .pth file's import lines, usercustomize and
	// sitecustomize.
	for _, sp := range []string{"site-packages", "dist-packages"} {
		for _, f := range []string{"*.pth", "usercustomize.py", "sitecustomize.py"} {
			a.names = append(a.names, nameRule{rule: ScopeEscalation, what: "Python start-up code", elems: []nameElem{el(sp), el(f)}})
		}
	}
}

// hooksPathZones protects the directories core.hooksPath names, in the
// repository's configuration (relative to its work tree) and the user's:
// git runs the hooks there, as it runs .git/hooks (a husky setup's
// .husky). Read on first use, with the other zones.
func (a *analyzer) hooksPathZones(dir func(Rule, string, ...string)) {
	var files []struct{ path, base string }
	if a.cwd0 != "" {
		if gd := findGitDir(a.cwd0); gd != "" {
			top := filepath.Dir(gd)
			if filepath.Base(gd) != ".git" {
				top = "" // a linked worktree's: its top is not known here
			}
			files = append(files, struct{ path, base string }{filepath.Join(gd, "config"), top})
			if b, ok := readSmall(filepath.Join(gd, "commondir"), 4096); ok {
				cd := strings.TrimSpace(string(b))
				if !filepath.IsAbs(cd) {
					cd = filepath.Join(gd, cd)
				}
				files = append(files, struct{ path, base string }{filepath.Join(cd, "config"), top})
			}
		}
	}
	if a.home != "" {
		files = append(files, struct{ path, base string }{filepath.Join(a.home, ".gitconfig"), ""},
			struct{ path, base string }{filepath.Join(a.home, ".config", "git", "config"), ""})
	}
	for _, f := range files {
		b, ok := readSmall(f.path, maxScript)
		if !ok {
			continue
		}
		v, ok := gitConfigValue(b, "core", "hookspath")
		if !ok || v == "" || v == "/dev/null" {
			continue
		}
		v = a.expandTilde(v)
		if !filepath.IsAbs(v) {
			if f.base == "" {
				continue
			}
			v = filepath.Join(f.base, v)
		}
		dir(ScopeEscalation, "git hooks (core.hooksPath)", v)
	}
}

// splitPath returns the components of a cleaned absolute or relative path,
// each in the form a case-insensitive file system compares (fsname.Fold):
// on a Mac ".claude/ſettings.json", ".cla\u200cude/settings.json" (HFS+)
// and a decomposed "Jose\u0301" in the home directory's path open the
// protected file, so they are the protected file here too.
func splitPath(p string) []string {
	p = filepath.ToSlash(p)
	out := make([]string, 0, strings.Count(p, "/")+1) // one allocation: every path checked goes through here
	for c := range strings.SplitSeq(p, "/") {
		if c = fsname.Fold(c); c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[`) }

// compMatch compares a component of a path from the command with one of a
// protected path. Globs were expanded against the disk before; a pattern
// that matched nothing names a file literally.
func compMatch(pc, zc string) bool { return pc == zc }

// patternReaches reports whether a path pattern may name something in or
// above the zone: its components match the zone's as far as both go.
func (a *analyzer) patternReaches(p, z []string) bool {
	// Each ** tries every depth: a handful are followed, more reach
	// anything (the matching would grow with the product of the depths).
	if a.globstar && strings.Count(strings.Join(p, "/"), "**") > 4 {
		return true
	}
	for i := 0; i < len(p) && i < len(z); i++ {
		if p[i] == z[i] {
			continue
		}
		if p[i] == "**" && a.globstar {
			// Any number of directories, none hidden unless dotglob.
			for j := i; j <= len(z); j++ {
				if j > i && strings.HasPrefix(z[j-1], ".") && !a.dotglob {
					break
				}
				if a.patternReaches(p[i+1:], z[j:]) {
					return true
				}
			}
			return false
		}
		if !hasMeta(p[i]) || (strings.HasPrefix(z[i], ".") && !strings.HasPrefix(p[i], ".") && !a.dotglob) {
			return false
		}
		if ok, _ := path.Match(p[i], z[i]); !ok {
			return false
		}
	}
	return true
}

// inside reports whether p lies in the zone; contains whether the zone lies
// strictly inside p (so a recursive operation on p reaches it).
func (z zone) inside(p []string) bool {
	if len(p) < len(z.comps) || (z.file && len(p) != len(z.comps)) {
		return false
	}
	for i, c := range z.comps {
		if !compMatch(p[i], c) {
			return false
		}
	}
	return true
}

func (z zone) containedBy(p []string) bool {
	if len(p) >= len(z.comps) {
		return false
	}
	for i, c := range p {
		if !compMatch(c, z.comps[i]) {
			return false
		}
	}
	return true
}

func (e nameElem) match(c string) bool {
	ok, _ := path.Match(e.pat, c)
	return ok
}

func (n nameRule) match(p []string) bool {
	for i := 0; i+len(n.elems) <= len(p); i++ {
		ok := true
		for j, e := range n.elems {
			if !e.match(p[i+j]) {
				ok = false
				break
			}
		}
		if ok && (n.under || i+len(n.elems) == len(p)) {
			return true
		}
	}
	return false
}

// nameSuffixes lists, as slash-joined patterns, what the name rules
// protect below a tree's top, for the commands that land or reach a whole
// tree without naming its files: each rule's whole run
// (.claude/settings*.json), what a tree holds at its top, and with tails
// also the runs' proper tails (settings*.json), what a tree landing where
// a run begins (at .claude) brings. A pattern element stays a pattern:
// the callers glob it.
func (a *analyzer) nameSuffixes(tails bool) []string {
	a.zoneList()
	var out []string
	for _, n := range a.names {
		for k := range n.elems {
			if k > 0 && !tails {
				break
			}
			pats := make([]string, 0, len(n.elems)-k)
			for _, e := range n.elems[k:] {
				pats = append(pats, e.pat)
			}
			if s := strings.Join(pats, "/"); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// linkHolds judges a symbolic link made at d: whatever its target holds,
// now or later, lies below d, so each rule whose run d begins (a link at
// .claude begins .claude/settings*.json) is written.
func (a *analyzer) linkHolds(d, how string) {
	a.runsBegunAt(d, false, how+" (a link at "+d+") may hold ")
}

// runsBegunAt adds each name rule whose run p begins, its match said as
// says followed by what the rule protects.
func (a *analyzer) runsBegunAt(p string, unresolvable bool, says string) {
	comps := splitPath(p)
	a.zoneList()
	for _, n := range a.names {
		if n.holdsPrefix(comps) {
			a.add(n.rule, unresolvable, "%s%s", says, n.what)
		}
	}
}

// nameDirs lists the directories protected names sit in, or are, for a
// rule on everything below one (.claude, .git, .codex): a directory that
// holds one may receive what they protect from an archive whose members
// are not known here.
func (a *analyzer) nameDirs() []string {
	a.zoneList()
	var out []string
	for _, n := range a.names {
		if d := n.elems[0].pat; (len(n.elems) > 1 || n.under) && !hasMeta(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// holdsPrefix reports whether the components of p end with a proper,
// non-empty prefix of the rule's elements: a tree written at p (a
// directory restored from a commit) may hold what the rule protects.
func (n nameRule) holdsPrefix(p []string) bool {
	for k := len(n.elems) - 1; k >= 1; k-- {
		if n.endsWith(p, k) {
			return true
		}
	}
	return false
}

// treeMayHold judges a tree whose contents are not known here landing at
// p (git checkout REV -- DIR): when p is a directory that protected names
// sit in (.claude, .git, .codex), the tree may hold them. A directory
// above them (".") is not judged: any checkout could then be one.
func (a *analyzer) treeMayHold(p, how string) {
	a.runsBegunAt(p, true, how+" writes a tree at "+p+", which may hold ")
}

// resolve follows symbolic links in p as far as the path exists and keeps
// the rest as written, so a file that does not exist yet resolves through
// its existing parent directories, and a dangling link resolves to the file
// that writing through it would create. Answers are kept for the rest of
// the call: one analysis judges the file system as it is now (links the
// command itself creates are tracked in a.links). An absolute path is
// resolved a component at a time on top of its resolved parent, so each
// directory is examined once per call, not once per path below it: the
// arguments of an ordinary command are mostly paths in the same few
// directories.
func (a *analyzer) resolve(p string) string { return a.resolveLinks(p, 0) }

// maxLinks bounds the symbolic links followed for one path, like the
// kernel's ELOOP limit; past it resolution stops where it is.
const maxLinks = 40

func (a *analyzer) resolveLinks(p string, links int) string {
	if r, ok := a.resolved[p]; ok {
		return r
	}
	r := p
	switch c := filepath.Clean(p); {
	case c != p:
		r = a.resolveLinks(c, links)
	case !filepath.IsAbs(p):
		if x, err := filepath.EvalSymlinks(p); err == nil {
			r = x
		}
	case p != string(filepath.Separator):
		dir, base := filepath.Split(p)
		parent := a.resolveLinks(filepath.Clean(dir), links)
		r = filepath.Join(parent, base)
		if links >= maxLinks {
			break
		}
		if fi, err := os.Lstat(r); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(r); err == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(parent, target)
				}
				r = a.resolveLinks(filepath.Clean(target), links+1)
			}
		}
	}
	a.resolved[p] = r
	return r
}

// resolveParent resolves the directory of p but not p itself: the object an
// operation that does not follow a final symlink acts on (rm, mv, ln).
func (a *analyzer) resolveParent(p string) string {
	dir, base := filepath.Split(p)
	if base == "" {
		return p
	}
	return filepath.Join(a.resolve(filepath.Clean(dir)), base)
}

// expandTilde expands ~ and ~/ in a path that did not go through a shell
// (a tool's file_path).
func (a *analyzer) expandTilde(p string) string {
	if a.home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return a.home + p[1:]
	}
	return p
}

// candidates returns the path as written (cleaned) and as the file system
// resolves it.
func (a *analyzer) candidates(p string) []string {
	out := []string{p}
	if r := a.resolve(p); r != p {
		out = append(out, r)
	}
	// A symbolic link this command made earlier is not on the disk for
	// resolve to follow; a path through it names its target.
	for _, l := range a.symlinks {
		if p == l.link || strings.HasPrefix(p, l.link+"/") {
			q := l.target + p[len(l.link):]
			out = append(out, q)
			if r := a.resolve(q); r != q {
				out = append(out, r)
			}
		}
	}
	return out
}

// linkPair is a symbolic link made earlier in the call: its absolute path
// and its target's.
type linkPair struct{ link, target string }

// recordLink notes a symbolic link the command makes: at link, pointing to
// target (relative to the link's directory, or with relativeToCwd, as ln
// -r and cp -s read it, to the working directory). A link into an existing
// directory lands inside it unless noDeref (ln -n, -T).
func (a *analyzer) recordLink(link, target field, st *state, relativeToCwd, noDeref bool) {
	if link.dyn || target.dyn {
		return
	}
	l, ok := cleanAbs(st.cwd, link.s)
	if !ok {
		return
	}
	if fi, err := os.Stat(l); err == nil && fi.IsDir() && !noDeref {
		l = filepath.Join(l, filepath.Base(target.s))
	}
	t := target.s
	switch {
	case filepath.IsAbs(t):
		t = filepath.Clean(t)
	case relativeToCwd:
		if t, ok = cleanAbs(st.cwd, t); !ok {
			return
		}
	default:
		t = filepath.Join(filepath.Dir(l), t)
	}
	a.symlinks = append(a.symlinks, linkPair{link: l, target: t})
}

// writePath checks a file the command creates or modifies; writeTree with
// recursive set also checks what lies below it (chmod -R, cp into a
// directory). Both follow a final symbolic link, as writing through a link
// writes its target.
func (a *analyzer) writePath(f field, st *state, how string) {
	a.touchPath(f, st, how, false, true)
	a.gitPointer(f, st, how, false)
}

// writeFile is writePath for a write that makes the path a file when it
// is missing (the Write tool, a redirection), as a .git that does not
// exist yet is made.
func (a *analyzer) writeFile(f field, st *state, how string) {
	a.touchPath(f, st, how, false, true)
	a.gitPointer(f, st, how, true)
}

// gitPointer judges a write of a .git that is not a directory: a linked
// worktree's or a submodule's .git file names the repository git uses
// there (gitdir: PATH), so one written to name another directory makes
// that directory's config and hooks run on every later git command there
// (in a monorepo's subdirectory, before the repository above it). A
// missing .git counts only for a write that makes a file (creates):
// another program may make it a directory (tar -C, unzip -d). Writing
// into an existing .git directory is judged by what it writes.
func (a *analyzer) gitPointer(f field, st *state, how string, creates bool) {
	if f.dyn || st.remote {
		return
	}
	s := f.s
	if st.vars == nil {
		s = a.expandTilde(s)
	}
	p, ok := cleanAbs(st.cwd, s)
	if !ok || fsname.Fold(filepath.Base(p)) != ".git" {
		return
	}
	if fi, err := os.Lstat(p); (err == nil && fi.IsDir()) || (err != nil && !creates) {
		return
	}
	a.add(ScopeEscalation, false, "%s writes %s, a .git file: it names the repository whose config and hooks git runs there", how, p)
}

// downloadTo judges where a program puts what it fetches or builds (aws s3
// cp's destination, go build -o): a path written in the command. One
// only known at run time is passed, as for the many build and CI scripts
// that name their output so (go build -o "$OUT").
func (a *analyzer) downloadTo(f field, st *state, how string) {
	if !f.dyn {
		a.writePath(f, st, how)
	}
}

func (a *analyzer) writeTree(f field, st *state, how string, recursive bool) {
	a.touchPath(f, st, how, recursive, true)
}

// removePath checks a path the command removes or renames (rm, mv's
// sources, find -delete). A final symbolic link is the object removed, not
// its target, unless the operand ends in a slash.
func (a *analyzer) removePath(f field, st *state, how string, recursive bool) {
	a.touchPath(f, st, how, recursive, strings.HasSuffix(f.s, "/") || strings.HasSuffix(f.s, "/."))
}

func (a *analyzer) touchPath(f field, st *state, how string, recursive, follow bool) {
	if f.dyn {
		a.add(SelfMod, true, "%s writes %s, a path only known at run time", how, f)
		a.add(ScopeEscalation, true, "%s writes %s, a path only known at run time", how, f)
		return
	}
	if st.remote {
		return
	}
	s := f.s
	if st.vars == nil {
		s = a.expandTilde(s)
	}
	p, ok := cleanAbs(st.cwd, s)
	if !ok {
		// The working directory is unknown: only the project-relative
		// names can still be recognised.
		a.checkNames(splitPath(filepath.Clean(s)), how, s)
		return
	}
	if q, known := procPath(p, st.cwd); !known {
		a.add(SelfMod, true, "%s writes %s, through a directory another process holds", how, p)
		a.add(ScopeEscalation, true, "%s writes %s, through a directory another process holds", how, p)
		return
	} else if q != p {
		p = q // /proc/self/cwd/x is x in the working directory
	}
	if strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") {
		a.device(p, how)
		return
	}
	a.written[p] = true
	gs, ok := a.globs(p)
	if !ok {
		comps := splitPath(p)
		for _, z := range a.zoneList() {
			if a.patternReaches(comps, z.comps) {
				a.add(z.rule, true, "%s writes %s, a pattern too broad to expand that may reach %s", how, p, z.what)
			}
		}
		a.checkNames(comps, how, p)
		return
	}
	for _, g := range gs {
		if !a.step() {
			return
		}
		cands := a.candidates(g)
		if !follow {
			cands = []string{g}
			if r := a.resolveParent(g); r != g {
				cands = append(cands, r)
			}
		}
		a.writeOne(cands, how, recursive)
		if follow {
			a.checkHardlink(g, how)
		}
	}
}

// globs expands a path the way the shell would before the command runs: a
// pattern that matches names on disk becomes those names (at most maxGlob),
// one that matches nothing stays as written. It reads at most
// maxGlobDirs directories; ok is false when the pattern needs more.
func (a *analyzer) globs(p string) (out []string, ok bool) {
	if !hasMeta(p) {
		return []string{p}, true
	}
	prefixes := []string{"/"}
	dirs := 0
	for _, c := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if c == "" {
			continue
		}
		if c == "**" && a.globstar {
			return nil, false // any depth: judged as a pattern
		}
		var next []string
		for _, pre := range prefixes {
			if !hasMeta(c) {
				next = append(next, filepath.Join(pre, c))
				continue
			}
			if dirs++; dirs > maxGlobDirs {
				return nil, false
			}
			names, ok := a.readDir(pre)
			if !ok {
				return nil, false
			}
			for _, name := range names {
				if strings.HasPrefix(name, ".") && !strings.HasPrefix(c, ".") && !a.dotglob {
					continue // like bash, * does not match a leading dot
				}
				// Without regard to case: bash under nocaseglob matches
				// so, and protected names are compared so.
				if m, _ := filepath.Match(fsname.Fold(c), fsname.Fold(name)); m {
					next = append(next, filepath.Join(pre, name))
				}
			}
		}
		if len(next) > maxGlob {
			return nil, false
		}
		prefixes = next
	}
	for _, q := range prefixes {
		if _, err := os.Lstat(q); err == nil {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return []string{p}, true
	}
	return out, true
}

// readDir lists a directory's names, once per call analysed; ok is false
// when it holds more than maxDirEntries, which a glob then cannot be
// expanded against (listing millions of names would stall the hook into the
// agent CLI's timeout, which lets the call run). A directory that cannot be
// read lists as empty.
func (a *analyzer) readDir(dir string) (names []string, ok bool) {
	if names, ok := a.dirs[dir]; ok {
		return names, len(names) <= maxDirEntries
	}
	// os.Open would wait on a FIFO; the directory flag makes it fail.
	if f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0); err == nil {
		ents, _ := f.ReadDir(maxDirEntries + 1)
		f.Close()
		for _, e := range ents {
			names = append(names, e.Name())
		}
		slices.Sort(names)
	}
	if a.dirs == nil {
		a.dirs = map[string][]string{}
	}
	a.dirs[dir] = names
	return names, len(names) <= maxDirEntries
}

const (
	maxGlob       = 256
	maxGlobDirs   = 16
	maxDirEntries = 4096
)

func (a *analyzer) writeOne(cands []string, how string, recursive bool) {
	for _, c := range cands {
		comps := splitPath(c)
		var reached []string
		for _, z := range a.zoneList() {
			switch {
			case z.inside(comps):
				a.add(z.rule, false, "%s writes %s (%s)", how, c, z.what)
			case recursive && z.rule == SelfMod && z.containedBy(comps):
				// Removing or moving a directory that holds the settings
				// tampers with them; for the other rules only direct
				// writes count.
				if !slices.Contains(reached, z.what) {
					reached = append(reached, z.what)
				}
			}
		}
		if len(reached) > 0 {
			a.add(SelfMod, false, "%s %s reaches %s", how, c, strings.Join(reached, ", "))
		}
		a.checkNames(comps, how, c)
		if recursive {
			a.checkBelow(c, how)
		}
	}
}

func (a *analyzer) checkNames(comps []string, how, shown string) {
	a.zoneList()
	for _, n := range a.names {
		if n.match(comps) {
			a.add(n.rule, false, "%s writes %s (%s)", how, shown, n.what)
		}
	}
}

// checkBelow looks for project agent settings in a directory that a
// recursive operation reaches: the run of a self-mod name rule below it
// (proj/.claude/settings.json), or, when the directory is the start of a
// run (.claude, which begins .claude/settings.json), the run's rest in it.
// What is looked for is read from the disk, so a .claude holding only
// output styles is not judged as one holding settings.
func (a *analyzer) checkBelow(dir, how string) {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return
	}
	comps := splitPath(dir)
	a.zoneList()
	for _, n := range a.names {
		if n.rule != SelfMod {
			continue
		}
		for k := range n.elems {
			if k > 0 && !n.endsWith(comps, k) {
				continue
			}
			if found := a.findRun(dir, n.elems[k:]); found != "" {
				a.add(SelfMod, false, "%s reaches %s (%s)", how, found, n.what)
				break
			}
		}
	}
}

// endsWith reports whether p ends with the rule's first k elements.
func (n nameRule) endsWith(p []string, k int) bool {
	if k > len(p) {
		return false
	}
	tail := p[len(p)-k:]
	for j := range k {
		if !n.elems[j].match(tail[j]) {
			return false
		}
	}
	return true
}

// findRun returns the first path below dir whose components match elems,
// one directory level each, or "".
func (a *analyzer) findRun(dir string, elems []nameElem) string {
	names, _ := a.readDir(dir)
	for _, name := range names {
		if !elems[0].match(fsname.Fold(name)) {
			continue
		}
		p := filepath.Join(dir, name)
		if len(elems) == 1 {
			return p
		}
		if found := a.findRun(p, elems[1:]); found != "" {
			return found
		}
	}
	return ""
}

// fileID identifies a file across hard links.
type fileID struct{ dev, ino uint64 }

func statID(p string) (fileID, bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// checkHardlink catches a write to a hard link of a protected file, which no
// path comparison can see.
func (a *analyzer) checkHardlink(p, how string) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return
	}
	if a.inodes == nil {
		a.inodes = map[fileID]string{}
		var files []string
		if a.home != "" {
			for _, f := range []string{".claude/settings.json", ".claude/settings.local.json", ".claude.json",
				".codex/config.toml", ".codex/hooks.json", ".gemini/settings.json", ".gitconfig", ".bashrc", ".profile", ".zshrc", ".ssh/authorized_keys"} {
				files = append(files, filepath.Join(a.home, f))
			}
		}
		if a.cwd0 != "" {
			files = append(files, filepath.Join(a.cwd0, ".claude/settings.json"), filepath.Join(a.cwd0, ".claude/settings.local.json"))
		}
		if a.fxHome != "" {
			files = append(files, filepath.Join(a.fxHome, "policy.json"))
		}
		files = append(files, "/etc/claude-code/managed-settings.json")
		files = append(files, a.env.FixrailBinaries...)
		for _, f := range files {
			if id, ok := statID(f); ok {
				a.inodes[id] = f
			}
		}
	}
	if id, ok := statID(p); ok {
		if f, hit := a.inodes[id]; hit {
			a.add(SelfMod, false, "%s writes %s, a hard link to %s", how, p, f)
		}
	}
}

// device handles writes to /dev and /proc paths: sockets are egress, disks
// are destructive, the rest (null, stdout, ttys) are harmless.
func (a *analyzer) device(p, how string) {
	switch {
	case strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/"):
		a.add(EgressOther, false, "%s opens a network connection (%s)", how, p)
	case blockDevice(p):
		a.add(Destructive, false, "%s writes the disk device %s", how, p)
	}
}

func blockDevice(p string) bool {
	name, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	for _, pre := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "md", "dm-", "loop"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func (a *analyzer) deviceRead(f field) {
	if !f.dyn && (strings.HasPrefix(f.s, "/dev/tcp/") || strings.HasPrefix(f.s, "/dev/udp/")) {
		a.add(EgressOther, false, "< opens a network connection (%s)", f.s)
	}
}

// procPath maps a path through /proc's links to the file they reach, as
// the process that opens it sees them: /proc/self/cwd (and thread-self's)
// is its working directory — cwd, the command's, or the agent CLI's for a
// tool — and /proc/PID/root the root directory. known is false for a
// directory only another process knows: another PID's cwd, or a directory
// held open (/proc/PID/fd/N/…). Other paths are returned as they are.
func procPath(p, cwd string) (string, bool) {
	if fd, ok := strings.CutPrefix(p, "/dev/fd/"); ok {
		// /dev/fd is /proc/self/fd: a path below a descriptor is below
		// a directory held open.
		return p, !strings.Contains(fd, "/")
	}
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return p, true
	}
	parts := strings.Split(rest, "/")
	if len(parts) >= 4 && parts[1] == "task" {
		parts = append(parts[:1], parts[3:]...) // /proc/PID/task/TID/… is the thread's
	}
	if len(parts) < 2 {
		return p, true
	}
	pid, kind, below := parts[0], parts[1], filepath.Join(append([]string{"/"}, parts[2:]...)...)
	switch kind {
	case "cwd":
		if (pid == "self" || pid == "thread-self") && cwd != "" {
			return filepath.Join(cwd, below), true
		}
		return "", false
	case "root":
		return below, true
	case "fd", "map_files":
		if len(parts) > 3 {
			return "", false
		}
	}
	return p, true
}

// redirectWrite checks the target of an output redirection.
func (a *analyzer) redirectWrite(t field, st *state) {
	if t.dyn {
		a.writePath(t, st, ">")
		return
	}
	if t.s == "" {
		return
	}
	a.writeFile(t, st, ">")
}

// readPath checks a file the command reads: reading the approval keys or a
// signing key is self-mod. recursive means the command reads everything
// below p.
func (a *analyzer) readPath(f field, st *state, how string, recursive bool) {
	if len(a.secrets) == 0 || st.remote || f.dyn {
		return
	}
	s := f.s
	if st.vars == nil {
		s = a.expandTilde(s)
	}
	p, ok := cleanAbs(st.cwd, s)
	if !ok {
		return
	}
	if q, known := procPath(p, st.cwd); !known {
		for _, z := range a.secretList() {
			a.add(SelfMod, true, "%s reads %s, through a directory another process holds, which may be %s", how, p, z.what)
		}
		return
	} else {
		p = q
	}
	gs, ok := a.globs(p)
	if !ok {
		for _, z := range a.secretList() {
			if a.patternReaches(splitPath(p), z.comps) {
				a.add(SelfMod, true, "%s reads %s, a pattern too broad to expand that may reach %s", how, p, z.what)
			}
		}
		return
	}
	for _, g := range gs {
		if !a.step() {
			return
		}
		for _, c := range a.candidates(g) {
			comps := splitPath(c)
			for _, z := range a.secretList() {
				if z.inside(comps) || (recursive && z.containedBy(comps)) {
					a.add(SelfMod, false, "%s reads %s (%s)", how, c, z.what)
				}
			}
		}
	}
}

// toolState is the state for paths that come from a tool's input rather
// than a shell: ~ is expanded by writeTree and readPath.
func (a *analyzer) toolState() *state { return &state{cwd: a.cwd0} }

// inScratch reports whether p is a scratch directory or lies below one.
//
// $HOME is never scratch, even when it lies below a scratch directory (a
// HOME under /tmp on a CI runner or a throwaway VM): a scratch directory
// that contains $HOME covers neither $HOME, nor what lies below it, nor a
// directory holding it. Scratch directories inside $HOME (its projects'
// node_modules, a TMPDIR of ~/tmp) still count.
func (a *analyzer) inScratch(p string) bool {
	for _, s := range a.scratchDirs() {
		if !pathguard.Within(s, p) {
			continue
		}
		if a.homeIn(s) && a.nearHome(p) {
			continue
		}
		return true
	}
	return false
}

// homes returns $HOME as given and as the file system resolves it.
func (a *analyzer) homes() []string {
	if a.home == "" {
		return nil
	}
	if r := a.resolve(a.home); r != a.home {
		return []string{a.home, r}
	}
	return []string{a.home}
}

// homeIn reports whether $HOME lies at or below dir.
func (a *analyzer) homeIn(dir string) bool {
	for _, h := range a.homes() {
		if pathguard.Within(dir, h) {
			return true
		}
	}
	return false
}

// nearHome reports whether p is $HOME, lies below it, or contains it.
func (a *analyzer) nearHome(p string) bool {
	for _, h := range a.homes() {
		if pathguard.Within(h, p) || pathguard.Within(p, h) {
			return true
		}
	}
	return false
}

// scratchDirs returns the scratch allowlist as absolute paths, each also
// as the file system resolves it. It is built on first use: resolving it
// touches the file system, and most calls delete nothing.
func (a *analyzer) scratchDirs() []string {
	if a.scratchOK {
		return a.scratch
	}
	a.scratchOK = true
	dirs := a.env.ScratchDirs
	if dirs == nil {
		dirs = DefaultScratchDirs()
	}
	if a.env.TmpDir != "" {
		dirs = append(slices.Clone(dirs), a.env.TmpDir)
	}
	for _, d := range dirs {
		p, ok := cleanAbs(a.cwd0, d)
		if !ok {
			continue
		}
		a.scratch = append(a.scratch, p)
		if r := a.resolve(p); r != p {
			a.scratch = append(a.scratch, r)
		}
	}
	return a.scratch
}

// deleteTree checks the target of a recursive delete against the scratch
// allowlist. The target is cleaned, a glob component that can match ".." is
// taken as "..", and symbolic links are followed the way the deleting command
// would: through every parent, and through the last component only when the
// operand ends in a slash.
func (a *analyzer) deleteTree(f field, st *state, how string) {
	if reason, unres := a.deleteVerdict(f, st, how); reason != "" {
		a.add(Destructive, unres, "%s", reason)
	}
}

// deleteVerdict returns why deleting f recursively is destructive ("" when
// it is not) and whether that is only a possibility.
func (a *analyzer) deleteVerdict(f field, st *state, how string) (string, bool) {
	if f.dyn {
		return fmt.Sprintf("%s %s: the target is only known at run time", how, f), true
	}
	s := f.s
	followLast := strings.HasSuffix(s, "/") || strings.HasSuffix(s, "/.")
	parts := strings.Split(s, "/")
	for i, c := range parts {
		if strings.HasPrefix(c, ".") && hasMeta(c) {
			if ok, _ := path.Match(c, ".."); ok {
				parts[i] = ".."
			}
		}
	}
	s = strings.Join(parts, "/")
	if st.remote {
		if !filepath.IsAbs(s) || !a.inScratch(filepath.Clean(s)) {
			return fmt.Sprintf("%s %s on another host", how, f), false
		}
		return "", false
	}
	p, ok := cleanAbs(st.cwd, s)
	if !ok {
		return fmt.Sprintf("%s %s: relative target and the working directory is unknown", how, f), true
	}
	for _, l := range a.links {
		if p == l || strings.HasPrefix(p, l+"/") {
			return fmt.Sprintf("%s %s goes through a link created earlier in this command", how, p), false
		}
	}
	r := a.resolveParent(p)
	if followLast {
		r = a.resolve(p)
	}
	switch {
	case a.inScratch(r):
		return "", false
	case r != p:
		return fmt.Sprintf("%s %s (resolves to %s) is outside the scratch directories", how, p, r), false
	default:
		return fmt.Sprintf("%s %s is outside the scratch directories", how, p), false
	}
}

// readSmall returns the contents of a regular file of at most limit bytes.
// It never blocks on a FIFO or device.
func readSmall(p string, limit int64) ([]byte, bool) {
	b, err := pathguard.ReadRegular(p, limit)
	return b, err == nil
}
