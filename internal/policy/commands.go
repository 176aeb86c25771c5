package policy

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// command analyses one simple command after expansion: argv[0] is the
// program as written, env the VAR=x prefixes.
func (a *analyzer) command(argv []field, env map[string]field, st *state, in input, depth int) {
	for len(argv) > 0 {
		if !a.step() {
			return
		}
		if depth > maxDepth {
			a.all(fmt.Sprintf("wrappers nested more than %d levels deep", maxDepth))
			return
		}
		head := argv[0]
		if head.dyn {
			a.all(fmt.Sprintf("the command name %s is only known at run time", head))
			return
		}
		name := progName(head.s)
		a.keyRefs(argv[1:], st)
		if strings.ContainsAny(head.s, `/\`) {
			if a.isFixrail(head, st) {
				name = "fixrail"
			}
			a.runFile(head, st, depth)
		}
		w, ok := wrappers[name]
		if !ok {
			a.dispatch(name, argv, env, st, in, depth)
			return
		}
		var next []field
		next, st, in = w(a, name, argv, env, st, in, depth)
		argv = next
		depth++
	}
}

// keyRefs flags any argument that names a file under the approval key
// directory: whatever the command does with it, the agent has no business
// touching the key.
func (a *analyzer) keyRefs(args []field, st *state) {
	if a.keys == "" {
		return
	}
	for _, f := range args {
		if f.dyn {
			continue
		}
		s := f.s
		if strings.HasPrefix(s, "-") {
			_, v, ok := strings.Cut(s, "=")
			if !ok {
				continue
			}
			s = v
		} else if _, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(v, "/") {
			s = v // if=/path, key=/path
		}
		a.readPath(word(s), st, "an argument", false)
	}
}

func (a *analyzer) isFixrail(head field, st *state) bool {
	if len(a.env.FixrailBinaries) == 0 {
		return false
	}
	p, ok := cleanAbs(st.cwd, head.s)
	if !ok {
		return false
	}
	for _, b := range a.env.FixrailBinaries {
		if p == filepath.Clean(b) || a.resolve(p) == a.resolve(filepath.Clean(b)) {
			return true
		}
	}
	return false
}

// childState is the state of a new shell process started from st: it sees
// the same directory but only the variables of its environment.
func (a *analyzer) childState(st *state) *state {
	c := a.top()
	c.setCwd(st.cwd)
	c.remote = st.remote
	return c
}

// runFile looks into a program named by path: a script written earlier in
// the same command is unresolvable; a small shell script on disk is
// analysed; anything else is judged by its name like any program.
func (a *analyzer) runFile(head field, st *state, depth int) {
	if st.remote {
		return
	}
	p, ok := cleanAbs(st.cwd, head.s)
	if !ok {
		return
	}
	if a.written[p] {
		a.all(fmt.Sprintf("runs %s, which this command writes first", p))
		return
	}
	b, ok := readSmall(p, maxScript)
	if !ok || !shellScript(b) {
		return
	}
	a.scriptFromFile(string(b), p, a.childState(st), depth+1, "script "+p)
}

// maxScript bounds script files read from disk.
const maxScript = 64 << 10

// shellScript reports whether file contents would run as a shell script:
// a shell #! line, or no #! line and no NUL byte (exec falls back to sh).
func shellScript(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	line, ok := bytes.CutPrefix(b, []byte("#!"))
	if !ok {
		return true
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fs := strings.Fields(string(line))
	if len(fs) == 0 {
		return false
	}
	interp := progName(fs[0])
	if interp == "env" {
		for _, f := range fs[1:] {
			if !strings.HasPrefix(f, "-") {
				interp = progName(f)
				break
			}
		}
	}
	return shells[interp]
}

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "tcsh", "csh",
	"rbash", "ksh93", "pdksh", "oksh", "loksh")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// wrapper unwraps a command that runs another command. It returns the inner
// command (nil when there is none) and the state and input it runs with.
type wrapper func(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input)

var wrappers map[string]wrapper

func init() {
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
	}
}

func wrapSudo(a *analyzer, name string, argv []field, env map[string]field, st *state, in input, depth int) ([]field, *state, input) {
	p := parseOpts(argv[1:], optSpec{short: "CDgpRrtTUu", posix: true,
		long: []string{"chdir", "chroot", "close-from", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user"}})
	rest := p.operands
	if len(rest) > 0 && rest[0].s == "-" && !rest[0].dyn {
		rest = rest[1:] // "env -" is env -i
	}
	for len(rest) > 0 && !rest[0].dyn && isAssignment(rest[0].s) {
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
	child := a.childState(st)
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
	for len(rest) > 0 && !rest[0].dyn && isAssignment(rest[0].s) {
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
	if c, ok := p.value("-c", "--command"); ok {
		if c.dyn {
			a.all("flock -c runs text only known at run time")
		}
		a.script(dynText(c.s), a.childState(st), depth+1, "flock -c")
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
		a.script(dynText(c.s), a.childState(st), depth+1, "script -c")
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
	a.script(dynText(text), a.childState(st), depth+1, "watch")
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
			f = field{s: strings.ReplaceAll(f.s, repl, dynMark), dyn: true}
		}
		inner = append(inner, f)
	}
	if repl == "" {
		// The arguments xargs reads are appended to the command.
		inner = append(inner, field{s: dynMark, dyn: true})
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
	a.script(dynText(text), a.childState(st), depth+1, "parallel")
	if len(tmpl) > 1 && !tmpl[0].dyn && shells[progName(tmpl[0].s)] {
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
		a.command(argv, nil, a.childState(st), input{}, depth+1)
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
	a.script(dynText(strings.Join(rawStrings(rest), " ")), a.childState(st), depth+1, "sg")
	return nil, st, in
}

// dispatch analyses a command that is not a wrapper.
func (a *analyzer) dispatch(name string, argv []field, env map[string]field, st *state, in input, depth int) {
	args := argv[1:]
	if shells[name] {
		a.shell(name, args, st, in, depth)
		return
	}
	if h, ok := handlers[name]; ok {
		h(a, &cmd{name: name, argv: argv, args: args, env: env, st: st, in: in, depth: depth})
		return
	}
	switch {
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy"):
		a.python(&cmd{name: name, argv: argv, args: args, env: env, st: st, in: in, depth: depth})
	case strings.HasPrefix(name, "mkfs"):
		a.add(Destructive, false, "%s formats a file system", name)
	}
}

// cmd is a command being dispatched.
type cmd struct {
	name  string
	argv  []field
	args  []field
	env   map[string]field
	st    *state
	in    input
	depth int
}

var handlers map[string]func(a *analyzer, c *cmd)

func init() {
	handlers = map[string]func(a *analyzer, c *cmd){
		"eval":      (*analyzer).evalCmd,
		"source":    (*analyzer).sourceCmd,
		".":         (*analyzer).sourceCmd,
		"trap":      (*analyzer).trapCmd,
		"alias":     (*analyzer).aliasCmd,
		"cd":        (*analyzer).cdCmd,
		"pushd":     (*analyzer).cdCmd,
		"popd":      func(a *analyzer, c *cmd) { c.st.setCwd("") },
		"read":      forgetVars,
		"mapfile":   forgetVars,
		"readarray": forgetVars,
		"getopts":   forgetVars,
		"unset":     forgetVars,
		"printf":    forgetVars,
		"disown":    func(a *analyzer, c *cmd) { a.add(ScopeEscalation, false, "disown detaches a job from the session") },

		"git":  (*analyzer).git,
		"hub":  (*analyzer).git,
		"gh":   (*analyzer).gh,
		"glab": (*analyzer).glab,

		"rm":       (*analyzer).rm,
		"unlink":   removesAll,
		"rmdir":    removesAll,
		"shred":    (*analyzer).shred,
		"find":     (*analyzer).find,
		"cp":       (*analyzer).cp,
		"mv":       (*analyzer).cp,
		"install":  (*analyzer).cp,
		"ln":       (*analyzer).ln,
		"tee":      writesAll,
		"touch":    (*analyzer).touch,
		"truncate": (*analyzer).touch,
		"mkdir":    (*analyzer).touch,
		"mkfifo":   (*analyzer).touch,
		"mknod":    (*analyzer).touch,
		"sponge":   writesAll,
		"chmod":    (*analyzer).chmod,
		"chown":    (*analyzer).chown,
		"chgrp":    (*analyzer).chown,
		"chattr":   (*analyzer).chown,
		"setfacl":  (*analyzer).setfacl,
		"dd":       (*analyzer).dd,
		"sed":      (*analyzer).sed,
		"tar":      (*analyzer).tar,
		"zip":      (*analyzer).zip,
		"unzip":    (*analyzer).unzip,
		"yq":       (*analyzer).yq,
		"patch":    (*analyzer).patch,
		"grep":     (*analyzer).search,
		"egrep":    (*analyzer).search,
		"fgrep":    (*analyzer).search,
		"rg":       (*analyzer).search,
		"ag":       (*analyzer).search,
		"ack":      (*analyzer).search,
		"vi":       (*analyzer).editor,
		"vim":      (*analyzer).editor,
		"nvim":     (*analyzer).editor,
		"ex":       (*analyzer).editor,
		"ed":       (*analyzer).editor,
		"emacs":    (*analyzer).editor,
		"nano":     (*analyzer).editor,
		"pico":     (*analyzer).editor,
		"micro":    (*analyzer).editor,

		"wipefs":         destroys("wipes file system signatures"),
		"fdisk":          destroys("edits a partition table"),
		"sfdisk":         destroys("edits a partition table"),
		"cfdisk":         destroys("edits a partition table"),
		"parted":         destroys("edits a partition table"),
		"sgdisk":         destroys("edits a partition table"),
		"gdisk":          destroys("edits a partition table"),
		"terraform":      (*analyzer).terraform,
		"terragrunt":     (*analyzer).terraform,
		"pulumi":         (*analyzer).pulumi,
		"cdk":            (*analyzer).cdk,
		"serverless":     (*analyzer).cdk,
		"sls":            (*analyzer).cdk,
		"dropdb":         (*analyzer).dropdb,
		"mysqladmin":     (*analyzer).mysqladmin,
		"mariadb-admin":  (*analyzer).mysqladmin,
		"mongorestore":   (*analyzer).mongorestore,
		"rails":          (*analyzer).rails,
		"bundle":         (*analyzer).bundle,
		"django-admin":   (*analyzer).djangoAdmin,
		"prisma":         (*analyzer).prisma,
		"docker-compose": (*analyzer).dockerCompose,
		"podman-compose": (*analyzer).dockerCompose,
		"tofu":           (*analyzer).terraform,
		"kubectl":        (*analyzer).kubectl,
		"helm":           (*analyzer).helm,
		"psql":           (*analyzer).sql,
		"mysql":          (*analyzer).sql,
		"mariadb":        (*analyzer).sql,
		"sqlite3":        (*analyzer).sql,
		"mongosh":        (*analyzer).sql,
		"mongo":          (*analyzer).sql,
		"redis-cli":      (*analyzer).sql,

		"curl":             (*analyzer).curl,
		"wget":             (*analyzer).wget,
		"http":             (*analyzer).httpie,
		"https":            (*analyzer).httpie,
		"xh":               (*analyzer).httpie,
		"xhs":              (*analyzer).httpie,
		"nc":               egress("opens a network connection"),
		"ncat":             egress("opens a network connection"),
		"netcat":           egress("opens a network connection"),
		"socat":            egress("opens a network connection"),
		"telnet":           egress("opens a network connection"),
		"ftp":              egress("transfers files to another host"),
		"lftp":             egress("transfers files to another host"),
		"tftp":             egress("transfers files to another host"),
		"sftp":             egress("transfers files to another host"),
		"smbclient":        egress("transfers files to another host"),
		"ssh-copy-id":      egress("installs a key on another host"),
		"mosh":             egress("opens a shell on another host"),
		"rsh":              egress("opens a shell on another host"),
		"rlogin":           egress("opens a shell on another host"),
		"sendmail":         egress("sends mail"),
		"mail":             egress("sends mail"),
		"mailx":            egress("sends mail"),
		"mutt":             egress("sends mail"),
		"msmtp":            egress("sends mail"),
		"openssl":          (*analyzer).openssl,
		"ssh":              (*analyzer).ssh,
		"scp":              (*analyzer).scp,
		"rsync":            (*analyzer).rsync,
		"dig":              (*analyzer).lookup,
		"nslookup":         (*analyzer).lookup,
		"host":             (*analyzer).lookup,
		"ping":             (*analyzer).lookup,
		"ping6":            (*analyzer).lookup,
		"traceroute":       (*analyzer).lookup,
		"aws":              (*analyzer).aws,
		"gsutil":           (*analyzer).gsutil,
		"gcloud":           (*analyzer).gcloud,
		"az":               (*analyzer).az,
		"rclone":           (*analyzer).rclone,
		"s3cmd":            (*analyzer).s3cmd,
		"npm":              (*analyzer).npm,
		"pnpm":             (*analyzer).npm,
		"yarn":             (*analyzer).npm,
		"bun":              (*analyzer).npm,
		"npx":              (*analyzer).npx,
		"pnpx":             (*analyzer).npx,
		"bunx":             (*analyzer).npx,
		"cargo":            publishVerbs(map[string]bool{"publish": true, "yank": true, "owner": true}, "--dry-run", "-n"),
		"twine":            publishVerbs(map[string]bool{"upload": true, "register": true}),
		"poetry":           publishVerbs(map[string]bool{"publish": true}, "--dry-run"),
		"uv":               publishVerbs(map[string]bool{"publish": true}, "--dry-run"),
		"flit":             publishVerbs(map[string]bool{"publish": true}),
		"hatch":            publishVerbs(map[string]bool{"publish": true}),
		"pdm":              publishVerbs(map[string]bool{"publish": true}, "--dry-run"),
		"gem":              publishVerbs(map[string]bool{"push": true, "yank": true, "owner": true}),
		"dotnet":           (*analyzer).dotnet,
		"nuget":            publishVerbs(map[string]bool{"push": true, "delete": true}),
		"vsce":             publishVerbs(map[string]bool{"publish": true, "unpublish": true}),
		"ovsx":             publishVerbs(map[string]bool{"publish": true}),
		"lerna":            publishVerbs(map[string]bool{"publish": true}),
		"changeset":        publishVerbs(map[string]bool{"publish": true}),
		"mix":              (*analyzer).mix,
		"lein":             publishVerbs(map[string]bool{"deploy": true}),
		"sbt":              publishVerbs(map[string]bool{"publish": true, "publishsigned": true, "release": true}),
		"pod":              (*analyzer).pod,
		"goreleaser":       (*analyzer).goreleaser,
		"mvn":              (*analyzer).mvn,
		"mvnw":             (*analyzer).mvn,
		"gradle":           (*analyzer).gradle,
		"gradlew":          (*analyzer).gradle,
		"docker":           (*analyzer).docker,
		"podman":           (*analyzer).docker,
		"nerdctl":          (*analyzer).docker,
		"buildah":          (*analyzer).docker,
		"skopeo":           (*analyzer).skopeo,
		"np":               publishes("publishes an npm package"),
		"release-it":       publishes("publishes a release"),
		"semantic-release": publishes("publishes a release"),
		"make":             (*analyzer).taskRunner,
		"just":             (*analyzer).taskRunner,
		"task":             (*analyzer).taskRunner,
		"rake":             (*analyzer).rake,

		"crontab":     (*analyzer).crontab,
		"at":          (*analyzer).at,
		"batch":       func(a *analyzer, c *cmd) { a.add(ScopeEscalation, false, "batch schedules a command") },
		"systemctl":   (*analyzer).systemctl,
		"loginctl":    (*analyzer).loginctl,
		"launchctl":   (*analyzer).launchctl,
		"service":     (*analyzer).service,
		"update-rc.d": escalates("installs a boot-time service"),
		"chkconfig":   escalates("changes boot-time services"),
		"rc-update":   escalates("changes boot-time services"),
		"tmux":        (*analyzer).tmux,
		"screen":      (*analyzer).screen,
		"pm2":         (*analyzer).pm2,
		"forever":     (*analyzer).pm2,
		"usermod":     escalates("changes a user account"),
		"useradd":     escalates("creates a user account"),
		"adduser":     escalates("creates a user account"),
		"userdel":     escalates("deletes a user account"),
		"groupadd":    escalates("creates a group"),
		"groupmod":    escalates("changes a group"),
		"addgroup":    escalates("creates a group"),
		"gpasswd":     escalates("changes group membership"),
		"passwd":      escalates("changes a password"),
		"chpasswd":    escalates("changes passwords"),
		"visudo":      escalates("edits sudo rules"),
		"vipw":        escalates("edits the password file"),
		"setcap":      escalates("grants file capabilities"),
		"direnv":      (*analyzer).direnv,
		"claude":      (*analyzer).agentCLI,
		"codex":       (*analyzer).agentCLI,
		"gemini":      (*analyzer).agentCLI,
		"fixrail":     (*analyzer).fixrail,
		"ssh-keygen":  (*analyzer).sshKeygen,

		"node":      (*analyzer).node,
		"nodejs":    (*analyzer).node,
		"deno":      (*analyzer).deno,
		"perl":      (*analyzer).perl,
		"ruby":      (*analyzer).ruby,
		"php":       (*analyzer).php,
		"lua":       (*analyzer).lua,
		"luajit":    (*analyzer).lua,
		"rscript":   (*analyzer).rscript,
		"osascript": (*analyzer).osascript,
		"awk":       (*analyzer).awk,
		"gawk":      (*analyzer).awk,
		"mawk":      (*analyzer).awk,
		"nawk":      (*analyzer).awk,
	}
}

func forgetVars(a *analyzer, c *cmd) {
	if c.name == "printf" {
		p := parseOpts(c.args, optSpec{short: "v", posix: true})
		for _, v := range p.values("-v") {
			delete(c.st.vars, v.s)
		}
		return
	}
	for _, f := range c.args {
		if !f.dyn && validName(f.s) {
			delete(c.st.vars, f.s)
		}
	}
}

func writesAll(a *analyzer, c *cmd) {
	p := parseOpts(c.args, optSpec{long: []string{"output-error"}})
	for _, f := range p.operands {
		a.writePath(f, c.st, c.name)
	}
}

func removesAll(a *analyzer, c *cmd) {
	for _, f := range parseOpts(c.args, optSpec{}).operands {
		a.removePath(f, c.st, c.name, false)
	}
}

func destroys(why string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		p := parseOpts(c.args, optSpec{})
		if p.has("-l", "--list", "-h", "--help", "-V", "--version", "-p", "--print") && c.name != "wipefs" {
			return
		}
		a.add(Destructive, false, "%s %s", c.name, why)
	}
}

func egress(why string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		for _, f := range c.args {
			if !f.dyn && (f.s == "-h" || f.s == "--help" || f.s == "-V" || f.s == "--version") && len(c.args) == 1 {
				return
			}
		}
		a.add(EgressOther, false, "%s %s", c.name, why)
	}
}

func escalates(why string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		if len(c.args) == 1 && (c.args[0].s == "--help" || c.args[0].s == "-h" || c.args[0].s == "--version") {
			return
		}
		a.add(ScopeEscalation, false, "%s %s", c.name, why)
	}
}

func publishes(why string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		for _, f := range c.args {
			if f.s == "--dry-run" || f.s == "--help" || f.s == "--version" {
				return
			}
		}
		a.add(Publish, false, "%s %s", c.name, why)
	}
}

// publishVerbs matches a CLI whose first operand is a publishing verb,
// unless one of the dry-run flags is present.
func publishVerbs(verbs map[string]bool, dry ...string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		i := firstOperand(c.args, "", nil)
		if i < 0 {
			return
		}
		v := c.args[i]
		if v.dyn {
			a.add(Publish, true, "%s %s: subcommand only known at run time", c.name, v)
			return
		}
		if !verbs[strings.ToLower(v.s)] {
			return
		}
		for _, f := range c.args {
			for _, d := range dry {
				if f.s == d {
					return
				}
			}
		}
		a.add(Publish, false, "%s %s", c.name, v.s)
	}
}

// shell analyses sh, bash and friends: -c text, a script file, or commands
// on standard input.
func (a *analyzer) shell(name string, args []field, st *state, in input, depth int) {
	cmode, smode := false, false
	var operands []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn && f.optLike() {
			a.all(name + " options only known at run time")
			return
		}
		if f.s == "--" || f.s == "-" {
			operands = args[i+1:]
			break
		}
		if strings.HasPrefix(f.s, "--") {
			if f.s == "--rcfile" || f.s == "--init-file" {
				i++
			}
			continue
		}
		if len(f.s) > 1 && (f.s[0] == '-' || f.s[0] == '+') {
			for _, ch := range f.s[1:] {
				switch ch {
				case 'c':
					cmode = true
				case 's':
					smode = true
				case 'o', 'O':
					i++
				}
			}
			continue
		}
		operands = args[i:]
		break
	}
	switch {
	case cmode:
		if len(operands) == 0 {
			return
		}
		if operands[0].dyn {
			a.all(name + " -c runs text only known at run time")
		}
		a.script(dynText(operands[0].s), a.childState(st), depth+1, name+" -c")
	case len(operands) > 0 && !smode:
		a.scriptFile(operands[0], st, depth, name, false)
	default:
		a.stdinScript(in, st, depth, name)
	}
}

// scriptFile analyses a script a shell runs or sources. strict makes a file
// that cannot be read unresolvable (source); otherwise it is judged like any
// program, by name.
func (a *analyzer) scriptFile(f field, st *state, depth int, how string, strict bool) {
	if f.dyn {
		a.all(fmt.Sprintf("%s runs a script named only at run time (%s)", how, f))
		return
	}
	if st.remote {
		return
	}
	if f.s == "/dev/stdin" || f.s == "-" {
		a.all(how + " runs commands from standard input")
		return
	}
	p, ok := cleanAbs(st.cwd, f.s)
	if !ok {
		a.all(fmt.Sprintf("%s runs %s and the working directory is unknown", how, f.s))
		return
	}
	if a.written[p] {
		a.all(fmt.Sprintf("%s runs %s, which this command writes first", how, p))
		return
	}
	limit := int64(maxScript)
	if strict {
		limit = 4 * maxScript
	}
	b, ok := readSmall(p, limit)
	if !ok || bytes.IndexByte(b, 0) >= 0 {
		if strict {
			a.all(fmt.Sprintf("%s reads %s, which cannot be read to check it", how, p))
		}
		return
	}
	child := a.childState(st)
	if strict {
		child = st // source runs in the current shell
	}
	a.scriptFromFile(string(b), p, child, depth+1, how+" "+p)
}

// stdinScript analyses commands a shell or interpreter reads on standard input.
func (a *analyzer) stdinScript(in input, st *state, depth int, how string) {
	switch in.kind {
	case inText:
		if in.dyn {
			a.all(how + " reads commands that are only known at run time")
		}
		a.script(dynText(in.text), a.childState(st), depth+1, how+" stdin")
	case inFile:
		a.scriptFile(in.file, st, depth, how, false)
	case inUnknown:
		a.all(how + " reads commands from the output of another command")
	}
}

func (a *analyzer) evalCmd(c *cmd) {
	if len(c.args) == 0 {
		return
	}
	if anyDyn(c.args) {
		a.all("eval runs text only known at run time")
	}
	a.script(dynText(strings.Join(rawStrings(c.args), " ")), c.st, c.depth+1, "eval")
}

func (a *analyzer) sourceCmd(c *cmd) {
	if len(c.args) == 0 {
		return
	}
	f := c.args[0]
	if f.s == "/dev/stdin" {
		a.stdinScript(c.in, c.st, c.depth, "source")
		return
	}
	if !f.dyn && filepath.Base(filepath.Dir(f.s)) == "bin" && (filepath.Base(f.s) == "activate" || filepath.Base(f.s) == "activate.sh") {
		// A virtualenv's activation script: generated, and often created
		// earlier in the same command. Analysed when present, never
		// unresolvable for being absent.
		if p, ok := cleanAbs(c.st.cwd, f.s); ok {
			if b, ok := readSmall(p, 4*maxScript); ok {
				a.scriptFromFile(string(b), p, c.st, c.depth+1, "source "+p)
			}
		}
		return
	}
	a.scriptFile(f, c.st, c.depth, c.name, true)
}

func (a *analyzer) trapCmd(c *cmd) {
	p := parseOpts(c.args, optSpec{posix: true})
	if len(p.operands) < 2 {
		return
	}
	code := p.operands[0]
	if code.s == "-" || code.s == "" {
		return
	}
	if code.dyn {
		a.all("trap runs text only known at run time")
	}
	a.script(dynText(code.s), c.st.clone(), c.depth+1, "trap")
}

func (a *analyzer) aliasCmd(c *cmd) {
	for _, f := range c.args {
		_, body, ok := strings.Cut(f.s, "=")
		if !ok {
			continue
		}
		if f.dyn {
			a.all("alias defined from text only known at run time")
		}
		a.script(dynText(body), c.st.clone(), c.depth+1, "alias")
	}
}

func (a *analyzer) cdCmd(c *cmd) {
	p := parseOpts(c.args, optSpec{posix: true})
	st := c.st
	if len(p.operands) == 0 {
		st.setCwd(a.home)
		return
	}
	t := p.operands[0]
	if t.dyn || t.s == "-" || strings.HasPrefix(t.s, "+") {
		st.setCwd("")
		return
	}
	d, ok := cleanAbs(st.cwd, t.s)
	if !ok {
		st.setCwd("")
		return
	}
	st.setCwd(d)
}
