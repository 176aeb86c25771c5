package policy

import (
	"strings"
)

// hookInstaller: git-hook managers that install hooks into the repository
// (.git/hooks, or core.hooksPath for husky): every later commit, push or
// checkout runs what they name, outside any gated call, as a hand-written
// .git/hooks file would.
func (a *analyzer) hookInstaller(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "t", long: []string{"hook-type", "config", "color"}})
	ops := statics(p.operands)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	installs := false
	switch c.name {
	case "pre-commit":
		installs = sub == "install" || sub == "init-templatedir"
	case "husky":
		installs = sub == "" || sub == "install" || sub == "init" // husky 9 with no argument sets core.hooksPath
	case "lefthook":
		installs = sub == "install"
	case "overcommit":
		installs = p.has("--install", "-i")
	}
	if installs || anyDyn(p.operands) {
		a.add(ScopeEscalation, !installs, "%s installs git hooks: later git commands run what they name", strings.TrimSpace(c.name+" "+sub))
	}
}

func (a *analyzer) crontab(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "u"})
	if p.has("-l") && !p.has("-r", "-e") {
		return
	}
	a.add(ScopeEscalation, false, "crontab changes scheduled jobs")
	if c.in.kind == inText {
		a.script(cronCommands(c.in.text), a.childState(c.st, c.env), c.depth+1, "crontab entry")
	}
}

// cronCommands drops the five schedule fields of each crontab line.
func cronCommands(tab string) string {
	var sb strings.Builder
	for line := range strings.Lines(tab) {
		fs := strings.Fields(line)
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") || strings.Contains(fs[0], "=") {
			continue
		}
		n := 5
		if strings.HasPrefix(fs[0], "@") {
			n = 1
		}
		if len(fs) > n {
			sb.WriteString(strings.Join(fs[n:], " "))
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

func (a *analyzer) at(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "qfMtm"})
	if p.has("-l", "-r", "-d", "-c") {
		return
	}
	a.add(ScopeEscalation, false, "%s schedules a command to run later", c.name)
	if f, ok := p.value("-f"); ok {
		a.scriptFile(f, c.st, c.depth, c.name+" -f", false)
		return
	}
	if c.in.kind == inText {
		a.stdinScript(c.in, c.st, c.depth, c.name)
	}
}

var systemctlVerbs = wordSet{"enable", "reenable", "start", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart",
	"link", "edit", "preset", "preset-all", "mask", "unmask", "set-default", "isolate", "add-wants", "add-requires",
	"set-property", "revert", "set-environment", "import-environment"}

func (a *analyzer) systemctl(c *cmd) {
	i := firstOperand(c.args, "tpHMnosP", []string{"type", "property", "host", "machine", "root", "lines", "output", "signal",
		"kill-whom", "state", "job-mode", "what", "timestamp", "image", "boot-loader-entry", "reboot-argument",
		"preset-mode", "message", "when", "drop-in", "kill-value"})
	if i < 0 {
		return
	}
	if v := c.args[i]; v.dyn || systemctlVerbs.has(v.s) {
		a.add(ScopeEscalation, v.dyn, "systemctl %s changes services", v)
	}
}

func (a *analyzer) loginctl(c *cmd) {
	if i := firstOperand(c.args, "HMpn", nil); i >= 0 && c.args[i].s == "enable-linger" {
		a.add(ScopeEscalation, false, "loginctl enable-linger keeps user services running after logout")
	}
}

func (a *analyzer) launchctl(c *cmd) {
	if len(c.args) == 0 {
		return
	}
	switch v := c.args[0].s; v {
	case "load", "bootstrap", "enable", "submit", "kickstart", "start", "asuser", "setenv":
		a.add(ScopeEscalation, false, "launchctl %s installs or starts a background job", v)
	}
}

func (a *analyzer) service(c *cmd) {
	ops := statics(parseOpts(c.args, optSpec{}).operands)
	if len(ops) >= 2 {
		switch ops[1] {
		case "start", "restart", "reload", "force-reload", "enable":
			a.add(ScopeEscalation, false, "service %s %s starts a system service", ops[0], ops[1])
		}
	}
}

func (a *analyzer) tmux(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "LSfcT", posix: true})
	if cl, ok := p.value("-c"); ok {
		a.runsText(cl, c, "tmux -c")
	}
	if len(p.operands) == 0 {
		return
	}
	sub := p.operands[0].s
	switch sub {
	case "new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp":
	default:
		return
	}
	q := parseOpts(p.operands[1:], optSpec{short: "cefFnstxyNlpbtA", posix: true})
	if q.has("-d") || sub != "new" && sub != "new-session" {
		a.add(ScopeEscalation, false, "tmux %s starts a detached session", sub)
	}
	if len(q.operands) > 0 {
		if anyDyn(q.operands) {
			a.all("tmux runs a command only known at run time")
		}
		a.script(dynText(strings.Join(rawStrings(q.operands), " ")), a.childState(c.st, c.env), c.depth+1, "tmux "+sub)
	}
}

func (a *analyzer) screen(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "ScepTthlX", posix: true})
	if p.has("-d", "-D") && p.has("-m") {
		a.add(ScopeEscalation, false, "screen -dm starts a detached session")
	}
	if len(p.operands) > 0 {
		a.command(p.operands, c.env, c.st, input{}, c.depth+1)
	}
}

