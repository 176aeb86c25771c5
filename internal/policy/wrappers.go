package policy

// This file holds the wrappers: programs (sudo, env, xargs, timeout, …)
// that run another command, unwrapped before that command is judged.

import (
	"strings"
	"sync"
)

// wrapper unwraps a command that runs another command. It returns the inner
// command (nil when there is none) and the state and input it runs with.
type wrapper func(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input)

// condaRun unwraps conda run; conda's other verbs run nothing.
var condaRun = verbRun([]string{"run"}, optSpec{short: "np", long: []string{"name", "prefix", "cwd"}})

// wrappers is filled on first use (initWrappers), see handlers.
var (
	wrappers     map[string]wrapper
	wrappersOnce sync.Once
)

func initWrappers() {
	simple := func(sp optSpec, skip int) wrapper {
		return func(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
			sp.posix = true
			p := parseOpts(argv[1:], sp)
			rest := p.operands
			if len(rest) < skip {
				return nil, st, in
			}
			return rest[skip:], st, in
		}
	}
	escalate := func(why string, w wrapper) wrapper {
		return func(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
			next, st2, in2 := w(a, name, argv, env, st, in, depth)
			if len(next) > 0 {
				a.add(ScopeEscalation, false, "%s %s", name, why)
			}
			return next, st2, in2
		}
	}
	wrappers = map[string]wrapper{
		"sudo":      wrapSudo,
		"sudoedit":  wrapSudo,
		"doas":      wrapDoas,
		"su":        wrapSu,
		"runuser":   wrapSu,
		"pkexec":    escalate("runs a command with another user's privileges", simple(optSpec{long: []string{"user"}}, 0)),
		"run0":      escalate("runs a command with another user's privileges", simple(optSpec{short: "ugD", long: []string{"user", "group", "nice", "chdir", "setenv", "unit", "property", "description", "slice", "machine", "background"}}, 0)),
		"env":       wrapEnv,
		"command":   wrapCommand,
		"builtin":   simple(optSpec{}, 0),
		"exec":      simple(optSpec{short: "a"}, 0),
		"time":      wrapTime,
		"nohup":     escalate("keeps the command running after the session ends", simple(optSpec{}, 0)),
		"nice":      simple(optSpec{short: "n", long: []string{"adjustment"}}, 0),
		"ionice":    wrapIonice,
		"chrt":      wrapChrt,
		"timeout":   simple(optSpec{short: "sk", long: []string{"signal", "kill-after"}}, 1),
		"stdbuf":    simple(optSpec{short: "ioe", long: []string{"input", "output", "error"}}, 0),
		"setsid":    escalate("detaches the command from the session", simple(optSpec{}, 0)),
		"flock":     wrapFlock,
		"unbuffer":  simple(optSpec{}, 0),
		"script":    wrapScript,
		"watch":     wrapWatch,
		"xargs":     wrapXargs,
		"parallel":  wrapParallel,
		"taskset":   wrapTaskset,
		"daemonize": escalate("runs the command as a daemon", simple(optSpec{short: "ceEoplu"}, 0)),
		"systemd-run": escalate("starts the command as a system service", simple(optSpec{short: "upEHMS", long: []string{"unit", "property", "description", "slice", "setenv", "uid", "gid",
			"working-directory", "on-active", "on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar",
			"timer-property", "path-property", "socket-property", "host", "machine", "nice", "service-type"}}, 0)),
		"caffeinate":       simple(optSpec{short: "tw"}, 0),
		"chronic":          simple(optSpec{}, 0),
		"proxychains":      simple(optSpec{short: "f"}, 0),
		"proxychains4":     simple(optSpec{short: "f"}, 0),
		"torsocks":         simple(optSpec{short: "uapP"}, 0),
		"tsocks":           simple(optSpec{}, 0),
		"fakeroot":         simple(optSpec{short: "lsib", long: []string{"lib", "faked"}}, 0),
		"faketime":         simple(optSpec{}, 1),
		"catchsegv":        simple(optSpec{}, 0),
		"dbus-run-session": simple(optSpec{}, 0),
		"strace":           wrapTrace,
		"ltrace":           wrapTrace,
		"ssh-agent":        wrapSSHAgent,
		"sg":               wrapSg,
		"busybox":          simple(optSpec{}, 0),
		"chroot":           escalate("runs a command in another root directory", simple(optSpec{long: []string{"userspec", "groups"}}, 1)),
		// See envrunners.go.
		"xvfb-run": simple(optSpec{short: "nsfepw", long: []string{"server-num", "server-args", "auth-file", "error-file", "xauth-protocol", "wait"}}, 0),
		"firejail": simple(optSpec{}, 0), // its options take their values after "="
		"valgrind": simple(optSpec{}, 0),
		"unshare": simple(optSpec{short: "SGRw", long: []string{"setuid", "setgid", "root", "wd", "propagation", "setgroups", "map-user", "map-group",
			"map-users", "map-groups", "load-interp", "monotonic", "boottime"}}, 0),
		"nsenter": escalate("enters another process's namespaces", simple(optSpec{short: "tSG", long: []string{"target", "setuid", "setgid"}}, 0)),
		"schroot": escalate("runs a command in another root directory", simple(optSpec{short: "cudn", long: []string{"chroot", "user", "directory", "session-name", "option"}}, 0)),
		"proot":   simple(optSpec{short: "rbwqkvm", long: []string{"rootfs", "bind", "mount", "cwd", "qemu", "kernel-release", "verbose"}}, 0),
		"bwrap":   wrapBwrap,
		"entr":    wrapEntr,
		"rlwrap":  simple(optSpec{short: "bCDfgHlMOPqsStwz"}, 0),
		"winpty":  simple(optSpec{}, 0),
		"dotenv":  simple(optSpec{short: "evp"}, 0),
		"pipenv":  verbRun([]string{"run"}, optSpec{}),
		"rye":     verbRun([]string{"run"}, optSpec{}),
		"asdf":    verbRun([]string{"exec"}, optSpec{}),
		"devbox":  verbRun([]string{"run"}, optSpec{short: "c", long: []string{"config", "environment"}}),
		"conda": func(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
			a.condaConfig(&cmd{name: name, argv: argv, args: argv[1:], env: env, st: st, in: in, depth: depth})
			return condaRun(a, name, argv, env, st, in, depth)
		},
		"mamba":      verbRun([]string{"run"}, optSpec{short: "np", long: []string{"name", "prefix", "cwd"}}),
		"micromamba": verbRun([]string{"run"}, optSpec{short: "npae", long: []string{"name", "prefix", "cwd", "attach", "env"}}),
		"pixi":       verbRun([]string{"run"}, optSpec{short: "e", long: []string{"environment", "manifest-path"}}),
		"mise":       wrapMise,
		"nix":        wrapNix,
		"nix-shell":  wrapNix,
	}
	// GNU coreutils under their Homebrew names.
	for _, n := range []string{"timeout", "nice", "nohup", "stdbuf", "env", "xargs", "chroot", "time"} {
		wrappers["g"+n] = wrappers[n]
	}
}

