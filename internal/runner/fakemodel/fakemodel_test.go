package fakemodel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/runner/fakemodel"
)

var bashTool = map[string]any{"name": "Bash", "description": "run a command", "input_schema": map[string]any{"type": "object"}}

// scripted is a two-turn agent: a text and a tool call, then a final text.
func scripted() fakemodel.Scenario {
	return fakemodel.Scenario{Turns: []fakemodel.Turn{
		{Text: "Running it.", ToolUse: []fakemodel.ToolUse{{Name: "Bash", Input: map[string]any{"command": "echo hi > out.txt"}}}},
		{Text: "All done."},
	}}
}

// request is a Messages API body: the conversation so far, with tools.
func request(stream bool, msgs ...any) map[string]any {
	if len(msgs) == 0 {
		msgs = []any{user("hello")}
	}
	return map[string]any{
		"model": "claude-test", "max_tokens": 1024, "stream": stream,
		"system":   []any{map[string]any{"type": "text", "text": "You are a test."}},
		"tools":    []any{bashTool},
		"messages": msgs,
	}
}

func user(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

func assistant(blocks ...any) map[string]any {
	return map[string]any{"role": "assistant", "content": blocks}
}

func post(t *testing.T, url string, body any, header ...string) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "fake-key")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// message posts body and returns the decoded reply, read as a stream when
// body asks for one.
func message(t *testing.T, srv *fakemodel.Server, body map[string]any, header ...string) map[string]any {
	t.Helper()
	resp := post(t, srv.URL+"/v1/messages?beta=true", body, header...)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if body["stream"] == true {
		msg, _ := readStream(t, resp)
		return msg
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var msg map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	return msg
}

// readStream parses server-sent events the way an SDK does and assembles the
// message they describe. It also returns the event names in order.
func readStream(t *testing.T, resp *http.Response) (map[string]any, []string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	var (
		names   []string
		msg     map[string]any
		blocks  []map[string]any
		partial = map[int]string{}
		event   string
	)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
			if d["type"] != event {
				t.Errorf("event %q carries data of type %v", event, d["type"])
			}
			names = append(names, event)
			idx, _ := d["index"].(float64)
			i := int(idx)
			switch event {
			case "message_start":
				msg = d["message"].(map[string]any)
			case "content_block_start":
				if i != len(blocks) {
					t.Errorf("content_block_start index %d, want %d", i, len(blocks))
				}
				blocks = append(blocks, d["content_block"].(map[string]any))
			case "content_block_delta":
				delta := d["delta"].(map[string]any)
				switch delta["type"] {
				case "text_delta":
					blocks[i]["text"] = blocks[i]["text"].(string) + delta["text"].(string)
				case "input_json_delta":
					partial[i] += delta["partial_json"].(string)
				default:
					t.Errorf("unknown delta %v", delta)
				}
			case "content_block_stop":
				if s, ok := partial[i]; ok {
					var in any
					if err := json.Unmarshal([]byte(s), &in); err != nil {
						t.Fatalf("tool input %q: %v", s, err)
					}
					blocks[i]["input"] = in
				}
			case "message_delta":
				delta := d["delta"].(map[string]any)
				msg["stop_reason"] = delta["stop_reason"]
				msg["stop_sequence"] = delta["stop_sequence"]
				u := msg["usage"].(map[string]any)
				u["output_tokens"] = d["usage"].(map[string]any)["output_tokens"]
			}
		case line == "":
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if msg == nil {
		t.Fatal("no message_start")
	}
	content := make([]any, len(blocks))
	for i, b := range blocks {
		content[i] = b
	}
	msg["content"] = content
	return msg, names
}

func wantMessage(id, model, stop string, content ...any) map[string]any {
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": float64(fakemodel.InputTokens), "output_tokens": float64(fakemodel.OutputTokens),
			"cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 0.0,
		},
	}
}

