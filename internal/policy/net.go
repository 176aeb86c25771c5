package policy

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// loopbackURL reports whether a URL (with or without a scheme) names this
// machine. Requests to it do not leave the box.
func loopbackURL(u string) bool {
	if strings.HasPrefix(u, ":") { // httpie's :3000/path shorthand
		return true
	}
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.ToLower(pu.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	// net/netip, not net: the hook binary then links no network stack.
	// Unmap so ::ffff:127.0.0.1 counts as the IPv4 loopback it is.
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsUnspecified()
}

// publishURL reports whether a write to the URL publishes: package
// registries' upload endpoints and GitHub's release and merge APIs.
func publishURL(u string) bool {
	if !strings.Contains(u, "://") {
		u = "https://" + u
	}
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(pu.Hostname()) {
	case "registry.npmjs.org", "registry.yarnpkg.com", "upload.pypi.org", "test.pypi.org", "crates.io",
		"rubygems.org", "www.nuget.org", "api.nuget.org", "uploads.github.com", "hub.docker.com":
		return true
	case "api.github.com":
		return ghRelease.MatchString(pu.Path) || ghMerge.MatchString(pu.Path)
	}
	return false
}

var curlValued = []string{"data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "json", "form", "form-string",
	"upload-file", "request", "url", "output", "output-dir", "dump-header", "cookie-jar", "cookie", "header", "user-agent",
	"referer", "user", "proxy", "proxy-user", "config", "write-out", "max-time", "connect-timeout", "retry", "retry-delay",
	"retry-max-time", "range", "cert", "key", "cacert", "capath", "resolve", "connect-to", "interface", "limit-rate",
	"max-filesize", "oauth2-bearer", "proto", "proto-redir", "quote", "request-target", "time-cond", "trace",
	"trace-ascii", "unix-socket", "variable", "expand-data", "expand-url", "expand-header", "libcurl", "etag-save",
	"etag-compare", "alt-svc", "hsts", "stderr", "aws-sigv4", "ciphers", "max-redirs", "keepalive-time", "dns-servers",
	"preproxy", "socks5", "socks5-hostname", "noproxy", "mail-from", "mail-rcpt", "form-escape", "url-query"}

// curl sends data off the box when it has a body (-d, --json, -F, -T ...) or
// a method other than GET/HEAD/OPTIONS; requests to localhost do not count.
func (a *analyzer) curl(c *cmd) {
	p := parseOpts(a.curlArgs(c), optSpec{short: curlShortValued, long: curlValued})
	st := c.st
	urls := append([]field{}, p.operands...)
	urls = append(urls, p.values("--url")...)
	// --output-dir holds what -o names relatively and what -O names.
	outDir, _ := p.value("--output-dir")
	for _, o := range p.opts {
		switch o.name {
		case "-o", "--output":
			if o.has && o.val.s != "-" {
				a.writePath(inDir(outDir, o.val), st, "curl "+o.name)
			}
		case "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl",
			"--etag-save", "--stderr", "--hsts", "--alt-svc":
			if o.has && o.val.s != "-" {
				a.writePath(o.val, st, "curl "+o.name)
			}
		case "--output-dir":
			if o.has {
				a.writePath(o.val, st, "curl --output-dir")
			}
		case "-O", "--remote-name", "--remote-name-all":
			unknown := ""
			if p.has("-J", "--remote-header-name") {
				unknown = "-J takes the file's name from the server's answer"
			}
			a.downloads("curl "+o.name, outDir, urls, unknown, st)
		case "-d", "--data", "--data-ascii", "--data-binary", "--data-urlencode", "--json", "-T", "--upload-file":
			if o.has {
				v := strings.TrimPrefix(o.val.s, "@")
				if o.name == "--data-urlencode" {
					if _, f, ok := strings.Cut(o.val.s, "@"); ok {
						v = f
					}
				}
				a.readPath(field{s: v, dyn: o.val.dyn}, st, "curl "+o.name, false)
			}
		case "-F", "--form":
			if _, f, ok := strings.Cut(o.val.s, "@"); ok {
				f, _, _ = strings.Cut(f, ";")
				a.readPath(field{s: f, dyn: o.val.dyn}, st, "curl -F", false)
			}
		}
	}
	if p.dyn {
		a.add(EgressOther, true, "curl with options only known at run time")
	}
	method := ""
	if m, ok := p.value("-X", "--request"); ok {
		if m.dyn {
			a.add(EgressOther, true, "curl -X %s: the method is only known at run time", m)
			a.add(Destructive, true, "curl -X %s: the method is only known at run time", m)
			return
		}
		method = strings.ToUpper(m.s)
	}
	bodies := p.values("-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "--expand-data")
	for _, b := range bodies {
		if b.s == "@-" && c.in.kind == inText {
			// A body read from standard input that the command line
			// supplies (a here-document, a here-string, echo piped in).
			bodies = append(bodies, field{s: c.in.text, dyn: c.in.dyn})
			break
		}
	}
	a.httpRemoves(strings.TrimSpace("curl "+describeSend(method, false, false)), method, urls, bodies, p.values("-H", "--header"))
	body := p.has("-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F",
		"--form", "--form-string", "--expand-data")
	upload := p.has("-T", "--upload-file")
	get := p.has("-G", "--get")
	sends := upload || (body && !get) || (method != "" && !readMethod(method))
	if !sends {
		// -G puts the data in the query string.
		// What the request sends besides its URL: headers, the user
		// agent, the referer, credentials and cookies.
		sent := p.values("-H", "--header", "-A", "--user-agent", "-e", "--referer", "-u", "--user", "-b", "--cookie",
			"--oauth2-bearer", "-U", "--proxy-user", "--url-query", "--form-string", "-F", "--form")
		for _, h := range p.values("-H", "--header") {
			switch {
			case h.s == "@-" && c.in.kind == inText && !c.in.dyn:
				sent = append(sent, field{s: c.in.text}) // written out in the command
			case strings.HasPrefix(h.s, "@") && len(h.s) > 1:
				// -H @FILE (or @- from a pipe) sends lines the command
				// does not show, as a command's output would be.
				if h.s != "@-" {
					a.readPath(field{s: h.s[1:], dyn: h.dyn}, st, "curl -H @", false)
				}
				sent = append(sent, field{s: h.s, dyn: h.dyn, out: true})
			}
		}
		a.carried(urls, append(append(append([]field{}, urls...), bodies...), sent...), "curl")
		return
	}
	a.offBox(urls, "curl "+describeSend(method, body, upload))
}

// carried matches egress-other for a request that reads (GET) but whose
// URL — or, for httpie, a query item — carries what a command printed
// (?d=$(base64 < key), or a variable assigned from one): the request hands
// that output to the URL's host as surely as a body would. A URL on this
// machine is exempt; one whose host is itself only known at run time is
// unresolvable.
func (a *analyzer) carried(urls, carriers []field, how string) {
	if !slices.ContainsFunc(carriers, func(f field) bool { return f.out }) {
		return
	}
	for _, u := range urls {
		host, known := urlHost(u.s)
		switch {
		case !known:
			a.add(EgressOther, true, "%s sends a command's output to %s, a host only known at run time", how, u)
		case !loopbackURL(host):
			a.add(EgressOther, false, "%s sends a command's output in the URL to %s", how, host)
		}
	}
}

// addressesCarried judges the arguments a network tool connects to (a
// repository's URL, a package index, a registry; --opt=URL too): one built
// from what a command printed carries that output to the host, as a curl
// URL does. Only words holding "://" are read as addresses.
func (a *analyzer) addressesCarried(args []field, how string) {
	for _, f := range args {
		if !f.out {
			continue
		}
		v := f
		if strings.HasPrefix(v.s, "-") {
			_, val, ok := strings.Cut(v.s, "=")
			if !ok {
				continue
			}
			v.s = val
		}
		if strings.Contains(v.s, "://") {
			a.carried([]field{v}, []field{v}, how)
		}
	}
}

// urlHost returns the scheme and authority of a URL (curl's, with or
// without a scheme) whose run-time parts are dynMark, and false when a
// run-time part stands in them.
func urlHost(u string) (string, bool) {
	rest := u
	scheme := ""
	if i := strings.Index(u, "://"); i >= 0 && !strings.Contains(u[:i], dynMark) {
		scheme, rest = u[:i+3], u[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if auth == "" || strings.Contains(auth, dynMark) {
		return "", false
	}
	return scheme + auth, true
}

func describeSend(method string, body, upload bool) string {
	switch {
	case method != "":
		return "-X " + method
	case upload:
		return "--upload-file"
	case body:
		return "with a request body"
	}
	return ""
}

// offBox matches egress-other unless every URL is on this machine.
func (a *analyzer) offBox(urls []field, how string) {
	if len(urls) == 0 {
		a.add(EgressOther, false, "%s", how)
		return
	}
	for _, u := range urls {
		if u.dyn {
			a.add(EgressOther, true, "%s to %s, a URL only known at run time", how, u)
			continue
		}
		if !loopbackURL(u.s) {
			a.add(EgressOther, false, "%s to %s", how, u.s)
		}
		if publishURL(u.s) {
			a.add(Publish, false, "%s to %s, a package registry or release API", how, u.s)
		}
	}
}

var wgetSpec = optSpec{short: "OoaPeitTwQUlARDIXB", long: []string{"output-document", "output-file", "append-output",
	"directory-prefix", "execute", "input-file", "tries", "timeout", "wait", "quota", "user-agent", "level", "accept",
	"reject", "domains", "include-directories", "exclude-directories", "base", "post-data", "post-file", "body-data",
	"body-file", "method", "header", "user", "password", "http-user", "http-password", "load-cookies", "save-cookies",
	"ca-certificate", "certificate", "private-key", "bind-address", "limit-rate", "referer", "config"}}

func (a *analyzer) wget(c *cmd) {
	args := a.wgetArgs(c)
	p := parseOpts(args, wgetSpec)
	st := c.st
	for _, o := range p.opts {
		switch o.name {
		case "-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies":
			if o.has && o.val.s != "-" {
				a.writePath(o.val, st, "wget "+o.name)
			}
		case "-P", "--directory-prefix":
			if o.has {
				a.writePath(o.val, st, "wget "+o.name)
			}
		case "--post-file", "--body-file":
			if o.has {
				a.readPath(o.val, st, "wget "+o.name, false)
			}
		}
	}
	if _, ok := p.value("-O", "--output-document"); !ok && !p.has("--spider") {
		// Without -O each URL is saved under its own name (-P: in a
		// directory). A recursive download keeps each host's tree under a
		// directory named for the host, unless -nd or -nH drop it.
		recursive := p.has("-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites")
		flat := hasField(args, "-nd") || hasField(args, "-nH") || p.has("--no-directories", "--no-host-directories", "--cut-dirs")
		unknown := ""
		switch {
		case recursive && flat:
			unknown = "it downloads a tree the server's pages name, without its host's directory"
		case p.has("--content-disposition", "--trust-server-names"):
			unknown = "it takes the file's name from the server's answer"
		case p.has("-i", "--input-file"):
			unknown = "its URLs are read from a file"
		}
		if !recursive || flat {
			dir, _ := p.value("-P", "--directory-prefix")
			a.downloads("wget", dir, p.operands, unknown, st)
		}
	}
	sends := p.has("--post-data", "--post-file", "--body-data", "--body-file")
	how := "wget with a request body"
	method := ""
	if m, ok := p.value("--method"); ok {
		if m.dyn {
			a.add(EgressOther, true, "wget --method %s: the method is only known at run time", m)
			a.add(Destructive, true, "wget --method %s: the method is only known at run time", m)
			return
		}
		method = strings.ToUpper(m.s)
		if !readMethod(m.s) {
			sends, how = true, "wget --method "+method
		}
	}
	a.httpRemoves("wget", method, p.operands, p.values("--post-data", "--body-data"), p.values("--header"))
	for _, e := range p.values("-e", "--execute") {
		if e.dyn || strings.Contains(strings.ToLower(e.s), "post_") || strings.Contains(strings.ToLower(e.s), "method") || strings.Contains(strings.ToLower(e.s), "body_") {
			sends, how = true, "wget -e "+e.String()
		}
	}
	if sends {
		a.offBox(p.operands, how)
		return
	}
	a.carried(p.operands, append(append([]field{}, p.operands...), p.values("--header", "-U", "--user-agent", "--referer",
		"--user", "--password", "--http-user", "--http-password", "--post-data", "--body-data")...), "wget")
}

// inDir is name within dir when dir is given and name is relative.
func inDir(dir, name field) field {
	if (dir.s == "" && !dir.dyn) || strings.HasPrefix(name.s, "/") {
		return name
	}
	return field{s: strings.TrimSuffix(dir.s, "/") + "/" + name.s, dyn: dir.dyn || name.dyn}
}

// downloads judges the files a download names after its URLs (curl -O,
// wget without -O): each URL path's last segment, in dir (the working
// directory when empty). When the names are not the URLs' (unknown says
// why), the download is unresolvable where a protected name could land.
func (a *analyzer) downloads(how string, dir field, urls []field, unknown string, st *state) {
	var names []string
	for _, u := range urls {
		name := urlFileName(u.s)
		if strings.Contains(name, dynMark) {
			unknown = "a URL's file name is only known at run time"
		}
		if name == "" {
			if how != "wget" {
				continue // curl -O refuses a URL with no file name
			}
			name = "index.html"
		}
		names = append(names, name)
	}
	if unknown != "" {
		if dir.dyn {
			return // writePath has judged a run-time directory
		}
		d := st.cwd
		if dir.s != "" {
			var ok bool
			if d, ok = cleanAbs(st.cwd, a.expandTilde(dir.s)); !ok {
				return
			}
		}
		if d == "" {
			return
		}
		if exposed, what := a.exposedDir(a.resolve(d)); exposed {
			a.add(SelfMod, true, "%s saves files into %s (%s), where project agent settings could land; their names are not known here: %s", how, d, what, unknown)
		} else if a.nestedRepoDir(d) || a.nestedRepoDir(a.resolve(d)) {
			a.add(ScopeEscalation, true, "%s saves files into %s, inside the project, where a .git file naming another repository, or a direnv or mise file, could land; their names are not known here: %s", how, d, unknown)
		}
		return
	}
	for _, name := range names {
		a.writePath(inDir(dir, word(name)), st, how)
	}
}

// urlFileName is the last segment of a URL's path, percent-decoded (as
// wget saves it; curl keeps the escapes, which this over-reads), or ""
// when the path names no file. Run-time parts stay dynMark.
func urlFileName(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	i := strings.Index(u, "/")
	if i < 0 {
		return "" // a host alone
	}
	name := u[strings.LastIndex(u, "/")+1:]
	if d, err := url.PathUnescape(name); err == nil {
		name = d
	}
	if name == "." || name == ".." || strings.Contains(name, "/") {
		return ""
	}
	return name
}

// httpie (http, https, xh): METHOD URL ITEM...; data items or a body on
// standard input make it a POST.
func (a *analyzer) httpie(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "aAoslpPv", long: []string{"auth", "auth-type", "output", "session", "session-read-only",
		"verify", "cert", "cert-key", "proxy", "timeout", "max-redirects", "pretty", "style", "print", "format-options",
		"default-scheme", "ssl", "ciphers", "response-charset", "response-mime", "boundary", "raw", "unix-socket", "http-version"}})
	if p.has("--offline") {
		return
	}
	for _, o := range p.values("-o", "--output") {
		a.writePath(o, c.st, c.name+" --output")
	}
	ops := p.operands
	if len(ops) == 0 {
		return
	}
	method := ""
	if m := strings.ToUpper(ops[0].s); !ops[0].dyn && isHTTPMethod(m) {
		method, ops = m, ops[1:]
	} else if ops[0].dyn && len(ops) > 1 {
		a.add(EgressOther, true, "%s %s: the method is only known at run time", c.name, ops[0])
		return
	}
	if len(ops) == 0 {
		return
	}
	target := ops[0]
	data := p.has("--raw") || (c.in.kind != inNone && !p.has("-I", "--ignore-stdin"))
	for _, it := range ops[1:] {
		s := it.s
		switch {
		case strings.Contains(s, "=="):
		case strings.Contains(s, ":=") || strings.Contains(s, "=") || strings.Contains(s, "@"):
			data = true
			if i := strings.Index(s, "@"); i >= 0 {
				a.readPath(field{s: s[i+1:], dyn: it.dyn}, c.st, c.name, false)
			}
		}
	}
	if method == "" && data {
		method = "POST"
	}
	var items, headers []field
	for _, it := range ops[1:] {
		if _, v, ok := strings.Cut(it.s, "="); ok && !strings.Contains(it.s, "==") {
			items = append(items, field{s: strings.TrimPrefix(v, "="), dyn: it.dyn})
			if k, _, _ := strings.Cut(it.s, "="); k == "_method" {
				items = append(items, field{s: it.s, dyn: it.dyn}) // a form field, as a form body carries it
			}
		} else if strings.Contains(it.s, ":") && !strings.Contains(it.s, ":=") {
			headers = append(headers, it) // Name:value is a header
		}
	}
	a.httpRemoves(strings.TrimSpace(c.name+" "+method), method, []field{target}, items, headers)
	if method == "" || readMethod(method) {
		a.carried([]field{target}, ops, c.name)
		return
	}
	a.offBox([]field{target}, c.name+" "+method)
}

func isHTTPMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "TRACE", "CONNECT":
		return true
	}
	return false
}

