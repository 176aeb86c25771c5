package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// gitCtx is what git's global options establish before the subcommand.
type gitCtx struct {
	dir    string           // directory git works in; "" if unknown
	gitDir string           // --git-dir / GIT_DIR
	config map[string]field // -c key=value and GIT_CONFIG_KEY_n, keys lower-cased
}

func (a *analyzer) git(c *cmd) {
	g := &gitCtx{dir: c.st.cwd, config: map[string]field{}}
	for k, v := range c.env {
		switch k {
		case "GIT_DIR":
			g.gitDir = dirOf(v, c.st)
		case "GIT_WORK_TREE":
			g.dir = dirOf(v, c.st)
		case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
			"VISUAL", "EDITOR": // git's editor when GIT_EDITOR and core.editor are not set
			a.runsText(v, c, "git with "+k)
		case "GIT_CONFIG_PARAMETERS":
			a.gitUnknown("git configuration passed in GIT_CONFIG_PARAMETERS is not analysed")
		case "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG":
			a.gitConfigFile(v, c, "git with "+k)
		}
	}
	if n, ok := c.env["GIT_CONFIG_COUNT"]; ok {
		count, err := strconv.Atoi(n.s)
		if n.dyn || err != nil || count > 64 {
			a.gitUnknown("git configuration count only known at run time")
		}
		for i := 0; i < min(count, 64); i++ {
			k, kok := c.env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)]
			v := c.env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)]
			if !kok || k.dyn {
				a.gitUnknown("git configuration key only known at run time")
				continue
			}
			g.config[strings.ToLower(k.s)] = v
		}
	}
	a.gitArgs(c, c.args, g, c.depth)
}

// gitUnknown marks the rules a git command can trigger as unresolvable.
func (a *analyzer) gitUnknown(reason string) {
	for _, r := range []Rule{PushForce, PushProtected, Publish, Destructive} {
		a.add(r, true, "%s", reason)
	}
}

var gitCommands = wordSet{"add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file",
	"check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index", "cherry",
	"cherry-pick", "citool", "clean", "clone", "column", "commit", "commit-graph", "commit-tree", "config",
	"count-objects", "credential", "describe", "diff", "diff-files", "diff-index", "diff-tree", "difftool",
	"fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref",
	"for-each-repo", "format-patch", "fsck", "gc", "get-tar-commit-id", "grep", "gui", "hash-object", "help",
	"init", "instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree", "mailinfo", "mailsplit",
	"maintenance", "merge", "merge-base", "merge-file", "merge-index", "merge-tree", "mergetool", "mktag",
	"mktree", "multi-pack-index", "mv", "name-rev", "notes", "pack-objects", "pack-refs", "patch-id", "prune",
	"prune-packed", "pull", "push", "range-diff", "read-tree", "rebase", "reflog", "remote", "repack", "replace",
	"request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "send-email",
	"shortlog", "show", "show-branch", "show-index", "show-ref", "sparse-checkout", "stage", "stash", "status",
	"stripspace", "submodule", "switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index",
	"update-ref", "update-server-info", "var", "verify-commit", "verify-pack", "verify-tag", "version",
	"whatchanged", "worktree", "write-tree", "backfill", "replay", "refs", "init-db", "lfs", "diagnose",
	"bugreport", "hook", "last-modified", "repo", "filter-repo"}

// gitArgs analyses one git invocation: the global options first (gitGlobals),
// then the subcommand, through an alias or through gitSubcommands.
func (a *analyzer) gitArgs(c *cmd, args []field, g *gitCtx, depth int) {
	if depth > maxDepth {
		a.all(fmt.Sprintf("git aliases nested more than %d levels deep", maxDepth))
		return
	}
	i, done := a.gitGlobals(c, args, g)
	if done {
		return
	}
	for k, v := range g.config {
		a.gitConfigExec(k, v, c)
	}
	if i >= len(args) {
		return
	}
	sub := args[i]
	rest := args[i+1:]
	if sub.dyn {
		a.gitUnknown(fmt.Sprintf("git subcommand %s only known at run time", sub))
		return
	}
	if body, ok := g.config["alias."+strings.ToLower(sub.s)]; ok && !gitCommands.has(sub.s) {
		a.gitAlias(c, sub.s, body, args[:i], rest, g, depth)
		return
	}
	if !gitCommands.has(sub.s) {
		a.gitUnknown(fmt.Sprintf("git %s is not a git command this analysis knows; it may be an alias", sub.s))
		return
	}
	switch sub.s {
	case "clone", "fetch", "pull", "ls-remote", "push", "archive", "submodule":
		a.addressesCarried(rest, "git "+sub.s)
	}
	gst := c.st.clone()
	gst.setCwd(g.dir)
	gitSubcommandsOnce.Do(initGitSubcommands)
	if h := gitSubcommands[sub.s]; h != nil {
		h(a, gitCall{c: c, sub: sub.s, rest: rest, g: g, st: gst, depth: depth})
	}
}

