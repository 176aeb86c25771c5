package egress_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means refused
	}{
		{"api.anthropic.com:443", "api.anthropic.com:443"},
		{"API.Anthropic.COM.:443", "api.anthropic.com:443"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"[::1]:80", "[::1]:80"},
		{"[::ffff:10.0.0.1]:80", "10.0.0.1:80"},
		{"api.anthropic.com", ""},
		{"https://api.anthropic.com:443", ""},
		{"*.anthropic.com:443", ""},
		{"api.anthropic.com:0", ""},
		{"api.anthropic.com:65536", ""},
		{"api.anthropic.com:0443", ""},
		{"api.anthropic.com:https", ""},
		{"a b:80", ""},
		{":80", ""},
		{"[fe80::1%eth0]:80", ""},
		{"-x.com:80", ""},
		{"a..b:80", ""},
	} {
		got, err := egress.ParseTarget(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseTarget(%q) = %v, want an error", tc.in, got)
		case tc.want != "" && err != nil:
			t.Errorf("ParseTarget(%q): %v", tc.in, err)
		case tc.want != "" && got.String() != tc.want:
			t.Errorf("ParseTarget(%q) = %v, want %s", tc.in, got, tc.want)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"api.anthropic.com:443", "[::1]:80", "1.2.3.4:5", "x:0", "*.a:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := egress.ParseTarget(s)
		if err != nil {
			return
		}
		// A parsed entry is canonical: parsing its rendering gives it back.
		again, err := egress.ParseTarget(tg.String())
		if err != nil || again != tg {
			t.Fatalf("ParseTarget(%q) = %v; again %v, %v", s, tg, again, err)
		}
		if strings.ContainsAny(tg.Host, "*/ @") {
			t.Fatalf("ParseTarget(%q) kept %q", s, tg.Host)
		}
	})
}

// listener is a TCP server on loopback that counts what reaches it.
type listener struct {
	addr     string
	port     int
	accepted atomic.Int64
}

// startListener serves HTTP (body: "hello from <name>") and counts
// connections; big sets a response body size instead.
func startListener(t *testing.T, name string, big int) *listener {
	t.Helper()
	l := &listener{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if big > 0 {
			_, _ = w.Write(make([]byte, big))
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello from %s: %s %s %d", name, r.Method, r.URL.Path, len(body))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			l.accepted.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	l.addr = srv.Listener.Addr().String()
	_, p, _ := net.SplitHostPort(l.addr)
	l.port, _ = strconv.Atoi(p)
	return l
}

// proxy starts a proxy for p and returns its socket and the events it
// recorded (read after the proxy is closed).
type recorder struct {
	mu     sync.Mutex
	events []egress.Event
}

func (r *recorder) add(e egress.Event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }
func (r *recorder) all() []egress.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]egress.Event(nil), r.events...)
}

func startProxy(t *testing.T, p *egress.Policy) (string, *egress.Proxy, *recorder) {
	t.Helper()
	rec := &recorder{}
	p.Record = rec.add
	sock := filepath.Join(t.TempDir(), "s")
	x, err := egress.Listen(sock, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return sock, x, rec
}

// client reaches the proxy's socket as a client inside the sandbox reaches
// the forwarder: an HTTP client whose proxy is the socket.
func client(sock string) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.invalid:1"}),
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			},
			DisableKeepAlives: true,
		},
	}
}

