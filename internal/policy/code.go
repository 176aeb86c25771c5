package policy

import (
	"path"
	"strings"

	"github.com/fixrail/fixrail/internal/fsname"
)

// Interpreter one-liners (python -c, node -e, perl -e, ...) are not parsed
// as programs. Their text is scanned for markers of the actions the rules
// care about, and a marker makes the rule unresolvable. This is a pattern
// match and is easy to evade (chr(114)+chr(109)); it exists to catch the
// honest one-liner, not the adversarial one.

var (
	shellOutMarkers = []string{"os.system", "subprocess", "os.popen", "os.exec", "os.spawn", "pty.spawn", "commands.getoutput",
		"child_process", "execsync", "spawnsync", "execfile", "spawn(", "shell_exec", "passthru", "proc_open", "popen",
		"os.execute", "deno.command", "deno.run", "do shell script", "system2(", "open3", "kernel.exec", "runtime.exec",
		"processbuilder", "__import__", "importlib", "b64decode", "base64", "fromcharcode", "atob(", "chr(", "unhexlify",
		"bytes.fromhex", "codecs.decode", "new function", "vm.run"}
	// builtinCall matches calls of system, exec, eval, spawn as functions,
	// not as methods (platform.system(), re.compile(), regex.exec()).
	builtinCall   = lazy(`(^|[^.\w$])(system|exec|eval|spawn|execv|execvp|shell)\s*\(`)
	deleteMarkers = []string{"rmtree", "rmsync", "rmdirsync", "rimraf", "fs.rm(", "fs.promises.rm", "remove_tree", "rm_rf",
		"rm_r(", "deno.remove", "file::path", "fileutils.rm", "removedirs", "delete_tree", "dir.delete"}
	sendMarkers = []string{"requests.post", "requests.put", "requests.patch", "requests.delete", "requests.request",
		"httpx.post", "httpx.put", "httpx.patch", "httpx.delete", "http.client", "socket", "smtplib", "ftplib", "paramiko",
		"xmlhttprequest", "net.connect", "createconnection", "axios.post", "axios.put", "axios.patch", "axios.delete",
		"method:", "method=", "lwp::", "http::request", "net::http", "io::socket", "curl_exec", "curl_init", "fsockopen",
		"http.request(", "https.request(", ".post(", "sendall", "urlopen(req"}
	selfMarkers  = []string{".claude", ".codex", ".gemini", ".mcp.json", "settings.json", "settings.local.json", "fixrail", "managed-settings", ".gitconfig"}
	scopeMarkers = []string{".bashrc", ".zshrc", ".profile", ".bash_profile", "authorized_keys", "crontab", "/etc/", "systemd", "launchagents", ".git/hooks", ".ssh/"}
	writeMarkers = []string{"'w'", "\"w\"", "'a'", "\"a\"", "'wb'", "\"wb\"", "'w+'", "\"w+\"", "'a+'", "\"a+\"", "'x'", "write", "dump(", "copy", "move", "rename", "replace(", "unlink", "remove", "chmod", "symlink", "appendfile", "print >", "open(my", ">>", "> ", "truncate", "mkdir", "touch", "puts"}
	// AppleScript and JXA that have a terminal run a command: Terminal's
	// do script, iTerm's write text, doShellScript.
	appleScriptRuns = []string{"do script", "doscript(", "doshellscript(", "write text"}
	perlBacktick    = lazy("`|\\bqx\\s*[({/!|]|\\bexec\\s*[\"'(]|\\bsystem\\b")
	awkRunsShell    = lazy(`system\s*\(|\|\s*getline|\|\s*"|\|&|print[^;{}\n]*\|\s*[A-Za-z_]`)
	urlopenWithData = lazy(`urlopen\([^)]*data`)
)

