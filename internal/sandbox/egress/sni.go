package egress

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"
)

// A listed host often shares its address with many others (a CDN's edge, a
// cloud load balancer), and such an address serves whichever site a TLS
// ClientHello names. A tunnel opened to a listed name and then used to
// greet another would leave through the allowlist to anywhere on that
// edge. So a tunnel that opens with a TLS handshake must name in its
// ClientHello (SNI) the host it was opened to: a DNS name exactly (case and
// a trailing dot aside), an IP literal by naming none, as RFC 6066 has
// clients do. What is sent inside the encrypted session (an HTTP Host
// header) is not seen here; the edges this guards against refuse a Host
// that the SNI does not name. A tunnel whose first bytes are not a TLS
// handshake is carried as it is.

// tunnelOpenTimeout bounds the wait for a tunnel's first bytes, as
// headTimeout bounds the head's (a variable for the test of it).
var tunnelOpenTimeout = headTimeout

// maxHello bounds the bytes read to find a ClientHello's server name: a
// hello with a post-quantum key share is a few KiB, far under this.
const maxHello = 64 << 10

// errHelloRead stops crypto/tls once the ClientHello is parsed: nothing is
// answered, the bytes are only read.
var errHelloRead = errors.New("client hello read")

// helloConn feeds crypto/tls the client's bytes; it writes nothing.
type helloConn struct {
	r io.Reader
	net.Conn
}

func (h helloConn) Read(p []byte) (int, error)       { return h.r.Read(p) }
func (h helloConn) Write(p []byte) (int, error)      { return 0, errors.New("read only") }
func (h helloConn) SetDeadline(time.Time) error      { return nil }
func (h helloConn) SetReadDeadline(time.Time) error  { return nil }
func (h helloConn) SetWriteDeadline(time.Time) error { return nil }
func (h helloConn) Close() error                     { return nil }
func (h helloConn) LocalAddr() net.Addr              { return nil }
func (h helloConn) RemoteAddr() net.Addr             { return nil }

// tunnelOpening reads the first bytes the client sends into a tunnel to
// host and judges them: seen is every byte read (the target must get them
// first), and why is non-empty when the tunnel must not be carried.
func tunnelOpening(r io.Reader, host string) (seen []byte, why string) {
	var buf bytes.Buffer
	rec := io.TeeReader(io.LimitReader(r, maxHello), &buf)
	first := make([]byte, 1)
	if _, err := io.ReadFull(rec, first); errors.Is(err, os.ErrDeadlineExceeded) {
		// Waiting out the deadline must not let a ClientHello pass unread.
		return nil, "the tunnel's first bytes did not come in time"
	} else if err != nil {
		return nil, "" // closed or broken: nothing more can be read or carried
	}
	if first[0] != 0x16 { // not a TLS handshake record
		return buf.Bytes(), ""
	}
	var name string
	parsed := false
	srv := tls.Server(helloConn{r: io.MultiReader(bytes.NewReader(first), rec)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name, parsed = h.ServerName, true
			return nil, errHelloRead
		},
	})
	_ = srv.Handshake()
	if !parsed {
		return buf.Bytes(), "the tunnel opens with a TLS record that is not a ClientHello fixrail can read"
	}
	if why := sniMismatch(name, host); why != "" {
		return buf.Bytes(), why
	}
	return buf.Bytes(), ""
}

// sniMismatch says why a ClientHello naming name may not go to host.
func sniMismatch(name, host string) string {
	want, err := canonHost(host)
	if err != nil {
		return "the tunnel's host " + host + " is not a host"
	}
	if _, err := netip.ParseAddr(want); err == nil {
		if name != "" {
			return "the TLS ClientHello names " + quoteHost(name) + " on a tunnel opened to the address " + want
		}
		return ""
	}
	got := strings.TrimSuffix(strings.ToLower(name), ".")
	switch {
	case name == "":
		return "the TLS ClientHello names no server, on a tunnel opened to " + want
	case got != want:
		return "the TLS ClientHello names " + quoteHost(name) + ", not " + want + ", the host the tunnel was opened to"
	}
	return ""
}

// quoteHost bounds and quotes an agent-chosen name for a reason.
func quoteHost(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
