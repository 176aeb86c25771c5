package policy

// Package managers' user configuration: where every later install comes
// from (a registry, an index, a proxy), whether what arrives is checked (a
// checksum database, TLS) and what runs during a build (a script shell, a
// compiler, an init script). Written once, it reaches every project and
// every session after this one, which is what scope-escalation names. The
// files are zones (buildZones); this file judges the commands that write
// them. A project's own configuration (.npmrc in the repository, pip
// --site in a virtualenv) is the project's, reviewed with its changes.

import "strings"

// npmConfig: npm and pnpm config set (and npm set) write the user's
// .npmrc unless --location names the project; yarn config set writes
// ~/.yarnrc (classic) or, with -H, ~/.yarnrc.yml. Judged by key: a
// registry other than the public one, TLS or a proxy, where global
// installs go, another configuration file. (The keys naming a program,
// script-shell and kin, are npmShell's.)
func (a *analyzer) npmConfig(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "L", long: []string{"location", "userconfig", "globalconfig", "workspace", "filter", "dir", "cwd"}})
	ops := p.operands
	switch {
	case len(ops) > 0 && ops[0].s == "set" && c.name != "yarn":
		ops = ops[1:]
	case len(ops) > 1 && ops[0].s == "config" && ops[1].s == "set":
		ops = ops[2:]
	default:
		return
	}
	if loc, ok := p.value("-L", "--location"); ok && !loc.dyn && loc.s == "project" {
		return
	}
	if c.name == "yarn" && !p.has("-H", "--home") && !yarnClassicKeys(ops) {
		return // Yarn Berry writes the project's .yarnrc.yml without -H
	}
	for i := 0; i < len(ops); i++ {
		if ops[i].dyn {
			a.add(ScopeEscalation, true, "%s config set %s: a key or value only known at run time", c.name, ops[i])
			return
		}
		k, v, eq := strings.Cut(ops[i].s, "=")
		if !eq && i+1 < len(ops) {
			i++
			v = ops[i].s
		}
		if why := npmRiskyKey(strings.ToLower(strings.TrimPrefix(k, "--")), v); why != "" {
			a.add(ScopeEscalation, false, "%s config set %s %s in the user's configuration, for every later install", c.name, k, why)
		}
	}
}

// yarnClassicKeys reports whether the keys are Yarn Classic's (registry,
// strict-ssl), which it writes to ~/.yarnrc; Berry's are camelCase.
func yarnClassicKeys(ops []field) bool {
	for _, f := range ops {
		k, _, _ := strings.Cut(f.s, "=")
		if k == "registry" || k == "strict-ssl" || k == "cafile" || k == "proxy" || k == "https-proxy" {
			return true
		}
	}
	return false
}

// npmRiskyKey says what setting key to value changes, or "" when it is
// not about where packages come from or how they are checked.
func npmRiskyKey(k, v string) string {
	switch {
	case k == "registry" || strings.HasSuffix(k, ":registry") || k == "npmregistryserver":
		v = strings.TrimSuffix(strings.TrimSpace(v), "/")
		if v == "https://registry.npmjs.org" || v == "https://registry.yarnpkg.com" {
			return ""
		}
		return "changes where packages come from"
	case k == "strict-ssl" || k == "enablestrictssl" || k == "ca" || k == "cafile" || k == "cafilepath" || k == "unsafehttpwhitelist":
		return "changes how the registry's certificate is checked"
	case k == "proxy" || k == "https-proxy" || k == "httpproxy" || k == "httpsproxy":
		return "sends every request through a proxy"
	case k == "prefix" || k == "userconfig" || k == "globalconfig" || k == "yarnpath" || k == "npmscopes":
		return "changes where installs go or what runs them"
	}
	return ""
}