func wrapSudo(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "CDgpRrtTUu", posix: true,
		long: []string{"chdir", "chroot", "close-from", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user"}})
	rest := p.operands
	if len(rest) > 0 && rest[0].s == "-" && !rest[0].dyn {
		rest = rest[1:] // "env -" is env -i
	}
	for _, u := range p.values("-u", "--unset") {
		delete(env, u.s)
	}
	// NAME=value operands are the program's environment, as prefixes are
	// (a handler reads $PAGER, GIT_SSH_COMMAND, BASH_ENV from it). env
	// takes any operand holding "=" as one, whatever its name: a name no
	// shell could assign (BASH_FUNC_ls%%, which bash imports as a function)
	// is still not the command.
	for len(rest) > 0 && !rest[0].dyn && strings.Contains(rest[0].s, "=") {
		k, v, _ := strings.Cut(rest[0].s, "=")
		if env != nil {
			env[k] = word(v)
		}
		rest = rest[1:]
	}
	if name == "sudoedit" || p.has("-e", "--edit") {
		a.add(ScopeEscalation, false, "%s edits files as another user", name)
		for _, f := range rest {
			a.writePath(f, st, name)
		}
		return nil, st, in
	}
	if len(rest) == 0 {
		if p.has("-i", "-s", "--login", "--shell") {
			a.add(ScopeEscalation, false, "%s starts a shell as another user", name)
		}
		return nil, st, in
	}
	a.add(ScopeEscalation, false, "%s runs a command as another user", name)
	if d, ok := p.value("-D", "--chdir"); ok {
		st = st.clone()
		st.setCwd(dirOf(d, st))
	}
	return rest, st, in
}

func dirOf(d field, st *state) string {
	if d.dyn {
		return ""
	}
	p, ok := cleanAbs(st.cwd, d.s)
	if !ok {
		return ""
	}
	return p
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && validName(name)
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func wrapDoas(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "uCa", posix: true})
	if p.has("-C") {
		return nil, st, in // checks a configuration file
	}
	if len(p.operands) == 0 {
		if p.has("-s") {
			a.add(ScopeEscalation, false, "doas starts a shell as another user")
		}
		return nil, st, in
	}
	a.add(ScopeEscalation, false, "doas runs a command as another user")
	return p.operands, st, in
}

