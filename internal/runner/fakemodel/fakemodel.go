// Package fakemodel serves a scripted Anthropic Messages API on loopback so
// the real agent CLI and fixrail's single-shot gates can be tested without a
// model.
//
// A [Scenario] lists the assistant turns of the main conversation. The server
// answers POST /v1/messages (streaming SSE or plain JSON, as the request asks)
// with the turn the conversation has reached, records every request, and
// answers the probes the Claude Code CLI makes with minimal valid responses.
// Anything else gets a 404 and a line in the test log.
//
// Turn selection is derived from the request, not from a counter: a request
// whose messages hold n assistant messages gets Turns[n]. A retried request
// (the CLI re-sends a failed stream as a non-streaming request) therefore gets
// the same turn again instead of skipping one. Requests are classified as
//
//   - side: the request carries no tools (title or summary generation,
//     classifiers, single-shot calls, and every request of a CLI run with
//     --tools ""); answered with [Scenario.Side] and never consuming a turn;
//   - subagent: the request carries the x-claude-code-agent-id header the CLI
//     sets inside an Agent subagent; answered from [Scenario.Subagent];
//   - main: everything else; answered from [Scenario.Turns].
//
// Past the end of its list a request gets [Scenario.Fallback]. Every tool_use
// block gets an id unique to the server (toolu_fake_0001, ...), so a
// client's tool_result can be traced to the call; see [Server.Calls] and
// [Server.ToolResults].
package fakemodel

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Token counts reported in every response's usage, fixed so that the cost a
// client computes from them is deterministic.
const (
	InputTokens  = 100
	OutputTokens = 20
)

// DefaultModel is the model id reported when a request names none, and the
// one listed by GET /v1/models.
const DefaultModel = "claude-fake-1"

// Turn is one scripted assistant message.
type Turn struct {
	// Text, when not empty, is the first content block.
	Text string
	// ToolUse blocks follow the text, each with a fresh id.
	ToolUse []ToolUse
	// StopReason defaults to "tool_use" when ToolUse is not empty, else
	// "end_turn".
	StopReason string
	// Delay holds the answer back (or until the client gives up), to test
	// timeouts.
	Delay time.Duration
	// Error, when set, is returned instead of a message.
	Error *APIError
}

// ToolUse is a tool call the model makes. Input is marshalled to JSON.
type ToolUse struct {
	Name  string
	Input any
}

// APIError is an error response: HTTP Status with the API's error body
// {"type":"error","error":{"type":Type,"message":Message}}.
type APIError struct {
	Status  int    // e.g. 401, 429, 500, 529
	Type    string // e.g. "authentication_error"; default "api_error"
	Message string
}

// Scenario scripts the server's answers.
type Scenario struct {
	// Turns answer the main conversation in order.
	Turns []Turn
	// Fallback answers main and subagent requests past the end of their
	// turns; nil means an end_turn with the text "done".
	Fallback *Turn
	// Side answers requests that carry no tools; nil means an end_turn with
	// the text "ok".
	Side *Turn
	// Subagent answers requests made inside an Agent subagent (header
	// x-claude-code-agent-id), indexed like Turns by the subagent's own
	// conversation; nil means every such request gets Fallback.
	Subagent []Turn
}

// Reply is a scenario that answers every request, main, side or subagent,
// with the same text: the mode for single-shot gates.
func Reply(text string) Scenario { return Always(Turn{Text: text}) }

// Always is a scenario that answers every request with the same turn, e.g. an
// error or a delay for a single-shot gate.
func Always(t Turn) Scenario { return Scenario{Fallback: &t, Side: &t} }

// Kind says how the server classified a request.
type Kind string

// The request kinds; see the package documentation.
const (
	Main     Kind = "main"
	Side     Kind = "side"
	Subagent Kind = "subagent"
	Other    Kind = "other" // not POST /v1/messages
)

// Request is one recorded request.
type Request struct {
	Method string
	Path   string // URL path, without the query (the CLI adds ?beta=true)
	Query  string
	Header http.Header
	// Body is the decoded JSON body; nil when there was none or it was not
	// a JSON object.
	Body map[string]any
	Raw  []byte
	Kind Kind
	// Turn is the index into Scenario.Turns (Subagent for subagent requests)
	// that answered, or -1 for Fallback, Side and other requests.
	Turn int
}

