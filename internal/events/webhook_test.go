package events

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testSecret is assembled at run time: no fixture looks like a real key.
var testSecret = strings.Repeat("k", 8) + "-webhook-test"

func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func TestWebhookFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		ok      bool
		all     bool
		wantErr string
	}{
		{name: "unset", env: nil},
		{name: "url and secret", env: map[string]string{WebhookURLEnv: "https://hooks.example/x", WebhookSecretEnv: testSecret}, ok: true},
		{name: "all", env: map[string]string{WebhookURLEnv: "https://hooks.example/x", WebhookSecretEnv: testSecret, WebhookEventsEnv: "all"}, ok: true, all: true},
		{name: "no secret", env: map[string]string{WebhookURLEnv: "https://hooks.example/x"}, wantErr: "every webhook body is signed"},
		{name: "short secret", env: map[string]string{WebhookURLEnv: "https://hooks.example/x", WebhookSecretEnv: "short"}, wantErr: "under 16 bytes"},
		{name: "not http", env: map[string]string{WebhookURLEnv: "file:///etc/passwd", WebhookSecretEnv: testSecret}, wantErr: "http(s)"},
		{name: "userinfo", env: map[string]string{WebhookURLEnv: "https://u:p@hooks.example/x", WebhookSecretEnv: testSecret}, wantErr: "credentials"},
		{name: "bad events", env: map[string]string{WebhookURLEnv: "https://hooks.example/x", WebhookSecretEnv: testSecret, WebhookEventsEnv: "some"}, wantErr: "terminal or all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok, err := WebhookFromEnv(env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if ok {
					t.Fatal("ok with an error")
				}
				return
			}
			if err != nil || ok != tc.ok || cfg.All != tc.all {
				t.Fatalf("got ok=%v all=%v err=%v", ok, cfg.All, err)
			}
		})
	}
}

type received struct {
	mu     sync.Mutex
	bodies [][]byte
	sigs   []string
}

func receiver(t *testing.T, status func(n int) int) (*httptest.Server, *received, *atomic.Int32) {
	rec := &received{}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1))
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, b)
		rec.sigs = append(rec.sigs, r.Header.Get(WebhookSignatureHeader))
		rec.mu.Unlock()
		w.WriteHeader(status(i))
	}))
	t.Cleanup(srv.Close)
	return srv, rec, &n
}

// The log's chokepoint runs before the sink: the receiver sees the
// redacted text, signed, and only terminal events unless all were asked.
func TestWebhookSignedRedactedTerminalOnly(t *testing.T) {
	srv, rec, _ := receiver(t, func(int) int { return 200 })
	secretValue := "tok" + strings.Repeat("Z", 20)
	scrub := func(s string) (string, bool) {
		out := strings.ReplaceAll(s, secretValue, "[REDACTED]")
		return out, out != s
	}
	l, err := Open(filepath.Join(t.TempDir(), "run.ndjson"), "run-1", nil, scrub)
	if err != nil {
		t.Fatal(err)
	}
	wh := NewWebhook(WebhookConfig{URL: srv.URL, Secret: []byte(testSecret)})
	l.AddSink(wh)
	l.Emit(Event{Type: "phase-start", Phase: "P1"})
	l.Emit(Event{Type: "terminal", Verdict: "HALT", Reason: "budget-exhausted", Detail: "saw " + secretValue})
	l.Close()
	if err := wh.Close(WebhookDrain); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) != 1 {
		t.Fatalf("receiver got %d events, want the terminal one only", len(rec.bodies))
	}
	body := rec.bodies[0]
	if strings.Contains(string(body), secretValue) || !strings.Contains(string(body), "[REDACTED]") {
		t.Fatalf("body not redacted: %s", body)
	}
	if !hmac.Equal([]byte(rec.sigs[0]), []byte(Sign([]byte(testSecret), body))) {
		t.Fatalf("signature %q does not verify", rec.sigs[0])
	}
	if Sign([]byte("another-secret-value"), body) == rec.sigs[0] {
		t.Fatal("signature does not depend on the secret")
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil || e.Type != "terminal" || e.Run != "run-1" || e.Verdict != "HALT" {
		t.Fatalf("body %s: %v", body, err)
	}
}

// TestWebhookSendsGroupEvents: a grouping batch's publication event is
// sent by default, as a terminal one is; other types wait for All.
func TestWebhookSendsGroupEvents(t *testing.T) {
	srv, rec, _ := receiver(t, func(int) int { return 200 })
	wh := NewWebhook(WebhookConfig{URL: srv.URL, Secret: []byte(testSecret)})
	wh.Send(Event{Type: "note", Detail: "not sent"})
	wh.Send(Event{Type: TypeGroup, Run: "group-x", Verdict: "published"})
	if err := wh.Close(WebhookDrain); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) != 1 {
		t.Fatalf("receiver got %d events, want the group's only", len(rec.bodies))
	}
	var e Event
	if err := json.Unmarshal(rec.bodies[0], &e); err != nil || e.Type != TypeGroup || e.Run != "group-x" {
		t.Fatalf("body %s: %v", rec.bodies[0], err)
	}
}

func TestWebhookRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   func(int) int
		attempts int32
		wantErr  bool
	}{
		{name: "ok first time", status: func(int) int { return 204 }, attempts: 1},
		{name: "5xx then ok", status: func(n int) int { return map[bool]int{true: 503, false: 200}[n == 1] }, attempts: 2},
		{name: "5xx always: bounded", status: func(int) int { return 500 }, attempts: webhookAttempts, wantErr: true},
		{name: "429 retried", status: func(int) int { return 429 }, attempts: webhookAttempts, wantErr: true},
		{name: "4xx final", status: func(int) int { return 401 }, attempts: 1, wantErr: true},
		{name: "redirect not followed", status: func(int) int { return 307 }, attempts: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, n := receiver(t, tc.status)
			wh := NewWebhook(WebhookConfig{URL: srv.URL, Secret: []byte(testSecret)})
			wh.sleep = func(context.Context, time.Duration) {}
			wh.Send(Event{Type: "terminal"})
			err := wh.Close(WebhookDrain)
			if got := n.Load(); got != tc.attempts {
				t.Fatalf("%d attempts, want %d", got, tc.attempts)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("Close err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// A receiver that is down or hangs costs Send nothing and Close at most
// its drain; its error never names the URL (a credential).
func TestWebhookReceiverDownOrHanging(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/secret-path"
	ln.Close()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client going away
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler outlives the test
	for name, u := range map[string]string{"down": down, "hanging": hang.URL + "/secret-path"} {
		t.Run(name, func(t *testing.T) {
			wh := NewWebhook(WebhookConfig{URL: u, Secret: []byte(testSecret)})
			t0 := time.Now()
			for range webhookQueue * 2 {
				wh.Send(Event{Type: "terminal"})
			}
			if d := time.Since(t0); d > time.Second {
				t.Fatalf("Send blocked for %s", d)
			}
			const drain = 300 * time.Millisecond
			t0 = time.Now()
			err := wh.Close(drain)
			if d := time.Since(t0); d > drain+time.Second {
				t.Fatalf("Close took %s, drain is %s", d, drain)
			}
			if err == nil || !strings.Contains(err.Error(), "not delivered") {
				t.Fatalf("Close err = %v, want a delivery warning", err)
			}
			if strings.Contains(err.Error(), "secret-path") {
				t.Fatalf("the warning names the URL: %v", err)
			}
		})
	}
}