// gitGlobals reads git's global options (those before the subcommand) into g
// and returns the index of the subcommand. done is true when nothing after
// the options needs analysing: an option only known at run time (the rules
// are then marked unresolvable) or one that makes git print and exit.
func (a *analyzer) gitGlobals(c *cmd, args []field, g *gitCtx) (i int, done bool) {
	for i < len(args) {
		f := args[i]
		if f.dyn && f.optLike() {
			a.gitUnknown(fmt.Sprintf("git option %s only known at run time", f))
			return i, true
		}
		if !f.optLike() {
			break
		}
		name, val, eq := strings.Cut(f.s, "=")
		next := func() (field, bool) {
			if eq {
				return field{s: val, dyn: f.dyn}, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return field{}, false
		}
		switch {
		case f.s == "-C":
			if d, ok := next(); ok {
				if d.dyn || g.dir == "" {
					g.dir = ""
				} else if d.s != "" {
					g.dir, _ = cleanAbs(g.dir, d.s)
				}
			}
		case strings.HasPrefix(f.s, "-C"):
			g.dir, _ = cleanAbs(g.dir, f.s[2:])
		case f.s == "-c":
			if kv, ok := next(); ok {
				k, v, _ := strings.Cut(kv.s, "=")
				if kv.dyn && strings.Contains(k, dynMark) {
					a.gitUnknown("git -c with a key only known at run time")
					continue
				}
				g.config[strings.ToLower(k)] = field{s: v, dyn: kv.dyn}
			}
		case name == "--config-env":
			if kv, ok := next(); ok {
				k, envName, _ := strings.Cut(kv.s, "=")
				v, known := c.env[envName]
				if !known {
					v = field{s: dynMark, dyn: true}
				}
				g.config[strings.ToLower(k)] = v
			}
		case name == "--git-dir":
			if d, ok := next(); ok {
				g.gitDir = dirOf(d, &state{cwd: g.dir})
			}
		case name == "--work-tree":
			if d, ok := next(); ok {
				g.dir = dirOf(d, &state{cwd: g.dir})
			}
		case name == "--namespace" || name == "--super-prefix" || name == "--attr-source":
			next()
		case name == "--list-cmds" || (name == "--exec-path" && eq):
		case f.s == "-v" || f.s == "--version" || f.s == "-h" || f.s == "--help" || f.s == "--html-path" ||
			f.s == "--man-path" || f.s == "--info-path" || f.s == "--exec-path":
			return i, true
		}
		i++
	}
	return i, false
}

// gitCall is one git subcommand to analyse: its name, the arguments after it,
// the context the global options set, and the state with git's working
// directory as cwd.
type gitCall struct {
	c     *cmd
	sub   string
	rest  []field
	g     *gitCtx
	st    *state
	depth int
}

// gitSubcommands holds the analysis of each git subcommand that can trigger a
// rule; a known subcommand without an entry triggers none. It is filled in
// a function, on first use, because some entries reach gitArgs again
// (submodule foreach, bisect run), which a package-level initializer would
// make a cycle.
var (
	gitSubcommands     map[string]func(*analyzer, gitCall)
	gitSubcommandsOnce sync.Once
)

func initGitSubcommands() {
	checkout := func(a *analyzer, x gitCall) { a.gitCheckout(x.sub, x.rest, x.g, x.st) }
	gc := func(a *analyzer, x gitCall) { a.gitGC(x.sub, x.rest) }
	remote := func(a *analyzer, x gitCall) { a.gitRemoteCmd(x.sub, x.rest, x.g, x.st, x.c, x.depth) }
	// The diff family writes its output to a file with --output.
	output := func(a *analyzer, x gitCall) {
		for i, f := range x.rest {
			switch {
			case f.s == "--":
				return
			case strings.HasPrefix(f.s, "--output="):
				a.writePath(field{s: strings.TrimPrefix(f.s, "--output="), dyn: f.dyn}, x.st, "git "+x.sub+" --output")
			case f.s == "--output" && i+1 < len(x.rest):
				a.writePath(x.rest[i+1], x.st, "git "+x.sub+" --output")
			}
		}
	}
	gitSubcommands = map[string]func(*analyzer, gitCall){
		"push":   func(a *analyzer, x gitCall) { a.gitPush(x.rest, x.g, x.c, x.depth) },
		"config": func(a *analyzer, x gitCall) { a.gitConfig(x.rest, x.g, x.st) },
		"tag": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{short: "mFu", long: []string{"message", "file", "local-user", "cleanup", "sort", "format", "contains", "no-contains", "merged", "no-merged", "points-at", "color", "column"}})
			if !p.has("-d", "--delete", "-l", "--list", "-v", "--verify") && len(p.operands) > 0 && !p.operands[0].dyn {
				a.tags = append(a.tags, p.operands[0].s)
			}
		},
		"clean": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{short: "e", long: []string{"exclude"}})
			if p.has("-n", "--dry-run") || !(p.has("-f", "--force") || p.dyn) {
				return
			}
			a.gitDestroys(x.g, "git clean -f deletes untracked files", p.dyn)
		},
		"reset": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{})
			if p.has("--hard") {
				a.gitDestroys(x.g, "git reset --hard discards uncommitted changes", false)
			} else if p.has("--merge") {
				a.gitDiscard(x.g, "git reset --merge discards uncommitted changes to files the merge touches", false)
			} else if p.dyn {
				a.gitDestroys(x.g, "git reset with options only known at run time", true)
			}
		},
		"checkout": checkout,
		"restore":  checkout,
		"switch":   checkout,
		"stash": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{})
			if len(p.operands) > 0 && (p.operands[0].s == "drop" || p.operands[0].s == "clear") {
				a.gitDestroys(x.g, "git stash "+p.operands[0].s+" deletes stashed changes", false)
			}
		},
		"branch": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{short: "tu", long: []string{"track", "set-upstream-to", "contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format", "color", "column"}})
			if p.has("-D") || (p.has("-d", "--delete") && p.has("-f", "--force")) {
				a.add(Destructive, false, "git branch -D deletes a branch that may not be merged")
			}
		},
		"update-ref": func(a *analyzer, x gitCall) {
			// The plumbing under git branch -D: -d deletes the ref
			// whatever it holds; --stdin reads its commands (delete
			// among them) from input this analysis does not see.
			p := parseGitOpts(x.rest, gitUpdateRefOpts)
			switch {
			case p.has("-d") && len(p.operands) > 0:
				a.add(Destructive, p.operands[0].dyn, "git update-ref -d deletes ref %s, merged or not", p.operands[0])
			case p.has("stdin"):
				a.add(Destructive, true, "git update-ref --stdin applies ref updates and deletions read from its input")
			}
		},
		"worktree": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{short: "bB", long: []string{"reason", "expire"}})
			if len(p.operands) > 0 && p.operands[0].s == "remove" && p.has("-f", "--force") {
				a.gitDestroys(x.g, "git worktree remove --force discards the worktree's changes", false)
			}
			if len(p.operands) > 1 && p.operands[0].s == "add" {
				a.treeAt(p.operands[1], x.st, "git worktree add")
			}
		},
		"checkout-index": func(a *analyzer, x gitCall) {
			// --prefix puts each file it writes under a prefix: the index's
			// tree, or the files named, lands there.
			p := parseOpts(x.rest, optSpec{long: []string{"prefix", "stage"}})
			pre, ok := p.value("--prefix")
			if !ok {
				// In place, -f writes the index over files that exist:
				// their uncommitted changes are gone.
				switch {
				case !p.has("-f", "--force"):
				case p.has("-a", "--all", "--stdin"):
					a.gitDestroys(x.g, "git checkout-index --force --all overwrites every tracked file's uncommitted changes", false)
				case len(p.operands) > 0:
					a.gitDiscard(x.g, "git checkout-index --force overwrites the uncommitted changes of the files it names", false)
				}
				return
			}
			for _, f := range p.operands {
				a.writePath(field{s: pre.s + f.s, dyn: pre.dyn || f.dyn}, x.st, "git checkout-index --prefix")
			}
			if p.has("-a", "--all") || p.has("--stdin") {
				a.treeAt(field{s: strings.TrimSuffix(pre.s, "/"), dyn: pre.dyn}, x.st, "git checkout-index --prefix")
			}
		},
		"bundle": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{})
			if len(p.operands) > 1 && p.operands[0].s == "create" {
				a.writePath(p.operands[1], x.st, "git bundle create")
			}
		},
		"rm": func(a *analyzer, x gitCall) { a.gitRm(x.rest, x.g, x.st) },
		"mv": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{long: []string{"pathspec-from-file"}})
			for _, f := range p.operands {
				a.writePath(f, x.st, "git mv")
			}
		},
		"apply": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{short: "pC", long: []string{"exclude", "include", "directory", "whitespace", "build-fake-ancestor"}})
			if p.has("--cached") || (p.has("--check", "--stat", "--numstat", "--summary") && !p.has("--apply")) {
				return
			}
			a.applyPatches(p.operands, x, "git apply")
		},
		"am": func(a *analyzer, x gitCall) {
			// git am applies the patches in mailboxes (or standard input)
			// as git apply does; --continue and the like resume one
			// already read.
			p := parseOpts(x.rest, optSpec{short: "pCS", long: []string{"exclude", "include", "directory", "whitespace", "patch-format", "resolvemsg", "gpg-sign", "empty", "quoted-cr"}})
			if p.has("--continue", "--skip", "--abort", "--quit", "--resolved", "-r", "--show-current-patch", "--retry") {
				return
			}
			a.applyPatches(p.operands, x, "git am")
		},
		"send-email": func(a *analyzer, x gitCall) { a.add(EgressOther, false, "git send-email sends mail") },
		"submodule": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{posix: true})
			if len(p.operands) > 1 && p.operands[0].s == "add" {
				// git submodule add [-b B] [--name N] URL [PATH]: the
				// submodule's tree lands at PATH (or the URL's name).
				q := parseOpts(p.operands[1:], optSpec{short: "b", long: []string{"branch", "name", "reference", "depth"}})
				if dest, ok := cloneDest(q.operands); ok {
					a.treeAt(dest, x.st, "git submodule add")
				}
			}
			if len(p.operands) > 1 && p.operands[0].s == "foreach" {
				body := p.operands[1:]
				if len(body) > 0 && body[0].s == "--recursive" {
					body = body[1:]
				}
				if anyDyn(body) {
					a.all("git submodule foreach runs text only known at run time")
				}
				a.script(dynText(strings.Join(rawStrings(body), " ")), a.childState(x.st, x.c.env), x.depth+1, "git submodule foreach")
			}
		},
		"bisect": func(a *analyzer, x gitCall) {
			if len(x.rest) > 1 && x.rest[0].s == "run" {
				a.command(x.rest[1:], x.c.env, x.st, input{}, x.depth+1)
			}
		},
		"rebase": func(a *analyzer, x gitCall) {
			p := parseOpts(x.rest, optSpec{short: "xXsS", long: []string{"exec", "onto", "strategy", "strategy-option", "gpg-sign", "whitespace", "empty"}})
			for _, v := range p.values("-x", "--exec") {
				a.runsText(v, &cmd{st: x.st, env: x.c.env, depth: x.depth}, "git rebase --exec")
			}
		},
		"filter-branch": func(a *analyzer, x gitCall) {
			a.add(HistoryPrune, false, "git filter-branch rewrites every commit it visits")
			p := parseOpts(x.rest, optSpec{long: []string{"env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter",
				"commit-filter", "tag-name-filter", "subdirectory-filter", "prune-empty", "original", "state-branch", "setup"}})
			for _, o := range p.opts {
				if o.has && strings.HasSuffix(o.name, "-filter") && o.name != "--subdirectory-filter" || o.name == "--setup" {
					a.runsText(o.val, &cmd{st: x.st, env: x.c.env, depth: x.depth}, "git filter-branch "+o.name)
				}
			}
		},
		"reflog": func(a *analyzer, x gitCall) { a.gitReflog(x.rest) },
		"remote": func(a *analyzer, x gitCall) { a.gitRemote(x.rest) },
		"read-tree": func(a *analyzer, x gitCall) {
			// --reset with -u updates the working tree from the tree read,
			// local changes or not (-m refuses to overwrite them).
			p := parseOpts(x.rest, optSpec{long: []string{"prefix", "index-output", "exclude-per-directory", "super-prefix"}})
			if p.has("-u") && p.has("--reset") {
				a.gitDestroys(x.g, "git read-tree --reset -u overwrites the working tree's uncommitted changes", false)
			}
		},
		"add": func(a *analyzer, x gitCall) {
			// git add reads what it stages into the object store, where
			// git show or a push reads it back without naming the file.
			p := parseOpts(x.rest, optSpec{long: []string{"chmod", "pathspec-from-file"}})
			specs := p.operands
			if len(specs) == 0 && p.has("-A", "--all", "-u", "--update") {
				specs = []field{word(".")}
			}
			for _, f := range specs {
				a.readPath(f, x.st, "git add", true)
			}
		},
		"grep": func(a *analyzer, x gitCall) {
			// -O<pager>/--open-files-in-pager=<pager> runs the pager
			// command with the matching files (its value only attached).
			for i := 0; i < len(x.rest); i++ {
				f := x.rest[i]
				switch {
				case f.s == "--":
					return
				case strings.HasPrefix(f.s, "--"):
					name, v, eq := strings.Cut(f.s, "=")
					if name == "--open-files-in-pager" && eq {
						a.runsText(field{s: v, dyn: f.dyn}, x.c, "git grep --open-files-in-pager")
					} else if !eq && slices.Contains([]string{"--max-depth", "--threads", "--max-count", "--context", "--after-context", "--before-context"}, name) {
						i++ // its value
					}
				case strings.HasPrefix(f.s, "-") && len(f.s) > 1:
					cl := f.s[1:]
					for j := 0; j < len(cl); j++ {
						if cl[j] == 'O' {
							if j+1 < len(cl) {
								a.runsText(field{s: cl[j+1:], dyn: f.dyn}, x.c, "git grep -O")
							}
							break
						}
						if strings.IndexByte("efABCm", cl[j]) >= 0 {
							if j+1 == len(cl) {
								i++ // its value is the next word (-e -O… is a pattern)
							}
							break
						}
					}
				}
			}
		},
		"difftool": func(a *analyzer, x gitCall) {
			// -x/--extcmd: the command each file pair is shown with.
			p := parseOpts(x.rest, optSpec{short: "tx", long: []string{"tool", "extcmd"}})
			for _, v := range p.values("-x", "--extcmd") {
				a.runsText(v, x.c, "git difftool --extcmd")
			}
		},
		"gc":    gc,
		"prune": gc,
		"filter-repo": func(a *analyzer, x gitCall) {
			a.add(HistoryPrune, false, "git filter-repo rewrites history and drops the old refs")
		},
		"diff":         output,
		"log":          output,
		"show":         output,
		"format-patch": output,
		"range-diff":   output,
		"whatchanged":  output,
		"diff-tree":    output,
		"diff-index":   output,
		"diff-files":   output,
		"clone":        remote,
		"fetch":        remote,
		"pull":         remote,
		"ls-remote":    remote,
		"archive":      remote,
	}
}

