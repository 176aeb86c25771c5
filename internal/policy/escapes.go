package policy

import "strings"

// Programs with a way to run a shell command from their own command line:
// a pager's !, a debugger's shell and its debuggee, a makefile given as
// text, a package manager's script shell. Each command is judged as if
// typed.

// envCommand: the program reads its command from the first of names set in
// its environment (KUBE_EDITOR, else EDITOR).
func (a *analyzer) envCommand(c *cmd, how string, names ...string) {
	for _, k := range names {
		if v, ok := c.env[k]; ok {
			a.runsText(v, c, how+" with $"+k)
			return
		}
	}
}

// less +CMD runs CMD as less commands at start; ! runs a shell command.
// $LESSOPEN (and $LESSCLOSE) name a command less runs on each file, its
// output piped in when the value starts with |, even when less writes to a
// pipe.
func (a *analyzer) less(c *cmd) {
	for _, k := range []string{"LESSOPEN", "LESSCLOSE"} {
		if v, ok := c.env[k]; ok {
			t := strings.TrimLeft(strings.TrimSpace(v.s), "|-")
			a.runsText(field{s: strings.ReplaceAll(t, "%s", "file"), dyn: v.dyn}, c, c.name+" with $"+k)
		}
	}
	for _, f := range c.args {
		cmdText := strings.TrimPrefix(strings.TrimPrefix(f.s, "+"), "+")
		if strings.HasPrefix(f.s, "+") && strings.HasPrefix(cmdText, "!") {
			a.runsText(field{s: cmdText[1:], dyn: f.dyn}, c, c.name+" +!")
		}
	}
}

// man runs its pager: -P/--pager, or $MANPAGER or $PAGER set for it.
func (a *analyzer) man(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "PCMLmSsepRE", long: []string{"pager", "config-file", "manpath", "locale", "systems", "sections", "extension", "preprocessor", "encoding"}})
	for _, v := range p.values("-P", "--pager") {
		a.runsText(v, c, "man --pager")
	}
	for _, k := range []string{"MANPAGER", "PAGER"} {
		if v, ok := c.env[k]; ok {
			a.runsText(v, c, "man with $"+k)
		}
	}
}

// gdb and lldb: a command given with -ex (gdb) or -o (lldb) may be a shell
// command (shell, !, platform shell) or Python; the program after --args
// (gdb) or -- (lldb) is run by the debugger.
func (a *analyzer) debugger(c *cmd) {
	valued := set("-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command", "--init-eval-command",
		"-x", "--command", "-ix", "-cd", "--cd", "-d", "--directory", "-p", "--pid", "-s", "--symbols", "-e", "--exec", "-c", "--core",
		"-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash", "-K", "-S", "--source", "-s", "--source-quietly",
		"-a", "--arch", "-l", "--script-language", "-b")
	commands := set("-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command", "--init-eval-command",
		"-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash")
	args := c.args
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case (f.s == "--args" && c.name == "gdb") || (f.s == "--" && c.name == "lldb"):
			if i+1 < len(args) {
				a.command(args[i+1:], c.env, c.st, c.in, c.depth+1)
			}
			return
		case strings.HasPrefix(f.s, "--eval-command="):
			a.debuggerCommand(field{s: strings.TrimPrefix(f.s, "--eval-command="), dyn: f.dyn}, c)
		case commands[f.s] && i+1 < len(args):
			i++
			a.debuggerCommand(args[i], c)
		case valued[f.s]:
			i++
		}
	}
}

func (a *analyzer) debuggerCommand(t field, c *cmd) {
	s := strings.TrimSpace(t.s)
	for _, pre := range []string{"shell ", "!", "platform shell ", "pipe "} {
		if rest, ok := strings.CutPrefix(s, pre); ok {
			if pre == "pipe " {
				// pipe COMMAND | SHELL_COMMAND: the part after the bar.
				_, rest, ok = strings.Cut(rest, "|")
				if !ok {
					return
				}
			}
			a.runsText(field{s: rest, dyn: t.dyn}, c, c.name+" "+strings.TrimSpace(pre))
			return
		}
	}
	for _, pre := range []string{"python ", "py ", "pi ", "script "} {
		if rest, ok := strings.CutPrefix(s, pre); ok {
			code := rest
			if t.dyn {
				code += dynMark
			}
			a.scanCode("python", code, c.name+" "+strings.TrimSpace(pre))
			return
		}
	}
}

// makeRef is a make variable or function reference, $(X) or ${X}, and a
// one-letter one; "$$" is a literal "$".
var makeRef = lazy(`\$(\([^()]*\)|\{[^{}]*\}|[^$({])`)

