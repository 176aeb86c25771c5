// Package egress owns a sandboxed agent's one way out: an HTTP proxy that
// fixrail serves outside the sandbox on a Unix socket, which admits CONNECT
// and plain-HTTP requests to an allowlist of host:port and nothing else
// (a tunnel's TLS ClientHello must name the host it was opened to, sni.go),
// meters them against the run's byte and connection caps and records every
// one; and the forwarder, fixrail re-executed inside the sandbox's empty
// network namespace, which listens on its loopback and relays each
// connection to that socket. The forwarder decides nothing: whatever runs
// in the sandbox can bypass it, kill it or write to the socket itself, and
// still meets the same proxy.
package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Target is one host:port an agent may reach: a DNS name (lower case, no
// trailing dot) or an IP literal, and a TCP port.
type Target struct {
	Host string
	Port int
}

func (t Target) String() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// ParseTarget reads one runner.egress entry, host:port ("api.anthropic.com:443",
// "127.0.0.1:8080", "[::1]:8080"). A scheme, a path, a wildcard or a
// missing port is refused: an entry is exactly one endpoint.
func ParseTarget(s string) (Target, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Target{}, fmt.Errorf("egress entry %q: want host:port (%v)", s, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return Target{}, fmt.Errorf("egress entry %q: port %q is not a number from 1 to 65535", s, port)
	}
	h, err := canonHost(host)
	if err != nil {
		return Target{}, fmt.Errorf("egress entry %q: %v", s, err)
	}
	return Target{Host: h, Port: n}, nil
}

// canonHost is a host as the allowlist compares it: an IP literal in its
// canonical form (an IPv4-mapped IPv6 address as IPv4), or a DNS name in
// lower case without its trailing dot.
func canonHost(h string) (string, error) {
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("host %q: an address with a zone is not an endpoint", h)
		}
		return a.Unmap().String(), nil
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("host %q is not a DNS name", h)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return "", fmt.Errorf("host %q is not a DNS name", h)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", fmt.Errorf("host %q is not a DNS name (no wildcard, scheme or path)", h)
			}
		}
	}
	return h, nil
}

// The verdicts an Event records.
const (
	// Allowed: the request reached its target.
	Allowed = "allowed"
	// Refused: the target is not on the allowlist, or a listed name
	// resolved to an address the allowlist does not name and that is not
	// public: the agent tried to leave. The pipeline ESCALATEs on it.
	Refused = "refused"
	// Capped: the run's byte or connection cap stopped the request (cut
	// mid-way, or refused before it began).
	Capped = "capped"
	// Failed: a listed target could not be resolved or connected to, or
	// the request was not HTTP. Nothing left the sandbox.
	Failed = "failed"
)

// Event is one request through the proxy, recorded when it ends.
type Event struct {
	Method   string // CONNECT, or the plain-HTTP method; "" when the request could not be read
	Host     string // as the agent wrote it, not canonicalised (the caller escapes it)
	Port     int
	Up       int64 // bytes from the agent to the target (a plain request's head included)
	Down     int64 // bytes from the target to the agent
	Verdict  string
	Reason   string // why it was refused, capped or failed; "" when allowed
	Duration time.Duration
}

// The caps a zero Policy field stands for.
const (
	// DefaultMaxBytes bounds both directions together over a run: forty
	// model turns of a 200,000-token context (about 800 KB a request, sent
	// again every turn) stay well inside it.
	DefaultMaxBytes = 256 << 20
	// DefaultMaxConns bounds the requests (tunnels and plain requests) of
	// a run: a model request per turn, retries and the odd token count.
	DefaultMaxConns = 1024
)

// Policy is one run's egress: its allowlist, its caps, and where its
// events go. One Policy serves every proxy of a run (both invocations), so
// the caps are the run's, not an invocation's. It is safe for concurrent use.
type Policy struct {
	// Allow is the allowlist. Empty allows nothing.
	Allow []Target
	// MaxBytes and MaxConns are the run's caps; 0 means DefaultMaxBytes
	// and DefaultMaxConns.
	MaxBytes int64
	MaxConns int
	// Record receives every request once it ends; nil drops them. It must
	// be safe for concurrent use.
	Record func(Event)
	// Resolve looks a name up; nil is the system resolver. A test stands
	// in its own names here.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	mu    sync.Mutex
	bytes int64
	conns int
}

// admit takes one connection from the run's cap.
func (p *Policy) admit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.MaxConns
	if limit <= 0 {
		limit = DefaultMaxConns
	}
	if p.conns >= limit {
		return false
	}
	p.conns++
	return true
}

// charge takes n bytes from the run's cap, or reports that they would
// pass it (and takes nothing).
func (p *Policy) charge(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if p.bytes+n > limit {
		return false
	}
	p.bytes += n
	return true
}