// gitConfigExec analyses configuration given on the command line that makes
// git run a command.
func (a *analyzer) gitConfigExec(key string, v field, c *cmd) {
	switch {
	case key == "core.hookspath":
		if v.s != "/dev/null" && v.s != "" {
			a.all(fmt.Sprintf("git runs hooks from %s", v))
		}
	case key == "core.sshcommand" || key == "core.pager" || key == "core.editor" || key == "sequence.editor" ||
		key == "diff.external" || key == "core.askpass" || key == "gpg.program" || key == "core.gitproxy" ||
		key == "uploadpack.packobjectshook" || strings.HasPrefix(key, "pager.") ||
		key == "core.fsmonitor" && v.s != "true" && v.s != "false":
		a.runsText(v, c, "git -c "+key)
	case key == "credential.helper":
		// "!text" is shell text; any other value is a helper name git
		// prefixes with git-credential- or, with a slash, a command line.
		a.runsText(field{s: strings.TrimPrefix(v.s, "!"), dyn: v.dyn}, c, "git -c "+key)
	case key == "include.path" || strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"):
		a.gitConfigFile(v, c, "git -c "+key)
	default:
		// filter.<driver>.clean/smudge/process, diff.<driver>.textconv
		// and .command, merge.<driver>.driver,
		// remote.<name>.uploadpack/receivepack: commands git runs.
		sec, rest, _ := strings.Cut(key, ".")
		_, name := path.Split(strings.ReplaceAll(rest, ".", "/"))
		switch {
		case sec == "filter" && (name == "clean" || name == "smudge" || name == "process"),
			sec == "diff" && (name == "textconv" || name == "command"),
			sec == "merge" && name == "driver",
			sec == "remote" && (name == "uploadpack" || name == "receivepack"):
			a.runsText(v, c, "git -c "+key)
		}
	}
}

