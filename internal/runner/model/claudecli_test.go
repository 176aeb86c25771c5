package model_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/runner/claudetest"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
)

// cliLookup is the parent environment the backend may draw from: the fake's
// URL and key, PATH, and a variable that must not pass the allowlist.
func cliLookup(srv *fakemodel.Server) func(string) (string, bool) {
	env := map[string]string{
		"PATH":                    os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL":      srv.URL,
		"ANTHROPIC_API_KEY":       claudetest.APIKey,
		"GITHUB_TOKEN":            "ghp_must_not_reach_the_cli",
		"CLAUDE_CODE_USE_BEDROCK": "1",
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestClaudeCLISingleShot runs the pinned real CLI with --tools "" against
// the fake: one request, no tools in it, the prompt delivered from stdin
// and never visible in any process's argv.
func TestClaudeCLISingleShot(t *testing.T) {
	bin := claudetest.Binary(t)
	srv := fakemodel.Start(t, fakemodel.Reply(reply))
	c := model.NewClaudeCLI(bin, "")
	c.Lookup = cliLookup(srv)
	c.Timeout = 90 * time.Second

	canary := "fixrail-canary-" + strings.Repeat("q7", 12)
	prompt := "Judge this finding: " + canary + "\n\n" + model.NoToolsContract

	// Scan every process's argv for the canary while the CLI runs.
	var seen atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range paths {
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(canary)) {
					seen.Store(p)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	got, err := c.Complete(t.Context(), "You judge fixes. Reply with JSON only.", prompt, 256)
	close(stop)
	wg.Wait()
	t.Logf("claude ran %v", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if got != reply {
		t.Errorf("reply = %q, want %q", got, reply)
	}
	if p := seen.Load(); p != nil {
		t.Errorf("the prompt's canary appeared in %s", p)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d messages requests, want exactly 1 (one turn)", len(reqs))
	}
	r := reqs[0]
	if tools, ok := r.Body["tools"].([]any); ok && len(tools) > 0 {
		t.Errorf("request offers %d tools, want none", len(tools))
	}
	if r.Kind != fakemodel.Side {
		t.Errorf("fake classified the request as %s, want side (no tools)", r.Kind)
	}
	if !bytes.Contains(r.Raw, []byte(canary)) || !bytes.Contains(r.Raw, []byte(jsonEscape(model.NoToolsContract))) {
		t.Errorf("the prompt did not reach the model intact: %s", r.Raw)
	}
	if !bytes.Contains(r.Raw, []byte("You judge fixes.")) {
		t.Errorf("the system prompt did not reach the model")
	}
	if bytes.Contains(r.Raw, []byte("ghp_must_not_reach_the_cli")) {
		t.Errorf("a variable outside the allowlist reached the request")
	}
	if k := r.Header.Get("X-Api-Key") + r.Header.Get("Authorization"); !strings.Contains(k, claudetest.APIKey) {
		t.Errorf("the key from the environment allowlist was not used (headers %v)", r.Header)
	}
	for _, o := range srv.OtherRequests() {
		t.Logf("other request: %s %s", o.Method, o.Path)
	}
}

func jsonEscape(s string) string {
	// NoToolsContract has no characters JSON escapes; keep the check honest.
	if strings.ContainsAny(s, "\"\\<>&\n") {
		panic("escape " + s)
	}
	return s
}

// TestClaudeCLIErrors maps the CLI's error results: a 5xx is a
// TransportError, a refused request is not, and WithRetry acts on that.
func TestClaudeCLIErrors(t *testing.T) {
	bin := claudetest.Binary(t)
	tests := []struct {
		name      string
		turn      fakemodel.Turn
		transport bool
	}{
		{name: "500", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 500, Message: "boom"}}, transport: true},
		{name: "400", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 400, Type: "invalid_request_error", Message: "bad"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t, fakemodel.Always(tc.turn))
			c := model.NewClaudeCLI(bin, "")
			c.Lookup = cliLookup(srv)
			c.Timeout = 90 * time.Second
			_, err := model.WithRetry(c, 2, time.Millisecond).Complete(t.Context(), "", "p", 16)
			if err == nil || model.IsTransport(err) != tc.transport {
				t.Fatalf("err %v, want transport %v", err, tc.transport)
			}
			// One CLI run per call: WithRetry retried the 500 and not the
			// 400. (Within a run the CLI may re-send a refused request with
			// fewer beta headers; CLAUDE_CODE_MAX_RETRIES=0 stops the rest.)
			sessions := map[string]bool{}
			posts := len(srv.Requests())
			for _, r := range srv.Requests() {
				sessions[r.Header.Get("X-Claude-Code-Session-Id")] = true
			}
			calls := 1
			if tc.transport {
				calls = 2
			}
			if len(sessions) != calls {
				t.Errorf("%d CLI runs (%d requests), want %d", len(sessions), posts, calls)
			}
			t.Logf("err: %v (%d requests)", err, posts)
		})
	}
}

func TestClaudeCLITimeout(t *testing.T) {
	bin := claudetest.Binary(t)
	srv := fakemodel.Start(t, fakemodel.Always(fakemodel.Turn{Text: reply, Delay: time.Minute}))
	c := model.NewClaudeCLI(bin, "")
	c.Lookup = cliLookup(srv)
	c.Timeout = 3 * time.Second
	_, err := c.Complete(context.Background(), "", "p", 16)
	var te *model.TransportError
	if !errors.As(err, &te) || !te.Timeout {
		t.Fatalf("err %v, want a transport timeout", err)
	}
}

func TestClaudeCLIArgs(t *testing.T) {
	args := model.NewClaudeCLI("/bin/claude", "claude-x").Args("sys")
	// --tools must be followed by the empty string: the flag that removes
	// the definitions, not --allowedTools.
	i := slices.Index(args, "--tools")
	if i < 0 || i+1 >= len(args) || args[i+1] != "" {
		t.Errorf("args %q lack --tools \"\"", args)
	}
	for _, want := range []string{"-p", "--strict-mcp-config", "--max-turns"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if slices.Contains(args, "--allowedTools") || slices.Contains(args, "--bare") {
		t.Errorf("args %q", args)
	}
}
