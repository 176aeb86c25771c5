package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/cli/hookcmd"
	"github.com/fixrail/fixrail/internal/hook"
)

var cmdMCP = &command{
	Name:  "mcp",
	Usage: "[--protect-binary PATH]...",
	Short: "serve the approval request path to an agent session (a stdio MCP server)",
	Long: `
Mcp is a Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one
message a line) that an agent session registers beside the hook
(fixrail hook install --print shows the block). Its two tools let the agent
ask before it acts instead of learning from a denial:

  request_approval  {tool, tool_input[, cwd]}: if the policy gates this exact
                    call, writes the pending request (or reuses the one a
                    denial wrote) and returns the canonical request and the
                    commands the owner signs it with; if not, says no
                    approval is needed.
  approval_status   {tool, tool_input[, cwd]}: whether an approval the hook
                    would accept exists now (checked, not spent).

tool_input must be exactly the input the agent will send (the approval binds
tool, input, cwd and rules). cwd defaults to this server's working
directory, which the agent CLI sets to the session's. The hook stays the
enforcement: it checks and spends the approval when the call is made; this
server only saves a denied round trip. Every request and answer is a
receipt (kind "request") in $FIXRAIL_HOME/receipts.ndjson.

--protect-binary names another fixrail binary self-mod protects (the hook's,
when it is fixrail-hook), so the server judges calls as the hook does.`,
	Flags: func() *flag.FlagSet { fs, _ := mcpFlags(); return fs },
	Run:   runMCP,
}

func mcpFlags() (*flag.FlagSet, *hookcmd.Opts) {
	o := &hookcmd.Opts{Event: "pre", Format: "claude", Keys: keyringVerifier}
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.Var(&o.Protect, "protect-binary", "another fixrail binary `path` that self-mod protects (the hook's); repeatable")
	return fs, o
}

func runMCP(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := mcpFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if _, err := hookcmd.New(o); err != nil {
		return usagef("%v", err)
	}
	cwd, _ := os.Getwd()
	s := &mcpServer{opts: o, cwd: cwd, out: stdio.Stdout, log: stdio.Stderr}
	return s.serve(ctx, stdio.Stdin)
}

// mcpMaxMessage bounds one JSON-RPC message: a tool_input carries at most
// what the hook reads (hook.MaxInput), plus the envelope.
const mcpMaxMessage = hook.MaxInput + 64<<10

// mcpVersions are the protocol revisions this server speaks, newest first.
var mcpVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

type mcpServer struct {
	opts *hookcmd.Opts
	cwd  string
	out  io.Writer
	log  io.Writer
}

type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// JSON-RPC error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// serve answers messages until stdin ends. A line longer than
// mcpMaxMessage is answered with a parse error and skipped, never buffered
// whole.
func (s *mcpServer) serve(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, err := readLine(r, mcpMaxMessage)
		if tooLong {
			s.reply(nil, nil, &rpcError{rpcParseError, fmt.Sprintf("message exceeds %d bytes", mcpMaxMessage)})
		} else if len(bytes.TrimSpace(line)) > 0 {
			s.handle(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one newline-terminated line of at most limit bytes; a
// longer one is consumed and reported as tooLong.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			line = nil
		}
		return line, tooLong, err
	}
}

func (s *mcpServer) handle(line []byte) {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		s.reply(nil, nil, &rpcError{rpcParseError, "not a JSON-RPC message: " + err.Error()})
		return
	}
	notification := len(m.ID) == 0 || string(m.ID) == "null"
	if m.JSONRPC != "2.0" || m.Method == "" {
		if !notification {
			s.reply(m.ID, nil, &rpcError{rpcInvalidRequest, `want {"jsonrpc":"2.0","method":...}`})
		}
		return
	}
	if notification {
		return // notifications/initialized, notifications/cancelled: nothing to answer
	}
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		v := mcpVersions[0]
		for _, k := range mcpVersions {
			if k == p.ProtocolVersion {
				v = k
			}
		}
		s.reply(m.ID, map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "fixrail", "version": "1"},
			"instructions": "Before a consequential call (a push, a delete, a publish, a write to agent settings) ask " +
				"request_approval with the exact tool and tool_input you will send; show the user the request and the " +
				"signing command it returns, wait for them, check approval_status, then make the call once, unchanged.",
		}, nil)
	case "ping":
		s.reply(m.ID, map[string]any{}, nil)
	case "tools/list":
		s.reply(m.ID, map[string]any{"tools": mcpTools()}, nil)
	case "tools/call":
		res, rerr := s.call(m.Params)
		s.reply(m.ID, res, rerr)
	default:
		s.reply(m.ID, nil, &rpcError{rpcMethodNotFound, "unknown method " + m.Method})
	}
}

func (s *mcpServer) reply(id json.RawMessage, result any, e *rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	b, err := json.Marshal(msg)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": rpcError{-32603, err.Error()}})
	}
	if _, err := s.out.Write(append(b, '\n')); err != nil {
		fmt.Fprintf(s.log, "fixrail mcp: write: %v\n", err)
	}
}

