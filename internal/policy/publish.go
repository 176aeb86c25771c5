package policy

import (
	"path/filepath"
	"strings"
)

// gh: merges, releases and repository visibility are publish; gists,
// secrets and file uploads are egress-other; gh api is judged by method and
// endpoint.
// ghDownloads: what gh writes on this machine — gh repo clone's directory,
// gh release download's -O file or -D directory, gh run download's -D.
func (a *analyzer) ghDownloads(c *cmd, group, verb string, ops []field) {
	switch {
	case group == "repo" && verb == "clone" && len(ops) > 3 && !ops[3].dyn:
		// A repository's tree lands there, as with git clone.
		if abs, ok := cleanAbs(c.st.cwd, a.expandTilde(ops[3].s)); ok {
			a.treeMayHold(abs, "gh repo clone")
		}
	case (group == "release" || group == "run") && verb == "download":
		for i, f := range c.args {
			name, val, attached := strings.Cut(f.s, "=")
			if name != "-O" && name != "--output" && name != "-D" && name != "--dir" {
				continue
			}
			if !attached {
				if i+1 >= len(c.args) {
					continue
				}
				val = c.args[i+1].s
			}
			if val != "-" {
				a.downloadTo(field{s: val, dyn: f.dyn || !attached && c.args[i+1].dyn}, c.st, "gh "+group+" download")
			}
		}
	}
}

func (a *analyzer) gh(c *cmd) {
	ops := parseOpts(c.args, optSpec{short: "RFbtTlamBHAsweSjq", long: []string{"repo", "body-file", "body", "title", "label", "assignee",
		"milestone", "base", "head", "template", "reviewer", "project", "subject", "match-head-commit", "author-email",
		"notes", "notes-file", "target", "visibility", "description", "homepage", "jq", "json", "env", "org", "app", "filename", "desc"}})
	if len(ops.operands) == 0 {
		return
	}
	group := ops.operands[0].s
	verb := ""
	if len(ops.operands) > 1 {
		verb = ops.operands[1].s
	}
	bodyFile := ops.has("-F", "--body-file", "--notes-file")
	a.ghDownloads(c, group, verb, ops.operands)
	if group == "browse" || hasField(c.args, "--web") {
		a.envCommand(c, "gh "+group+" opening a browser", "GH_BROWSER", "BROWSER")
	}
	switch {
	case group == "api":
		a.ghAPI(c, c.args)
	case group == "pr" && verb == "merge":
		a.add(Publish, false, "gh pr merge merges a pull request")
	case group == "release" && (verb == "create" || verb == "upload" || verb == "edit" || verb == "delete" || verb == "delete-asset"):
		a.add(Publish, false, "gh release %s", verb)
	case group == "repo" && verb == "delete":
		a.add(Publish, false, "gh repo delete")
		a.add(Destructive, false, "gh repo delete")
	case group == "repo" && verb == "edit" && hasPrefixField(c.args, "--visibility"):
		a.add(Publish, false, "gh repo edit --visibility changes who can see the repository")
	case group == "repo" && verb == "create" && hasField(c.args, "--public"):
		a.add(Publish, false, "gh repo create --public")
	case group == "gist" && (verb == "create" || verb == "new" || verb == "edit"):
		a.add(EgressOther, false, "gh gist %s uploads files", verb)
	case (group == "secret" || group == "variable") && verb == "set":
		a.add(EgressOther, false, "gh %s set sends a value to GitHub", group)
	case group == "workflow" && (verb == "run" || verb == "enable" || verb == "disable"),
		group == "run" && (verb == "rerun" || verb == "cancel"):
		a.add(EgressOther, false, "gh %s %s changes what runs on GitHub", group, verb)
	case verb == "delete" && group != "extension" && group != "alias":
		// An issue, label, ruleset, cache, run, key or gist deleted on
		// GitHub (gh alias and extension delete change only this machine).
		a.add(EgressOther, false, "gh %s delete changes something on GitHub", group)
		a.add(Destructive, false, "gh %s delete removes it there", group)
	case (group == "issue" || group == "pr") && bodyFile:
		for _, f := range ops.values("-F", "--body-file") {
			a.readPath(f, c.st, "gh "+group, false)
		}
		a.add(EgressOther, false, "gh %s %s uploads the contents of a file", group, verb)
	}
	// A body, title or notes built from what a command printed
	// (--body "$(cat ~/.aws/credentials)") hands that output to GitHub, as
	// a URL carrying it hands it to the URL's host.
	if group != "api" {
		for _, o := range ops.opts {
			switch o.name {
			case "-b", "--body", "-t", "--title", "-n", "--notes", "--description", "-d", "--desc":
				if o.has && o.val.out {
					a.add(EgressOther, false, "gh %s %s %s sends a command's output to GitHub", group, verb, o.name)
				}
			}
		}
	}
}

