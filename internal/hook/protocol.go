package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format names the hook protocol of one agent CLI.
type Format string

// The protocols fixrail speaks. They share the shape of the input (one JSON
// object on stdin) and the blocking signal (exit 2, stderr is the reason);
// they differ in event names and in what may be printed on stdout.
const (
	Claude Format = "claude" // Claude Code: PreToolUse / PostToolUse
	Codex  Format = "codex"  // OpenAI Codex CLI: PreToolUse / PostToolUse
	Gemini Format = "gemini" // Gemini CLI: BeforeTool / AfterTool
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Claude, Codex, Gemini:
		return f, nil
	}
	return "", fmt.Errorf("unknown hook format %q (want claude, codex or gemini)", s)
}

// Event says which side of a tool call a hook runs on.
type Event string

// The events the hook handles: the tool events, and the session's start
// and end (session snapshots). Other events (Stop, UserPromptSubmit, ...)
// are answered with an empty success.
const (
	Pre          Event = "pre"           // before the call: the hook decides
	Post         Event = "post"          // after the call: the hook records the outcome
	SessionStart Event = "session-start" // the session's snapshot of the hook registration
	SessionEnd   Event = "session-end"   // the session's closing receipt
)

// ParseEvent checks an --event value.
func ParseEvent(s string) (Event, error) {
	switch e := Event(s); e {
	case Pre, Post, SessionStart, SessionEnd:
		return e, nil
	}
	return "", fmt.Errorf("unknown hook event %q (want pre, post, session-start or session-end)", s)
}

// toolEvent reports whether e is about one tool call.
func toolEvent(e Event) bool { return e == Pre || e == Post }

// eventNames maps each harness's event names to ours. Names are accepted
// from any format: a Codex hook reports PreToolUse like Claude Code does.
var eventNames = map[string]Event{
	"PreToolUse":         Pre,
	"BeforeTool":         Pre,
	"PostToolUse":        Post,
	"PostToolUseFailure": Post,
	"AfterTool":          Post,
	"SessionStart":       SessionStart,
	"SessionEnd":         SessionEnd,
}

// Call is one hook invocation, decoded from any of the formats.
type Call struct {
	// Event is Pre or Post; "" for an event that is not a tool event (the
	// hook then answers with an empty success).
	Event Event
	// EventName is the event as the harness named it (PreToolUse,
	// BeforeTool, ...); "" when the input did not name one.
	EventName      string
	SessionID      string
	TranscriptPath string
	Cwd            string
	PermissionMode string
	Tool           string
	// Input is the tool's input object exactly as the harness sent it; an
	// absent or null input is {}.
	Input json.RawMessage
	// ToolUseID joins a call's decision to its outcome. Gemini CLI sends
	// none.
	ToolUseID string
	// Response is the tool's result (Post only); nil if absent.
	Response json.RawMessage
	// Source is why a session started (startup, resume, clear, compact);
	// Reason why it ended (SessionEnd).
	Source, Reason string
}

// MaxInput bounds the hook JSON read from stdin. A Write of a large file
// carries its content, so the bound is generous; past it the call is an
// engine error, not a silent truncation.
const MaxInput = 16 << 20

// Decode reads one hook input from r. def is the event assumed when the
// input does not name one (the --event flag). A tool event without a tool
// name, input that is not one JSON object, and input over MaxInput are
// errors.
//
// The object is decoded as a map of raw values, the type the policy decodes
// tool inputs into, and not into a struct: reflecting on a struct type the
// first time it is decoded was a tenth of a hook call's own cost.
func Decode(r io.Reader, def Event) (*Call, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > MaxInput {
		return nil, fmt.Errorf("hook input exceeds %d bytes", MaxInput)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode hook input: %w", err)
	}
	// The union of the three formats' input fields: strings or null
	// (transcript_path is null in Codex), and tool_input and tool_response
	// kept as sent. Unknown fields are ignored: the harnesses add new ones
	// regularly. Keys match exactly, as the harnesses write them.
	c := &Call{Event: def, Input: m["tool_input"], Response: m["tool_response"]}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"session_id", &c.SessionID}, {"transcript_path", &c.TranscriptPath}, {"cwd", &c.Cwd},
		{"permission_mode", &c.PermissionMode}, {"hook_event_name", &c.EventName}, {"tool_name", &c.Tool},
		{"tool_use_id", &c.ToolUseID}, {"source", &c.Source}, {"reason", &c.Reason},
	} {
		if raw, ok := m[f.key]; ok {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return nil, fmt.Errorf("decode hook input: %s: %w", f.key, err)
			}
		}
	}
	if c.EventName != "" {
		c.Event = eventNames[c.EventName] // "" for a non-tool event
	}
	if !toolEvent(c.Event) {
		return c, nil
	}
	if c.Tool == "" {
		return nil, fmt.Errorf("decode hook input: %s event without tool_name", orDefault(c.EventName, string(c.Event)))
	}
	if t := bytes.TrimSpace(c.Input); len(t) == 0 || string(t) == "null" {
		c.Input = json.RawMessage(`{}`)
	}
	if len(bytes.TrimSpace(c.Response)) == 0 || string(bytes.TrimSpace(c.Response)) == "null" {
		c.Response = nil
	}
	return c, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Answer is the hook's reply to one call, independent of the format.