func (a *analyzer) openssl(c *cmd) {
	a.opensslOut(c)
	if len(c.args) > 0 && (c.args[0].s == "s_client" || c.args[0].s == "s_time") {
		a.add(EgressOther, false, "openssl %s opens a connection to another host", c.args[0].s)
	}
}

// ssh opens a connection (egress-other) and runs its command on the other
// host; that command is analysed for the other rules, with paths taken as
// remote paths.
func (a *analyzer) ssh(c *cmd) {
	sp := optSpec{short: "BbcDEeFIiJLlmOoPpQRSWw", posix: true}
	p := parseOpts(c.args, sp)
	if p.has("-V", "-G", "-Q") {
		return
	}
	if len(p.operands) == 0 {
		// A command line another program completes with the host (git's
		// core.sshCommand, rsync -e): its -o options still run.
		a.sshOptions(p.opts, c, "ssh")
		return
	}
	host := p.operands[0]
	p2 := parseOpts(p.operands[1:], sp)
	remote := p2.operands
	remoteCmd := a.sshOptions(append(p.opts, p2.opts...), c, "ssh")
	if host.dyn {
		a.add(EgressOther, true, "ssh to a host only known at run time")
	} else {
		a.add(EgressOther, false, "ssh %s connects to another host", host.s)
	}
	rst := &state{vars: map[string]string{}, remote: true}
	switch {
	case len(remote) > 0:
		if anyDyn(remote) {
			a.all("ssh runs a remote command only known at run time")
		}
		a.script(dynText(strings.Join(rawStrings(remote), " ")), rst, c.depth+1, "ssh "+host.String())
	case remoteCmd != nil:
		a.script(dynText(remoteCmd.s), rst, c.depth+1, "ssh RemoteCommand")
	case c.in.kind == inText:
		if c.in.dyn {
			a.all("ssh runs remote commands only known at run time")
		}
		a.script(dynText(c.in.text), rst, c.depth+1, "ssh "+host.String()+" stdin")
	case c.in.kind == inUnknown:
		a.all("ssh runs remote commands read from the output of another command")
	}
}

