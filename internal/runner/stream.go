package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// Claude Code's --output-format stream-json (with --verbose and
// --include-hook-events) is one JSON object per line: a system/init event
// (tools, MCP servers, permission mode), the assistant and user messages
// (tool_use and tool_result blocks), system/hook_started and hook_response
// events, and a final result event. Unknown types and fields are ignored;
// new ones appear with most releases.

// streamInit is the part of the system/init event fixrail checks.
type streamInit struct {
	Tools          []string          `json:"tools"`
	MCPServers     []json.RawMessage `json:"mcp_servers"`
	PermissionMode string            `json:"permissionMode"`
	Version        string            `json:"claude_code_version"`
}

// streamResult is the result event. An error is read from is_error,
// terminal_reason, api_error_status/api_error and the exit code together,
// never from subtype alone: an API error reports subtype "success".
type streamResult struct {
	Subtype           string                     `json:"subtype"`
	IsError           bool                       `json:"is_error"`
	TerminalReason    string                     `json:"terminal_reason"`
	StopReason        string                     `json:"stop_reason"`
	Result            *string                    `json:"result"`
	Errors            []string                   `json:"errors"`
	NumTurns          int                        `json:"num_turns"`
	TotalCostUSD      float64                    `json:"total_cost_usd"`
	ModelUsage        map[string]json.RawMessage `json:"modelUsage"`
	PermissionDenials []json.RawMessage          `json:"permission_denials"`
	APIErrorStatus    *int                       `json:"api_error_status"`
	APIError          json.RawMessage            `json:"api_error"`
}

// stream is what fixrail reads from one run's output.
type stream struct {
	init   *streamInit
	result *streamResult
	// names maps tool_use ids to tool names.
	names map[string]string
	// ran counts, per tool, the calls whose tool_result was not an error:
	// the calls that ran.
	ran map[string]int
	// hookAllowed counts, per tool, the PreToolUse hook responses that let
	// a call through (exit 0).
	hookAllowed map[string]int
	// bad counts lines that were not JSON objects.
	bad int
}

type streamLine struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	// assistant and user messages
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// system/hook_response
	HookEvent string `json:"hook_event"`
	HookName  string `json:"hook_name"`
	ExitCode  *int   `json:"exit_code"`
}

type streamBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
}

// parseStream reads a stream-json output. It never fails: what cannot be
// read is counted or missing, and outcome treats missing as failure.
func parseStream(out string) *stream {
	s := &stream{names: map[string]string{}, ran: map[string]int{}, hookAllowed: map[string]int{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), streamCap)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var l streamLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			s.bad++
			continue
		}
		switch {
		case l.Type == "system" && l.Subtype == "init":
			var in streamInit
			if json.Unmarshal([]byte(line), &in) == nil {
				s.init = &in
			}
		case l.Type == "system" && l.Subtype == "hook_response":
			tool, ok := strings.CutPrefix(l.HookName, "PreToolUse:")
			if l.HookEvent == "PreToolUse" && ok && l.ExitCode != nil && *l.ExitCode == 0 {
				s.hookAllowed[tool]++
			}
		case l.Type == "assistant" && l.Message != nil:
			for _, b := range blocks(l.Message.Content) {
				if b.Type == "tool_use" {
					s.names[b.ID] = b.Name
				}
			}
		case l.Type == "user" && l.Message != nil:
			for _, b := range blocks(l.Message.Content) {
				if b.Type == "tool_result" && !b.IsError {
					name := s.names[b.ToolUseID]
					if name == "" {
						name = "unknown tool " + b.ToolUseID
					}
					s.ran[name]++
				}
			}
		case l.Type == "result":
			var r streamResult
			if json.Unmarshal([]byte(line), &r) == nil {
				s.result = &r
			} else {
				s.bad++
			}
		}
	}
	if sc.Err() != nil {
		s.bad++
	}
	return s
}

// blocks decodes message content; a plain string content has none.
func blocks(raw json.RawMessage) []streamBlock {
	var bs []streamBlock
	if json.Unmarshal(raw, &bs) != nil {
		return nil
	}
	return bs
}

