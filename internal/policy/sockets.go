package policy

import (
	"strings"
)

// socatLocal are socat's address types whose peer is on this machine: a
// Unix socket (named or abstract), a file, a pipe, a pty, a descriptor or
// standard I/O. Anything else — TCP, UDP, SCTP, DCCP, raw IP, OpenSSL/DTLS,
// SOCKS and HTTP proxies, VSOCK (another VM), TUN and INTERFACE (packets
// into the network stack), the generic SOCKET-* types, and any keyword this
// table does not know — is read as reaching the network.
var socatLocal = wordSet{"unix-connect", "unix-listen", "unix-sendto", "unix-recvfrom", "unix-recv", "unix-client", "unix",
	"local", "abstract-connect", "abstract-listen", "abstract-sendto", "abstract-recvfrom", "abstract-recv",
	"abstract-client", "stdio", "stdin", "stdout", "stderr", "fd", "pipe", "pty", "open", "gopen", "create", "creat",
	"readline", "socketpair", "posixmq-read", "posixmq-receive", "posixmq-send", "posixmq-bidirectional",
	"exec", "system", "shell"}

// socatFiles are the local types whose parameter is a path socat opens or
// creates (for a listener, the socket file it makes).
var socatFiles = wordSet{"unix-listen", "unix-recvfrom", "unix-recv", "open", "gopen", "create", "creat", "pipe"}

// socatLoopback are the network types that connect to the host they name:
// to this machine's loopback they leave nothing on the network. Proxies
// (SOCKS, PROXY) are not among them: the proxy forwards elsewhere.
var socatLoopback = wordSet{"tcp", "tcp4", "tcp6", "tcp-connect", "tcp4-connect", "tcp6-connect", "udp", "udp4", "udp6",
	"udp-connect", "udp4-connect", "udp6-connect", "udp-sendto", "udp4-sendto", "udp6-sendto", "sctp", "sctp4", "sctp6",
	"sctp-connect", "sctp4-connect", "sctp6-connect", "dccp-connect", "dccp4-connect", "dccp6-connect",
	"udplite-connect", "udplite4-connect", "udplite6-connect", "udplite-sendto", "openssl", "openssl-connect", "ssl",
	"dtls", "dtls-connect"}

// socatValued are socat's own options that take a value, attached (-t5)
// or as the next word (-t 5).
var socatValued = wordSet{"-b", "-t", "-T", "-L", "-W", "-r", "-R", "-lf", "-lp", "-S", "-lm"}

// socat relays between two addresses; it reaches the network only through
// an address of a network type. The peer of a Unix socket, a file or a
// pipe is on this machine (a socket's server may forward elsewhere, as a
// local HTTP proxy may for curl: that is the server's doing, not this
// command's). EXEC, SYSTEM and SHELL run a command, analysed as such.
func (a *analyzer) socat(c *cmd) {
	var addrs []field
	for i := 0; i < len(c.args); i++ {
		f := c.args[i]
		if f.dyn || f.s == "-" || !strings.HasPrefix(f.s, "-") {
			addrs = append(addrs, f)
			continue
		}
		switch {
		case socatValued.has(f.s):
			i++
		case f.s == "-h" || f.s == "-hh" || f.s == "-hhh" || f.s == "-V" || f.s == "--help" || f.s == "--version":
			return
		}
	}
	for _, ad := range addrs {
		if ad.dyn {
			a.add(EgressOther, true, "socat address %s only known at run time", ad)
			continue
		}
		// addr1!!addr2 reads from the first and writes to the second.
		for _, half := range strings.Split(ad.s, "!!") {
			a.socatAddress(half, c)
		}
	}
}

func (a *analyzer) socatAddress(addr string, c *cmd) {
	if addr == "-" || addr == "" {
		return // standard I/O
	}
	kw, params, hasParams := strings.Cut(addr, ":")
	if !hasParams {
		kw, _, _ = strings.Cut(addr, ",")
	}
	kw = strings.ToLower(kw)
	switch {
	case socatLocal.has(kw):
	case !hasParams && (strings.ContainsRune(kw, '/') || allDigits(kw)):
		// No keyword: a name with a slash is GOPEN, a number FD.
		if strings.ContainsRune(kw, '/') {
			p, _ := socatParam(addr)
			a.writePath(word(p), c.st, "socat")
		}
		return
	case socatLoopback.has(kw) && hasParams:
		host, _ := socatParam(params)
		if loopbackURL(socatHostPort(host, params)) {
			return
		}
		a.add(EgressOther, false, "socat %s opens a network connection", addr)
		return
	default:
		a.add(EgressOther, false, "socat %s opens a network connection", addr)
		return
	}
	p, _ := socatParam(params)
	switch {
	case kw == "exec" || kw == "system" || kw == "shell":
		a.runsText(word(p), c, "socat "+strings.ToUpper(kw))
	case socatFiles.has(kw) && p != "":
		a.writePath(word(p), c.st, "socat "+strings.ToUpper(kw))
	}
}

// socatParam returns an address's first parameter: the text up to the
// first ',' (where its options start) or ':' outside quotes, with socat's
// quoting ('…', "…") and backslash escapes removed, as socat 1.8 reads
// it. An older socat takes the quotes literally; for EXEC and SYSTEM the
// shell reading the command removes them alike.
func socatParam(s string) (string, string) {
	var b strings.Builder
	var q byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && q != '\'' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case q != 0 && ch == q:
			q = 0
		case q != 0:
			b.WriteByte(ch)
		case ch == '\'' || ch == '"':
			q = ch
		case ch == ',' || ch == ':':
			return b.String(), s[i:]
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), ""
}

// socatHostPort rebuilds host:port for a loopback check; an IPv6 host is
// written in brackets ([::1]:80), which socatParam would cut at its first
// colon.
func socatHostPort(host, params string) string {
	if strings.HasPrefix(params, "[") {
		if end := strings.IndexByte(params, ']'); end > 0 {
			return params[:end+1]
		}
	}
	return host
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// netcat opens a network connection, unless -U makes its peer a Unix
// socket on this machine (OpenBSD nc, ncat --unixsock). A command it runs
// for the peer (-e/--exec, -c/--sh-exec) is analysed either way.
func (a *analyzer) netcat(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "ceIiMmOPpsTVWwXxgGq", long: []string{"exec", "sh-exec", "lua-exec",
		"source", "source-port", "proxy", "proxy-type", "proxy-auth", "wait", "idle-timeout", "output", "hex-dump",
		"append-output", "send-only", "max-conns", "allow", "allowfile", "deny", "denyfile", "ssl-cert", "ssl-key",
		"ssl-trustfile", "ssl-ciphers", "ssl-servername", "ssl-alpn", "delay", "recv-only"}})
	if len(c.args) == 1 && !c.args[0].dyn && (c.args[0].s == "-h" || c.args[0].s == "--help" || c.args[0].s == "--version") {
		return
	}
	for _, o := range p.opts {
		switch o.name {
		case "-c", "--sh-exec":
			a.runsText(o.val, c, c.name+" "+o.name)
		case "-e", "--exec":
			a.runsText(o.val, c, c.name+" "+o.name)
		case "--lua-exec":
			a.all(c.name + " --lua-exec runs a script this analysis does not read")
		}
	}
	if p.has("-U", "--unixsock") && !p.dyn && !p.has("-x", "-X", "--proxy") {
		return
	}
	a.add(EgressOther, false, "%s opens a network connection", c.name)
}
