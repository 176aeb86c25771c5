package events

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Sink receives every event after the chokepoint redacted it: what a sink
// sees is what the run log holds. Send must not block the run.
type Sink interface {
	Send(Event)
}

// AddSink makes l hand each later event to s, scrubbed, after the log
// and the console have it.
func (l *Log) AddSink(s Sink) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sinks = append(l.sinks, s)
}

// The webhook's environment: the URL and the signing key come from the
// environment only — fixrail.yaml is committed, and a URL there could be
// pointed anywhere by whoever can change the base branch.
const (
	WebhookURLEnv    = "FIXRAIL_WEBHOOK_URL"
	WebhookSecretEnv = "FIXRAIL_WEBHOOK_SECRET"
	// WebhookEventsEnv is "terminal" (the default: one event per run) or
	// "all" (every transition).
	WebhookEventsEnv = "FIXRAIL_WEBHOOK_EVENTS"
	// WebhookSignatureHeader carries "sha256=" and the hex HMAC-SHA256 of
	// the body under the secret, as GitHub signs its own webhooks.
	WebhookSignatureHeader = "X-Fixrail-Signature-256"
)

// Webhook limits: a receiver that is down, slow or hostile costs a run at
// most about WebhookDrain at its end, and never its outcome.
const (
	webhookQueue    = 256             // events held while the receiver is slow; beyond, dropped and counted
	webhookAttempts = 3               // per event: the first try and two retries
	webhookTimeout  = 5 * time.Second // per request
	webhookBackoff  = 250 * time.Millisecond
	WebhookDrain    = 10 * time.Second // Close waits this long for the queue, then gives up
	webhookMaxBody  = 64 << 10         // an event's detail is capped so a body stays small
)

// WebhookConfig is a webhook sink's settings, read by WebhookFromEnv.
type WebhookConfig struct {
	URL    string
	Secret []byte
	// All sends every transition; false sends terminal events only.
	All bool
	// Client is the HTTP client; nil is one with the per-request timeout
	// that follows no redirect (a redirect would carry the signed body to
	// a host nobody configured).
	Client *http.Client
}

// WebhookFromEnv reads the webhook's settings; ok is false when no URL is
// set. A URL without a secret, a secret under 16 bytes, a URL that is not
// http(s) or carries credentials, or an unknown events value is an error:
// an unsigned or misdirected body is not sent at all.
func WebhookFromEnv(lookup func(string) (string, bool)) (cfg WebhookConfig, ok bool, err error) {
	raw, _ := lookup(WebhookURLEnv)
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return WebhookConfig{}, false, nil
	}
	u, perr := url.Parse(raw)
	if perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return WebhookConfig{}, false, fmt.Errorf("%s: want an http(s) URL", WebhookURLEnv)
	}
	if u.User != nil {
		return WebhookConfig{}, false, fmt.Errorf("%s: a URL with credentials in it is refused (the body is signed with %s instead)", WebhookURLEnv, WebhookSecretEnv)
	}
	secret, _ := lookup(WebhookSecretEnv)
	if len(secret) < 16 {
		return WebhookConfig{}, false, fmt.Errorf("%s is set but %s is not (or is under 16 bytes): every webhook body is signed", WebhookURLEnv, WebhookSecretEnv)
	}
	cfg = WebhookConfig{URL: u.String(), Secret: []byte(secret)}
	switch v, _ := lookup(WebhookEventsEnv); v {
	case "", "terminal":
	case "all":
		cfg.All = true
	default:
		return WebhookConfig{}, false, fmt.Errorf("%s=%q: want terminal or all", WebhookEventsEnv, v)
	}
	return cfg, true, nil
}

// Webhook posts events to a URL from a goroutine of its own: Send only
// queues, so a receiver that is down or hangs never holds up a run, and
// nothing it answers reaches the run's outcome.
type Webhook struct {
	cfg    WebhookConfig
	q      chan Event
	done   chan struct{}
	stop   context.CancelFunc
	ctx    context.Context
	mu     sync.Mutex
	closed bool
	// Delivery counts, for the warning a run prints at its end.
	sent, failed, dropped int
	lastErr               error
	sleep                 func(context.Context, time.Duration)
}

// NewWebhook starts a sink; Close stops it.
func NewWebhook(cfg WebhookConfig) *Webhook {
	if cfg.Client == nil {
		cfg.Client = &http.Client{
			Timeout:       webhookTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Webhook{cfg: cfg, q: make(chan Event, webhookQueue), done: make(chan struct{}), ctx: ctx, stop: cancel, sleep: sleepCtx}
	go w.loop()
	return w
}

// Send queues e (a terminal event or a group's publication, or any with
// All); a full queue drops it.
func (w *Webhook) Send(e Event) {
	if !w.cfg.All && e.Type != "terminal" && e.Type != TypeGroup {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	select {
	case w.q <- e:
	default:
		w.dropped++
	}
}

// Close delivers what is queued, waiting at most drain, then abandons the
// rest. The error says what was not delivered; it is a warning, never a
// run's outcome.
func (w *Webhook) Close(drain time.Duration) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.q)
	}
	w.mu.Unlock()
	t := time.NewTimer(drain)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
		w.stop()
		<-w.done
	}
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == 0 && w.dropped == 0 {
		return nil
	}
	msg := fmt.Sprintf("webhook: %d event(s) delivered, %d not delivered, %d dropped (queue full or shut down)", w.sent, w.failed, w.dropped)
	if w.lastErr != nil {
		msg += ": " + w.lastErr.Error()
	}
	return errors.New(msg)
}

func (w *Webhook) loop() {
	defer close(w.done)
	for e := range w.q {
		if w.ctx.Err() != nil {
			w.count(false, true, nil)
			continue
		}
		err := w.deliver(e)
		w.count(err == nil, false, err)
	}
}

func (w *Webhook) count(ok, dropped bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case ok:
		w.sent++
	case dropped:
		w.dropped++
	default:
		w.failed++
		w.lastErr = err
	}
}

// deliver posts one event, retrying a transport error or a 5xx/429 a
// bounded number of times; a 4xx is the receiver's final answer.
func (w *Webhook) deliver(e Event) error {
	body, err := WebhookBody(e)
	if err != nil {
		return err
	}
	sig := Sign(w.cfg.Secret, body)
	var last error
	for attempt := range webhookAttempts {
		if attempt > 0 {
			w.sleep(w.ctx, webhookBackoff<<(attempt-1))
		}
		if w.ctx.Err() != nil {
			return w.ctx.Err()
		}
		retry, err := w.post(body, sig, e.Type)
		if err == nil {
			return nil
		}
		last = err
		if !retry {
			break
		}
	}
	return last
}

func (w *Webhook) post(body []byte, sig, typ string) (retry bool, err error) {
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fixrail-webhook")
	req.Header.Set("X-Fixrail-Event", typ)
	req.Header.Set(WebhookSignatureHeader, sig)
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		// The URL is a credential (it is on redact's list): never in an error.
		return true, errors.New("the receiver could not be reached")
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("the receiver answered %d", resp.StatusCode)
	default:
		return false, fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
}

// WebhookBody is the JSON a webhook receives for e: the event as the run
// log holds it, its detail capped.
func WebhookBody(e Event) ([]byte, error) {
	if len(e.Detail) > webhookMaxBody {
		e.Detail = e.Detail[:webhookMaxBody] + " [truncated]"
	}
	return json.Marshal(e)
}

// Sign is the signature header's value for body: "sha256=" and the hex
// HMAC-SHA256 under secret. A receiver recomputes it over the raw body and
// compares in constant time.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
