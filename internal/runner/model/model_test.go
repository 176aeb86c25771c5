package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
)

var (
	_ model.Backend = (*model.Anthropic)(nil)
	_ model.Backend = (*model.OpenAI)(nil)
	_ model.Backend = (*model.ClaudeCLI)(nil)
)

const reply = `{"verdict": "pass", "reason": "the guard covers the reported input"}`

func TestAnthropicSingleShot(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Reply(reply))
	a := model.NewAnthropic("test-key", srv.URL, "claude-test-1")
	prompt := "Does the diff address the finding?\n\n" + model.NoToolsContract
	got, err := a.Complete(t.Context(), "You judge fixes.", prompt, 256)
	if err != nil {
		t.Fatal(err)
	}
	if got != reply {
		t.Errorf("reply = %q, want %q", got, reply)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(srv.OtherRequests()) != 0 {
		t.Fatalf("%d messages requests and %d others, want exactly one request", len(reqs), len(srv.OtherRequests()))
	}
	body := reqs[0].Body
	if _, ok := body["tools"]; ok {
		t.Errorf("request carries a tools key: %s", reqs[0].Raw)
	}
	if _, ok := body["tool_choice"]; ok {
		t.Errorf("request carries a tool_choice key: %s", reqs[0].Raw)
	}
	if s, _ := body["stream"].(bool); s {
		t.Errorf("request is streaming, want a plain request")
	}
	gotShape := map[string]any{
		"model":      body["model"],
		"max_tokens": body["max_tokens"],
		"system":     body["system"],
		"messages":   body["messages"],
	}
	wantShape := map[string]any{
		"model":      "claude-test-1",
		"max_tokens": float64(256),
		"system":     []any{map[string]any{"type": "text", "text": "You judge fixes."}},
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": prompt},
		}}},
	}
	if diff := cmp.Diff(wantShape, gotShape); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if reqs[0].Kind != fakemodel.Side {
		t.Errorf("fake classified the request as %s, want side (no tools)", reqs[0].Kind)
	}
}

// TestAnthropicIgnoresEnvironment: the SDK must not pick up a base URL or a
// key from the environment on its own; the caller passes both.
func TestAnthropicIgnoresEnvironment(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Reply(reply))
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1") // nothing listens there
	t.Setenv("ANTHROPIC_API_KEY", "env-key-must-not-be-sent")
	a := model.NewAnthropic("explicit-key", srv.URL, "m")
	if _, err := a.Complete(t.Context(), "", "hi", 16); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	for name, vals := range r.Header {
		for _, v := range vals {
			if strings.Contains(v, "env-key-must-not-be-sent") {
				t.Errorf("header %s carries the environment's key", name)
			}
		}
	}
	if !strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), "explicit-key") {
		t.Errorf("the explicit key was not sent; headers %v", r.Header)
	}
}

// chatServer implements POST /v1/chat/completions from the documented
// format, answering each request with the next of replies (the last one
// repeats). A reply with a status other than 200 is an error body.
type chatServer struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
}

type chatReply struct {
	status  int
	content string
}

func startChat(t *testing.T, replies ...chatReply) *chatServer {
	t.Helper()
	cs := &chatServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body: %v", err)
		}
		cs.mu.Lock()
		n := len(cs.bodies)
		cs.bodies = append(cs.bodies, body)
		cs.headers = append(cs.headers, r.Header.Clone())
		cs.mu.Unlock()
		rep := replies[min(n, len(replies)-1)]
		w.Header().Set("Content-Type", "application/json")
		if rep.status != http.StatusOK {
			w.WriteHeader(rep.status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": "scripted failure", "type": "server_error", "param": nil, "code": nil,
			}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000,
			"model": body["model"],
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": rep.content, "refusal": nil},
				"logprobs":      nil,
				"finish_reason": "stop",
			}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *chatServer) requests() ([]map[string]any, []http.Header) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]map[string]any(nil), cs.bodies...), append([]http.Header(nil), cs.headers...)
}