func wrapSu(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	args := argv[1:]
	login := false
	var clean []field
	for _, f := range args {
		if f.s == "-" && !f.dyn {
			login = true
			continue
		}
		clean = append(clean, f)
	}
	p := parseOpts(clean, optSpec{short: "cgGsuw", long: []string{"command", "group", "supp-group", "shell", "user", "whitelist-environment"}})
	a.add(ScopeEscalation, false, "%s runs as another user", name)
	login = login || p.has("-l", "--login")
	child := a.childState(st, env)
	if login {
		child.setCwd("")
	}
	if c, ok := p.value("-c", "--command"); ok {
		if c.dyn {
			a.all(name + " -c runs text only known at run time")
		}
		a.script(dynText(c.s), child, depth+1, name+" -c")
		return nil, st, in
	}
	if name == "runuser" && p.has("-u", "--user") {
		return p.operands, st, in
	}
	return nil, st, in
}

func wrapEnv(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "uCSP", posix: true,
		long: []string{"unset", "chdir", "split-string", "default-signal", "ignore-signal", "block-signal"}})
	rest := p.operands
	if len(rest) > 0 && rest[0].s == "-" && !rest[0].dyn {
		rest = rest[1:] // "env -" is env -i
	}
	for _, u := range p.values("-u", "--unset") {
		delete(env, u.s)
	}
	// NAME=value operands are the program's environment, as prefixes are
	// (a handler reads $PAGER, GIT_SSH_COMMAND, BASH_ENV from it). env
	// takes any operand holding "=" as one, whatever its name: a name no
	// shell could assign (BASH_FUNC_ls%%, which bash imports as a function)
	// is still not the command.
	for len(rest) > 0 && !rest[0].dyn && strings.Contains(rest[0].s, "=") {
		k, v, _ := strings.Cut(rest[0].s, "=")
		if env != nil {
			env[k] = word(v)
		}
		rest = rest[1:]
	}
	if d, ok := p.value("-C", "--chdir"); ok {
		st = st.clone()
		st.setCwd(dirOf(d, st))
	}
	if s, ok := p.value("-S", "--split-string"); ok {
		if s.dyn {
			a.all("env -S splits text only known at run time")
		}
		text := dynText(s.s)
		if len(rest) > 0 {
			text += " " + quoteJoin(rest)
		}
		a.script(text, st.clone(), depth+1, "env -S")
		return nil, st, in
	}
	return rest, st, in
}

func wrapCommand(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{posix: true})
	if p.has("-v", "-V") {
		return nil, st, in // looks the name up, runs nothing
	}
	return p.operands, st, in
}

func wrapTime(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "fo", long: []string{"format", "output"}, posix: true})
	if o, ok := p.value("-o", "--output"); ok {
		a.writePath(o, st, "time -o")
	}
	return p.operands, st, in
}

