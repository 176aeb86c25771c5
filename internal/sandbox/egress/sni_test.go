package egress_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// TestTunnelServerName: a tunnel to a listed host whose TLS ClientHello
// names another server (an edge shared by many sites would route it there)
// is cut before a byte of it reaches the target, and recorded as refused;
// one naming the host it was opened to is carried.
func TestTunnelServerName(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		fmt.Fprint(w, "hello over tls")
	}))
	// The proxy dials the target when the tunnel opens; a refused tunnel
	// then ends with no byte sent, which the server logs.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	resolve := func(_ context.Context, h string) ([]netip.Addr, error) {
		if h == "api.model.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s", h)
	}
	pol := &egress.Policy{
		Allow:   []egress.Target{{Host: "api.model.test", Port: port}, {Host: "127.0.0.1", Port: port}},
		Resolve: resolve,
	}
	sock, x, rec := startProxy(t, pol)

	cases := []struct {
		name, target, sni string
		noSNI             bool
		reason            string // "" is carried
	}{
		{"the listed name", "api.model.test", "api.model.test", false, ""},
		{"the listed name, a trailing dot (the client drops it)", "api.model.test", "api.model.test.", false, ""},
		{"the listed name, other case", "api.model.test", "API.Model.TEST", false, ""},
		{"another site on the same edge", "api.model.test", "exfil.example", false, `names "exfil.example", not api.model.test`},
		{"no server name to a listed name", "api.model.test", "", true, "names no server"},
		{"a listed address, no server name", "127.0.0.1", "", true, ""},
		{"a listed address, a server name", "127.0.0.1", "exfil.example", false, `names "exfil.example" on a tunnel opened to the address 127.0.0.1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, tun := connect(t, sock, net.JoinHostPort(tc.target, p))
			if !strings.HasPrefix(status, "200") {
				t.Fatalf("CONNECT: %s", status)
			}
			cfg := &tls.Config{InsecureSkipVerify: true, ServerName: tc.sni}
			if tc.noSNI {
				cfg.ServerName = ""
			}
			c := tls.Client(tun, cfg)
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			err := c.Handshake()
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("handshake: %v", err)
			case tc.reason != "" && err == nil:
				t.Fatalf("handshake with %q through a tunnel to %s succeeded", tc.sni, tc.target)
			case tc.reason == "":
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tc.target)
				body, _ := io.ReadAll(c)
				if !strings.Contains(string(body), "hello over tls") {
					t.Errorf("response %q", body)
				}
			}
		})
	}
	x.Close()
	var refused []string
	for _, e := range rec.all() {
		if e.Verdict == egress.Refused {
			refused = append(refused, e.Reason)
		}
	}
	want := 0
	for _, tc := range cases {
		if tc.reason != "" {
			if !containsAny(refused, tc.reason) {
				t.Errorf("no refused event naming %q in %q", tc.reason, refused)
			}
			want++
		}
	}
	if len(refused) != want {
		t.Errorf("%d refused events, want %d: %q", len(refused), want, refused)
	}
	// Only the carried tunnels' requests reached the server.
	if n := served.Load(); n != int64(len(cases)-want) {
		t.Errorf("the server served %d requests, want %d", n, len(cases)-want)
	}
}

func containsAny(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestTunnelSilentPastTheDeadline: a tunnel that sends nothing until the
// opening deadline passes is refused, so a ClientHello sent after it is
// never carried unread.
func TestTunnelSilentPastTheDeadline(t *testing.T) {
	defer egress.SetTunnelOpenTimeout(200 * time.Millisecond)()
	l := startListener(t, "model", 0)
	sock, x, rec := startProxy(t, &egress.Policy{Allow: []egress.Target{{Host: "127.0.0.1", Port: l.port}}})
	status, tun := connect(t, sock, l.addr)
	if !strings.HasPrefix(status, "200") {
		t.Fatalf("CONNECT: %s", status)
	}
	time.Sleep(600 * time.Millisecond)
	fmt.Fprintf(tun, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	body, _ := io.ReadAll(tun)
	if strings.Contains(string(body), "hello") {
		t.Errorf("a tunnel silent past the deadline was carried: %q", body)
	}
	x.Close()
	if ev := rec.all(); len(ev) != 1 || ev[0].Verdict != egress.Refused || !strings.Contains(ev[0].Reason, "did not come in time") {
		t.Errorf("events %+v, want one refused for its silence", ev)
	}
}
