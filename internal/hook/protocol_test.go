package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		def  Event
		want *Call
	}{
		{
			name: "claude pre",
			in: `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"dontAsk",
				"effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash",
				"tool_input":{"command":"ls","description":"list"},"tool_use_id":"toolu_1"}`,
			def: Pre,
			want: &Call{Event: Pre, EventName: "PreToolUse", SessionID: "s1", TranscriptPath: "/t.jsonl", Cwd: "/w",
				PermissionMode: "dontAsk", Tool: "Bash", Input: json.RawMessage(`{"command":"ls","description":"list"}`), ToolUseID: "toolu_1"},
		},
		{
			name: "claude post overrides the flag",
			in:   `{"session_id":"s1","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1","tool_response":{"stdout":"a\n","stderr":"","interrupted":false}}`,
			def:  Pre,
			want: &Call{Event: Post, EventName: "PostToolUse", SessionID: "s1", Cwd: "/w", Tool: "Bash",
				Input: json.RawMessage(`{"command":"ls"}`), ToolUseID: "toolu_1", Response: json.RawMessage(`{"stdout":"a\n","stderr":"","interrupted":false}`)},
		},
		{
			name: "codex pre with null transcript",
			in:   `{"session_id":"s2","turn_id":"t1","transcript_path":null,"cwd":"/w","hook_event_name":"PreToolUse","model":"gpt","permission_mode":"default","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"},"tool_use_id":"call_9"}`,
			def:  Pre,
			want: &Call{Event: Pre, EventName: "PreToolUse", SessionID: "s2", Cwd: "/w", PermissionMode: "default",
				Tool: "apply_patch", Input: json.RawMessage(`{"command":"*** Begin Patch"}`), ToolUseID: "call_9"},
		},
		{
			name: "gemini before tool",
			in:   `{"session_id":"s3","transcript_path":"/t","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"ls"},"mcp_context":{}}`,
			def:  Pre,
			want: &Call{Event: Pre, EventName: "BeforeTool", SessionID: "s3", TranscriptPath: "/t", Cwd: "/w",
				Tool: "run_shell_command", Input: json.RawMessage(`{"command":"ls"}`)},
		},
		{
			name: "gemini after tool",
			in:   `{"session_id":"s3","cwd":"/w","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"absolute_path":"/w/a"},"tool_response":{"llmContent":"x","returnDisplay":"x"}}`,
			def:  Pre,
			want: &Call{Event: Post, EventName: "AfterTool", SessionID: "s3", Cwd: "/w", Tool: "read_file",
				Input: json.RawMessage(`{"absolute_path":"/w/a"}`), Response: json.RawMessage(`{"llmContent":"x","returnDisplay":"x"}`)},
		},
		{
			name: "no event name takes the flag; absent input is {}",
			in:   `{"cwd":"/w","tool_name":"mcp__x__y"}`,
			def:  Post,
			want: &Call{Event: Post, Cwd: "/w", Tool: "mcp__x__y", Input: json.RawMessage(`{}`)},
		},
		{
			name: "non-tool event is ignored",
			in:   `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}`,
			def:  Pre,
			want: &Call{EventName: "Stop", SessionID: "s"},
		},
		{
			name: "session start needs no tool",
			in:   `{"session_id":"s","cwd":"/w","hook_event_name":"SessionStart","source":"startup"}`,
			def:  Pre,
			want: &Call{Event: SessionStart, EventName: "SessionStart", SessionID: "s", Cwd: "/w", Source: "startup"},
		},
		{
			name: "session end carries its reason",
			in:   `{"session_id":"s","hook_event_name":"SessionEnd","reason":"clear"}`,
			def:  Pre,
			want: &Call{Event: SessionEnd, EventName: "SessionEnd", SessionID: "s", Reason: "clear"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(strings.NewReader(tc.in), tc.def)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":          ``,
		"not json":       `hello`,
		"array":          `[1]`,
		"trailing":       `{"tool_name":"Bash"} {}`,
		"no tool name":   `{"hook_event_name":"PreToolUse","tool_input":{}}`,
		"tool not str":   `{"hook_event_name":"PreToolUse","tool_name":5}`,
		"cwd not str":    `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":["/"]}`,
		"event not str":  `{"hook_event_name":{},"tool_name":"Bash"}`,
		"oversize input": `{"tool_name":"Write","tool_input":{"content":"` + strings.Repeat("a", MaxInput) + `"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if c, err := Decode(strings.NewReader(in), Pre); err == nil {
				t.Errorf("Decode = %+v, want an error", c)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	const reason = "fixrail: blocked Bash (push-force, mode gate): git push --force"
	tests := []struct {
		name       string
		format     Format
		ev         Event
		a          Answer
		wantCode   int
		wantStdout any // decoded JSON, or nil for no output
		wantStderr string
	}{
		{"claude deny", Claude, Pre, Answer{Block: true, Message: reason}, 2,
			map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}}, reason + "\n"},
		{"claude allow", Claude, Pre, Answer{}, 0, nil, ""},
		{"claude warn", Claude, Pre, Answer{Message: "fixrail: warning"}, 0, map[string]any{"systemMessage": "fixrail: warning"}, "fixrail: warning\n"},
		{"claude post never blocks", Claude, Post, Answer{Block: true, Message: "x"}, 0, map[string]any{"systemMessage": "x"}, "x\n"},
		{"codex deny has no stdout", Codex, Pre, Answer{Block: true, Message: reason}, 2, nil, reason + "\n"},
		{"codex warn has no stdout", Codex, Pre, Answer{Message: "w"}, 0, nil, "w\n"},
		{"gemini deny", Gemini, Pre, Answer{Block: true, Message: reason}, 2, map[string]any{"decision": "deny", "reason": reason}, reason + "\n"},
		{"gemini allow prints {}", Gemini, Pre, Answer{}, 0, map[string]any{}, ""},
		{"gemini warn", Gemini, Pre, Answer{Message: "w"}, 0, map[string]any{"systemMessage": "w"}, "w\n"},
		{"gemini after-tool never exits 2", Gemini, Post, Answer{Block: true}, 0, map[string]any{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Encode(&out, &errb, tc.format, tc.ev, tc.a)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			var got any
			if out.Len() > 0 {
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("stdout %q is not JSON: %v", out.String(), err)
				}
			}
			if diff := cmp.Diff(tc.wantStdout, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errb.String() != tc.wantStderr {
				t.Errorf("stderr %q, want %q", errb.String(), tc.wantStderr)
			}
		})
	}
}

// TestRoundTrip runs each format's own input through Run and checks the
// answer's shape: a gated call blocks with exit 2 in every format, a benign
// one passes with exit 0, and stdout is what the format accepts.
func TestRoundTrip(t *testing.T) {
	inputs := map[Format]struct{ gated, benign string }{
		Claude: {
			`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"t1"}`,
			`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"t2"}`,
		},
		Codex: {
			`{"session_id":"s","turn_id":"x","transcript_path":null,"cwd":"/w","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"c1"}`,
			`{"session_id":"s","turn_id":"x","transcript_path":null,"cwd":"/w","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"c2"}`,
		},
		Gemini: {
			`{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"git push --force origin main"}}`,
			`{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"read_file","tool_input":{"absolute_path":"/w/README"}}`,
		},
	}
	for f, in := range inputs {
		t.Run(string(f), func(t *testing.T) {
			e := newEnv(t)
			e.setPolicy(map[string]string{"push-force": "gate", "push-protected": "off"})
			h := e.hook()
			h.Format = f
			r := run(h, in.gated)
			if r.code != ExitBlock || !strings.Contains(r.stderr, "push-force") || !strings.Contains(r.stderr, "fixrail approve ") {
				t.Errorf("gated: exit %d stderr %q", r.code, r.stderr)
			}
			switch f {
			case Codex:
				if r.stdout != "" {
					t.Errorf("codex stdout %q, want none", r.stdout)
				}
			default:
				if !json.Valid([]byte(r.stdout)) {
					t.Errorf("%s stdout %q is not JSON", f, r.stdout)
				}
			}
			r = run(h, in.benign)
			if r.code != ExitAllow || r.stderr != "" {
				t.Errorf("benign: exit %d stderr %q", r.code, r.stderr)
			}
			if f == Gemini && strings.TrimSpace(r.stdout) != "{}" {
				t.Errorf("gemini benign stdout %q, want {}", r.stdout)
			}
			if f != Gemini && r.stdout != "" {
				t.Errorf("%s benign stdout %q, want none", f, r.stdout)
			}
			if n := len(e.receipts()); n != 2 {
				t.Errorf("%d receipts, want 2", n)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	for _, s := range []string{"claude", "codex", "gemini"} {
		if _, err := ParseFormat(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFormat("cursor"); err == nil {
		t.Error("ParseFormat(cursor) succeeded")
	}
	if _, err := ParseEvent("pre"); err != nil {
		t.Error(err)
	}
	if _, err := ParseEvent("PreToolUse"); err == nil {
		t.Error("ParseEvent(PreToolUse) succeeded")
	}
}

func TestSettings(t *testing.T) {
	for _, f := range []Format{Claude, Codex, Gemini} {
		for _, managed := range []bool{false, true} {
			r, err := Settings(f, "/usr/local/bin/fixrail", "", managed)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(r.JSON, &v); err != nil {
				t.Fatalf("%s managed=%v: %v\n%s", f, managed, err, r.JSON)
			}
			if !strings.Contains(string(r.JSON), "/usr/local/bin/fixrail hook --event pre") {
				t.Errorf("%s: no pre command in %s", f, r.JSON)
			}
			if f == Claude && managed && v["allowManagedHooksOnly"] != true {
				t.Errorf("claude managed form lacks allowManagedHooksOnly: %s", r.JSON)
			}
			if f == Claude && !managed && v["allowManagedHooksOnly"] != nil {
				t.Errorf("claude user form has allowManagedHooksOnly: %s", r.JSON)
			}
		}
	}
	if got := ShellQuote("/opt/my tools/fixrail"); got != `'/opt/my tools/fixrail'` {
		t.Errorf("ShellQuote = %s", got)
	}
	if got := ShellQuote("/usr/bin/fixrail"); got != "/usr/bin/fixrail" {
		t.Errorf("ShellQuote = %s", got)
	}
}

// The denial is written without a map; it must be the bytes the map gave.
func TestStringObjectIsMapJSON(t *testing.T) {
	for _, msg := range []string{"", "plain", `q"uote\back`, "a && b <c> 'd'", "nl\nand\ttab\x01", "bad utf8 \xff\xfe", "sep \u2028 \u2029", "ünïcødé ✓"} {
		got := stringObject("hookEventName", "PreToolUse", "permissionDecision", "deny", "permissionDecisionReason", msg)
		want, err := jsonMarshal(map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": msg})
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("stringObject(%q) =\n%s\nwant\n%s", msg, got, want)
		}
	}
}