func TestMessages(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := fakemodel.Start(t, scripted())
			if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
				t.Errorf("URL = %s, want loopback", srv.URL)
			}
			got := message(t, srv, request(stream))
			want := wantMessage("msg_fake_0001", "claude-test", "tool_use",
				map[string]any{"type": "text", "text": "Running it."},
				map[string]any{"type": "tool_use", "id": "toolu_fake_0001", "name": "Bash",
					"input": map[string]any{"command": "echo hi > out.txt"}})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("turn 0 (-want +got):\n%s", diff)
			}

			got = message(t, srv, request(stream, user("hello"), assistant(got["content"].([]any)...),
				map[string]any{"role": "user", "content": []any{map[string]any{
					"type": "tool_result", "tool_use_id": "toolu_fake_0001", "content": "",
				}}}))
			want = wantMessage("msg_fake_0002", "claude-test", "end_turn", map[string]any{"type": "text", "text": "All done."})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("turn 1 (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamEventOrder(t *testing.T) {
	srv := fakemodel.Start(t, scripted())
	_, names := readStream(t, post(t, srv.URL+"/v1/messages", request(true)))
	want := []string{
		"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// texts returns the text blocks of a reply, joined.
func texts(msg map[string]any) string {
	var s []string
	for _, b := range msg["content"].([]any) {
		if bb := b.(map[string]any); bb["type"] == "text" {
			s = append(s, bb["text"].(string))
		}
	}
	return strings.Join(s, "|")
}

func TestTurnSelection(t *testing.T) {
	sc := scripted()
	sc.Subagent = []fakemodel.Turn{{Text: "sub 0"}}
	srv := fakemodel.Start(t, sc)
	sys := map[string]any{"role": "system", "content": "The user hasn't heard from you in a while."}
	a := assistant(map[string]any{"type": "text", "text": "x"})
	side := request(false)
	delete(side, "tools")
	emptyTools := request(true)
	emptyTools["tools"] = []any{}

	steps := []struct {
		name   string
		body   map[string]any
		header []string
		want   string
	}{
		{"side request first", side, nil, "ok"},
		{"main turn 0", request(false), nil, "Running it."},
		{"retry of turn 0 gets turn 0", request(true), nil, "Running it."},
		{"role system entries are not turns", request(false, user("hi"), sys, a, sys, user("go on")), nil, "All done."},
		{"side request with empty tools", emptyTools, nil, "ok"},
		{"subagent turn 0", request(false), []string{"X-Claude-Code-Agent-Id", "a1"}, "sub 0"},
		{"subagent past its turns", request(false, user("q"), a, user("r")), []string{"X-Claude-Code-Agent-Id", "a1"}, "done"},
		{"main past the turns gets the fallback", request(true, user("a"), a, user("b"), a, user("c")), nil, "done"},
	}
	for _, st := range steps {
		if got := texts(message(t, srv, st.body, st.header...)); got != st.want {
			t.Errorf("%s: reply %q, want %q", st.name, got, st.want)
		}
	}

	type rec struct {
		Kind fakemodel.Kind
		Turn int
	}
	var got []rec
	for _, r := range srv.Requests() {
		got = append(got, rec{r.Kind, r.Turn})
	}
	want := []rec{
		{fakemodel.Side, -1}, {fakemodel.Main, 0}, {fakemodel.Main, 0}, {fakemodel.Main, 1},
		{fakemodel.Side, -1}, {fakemodel.Subagent, 0}, {fakemodel.Subagent, -1}, {fakemodel.Main, -1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded kinds and turns (-want +got):\n%s", diff)
	}
}

func TestToolIDsAreUnique(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Scenario{Turns: []fakemodel.Turn{{ToolUse: []fakemodel.ToolUse{
		{Name: "Read", Input: map[string]any{"file_path": "/a"}},
		{Name: "Read", Input: map[string]any{"file_path": "/b"}},
	}}}})
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		ids = map[string]int{}
	)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// t.Fatal must not run off the test goroutine: do the request by
			// hand and report with t.Error.
			b, _ := json.Marshal(request(i%2 == 0))
			resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			mu.Lock()
			defer mu.Unlock()
			for _, m := range strings.Split(string(raw), "toolu_fake_")[1:] {
				ids["toolu_fake_"+m[:4]]++
			}
		}()
	}
	wg.Wait()
	calls := srv.Calls()
	if len(calls) != 16 {
		t.Fatalf("%d calls issued, want 16", len(calls))
	}
	for _, c := range calls {
		if ids[c.ID] != 1 {
			t.Errorf("id %s seen %d times in the replies, want once", c.ID, ids[c.ID])
		}
		if c.Name != "Read" || c.Kind != fakemodel.Main || c.Turn != 0 {
			t.Errorf("call %+v", c)
		}
	}
	if len(ids) != 16 {
		t.Errorf("%d distinct ids in the replies, want 16", len(ids))
	}
}

func TestToolResults(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Scenario{})
	results := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_a", "content": "plain"},
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": []any{
			map[string]any{"type": "text", "text": "PreToolUse:Bash hook error: no"},
			map[string]any{"type": "text", "text": "second line"},
		}},
	}}
	later := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_c", "content": ""},
	}}
	a := assistant(map[string]any{"type": "text", "text": "x"})
	message(t, srv, request(false, user("go"), a, results))
	message(t, srv, request(true, user("go"), a, results, a, later)) // re-sends the first two

	want := []fakemodel.ToolResult{
		{ToolUseID: "toolu_a", Content: "plain"},
		{ToolUseID: "toolu_b", IsError: true, Content: "PreToolUse:Bash hook error: no\nsecond line"},
		{ToolUseID: "toolu_c"},
	}
	if diff := cmp.Diff(want, srv.ToolResults()); diff != "" {
		t.Errorf("ToolResults (-want +got):\n%s", diff)
	}
	if tr, ok := srv.ToolResult("toolu_b"); !ok || !tr.IsError {
		t.Errorf("ToolResult(toolu_b) = %+v, %v", tr, ok)
	}
	if _, ok := srv.ToolResult("toolu_nope"); ok {
		t.Error("ToolResult(toolu_nope) found")
	}
}