// dtach and abduco run a command in a session that outlives the call: -n
// (dtach) and -n/-c with the detach flag (abduco) start it detached.
func (a *analyzer) dtach(c *cmd) {
	args := c.args
	if len(args) < 2 {
		return
	}
	mode := args[0].s
	rest := args[2:] // the mode and the socket or session name
	if c.name == "abduco" {
		p := parseOpts(args, optSpec{short: "e", posix: true})
		if len(p.operands) < 2 {
			return
		}
		if p.has("-n") || p.has("-c") && p.has("-f") {
			a.add(ScopeEscalation, false, "abduco -n starts a detached session")
		}
		a.command(p.operands[1:], c.env, c.st, input{}, c.depth+1)
		return
	}
	switch mode {
	case "-n", "-N":
		a.add(ScopeEscalation, false, "dtach %s starts a detached session", mode)
	case "-A", "-c":
	default:
		return // -a attaches; -p pushes input
	}
	p := parseOpts(rest, optSpec{short: "er", posix: true})
	a.command(p.operands, c.env, c.st, input{}, c.depth+1)
}

func (a *analyzer) pm2(c *cmd) {
	if i := firstOperand(c.args, "", nil); i >= 0 {
		switch v := c.args[i].s; v {
		case "start", "startup", "restart", "reload", "resurrect":
			a.add(ScopeEscalation, false, "%s %s keeps a process running after the session", c.name, v)
		}
	}
}

func (a *analyzer) direnv(c *cmd) {
	if a.direnvExec(c) {
		return
	}
	if len(c.args) > 0 && (c.args[0].s == "allow" || c.args[0].s == "permit" || c.args[0].s == "grant") {
		a.add(ScopeEscalation, false, "direnv allow lets an .envrc run on every cd")
	}
}

// agentCLI matches starting another coding agent with weaker controls
// than the session's own (no permission checks, no hooks).
func (a *analyzer) agentCLI(c *cmd) {
	for i, f := range c.args {
		s := strings.ToLower(f.s)
		next := ""
		if i+1 < len(c.args) {
			next = strings.ToLower(c.args[i+1].s)
		}
		weak := false
		switch c.name {
		case "claude":
			switch {
			case s == "--dangerously-skip-permissions", s == "--allow-dangerously-skip-permissions", s == "--bare",
				s == "--safe-mode", s == "--setting-sources", strings.HasPrefix(s, "--setting-sources="),
				s == "--settings", strings.HasPrefix(s, "--settings="):
				weak = true
			case s == "--permission-mode" && (next == "bypasspermissions" || next == "dontask"),
				s == "--permission-mode=bypasspermissions" || s == "--permission-mode=dontask":
				weak = true
			}
		case "codex":
			switch {
			case s == "--dangerously-bypass-approvals-and-sandbox", s == "--yolo", s == "--dangerously-bypass-hook-trust",
				s == "--full-auto":
				weak = true
			case (s == "-s" || s == "--sandbox") && next == "danger-full-access", s == "--sandbox=danger-full-access":
				weak = true
			case (s == "-a" || s == "--ask-for-approval") && next == "never", s == "--ask-for-approval=never":
				weak = true
			}
		case "gemini":
			switch {
			case s == "--yolo", s == "-y":
				weak = true
			case s == "--approval-mode" && next == "yolo", s == "--approval-mode=yolo":
				weak = true
			}
		}
		if weak {
			a.add(ScopeEscalation, false, "%s %s starts an agent without the session's controls", c.name, f.s)
		}
	}
}

// fixrail approve and fixrail receipts checkpoint sign with the approval
// key: an agent running them approves its own request. fixrail receipts
// repair moves receipts out of the log: an agent running it hides them.
func (a *analyzer) fixrail(c *cmd) {
	ops := parseOpts(c.args, optSpec{}).operands
	if len(ops) == 0 {
		return
	}
	switch {
	case ops[0].dyn:
		a.add(SelfMod, true, "fixrail %s: subcommand only known at run time", ops[0])
	case ops[0].s == "approve":
		a.add(SelfMod, false, "fixrail approve signs an approval")
	case ops[0].s == "receipts" && len(ops) > 1 && (ops[1].dyn || ops[1].s == "checkpoint"):
		a.add(SelfMod, ops[1].dyn, "fixrail receipts checkpoint signs with the approval key")
	case ops[0].s == "receipts" && len(ops) > 1 && ops[1].s == "repair":
		a.add(SelfMod, false, "fixrail receipts repair moves receipts out of the log")
	}
}

// approvalNamespace is the SSH signature namespace of fixrail approvals.
const approvalNamespace = "fixrail-approval"

func (a *analyzer) sshKeygen(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "abCDEFfIJjKMmNnOPRrstVwYz"})
	a.sshKeygenWrites(p, c.st)
	y, ok := p.value("-Y")
	if !ok || (!y.dyn && y.s != "sign") {
		return
	}
	ns, ok := p.value("-n")
	switch {
	case y.dyn || !ok || ns.dyn:
		a.add(SelfMod, true, "ssh-keygen -Y %s -n %s may sign a fixrail approval", y, ns)
	case ns.s == approvalNamespace:
		a.add(SelfMod, false, "ssh-keygen -Y sign -n %s signs a fixrail approval", approvalNamespace)
	}
}
