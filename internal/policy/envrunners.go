package policy

import (
	"slices"
	"strings"
)

// Programs that run a command given to them: sandboxes and namespaces that
// keep this file system (bwrap, firejail, unshare, proot), tools that run
// it under another program (valgrind, xvfb-run, rlwrap, entr), and
// project-environment runners (uv run, poetry run, conda run, mise exec,
// direnv exec, nix develop -c). Each command runs here, on this file
// system, so it is judged as if typed. Containers (docker run, kubectl
// exec) are not among them: their command runs on another file system.

// verbRun unwraps NAME VERB [OPTION...] COMMAND...: the command after the
// verb's options, or nothing when the first operand is not one of verbs.
func verbRun(verbs []string, sp optSpec) wrapper {
	sp.posix = true
	return func(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
		i := firstOperand(argv[1:], "", nil)
		if i < 0 {
			return nil, st, in
		}
		v := argv[1+i]
		if v.dyn || !slices.Contains(verbs, v.s) {
			return nil, st, in
		}
		p := parseOpts(argv[2+i:], sp)
		if d, ok := p.value("--cwd", "--directory", "--chdir"); ok {
			st = st.clone()
			st.setCwd(dirOf(d, st))
		}
		return p.operands, st, in
	}
}

// envRun returns the handler of a tool that runs a command in a project's
// environment (uv run, poetry run): the command is judged as if typed;
// the tool's other verbs go to next.
func envRun(sp optSpec, next func(a *analyzer, c *cmd)) func(a *analyzer, c *cmd) {
	sp.posix = true
	return func(a *analyzer, c *cmd) {
		i := firstOperand(c.args, sp.short, sp.long)
		if i < 0 || c.args[i].dyn || c.args[i].s != "run" {
			next(a, c)
			return
		}
		p := parseOpts(c.args[i+1:], sp)
		st := c.st
		if d, ok := p.value("--directory", "-C"); ok { // uv's and poetry's: the command runs there
			st = st.clone()
			st.setCwd(dirOf(d, c.st))
		}
		if len(p.operands) > 0 {
			a.command(p.operands, c.env, st, c.in, c.depth+1)
		}
	}
}

// uvRunOpts are uv run's options that take a value.
var uvRunOpts = optSpec{short: "pCw", long: []string{"with", "with-editable", "with-requirements", "python", "directory", "project",
	"package", "env-file", "extra", "group", "only-group", "no-group", "index", "default-index", "index-url", "extra-index-url",
	"find-links", "index-strategy", "keyring-provider", "resolution", "prerelease", "exclude-newer", "link-mode", "config-setting",
	"refresh-package", "reinstall-package", "upgrade-package", "no-binary-package", "no-build-package", "cache-dir", "config-file",
	"color", "python-preference", "allow-insecure-host", "no-extra"}}

// wrapMise: mise exec|x [TOOL@VERSION...] -- COMMAND, or -c TEXT.
func wrapMise(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	if len(argv) >= 2 && argv[1].s == "trust" && !slices.ContainsFunc(argv[2:], func(f field) bool {
		return f.s == "--untrust" || f.s == "--ignore" || f.s == "--show"
	}) {
		// As direnv allow: the trusted file's env, templates and hooks
		// run on every cd, and its later edits with them.
		a.add(ScopeEscalation, false, "mise trust lets a config's env, templates and hooks run on every cd")
		return nil, st, in
	}
	if len(argv) < 2 || (argv[1].s != "exec" && argv[1].s != "x") {
		return nil, st, in
	}
	rest := argv[2:]
	for i, f := range rest {
		switch {
		case f.s == "--":
			return rest[i+1:], st, in
		case f.s == "-c" || f.s == "--command":
			if i+1 < len(rest) {
				a.runsText(rest[i+1], &cmd{st: st, env: env, depth: depth}, "mise exec -c")
			}
			return nil, st, in
		}
	}
	return nil, st, in
}

// direnvExec: direnv exec DIR COMMAND runs the command in DIR's
// environment (direnv's other verbs are its handler's).
func (a *analyzer) direnvExec(c *cmd) bool {
	if len(c.args) < 3 || c.args[0].s != "exec" {
		return false
	}
	st := c.st.clone()
	st.setCwd(dirOf(c.args[1], c.st))
	a.command(c.args[2:], c.env, st, c.in, c.depth+1)
	return true
}

