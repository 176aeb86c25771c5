package policy

// This file holds the entry point for one simple command and the handler
// table for programs judged by name; wrappers.go unwraps commands that run
// another command, scripts.go follows shells, scripts and shell builtins.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// command analyses one simple command after expansion: argv[0] is the
// program as written, env the VAR=x prefixes (what the script exported
// before it joins them).
func (a *analyzer) command(argv []field, env map[string]field, st *state, in input, depth int) {
	env = st.environ(env)
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
		if env == nil && name == "env" {
			env = map[string]field{} // env's NAME=value operands join the prefixes
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
	if len(a.secrets) == 0 {
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
func (a *analyzer) childState(st *state, env map[string]field) *state {
	c := a.top()
	c.setCwd(st.cwd)
	c.remote = st.remote
	// The child inherits the environment: what the script exported and
	// the program's own VAR=x prefixes, exported in turn to its children.
	for k, v := range st.environ(env) {
		c.export(k)
		if v.dyn || v.out {
			delete(c.vars, k)
			if v.out {
				c.setOut(k, true)
			}
			continue
		}
		c.vars[k] = v.s
	}
	return c
}

// A wordSet is a package-level set of words. A composite literal of
// constants is laid out by the compiler, so the sets cost nothing at start-up
// (built as maps they were most of this package's initialisation, paid by
// every hook call); a linear scan of a few dozen short strings is cheaper
// than that for the few lookups a call makes.
type wordSet []string

func (w wordSet) has(s string) bool { return slices.Contains(w, s) }

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
	if shells.has(name) {
		a.shell(name, args, env, st, in, depth)
		return
	}
	if !readers.has(name) {
		a.outputOptions(name, args, st)
	}
	if h := handlerFor(name); h != nil {
		h(a, &cmd{name: name, argv: argv, args: args, env: env, st: st, in: in, depth: depth})
		return
	}
	switch {
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy"):
		a.python(&cmd{name: name, argv: argv, args: args, env: env, st: st, in: in, depth: depth})
	case strings.HasPrefix(name, "mkfs"):
		a.add(Destructive, false, "%s formats a file system", name)
	case !readers.has(name):
		a.unknownProgram(name, args, st)
	}
}

// readers are programs with no analysis of their own that only read the
// files they are given (or print what they are told).
var readers = wordSet{"cat", "tac", "head", "tail", "more", "most", "wc", "diff", "cmp", "comm", "ls", "stat", "file",
	"md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "sum", "jq", "gojq", "jless", "fx", "bat", "batcat",
	"realpath", "readlink", "test", "[", "echo", "du", "tree", "od", "hexdump", "hd", "strings", "cut", "tr", "column",
	"nl", "fold", "fmt", "expand", "unexpand", "rev", "paste", "join", "look", "basename", "dirname", "pwd", "true",
	"false", "type", "which", "whereis", "command", "hash", "help", "exa", "eza", "lsd", "fd", "fdfind", "locate",
	"delta", "colordiff", "icdiff", "difft", "wdiff", "jd", "json_pp", "jp", "gron", "tokei", "cloc", "scc",
	"shellcheck", "yamllint", "jsonlint", "markdownlint", "actionlint", "hadolint", "sleep", "date", "env", "printenv",
	"id", "whoami", "uname", "hostname", "nproc", "free", "uptime", "ps", "pgrep", "lsof", "getfacl", "lsattr",
	"namei", "sha224sum", "sha384sum", "base32", "basenc", "iconv", "zcat", "zless", "zgrep", "bzcat", "xzcat",
	"zstdcat", "lz4cat", "ssh-add", "code", "cursor", "subl"}

// outputFlags are option names that, across programs, say where output
// goes: a file, or a directory files land in.
var outputFlags = wordSet{"-o", "--output", "--out", "--outfile", "--out-file", "--output-file", "--output-document",
	"--output-dir", "--out-dir", "--outdir", "--output-directory", "--dir", "--directory", "--dest", "--destination",
	"--dest-dir", "--target", "--target-dir", "--prefix", "--root", "--pack-destination", "--download-dir", "--save-to",
	"--into", "--export", "--save"}

// outputOptions: whatever the program, one of outputFlags given a path
// self-mod protects may write there (go build -o, docker save -o,
// pip install --target, npm --prefix, cargo install --root): unresolvable,
// where no analysis of the program says more.
func (a *analyzer) outputOptions(name string, args []field, st *state) {
	for i, f := range args {
		if f.dyn || !strings.HasPrefix(f.s, "-") {
			continue
		}
		opt, val, attached := strings.Cut(f.s, "=")
		if !attached && strings.HasPrefix(opt, "-o") && len(opt) > 2 {
			opt, val, attached = "-o", opt[2:], true // -oFILE
		}
		if !outputFlags.has(opt) {
			continue
		}
		if !attached {
			if i+1 >= len(args) || args[i+1].dyn {
				continue
			}
			val = args[i+1].s
		}
		if p, ok := cleanAbs(st.cwd, a.expandTilde(val)); ok {
			a.mayWriteRule(SelfMod, name+" "+opt, p)
		}
	}
}

// unknownProgram: a program the hook has no analysis of, given a path
// self-mod protects (a literal argument, or an option's value after =),
// may write it as well as read it — sd, yq -i, prettier --write, dasel
// put, rename, gpg -o all do — so self-mod is unresolvable there, not
// passed. Only self-mod: it guards the gate itself, and the other rules'
// zones (~/.ssh, ~/.kube/config) are named to many tools that only read
// them. Programs known only to read are in readers.
func (a *analyzer) unknownProgram(name string, args []field, st *state) {
	var paths []string
	for _, f := range args {
		s := f.s
		if f.dyn || s == "" {
			continue
		}
		if strings.HasPrefix(s, "-") {
			_, v, ok := strings.Cut(s, "=")
			if !ok {
				continue
			}
			s = v
		}
		if p, ok := cleanAbs(st.cwd, a.expandTilde(s)); ok {
			paths = append(paths, p)
		}
	}
	if len(paths) > 0 {
		a.mayWriteRule(SelfMod, name+", a program the hook does not know,", paths...)
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

// handlerFor returns the analysis of the command name, or nil. A switch
// and not a map: the compiler makes it a search over constant strings,
// so no process pays at start-up (or on first use) to build a table of
// some 230 entries, and the hook judges one call per process.
func handlerFor(name string) func(a *analyzer, c *cmd) {
	switch name {
	case "eval":
		return (*analyzer).evalCmd
	case "source":
		return (*analyzer).sourceCmd
	case ".":
		return (*analyzer).sourceCmd
	case "trap":
		return (*analyzer).trapCmd
	case "alias":
		return (*analyzer).aliasCmd
	case "cd":
		return (*analyzer).cdCmd
	case "pushd":
		return (*analyzer).cdCmd
	case "popd":
		return (*analyzer).popdCmd
	case "read":
		return forgetVars
	case "mapfile":
		return forgetVars
	case "readarray":
		return forgetVars
	case "getopts":
		return forgetVars
	case "unset":
		return forgetVars
	case "printf":
		return forgetVars
	case "disown":
		return func(a *analyzer, c *cmd) { a.add(ScopeEscalation, false, "disown detaches a job from the session") }
	case "git":
		return (*analyzer).git
	case "hub":
		return (*analyzer).git
	case "gh":
		return (*analyzer).gh
	case "glab":
		return (*analyzer).glab
	case "rm":
		return (*analyzer).rm
	case "unlink":
		return removesAll
	case "rmdir":
		return removesAll
	case "shred":
		return (*analyzer).shred
	case "find":
		return (*analyzer).find
	case "cp":
		return (*analyzer).cp
	case "mv":
		return (*analyzer).cp
	case "install":
		return (*analyzer).cp
	case "ln":
		return (*analyzer).ln
	case "tee":
		return writesAll
	case "touch":
		return (*analyzer).touch
	case "truncate":
		return (*analyzer).touch
	case "mkdir":
		return (*analyzer).touch
	case "mkfifo":
		return (*analyzer).touch
	case "mknod":
		return (*analyzer).touch
	case "sponge":
		return writesAll
	case "chmod":
		return (*analyzer).chmod
	case "chown":
		return (*analyzer).chown
	case "chgrp":
		return (*analyzer).chown
	case "chattr":
		return (*analyzer).chown
	case "setfacl":
		return (*analyzer).setfacl
	case "dd":
		return (*analyzer).dd
	case "sed":
		return (*analyzer).sed
	case "tar", "gtar", "bsdtar":
		return (*analyzer).tar
	case "zip":
		return (*analyzer).zip
	case "unzip", "bsdunzip":
		return (*analyzer).unzip
	case "jar":
		return (*analyzer).jar
	case "sort":
		return (*analyzer).sortCmd
	case "uniq":
		return secondOperandOut(optSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}})
	case "xxd":
		return (*analyzer).xxd
	case "7z", "7za", "7zr", "7zz":
		return (*analyzer).sevenZip
	case "cpio", "bsdcpio":
		return (*analyzer).cpio
	case "pax":
		return (*analyzer).pax
	case "unrar", "unar", "aunpack", "atool":
		return (*analyzer).unarchiver
	case "ar":
		return (*analyzer).ar
	case "yq":
		return (*analyzer).yq
	case "patch":
		return (*analyzer).patch
	case "grep":
		return (*analyzer).search
	case "egrep":
		return (*analyzer).search
	case "fgrep":
		return (*analyzer).search
	case "rg":
		return (*analyzer).search
	case "ag":
		return (*analyzer).search
	case "ack":
		return (*analyzer).search
	case "vi":
		return (*analyzer).editor
	case "vim":
		return (*analyzer).editor
	case "nvim":
		return (*analyzer).editor
	case "ex", "view", "gvim", "vimdiff":
		return (*analyzer).editor
	case "ed", "red":
		return (*analyzer).editor
	case "emacs":
		return (*analyzer).editor
	case "nano":
		return (*analyzer).editor
	case "pico":
		return (*analyzer).editor
	case "micro":
		return (*analyzer).editor
	case "wipefs":
		return destroys("wipes file system signatures")
	case "fdisk":
		return destroys("edits a partition table")
	case "sfdisk":
		return destroys("edits a partition table")
	case "cfdisk":
		return destroys("edits a partition table")
	case "parted":
		return destroys("edits a partition table")
	case "sgdisk":
		return destroys("edits a partition table")
	case "gdisk":
		return destroys("edits a partition table")
	case "terraform":
		return (*analyzer).terraform
	case "terragrunt":
		return (*analyzer).terraform
	case "pulumi":
		return (*analyzer).pulumi
	case "cdk":
		return (*analyzer).cdk
	case "serverless":
		return (*analyzer).cdk
	case "sls":
		return (*analyzer).cdk
	case "cdktf", "sst", "sam", "helmfile", "copilot", "eksctl", "amplify":
		return (*analyzer).infraDelete
	case "dropdb":
		return (*analyzer).dropdb
	case "supabase", "flyway", "alembic", "liquibase", "sequelize", "sequelize-cli", "typeorm", "firebase", "knex", "dbmate", "goose", "migrate":
		return (*analyzer).migrationReset
	case "influx", "etcdctl", "consul", "vault", "bq":
		return (*analyzer).storeDelete
	case "mysqladmin":
		return (*analyzer).mysqladmin
	case "mariadb-admin":
		return (*analyzer).mysqladmin
	case "mongorestore":
		return (*analyzer).mongorestore
	case "rails":
		return (*analyzer).rails
	case "bundle":
		return (*analyzer).bundle
	case "django-admin":
		return (*analyzer).djangoAdmin
	case "prisma":
		return (*analyzer).prisma
	case "docker-compose":
		return (*analyzer).dockerCompose
	case "podman-compose":
		return (*analyzer).dockerCompose
	case "tofu":
		return (*analyzer).terraform
	case "kubectl":
		return (*analyzer).kubectl
	case "helm":
		return (*analyzer).helm
	case "psql":
		return (*analyzer).sql
	case "mysql":
		return (*analyzer).sql
	case "mariadb":
		return (*analyzer).sql
	case "sqlite3":
		return (*analyzer).sql
	case "prettier":
		return (*analyzer).prettier
	case "mongosh":
		return (*analyzer).sql
	case "mongo":
		return (*analyzer).sql
	case "redis-cli":
		return (*analyzer).sql
	case "clickhouse-client", "clickhouse", "cqlsh", "duckdb", "sqlcmd", "snowsql", "trino", "presto", "usql", "pgcli", "mycli", "litecli", "cockroach":
		return (*analyzer).sql
	case "curl":
		return (*analyzer).curl
	case "wget":
		return (*analyzer).wget
	case "fd":
		return (*analyzer).fd
	case "fdfind":
		return (*analyzer).fd
	case "http":
		return (*analyzer).httpie
	case "https":
		return (*analyzer).httpie
	case "xh":
		return (*analyzer).httpie
	case "xhs":
		return (*analyzer).httpie
	case "nc":
		return (*analyzer).netcat
	case "ncat":
		return (*analyzer).netcat
	case "netcat":
		return (*analyzer).netcat
	case "socat":
		return (*analyzer).socat
	case "telnet":
		return egress("opens a network connection")
	case "ftp":
		return egress("transfers files to another host")
	case "lftp":
		return egress("transfers files to another host")
	case "tftp":
		return egress("transfers files to another host")
	case "sftp":
		return (*analyzer).sftp
	case "smbclient":
		return egress("transfers files to another host")
	case "ssh-copy-id":
		return egress("installs a key on another host")
	case "mosh":
		return egress("opens a shell on another host")
	case "rsh":
		return egress("opens a shell on another host")
	case "rlogin":
		return egress("opens a shell on another host")
	case "sendmail":
		return egress("sends mail")
	case "mail":
		return egress("sends mail")
	case "mailx":
		return egress("sends mail")
	case "mutt":
		return egress("sends mail")
	case "msmtp":
		return egress("sends mail")
	case "openssl":
		return (*analyzer).openssl
	case "ssh":
		return (*analyzer).ssh
	case "scp":
		return (*analyzer).scp
	case "rsync":
		return (*analyzer).rsync
	case "dig":
		return (*analyzer).lookup
	case "nslookup":
		return (*analyzer).lookup
	case "host":
		return (*analyzer).lookup
	case "ping":
		return (*analyzer).lookup
	case "ping6":
		return (*analyzer).lookup
	case "traceroute", "tracepath", "mtr", "whois", "drill", "kdig", "delv", "nmap", "resolvectl", "systemd-resolve",
		"fping", "arping", "hping3", "nping", "httping", "tcptraceroute":
		return (*analyzer).lookup
	case "getent":
		return func(a *analyzer, c *cmd) {
			// getent hosts|ahosts NAME asks the resolver, as dig does.
			if len(c.args) > 1 && (strings.HasPrefix(c.args[0].s, "hosts") || strings.HasPrefix(c.args[0].s, "ahosts")) {
				a.lookup(&cmd{name: c.name, args: c.args[1:], st: c.st})
			}
		}
	case "aria2c", "axel", "lynx", "w3m", "links", "elinks":
		return (*analyzer).fetchURL
	case "ngrok", "cloudflared", "lt", "localtunnel", "bore", "zrok", "localxpose", "loclx", "pinggy":
		return (*analyzer).tunnel
	case "aws":
		return (*analyzer).aws
	case "gsutil":
		return (*analyzer).gsutil
	case "gcloud":
		return (*analyzer).gcloud
	case "az":
		return (*analyzer).az
	case "rclone":
		return (*analyzer).rclone
	case "s3cmd":
		return (*analyzer).s3cmd
	case "npm":
		return (*analyzer).npm
	case "pnpm":
		return (*analyzer).npm
	case "yarn":
		return (*analyzer).npm
	case "bun":
		return (*analyzer).npm
	case "npx":
		return (*analyzer).npx
	case "pnpx":
		return (*analyzer).npx
	case "bunx":
		return (*analyzer).npx
	case "cargo":
		return both(publishVerbs(map[string]bool{"publish": true, "yank": true, "owner": true}, "--dry-run", "-n"),
			releaseVerb("--execute", "-x")) // cargo-release dry-runs unless told to execute
	case "nx":
		return releaseVerb("") // nx release versions and publishes unless --dry-run
	case "twine":
		return publishVerbs(map[string]bool{"upload": true, "register": true})
	case "poetry":
		return envRun(optSpec{short: "CP", long: []string{"directory", "project"}}, publishVerbs(map[string]bool{"publish": true}, "--dry-run"))
	case "uv":
		return envRun(uvRunOpts, publishVerbs(map[string]bool{"publish": true}, "--dry-run"))
	case "flit":
		return publishVerbs(map[string]bool{"publish": true})
	case "hatch":
		return envRun(optSpec{}, publishVerbs(map[string]bool{"publish": true}))
	case "pdm":
		return envRun(optSpec{short: "p", long: []string{"project"}}, publishVerbs(map[string]bool{"publish": true}, "--dry-run"))
	case "expect":
		return (*analyzer).expect
	case "tclsh", "wish":
		return (*analyzer).tclsh
	case "less":
		return (*analyzer).less
	case "man":
		return (*analyzer).man
	case "gdb", "lldb":
		return (*analyzer).debugger
	case "julia":
		return (*analyzer).julia
	case "pwsh", "powershell":
		return (*analyzer).powershell
	case "gem":
		return both((*analyzer).gemSources, publishVerbs(map[string]bool{"push": true, "yank": true, "owner": true}))
	case "pip", "pip3":
		return (*analyzer).pipConfig
	case "go":
		return (*analyzer).goEnv
	case "dotnet":
		return (*analyzer).dotnet
	case "nuget":
		return publishVerbs(map[string]bool{"push": true, "delete": true})
	case "vsce":
		return publishVerbs(map[string]bool{"publish": true, "unpublish": true})
	case "oras":
		return publishSeq("push", "attach", "tag", "manifest push")
	case "swift":
		return publishSeq("package-registry publish")
	case "rebar3":
		return publishSeq("hex publish")
	case "dart", "flutter":
		return publishSeq("pub publish")
	case "anaconda":
		return publishSeq("upload")
	case "conan":
		return publishSeq("upload")
	case "cabal", "stack", "luarocks":
		return publishSeq("upload")
	case "opam", "nimble", "elm":
		return publishSeq("publish")
	case "ansible-galaxy":
		return publishSeq("collection publish", "role import")
	case "vagrant":
		return publishSeq("cloud publish")
	case "jf", "jfrog":
		return publishSeq("rt upload", "rt u", "rt build-publish", "rt bp", "npm publish", "mvn deploy")
	case "doctl", "hcloud", "linode-cli", "scw", "vultr-cli":
		return (*analyzer).cloudDelete
	case "ovsx":
		return publishVerbs(map[string]bool{"publish": true})
	case "lerna":
		return publishVerbs(map[string]bool{"publish": true})
	case "changeset":
		return publishVerbs(map[string]bool{"publish": true})
	case "mix":
		return (*analyzer).mix
	case "lein":
		return publishVerbs(map[string]bool{"deploy": true})
	case "sbt":
		return publishVerbs(map[string]bool{"publish": true, "publishsigned": true, "release": true})
	case "pod":
		return (*analyzer).pod
	case "goreleaser":
		return (*analyzer).goreleaser
	case "mvn":
		return (*analyzer).mvn
	case "mvnw":
		return (*analyzer).mvn
	case "gradle":
		return (*analyzer).gradle
	case "gradlew":
		return (*analyzer).gradle
	case "docker":
		return (*analyzer).docker
	case "podman":
		return (*analyzer).docker
	case "nerdctl":
		return (*analyzer).docker
	case "buildah":
		return (*analyzer).docker
	case "skopeo":
		return (*analyzer).skopeo
	case "np":
		return publishes("publishes an npm package")
	case "split", "csplit", "gsplit", "gcsplit":
		return (*analyzer).splitFiles
	case "bfg":
		return (*analyzer).bfg
	case "java":
		return (*analyzer).java
	case "fly", "flyctl", "heroku", "vercel", "netlify":
		return (*analyzer).paas
	case "jsr":
		return publishVerbs(map[string]bool{"publish": true}, "--dry-run")
	case "crane":
		// Each of these writes an image or a tag to a registry.
		return publishVerbs(map[string]bool{"push": true, "copy": true, "cp": true, "append": true, "mutate": true,
			"rebase": true, "flatten": true, "tag": true})
	case "ko":
		// ko pushes what it builds unless told to keep it local.
		return publishVerbs(map[string]bool{"build": true, "publish": true, "resolve": true, "apply": true, "create": true,
			"run": true}, "--local", "-L", "--push=false")
	case "release-it":
		return publishes("publishes a release")
	case "semantic-release":
		return publishes("publishes a release")
	case "make":
		return (*analyzer).taskRunner
	case "just":
		return (*analyzer).taskRunner
	case "task":
		return (*analyzer).taskRunner
	case "rake":
		return (*analyzer).rake
	case "crontab":
		return (*analyzer).crontab
	case "pre-commit", "husky", "lefthook", "overcommit":
		return (*analyzer).hookInstaller
	case "at", "batch": // batch is at's queue b, run when the load allows
		return (*analyzer).at
	case "systemctl":
		return (*analyzer).systemctl
	case "loginctl":
		return (*analyzer).loginctl
	case "launchctl":
		return (*analyzer).launchctl
	case "service":
		return (*analyzer).service
	case "update-rc.d":
		return escalates("installs a boot-time service")
	case "chkconfig":
		return escalates("changes boot-time services")
	case "rc-update":
		return escalates("changes boot-time services")
	case "tmux":
		return (*analyzer).tmux
	case "screen":
		return (*analyzer).screen
	case "dtach", "abduco":
		return (*analyzer).dtach
	case "pm2":
		return (*analyzer).pm2
	case "forever":
		return (*analyzer).pm2
	case "usermod":
		return escalates("changes a user account")
	case "useradd":
		return escalates("creates a user account")
	case "adduser":
		return escalates("creates a user account")
	case "userdel":
		return escalates("deletes a user account")
	case "groupadd":
		return escalates("creates a group")
	case "groupmod":
		return escalates("changes a group")
	case "addgroup":
		return escalates("creates a group")
	case "gpasswd":
		return escalates("changes group membership")
	case "passwd":
		return escalates("changes a password")
	case "chpasswd":
		return escalates("changes passwords")
	case "visudo":
		return escalates("edits sudo rules")
	case "vipw":
		return escalates("edits the password file")
	case "setcap":
		return escalates("grants file capabilities")
	case "direnv":
		return (*analyzer).direnv
	case "claude":
		return (*analyzer).agentCLI
	case "codex":
		return (*analyzer).agentCLI
	case "gemini":
		return (*analyzer).agentCLI
	case "fixrail":
		return (*analyzer).fixrail
	case "ssh-keygen":
		return (*analyzer).sshKeygen
	case "node":
		return (*analyzer).node
	case "nodejs":
		return (*analyzer).node
	case "deno":
		return (*analyzer).deno
	case "perl":
		return (*analyzer).perl
	case "ruby":
		return (*analyzer).ruby
	case "php":
		return (*analyzer).php
	case "lua":
		return (*analyzer).lua
	case "luajit":
		return (*analyzer).lua
	case "rscript":
		return (*analyzer).rscript
	case "osascript":
		return (*analyzer).osascript
	case "open", "xdg-open", "gio", "sensible-browser", "x-www-browser", "www-browser", "wslview", "gnome-open", "kde-open", "kde-open5", "exo-open":
		return (*analyzer).opener
	case "awk":
		return (*analyzer).awk
	case "gawk":
		return (*analyzer).awk
	case "mawk":
		return (*analyzer).awk
	case "nawk":
		return (*analyzer).awk
	}
	return nil
}

func forgetVars(a *analyzer, c *cmd) {
	if c.name == "printf" {
		p := parseOpts(c.args, optSpec{short: "v", posix: true})
		carries := slices.ContainsFunc(p.operands, func(f field) bool { return f.out })
		for _, v := range p.values("-v") {
			delete(c.st.vars, v.s)
			c.st.setOut(v.s, carries)
		}
		return
	}
	// read, mapfile and readarray fill their variables with what they
	// read: data, as a command's output is.
	data := c.name != "getopts" && c.name != "unset"
	for _, f := range c.args {
		if !f.dyn && validName(f.s) {
			delete(c.st.vars, f.s)
			c.st.setOut(f.s, data)
		}
	}
	if data && (c.name == "mapfile" || c.name == "readarray") && !slices.ContainsFunc(c.args, func(f field) bool { return !f.optLike() }) {
		c.st.setOut("MAPFILE", true) // the default array
	}
	if data && c.name == "read" && !slices.ContainsFunc(c.args, func(f field) bool { return !f.optLike() }) {
		c.st.setOut("REPLY", true) // the default variable
	}
}

// writesAll: tee and sponge write each operand as a file, making it when
// it is missing.
func writesAll(a *analyzer, c *cmd) {
	p := parseOpts(c.args, optSpec{long: []string{"output-error"}})
	for _, f := range p.operands {
		a.writeFile(f, c.st, c.name)
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

// both runs two analyses of one command.
func both(f, g func(a *analyzer, c *cmd)) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) { f(a, c); g(a, c) }
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
// publishSeq is publish for a command whose operands begin with one of
// seqs (space-separated words: "hex publish"), options anywhere; --dry-run
// publishes nothing.
func publishSeq(seqs ...string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		if hasField(c.args, "--dry-run") {
			return
		}
		var words []string
		for _, f := range c.args {
			if f.dyn {
				a.add(Publish, true, "%s with arguments only known at run time", c.name)
				return
			}
			if !strings.HasPrefix(f.s, "-") {
				words = append(words, f.s)
			}
		}
		for _, seq := range seqs {
			if w := strings.Fields(seq); len(words) >= len(w) && slices.Equal(words[:len(w)], w) {
				a.add(Publish, false, "%s %s", c.name, seq)
				return
			}
		}
	}
}

// cloudDelete: a cloud provider's CLI deleting a resource (doctl compute
// droplet delete, hcloud server delete) is destructive.
func (a *analyzer) cloudDelete(c *cmd) {
	for i, f := range c.args {
		switch f.s {
		case "delete", "destroy", "rm", "remove", "terminate", "purge":
			if !f.dyn && !strings.HasPrefix(f.s, "-") {
				a.add(Destructive, false, "%s %s", c.name, strings.Join(rawStrings(c.args[:i+1]), " "))
				return
			}
		}
	}
}

// releaseVerb: PROGRAM release [...] publishes when it is given one of
// the execute flags ("" for always), and never with --dry-run or -d.
func releaseVerb(execute ...string) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		i := firstOperand(c.args, "", nil)
		if i < 0 || c.args[i].s != "release" || hasField(c.args, "--dry-run") || hasField(c.args, "-d") {
			return
		}
		if j := firstOperand(c.args[i+1:], "", nil); j >= 0 && (c.args[i+1+j].s == "version" || c.args[i+1+j].s == "plan") {
			return // nx release version|plan: files and commits here, nothing published
		}
		for _, x := range execute {
			if x == "" || hasField(c.args, x) {
				a.add(Publish, false, "%s release publishes what it versions", c.name)
				return
			}
		}
	}
}

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