func (p *Policy) record(e Event) {
	if p.Record != nil {
		p.Record(e)
	}
}

// listed reports whether host:port is on the allowlist, and whether host is
// listed with some other port (for a refusal's wording).
func (p *Policy) listed(host string, port int) (exact, otherPort bool) {
	for _, t := range p.Allow {
		if t.Host == host {
			if t.Port == port {
				return true, false
			}
			otherPort = true
		}
	}
	return false, otherPort
}

// offList is why host:port is not on the allowlist, or "" and the host as
// listed. It needs no lookup, so the proxy asks it before the caps.
func (p *Policy) offList(rawHost string, port int) (string, string) {
	host, err := canonHost(rawHost)
	if err != nil || port < 1 || port > 65535 {
		return "", "not a host:port"
	}
	exact, other := p.listed(host, port)
	if !exact {
		if other {
			return "", fmt.Sprintf("port %d is not listed for this host in runner.egress", port)
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return "", "an IP address runner.egress does not list"
		}
		return "", "not listed in runner.egress"
	}
	return host, ""
}

// check decides a request for host:port: the address to dial, or why not
// and with which verdict. A name is resolved here, once, and the address
// checked is the address dialled, so a name that resolves differently the
// second time (DNS rebinding) cannot slip past the check.
func (p *Policy) check(ctx context.Context, rawHost string, port int) (netip.AddrPort, string, string) {
	host, why := p.offList(rawHost, port)
	if why != "" {
		return netip.AddrPort{}, Refused, why
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a, uint16(port)), Allowed, ""
	}
	resolve := p.Resolve
	if resolve == nil {
		resolve = func(ctx context.Context, h string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	addrs, err := resolve(rctx, host)
	cancel()
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, Failed, fmt.Sprintf("does not resolve (%v)", err)
	}
	// Every address must pass, not just the one dialled: a name whose
	// answers mix a public and a private address is a name someone points
	// inwards.
	for _, a := range addrs {
		a = a.Unmap()
		if kind := inward(a); kind != "" {
			if ok, _ := p.listed(a.String(), port); !ok {
				return netip.AddrPort{}, Refused, fmt.Sprintf("resolves to %s address %s, which runner.egress does not list", kind, a)
			}
		}
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(port)), Allowed, ""
}

// cgnat is the shared address space of RFC 6598, private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// IPv6 prefixes that carry an IPv4 address to a translator or relay:
// NAT64's well-known prefix (RFC 6052, the address in the last 32 bits; a
// DNS64 resolver answers a v4-only name with one), NAT64's local-use prefix
// (RFC 8215: a network's own translator, its layout the network's choice),
// 6to4 (RFC 3056, the address in bits 16-47) and the deprecated
// IPv4-compatible form (RFC 4291, ::a.b.c.d, which Linux's sit device still
// tunnels to a.b.c.d). On a host with such a translator, 64:ff9b::a00:1 is
// 10.0.0.1.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	nat64FLoc = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour = netip.MustParsePrefix("2002::/16")
	v4Compat  = netip.MustParsePrefix("::/96")
)

// specialPurpose holds the blocks of IANA's special-purpose registries
// (RFC 6890 and its updates) that no public service answers on and the
// kinds above do not name: "this network" (0/8, where Linux takes 0.0.0.0
// as the host itself), IETF protocol assignments (192.0.0.0/24;
// 2001::/23 with Teredo, whose relay carries an IPv4 address of the
// sender's choosing), documentation, benchmarking (198.18.0.0/15, which
// some VPNs and proxies answer locally), the deprecated 6to4 relay
// anycast, reserved 240/4 with the broadcast address, the discard prefix,
// SRv6 segment identifiers and deprecated site-local fec0::/10. A name an
// allowlisted host resolves to one of them is refused like a private one:
// a package registry or model API is never there, a network's own
// appliance may be.
var specialPurpose = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
		"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"100::/64", "2001::/23", "2001:db8::/32", "3fff::/20", "5f00::/16",
		"fec0::/10",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// inward names the kind of an address that points into the host or its
// networks rather than at a public service, or "". An IPv4 address carried
// in a translator's IPv6 prefix is judged as itself.
func inward(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case nat64.Contains(a), v4Compat.Contains(a):
		b := a.As16()
		return inward(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		b := a.As16()
		return inward(netip.AddrFrom4([4]byte(b[2:6])))
	case nat64FLoc.Contains(a):
		return "NAT64 local-use"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsPrivate() || cgnat.Contains(a):
		return "private"
	case a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range specialPurpose {
		if p.Contains(a) {
			return "special-purpose"
		}
	}
	return ""
}