// scanCode judges inline interpreter code. lang selects language-specific
// markers (backticks run commands in perl, ruby and php).
func (a *analyzer) scanCode(lang, code, how string) {
	if strings.Contains(code, dynMark) {
		a.all(how + " runs code only known at run time")
		return
	}
	// Folded as a Mac compares names: code that spells ".cla\u200cude" or
	// "ſettings.json" opens the protected file there.
	lc := fsname.Fold(code)
	if containsAny(lc, shellOutMarkers) || builtinCall.MatchString(lc) || ((lang == "perl" || lang == "ruby" || lang == "php") && perlBacktick.MatchString(code)) ||
		(lang == "awk" && awkRunsShell.MatchString(code)) || (lang == "applescript" && containsAny(lc, appleScriptRuns)) {
		a.all(how + " may run shell commands or build code at run time")
		return
	}
	if containsAny(lc, deleteMarkers) {
		a.add(Destructive, true, "%s may delete a directory tree", how)
	}
	if containsAny(lc, sendMarkers) || urlopenWithData.MatchString(lc) || (strings.Contains(lc, "fetch(") && strings.Contains(lc, "body")) {
		a.add(EgressOther, true, "%s may send data to another host", how)
	}
	writes := containsAny(lc, writeMarkers)
	if writes && containsAny(lc, selfMarkers) {
		a.add(SelfMod, true, "%s may write agent or fixrail settings", how)
	}
	if writes && containsAny(lc, scopeMarkers) {
		a.add(ScopeEscalation, true, "%s may write start-up, scheduling or system files", how)
	}
	if writes {
		// The zones by their real paths: a $FIXRAIL_HOME or a binary
		// whose name holds none of the markers above.
		for _, z := range a.zoneList() {
			if p := "/" + strings.Join(z.comps, "/"); len(z.comps) > 1 && namesPath(lc, p) {
				a.add(z.rule, true, "%s may write %s (%s)", how, p, z.what)
			}
		}
	}
	if a.keys != "" && (strings.Contains(code, a.keys) || strings.Contains(lc, "fixrail/keys") || strings.Contains(lc, approvalNamespace)) {
		a.add(SelfMod, true, "%s refers to the fixrail approval keys", how)
	}
	for _, z := range a.secretList() {
		if p := "/" + strings.Join(z.comps, "/"); z.file && namesPath(lc, p) {
			a.add(SelfMod, true, "%s refers to %s, %s", how, p, z.what)
		}
	}
}