// gitAlias expands an alias defined with -c alias.name=... or in
// GIT_CONFIG_KEY_n: a "!" alias is shell text, any other is git arguments.
func (a *analyzer) gitAlias(c *cmd, name string, body field, globals, rest []field, g *gitCtx, depth int) {
	if body.dyn {
		a.all(fmt.Sprintf("git alias %s is only known at run time", name))
		return
	}
	if sh, ok := strings.CutPrefix(body.s, "!"); ok {
		text := sh
		if len(rest) > 0 {
			text += " " + quoteJoin(rest)
		}
		st := a.childState(c.st, c.env)
		st.setCwd(g.dir)
		a.script(text, st, depth+1, "git alias "+name)
		return
	}
	var words []field
	for w, err := range syntax.NewParser(syntax.Variant(syntax.LangBash)).WordsSeq(strings.NewReader(body.s)) {
		if err != nil {
			a.all(fmt.Sprintf("git alias %s does not parse: %v", name, err))
			return
		}
		words = append(words, a.fields([]*syntax.Word{w}, a.top())...)
	}
	argv := append(append(append([]field{}, globals...), words...), rest...)
	delete(g.config, "alias."+strings.ToLower(name)) // git refuses recursive aliases
	a.gitArgs(c, argv, &gitCtx{dir: c.st.cwd, gitDir: g.gitDir, config: g.config}, depth+1)
}