func hasPrefixField(fs []field, pre string) bool {
	for _, f := range fs {
		if strings.HasPrefix(f.s, pre) {
			return true
		}
	}
	return false
}

var (
	ghMerge    = lazy(`(^|/)pulls/[^/]+/merge$|/merges$`)
	ghRelease  = lazy(`/releases(/|$)`)
	ghBranch   = lazy(`/git/refs/heads/(.+)$`)
	ghRefs     = lazy(`/git/refs$`)
	ghRepo     = lazy(`^repos/[^/]+/[^/]+$`)
	ghContents = lazy(`/contents/`)
)

func (a *analyzer) ghAPI(c *cmd, args []field) {
	p := parseOpts(args, optSpec{short: "XfFHpqt", long: []string{"method", "field", "raw-field", "header", "input", "jq",
		"template", "hostname", "preview", "cache"}})
	fields := p.values("-f", "-F", "--field", "--raw-field")
	method := "GET"
	if len(fields) > 0 || p.has("--input") {
		method = "POST"
	}
	if m, ok := p.value("-X", "--method"); ok {
		if m.dyn {
			a.add(EgressOther, true, "gh api -X %s: the method is only known at run time", m)
			return
		}
		method = strings.ToUpper(m.s)
	}
	ops := p.operands
	if len(ops) < 2 {
		return
	}
	ep := ops[1]
	if readMethod(method) {
		return
	}
	if ep.dyn {
		a.add(EgressOther, true, "gh api -X %s %s: the endpoint is only known at run time", method, ep)
		return
	}
	e := strings.TrimPrefix(ep.s, "/")
	kv := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f.s, "=")
		kv[strings.ToLower(k)] = v
	}
	if e == "graphql" {
		if strings.Contains(strings.ToLower(kv["query"]), "mutation") || p.has("--input") {
			a.add(EgressOther, false, "gh api graphql runs a mutation")
		}
		return
	}
	switch {
	case ghMerge.MatchString(e):
		a.add(Publish, false, "gh api -X %s %s merges", method, e)
	case ghRelease.MatchString(e):
		a.add(Publish, false, "gh api -X %s %s changes a release", method, e)
	case ghBranch.MatchString(e):
		b := ghBranch.FindStringSubmatch(e)[1]
		if method == "DELETE" {
			a.add(BranchDelete, false, "gh api -X DELETE %s deletes the remote branch %s", e, b)
		}
		if a.protectedBranch(b) {
			a.add(PushProtected, false, "gh api -X %s %s updates the protected branch %s", method, e, b)
		}
		if kv["force"] == "true" {
			a.add(PushForce, false, "gh api %s with force=true", e)
		}
		if !a.protectedBranch(b) && kv["force"] != "true" && method != "DELETE" {
			a.add(EgressOther, false, "gh api -X %s %s", method, e)
		}
	case ghRefs.MatchString(e) && a.protectedBranch(strings.TrimPrefix(kv["ref"], "refs/heads/")):
		a.add(PushProtected, false, "gh api %s creates the protected branch %s", e, kv["ref"])
	case method == "DELETE" && ghRepo.MatchString(e):
		a.add(Publish, false, "gh api -X DELETE %s deletes a repository", e)
		a.add(Destructive, false, "gh api -X DELETE %s deletes a repository", e)
	case ghContents.MatchString(e) && a.protectedBranch(kv["branch"]):
		a.add(PushProtected, false, "gh api %s commits to the protected branch %s", e, kv["branch"])
	default:
		a.add(EgressOther, false, "gh api -X %s %s", method, e)
	}
}

func (a *analyzer) glab(c *cmd) {
	ops := parseOpts(c.args, optSpec{short: "R", long: []string{"repo"}}).operands
	if len(ops) < 2 {
		return
	}
	switch g, v := ops[0].s, ops[1].s; {
	case g == "mr" && v == "merge":
		a.add(Publish, false, "glab mr merge")
	case g == "release" && (v == "create" || v == "upload" || v == "delete"):
		a.add(Publish, false, "glab release %s", v)
	case g == "repo" && v == "delete":
		a.add(Publish, false, "glab repo delete")
		a.add(Destructive, false, "glab repo delete")
	}
}

var publishyName = lazy(`(?i)publish|release|deploy|upload|ship`)

