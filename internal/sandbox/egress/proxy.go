package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// headTimeout bounds how long a connection may take to send its request
// head, maxHead how long the head may be, and maxPendingHeads how many
// heads are read at once (the agent must not make fixrail buffer without
// end: the run's connection cap is charged only once a head is read, so
// without this a client holding many half-sent heads holds ~100 KiB of
// fixrail's memory each, without bound); dialTimeout how long the target
// may take to accept.
const (
	headTimeout     = 30 * time.Second
	maxHead         = 64 << 10
	maxPendingHeads = 64
	dialTimeout     = 30 * time.Second
)

// limited reads from r until n runs out; the proxy lifts n once the head
// is read.
type limited struct {
	r io.Reader
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request head too long")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Proxy serves one Policy on a Unix socket until Close.
type Proxy struct {
	p      *Policy
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// heads holds a slot for each connection whose head is being read; a
	// connection beyond maxPendingHeads waits in the socket's backlog,
	// costing fixrail nothing.
	heads chan struct{}

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Listen starts a proxy for p on a new Unix socket at path (mode 0600 by
// the umask-proof chmod below; its directory should be private too).
func Listen(path string, p *Policy) (*Proxy, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &Proxy{p: p, ln: ln, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{},
		heads: make(chan struct{}, maxPendingHeads)}
	x.wg.Go(x.serve)
	return x, nil
}

// Close stops the proxy: no new connection is accepted, every open one
// (a tunnel mid-stream included) is closed, and Close returns once every
// request has been recorded.
func (x *Proxy) Close() error {
	x.mu.Lock()
	x.closed = true
	for c := range x.conns {
		c.Close()
	}
	x.mu.Unlock()
	x.cancel()
	err := x.ln.Close()
	x.wg.Wait()
	return err
}

// track adds c to what Close closes; false when the proxy is closing.
func (x *Proxy) track(c net.Conn) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		c.Close()
		return false
	}
	x.conns[c] = struct{}{}
	return true
}

func (x *Proxy) untrack(c net.Conn) {
	x.mu.Lock()
	delete(x.conns, c)
	x.mu.Unlock()
	c.Close()
}

func (x *Proxy) serve() {
	for {
		select {
		case x.heads <- struct{}{}:
		case <-x.ctx.Done():
			return
		}
		c, err := x.ln.Accept()
		if err != nil {
			<-x.heads
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept error (EMFILE): wait rather than spin.
			select {
			case <-x.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !x.track(c) {
			<-x.heads
			continue
		}
		x.wg.Go(func() {
			defer x.untrack(c)
			var once sync.Once
			done := func() { once.Do(func() { <-x.heads }) }
			defer done()
			x.handle(c, done)
		})
	}
}

// handle serves one connection: one CONNECT tunnel, or one plain-HTTP
// request (answered with Connection: close, so a client sends its next
// request on a new connection, which is checked and counted again).
// headRead is called once the head is read (or could not be), freeing its
// slot for the next connection.
func (x *Proxy) handle(c net.Conn, headRead func()) {
	start := time.Now()
	ev := Event{}
	recorded := false
	defer func() {
		if !recorded {
			ev.Duration = time.Since(start)
			x.p.record(ev)
		}
	}()
	// refuse records the event before answering: the client (the agent)
	// sends its next request only after this answer, so the log's order is
	// the order the requests were made in, and "the first host tried" in a
	// refusal's report is the first one, whatever the scheduler does.
	refuse := func(v string, code int, reason string) {
		ev.Verdict, ev.Reason = v, reason
		ev.Duration = time.Since(start)
		x.p.record(ev)
		recorded = true
		writeStatus(c, code, reason)
	}
	_ = c.SetReadDeadline(time.Now().Add(headTimeout))
	lim := &limited{r: c, n: maxHead}
	br := bufio.NewReader(lim)
	req, err := http.ReadRequest(br)
	headRead()
	if err != nil {
		refuse(Failed, http.StatusBadRequest, "not an HTTP proxy request (or a head over 64 KiB)")
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	lim.n = math.MaxInt64 // the body and a tunnel's bytes are metered instead
	ev.Method = req.Method

	var host, port string
	if req.Method == http.MethodConnect {
		host, port, err = net.SplitHostPort(req.RequestURI)
	} else if req.URL.Scheme != "http" || req.URL.Host == "" || req.URL.User != nil {
		err = errors.New("want an absolute http:// URL")
		host = req.URL.Hostname()
	} else {
		host, port = req.URL.Hostname(), req.URL.Port()
		if port == "" {
			port = "80"
		}
	}
	ev.Host = host
	ev.Port, _ = strconv.Atoi(port)
	if err != nil {
		refuse(Refused, http.StatusForbidden, "not a host:port request: "+err.Error())
		return
	}
	// An off-list target is refused before the cap is looked at (and still
	// charged to it): trying to leave is evidence, ESCALATE, whatever
	// budget is left, not a budget running out.
	admitted := x.p.admit()
	if _, why := x.p.offList(host, ev.Port); why != "" {
		refuse(Refused, http.StatusForbidden, why)
		return
	}
	if !admitted {
		refuse(Capped, http.StatusServiceUnavailable, "the run's egress connection cap is reached")
		return
	}
	addr, verdict, reason := x.p.check(x.ctx, host, ev.Port)
	if verdict != Allowed {
		code := http.StatusForbidden
		if verdict == Failed {
			code = http.StatusBadGateway
		}
		refuse(verdict, code, reason)
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	up, err := d.DialContext(x.ctx, "tcp", addr.String())
	if err != nil {
		refuse(Failed, http.StatusBadGateway, "connect: "+err.Error())
		return
	}
	if !x.track(up) {
		ev.Verdict, ev.Reason = Failed, "the proxy is closing"
		return
	}
	defer x.untrack(up)

	m := &meter{p: x.p}
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			ev.Verdict, ev.Reason = Failed, "client gone"
			return
		}
		// Bytes the client sent after its head (a TLS hello) are the
		// tunnel's first; a ClientHello must name the host (see sni.go).
		// A refusal is recorded before the connection closes, as above.
		open := func(first io.Reader) (io.Reader, string) {
			_ = c.SetReadDeadline(time.Now().Add(tunnelOpenTimeout))
			seen, why := tunnelOpening(first, host)
			_ = c.SetReadDeadline(time.Time{})
			if why != "" {
				ev.Verdict, ev.Reason = Refused, why
				ev.Duration = time.Since(start)
				x.p.record(ev)
				recorded = true
			}
			return io.MultiReader(bytes.NewReader(seen), first), why
		}
		if m.relay(up, c, br, open) != "" {
			return
		}
	} else {
		// Hop-by-hop and proxy headers stay here; the target sees an
		// origin-form request on a connection that closes after it.
		for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
			req.Header.Del(h)
		}
		req.Close = true
		req.RequestURI = ""
		m.request(up, c, req)
	}
	ev.Up, ev.Down = m.up.Load(), m.down.Load()
	ev.Verdict = Allowed
	if m.capped.Load() {
		ev.Verdict, ev.Reason = Capped, "the run's egress byte cap is reached; the connection was cut"
	}
}

// writeStatus answers a request the proxy will not carry, with the reason
// as the body, and the connection closes.
func writeStatus(w io.Writer, code int, reason string) {
	body := "fixrail egress: " + reason + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}