func TestRecording(t *testing.T) {
	srv := fakemodel.Start(t, scripted())
	body := request(true)
	message(t, srv, body, "Anthropic-Version", "2023-06-01")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded, want 1", len(reqs))
	}
	r := reqs[0]
	raw, _ := json.Marshal(body)
	if !bytes.Equal(r.Raw, raw) {
		t.Errorf("Raw = %s, want %s", r.Raw, raw)
	}
	var decoded map[string]any
	_ = json.Unmarshal(raw, &decoded)
	if diff := cmp.Diff(decoded, r.Body); diff != "" {
		t.Errorf("Body (-want +got):\n%s", diff)
	}
	got := []string{r.Method, r.Path, r.Query, r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Version")}
	want := []string{"POST", "/v1/messages", "beta=true", "fake-key", "2023-06-01"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("method, path, query, headers (-want +got):\n%s", diff)
	}
	if len(srv.OtherRequests()) != 0 {
		t.Errorf("other requests: %+v", srv.OtherRequests())
	}
}

func TestReply(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Reply(`{"verdict":"pass"}`))
	side := request(false)
	delete(side, "tools")
	for i, body := range []map[string]any{side, request(true), request(false, user("a"), assistant(), user("b"))} {
		got := message(t, srv, body)
		if texts(got) != `{"verdict":"pass"}` || got["stop_reason"] != "end_turn" {
			t.Errorf("request %d: %v", i, got)
		}
	}
}

func TestStopReason(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Always(fakemodel.Turn{Text: "cut", StopReason: "max_tokens"}))
	if got := message(t, srv, request(true)); got["stop_reason"] != "max_tokens" {
		t.Errorf("stop_reason = %v", got["stop_reason"])
	}
}

func TestError(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Always(fakemodel.Turn{Error: &fakemodel.APIError{
		Status: 529, Type: "overloaded_error", Message: "busy"}}))
	for _, stream := range []bool{false, true} {
		resp := post(t, srv.URL+"/v1/messages", request(stream))
		var got map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&got)
		want := map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "busy"}}
		if resp.StatusCode != 529 || !cmp.Equal(want, got) {
			t.Errorf("stream=%v: %d %v", stream, resp.StatusCode, got)
		}
	}
}

func TestDelayEndsWithTheClient(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Always(fakemodel.Turn{Text: "late", Delay: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	b, _ := json.Marshal(request(false))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(b))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got status %d, want the client's deadline", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
	// Close must not wait out the hour.
	srv.Close()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests recorded, want the delayed one", n)
	}
}

func TestOtherEndpoints(t *testing.T) {
	srv := fakemodel.Start(t, scripted())
	do := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&got)
		return resp.StatusCode, got
	}
	if code, _ := do(http.MethodHead, "/api/hello", nil); code != 200 {
		t.Errorf("HEAD /api/hello: %d", code)
	}
	if code, got := do(http.MethodGet, "/v1/models", nil); code != 200 || got["data"].([]any)[0].(map[string]any)["id"] != fakemodel.DefaultModel {
		t.Errorf("GET /v1/models: %d %v", code, got)
	}
	if code, got := do(http.MethodGet, "/v1/models/claude-x", nil); code != 200 || got["id"] != "claude-x" {
		t.Errorf("GET /v1/models/claude-x: %d %v", code, got)
	}
	if code, got := do(http.MethodPost, "/v1/messages/count_tokens", request(false)); code != 200 || got["input_tokens"].(float64) < 1 {
		t.Errorf("count_tokens: %d %v", code, got)
	}
	if code, got := do(http.MethodPost, "/v1/complete", map[string]any{}); code != 404 || got["type"] != "error" {
		t.Errorf("unknown path: %d %v", code, got)
	}
	if code, _ := do(http.MethodGet, "/v1/messages", nil); code != 404 {
		t.Errorf("GET /v1/messages: %d, want 404", code)
	}
	if code, _ := do(http.MethodPost, "/v1/messages", "not an object"); code != 400 {
		t.Errorf("string body: %d, want 400", code)
	}

	var got []string
	for _, r := range srv.OtherRequests() {
		got = append(got, r.Method+" "+r.Path)
	}
	want := []string{"HEAD /api/hello", "GET /v1/models", "GET /v1/models/claude-x",
		"POST /v1/messages/count_tokens", "POST /v1/complete", "GET /v1/messages"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OtherRequests (-want +got):\n%s", diff)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d messages requests recorded, want the rejected one", n)
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("calls issued: %v", srv.Calls())
	}
}

func TestBadToolInputFailsTheTest(t *testing.T) {
	ft := &fakeT{TB: t}
	srv := fakemodel.Start(ft, fakemodel.Scenario{Turns: []fakemodel.Turn{{ToolUse: []fakemodel.ToolUse{
		{Name: "Bash", Input: func() {}},
	}}}})
	resp := post(t, srv.URL+"/v1/messages", request(false))
	if resp.StatusCode != 500 {
		t.Errorf("status %d, want 500", resp.StatusCode)
	}
	if !ft.failed() {
		t.Error("an unmarshalable Input did not fail the test")
	}
}

// fakeT records Errorf instead of failing the real test.
type fakeT struct {
	testing.TB
	mu  sync.Mutex
	err []string
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = append(f.err, fmt.Sprintf(format, args...))
}

func (f *fakeT) failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.err) > 0
}