func TestOpenAISingleShot(t *testing.T) {
	cs := startChat(t, chatReply{status: 200, content: reply})
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	o := model.NewOpenAI("sk-test", cs.URL+"/v1", "gpt-test")
	got, err := o.Complete(t.Context(), "You judge fixes.", "the prompt", 300)
	if err != nil {
		t.Fatal(err)
	}
	if got != reply {
		t.Errorf("reply = %q, want %q", got, reply)
	}
	bodies, headers := cs.requests()
	if len(bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(bodies))
	}
	for _, k := range []string{"tools", "tool_choice", "functions", "stream"} {
		if _, ok := bodies[0][k]; ok {
			t.Errorf("request carries %q: %v", k, bodies[0])
		}
	}
	want := map[string]any{
		"model":                 "gpt-test",
		"max_completion_tokens": float64(300),
		"messages": []any{
			map[string]any{"role": "system", "content": "You judge fixes."},
			map[string]any{"role": "user", "content": "the prompt"},
		},
	}
	if diff := cmp.Diff(want, bodies[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if got := headers[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := headers[0].Get("OpenAI-Organization"); got != "" {
		t.Errorf("OpenAI-Organization = %q taken from the environment", got)
	}
}

// counting is a Backend whose answers are scripted, one per call.
type counting struct {
	mu    sync.Mutex
	calls int
	steps []func() (string, error)
}

func (c *counting) Complete(context.Context, string, string, int) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	step := c.steps[min(c.calls, len(c.steps)-1)]
	c.calls++
	return step()
}

func TestWithRetryIsTyped(t *testing.T) {
	transport := func() (string, error) {
		return "", &model.TransportError{Backend: "fake", Status: 503, Err: errors.New("unavailable")}
	}
	refused := func() (string, error) { return "", errors.New("fake: 400 bad request") }
	answer := func(s string) func() (string, error) { return func() (string, error) { return s, nil } }
	tests := []struct {
		name      string
		steps     []func() (string, error)
		wantCalls int
		wantOut   string
		wantErr   bool
		transport bool
	}{
		{name: "transport then answer is retried", steps: []func() (string, error){transport, answer("ok")}, wantCalls: 2, wantOut: "ok"},
		{name: "transport every time stops at attempts", steps: []func() (string, error){transport}, wantCalls: 3, wantErr: true, transport: true},
		{name: "a fail answer is not retried", steps: []func() (string, error){answer(`{"verdict":"fail"}`), answer("x")}, wantCalls: 1, wantOut: `{"verdict":"fail"}`},
		{name: "garbage is not retried", steps: []func() (string, error){answer("I would like to look at the repo"), answer("x")}, wantCalls: 1, wantOut: "I would like to look at the repo"},
		{name: "a refused request is not retried", steps: []func() (string, error){refused, answer("x")}, wantCalls: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &counting{steps: tc.steps}
			out, err := model.WithRetry(c, 3, time.Millisecond).Complete(t.Context(), "", "", 1)
			if c.calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", c.calls, tc.wantCalls)
			}
			if out != tc.wantOut || (err != nil) != tc.wantErr || model.IsTransport(err) != tc.transport {
				t.Errorf("got (%q, %v), want out %q, error %v, transport %v", out, err, tc.wantOut, tc.wantErr, tc.transport)
			}
		})
	}
}

func TestWithRetryStopsWithContext(t *testing.T) {
	c := &counting{steps: []func() (string, error){func() (string, error) {
		return "", &model.TransportError{Backend: "fake", Err: errors.New("reset")}
	}}}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := model.WithRetry(c, 100, 20*time.Millisecond).Complete(ctx, "", "", 1)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v, want a prompt error", err, time.Since(start))
	}
	if c.calls >= 100 {
		t.Errorf("%d calls, want the context to end the retries", c.calls)
	}
}