func mcpTools() []map[string]any {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"tool":       map[string]any{"type": "string", "description": "the tool you will call: Bash, Write, Edit, mcp__server__tool, ..."},
			"tool_input": map[string]any{"type": "object", "description": "exactly the input you will send that tool (every field: for Bash, command and description)"},
			"cwd":        map[string]any{"type": "string", "description": "the session's working directory (default: this server's)"},
		},
		"required":             []string{"tool", "tool_input"},
		"additionalProperties": false,
	}
	return []map[string]any{
		{
			"name":  "request_approval",
			"title": "Ask the owner to approve one exact tool call",
			"description": "Before making a tool call fixrail's policy gates, ask for the owner's approval of that exact call. " +
				"Writes the pending request and returns it with the command the owner signs it with; show both to the user. " +
				"You cannot approve it yourself. Says so when no approval is needed.",
			"inputSchema": schema,
		},
		{
			"name":        "approval_status",
			"title":       "Is this exact tool call approved?",
			"description": "Says whether the owner's approval for this exact tool call (same tool, tool_input and cwd) exists now. Checking does not use it up; the call itself does, once.",
			"inputSchema": schema,
		},
	}
}

type mcpCallArgs struct {
	Tool      string          `json:"tool"`
	ToolInput json.RawMessage `json:"tool_input"`
	Cwd       string          `json:"cwd"`
}

// call runs one tool. Problems with the arguments or the hook's state are
// tool results with isError (the model reads them); only a malformed
// request is a JSON-RPC error.
func (s *mcpServer) call(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{rpcInvalidParams, "tools/call params: " + err.Error()}
	}
	if p.Name != "request_approval" && p.Name != "approval_status" {
		return nil, &rpcError{rpcInvalidParams, "unknown tool " + p.Name}
	}
	var a mcpCallArgs
	dec := json.NewDecoder(bytes.NewReader(p.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return toolError("arguments: " + err.Error()), nil
	}
	if a.Tool == "" {
		return toolError("arguments: tool is required"), nil
	}
	if t := bytes.TrimSpace(a.ToolInput); len(t) == 0 || t[0] != '{' {
		return toolError("arguments: tool_input must be the tool's input object"), nil
	}
	cwd := a.Cwd
	if cwd == "" {
		cwd = s.cwd
	}
	if !filepath.IsAbs(cwd) {
		return toolError(fmt.Sprintf("cwd %q is not an absolute path", cwd)), nil
	}
	h, err := hookcmd.New(s.opts)
	if err != nil {
		return toolError(err.Error()), nil
	}
	var ans *hook.RequestAnswer
	if p.Name == "request_approval" {
		ans, err = h.RequestApproval("", a.Tool, a.ToolInput, cwd)
	} else {
		ans, err = h.ApprovalStatus("", a.Tool, a.ToolInput, cwd)
	}
	if err != nil {
		return toolError("fixrail: " + err.Error()), nil
	}
	return map[string]any{
		"content":           []map[string]any{{"type": "text", "text": mcpText(p.Name, a.Tool, ans)}},
		"structuredContent": mcpStructured(mcpText(p.Name, a.Tool, ans), ans),
		"isError":           false,
	}, nil
}

func toolError(msg string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": msg}}, "isError": true}
}

// mcpStructured is the answer as data. It carries the text too: a client
// that shows the model only the structured content (Claude Code does) must
// still relay what to tell the user.
func mcpStructured(text string, a *hook.RequestAnswer) map[string]any {
	m := map[string]any{"message": text, "status": a.Verdict, "decision": a.Decision, "rules": a.Rule, "reasons": a.Reasons}
	if a.CallKey != "" {
		m["call_key"] = a.CallKey
	}
	if a.Request != "" {
		m["request"] = a.Request
		m["request_sha256"] = a.Digest
		m["expires"] = a.Expires.Format(time.RFC3339)
		m["sign_with"] = a.Commands
	}
	if a.PendingPath != "" {
		m["pending_file"] = a.PendingPath
	}
	if a.Problem != "" {
		m["problem"] = a.Problem
	}
	return m
}

// mcpText is the answer the model reads and relays to the user.
func mcpText(asked, tool string, a *hook.RequestAnswer) string {
	var b strings.Builder
	switch a.Verdict {
	case hook.RequestNotGated:
		fmt.Fprintf(&b, "No approval is needed: fixrail's policy does not gate this %s call", tool)
		if a.Rule != "" {
			fmt.Fprintf(&b, " (it warns: %s)", a.Reasons)
		}
		b.WriteString(". Make the call as given.")
		return b.String()
	case hook.RequestApproved:
		fmt.Fprintf(&b, "Approved: the owner signed this exact %s call (%s, request sha256 %.16s…). Make the call now, exactly as given; the approval lets it run once, until %s.",
			tool, a.Rule, a.Digest, a.Expires.Format(time.RFC3339))
		return b.String()
	case hook.RequestNone:
		fmt.Fprintf(&b, "Not approved yet: this %s call is gated (%s): %s.", tool, a.Rule, a.Reasons)
		if a.Problem != "" {
			fmt.Fprintf(&b, " %s.", a.Problem)
		}
		if a.Request == "" {
			b.WriteString(" No request is pending: call request_approval first.")
		} else {
			b.WriteString(" The request is pending; the owner signs it with:\n  " + strings.Join(a.Commands, "\nor\n  "))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "This %s call is gated (%s, mode gate): %s\n", tool, a.Rule, a.Reasons)
	if a.Problem != "" {
		fmt.Fprintf(&b, "Note: %s\n", a.Problem)
	}
	fmt.Fprintf(&b, "The request is saved. Show the user this and ask them to sign it outside this session (valid until %s):\n  %s\n",
		a.Expires.Format(time.RFC3339), strings.Join(a.Commands, "\nor\n  "))
	fmt.Fprintf(&b, "Request (RFC 8785 JSON, sha256 %s):\n%s\n", a.Digest, a.Request)
	b.WriteString("When they have signed, check approval_status, then make the call exactly as given, once. You cannot approve it yourself.")
	return b.String()
}
