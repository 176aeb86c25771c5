package claudetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/runner/claudetest"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
)

// TestRealCLIAgainstFake drives the pinned claude CLI through one scripted
// Bash call with a PreToolUse hook registered for every tool, once with a
// hook that lets the call through and once with one that blocks it (exit 2).
func TestRealCLIAgainstFake(t *testing.T) {
	bin := claudetest.Binary(t)
	const reason = "fixrail-test: blocked by the hook"
	tests := []struct {
		name     string
		hookTail string // shell run after the hook has logged its stdin
		wantRan  bool
	}{
		{name: "hook allows", hookTail: "exit 0", wantRan: true},
		{name: "hook exit 2 blocks", hookTail: "echo '" + reason + "' >&2\nexit 2", wantRan: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t, fakemodel.Scenario{Turns: []fakemodel.Turn{
				{Text: "Writing the file.", ToolUse: []fakemodel.ToolUse{{
					Name:  "Bash",
					Input: map[string]any{"command": "echo hi > out.txt", "description": "Write a file"},
				}}},
				{Text: "All done."},
			}})
			hookDir, work := t.TempDir(), t.TempDir()
			hookLog := filepath.Join(hookDir, "hook.jsonl")
			hook := filepath.Join(hookDir, "hook.sh")
			script := "#!/bin/sh\ncat >> '" + hookLog + "'\necho >> '" + hookLog + "'\n" + tc.hookTail + "\n"
			if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			settings, err := json.Marshal(map[string]any{
				"disableAllHooks": false,
				"hooks": map[string]any{"PreToolUse": []any{map[string]any{
					"matcher": "*",
					"hooks":   []any{map[string]any{"type": "command", "command": hook, "timeout": 30}},
				}}},
			})
			if err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// dontAsk denies whatever no rule allows: the echo needs an allow
			// rule for the command and, for its redirection, one for writes
			// in the working directory.
			cmd := exec.CommandContext(ctx, bin, "-p",
				"--output-format", "stream-json", "--verbose",
				"--max-turns", "3",
				"--permission-mode", "dontAsk",
				"--tools", "Bash,Read",
				"--allowedTools", "Bash(echo *)", "Edit(./**)",
				"--setting-sources", "",
				"--strict-mcp-config",
				"--settings", string(settings))
			cmd.Dir = work
			cmd.Env = claudetest.Env(t, srv)
			cmd.Stdin = strings.NewReader("Write hi into out.txt.")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.WaitDelay = 5 * time.Second
			start := time.Now()
			err = cmd.Run()
			t.Logf("claude ran %v", time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("claude: %v (context: %v)\nstderr:\n%s\nstdout:\n%s", err, ctx.Err(), &stderr, &stdout)
			}
			// Two main-conversation requests, one per scripted turn, made
			// with the dummy key, and nothing else.
			var seen []string
			for _, r := range srv.Requests() {
				seen = append(seen, fmt.Sprintf("%s %s %s %d", r.Method, r.Path, r.Kind, r.Turn))
				if k := r.Header.Get("X-Api-Key"); k != claudetest.APIKey {
					t.Errorf("request %s carried x-api-key %q, want %q", r.Path, k, claudetest.APIKey)
				}
			}
			for _, r := range srv.OtherRequests() {
				seen = append(seen, fmt.Sprintf("%s %s %s", r.Method, r.Path, r.Kind))
			}
			wantSeen := []string{"POST /v1/messages main 0", "POST /v1/messages main 1"}
			if diff := cmp.Diff(wantSeen, seen); diff != "" {
				t.Errorf("requests to the fake (-want +got):\n%s", diff)
			}

			// The hook saw the call, with the fields the protocol documents.
			calls := srv.Calls()
			if len(calls) != 1 {
				t.Fatalf("fake issued %d tool calls, want 1: %+v", len(calls), calls)
			}
			id := calls[0].ID
			var bash map[string]any
			for _, in := range hookInputs(t, hookLog) {
				if in["tool_name"] == "Bash" {
					bash = in
				}
			}
			if bash == nil {
				t.Fatalf("the hook never saw the Bash call; hook log:\n%s", readFile(t, hookLog))
			}
			got := map[string]any{
				"hook_event_name": bash["hook_event_name"],
				"tool_name":       bash["tool_name"],
				"command":         field(bash, "tool_input", "command"),
				"tool_use_id":     bash["tool_use_id"],
				"cwd":             bash["cwd"],
				"has session_id":  bash["session_id"] != "" && bash["session_id"] != nil,
			}
			want := map[string]any{
				"hook_event_name": "PreToolUse",
				"tool_name":       "Bash",
				"command":         "echo hi > out.txt",
				"tool_use_id":     id,
				"cwd":             work,
				"has session_id":  true,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("hook input (-want +got):\n%s", diff)
			}

			// The command ran, or did not.
			out, err := os.ReadFile(filepath.Join(work, "out.txt"))
			switch {
			case tc.wantRan && err != nil:
				t.Errorf("out.txt: %v, want the command to have run", err)
			case tc.wantRan && string(out) != "hi\n":
				t.Errorf("out.txt = %q, want %q", out, "hi\n")
			case !tc.wantRan && !errors.Is(err, os.ErrNotExist):
				t.Errorf("out.txt exists (err %v), want the blocked command never to have run", err)
			}

			// The model got the result back, an error carrying the reason
			// when the hook blocked.
			tr, ok := srv.ToolResult(id)
			if !ok {
				t.Fatalf("no tool_result for %s among %+v", id, srv.ToolResults())
			}
			if tr.IsError == tc.wantRan {
				t.Errorf("tool_result is_error = %v, want %v (content %q)", tr.IsError, !tc.wantRan, tr.Content)
			}
			t.Logf("tool_result: is_error=%v content=%q", tr.IsError, tr.Content)
			if !tc.wantRan && !strings.Contains(tr.Content, reason) {
				t.Errorf("tool_result content = %q, want it to carry %q", tr.Content, reason)
			}

			events := claudetest.Events(t, stdout.Bytes())
			for _, ev := range events {
				// Env keeps the CLI's cross-session messaging socket out of
				// the shared /tmp/cc-socks-<uid>.
				if ev["type"] == "system" && ev["subtype"] == "init" {
					sock, _ := ev["messaging_socket_path"].(string)
					if run := lookup(cmd.Env, "XDG_RUNTIME_DIR"); !strings.HasPrefix(sock, run+"/") {
						t.Errorf("messaging socket %q, want it under XDG_RUNTIME_DIR %s", sock, run)
					}
				}
			}
			res := claudetest.Result(t, events)
			if res["is_error"] != false {
				t.Errorf("result event: is_error = %v, want false: %v", res["is_error"], res)
			}
			if res["result"] != "All done." {
				t.Errorf("result event: result = %q, want the final scripted text", res["result"])
			}
			t.Logf("result: subtype=%v terminal_reason=%v num_turns=%v duration_ms=%v permission_denials=%v",
				res["subtype"], res["terminal_reason"], res["num_turns"], res["duration_ms"], res["permission_denials"])
		})
	}
}

// hookInputs decodes the JSON objects the hook appended to its log.
func hookInputs(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ins []map[string]any
	dec := json.NewDecoder(f)
	for {
		var in map[string]any
		err := dec.Decode(&in)
		if err == io.EOF {
			return ins
		}
		if err != nil {
			t.Fatalf("hook log %s: %v", path, err)
		}
		ins = append(ins, in)
	}
}

func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func field(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