// npm, pnpm, yarn and bun: publish and registry changes; scripts whose name
// suggests a release are unresolvable; exec/dlx run another command.
func (a *analyzer) npm(c *cmd) {
	a.addressesCarried(c.args, c.name)
	a.npmShell(c)
	args := c.args
	for _, f := range args {
		if f.s == "--dry-run" || f.s == "--help" || f.s == "-h" {
			return
		}
	}
	i := firstOperand(args, "Cw", []string{"registry", "prefix", "workspace", "userconfig", "cache", "loglevel", "otp", "tag",
		"access", "filter", "dir", "cwd", "globalconfig", "scope"})
	if i < 0 {
		return
	}
	sub := args[i]
	rest := args[i+1:]
	if sub.dyn {
		a.add(Publish, true, "%s %s: subcommand only known at run time", c.name, sub)
		return
	}
	next := ""
	if j := firstOperand(rest, "", nil); j >= 0 {
		next = rest[j].s
	}
	switch sub.s {
	case "publish", "unpublish", "deprecate", "undeprecate":
		a.add(Publish, false, "%s %s", c.name, sub.s)
	case "dist-tag", "dist-tags":
		if next == "add" || next == "rm" || next == "set" {
			a.add(Publish, false, "%s dist-tag %s", c.name, next)
		}
	case "owner", "author":
		if next == "add" || next == "rm" {
			a.add(Publish, false, "%s owner %s", c.name, next)
		}
	case "access":
		// npm access set status=public (npm 9+) or public (before):
		// the package becomes visible to everyone.
		for _, f := range rest {
			if !f.dyn && (f.s == "status=public" || f.s == "public") {
				a.add(Publish, false, "%s access makes the package public", c.name)
			}
		}
	case "npm":
		if next == "publish" {
			a.add(Publish, false, "yarn npm publish")
		}
	case "exec", "x", "dlx":
		p := parseOpts(rest, optSpec{short: "pc", long: []string{"package", "call"}, posix: true})
		if cl, ok := p.value("-c", "--call"); ok {
			a.runsText(cl, c, c.name+" exec -c")
			return
		}
		a.pkgExec(c, p.operands)
	case "run", "run-script", "rs":
		a.scriptName(c, next)
	default:
		if c.name != "npm" && !npmBuiltins.has(sub.s) {
			a.scriptName(c, sub.s) // yarn release, pnpm deploy
		}
	}
}

var npmBuiltins = wordSet{"install", "i", "add", "remove", "rm", "uninstall", "update", "upgrade", "up", "test", "t", "build",
	"ci", "init", "create", "info", "view", "list", "ls", "outdated", "audit", "why", "link", "unlink", "pack", "config",
	"cache", "start", "dev", "lint", "format", "help", "version", "login", "logout", "whoami", "workspace", "workspaces",
	"dedupe", "prune", "rebuild", "store", "env", "patch", "patch-commit", "import", "fetch", "licenses", "node", "set",
	"plugin", "constraints", "explain", "bin", "root", "search", "outdated", "doctor", "pm", "tsc", "jest", "vitest",
	"eslint", "prettier", "typecheck", "check"}

func (a *analyzer) scriptName(c *cmd, name string) {
	if publishyName.MatchString(name) {
		a.add(Publish, true, "%s runs the script %q, whose name suggests a release", c.name, name)
	}
}

// npx and friends run a package's binary.
func (a *analyzer) npx(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "pc", long: []string{"package", "call", "node-options", "shell"}, posix: true})
	if cl, ok := p.value("-c", "--call"); ok {
		a.runsText(cl, c, c.name+" -c")
		return
	}
	a.pkgExec(c, p.operands)
}

func (a *analyzer) pkgExec(c *cmd, ops []field) {
	if len(ops) == 0 {
		return
	}
	pkg := ops[0]
	if pkg.dyn {
		a.all(c.name + " runs a package named only at run time")
		return
	}
	name := pkg.s
	if strings.HasPrefix(name, "@") {
		if _, after, ok := strings.Cut(name, "/"); ok {
			name = after
		}
	}
	if i := strings.Index(name, "@"); i > 0 {
		name = name[:i]
	}
	if strings.Contains(name, "changeset") {
		name = "changeset"
	}
	argv := append([]field{word(name)}, ops[1:]...)
	a.command(argv, c.env, c.st, c.in, c.depth+1)
}