// TestAnthropicTypedRetries drives the Anthropic backend over real HTTP:
// which failures come back as TransportError, and that the SDK itself never
// retries (one request per Complete).
func TestAnthropicTypedRetries(t *testing.T) {
	tests := []struct {
		name      string
		turn      fakemodel.Turn
		timeout   time.Duration
		wantReqs  int // with WithRetry(…, 3, …)
		transport bool
		status    int
	}{
		{name: "500 is transport", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 500, Message: "boom"}}, wantReqs: 3, transport: true, status: 500},
		{name: "529 overloaded is transport", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 529, Type: "overloaded_error"}}, wantReqs: 3, transport: true, status: 529},
		{name: "429 is transport", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 429, Type: "rate_limit_error"}}, wantReqs: 3, transport: true, status: 429},
		{name: "400 is not retried", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 400, Type: "invalid_request_error"}}, wantReqs: 1},
		{name: "401 is not retried", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 401, Type: "authentication_error"}}, wantReqs: 1},
		{name: "a timeout is transport", turn: fakemodel.Turn{Text: reply, Delay: 10 * time.Second}, timeout: 150 * time.Millisecond, wantReqs: 3, transport: true},
		{name: "a well-formed fail is an answer", turn: fakemodel.Turn{Text: `{"verdict":"fail","reason":"no"}`}, wantReqs: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t, fakemodel.Always(tc.turn))
			a := model.NewAnthropic("k", srv.URL, "m")
			a.Timeout = tc.timeout

			// Alone: exactly one request, whatever happens.
			_, err := a.Complete(t.Context(), "", "p", 16)
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("without WithRetry: %d requests, want 1 (SDK retries must be off)", n)
			}
			if model.IsTransport(err) != tc.transport {
				t.Errorf("IsTransport(%v) = %v, want %v", err, !tc.transport, tc.transport)
			}
			var te *model.TransportError
			if errors.As(err, &te) && te.Status != tc.status {
				t.Errorf("status %d, want %d", te.Status, tc.status)
			}
			if tc.timeout > 0 && (te == nil || !te.Timeout) {
				t.Errorf("err %v, want a transport timeout", err)
			}

			_, _ = model.WithRetry(a, 3, time.Millisecond).Complete(t.Context(), "", "p", 16)
			if n := len(srv.Requests()) - 1; n != tc.wantReqs {
				t.Errorf("with WithRetry(3): %d requests, want %d", n, tc.wantReqs)
			}
		})
	}
}

