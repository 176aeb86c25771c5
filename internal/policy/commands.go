package policy

// This file holds the entry point for one simple command and the handler
// table for programs judged by name; wrappers.go unwraps commands that run
// another command, scripts.go follows shells, scripts and shell builtins.

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
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
		wrappersOnce.Do(initWrappers)
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

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// dispatch analyses a command that is not a wrapper.
func (a *analyzer) dispatch(name string, argv []field, env map[string]field, st *state, in input, depth int) {
	args := argv[1:]
	if shells[name] {
		a.shell(name, args, st, in, depth)
		return
	}
	handlersOnce.Do(initHandlers)
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

// handlers is filled on first use (initHandlers), like gitSubcommands and
// wrappers: fixrail links this package into every command and the hook
// judges one call per process, so building the tables at init was start-up
// cost most processes never use.
var (
	handlers     map[string]func(a *analyzer, c *cmd)
	handlersOnce sync.Once
)

func initHandlers() {
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
		"nc":               (*analyzer).netcat,
		"ncat":             (*analyzer).netcat,
		"netcat":           (*analyzer).netcat,
		"socat":            (*analyzer).socat,
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