// wrapNix: nix develop|shell … -c|--command COMMAND ARGS…, and
// nix-shell --run|--command TEXT.
func wrapNix(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	if name == "nix-shell" {
		for i, f := range argv[1:] {
			if (f.s == "--run" || f.s == "--command") && i+2 < len(argv) {
				a.runsText(argv[i+2], &cmd{st: st, env: env, depth: depth}, "nix-shell "+f.s)
				return nil, st, in
			}
		}
		return nil, st, in
	}
	if len(argv) < 2 || (argv[1].s != "develop" && argv[1].s != "shell") {
		return nil, st, in
	}
	for i, f := range argv[2:] {
		if f.s == "-c" || f.s == "--command" {
			return argv[3+i:], st, in
		}
	}
	return nil, st, in
}

// wrapEntr: entr [-acdnprz] COMMAND, or with -s one shell text.
func wrapEntr(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{posix: true})
	if p.has("-s") && len(p.operands) > 0 {
		a.runsText(p.operands[0], &cmd{st: st, env: env, depth: depth}, "entr -s")
		return nil, st, in
	}
	return p.operands, st, in
}

// bwrapArgs is how many words each bwrap option takes.
var bwrapArgs = map[string]int{
	"--bind": 2, "--bind-try": 2, "--dev-bind": 2, "--dev-bind-try": 2, "--ro-bind": 2, "--ro-bind-try": 2,
	"--symlink": 2, "--setenv": 2, "--chmod": 2, "--file": 2, "--bind-data": 2, "--ro-bind-data": 2, "--bind-fd": 2, "--ro-bind-fd": 2,
	"--args": 1, "--argv0": 1, "--uid": 1, "--gid": 1, "--hostname": 1, "--chdir": 1, "--unsetenv": 1, "--lock-file": 1,
	"--sync-fd": 1, "--info-fd": 1, "--json-status-fd": 1, "--userns": 1, "--userns2": 1, "--pidns": 1, "--seccomp": 1,
	"--add-seccomp-fd": 1, "--exec-label": 1, "--file-label": 1, "--proc": 1, "--dev": 1, "--tmpfs": 1, "--mqueue": 1,
	"--dir": 1, "--remount-ro": 1, "--cap-add": 1, "--cap-drop": 1, "--perms": 1, "--size": 1, "--block-fd": 1,
	"--userns-block-fd": 1, "--overlay-src": 1, "--tmp-overlay": 1, "--ro-overlay": 1, "--overlay": 3,
}

// wrapBwrap: bwrap [OPTION...] COMMAND. Its options take zero to three
// words; an unknown one (a newer bwrap's) leaves the command unknown.
func wrapBwrap(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	rest := argv[1:]
	for i := 0; i < len(rest); i++ {
		f := rest[i]
		switch {
		case f.dyn && f.optLike():
			a.all("bwrap options only known at run time")
			return nil, st, in
		case f.s == "--":
			return rest[i+1:], st, in
		case !strings.HasPrefix(f.s, "--"):
			return rest[i:], st, in
		case strings.HasPrefix(f.s, "--unshare-") || strings.HasPrefix(f.s, "--share-") || slices.Contains([]string{"--die-with-parent",
			"--as-pid-1", "--new-session", "--clearenv", "--disable-userns", "--assert-userns-disabled", "--level-prefix"}, f.s):
		default:
			n, ok := bwrapArgs[f.s]
			if !ok {
				a.all("bwrap " + f.s + " is an option the hook does not know, so its command is unknown")
				return nil, st, in
			}
			i += n
		}
	}
	return nil, st, in
}

// expect -c TEXT and powershell -Command TEXT run code: read for the
// markers any interpreter's code is (see scanCode); expect's spawn, exec
// and system run programs, and an encoded PowerShell command is unread.
func (a *analyzer) expect(c *cmd) {
	for i, f := range c.args {
		if f.s == "-c" && i+1 < len(c.args) {
			a.tcl(c.args[i+1], "expect -c")
		}
	}
}

func (a *analyzer) powershell(c *cmd) {
	for i, f := range c.args {
		s := strings.ToLower(f.s)
		switch {
		case strings.HasPrefix(s, "-e") && strings.HasPrefix("-encodedcommand", s) && len(s) > 2:
			a.all(c.name + " -EncodedCommand runs code that is not read")
			return
		case (s == "-c" || s == "-command" || s == "/c") && i+1 < len(c.args):
			var code strings.Builder
			for _, g := range c.args[i+1:] {
				code.WriteString(g.s + " ")
				if g.dyn {
					code.WriteString(dynMark)
				}
			}
			a.scanCode("powershell", code.String(), c.name+" -Command")
			return
		}
	}
}

func containsWord(s string, words ...string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '[' || r == '{' }) {
		if slices.Contains(words, w) {
			return true
		}
	}
	return false
}