// namesPath reports whether text names the absolute path p, or a path
// under it: p stands there whole, not as part of a longer name
// (/srv/gates is not /srv/gate) nor the tail of another path.
func namesPath(text, p string) bool {
	pathByte := func(c byte) bool {
		return c == '/' || c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(text[i:], p)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(p)
		if (start == 0 || !pathByte(text[start-1])) && (end == len(text) || text[end] == '/' || !pathByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// codeFromInput scans code an interpreter reads on standard input.
func (a *analyzer) codeFromInput(lang string, c *cmd) {
	switch c.in.kind {
	case inText:
		a.scanCode(lang, c.in.text, c.name+" reading code on standard input")
	case inFile:
		if c.in.file.dyn {
			a.all(c.name + " reads code from a file named only at run time")
			return
		}
		if p, ok := cleanAbs(c.st.cwd, c.in.file.s); ok && a.written[p] {
			a.all(c.name + " runs " + p + ", which this command writes first")
		}
	case inUnknown:
		a.all(c.name + " reads code from the output of another command")
	}
}

// scriptArg checks an interpreter's script operand: one written earlier in
// the same command is unresolvable; others are judged like any program.
func (a *analyzer) scriptArg(f field, c *cmd) {
	if f.dyn {
		a.all(c.name + " runs a script named only at run time")
		return
	}
	if p, ok := cleanAbs(c.st.cwd, f.s); ok && a.written[p] {
		a.all(c.name + " runs " + p + ", which this command writes first")
	}
}

func (a *analyzer) python(c *cmd) {
	args := c.args
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn && f.optLike() {
			a.all(c.name + " options only known at run time")
			return
		}
		if f.s == "-" {
			a.codeFromInput("python", c)
			return
		}
		if f.s == "--" || !f.optLike() {
			if f.s == "--" && i+1 < len(args) {
				i++
				f = args[i]
			}
			a.scriptArg(f, c)
			a.scriptTask(f, args[i+1:])
			return
		}
		if strings.HasPrefix(f.s, "--") {
			if f.s == "--check-hash-based-pycs" {
				i++
			}
			continue
		}
		cl := f.s[1:]
		for j := 0; j < len(cl); j++ {
			switch cl[j] {
			case 'c':
				code := cl[j+1:]
				dyn := f.dyn
				if code == "" && i+1 < len(args) {
					code, dyn = args[i+1].s, args[i+1].dyn
				}
				if dyn {
					code += dynMark
				}
				a.scanCode("python", code, c.name+" -c")
				return
			case 'm':
				mod := cl[j+1:]
				rest := args[i+1:]
				if mod == "" && len(rest) > 0 {
					mod, rest = rest[0].s, rest[1:]
				}
				a.pythonModule(mod, rest, c)
				return
			case 'W', 'X':
				if j == len(cl)-1 {
					i++
				}
				j = len(cl)
			}
		}
	}
	a.codeFromInput("python", c)
}

// pythonModule maps python -m X to the command X where that matters.
func (a *analyzer) pythonModule(mod string, rest []field, c *cmd) {
	switch mod {
	case "pip", "twine", "poetry", "flit", "hatch", "pdm", "uv":
		a.command(append([]field{word(mod)}, rest...), c.env, c.st, c.in, c.depth+1)
	case "zipfile", "tarfile":
		a.pythonArchive(mod, rest, c)
	case "webbrowser":
		// The browser fetches the URL: one built from a command's
		// output carries it to the host, as curl's would.
		a.carried(rest, rest, "python -m webbrowser")
	case "http.server", "smtpd":
	}
}

func (a *analyzer) node(c *cmd) {
	args := c.args
	valued := set("-r", "--require", "--import", "--input-type", "-C", "--conditions", "--loader", "--experimental-loader",
		"--env-file", "--title", "--max-old-space-size", "--stack-size", "--inspect-port", "--redirect-warnings", "--watch-path")
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn && f.optLike() {
			a.all(c.name + " options only known at run time")
			return
		}
		switch {
		case f.s == "-e" || f.s == "--eval" || f.s == "-p" || f.s == "--print" || f.s == "-pe" || f.s == "-ep":
			if i+1 < len(args) {
				code := args[i+1].s
				if args[i+1].dyn {
					code += dynMark
				}
				a.scanCode("js", code, c.name+" "+f.s)
			}
			return
		case strings.HasPrefix(f.s, "--eval=") || strings.HasPrefix(f.s, "--print="):
			_, code, _ := strings.Cut(f.s, "=")
			a.scanCode("js", code, c.name+" --eval")
			return
		case f.s == "-":
			a.codeFromInput("js", c)
			return
		case valued[f.s]:
			i++
		case f.optLike():
		default:
			a.scriptArg(f, c)
			return
		}
	}
	a.codeFromInput("js", c)
}

func (a *analyzer) deno(c *cmd) {
	if len(c.args) >= 1 && c.args[0].s == "publish" && !hasField(c.args, "--dry-run") {
		a.add(Publish, false, "deno publish sends the package to JSR")
	}
	if len(c.args) >= 2 && c.args[0].s == "eval" {
		ops := parseOpts(c.args[1:], optSpec{}).operands
		if len(ops) > 0 {
			code := ops[0].s
			if ops[0].dyn {
				code += dynMark
			}
			a.scanCode("js", code, "deno eval")
		}
	}
}

// perlLike handles perl and ruby: -e code (possibly clustered as -lne),
// -i for in-place edits of the file operands.
func (a *analyzer) perlLike(c *cmd, lang string, valueFlags string) {
	args := c.args
	var codes []string
	inPlace := false
	var ops []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn && f.optLike() {
			a.all(c.name + " options only known at run time")
			return
		}
		if f.s == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if !f.optLike() {
			ops = append(ops, f)
			continue
		}
		cl := f.s[1:]
		for j := 0; j < len(cl); j++ {
			ch := cl[j]
			switch {
			case ch == 'e' || ch == 'E':
				code := cl[j+1:]
				if code == "" && i+1 < len(args) {
					i++
					code = args[i].s
					if args[i].dyn {
						code += dynMark
					}
				}
				codes = append(codes, code)
				j = len(cl)
			case ch == 'i':
				inPlace = true
				j = len(cl) // the rest is a backup suffix
			case strings.IndexByte(valueFlags, ch) >= 0:
				if j == len(cl)-1 {
					i++
				}
				j = len(cl)
			}
		}
	}
	if len(codes) == 0 {
		if len(ops) > 0 {
			a.scriptArg(ops[0], c)
			ops = ops[1:]
		} else {
			a.codeFromInput(lang, c)
		}
	} else {
		a.scanCode(lang, strings.Join(codes, "\n"), c.name+" -e")
	}
	if inPlace {
		for _, f := range ops {
			a.writePath(f, c.st, c.name+" -i")
		}
	}
}