// sshOptions judges the -o options ssh, scp and sftp pass to ssh: the
// commands ProxyCommand, LocalCommand and KnownHostsCommand run here; a
// RemoteCommand is returned, to be judged as the remote host's.
func (a *analyzer) sshOptions(opts []opt, c *cmd, how string) (remoteCmd *field) {
	for _, o := range opts {
		if o.name != "-o" || !o.has {
			continue
		}
		k, v, ok := strings.Cut(o.val.s, "=")
		if !ok {
			k, v, _ = strings.Cut(o.val.s, " ")
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "proxycommand", "localcommand", "knownhostscommand":
			a.runsText(field{s: strings.TrimSpace(v), dyn: o.val.dyn}, c, how+" -o "+k)
		case "remotecommand":
			rc := field{s: strings.TrimSpace(v), dyn: o.val.dyn}
			remoteCmd = &rc
		}
	}
	return remoteCmd
}

// connProgram judges the program scp -S and sftp -S (and sftp -D, a local
// sftp server) start here for the connection: run like any command.
func (a *analyzer) connProgram(p parsed, c *cmd, names ...string) {
	for _, v := range p.values(names...) {
		a.command([]field{v}, c.env, c.st, input{}, c.depth+1)
	}
}

// sftp transfers files to another host, through ssh or the program -S or
// -D names.
func (a *analyzer) sftp(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "BbcDFiJloPRSs"})
	a.sshOptions(p.opts, c, "sftp")
	a.connProgram(p, c, "-S", "-D")
	a.add(EgressOther, false, "sftp transfers files to another host")
}

