package policy

// This file follows shell code into wherever it runs next: sh -c, script
// files, standard input, and the builtins eval, source, trap, alias and cd.

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
	a.scriptFromFile(string(b), p, a.childState(st, nil), depth+1, "script "+p)
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
	return shells.has(interp)
}

var shells = wordSet{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "tcsh", "csh",
	"rbash", "ksh93", "pdksh", "oksh", "loksh"}

// shell analyses sh, bash and friends: -c text, a script file, or commands
// on standard input.
func (a *analyzer) shell(name string, args []field, env map[string]field, st *state, in input, depth int) {
	a.globOptions(nil, env) // BASHOPTS in its environment
	cmode, smode, interactive, xtrace := false, false, false, false
	var operands, rcfiles []field
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
			if (f.s == "--rcfile" || f.s == "--init-file") && i+1 < len(args) {
				i++
				rcfiles = append(rcfiles, args[i])
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
				case 'i':
					interactive = true
				case 'x':
					xtrace = xtrace || f.s[0] == '-'
				case 'o', 'O':
					i++
					if ch == 'o' && f.s[0] == '-' && i < len(args) && args[i].s == "xtrace" {
						xtrace = true
					}
				}
			}
			continue
		}
		operands = args[i:]
		break
	}
	a.startupFiles(name, env, st, depth, interactive, rcfiles)
	a.promptCode(name, env, st, depth, interactive, xtrace)
	switch {
	case cmode:
		if len(operands) == 0 {
			return
		}
		if operands[0].dyn {
			a.all(name + " -c runs text only known at run time")
		}
		a.script(dynText(operands[0].s), a.childState(st, env), depth+1, name+" -c")
	case len(operands) > 0 && !smode:
		a.scriptFile(operands[0], st, depth, name, false)
	default:
		a.stdinScript(in, st, depth, name)
	}
}

// startupFiles follows what a shell sources before its own commands, set
// by the command's environment: bash reads $BASH_ENV when it runs a script
// or -c text (bash(1), INVOCATION), and --rcfile/--init-file when
// interactive; an interactive sh-family shell reads $ENV; zsh reads
// $ZDOTDIR/.zshenv always. bash expands $BASH_ENV and $ENV before using
// them, so a substitution in the value runs. The environment is cmdEnv's.
func (a *analyzer) startupFiles(name string, env map[string]field, st *state, depth int, interactive bool, rcfiles []field) {
	lookup := cmdEnv(env, st)
	source := func(f field, how string) {
		if !f.dyn && strings.ContainsAny(f.s, "$`") {
			a.all(fmt.Sprintf("%s expands %s before sourcing it, and a substitution in it runs", name, f))
			return
		}
		a.scriptFile(f, st, depth, how, true)
	}
	bashLike := name == "bash" || name == "rbash"
	if v, ok := lookup("BASH_ENV"); ok && bashLike {
		source(v, name+" with $BASH_ENV")
	}
	if v, ok := lookup("ENV"); ok && interactive && name != "zsh" && name != "fish" && name != "tcsh" && name != "csh" {
		source(v, name+" -i with $ENV")
	}
	if v, ok := lookup("ZDOTDIR"); ok && name == "zsh" {
		if v.dyn {
			a.all(fmt.Sprintf("zsh reads .zshenv from $ZDOTDIR, only known at run time (%s)", v))
		} else {
			a.scriptFile(word(filepath.Join(v.s, ".zshenv")), st, depth, "zsh with $ZDOTDIR", false)
		}
	}
	if bashLike && interactive {
		for _, f := range rcfiles {
			a.scriptFile(f, st, depth, name+" --rcfile", true)
		}
	}
}

// promptCode follows what a shell runs from its environment besides files:
// bash runs $PROMPT_COMMAND before each prompt of an interactive shell and
// expands $PS0, $PS1 and $PS2 there, and expands $PS4 before each command
// it traces (-x, -o xtrace, or xtrace in $SHELLOPTS, which bash reads from
// the environment) — a command substitution in a prompt runs. ksh expands
// $PS4 the same way. bash also imports a function from each
// BASH_FUNC_name%% variable, run when the script calls the name.
func (a *analyzer) promptCode(name string, env map[string]field, st *state, depth int, interactive, xtrace bool) {
	lookup := cmdEnv(env, st)
	bashLike := name == "bash" || name == "rbash"
	kshLike := name == "ksh" || name == "ksh93" || name == "mksh" || name == "pdksh" || name == "oksh" || name == "loksh"
	if !bashLike && !kshLike {
		return
	}
	if v, ok := lookup("SHELLOPTS"); ok && bashLike && (v.dyn || strings.Contains(v.s, "xtrace")) {
		xtrace = true
	}
	if v, ok := lookup("PS4"); ok && xtrace {
		a.promptText(v, st, depth, name+" -x with $PS4")
	}
	if !bashLike {
		return
	}
	if interactive {
		if v, ok := lookup("PROMPT_COMMAND"); ok {
			if v.dyn {
				a.all(name + " -i runs $PROMPT_COMMAND, only known at run time")
			}
			a.script(dynText(v.s), a.childState(st, env), depth+1, name+" -i with $PROMPT_COMMAND")
		}
		for _, ps := range []string{"PS0", "PS1", "PS2"} {
			if v, ok := lookup(ps); ok {
				a.promptText(v, st, depth, name+" -i with $"+ps)
			}
		}
	}
	for k, v := range env {
		if fn, ok := strings.CutPrefix(k, "BASH_FUNC_"); ok && strings.HasSuffix(fn, "%%") {
			if v.dyn {
				a.all(name + " imports a function only known at run time from $" + k)
			}
			a.script(dynText("__fixrail_fn"+v.s), a.childState(st, env), depth+1, name+" with $"+k)
		}
	}
}