func (a *analyzer) dotnet(c *cmd) {
	ops := statics(parseOpts(c.args, optSpec{short: "ksc", long: []string{"api-key", "source", "configuration"}}).operands)
	if len(ops) >= 2 && ops[0] == "nuget" && (ops[1] == "push" || ops[1] == "delete") {
		a.add(Publish, false, "dotnet nuget %s", ops[1])
	}
	// EF Core: database drop, and database update 0, which reverts every
	// migration, empty the database.
	if len(ops) >= 3 && ops[0] == "ef" && ops[1] == "database" {
		if ops[2] == "drop" || (ops[2] == "update" && len(ops) >= 4 && ops[3] == "0") {
			a.add(DataDrop, false, "dotnet ef database %s empties the database", strings.Join(ops[2:], " "))
		}
	}
}

func (a *analyzer) pod(c *cmd) {
	ops := statics(parseOpts(c.args, optSpec{}).operands)
	if len(ops) >= 2 && ops[0] == "trunk" && (ops[1] == "push" || ops[1] == "delete" || ops[1] == "deprecate") {
		a.add(Publish, false, "pod trunk %s", ops[1])
	}
}

func (a *analyzer) goreleaser(c *cmd) {
	for _, f := range c.args {
		if f.s == "--snapshot" || strings.HasPrefix(f.s, "--skip=publish") || f.s == "--skip-publish" || f.s == "--help" {
			return
		}
	}
	ops := statics(parseOpts(c.args, optSpec{short: "f", long: []string{"config", "parallelism", "timeout", "release-notes", "skip"}}).operands)
	if len(ops) == 0 || ops[0] == "release" {
		a.add(Publish, false, "goreleaser release publishes a release")
	}
}

func (a *analyzer) mvn(c *cmd) {
	for _, f := range c.args {
		switch f.s {
		case "deploy", "release:perform", "deploy:deploy-file", "release:stage", "nexus-staging:release":
			a.add(Publish, false, "mvn %s", f.s)
		}
	}
}

func (a *analyzer) gradle(c *cmd) {
	for _, f := range c.args {
		task := f.s[strings.LastIndex(f.s, ":")+1:]
		if strings.HasPrefix(f.s, "-") || !strings.HasPrefix(task, "publish") || strings.Contains(task, "MavenLocal") {
			continue
		}
		a.add(Publish, false, "%s %s", c.name, f.s)
	}
}

// docker, podman, nerdctl, buildah: pushes publish; prunes destroy; a
// restart policy keeps a container running past the session.
func (a *analyzer) docker(c *cmd) {
	args := c.args
	i := firstOperand(args, "Hcl", []string{"host", "context", "config", "log-level", "tlscacert", "tlscert", "tlskey",
		"connection", "url", "identity", "root", "runroot", "storage-driver", "namespace", "address"})
	if i < 0 {
		return
	}
	sub := args[i].s
	rest := args[i+1:]
	next := ""
	if j := firstOperand(rest, "", nil); j >= 0 {
		next = rest[j].s
	}
	a.dockerData(c, sub, next, rest)
	if sub == "login" {
		// The password goes to the registry named: a command's output
		// there is sent to that host.
		for j, f := range rest {
			name, v, attached := strings.Cut(f.s, "=")
			if name != "-p" && name != "--password" {
				continue
			}
			if !attached && j+1 < len(rest) {
				v, f = rest[j+1].s, rest[j+1]
			}
			if f.out {
				a.add(EgressOther, false, "%s login sends a command's output as the password (%s)", c.name, dynText(v))
			}
		}
	}
	push := hasField(rest, "--push") || hasPrefixField(rest, "--output=type=registry") || hasField(rest, "type=registry")
	switch {
	case sub == "push" || (sub == "image" || sub == "manifest") && next == "push":
		a.add(Publish, false, "%s push publishes an image", c.name)
	case (sub == "build" || sub == "buildx" || sub == "bake") && push:
		a.add(Publish, false, "%s %s --push publishes an image", c.name, sub)
	case sub == "system" && next == "prune", sub == "volume" && (next == "prune" || next == "rm"):
		a.add(Destructive, false, "%s %s %s", c.name, sub, next)
	case sub == "cp" || sub == "container" && next == "cp":
		if sub == "container" {
			rest = rest[firstOperand(rest, "", nil)+1:]
		}
		a.containerCopy(c, rest, false)
	case sub == "run" || sub == "create" || sub == "container" && (next == "run" || next == "create"):
		if sub == "container" {
			rest = rest[firstOperand(rest, "", nil)+1:] // the options after run
		}
		a.containerPrivilege(c, rest)
		a.containerMounts(c, rest)
		for _, f := range rest {
			if v, ok := strings.CutPrefix(f.s, "--restart="); ok && v != "no" {
				a.add(ScopeEscalation, false, "%s run --restart=%s keeps a container running after the session", c.name, v)
			}
		}
		for k, f := range rest {
			if f.s == "--restart" && k+1 < len(rest) && rest[k+1].s != "no" {
				a.add(ScopeEscalation, false, "%s run --restart %s keeps a container running after the session", c.name, rest[k+1].s)
			}
		}
	}
}