// gitDestroys reports a git command that discards work in the repository at
// g.dir, unless that repository is scratch.
func (a *analyzer) gitDestroys(g *gitCtx, why string, unresolvable bool) {
	if g.dir == "" {
		a.add(Destructive, true, "%s; the repository directory is unknown", why)
		return
	}
	if a.inScratch(a.resolve(g.dir)) {
		return
	}
	a.add(Destructive, unresolvable, "%s in %s", why, g.dir)
}

// cloneDest is where git clone URL [DIR] (and git submodule add) puts the
// repository: DIR, or the URL's last segment without ".git" (and without
// "/.git" or a trailing slash), as git names it.
func cloneDest(ops []field) (field, bool) {
	switch len(ops) {
	case 0:
		return field{}, false
	case 1:
		u := ops[0]
		if u.dyn {
			return field{}, false
		}
		s := strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(u.s, "/"), "/.git"), ".git")
		if i := strings.LastIndexAny(s, "/:"); i >= 0 {
			s = s[i+1:]
		}
		if s == "" || s == "." || s == ".." {
			return field{}, false
		}
		return word(s), true
	}
	return ops[1], true
}

// treeAt judges a tree whose contents are not known here landing at f (a
// clone, a worktree, a checkout-index prefix): written, and judged for the
// protected names it may hold.
func (a *analyzer) treeAt(f field, st *state, how string) {
	a.writePath(f, st, how)
	if f.dyn || st.remote {
		return
	}
	if abs, ok := cleanAbs(st.cwd, a.expandTilde(f.s)); ok {
		a.treeMayHold(abs, how)
	}
}

// applyPatches checks the patches git apply or git am reads: each file
// operand, or standard input when there is none (or "-").
func (a *analyzer) applyPatches(files []field, x gitCall, how string) {
	if len(files) == 0 || (len(files) == 1 && files[0].s == "-") {
		a.applyPatch(x.c.in, x.c.st, x.st, how)
	}
	for _, f := range files {
		if f.s != "-" {
			a.applyPatch(input{kind: inFile, file: f}, x.st, x.st, how)
		}
	}
}

// gitCheckout reads git checkout, restore and switch against their option
// tables: what overwrites uncommitted changes is a path operand (or a
// pathspec file, or -p over the whole tree), --force/--discard-changes,
// never a word that is an option's value.
func (a *analyzer) gitCheckout(sub string, rest []field, g *gitCtx, st *state) {
	table := gitCheckoutOpts
	switch sub {
	case "switch":
		table = gitSwitchOpts
	case "restore":
		table = gitRestoreOpts
	}
	p := parseGitOpts(rest, table)
	if sub != "switch" && !p.has("patch") && (p.has("unified", "inter-hunk-context", "auto-advance")) {
		// git refuses these without --patch before it touches anything
		// ("the option '--unified' requires '--patch'"); a git older than
		// them refuses them as unknown options.
		return
	}
	if p.has("force", "discard-changes") {
		a.gitDestroys(g, "git "+sub+" --force discards uncommitted changes", false)
	}
	if sub == "switch" {
		return
	}
	paths := p.paths
	if !p.dashdash {
		paths = p.operands
	} else if sub == "checkout" && len(p.operands) > 0 {
		// git checkout <rev> -- <paths>: the revision is before "--".
		paths = append(append([]field{}, p.operands[1:]...), p.paths...)
	} else if sub == "restore" {
		paths = append(append([]field{}, p.operands...), p.paths...)
	}
	if sub == "checkout" && !p.dashdash && len(paths) > 0 {
		// git checkout <branch> [<paths>]: the first word is a revision
		// unless it is a path in the work tree.
		first := paths[0]
		if !(first.s == "." || first.s == ":/" || first.s == "*" || pathExists(first, st)) {
			paths = paths[1:]
		}
	}
	if sub == "restore" && p.has("staged") && !p.has("worktree") {
		return
	}
	if sub == "checkout" && len(paths) > 0 && !p.has("patch") && p.has("track", "-l", "detach", "-b", "-B", "orphan") {
		// checkout_paths refuses these before it reads the index: "'--track'
		// cannot be used with updating paths", "Cannot update paths and
		// switch to branch 'x' at the same time".
		return
	}
	if p.has("pathspec-from-file") {
		a.gitDiscard(g, "git "+sub+" --pathspec-from-file overwrites the files it lists", false)
	} else if p.has("patch") && len(paths) == 0 {
		a.gitDiscard(g, "git "+sub+" --patch discards the hunks it is told to, anywhere in the work tree", false)
	}
	for _, f := range paths {
		a.writePath(f, st, "git "+sub)
		if !f.dyn && !st.remote {
			if abs, ok := cleanAbs(st.cwd, f.s); ok {
				a.treeMayHold(abs, "git "+sub)
			}
		}
		if f.s == "." || f.s == ":/" || f.s == "*" || f.s == ":" || f.dyn {
			a.gitDestroys(g, "git "+sub+" "+f.String()+" discards uncommitted changes", f.dyn)
			continue
		}
		a.gitDiscard(g, "git "+sub+" "+f.String()+" discards its uncommitted changes", false)
	}
}