func (a *analyzer) perl(c *cmd) { a.perlLike(c, "perl", "IMmxFCdD0l") }
func (a *analyzer) ruby(c *cmd) { a.perlLike(c, "ruby", "rICEFxW0") }

func (a *analyzer) php(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "rBREFfdcz", long: []string{"run", "process-begin", "process-code", "process-end", "process-file", "file", "define"}})
	var codes []string
	for _, o := range p.opts {
		switch o.name {
		case "-r", "-B", "-R", "-E", "--run", "--process-begin", "--process-code", "--process-end":
			code := o.val.s
			if o.val.dyn {
				code += dynMark
			}
			codes = append(codes, code)
		}
	}
	switch {
	case len(codes) > 0:
		a.scanCode("php", strings.Join(codes, "\n"), "php -r")
	case p.has("-f", "--file", "-a", "-S", "-l", "-v", "-m", "-i", "-h", "--help"):
	case len(p.operands) > 0:
		a.scriptArg(p.operands[0], c)
		a.scriptTask(p.operands[0], p.operands[1:])
	default:
		a.codeFromInput("php", c)
	}
}

func (a *analyzer) lua(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "el", posix: true})
	codes := p.values("-e")
	for _, code := range codes {
		s := code.s
		if code.dyn {
			s += dynMark
		}
		a.scanCode("lua", s, c.name+" -e")
	}
	if len(codes) == 0 {
		if len(p.operands) > 0 && p.operands[0].s != "-" {
			a.scriptArg(p.operands[0], c)
		} else {
			a.codeFromInput("lua", c)
		}
	}
}

func (a *analyzer) rscript(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "e"})
	for _, code := range p.values("-e") {
		s := code.s
		if code.dyn {
			s += dynMark
		}
		a.scanCode("r", s, "Rscript -e")
	}
}

func (a *analyzer) osascript(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "elsi"})
	codes := p.values("-e")
	for _, code := range codes {
		s := code.s
		if code.dyn {
			s += dynMark
		}
		a.scanCode("applescript", s, "osascript -e")
	}
	switch {
	case len(codes) > 0:
	case len(p.operands) > 0 && p.operands[0].s != "-":
		a.scriptArg(p.operands[0], c) // a script file, judged as python's is
	default:
		a.codeFromInput("applescript", c) // the script on standard input
	}
}

// awk: the program is the first operand unless -f names a file; system(),
// pipes to and from commands run shell commands.
func (a *analyzer) awk(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "fvFei", long: []string{"file", "assign", "field-separator", "source", "include", "exec"}})
	progs := p.values("-e", "--source")
	ops := p.operands
	if len(progs) == 0 && !p.has("-f", "--file", "--exec") && len(ops) > 0 {
		progs, ops = ops[:1], ops[1:]
	}
	// gawk's inplace extension (-i inplace, or @include "inplace" in the
	// program) rewrites every file operand with the program's output.
	inPlace := false
	for _, prog := range progs {
		s := prog.s
		if prog.dyn {
			s += dynMark
		}
		a.scanCode("awk", s, c.name)
		inPlace = inPlace || strings.Contains(s, `@include "inplace`)
	}
	for _, f := range p.values("-i", "--include") {
		if f.dyn || strings.TrimSuffix(path.Base(f.s), ".awk") == "inplace" {
			inPlace = true
		}
	}
	for _, f := range append(p.values("-f", "--file", "--exec"), p.values("-i", "--include")...) {
		a.scriptArg(f, c)
	}
	for _, f := range ops {
		if !f.dyn && isAssignment(f.s) || f.s == "-" {
			continue
		}
		if inPlace {
			a.writePath(f, c.st, c.name+" -i inplace")
			continue
		}
		a.readPath(f, c.st, c.name, false)
	}
}