// ToolResult is a tool_result block a client sent back.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	// Content is the text of the result: the string, or the text blocks
	// joined by newlines.
	Content string
}

// Call is a tool_use block the server sent, with the id it got.
type Call struct {
	ID    string
	Name  string
	Input any
	Kind  Kind
	Turn  int
}

// Server is a running fake.
type Server struct {
	// URL is the base URL, http://127.0.0.1:port; use it as
	// ANTHROPIC_BASE_URL.
	URL string

	tb   testing.TB
	sc   Scenario
	srv  *httptest.Server
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	messages []Request
	others   []Request
	calls    []Call
	nTool    int
	nMsg     int
}

// Start serves sc on 127.0.0.1 until the test ends.
func Start(tb testing.TB, sc Scenario) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("fakemodel: listen on loopback: %v", err)
	}
	s := &Server{tb: tb, sc: sc, done: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server, releasing any delayed answers first. It is called
// when the test ends; calling it earlier is fine.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Requests returns every POST /v1/messages request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.messages...)
}

// OtherRequests returns every request that was not POST /v1/messages:
// probes, count_tokens, model listing and unknown paths.
func (s *Server) OtherRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.others...)
}

// Calls returns every tool_use block the server sent, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ToolResults returns the tool_result blocks clients sent back, one per
// tool_use_id in order of first appearance (a client re-sends the whole
// conversation with every request).
func (s *Server) ToolResults() []ToolResult {
	var out []ToolResult
	seen := map[string]bool{}
	for _, r := range s.Requests() {
		for _, tr := range toolResults(r.Body) {
			if !seen[tr.ToolUseID] {
				seen[tr.ToolUseID] = true
				out = append(out, tr)
			}
		}
	}
	return out
}

// ToolResult returns the result a client sent for the tool_use id.
func (s *Server) ToolResult(id string) (ToolResult, bool) {
	for _, tr := range s.ToolResults() {
		if tr.ToolUseID == id {
			return tr, true
		}
	}
	return ToolResult{}, false
}

func toolResults(body map[string]any) []ToolResult {
	var out []ToolResult
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		blocks, _ := mm["content"].([]any)
		for _, b := range blocks {
			bb, _ := b.(map[string]any)
			if bb["type"] != "tool_result" {
				continue
			}
			id, _ := bb["tool_use_id"].(string)
			isErr, _ := bb["is_error"].(bool)
			out = append(out, ToolResult{ToolUseID: id, IsError: isErr, Content: text(bb["content"])})
		}
	}
	return out
}

// text flattens a content value: a string, or blocks whose text is joined.
func text(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if bb, ok := b.(map[string]any); ok {
				if t, ok := bb["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r)
	req := Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Raw:    raw,
		Kind:   Other,
		Turn:   -1,
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		// A body that is not a JSON object leaves Body nil; the messages
		// handler rejects it below.
		_ = json.Unmarshal(raw, &req.Body)
	}
	if err != nil {
		s.record(req)
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: read body: " + err.Error()})
		return
	}

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messagesEndpoint(w, r, req)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": max(1, len(raw)/4)})
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/" || r.URL.Path == "/api/hello"):
		// Connection warm-up probe.
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{
			"data":     []any{modelInfo(DefaultModel)},
			"has_more": false, "first_id": DefaultModel, "last_id": DefaultModel,
		})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models/"):
		s.record(req)
		writeJSON(w, http.StatusOK, modelInfo(strings.TrimPrefix(r.URL.Path, "/v1/models/")))
	default:
		s.record(req)
		s.tb.Logf("fakemodel: no route for %s %s (404)", r.Method, r.URL.RequestURI())
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "fakemodel: no route for " + r.Method + " " + r.URL.Path})
	}
}

func modelInfo(id string) map[string]any {
	return map[string]any{"type": "model", "id": id, "display_name": "Fake model", "created_at": "2025-01-01T00:00:00Z"}
}

func readBody(r *http.Request) ([]byte, error) {
	var body io.Reader = r.Body
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		body = zr
	}
	return io.ReadAll(io.LimitReader(body, 64<<20))
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Kind == Other {
		s.others = append(s.others, req)
	} else {
		s.messages = append(s.messages, req)
	}
}