// remoteOperand reports whether an scp/rsync operand names another host.
func remoteOperand(f field) bool {
	s := f.s
	if strings.HasPrefix(s, "rsync://") || strings.HasPrefix(s, "scp://") || strings.HasPrefix(s, "sftp://") {
		return true
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~") {
		return false
	}
	i := strings.Index(s, ":")
	if i <= 0 {
		return false
	}
	if j := strings.Index(s, "/"); j >= 0 && j < i {
		return false
	}
	return !(i == 1 && len(s) > 2 && (s[2] == '/' || s[2] == '\\')) // C:/path
}

func (a *analyzer) scp(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "cFiJlPoSDX"})
	a.sshOptions(p.opts, c, "scp")
	a.connProgram(p, c, "-S")
	if len(p.operands) < 2 {
		return
	}
	remote := false
	for _, f := range p.operands {
		if f.dyn {
			a.add(EgressOther, true, "scp %s: operand only known at run time", f)
		}
		remote = remote || remoteOperand(f)
	}
	if remote {
		a.add(EgressOther, false, "scp copies files between hosts")
	}
	dest := p.operands[len(p.operands)-1]
	if !remoteOperand(dest) {
		a.writeTree(dest, c.st, "scp", false)
	}
	for _, s := range p.operands[:len(p.operands)-1] {
		if !remoteOperand(s) {
			a.readPath(s, c.st, "scp", p.has("-r"))
		}
	}
}