// gitRm reads git rm against its option table. The files it removes are
// tracked, so HEAD and the index keep them; what it can lose is a file's
// uncommitted changes, which git rm refuses to remove without --force:
// with it those changes are gone, as after a checkout of the path
// (discard; the whole tree, as "git checkout ." is, destructive). --cached
// leaves the work tree alone and --dry-run only lists.
func (a *analyzer) gitRm(rest []field, g *gitCtx, st *state) {
	p := parseGitOpts(rest, gitRmOpts)
	if p.has("cached") {
		return
	}
	paths := append(append([]field{}, p.operands...), p.paths...)
	for _, f := range paths {
		a.removePath(f, st, "git rm", p.has("-r"))
	}
	if !p.has("force") || p.has("dry-run") {
		return
	}
	if p.has("pathspec-from-file") {
		a.gitDiscard(g, "git rm --force --pathspec-from-file deletes the uncommitted changes of the files it lists", false)
	}
	for _, f := range paths {
		if f.s == "." || f.s == ":/" || f.s == "*" || f.s == ":" || f.dyn {
			a.gitDestroys(g, "git rm --force "+f.String()+" deletes uncommitted changes", f.dyn)
			continue
		}
		a.gitDiscard(g, "git rm --force "+f.String()+" deletes its uncommitted changes", false)
	}
}

func pathExists(f field, st *state) bool {
	if f.dyn {
		return false
	}
	p, ok := cleanAbs(st.cwd, f.s)
	if !ok {
		return false
	}
	_, err := os.Lstat(p)
	return err == nil
}

func (a *analyzer) gitRemoteCmd(sub string, rest []field, g *gitCtx, st *state, c *cmd, depth int) {
	p := parseOpts(rest, optSpec{short: "obucj", long: []string{"origin", "branch", "upload-pack", "reference", "reference-if-able",
		"separate-git-dir", "depth", "shallow-since", "shallow-exclude", "config", "template", "jobs", "filter", "server-option",
		"bundle-uri", "ref-format", "exec", "remote", "output", "prefix", "format", "recurse-submodules-default", "negotiation-tip", "refmap"}})
	for _, v := range p.values("-u", "--upload-pack", "--exec") {
		a.runsText(v, &cmd{st: st, env: c.env, depth: depth}, "git "+sub+" --upload-pack")
	}
	if sub == "clone" {
		for _, kv := range p.values("-c", "--config") {
			k, v, _ := strings.Cut(kv.s, "=")
			if gitExecKey(strings.ToLower(k)) {
				a.add(ScopeEscalation, false, "git clone -c %s sets a command git runs later", k)
			}
			a.gitConfigExec(strings.ToLower(k), field{s: v, dyn: kv.dyn}, c)
		}
		if dest, ok := cloneDest(p.operands); ok {
			a.treeAt(dest, st, "git clone")
		}
	}
	if sub == "archive" {
		if o, ok := p.value("-o", "--output"); ok {
			a.writePath(o, st, "git archive --output")
		}
	}
	for _, f := range p.operands {
		if strings.HasPrefix(f.s, "ext::") {
			a.all(fmt.Sprintf("git %s with an ext:: remote runs a command", sub))
		}
	}
}

var pushLong = []string{"all", "branches", "mirror", "tags", "follow-tags", "no-follow-tags", "dry-run", "porcelain", "delete",
	"prune", "force", "force-with-lease", "no-force-with-lease", "force-if-includes", "no-force-if-includes", "repo",
	"set-upstream", "thin", "no-thin", "quiet", "verbose", "progress", "no-progress", "recurse-submodules",
	"no-recurse-submodules", "verify", "no-verify", "signed", "no-signed", "atomic", "no-atomic", "push-option",
	"receive-pack", "exec", "ipv4", "ipv6"}