// pipConfig: pip config set/unset/edit writes the user's pip.conf unless
// --site (the virtualenv's) is given; --global writes the system's.
func (a *analyzer) pipConfig(c *cmd) {
	a.addressesCarried(c.args, c.name)
	p := parseOpts(c.args, optSpec{long: []string{"editor", "python", "index-url", "extra-index-url", "trusted-host", "find-links", "proxy", "cert", "client-cert", "cache-dir", "log", "timeout", "retries", "exists-action", "src", "target", "prefix", "root", "constraint", "requirement"}})
	ops := p.operands
	if len(ops) < 2 || ops[0].dyn || ops[1].dyn || ops[0].s != "config" {
		return
	}
	switch ops[1].s {
	case "set", "unset", "edit":
	default:
		return
	}
	if p.has("--site") {
		return
	}
	a.add(ScopeEscalation, false, "%s config %s changes the user's pip configuration: where later installs come from", c.name, ops[1].s)
}

// goEnv: go env -w and -u write the user's go env file: GOPROXY, GOSUMDB,
// GOFLAGS, GOTOOLCHAIN, CC and the rest apply to every later go command.
func (a *analyzer) goEnv(c *cmd) {
	// -toolexec runs a command before each tool, -exec runs the built
	// program (go run, go test) through one; GOFLAGS carries either.
	if len(c.args) > 0 {
		flags := c.args[1:]
		if g, ok := c.env["GOFLAGS"]; ok {
			if g.dyn {
				a.all("go with GOFLAGS only known at run time")
			}
			for _, f := range strings.Fields(g.s) {
				flags = append(flags, field{s: f})
			}
		}
		for i, f := range flags {
			name, val, attached := strings.Cut(strings.Replace(f.s, "--", "-", 1), "=")
			if name != "-toolexec" && name != "-exec" {
				continue
			}
			v := field{s: val, dyn: f.dyn}
			if !attached {
				if i+1 >= len(flags) {
					continue
				}
				v = flags[i+1]
			}
			a.runsText(v, c, "go "+name)
		}
	}
	if len(c.args) > 1 && (c.args[0].s == "build" || c.args[0].s == "test") {
		// go build -o FILE (or into a directory), go test -c -o.
		p := parseOpts(c.args[1:], optSpec{short: "op", long: []string{"o", "p", "tags", "ldflags", "gcflags",
			"asmflags", "mod", "modfile", "overlay", "pgo", "pkgdir", "buildmode", "compiler", "gccgoflags",
			"toolexec", "coverpkg", "covermode", "run", "bench", "count", "timeout", "cpu", "parallel", "exec",
			"json", "C", "vet", "skip", "fuzz", "fuzztime", "benchtime", "outputdir", "coverprofile"}})
		if o, ok := p.value("-o"); ok {
			a.downloadTo(o, c.st, "go "+c.args[0].s+" -o")
		}
	}
	if len(c.args) < 2 || c.args[0].dyn || c.args[0].s != "env" {
		return
	}
	for _, f := range c.args[1:] {
		if f.dyn && f.optLike() {
			a.add(ScopeEscalation, true, "go env with options only known at run time")
			return
		}
		if f.s == "-w" || f.s == "-u" {
			a.add(ScopeEscalation, false, "go env %s changes the user's go environment: where modules come from, how they are checked, what builds them", f.s)
			return
		}
	}
}

// gemSources: gem sources --add names a new place gems come from.
func (a *analyzer) gemSources(c *cmd) {
	if len(c.args) == 0 || c.args[0].s != "sources" {
		return
	}
	for _, f := range c.args[1:] {
		if f.s == "-a" || f.s == "--add" || strings.HasPrefix(f.s, "--add=") {
			a.add(ScopeEscalation, false, "gem sources --add changes where later gem installs come from")
			return
		}
	}
}

// condaConfig: conda config --add/--append/--prepend/--set/--remove
// writes the user's .condarc unless --file or --env names another.
func (a *analyzer) condaConfig(c *cmd) {
	if len(c.args) == 0 || c.args[0].s != "config" {
		return
	}
	p := parseOpts(c.args[1:], optSpec{long: []string{"file", "name", "prefix"}})
	if p.has("--file", "--env") {
		return
	}
	for _, o := range p.opts {
		switch o.name {
		case "--add", "--append", "--prepend", "--set", "--remove", "--remove-key":
			a.add(ScopeEscalation, false, "conda config %s changes the user's conda configuration: where later installs come from", o.name)
			return
		}
	}
}