var rsyncValued = []string{"rsh", "block-size", "filter", "temp-dir", "exclude", "include", "exclude-from", "include-from",
	"files-from", "partial-dir", "backup-dir", "suffix", "log-file", "password-file", "port", "rsync-path", "chmod", "chown",
	"usermap", "groupmap", "compare-dest", "copy-dest", "link-dest", "max-size", "min-size", "timeout", "contimeout",
	"bwlimit", "info", "debug", "out-format", "log-file-format", "checksum-choice", "compress-choice", "sockopts",
	"outbuf", "modify-window", "iconv", "max-delete", "remote-option", "stop-after", "stop-at", "write-batch",
	"only-write-batch", "read-batch", "protocol", "address", "skip-compress", "compress-level", "checksum-seed"}

func (a *analyzer) rsync(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "eBfTM", long: rsyncValued})
	for _, e := range p.values("-e", "--rsh") {
		a.runsText(e, c, "rsync -e")
	}
	ops := p.operands
	if len(ops) < 2 {
		return
	}
	remote := false
	for _, f := range ops {
		if f.dyn {
			a.add(EgressOther, true, "rsync %s: operand only known at run time", f)
		}
		remote = remote || remoteOperand(f)
	}
	if remote {
		a.add(EgressOther, false, "rsync copies files between hosts")
	}
	dest := ops[len(ops)-1]
	recursive := p.has("-r", "-a", "--recursive", "--archive")
	dry := false
	for _, o := range p.opts {
		switch o.name {
		case "-n", "--dry-run", "--list-only":
			dry = true
		case "--no-n", "--no-dry-run", "--no-list-only":
			dry = false
		}
	}
	if dry {
		// -n/--dry-run reports what would change and changes nothing
		// (not even with --delete); --list-only lists the source. A
		// remote peer still receives the file list, so egress stands.
		for _, s := range ops[:len(ops)-1] {
			if !remoteOperand(s) {
				a.readPath(s, c.st, "rsync", recursive)
			}
		}
		return
	}
	del := false
	for _, o := range p.opts {
		del = del || strings.HasPrefix(o.name, "--del") || o.name == "--remove-source-files"
	}
	if remoteOperand(dest) {
		if del {
			a.add(Destructive, false, "rsync --delete removes files on another host")
		}
	} else {
		a.writeTree(dest, c.st, "rsync", false)
		if del {
			a.deleteTree(dest, c.st, "rsync --delete into")
		}
		if recursive {
			for _, s := range ops[:len(ops)-1] {
				if !remoteOperand(s) {
					a.treeLands(s, dest, c.st, "rsync", true, false)
				}
			}
		}
	}
	for _, s := range ops[:len(ops)-1] {
		if !remoteOperand(s) {
			a.readPath(s, c.st, "rsync", recursive)
		}
	}
}