// promptText analyses the commands a prompt string's substitutions run: it
// is expanded as a here-document's body is (quotes are text).
func (a *analyzer) promptText(v field, st *state, depth int, how string) {
	if v.dyn {
		a.all(how + ", a prompt only known at run time")
		return
	}
	doc, err := syntax.NewParser().Document(strings.NewReader(v.s))
	if err != nil {
		a.all(how + ", a prompt that cannot be parsed here")
		return
	}
	syntax.Walk(doc, func(n syntax.Node) bool {
		var stmts []*syntax.Stmt
		switch n := n.(type) {
		case *syntax.CmdSubst:
			stmts = n.Stmts
		case *syntax.ProcSubst:
			stmts = n.Stmts
		default:
			return true
		}
		var b bytes.Buffer
		for _, s := range stmts {
			syntax.NewPrinter().Print(&b, s)
			b.WriteByte('\n')
		}
		a.script(b.String(), a.childState(st, nil), depth+1, how)
		return false
	})
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
	p, ok := a.fileOnDisk(f.s, st, how, "runs")
	if !ok {
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
	child := a.childState(st, nil)
	if strict {
		child = st // source runs in the current shell
	}
	a.scriptFromFile(string(b), p, child, depth+1, how+" "+p)
}

// fileOnDisk resolves a file a command runs or reads as code or
// configuration, to be read here now: its absolute path, or ok false with
// the call marked unresolvable when the working directory is unknown or
// the same command writes the file first (what is on disk now is not what
// will run).
func (a *analyzer) fileOnDisk(name string, st *state, how, verb string) (string, bool) {
	p, ok := cleanAbs(st.cwd, name)
	if !ok {
		a.all(fmt.Sprintf("%s %s %s and the working directory is unknown", how, verb, name))
		return "", false
	}
	if a.written[p] {
		a.all(fmt.Sprintf("%s %s %s, which this command writes first", how, verb, p))
		return "", false
	}
	return p, true
}

// stdinScript analyses commands a shell or interpreter reads on standard input.
func (a *analyzer) stdinScript(in input, st *state, depth int, how string) {
	switch in.kind {
	case inText:
		if in.dyn {
			a.all(how + " reads commands that are only known at run time")
		}
		a.script(dynText(in.text), a.childState(st, nil), depth+1, how+" stdin")
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
	old := st.cwd
	d := a.cdTarget(c.name, p.operands, st)
	if c.name == "pushd" {
		switch {
		case st.dirsUnknown || d == "" && old != "":
			st.dirs, st.dirsUnknown = nil, true
		case len(p.operands) == 0 && len(st.dirs) == 0:
			d = old // bash refuses: no other directory
		case len(p.operands) == 0:
			st.dirs = append([]string{old}, st.dirs[1:]...) // swaps the top two
		default:
			st.dirs = append([]string{old}, st.dirs...)
		}
	}
	st.setCwd(d)
	if d != old {
		if old == "" {
			delete(st.vars, "OLDPWD")
		} else {
			st.vars["OLDPWD"] = old
		}
	}
}

// cdTarget is the directory cd or pushd moves to: "" when unknown. cd -
// is $OLDPWD, which cd itself sets; pushd with no operand is the
// directory stack's top.
func (a *analyzer) cdTarget(name string, ops []field, st *state) string {
	if len(ops) == 0 {
		if name == "pushd" {
			if st.dirsUnknown || len(st.dirs) == 0 {
				return ""
			}
			return st.dirs[0]
		}
		return a.home
	}
	t := ops[0]
	switch {
	case t.dyn || strings.HasPrefix(t.s, "+") || (name == "pushd" && strings.HasPrefix(t.s, "-")):
		return ""
	case t.s == "-":
		return st.vars["OLDPWD"] // "" when unknown
	}
	d, _ := cleanAbs(st.cwd, t.s)
	return d
}

// popdCmd: popd returns to the directory the last pushd left; with an
// operand it edits the stack, which is followed no further.
func (a *analyzer) popdCmd(c *cmd) {
	st := c.st
	old := st.cwd
	switch {
	case len(c.args) > 0 || st.dirsUnknown:
		st.dirs, st.dirsUnknown = nil, true
		st.setCwd("")
	case len(st.dirs) == 0:
		return // bash refuses: the stack is empty
	default:
		st.setCwd(st.dirs[0])
		st.dirs = st.dirs[1:]
	}
	if st.cwd != old && old != "" {
		st.vars["OLDPWD"] = old
	} else if st.cwd != old {
		delete(st.vars, "OLDPWD")
	}
}