func (a *analyzer) gitPush(args []field, g *gitCtx, c *cmd, depth int) {
	var force, mirror, all, tags, del, prune, dry, dynOpt bool
	var forceHow string
	var ops []field
	var repo *field  // --repo
	dynRepo := false // a word only known at run time stood where the repository may be
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.dyn && f.optLike():
			dynOpt = true
			dynRepo = dynRepo || (len(ops) == 0 && repo == nil)
		case f.s == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(f.s, "--"):
			name, val, eq := strings.Cut(f.s[2:], "=")
			cands := longPrefix(name, pushLong)
			for _, k := range cands {
				switch k {
				case "force", "force-with-lease", "force-if-includes":
					force, forceHow = true, f.s
				case "mirror":
					mirror = true
				case "all", "branches":
					all = true
				case "tags":
					tags = true
				case "delete":
					del = true
				case "prune":
					prune = true
				}
			}
			if len(cands) == 1 {
				switch cands[0] {
				case "dry-run":
					dry = true
				case "repo", "push-option", "receive-pack", "exec":
					v := field{s: val, dyn: f.dyn}
					if !eq && i+1 < len(args) {
						i++
						v = args[i]
					}
					if cands[0] == "repo" {
						repo = &v
					}
					if cands[0] == "receive-pack" || cands[0] == "exec" {
						// For a remote on this machine git runs it here.
						a.runsText(v, &cmd{st: c.st, env: c.env, depth: depth}, "git push --receive-pack")
					}
				}
			}
		case strings.HasPrefix(f.s, "-") && len(f.s) > 1:
			cl := f.s[1:]
			for j := 0; j < len(cl); j++ {
				switch cl[j] {
				case 'f':
					force, forceHow = true, f.s
				case 'd':
					del = true
				case 'n':
					dry = true
				case 'o':
					if j == len(cl)-1 {
						i++
					}
					j = len(cl)
				}
			}
		default:
			ops = append(ops, f)
		}
	}
	if dry {
		return // a dry run transmits nothing
	}
	switch {
	case repo != nil:
	case dynRepo:
		repo = &field{s: dynMark, dyn: true}
	case len(ops) > 0:
		repo = &ops[0]
	}
	if repo != nil {
		a.pushDestination(*repo)
	}
	if dynOpt {
		a.add(PushForce, true, "git push with options only known at run time")
		a.add(PushProtected, true, "git push with options only known at run time")
	}
	if force {
		a.add(PushForce, false, "git push %s", forceHow)
	}
	if mirror {
		a.add(PushForce, false, "git push --mirror overwrites and deletes remote refs")
		a.add(PushProtected, false, "git push --mirror includes the protected branches")
	}
	if prune {
		a.add(PushForce, false, "git push --prune deletes remote branches")
	}
	if all {
		a.add(PushProtected, false, "git push --all includes the protected branches")
	}
	if tags {
		a.add(Publish, false, "git push --tags publishes tags")
	}
	var refspecs []field
	if len(ops) > 0 {
		refspecs = ops[1:]
	}
	if len(refspecs) == 0 && !all && !mirror && !tags && !del {
		// Without a refspec git pushes what remote.NAME.push says, when
		// the command sets it (-c, GIT_CONFIG_KEY_n), else the current
		// branch.
		var keys []string
		for k := range g.config {
			if strings.HasPrefix(k, "remote.") && strings.HasSuffix(k, ".push") {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			a.refspec(g.config[k], false, g)
		}
		if br := a.currentBranch(g); len(keys) == 0 && br != "" && a.protectedBranch(br) {
			a.add(PushProtected, false, "git push without a refspec pushes the current branch %s", br)
		}
	}
	for _, r := range refspecs {
		a.refspec(r, del, g)
	}
}

// pushDestination judges where a push goes: a repository named by its
// address, or a remote this command pointed at one, is not a remote the
// repository was set up with, and the history leaves for it.
func (a *analyzer) pushDestination(r field) {
	switch {
	case r.dyn:
		a.add(EgressOther, true, "git push to a repository only known at run time (%s)", r)
	case gitAddress(r.s):
		a.add(EgressOther, false, "git push %s sends the history to a repository named by its address, not a configured remote", r.s)
	case slices.Contains(a.remotes, r.s):
		a.add(EgressOther, false, "git push %s: this command pointed the remote at a new address", r.s)
	}
}

// gitAddress reports whether a repository argument is another host's
// address (a URL other than file://, or host:path as scp writes it) rather
// than a remote's name or a path here.
func gitAddress(s string) bool {
	if i := strings.Index(s, "://"); i > 0 {
		return !strings.EqualFold(s[:i], "file")
	}
	return remoteOperand(word(s))
}

// gitRemote records a remote pointed at an address (git remote add NAME
// URL, git remote set-url NAME URL), so that a later push to it is judged
// by where it goes.
func (a *analyzer) gitRemote(args []field) {
	p := parseOpts(args, optSpec{short: "tm", long: []string{"track", "master", "mirror"}})
	if len(p.operands) < 3 {
		return
	}
	switch verb, name, url := p.operands[0], p.operands[1], p.operands[2]; {
	case verb.dyn || name.dyn:
	case verb.s == "add" || verb.s == "set-url":
		if url.dyn || gitAddress(url.s) {
			a.remotes = append(a.remotes, name.s)
		}
	}
}

var versionTag = lazy(`^v?[0-9]+(\.[0-9]+)+([-+][0-9A-Za-z.+-]+)?$|^v[0-9]+$`)

// refspec judges one push refspec.
func (a *analyzer) refspec(r field, del bool, g *gitCtx) {
	if r.dyn {
		a.add(PushProtected, true, "git push %s: the refspec is only known at run time", r)
		a.add(PushForce, true, "git push %s: the refspec is only known at run time", r)
		return
	}
	s := r.s
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		a.add(PushForce, false, "git push %s (a leading + forces the update)", r.s)
		s = rest
	}
	if s == ":" {
		a.add(PushProtected, false, "git push %s pushes every matching branch", r.s)
		return
	}
	src, dst, colon := strings.Cut(s, ":")
	switch {
	case del:
		src, dst = "", s
	case !colon:
		dst = src
	}
	for _, t := range a.tags {
		if src == t || src == "refs/tags/"+t {
			a.add(Publish, false, "git push %s publishes a tag created in this command", r.s)
		}
	}
	if strings.HasPrefix(src, "refs/tags/") || strings.HasPrefix(dst, "refs/tags/") || (!colon && versionTag.MatchString(src)) {
		a.add(Publish, false, "git push %s publishes a tag", r.s)
		return
	}
	if !colon && !del && (src == "HEAD" || src == "@") {
		dst = a.currentBranch(g)
		if dst == "" {
			return
		}
	}
	if pre, suf, glob := strings.Cut(dst, "*"); glob {
		// A pattern refspec (refs/*:refs/*, refs/heads/*:refs/heads/*)
		// pushes every ref it matches; git's * crosses slashes.
		matches := func(ref string) bool {
			return len(ref) >= len(pre)+len(suf) && strings.HasPrefix(ref, pre) && strings.HasSuffix(ref, suf)
		}
		found := false
		for _, b := range a.branches {
			if !hasMeta(b) && (matches("refs/heads/"+b) || matches(b)) {
				a.add(PushProtected, false, "git push %s: its pattern includes the protected branch %s", r.s, b)
				found = true
				break
			}
		}
		if strings.HasPrefix(pre, "refs/tags/") || strings.HasPrefix("refs/tags/", pre) {
			a.add(Publish, false, "git push %s: its pattern includes tags", r.s)
			found = true
		}
		if found {
			return
		}
		// Else judged as a name below (a protected pattern such as
		// release/* itself).
	}
	if strings.HasPrefix(dst, "refs/") && !strings.HasPrefix(dst, "refs/heads/") {
		return // refs/for/main and other namespaces are not the branch
	}
	b := strings.TrimPrefix(strings.TrimPrefix(dst, "refs/heads/"), "heads/")
	if !a.protectedBranch(b) {
		if b != "" && (del || (colon && src == "")) {
			a.add(BranchDelete, false, "git push %s deletes the remote branch %s", r.s, b)
		}
		return
	}
	if del || (colon && src == "") {
		a.add(PushProtected, false, "git push %s deletes the protected branch %s", r.s, b)
		return
	}
	a.add(PushProtected, false, "git push %s updates the protected branch %s", r.s, b)
}