// lookup: a DNS query or ping carries its name to the resolver, so a name
// built at run time can carry data out.
func (a *analyzer) lookup(c *cmd) {
	for _, f := range c.args {
		if f.dyn {
			a.add(EgressOther, true, "%s %s: a name only known at run time", c.name, f)
			return
		}
	}
}

// fetchURL: a downloader or text browser fetching its URL operands
// (aria2c, axel, lynx -dump): a GET, which hands the host whatever the URL
// carries (see carried); aria2c -d and -o name where the file lands.
func (a *analyzer) fetchURL(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "dionxsj", long: []string{"dir", "out", "input-file", "max-connection-per-server", "split",
		"max-concurrent-downloads", "user-agent", "header", "output", "num-connections"}})
	var urls []field
	for _, f := range p.operands {
		if strings.Contains(f.s, "://") || f.dyn {
			urls = append(urls, f)
		}
	}
	a.carried(urls, urls, c.name)
	if c.name == "aria2c" || c.name == "axel" {
		dir, _ := p.value("-d", "--dir")
		if o, ok := p.value("-o", "--out", "--output"); ok {
			a.writePath(inDir(dir, o), c.st, c.name+" -o")
			return
		}
		unknown := ""
		if p.has("-i", "--input-file") {
			unknown = "its URLs are read from a file"
		}
		a.downloads(c.name, dir, urls, unknown, c.st)
	}
}

