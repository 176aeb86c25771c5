package egress

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkEgress measures what the egress rail adds to a model request
// and to bulk transfer, against the same server reached directly, in one
// run (interleaved, so machine load falls on both alike). A model request
// is a 20 KB POST answered with 4 KB, as a Messages API turn is; proxied
// it goes client → forwarder (loopback TCP) → the proxy's Unix socket →
// the target, on a new connection each time (the proxy closes after a
// plain request), while the direct client keeps its connection alive, as
// the CLI does without a proxy. Reported: both medians, the milliseconds
// added at the median, and the throughput ratio of a 32 MiB download
// through a CONNECT tunnel against a direct one.
func BenchmarkEgress(b *testing.B) {
	reply := bytes.Repeat([]byte("x"), 4<<10)
	bulk := make([]byte, 32<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/bulk" {
			_, _ = w.Write(bulk)
			return
		}
		_, _ = w.Write(reply)
	}))
	defer srv.Close()
	host, portS, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portS)
	pol := &Policy{Allow: []Target{{Host: host, Port: port}}, MaxBytes: 1 << 62, MaxConns: 1 << 30}
	sock := filepath.Join(b.TempDir(), "s")
	x, err := Listen(sock, pol)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	fwd, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer fwd.Close()
	go func() {
		for {
			c, err := fwd.Accept()
			if err != nil {
				return
			}
			go relayTo(c, sock)
		}
	}()
	proxyURL := &url.URL{Scheme: "http", Host: fwd.Addr().String()}
	direct := &http.Client{Transport: &http.Transport{Proxy: nil}}
	proxied := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	body := bytes.Repeat([]byte("y"), 20<<10)
	request := func(c *http.Client, u string) time.Duration {
		start := time.Now()
		resp, err := c.Post(u, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n == 0 {
			b.Fatalf("%s: %s, %d bytes", u, resp.Status, n)
		}
		return time.Since(start)
	}
	// The tunnel: an HTTPS client's path (CONNECT), here carrying HTTP.
	tunnel := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := net.Dial("tcp", fwd.Addr().String())
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
			buf := make([]byte, len("HTTP/1.1 200 Connection established\r\n\r\n"))
			if _, err := io.ReadFull(c, buf); err != nil || !bytes.HasPrefix(buf, []byte("HTTP/1.1 200")) {
				c.Close()
				return nil, fmt.Errorf("CONNECT: %q %v", buf, err)
			}
			return c, nil
		},
	}}
	for range b.N {
		const n = 200
		var d, p []time.Duration
		for range n {
			d = append(d, request(direct, srv.URL+"/v1/messages"))
			p = append(p, request(proxied, srv.URL+"/v1/messages"))
		}
		var dt, pt []time.Duration
		for range 3 {
			dt = append(dt, request(direct, srv.URL+"/bulk"))
			pt = append(pt, request(tunnel, srv.URL+"/bulk"))
		}
		dm, pm := median(d), median(p)
		b.ReportMetric(float64(dm.Microseconds()), "direct-median-µs")
		b.ReportMetric(float64(pm.Microseconds()), "proxied-median-µs")
		b.ReportMetric(float64(pm-dm)/float64(time.Millisecond), "added-ms")
		b.ReportMetric(float64(pm)/float64(dm), "latency-ratio")
		mbps := func(t time.Duration) float64 { return float64(len(bulk)) / (1 << 20) / t.Seconds() }
		b.ReportMetric(mbps(median(dt)), "direct-MiB/s")
		b.ReportMetric(mbps(median(pt)), "tunnel-MiB/s")
		b.ReportMetric(mbps(median(pt))/mbps(median(dt)), "throughput-ratio")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