func (a *analyzer) protectedBranch(b string) bool {
	for _, p := range a.branches {
		if strings.EqualFold(b, p) {
			return true
		}
		if hasMeta(b) {
			if ok, _ := path.Match(b, p); ok {
				return true
			}
		}
	}
	return false
}

// currentBranch reads HEAD of the repository git would use; "" when it is
// unknown or detached.
func (a *analyzer) currentBranch(g *gitCtx) string {
	key := g.gitDir + "\x00" + g.dir
	if b, ok := a.heads[key]; ok {
		return b
	}
	b := ""
	gitDir := g.gitDir
	if gitDir == "" && g.dir != "" {
		gitDir = findGitDir(g.dir)
	}
	if gitDir != "" {
		if head, ok := readSmall(filepath.Join(gitDir, "HEAD"), 4096); ok {
			if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/"); ok {
				b = ref
			}
		}
	}
	a.heads[key] = b
	return b
}

// findGitDir walks up from dir to the repository's git directory, following
// the "gitdir:" file of a linked worktree or submodule.
func findGitDir(dir string) string {
	for range 64 {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				return dotgit
			}
			if b, ok := readSmall(dotgit, 4096); ok {
				if p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
					if !filepath.IsAbs(p) {
						p = filepath.Join(dir, p)
					}
					return filepath.Clean(p)
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	return ""
}

// gitExecKey reports whether a configuration key makes git run a command or
// changes where it pushes.
func gitExecKey(k string) bool {
	switch k {
	case "core.hookspath", "core.sshcommand", "core.fsmonitor", "core.pager", "core.editor", "core.askpass",
		"core.gitproxy", "sequence.editor", "credential.helper", "diff.external", "gpg.program",
		"uploadpack.packobjectshook", "include.path", "init.templatedir", "core.worktree":
		return true
	}
	for _, pre := range []string{"alias.", "pager.", "filter.", "includeif.", "url."} {
		if strings.HasPrefix(k, pre) {
			return true
		}
	}
	sec, rest, _ := strings.Cut(k, ".")
	_, name := path.Split(strings.ReplaceAll(rest, ".", "/"))
	switch sec {
	case "diff":
		return name == "textconv" || name == "command"
	case "merge":
		return name == "driver"
	case "credential":
		return name == "helper"
	case "gpg":
		return name == "program"
	case "remote":
		return name == "push" || name == "receivepack" || name == "uploadpack" || name == "pushurl" || name == "proxy"
	}
	return false
}

// gitConfig matches writes of git configuration: the global and system
// files are self-mod (they reach every repository and every later session),
// repository settings that run commands are scope-escalation.
func (a *analyzer) gitConfig(args []field, g *gitCtx, st *state) {
	p := parseOpts(args, optSpec{short: "f", long: []string{"file", "blob", "type", "default", "comment", "value"}})
	ops := p.operands
	sub := ""
	if len(ops) > 0 {
		switch ops[0].s {
		case "get", "set", "unset", "list", "edit", "rename-section", "remove-section":
			sub, ops = ops[0].s, ops[1:]
		}
	}
	read := p.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool") || sub == "get" || sub == "list"
	write := p.has("--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "--edit", "-e") ||
		sub == "set" || sub == "unset" || sub == "edit" || sub == "rename-section" || sub == "remove-section" ||
		(!read && sub == "" && len(ops) >= 2)
	if p.dyn {
		a.add(SelfMod, true, "git config with options only known at run time")
	}
	if !write {
		return
	}
	key := ""
	if len(ops) > 0 {
		key = strings.ToLower(ops[0].s)
	}
	switch {
	case p.has("--global"):
		a.add(SelfMod, false, "git config --global %s changes the user's git configuration", key)
	case p.has("--system"):
		a.add(SelfMod, false, "git config --system %s changes the system git configuration", key)
	default:
		if f, ok := p.value("-f", "--file"); ok {
			a.writePath(f, st, "git config --file")
		}
		if gitExecKey(key) || (len(ops) > 0 && ops[0].dyn) {
			a.add(ScopeEscalation, false, "git config %s sets a command or destination git uses later", key)
		}
		if strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".push") && len(ops) > 1 {
			_, dst, _ := strings.Cut(strings.TrimPrefix(ops[1].s, "+"), ":")
			if a.protectedBranch(strings.TrimPrefix(dst, "refs/heads/")) {
				a.add(PushProtected, false, "git config %s makes later pushes go to %s", key, dst)
			}
		}
	}
}