// hostPaths are bind-mount sources that hand a container this machine:
// its root, its configuration, or the container engine's own socket
// (which starts any container it likes).
var hostPaths = wordSet{"/", "/etc", "/root", "/boot", "/usr", "/var", "/home", "/var/run/docker.sock", "/run/docker.sock",
	"/var/run", "/run", "/run/podman/podman.sock", "/proc", "/sys", "/dev"}

// containerPrivilege: docker/podman run options that give the container
// root on this machine are scope-escalation, as sudo is: --privileged,
// the host's process or user namespace, capabilities that reach the host,
// and a bind mount of the host's root, configuration or engine socket.
// Only the options are read, up to the image: what follows is the
// container's own command line.
func (a *analyzer) containerPrivilege(c *cmd, rest []field) {
	say := func(what string) {
		a.add(ScopeEscalation, false, "%s run %s gives the container root on this machine", c.name, what)
	}
	for k := 0; k < len(rest); k++ {
		f := rest[k]
		if f.dyn || f.s == "--" || !strings.HasPrefix(f.s, "-") {
			break // the image (or a word only known at run time)
		}
		name, val, eq := strings.Cut(f.s, "=")
		if !eq && !containerFlag(name) {
			if !strings.HasPrefix(name, "--") && len(name) > 2 {
				name, val = name[:2], name[2:] // -v/:/host
			} else if k+1 < len(rest) {
				k++
				val = rest[k].s
			}
		}
		switch name {
		case "--privileged":
			if val == "" || val == "true" {
				say("--privileged")
			}
		case "--pid", "--userns", "--uts", "--ipc", "--cgroupns":
			if val == "host" {
				say(name + "=host")
			}
		case "--cap-add":
			switch strings.TrimPrefix(strings.ToUpper(val), "CAP_") {
			case "ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE", "SYS_RAWIO", "DAC_READ_SEARCH":
				say("--cap-add " + val)
			}
		case "-v", "--volume", "--mount":
			src, _, _ := strings.Cut(val, ":")
			if name == "--mount" {
				src = ""
				for kv := range strings.SplitSeq(val, ",") {
					if s, ok := cutAny(kv, "source=", "src="); ok {
						src = s
					}
				}
			}
			if src != "" && hostPaths.has(filepath.Clean(src)) {
				say("with " + filepath.Clean(src) + " mounted")
			}
		}
	}
}

// containerFlag reports a docker/podman run option that takes no value
// (clustered short flags such as -it included).
func containerFlag(name string) bool {
	switch name {
	case "--detach", "--interactive", "--tty", "--rm", "--privileged", "--init", "--publish-all", "--read-only",
		"--sig-proxy", "--no-healthcheck", "--oom-kill-disable", "--help", "--quiet", "--disable-content-trust", "--use-api-socket":
		return true
	}
	return !strings.HasPrefix(name, "--") && len(name) > 1 && strings.Trim(name[1:], "ditPq") == ""
}

func (a *analyzer) skopeo(c *cmd) {
	ops := statics(parseOpts(c.args, optSpec{long: []string{"src-creds", "dest-creds", "authfile", "format"}}).operands)
	if len(ops) >= 3 && (ops[0] == "copy" || ops[0] == "sync") && strings.HasPrefix(ops[len(ops)-1], "docker://") {
		a.add(Publish, false, "skopeo %s pushes to %s", ops[0], ops[len(ops)-1])
	}
}

// taskRunner: make/just/task targets whose name suggests a release are
// unresolvable publish; what a target does is not read.
func (a *analyzer) taskRunner(c *cmd) {
	a.makeText(c)
	p := parseOpts(c.args, optSpec{short: "CfjloWIt", long: []string{"directory", "file", "makefile", "jobs", "load-average", "old-file", "what-if", "include-dir", "justfile", "working-directory", "taskfile", "dir"}})
	for _, f := range p.operands {
		if f.dyn {
			a.add(Publish, true, "%s %s: target only known at run time", c.name, f)
			continue
		}
		if !isAssignment(f.s) {
			a.scriptName(c, f.s)
		}
	}
}