// tunnel: ngrok, cloudflared tunnel and their kin publish a local port on
// a public address through a third party's servers.
func (a *analyzer) tunnel(c *cmd) {
	if c.name == "cloudflared" {
		i := firstOperand(c.args, "", nil)
		if i < 0 || c.args[i].s != "tunnel" {
			return
		}
	}
	if c.name == "ngrok" {
		i := firstOperand(c.args, "", nil)
		if i < 0 || (c.args[i].s != "http" && c.args[i].s != "tcp" && c.args[i].s != "tls" && c.args[i].s != "start") {
			return
		}
	}
	a.add(EgressOther, false, "%s exposes a port on this machine through another host", c.name)
}

func (a *analyzer) aws(c *cmd) {
	valued := []string{"profile", "region", "output", "endpoint-url", "query", "color", "cli-read-timeout",
		"cli-connect-timeout", "ca-bundle", "cli-binary-format", "cli-input-json", "cli-input-yaml"}
	i := firstOperand(c.args, "", valued)
	if i < 0 || i+1 >= len(c.args) {
		return
	}
	svc, verb := c.args[i].s, c.args[i+1].s
	rest := c.args[i+2:]
	switch {
	case svc == "s3" && (verb == "cp" || verb == "mv" || verb == "sync") && hasField(rest, "--dryrun"):
		// --dryrun prints what would be copied and copies nothing.
	case svc == "s3" && (verb == "cp" || verb == "mv" || verb == "sync"):
		ops := parseOpts(rest, optSpec{long: []string{"exclude", "include", "acl", "storage-class", "sse", "content-type", "expires", "grants", "metadata", "region", "profile"}}).operands
		if len(ops) > 0 && strings.HasPrefix(ops[len(ops)-1].s, "s3://") {
			a.add(EgressOther, false, "aws s3 %s uploads to %s", verb, ops[len(ops)-1].s)
		} else if len(ops) > 1 {
			a.downloadTo(ops[len(ops)-1], c.st, "aws s3 "+verb) // a download lands there
		}
		if verb == "sync" && hasField(rest, "--delete") {
			a.add(Destructive, false, "aws s3 sync --delete removes files")
		}
	case svc == "s3" && verb == "rm" && (hasField(rest, "--recursive") || hasField(rest, "-r")):
		a.add(Destructive, false, "aws s3 rm --recursive")
	case svc == "s3" && verb == "rb":
		a.add(Destructive, false, "aws s3 rb removes a bucket")
	case svc == "s3api" && (verb == "put-object" || verb == "upload-part" || verb == "copy-object"):
		a.add(EgressOther, false, "aws s3api %s uploads data", verb)
	case strings.HasPrefix(verb, "delete-") || strings.HasPrefix(verb, "terminate-") || strings.HasPrefix(verb, "remove-"):
		a.add(Destructive, false, "aws %s %s", svc, verb)
	}
}

func hasField(fs []field, s string) bool {
	for _, f := range fs {
		if f.s == s {
			return true
		}
	}
	return false
}

func (a *analyzer) gsutil(c *cmd) {
	i := firstOperand(c.args, "ohpu", nil)
	if i < 0 {
		return
	}
	verb, rest := c.args[i].s, c.args[i+1:]
	ops := parseOpts(rest, optSpec{short: "pxz"}).operands
	switch verb {
	case "cp", "mv", "rsync":
		if len(ops) > 0 && strings.HasPrefix(ops[len(ops)-1].s, "gs://") {
			a.add(EgressOther, false, "gsutil %s uploads to %s", verb, ops[len(ops)-1].s)
		} else if len(ops) > 1 {
			a.downloadTo(ops[len(ops)-1], c.st, "gsutil "+verb)
		}
		if verb == "rsync" && hasField(rest, "-d") {
			a.add(Destructive, false, "gsutil rsync -d removes files")
		}
	case "rm":
		if hasField(rest, "-r") || hasField(rest, "-R") || hasField(rest, "-a") {
			a.add(Destructive, false, "gsutil rm -r")
		}
	case "rb":
		a.add(Destructive, false, "gsutil rb removes a bucket")
	}
}