// unconfined returns why the run escaped the rails it was given, or "".
// tools is the --tools set.
func (s *stream) unconfined(tools []string) string {
	if s.init == nil {
		return "no init event: cannot confirm the tool set the CLI ran with"
	}
	for _, t := range s.init.Tools {
		if !slices.Contains(tools, t) {
			return fmt.Sprintf("the CLI offered tool %s, outside the phase's set %s", t, strings.Join(tools, ","))
		}
	}
	if n := len(s.init.MCPServers); n > 0 {
		return fmt.Sprintf("the CLI started %d MCP server(s) despite --strict-mcp-config", n)
	}
	if s.init.PermissionMode != "dontAsk" {
		return fmt.Sprintf("the CLI ran in permission mode %q, not dontAsk", s.init.PermissionMode)
	}
	names := make([]string, 0, len(s.ran))
	for t := range s.ran {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		if n, ok := s.ran[t], s.hookAllowed[t]; n > ok {
			return fmt.Sprintf("%d %s call(s) ran but the phase hook allowed %d: a call ran without the hook deciding it", n, t, ok)
		}
	}
	return ""
}

// account is the invocation's cost, model turns and refused calls as the
// CLI's result event gives them, and whether that is its account of the
// run (metered). No result event is no account. A result that counts a
// turn the CLI answered itself — "Not logged in", an API error before any
// model call — with no model usage and no cost took no model turn. One
// that reports model turns at no cost (a model the CLI has no price for)
// is no account of the cost: the run is charged its caps.
func (s *stream) account() (cost float64, turns, denials int, metered bool) {
	r := s.result
	if r == nil {
		return 0, 0, 0, false
	}
	cost, turns, denials = r.TotalCostUSD, r.NumTurns, len(r.PermissionDenials)
	if cost == 0 && len(r.ModelUsage) == 0 {
		turns = 0
	}
	return cost, turns, denials, cost > 0 || turns == 0
}

// outcome maps a finished run to nil or an *Error. Escaping the rails is
// reported first, whatever else happened; then the process's own end (a
// deadline, a cancel, a signal); then the result event.
func (s *stream) outcome(ctx context.Context, res sandbox.Result, tools []string, maxTurns int) error {
	if why := s.unconfined(tools); why != "" && (s.init != nil || s.result != nil) {
		return &Error{Kind: Unconfined, Detail: why}
	}
	if res.Canceled || res.TimedOut || res.Signal != "" {
		return classify(ctx, res)
	}
	r := s.result
	if r == nil {
		detail := "no result event in the stream"
		if res.ExitCode != 0 {
			detail = fmt.Sprintf("claude exited %d without a result event", res.ExitCode)
		}
		if t := strings.TrimSpace(tail(res.Stderr, 300)); t != "" {
			detail += ": " + t
		}
		// No answer could be read from the stream at all: the channel
		// failed, not the agent's work.
		return &Error{Kind: Failed, Detail: detail, Transport: "unreadable output: the stream held no result event"}
	}
	text := ""
	if r.Result != nil {
		text = strings.TrimSpace(tail(*r.Result, 300))
	}
	switch {
	case strings.Contains(text, "/login"):
		// "Not logged in · Please run /login": a credential fixrail
		// passed was refused or is not one the CLI takes.
		return &Error{Kind: Unavailable, Detail: noCredential + "; the CLI answered that it is not logged in"}
	case r.TerminalReason == "max_turns" || r.Subtype == "error_max_turns":
		return &Error{Kind: OutOfTurns, Detail: fmt.Sprintf("stopped after %d turns, max_turns %d", r.NumTurns, maxTurns)}
	case r.Subtype == "error_max_budget_usd" || strings.Contains(r.TerminalReason, "budget"):
		return &Error{Kind: OverBudget, Detail: fmt.Sprintf("stopped at the cost cap after %d turns, $%g", r.NumTurns, r.TotalCostUSD)}
	case r.TerminalReason == "api_error" || r.APIErrorStatus != nil || apiErrorSet(r.APIError):
		d := "model API error"
		if r.APIErrorStatus != nil {
			d += fmt.Sprintf(" (HTTP %d)", *r.APIErrorStatus)
		} else if apiErrorSet(r.APIError) {
			d += " (" + strings.Trim(string(r.APIError), `"`) + ")"
		}
		if text != "" {
			d += ": " + text
		}
		return &Error{Kind: APIError, Detail: d}
	case r.IsError || res.ExitCode != 0 || r.Subtype != "success" || (r.TerminalReason != "" && r.TerminalReason != "completed"):
		d := fmt.Sprintf("claude ended with is_error=%v subtype=%s terminal_reason=%s exit %d", r.IsError, r.Subtype, r.TerminalReason, res.ExitCode)
		if len(r.Errors) > 0 {
			d += ": " + strings.Join(r.Errors, "; ")
		} else if text != "" {
			d += ": " + text
		}
		return &Error{Kind: Failed, Detail: d}
	}
	return nil
}

func apiErrorSet(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null" && t != `""`
}