// connect opens a CONNECT tunnel to target through the socket and returns
// the proxy's status line and the tunnel.
func connect(t *testing.T, sock, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body), c
	}
	return resp.Status, &bufConn{Conn: c, r: br}
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func TestProxyAllowsListed(t *testing.T) {
	l := startListener(t, "model", 0)
	sock, x, rec := startProxy(t, &egress.Policy{Allow: []egress.Target{{Host: "127.0.0.1", Port: l.port}}})

	// Plain HTTP, with a body.
	resp, err := client(sock).Post("http://"+l.addr+"/v1/messages", "text/plain", strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "hello from model: POST /v1/messages 3"; string(body) != want {
		t.Errorf("plain HTTP body %q, want %q", body, want)
	}

	// A CONNECT tunnel, HTTP inside it.
	status, tun := connect(t, sock, l.addr)
	if !strings.HasPrefix(status, "200") {
		t.Fatalf("CONNECT: %s", status)
	}
	fmt.Fprintf(tun, "GET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	got, _ := io.ReadAll(tun)
	if !strings.Contains(string(got), "hello from model: GET /t 0") {
		t.Errorf("tunnel read %q", got)
	}
	tun.Close()
	x.Close()

	evs := rec.all()
	if len(evs) != 2 {
		t.Fatalf("events %+v, want 2", evs)
	}
	for _, e := range evs {
		if e.Verdict != egress.Allowed || e.Host != "127.0.0.1" || e.Port != l.port || e.Up == 0 || e.Down == 0 {
			t.Errorf("event %+v: want allowed 127.0.0.1:%d with bytes both ways", e, l.port)
		}
	}
}

// TestProxyRefuses: every way off the allowlist is refused before a byte
// reaches the target, and recorded as refused with its reason.
func TestProxyRefuses(t *testing.T) {
	model := startListener(t, "model", 0)
	other := startListener(t, "other", 0)
	resolve := func(_ context.Context, h string) ([]netip.Addr, error) {
		switch h {
		case "rebind.test", "model.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "mixed.test":
			return []netip.Addr{netip.MustParseAddr("9.9.9.9"), netip.MustParseAddr("10.1.2.3")}, nil
		case "nat64.test": // DNS64's form of 169.254.169.254
			return []netip.Addr{netip.MustParseAddr("64:ff9b::a9fe:a9fe")}, nil
		case "6to4.test": // 6to4's form of 10.0.0.1
			return []netip.Addr{netip.MustParseAddr("2002:a00:1::1")}, nil
		case "nat64local.test":
			return []netip.Addr{netip.MustParseAddr("64:ff9b:1:2::3")}, nil
		}
		return nil, fmt.Errorf("no such host %s", h)
	}
	p := &egress.Policy{
		Allow: []egress.Target{
			{Host: "127.0.0.1", Port: model.port},
			{Host: "rebind.test", Port: other.port},
			{Host: "mixed.test", Port: other.port},
			{Host: "model.test", Port: model.port},
			{Host: "nat64.test", Port: other.port},
			{Host: "6to4.test", Port: other.port},
			{Host: "nat64local.test", Port: other.port},
		},
		Resolve: resolve,
	}
	sock, x, rec := startProxy(t, p)
	otherPort := strconv.Itoa(other.port)
	cases := []struct {
		name, target, reason string
		plain                bool
	}{
		{"second listener by name", "localhost:" + otherPort, "not listed", false},
		{"listed host, other port", "127.0.0.1:" + otherPort, "port " + otherPort + " is not listed", false},
		{"IP literal", "[::1]:" + otherPort, "IP address", false},
		{"name resolving to loopback", "rebind.test:" + otherPort, "resolves to loopback address 127.0.0.1", false},
		{"name resolving to private among public", "mixed.test:" + otherPort, "private address 10.1.2.3", false},
		{"name resolving to NAT64 of link-local", "nat64.test:" + otherPort, "link-local address 64:ff9b::a9fe:a9fe", false},
		{"name resolving to 6to4 of private", "6to4.test:" + otherPort, "private address 2002:a00:1::1", false},
		{"name resolving to a local NAT64 prefix", "nat64local.test:" + otherPort, "NAT64 local-use address", false},
		{"plain HTTP off the list", "127.0.0.1:" + otherPort, "port " + otherPort + " is not listed", true},
		{"plain HTTP name resolving to loopback", "rebind.test:" + otherPort, "resolves to loopback", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.plain {
				resp, err := client(sock).Get("http://" + tc.target + "/exfil?data=secret")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), tc.reason) {
					t.Errorf("got %s %q, want 403 naming %q", resp.Status, body, tc.reason)
				}
				return
			}
			status, _ := connect(t, sock, tc.target)
			if !strings.HasPrefix(status, "403") || !strings.Contains(status, tc.reason) {
				t.Errorf("CONNECT %s: %s, want 403 naming %q", tc.target, status, tc.reason)
			}
		})
	}
	// A listed name that resolves to loopback is allowed when the address
	// itself is listed too.
	status, _ := connect(t, sock, "model.test:"+strconv.Itoa(model.port))
	if !strings.HasPrefix(status, "200") {
		t.Errorf("model.test (resolving to a listed address): %s", status)
	}
	x.Close()
	if n := other.accepted.Load(); n != 0 {
		t.Errorf("the unlisted listener accepted %d connections", n)
	}
	refused := 0
	for _, e := range rec.all() {
		if e.Verdict == egress.Refused {
			refused++
			if e.Up != 0 || e.Down != 0 {
				t.Errorf("refused event carried bytes: %+v", e)
			}
		}
	}
	if refused != len(cases) {
		t.Errorf("%d refused events, want %d: %+v", refused, len(cases), rec.all())
	}
}