func (a *analyzer) gcloud(c *cmd) {
	ops := parseOpts(c.args, optSpec{long: []string{"project", "account", "configuration", "format", "verbosity", "zone", "region"}}).operands
	words := statics(ops)
	for i, w := range words {
		if w == "delete" {
			a.add(Destructive, false, "gcloud %s", strings.Join(words[:i+1], " "))
			return
		}
	}
	if len(words) >= 2 && words[0] == "storage" && (words[1] == "cp" || words[1] == "mv" || words[1] == "rsync") {
		if last := words[len(words)-1]; strings.HasPrefix(last, "gs://") {
			a.add(EgressOther, false, "gcloud storage %s uploads to %s", words[1], last)
		} else if len(words) > 3 {
			a.downloadTo(word(last), c.st, "gcloud storage "+words[1])
		}
	}
	if len(words) >= 2 && words[0] == "storage" && words[1] == "rm" && (hasField(c.args, "-r") || hasField(c.args, "--recursive")) {
		a.add(Destructive, false, "gcloud storage rm --recursive")
	}
}

func (a *analyzer) az(c *cmd) {
	words := statics(parseOpts(c.args, optSpec{}).operands)
	for i, w := range words {
		switch {
		case w == "delete" || w == "purge" || strings.HasPrefix(w, "delete-"): // delete-batch
			a.add(Destructive, false, "az %s", strings.Join(words[:i+1], " "))
			return
		case strings.HasPrefix(w, "upload"):
			a.add(EgressOther, false, "az %s", strings.Join(words[:i+1], " "))
			return
		case strings.HasPrefix(w, "download"): // az storage blob download -f FILE, download-batch -d DIR
			for j, f := range c.args[:len(c.args)-1] {
				if f.s == "-f" || f.s == "--file" || f.s == "-d" || f.s == "--destination" {
					a.downloadTo(c.args[j+1], c.st, "az "+strings.Join(words[:i+1], " "))
				}
			}
			return
		}
	}
}

func (a *analyzer) rclone(c *cmd) {
	ops := parseOpts(c.args, optSpec{long: []string{"config", "transfers", "checkers", "include", "exclude", "filter", "bwlimit", "log-file", "log-level", "max-age", "min-age"}}).operands
	if len(ops) == 0 {
		return
	}
	verb := ops[0].s
	if hasField(c.args, "--dry-run") || hasField(c.args, "-n") {
		return // rclone -n/--dry-run changes nothing
	}
	switch verb {
	case "copy", "copyto", "move", "moveto", "sync", "bisync", "copyurl":
		if len(ops) > 2 && remoteOperand(ops[len(ops)-1]) {
			a.add(EgressOther, false, "rclone %s uploads to %s", verb, ops[len(ops)-1].s)
		} else if len(ops) > 2 {
			a.downloadTo(ops[len(ops)-1], c.st, "rclone "+verb)
		}
		if verb == "sync" && len(ops) > 2 {
			if d := ops[len(ops)-1]; !remoteOperand(d) {
				a.deleteTree(d, c.st, "rclone sync into")
			} else {
				a.add(Destructive, false, "rclone sync deletes files in %s that the source lacks", d.s)
			}
		}
	case "purge", "delete", "deletefile", "rmdirs", "cleanup":
		a.add(Destructive, false, "rclone %s", verb)
	}
}

func (a *analyzer) s3cmd(c *cmd) {
	ops := parseOpts(c.args, optSpec{}).operands
	if len(ops) == 0 {
		return
	}
	switch ops[0].s {
	case "put", "get", "sync", "cp", "mv":
		if last := ops[len(ops)-1].s; strings.HasPrefix(last, "s3://") {
			a.add(EgressOther, false, "s3cmd %s uploads to %s", ops[0].s, last)
		} else if len(ops) > 2 {
			a.downloadTo(ops[len(ops)-1], c.st, "s3cmd "+ops[0].s)
		}
	case "del", "rm", "rb":
		a.add(Destructive, false, "s3cmd %s", ops[0].s)
	}
}