// TestAnthropicRetrySucceeds: a 500 and then a message ⇒ the retried call
// returns the message.
func TestAnthropicRetrySucceeds(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if first {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m",
			"content":[{"type":"text","text":"{\"verdict\":\"pass\",\"reason\":\"ok\"}"}],
			"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer srv.Close()
	b := model.WithRetry(model.NewAnthropic("k", srv.URL, "m"), 3, time.Millisecond)
	got, err := b.Complete(t.Context(), "", "p", 16)
	if err != nil || got != `{"verdict":"pass","reason":"ok"}` {
		t.Fatalf("got (%q, %v)", got, err)
	}
	if n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestConnectionRefusedIsTransport(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	for _, b := range []model.Backend{model.NewAnthropic("k", url, "m"), model.NewOpenAI("k", url+"/v1", "m")} {
		_, err := b.Complete(t.Context(), "", "p", 16)
		if !model.IsTransport(err) {
			t.Errorf("%T: err %v, want a TransportError", b, err)
		}
	}
}

func TestOpenAITypedErrors(t *testing.T) {
	tests := []struct {
		status    int
		transport bool
	}{{500, true}, {503, true}, {429, true}, {400, false}, {401, false}, {404, false}}
	for _, tc := range tests {
		cs := startChat(t, chatReply{status: tc.status})
		b := model.WithRetry(model.NewOpenAI("k", cs.URL+"/v1", "m"), 2, time.Millisecond)
		_, err := b.Complete(t.Context(), "", "p", 16)
		if model.IsTransport(err) != tc.transport {
			t.Errorf("HTTP %d: err %v, transport %v, want %v", tc.status, err, !tc.transport, tc.transport)
		}
		want := 1
		if tc.transport {
			want = 2
		}
		if bodies, _ := cs.requests(); len(bodies) != want {
			t.Errorf("HTTP %d: %d requests, want %d", tc.status, len(bodies), want)
		}
	}
}

func TestBound(t *testing.T) {
	diff := "line one\nline two\nline three\n"
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{name: "fits", s: diff, max: 100, want: diff},
		{name: "exact", s: diff, max: len(diff), want: diff},
		{name: "cut at a line", s: diff, max: 20, want: "line one\nline two\n[… truncated by fixrail: 11 of 29 bytes cut]"},
		{name: "one long line cut at a rune", s: "ééééé", max: 5, want: "éé\n[… truncated by fixrail: 6 of 10 bytes cut]"},
		{name: "zero keeps the marker", s: "abc", max: 0, want: "[… truncated by fixrail: 3 of 3 bytes cut]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := model.Bound(tc.s, tc.max); got != tc.want {
				t.Errorf("Bound(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	type answer struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}
	tests := []struct {
		name    string
		text    string
		want    answer
		wantErr bool
	}{
		{name: "plain", text: `{"verdict":"pass","reason":"r"}`, want: answer{"pass", "r"}},
		{name: "whitespace", text: "\n  {\"verdict\": \"fail\"}\n\n", want: answer{Verdict: "fail"}},
		{name: "json fence", text: "```json\n{\"verdict\":\"uncertain\"}\n```", want: answer{Verdict: "uncertain"}},
		{name: "bare fence", text: "```\n{\"verdict\":\"pass\"}\n```\n", want: answer{Verdict: "pass"}},
		{name: "extra keys are fine", text: `{"verdict":"pass","confidence":0.9}`, want: answer{Verdict: "pass"}},
		{name: "prose before", text: `Sure! {"verdict":"pass"}`, wantErr: true},
		{name: "prose after", text: `{"verdict":"pass"} Hope that helps.`, wantErr: true},
		{name: "two objects", text: `{"verdict":"fail"}{"verdict":"pass"}`, wantErr: true},
		{name: "duplicate key", text: `{"verdict":"fail","verdict":"pass"}`, wantErr: true},
		{name: "duplicate key by case", text: `{"verdict":"fail","Verdict":"pass"}`, wantErr: true},
		{name: "array", text: `[{"verdict":"pass"}]`, wantErr: true},
		{name: "string", text: `"pass"`, wantErr: true},
		{name: "python fence", text: "```python\n{\"verdict\":\"pass\"}\n```", wantErr: true},
		{name: "unterminated fence", text: "```json\n{\"verdict\":\"pass\"}", wantErr: true},
		{name: "truncated", text: `{"verdict":"pa`, wantErr: true},
		{name: "empty", text: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got answer
			err := model.DecodeJSON(tc.text, &got)
			if (err != nil) != tc.wantErr {
				t.Fatalf("DecodeJSON(%q) error %v, want error %v", tc.text, err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("DecodeJSON(%q) = %+v, want %+v", tc.text, got, tc.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	none := func(string) (string, bool) { return "", false }
	tests := []struct {
		name    string
		s       model.Settings
		lookup  func(string) (string, bool)
		wantErr string
	}{
		{name: "anthropic", s: model.Settings{Kind: "anthropic", Model: "m"}, lookup: lookup},
		{name: "openai", s: model.Settings{Kind: "openai", Model: "m"}, lookup: lookup},
		{name: "claude", s: model.Settings{Kind: "claude"}, lookup: lookup},
		{name: "anthropic without key", s: model.Settings{Kind: "anthropic", Model: "m"}, lookup: none, wantErr: "ANTHROPIC_API_KEY"},
		{name: "openai without key", s: model.Settings{Kind: "openai", Model: "m"}, lookup: none, wantErr: "OPENAI_API_KEY"},
		{name: "claude without key", s: model.Settings{Kind: "claude"}, lookup: none, wantErr: "ANTHROPIC_API_KEY"},
		{name: "no model", s: model.Settings{Kind: "openai"}, lookup: lookup, wantErr: "model id"},
		{name: "unknown", s: model.Settings{Kind: "gemini"}, lookup: lookup, wantErr: "unknown backend"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := model.Open(tc.s, tc.lookup)
			if tc.wantErr == "" {
				if err != nil || b == nil {
					t.Fatalf("Open: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Open error %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
}