type Answer struct {
	// Block is true when the call must not run (exit 2).
	Block bool
	// Message is shown to the model when the call is blocked, and to the
	// user otherwise (a warning or an engine-error notice). Empty means
	// nothing to say.
	Message string
	// Context is added to the model's context at SessionStart (Claude
	// Code's additionalContext): what changed in the hook registration.
	Context string
}

// Exit codes of a hook process. Only 2 blocks in every supported CLI; any
// other non-zero code is a non-blocking error (the call runs), so fixrail
// never exits with one.
const (
	ExitAllow = 0
	ExitBlock = 2
)

// Encode writes a for format f and returns the process exit code.
//
//   - Block on a Pre event: the message on stderr, exit 2. Claude Code
//     and Gemini CLI also get the JSON form of the denial on stdout (Claude
//     Code ignores it at exit 2, Gemini CLI reads only stdout JSON on exit 0,
//     so either way stderr is the reason the model sees). Codex gets nothing
//     on stdout: its parser reports unexpected output as a hook error.
//   - No block: exit 0. A message goes to stderr and, for Claude Code and
//     Gemini CLI, into a JSON systemMessage (shown to the user). The JSON
//     never carries an "allow" decision: that would skip the harness's own
//     permission checks, and a warning must not widen them.
//   - Post events never block: the call already ran, and exit 2 after the
//     call makes Gemini CLI hide the tool's output from the model.
func Encode(stdout, stderr io.Writer, f Format, ev Event, a Answer) int {
	msg := strings.TrimRight(a.Message, "\n")
	if a.Block && ev == Pre {
		if msg == "" {
			msg = "fixrail: blocked"
		}
		fmt.Fprintln(stderr, msg)
		switch f {
		case Claude:
			writeLine(stdout, `{"hookSpecificOutput":`+stringObject("hookEventName", "PreToolUse",
				"permissionDecision", "deny", "permissionDecisionReason", msg)+`}`)
		case Gemini:
			writeLine(stdout, stringObject("decision", "deny", "reason", msg))
		}
		return ExitBlock
	}
	if msg != "" {
		fmt.Fprintln(stderr, msg)
	}
	switch f {
	case Claude:
		out := map[string]any{}
		if msg != "" {
			out["systemMessage"] = msg
		}
		if a.Context != "" && ev == SessionStart {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": "SessionStart", "additionalContext": a.Context}
		}
		if len(out) > 0 {
			writeJSON(stdout, out)
		}
	case Gemini:
		// Gemini CLI parses stdout as JSON on exit 0; an empty object is
		// "no opinion".
		out := map[string]any{}
		if msg != "" {
			out["systemMessage"] = msg
		}
		writeJSON(stdout, out)
	}
	return ExitAllow
}

// stringObject is the JSON object of string pairs kv (key, value, ...) in
// that order, written as jsonMarshal writes a map (keys sorted, so kv is
// given sorted), without the reflection a map needs the first time: a
// denial is written by every denied call.
func stringObject(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := jsonMarshal(kv[i])
		v, _ := jsonMarshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func writeLine(w io.Writer, s string) {
	io.WriteString(w, s+"\n") // a failed write to the harness has no one to report to
}

func writeJSON(w io.Writer, v any) {
	b, err := jsonMarshal(v)
	if err != nil {
		return // maps of strings always marshal
	}
	w.Write(append(b, '\n')) // a failed write to the harness has no one to report to
}