// TestProxyRecordsBeforeAnswering: a refusal is in the log before the
// client has its answer, so a client's next request is always logged after
// it and the run's "first host tried" is the first. The recorder is slow
// on purpose: answering first would let the client see an empty log.
func TestProxyRecordsBeforeAnswering(t *testing.T) {
	other := startListener(t, "other", 0)
	rec := &recorder{}
	p := &egress.Policy{Record: func(e egress.Event) {
		time.Sleep(50 * time.Millisecond)
		rec.add(e)
	}}
	sock := filepath.Join(t.TempDir(), "s")
	x, err := egress.Listen(sock, p)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	// Refused by the list, by the list again, and before it (no port).
	targets := []string{"first.test:443", "127.0.0.1:" + strconv.Itoa(other.port), "noport.test"}
	for i, target := range targets {
		status, _ := connect(t, sock, target)
		if !strings.HasPrefix(status, "403") {
			t.Fatalf("CONNECT %s: %s, want 403", target, status)
		}
		if got := len(rec.all()); got != i+1 {
			t.Fatalf("after the answer to request %d the log holds %d event(s): the answer went out before the record", i+1, got)
		}
	}
	for i, e := range rec.all() {
		if want, _, _ := strings.Cut(targets[i], ":"); e.Host != want && i < 2 {
			t.Errorf("event %d is for %q, want %q", i, e.Host, want)
		}
	}
}

// TestProxyByteCap: a response that would pass the run's byte cap is cut,
// the client gets less than the whole, and the event says capped.
func TestProxyByteCap(t *testing.T) {
	l := startListener(t, "big", 1<<20)
	p := &egress.Policy{Allow: []egress.Target{{Host: "127.0.0.1", Port: l.port}}, MaxBytes: 64 << 10}
	sock, x, rec := startProxy(t, p)
	resp, err := client(sock).Get("http://" + l.addr + "/big")
	got := 0
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		got = len(b)
		resp.Body.Close()
	}
	if got >= 64<<10 {
		t.Errorf("client read %d bytes through a 64 KiB cap", got)
	}
	x.Close()
	evs := rec.all()
	if len(evs) != 1 || evs[0].Verdict != egress.Capped || evs[0].Up+evs[0].Down > 64<<10 {
		t.Errorf("events %+v, want one capped within 64 KiB", evs)
	}
	// The cap is the run's: the next request is cut at once.
	sock2, x2, rec2 := startProxy(t, p)
	status, tun := connect(t, sock2, l.addr)
	if strings.HasPrefix(status, "200") {
		_ = tun.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(tun, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		_, _ = io.ReadAll(tun)
	}
	x2.Close()
	if evs := rec2.all(); len(evs) != 1 || evs[0].Verdict != egress.Capped {
		t.Errorf("second proxy's events %+v, want one capped", evs)
	}
}