func wrapIonice(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, posix: true})
	if p.has("-p", "-P", "-u", "--pid", "--pgid", "--uid") {
		return nil, st, in
	}
	return p.operands, st, in
}

func wrapChrt(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, posix: true})
	if p.has("-p", "--pid", "-m", "--max") || len(p.operands) < 2 {
		return nil, st, in
	}
	return p.operands[1:], st, in
}

func wrapTaskset(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{posix: true})
	if p.has("-p", "--pid") || len(p.operands) < 2 {
		return nil, st, in
	}
	return p.operands[1:], st, in
}

func wrapTrace(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "abeEIoOpPsSuUXA", posix: true})
	if p.has("-p") {
		return nil, st, in
	}
	if o, ok := p.value("-o"); ok {
		a.writePath(o, st, name+" -o")
	}
	return p.operands, st, in
}

func wrapSSHAgent(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "aEPt", posix: true})
	if p.has("-k") {
		return nil, st, in
	}
	return p.operands, st, in
}

func wrapFlock(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "wEc", long: []string{"timeout", "wait", "conflict-exit-code", "command"}, posix: true})
	// The lock file is opened for writing (created if missing) and held: a
	// lock on fixrail's receipt log would stall every hook, so it counts as
	// writing the file. A bare number is a descriptor, not a file.
	if len(p.operands) > 0 && (p.operands[0].dyn || strings.Trim(p.operands[0].s, "0123456789") != "") {
		a.writePath(p.operands[0], st, "flock (it creates and holds the file)")
	}
	c, ok := p.value("-c", "--command")
	if !ok && len(p.operands) > 2 && (p.operands[1].s == "-c" || p.operands[1].s == "--command") {
		// flock FILE -c COMMAND: the usual order, after the lock file.
		c, ok = p.operands[2], true
	}
	if ok {
		if c.dyn {
			a.all("flock -c runs text only known at run time")
		}
		a.script(dynText(c.s), a.childState(st, env), depth+1, "flock -c")
		return nil, st, in
	}
	if len(p.operands) < 2 {
		return nil, st, in
	}
	return p.operands[1:], st, in
}

func wrapScript(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "cEIOBTmo", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}})
	if c, ok := p.value("-c", "--command"); ok {
		if c.dyn {
			a.all("script -c runs text only known at run time")
		}
		a.script(dynText(c.s), a.childState(st, env), depth+1, "script -c")
	}
	for _, f := range p.operands {
		a.writePath(f, st, "script")
	}
	return nil, st, in
}

func wrapWatch(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "nq", long: []string{"interval"}, posix: true})
	if len(p.operands) == 0 {
		return nil, st, in
	}
	if p.has("-x", "--exec") {
		return p.operands, st, in
	}
	// watch hands its arguments, joined by spaces, to sh -c.
	text := strings.Join(rawStrings(p.operands), " ")
	if anyDyn(p.operands) {
		a.all("watch runs text only known at run time")
	}
	a.script(dynText(text), a.childState(st, env), depth+1, "watch")
	return nil, st, in
}