// makefileRecipes returns the recipe lines of makefile text: lines after a
// rule that start with a tab, and the part after ";" on a rule's line.
// Make's references become a run-time shell word; "$$" becomes "$".
func makefileRecipes(text string) []string {
	var out []string
	inRule := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "\t") && inRule:
			out = append(out, line[1:])
			continue
		case strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#"):
			continue
		}
		inRule = false
		colon := strings.Index(line, ":")
		if colon < 0 || strings.HasPrefix(line[colon:], ":=") || strings.Contains(line[:colon], "=") {
			continue // an assignment or a directive
		}
		inRule = true
		if semi := strings.Index(line[colon:], ";"); semi >= 0 {
			out = append(out, line[colon+semi+1:])
		}
	}
	for i, r := range out {
		r = strings.ReplaceAll(r, "$$", "\x00")
		r = makeRef.get().ReplaceAllLiteralString(r, "${__fixrail_make__}")
		out[i] = strings.TrimLeft(strings.ReplaceAll(r, "\x00", "$"), "@-+ \t")
	}
	return out
}

// makeText judges makefile text given to make on its command line
// (--eval) or on standard input (-f -).
func (a *analyzer) makeText(c *cmd) {
	if c.name != "make" && c.name != "gmake" {
		return
	}
	var texts []field
	for i, f := range c.args {
		switch {
		case strings.HasPrefix(f.s, "--eval="):
			texts = append(texts, field{s: strings.TrimPrefix(f.s, "--eval="), dyn: f.dyn})
		case (f.s == "--eval" || f.s == "-E") && i+1 < len(c.args):
			texts = append(texts, c.args[i+1])
		case (f.s == "-f" || f.s == "--file" || f.s == "--makefile") && i+1 < len(c.args) &&
			(c.args[i+1].s == "-" || c.args[i+1].s == "/dev/stdin") && c.in.kind == inText:
			texts = append(texts, field{s: c.in.text, dyn: c.in.dyn})
		}
	}
	for _, t := range texts {
		for _, r := range makefileRecipes(t.s) {
			a.runsText(field{s: r, dyn: t.dyn || strings.Contains(r, dynMark)}, c, "make recipe")
		}
	}
}

// npmShell: --script-shell names the program npm runs scripts with; npm
// config set script-shell (or shell, editor, browser, git) keeps it for
// every later run.
func (a *analyzer) npmShell(c *cmd) {
	a.npmConfig(c)
	// npm reads any setting from npm_config_NAME in its environment, the
	// name in any case, _ for -.
	for k, v := range c.env {
		if name, ok := strings.CutPrefix(strings.ToLower(k), "npm_config_"); ok &&
			(name == "script_shell" || name == "shell") {
			a.runsText(v, c, c.name+" with $"+k)
		}
	}
	for i, f := range c.args {
		switch {
		case strings.HasPrefix(f.s, "--script-shell="):
			a.runsText(field{s: strings.TrimPrefix(f.s, "--script-shell="), dyn: f.dyn}, c, c.name+" --script-shell")
		case f.s == "--script-shell" && i+1 < len(c.args):
			a.runsText(c.args[i+1], c, c.name+" --script-shell")
		case f.s == "set" && i > 0 && c.args[i-1].s == "config" && i+1 < len(c.args):
			k := strings.ToLower(strings.TrimPrefix(c.args[i+1].s, "--"))
			k, _, _ = strings.Cut(k, "=")
			switch k {
			case "script-shell", "shell", "editor", "browser", "git", "node-options":
				a.add(ScopeEscalation, false, "%s config set %s sets a program it runs later", c.name, k)
			}
		}
	}
}

// julia -e CODE: backticks make a command, which run(), read() and
// pipeline() run.
func (a *analyzer) julia(c *cmd) {
	for i, f := range c.args {
		if (f.s == "-e" || f.s == "--eval" || f.s == "-E" || f.s == "--print") && i+1 < len(c.args) {
			code := c.args[i+1]
			if code.dyn || strings.Contains(code.s, "`") {
				a.all("julia -e runs a command")
				return
			}
			a.scanCode("julia", code.s, "julia -e")
		}
	}
}

// tcl judges Tcl code (tclsh, wish and expect reading it): exec, spawn,
// system and open "|…" run programs.
func (a *analyzer) tcl(text field, how string) {
	if text.dyn || containsWord(text.s, "spawn", "exec", "system") || strings.Contains(text.s, `open "|`) || strings.Contains(text.s, "open |") {
		a.all(how + " runs programs")
		return
	}
	a.scanCode("tcl", text.s, how)
}

// tclsh and wish read a script from standard input when given none.
func (a *analyzer) tclsh(c *cmd) {
	if c.in.kind == inText && len(parseOpts(c.args, optSpec{posix: true}).operands) == 0 {
		a.tcl(field{s: c.in.text, dyn: c.in.dyn}, c.name)
	}
}
