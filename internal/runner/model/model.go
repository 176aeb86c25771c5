// Package model makes single-shot model calls: text in, JSON out, no tools,
// one turn.
//
// The gates that judge a fix (does this diff address this finding? what is
// its production impact?) need a model's opinion but never its hands. Every
// backend here sends one request with no tool definitions at all, so one
// turn is provably enough: a model that merely has its tool calls denied
// keeps trying (seed 001 measured 3 turns and 6.2× the cost for
// --allowedTools "" against --tools ""). Each prompt also ends with
// [NoToolsContract], so the model does not spend its single turn asking to
// look at the repository.
//
// Three backends implement [Backend]: [Anthropic] (Messages API), [OpenAI]
// (any OpenAI-compatible chat-completions endpoint), both over net/http, and
// [ClaudeCLI] (claude -p --tools "" when only the CLI is
// configured). API keys come from the environment only: [Open] reads them by
// name, and no backend takes one from argv or a file.
//
// Failures are typed. A [TransportError] (connection refused or reset, a
// transport timeout, HTTP 408/409/429/5xx, a crashed CLI) is the only error
// [WithRetry] retries. A well-formed answer, whatever it says, and a request
// the endpoint refused on its merits (400, 401, 403, 404) are never retried.
// The backends never retry on their own, so that this is the one place that
// decides.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Backend makes one single-shot call: a system prompt and a user prompt in,
// the reply's text out. It never offers the model a tool.
type Backend interface {
	Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error)
}

// NoToolsContract ends every single-shot prompt. Without it a model that
// does not know its tools are gone spends its one turn asking for them.
const NoToolsContract = "You have no tools; the material above is sufficient. Answer with one JSON object and nothing else."

// DefaultTimeout bounds one attempt of a call when the backend's Timeout is
// zero.
const DefaultTimeout = 2 * time.Minute

// TransportError is a call that failed before a well-formed answer came
// back: the connection failed, the transport timed out, the endpoint was
// rate-limited or failed on its side (408, 409, 429, 5xx, 529), or the CLI
// crashed or printed no result. Only these are retried.
type TransportError struct {
	Backend string // "anthropic", "openai" or "claude"
	Status  int    // the HTTP status when there was one, else 0
	Timeout bool   // a deadline ended the call
	Err     error
}

func (e *TransportError) Error() string {
	var b strings.Builder
	b.WriteString(e.Backend)
	b.WriteString(": transport")
	if e.Timeout {
		b.WriteString(" timeout")
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *TransportError) Unwrap() error { return e.Err }

// IsTransport reports whether err is, or wraps, a [TransportError].
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}

// retryableStatus reports whether an HTTP status means the endpoint could
// not answer (as opposed to refusing the request): the set the vendors' own
// SDKs retry by default.
func retryableStatus(code int) bool {
	return code == 408 || code == 409 || code == 429 || code >= 500
}

// classify turns an error from an HTTP API call into a TransportError when it
// is one. status is the API error's status, 0 when there was no response.
func classify(backend string, status int, err error) error {
	switch {
	case status != 0 && retryableStatus(status):
		return &TransportError{Backend: backend, Status: status, Err: err}
	case status != 0:
		return fmt.Errorf("%s: %w", backend, err)
	case errors.Is(err, context.Canceled):
		// The caller stopped; nothing to retry, and no answer.
		return fmt.Errorf("%s: %w", backend, err)
	case errors.Is(err, context.DeadlineExceeded):
		return &TransportError{Backend: backend, Timeout: true, Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &TransportError{Backend: backend, Timeout: ne.Timeout(), Err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &TransportError{Backend: backend, Timeout: ue.Timeout(), Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &TransportError{Backend: backend, Err: err}
	}
	return fmt.Errorf("%s: %w", backend, err)
}

// WithRetry returns b retried on [TransportError] only, at most attempts
// calls in all (attempts < 1 means 1), waiting backoff, 2×backoff, … between
// them. It stops as soon as ctx is done. Any other error, and any answer,
// is returned at once.
func WithRetry(b Backend, attempts int, backoff time.Duration) Backend {
	return &retry{b: b, attempts: max(attempts, 1), backoff: backoff}
}

type retry struct {
	b        Backend
	attempts int
	backoff  time.Duration
}

func (r *retry) Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
	wait := r.backoff
	for i := 1; ; i++ {
		out, err := r.b.Complete(ctx, system, prompt, maxTokens)
		if err == nil || !IsTransport(err) || i >= r.attempts || ctx.Err() != nil {
			if err != nil && i > 1 {
				err = fmt.Errorf("after %d attempts: %w", i, err)
			}
			return out, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("after %d attempts: %w", i, err)
		case <-t.C:
		}
		wait *= 2
	}
}

// Bound returns s unchanged when it is at most max bytes. Otherwise it cuts
// s at the last line break within max bytes (or at a rune boundary when the
// first line alone is too long) and appends a marker saying how much was
// cut, so the model knows it saw part of a diff. max <= 0 keeps nothing but
// the marker.
func Bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := 0
	if max > 0 {
		cut = max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= 0 {
			cut = nl + 1
		}
	}
	head := strings.TrimRight(s[:cut], "\n")
	marker := fmt.Sprintf("[… truncated by fixrail: %d of %d bytes cut]", len(s)-cut, len(s))
	if head == "" {
		return marker
	}
	return head + "\n" + marker
}

// DecodeJSON decodes a model's reply into v. The reply must be exactly one
// JSON object: surrounding whitespace and a single ```json (or ```) fence
// around it are tolerated, anything else — prose before or after, a second
// value, an array, a top-level key given twice (compared case-insensitively,
// as encoding/json matches them) — is an error.
func DecodeJSON(text string, v any) error {
	body := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(body, "```"); ok {
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return errors.New("reply: unterminated code fence")
		}
		lang := strings.TrimSpace(rest[:nl])
		if lang != "" && !strings.EqualFold(lang, "json") {
			return fmt.Errorf("reply: code fence of %q, want json", lang)
		}
		inner, ok := strings.CutSuffix(strings.TrimSpace(rest[nl+1:]), "```")
		if !ok {
			return errors.New("reply: unterminated code fence")
		}
		body = strings.TrimSpace(inner)
	}
	if !strings.HasPrefix(body, "{") {
		return errors.New("reply: not a JSON object")
	}
	if err := uniqueKeys([]byte(body)); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("reply: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("reply: text after the JSON object")
	}
	return nil
}

// uniqueKeys rejects an object whose top level names a key twice: encoding/json
// would silently keep the last, so {"verdict":"fail","verdict":"pass"} would
// read as a pass.
func uniqueKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{'
		return fmt.Errorf("reply: %w", err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("reply: %w", err)
		}
		key, _ := tok.(string)
		k := strings.ToLower(key)
		if seen[k] {
			return fmt.Errorf("reply: key %q given twice", key)
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("reply: %w", err)
		}
	}
	return nil
}