func wrapXargs(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	args := argv[1:]
	repl := ""
	var rest []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn && f.optLike() {
			a.all("xargs options only known at run time")
			return nil, st, in
		}
		if f.s == "--" {
			rest = args[i+1:]
			break
		}
		if !f.optLike() {
			rest = args[i:]
			break
		}
		if v, ok := strings.CutPrefix(f.s, "--replace"); ok {
			repl = "{}"
			if r, ok := strings.CutPrefix(v, "="); ok {
				repl = r
			}
			continue
		}
		if strings.HasPrefix(f.s, "--") {
			n, _, eq := strings.Cut(f.s[2:], "=")
			switch n {
			case "arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var":
				if !eq {
					i++
				}
			}
			if n == "arg-file" {
				a.readPath(args[min(i, len(args)-1)], st, "xargs -a", false)
			}
			continue
		}
		switch c := f.s[1]; {
		case c == 'I':
			if len(f.s) > 2 {
				repl = f.s[2:]
			} else if i+1 < len(args) {
				i++
				repl = args[i].s
			}
		case c == 'J':
			// BSD: -J replstr puts the input where replstr stands.
			if len(f.s) > 2 {
				repl = f.s[2:]
			} else if i+1 < len(args) {
				i++
				repl = args[i].s
			}
		case c == 'i':
			repl = "{}"
			if len(f.s) > 2 {
				repl = f.s[2:]
			}
		case strings.IndexByte("aEdLnPs", c) >= 0:
			if len(f.s) == 2 {
				i++
			}
			if c == 'a' && i < len(args) {
				a.readPath(args[i], st, "xargs -a", false)
			}
		}
	}
	if len(rest) == 0 {
		return nil, st, in // echo
	}
	inner := make([]field, 0, len(rest)+1)
	for _, f := range rest {
		if repl != "" && strings.Contains(f.s, repl) {
			// What xargs reads stands where the replacement string was.
			f = field{s: strings.ReplaceAll(f.s, repl, dynMark), dyn: true, out: true}
		}
		inner = append(inner, f)
	}
	if repl == "" {
		// The arguments xargs reads are appended to the command.
		inner = append(inner, field{s: dynMark, dyn: true, out: true})
	}
	return inner, st, input{}
}

func wrapParallel(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	args := argv[1:]
	valued := set("-j", "-P", "-S", "-a", "-d", "-I", "-n", "-N", "-L", "-l", "-E", "--jobs", "--sshlogin", "--arg-file",
		"--colsep", "--delimiter", "--joblog", "--results", "--tmpdir", "--delay", "--timeout", "--max-args",
		"--max-lines", "--eof", "--basefile", "--workdir", "--env", "--sshloginfile", "--memfree", "--load")
	var tmpl []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.s == ":::" || f.s == "::::" || f.s == ":::+" || f.s == "::::+" {
			break
		}
		if len(tmpl) == 0 && f.optLike() && !f.dyn {
			if valued[f.s] {
				i++
			}
			continue
		}
		tmpl = append(tmpl, f)
	}
	if len(tmpl) == 0 {
		a.all("parallel runs commands it reads at run time")
		return nil, st, in
	}
	text := strings.Join(rawStrings(tmpl), " ")
	replaced := false
	for _, r := range parallelRepl {
		if strings.Contains(text, r) {
			replaced = true
			text = strings.ReplaceAll(text, r, "${__fixrail_runtime__}")
		}
	}
	if !replaced {
		text += " ${__fixrail_runtime__}"
	}
	if anyDyn(tmpl) {
		a.all("parallel runs text only known at run time")
	}
	a.script(dynText(text), a.childState(st, env), depth+1, "parallel")
	if len(tmpl) > 1 && !tmpl[0].dyn && shells.has(progName(tmpl[0].s)) {
		// GNU parallel joins the template into shell text (above), but
		// other parallels (moreutils, -q) run the words as argv: then
		// `bash -c 'rm -rf {}'` keeps its script whole, with the input
		// as a run-time value inside it. Both readings count.
		argv := make([]field, len(tmpl))
		for i, f := range tmpl {
			for _, r := range parallelRepl {
				f.s = strings.ReplaceAll(f.s, r, "${__fixrail_runtime__}")
			}
			argv[i] = f
		}
		a.command(argv, nil, a.childState(st, env), input{}, depth+1)
	}
	return nil, st, in
}

// parallelRepl are GNU parallel's replacement strings.
var parallelRepl = []string{"{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}"}

func wrapSg(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	args := argv[1:]
	if len(args) > 0 && args[0].s == "-" {
		args = args[1:]
	}
	if len(args) < 2 {
		return nil, st, in
	}
	rest := args[1:]
	if rest[0].s == "-c" {
		rest = rest[1:]
	}
	if anyDyn(rest) {
		a.all("sg runs text only known at run time")
	}
	a.script(dynText(strings.Join(rawStrings(rest), " ")), a.childState(st, env), depth+1, "sg")
	return nil, st, in
}