func (s *Server) messagesEndpoint(w http.ResponseWriter, r *http.Request, req Request) {
	if req.Body == nil {
		req.Kind = Main // recorded with the messages requests, for assertions
		s.record(req)
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: body is not a JSON object"})
		return
	}
	turn := s.choose(&req)
	s.record(req)
	if turn.Delay > 0 {
		t := time.NewTimer(turn.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	if turn.Error != nil {
		writeError(w, turn.Error)
		return
	}

	model, _ := req.Body["model"].(string)
	if model == "" {
		model = DefaultModel
	}
	stop := turn.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(turn.ToolUse) > 0 {
			stop = "tool_use"
		}
	}
	content, id, err := s.content(turn, req.Kind, req.Turn)
	if err != nil {
		writeError(w, &APIError{Status: http.StatusInternalServerError, Message: err.Error()})
		s.tb.Errorf("fakemodel: %v", err)
		return
	}
	if stream, _ := req.Body["stream"].(bool); stream {
		writeStream(w, id, model, content, stop)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": usage(InputTokens, OutputTokens),
	})
}

// choose classifies req and picks the turn that answers it.
func (s *Server) choose(req *Request) Turn {
	tools, _ := req.Body["tools"].([]any)
	fallback := Turn{Text: "done"}
	if s.sc.Fallback != nil {
		fallback = *s.sc.Fallback
	}
	var turns []Turn
	switch {
	case len(tools) == 0:
		req.Kind = Side
		if s.sc.Side != nil {
			return *s.sc.Side
		}
		return Turn{Text: "ok"}
	case req.Header.Get("X-Claude-Code-Agent-Id") != "":
		req.Kind = Subagent
		turns = s.sc.Subagent
	default:
		req.Kind = Main
		turns = s.sc.Turns
	}
	n := 0
	msgs, _ := req.Body["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "assistant" {
			n++
		}
	}
	if n < len(turns) {
		req.Turn = n
		return turns[n]
	}
	return fallback
}

// content builds the content blocks of turn, giving each tool_use a fresh
// id, and returns them with a fresh message id.
func (s *Server) content(turn Turn, kind Kind, idx int) ([]map[string]any, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nMsg++
	msgID := fmt.Sprintf("msg_fake_%04d", s.nMsg)
	var blocks []map[string]any
	if turn.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": turn.Text})
	}
	for _, tu := range turn.ToolUse {
		input := tu.Input
		if input == nil {
			input = map[string]any{}
		}
		// Round-trip so the block holds plain JSON values and a bad Input
		// fails here, not in the middle of a stream.
		b, err := json.Marshal(input)
		if err != nil {
			return nil, "", fmt.Errorf("tool %s: marshal input: %w", tu.Name, err)
		}
		var plain any
		if err := json.Unmarshal(b, &plain); err != nil {
			return nil, "", fmt.Errorf("tool %s: input: %w", tu.Name, err)
		}
		s.nTool++
		id := fmt.Sprintf("toolu_fake_%04d", s.nTool)
		s.calls = append(s.calls, Call{ID: id, Name: tu.Name, Input: plain, Kind: kind, Turn: idx})
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": tu.Name, "input": plain})
	}
	if blocks == nil {
		blocks = []map[string]any{}
	}
	return blocks, msgID, nil
}

func usage(in, out int) map[string]any {
	return map[string]any{
		"input_tokens": in, "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, e *APIError) {
	typ := e.Type
	if typ == "" {
		typ = "api_error"
	}
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": e.Message}})
}

// writeStream sends the message as server-sent events in the order the API
// documents. Text and tool input arrive in two deltas each so that clients
// must concatenate them.
func writeStream(w http.ResponseWriter, id, model string, content []map[string]any, stop string) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_fake")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data) // plain JSON values only
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": usage(InputTokens, 1),
	}})
	event("ping", map[string]any{})
	for i, b := range content {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range halves(b["text"].(string)) {
				event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{},
			}})
			in, _ := json.Marshal(b["input"])
			for _, part := range halves(string(in)) {
				event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": OutputTokens},
	})
	event("message_stop", map[string]any{})
}

// halves splits s in two at a rune boundary; a string shorter than two
// bytes stays whole.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}