func TestProxyConnCap(t *testing.T) {
	l := startListener(t, "model", 0)
	sock, x, rec := startProxy(t, &egress.Policy{Allow: []egress.Target{{Host: "127.0.0.1", Port: l.port}}, MaxConns: 2})
	var codes []int
	for range 3 {
		resp, err := client(sock).Get("http://" + l.addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	x.Close()
	if fmt.Sprint(codes) != "[200 200 503]" {
		t.Errorf("status codes %v, want [200 200 503]", codes)
	}
	// Events are recorded as requests end, in no fixed order.
	verdicts := map[string]int{}
	for _, e := range rec.all() {
		verdicts[e.Verdict]++
	}
	if verdicts[egress.Allowed] != 2 || verdicts[egress.Capped] != 1 || len(rec.all()) != 3 {
		t.Errorf("events %+v, want 2 allowed and 1 capped", rec.all())
	}
}

// TestProxyHeadBound: a request head that never ends is cut at 64 KiB, not
// buffered by fixrail without end.
func TestProxyHeadBound(t *testing.T) {
	sock, x, rec := startProxy(t, &egress.Policy{})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		_, _ = io.WriteString(c, "CONNECT example.test:443 HTTP/1.1\r\nX: ")
		chunk := strings.Repeat("a", 64<<10)
		for range 64 { // 4 MiB of one header line
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("answer %q, want 400", line)
	}
	x.Close()
	if evs := rec.all(); len(evs) != 1 || evs[0].Verdict != egress.Failed {
		t.Errorf("events %+v, want one failed", evs)
	}
}

// TestProxyCloseEndsTunnels: Close cuts an open tunnel and stops accepting.
func TestProxyCloseEndsTunnels(t *testing.T) {
	l := startListener(t, "model", 0)
	sock, x, _ := startProxy(t, &egress.Policy{Allow: []egress.Target{{Host: "127.0.0.1", Port: l.port}}})
	status, tun := connect(t, sock, l.addr)
	if !strings.HasPrefix(status, "200") {
		t.Fatal(status)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(tun); done <- err }()
	x.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("an open tunnel outlived Close")
	}
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		t.Error("the socket still accepts after Close")
	}
}

// TestProxyPendingHeadsBound: many connections that each send part of a
// head and stop (slowloris) do not each get a reader in fixrail: the run's
// connection cap is charged only once a head is read, so without a bound
// on heads read at once a client could hold ~100 KiB of fixrail's memory
// per connection, as many connections as it likes.
func TestProxyPendingHeadsBound(t *testing.T) {
	sock, x, _ := startProxy(t, &egress.Policy{MaxConns: 4})
	runtime.GC()
	before := runtime.NumGoroutine()
	const n = 400
	for range n {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(c, "CONNECT x.test:443 HTTP/1.1\r\nX: aaaa")
	}
	time.Sleep(500 * time.Millisecond) // let the proxy accept what it will
	if got := runtime.NumGoroutine() - before; got > n/2 {
		t.Errorf("%d half-sent heads hold %d goroutines in the proxy, want at most a bounded few", n, got)
	}
	x.Close()
}

// TestProxyRefusesPastTheCap: a request off the allowlist is refused, not
// capped, once the run's connection cap is reached. Trying to leave is
// evidence (ESCALATE egress-refused) whatever budget is left; an agent
// that first spent the cap on the model API must not have its attempts to
// reach another host recorded as a budget running out (HALT egress-cap).
func TestProxyRefusesPastTheCap(t *testing.T) {
	l := startListener(t, "model", 0)
	other := startListener(t, "other", 0)
	sock, x, rec := startProxy(t, &egress.Policy{Allow: []egress.Target{{Host: "127.0.0.1", Port: l.port}}, MaxConns: 1})
	if status, _ := connect(t, sock, l.addr); !strings.HasPrefix(status, "200") {
		t.Fatalf("first CONNECT: %s", status)
	}
	for _, target := range []string{"evil.test:443", other.addr} {
		if status, _ := connect(t, sock, target); !strings.HasPrefix(status, "403") {
			t.Errorf("CONNECT %s past the cap: %s, want 403", target, status)
		}
	}
	// A listed target past the cap is still capped.
	if status, _ := connect(t, sock, l.addr); !strings.HasPrefix(status, "503") {
		t.Errorf("listed CONNECT past the cap: %s, want 503", status)
	}
	x.Close()
	verdicts := map[string]int{}
	for _, e := range rec.all() {
		verdicts[e.Verdict]++
	}
	if verdicts[egress.Refused] != 2 || verdicts[egress.Capped] != 1 || verdicts[egress.Allowed] != 1 {
		t.Errorf("events %+v, want 1 allowed, 2 refused, 1 capped", rec.all())
	}
	if n := other.accepted.Load(); n != 0 {
		t.Errorf("the unlisted listener accepted %d connections", n)
	}
}
