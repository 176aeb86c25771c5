package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// ClaudeCLI makes the call through the Claude Code CLI, for setups where
// only the CLI is configured:
//
//	claude -p --tools "" --max-turns 1 --output-format json
//	       --setting-sources "" --strict-mcp-config ...
//
// --tools "" removes every tool definition from the request (an empty
// --allowedTools would only deny calls, and the model would keep making
// them). The prompt goes on stdin, never argv. Each call runs in a fresh
// directory that is its HOME, TMPDIR, XDG directories and working
// directory, removed afterwards, with an environment of PATH, LANG and the
// ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_BASE_URL of the
// parent, nothing else.
type ClaudeCLI struct {
	// Timeout bounds one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Lookup reads the parent environment; nil means os.LookupEnv.
	Lookup func(string) (string, bool)

	binary string
	model  string
}

// claudeEnvNames are taken from the parent: names, never patterns.
var claudeEnvNames = []string{"PATH", "LANG", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"}

// NewClaudeCLI returns a backend running binary ("claude" when empty, looked
// up in PATH) with --model when model is not empty.
func NewClaudeCLI(binary, model string) *ClaudeCLI {
	if binary == "" {
		binary = "claude"
	}
	return &ClaudeCLI{binary: binary, model: model}
}

// cliResult is the one object --output-format json prints at exit
// (notes/claude-code-cli.md §2.6). Errors are reported by is_error and
// terminal_reason, not by subtype.
type cliResult struct {
	Type           string          `json:"type"`
	Subtype        string          `json:"subtype"`
	IsError        bool            `json:"is_error"`
	Result         string          `json:"result"`
	TerminalReason string          `json:"terminal_reason"`
	APIErrorStatus int             `json:"api_error_status"`
	APIError       json.RawMessage `json:"api_error"`
	NumTurns       int             `json:"num_turns"`
	Errors         []string        `json:"errors"`
}

// Args returns the argv of one call; the prompt is not in it.
func (c *ClaudeCLI) Args(system string) []string {
	args := []string{c.binary, "-p",
		"--output-format", "json",
		"--max-turns", "1",
		"--tools", "",
		"--setting-sources", "",
		"--strict-mcp-config",
		"--no-session-persistence",
		"--disable-slash-commands",
	}
	if c.model != "" {
		args = append(args, "--model", c.model)
	}
	if system != "" {
		// fixrail's own fixed instructions, never untrusted or secret text:
		// those travel in the prompt, on stdin.
		args = append(args, "--system-prompt", system)
	}
	return args
}

// Complete runs the CLI once and returns its result text.
func (c *ClaudeCLI) Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
	dir, err := os.MkdirTemp("", "fxm")
	if err != nil {
		return "", fmt.Errorf("claude: %w", err)
	}
	defer os.RemoveAll(dir)
	env, err := c.env(dir, maxTokens)
	if err != nil {
		return "", fmt.Errorf("claude: %w", err)
	}
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:      c.Args(system),
		Dir:       filepath.Join(dir, "work"),
		Env:       env,
		Stdin:     []byte(prompt),
		Timeout:   timeout(c.Timeout),
		OutputCap: 4 << 20,
	})
	if err != nil {
		return "", fmt.Errorf("claude: %w", err)
	}
	switch {
	case res.Canceled:
		return "", fmt.Errorf("claude: %w", context.Cause(ctx))
	case res.TimedOut:
		return "", &TransportError{Backend: "claude", Timeout: true, Err: fmt.Errorf("no result after %s", res.Duration.Round(time.Millisecond))}
	}
	r, perr := parseResult(res.Stdout)
	if perr != nil {
		// No result object: the CLI crashed or failed before the model
		// answered. The seed counts this as a transport problem.
		detail := perr.Error()
		if res.Signal != "" {
			detail = "killed by " + res.Signal
		} else if res.ExitCode != 0 {
			detail = fmt.Sprintf("exit %d: %s", res.ExitCode, lastLine(res.Stderr))
		}
		return "", &TransportError{Backend: "claude", Err: errors.New(detail)}
	}
	if r.IsError || res.ExitCode != 0 {
		return "", r.err(res.ExitCode)
	}
	if strings.TrimSpace(r.Result) == "" {
		return "", fmt.Errorf("claude: empty result (subtype %s, terminal_reason %s)", r.Subtype, r.TerminalReason)
	}
	return r.Result, nil
}

func (c *ClaudeCLI) env(dir string, maxTokens int) ([]string, error) {
	lookup := c.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env := sandbox.Environ(lookup, claudeEnvNames...)
	for _, d := range []struct{ name, sub string }{
		{"HOME", "home"},
		{"TMPDIR", "tmp"},
		{"XDG_CONFIG_HOME", "home/.config"},
		{"XDG_CACHE_HOME", "home/.cache"},
		{"XDG_DATA_HOME", "home/.local/share"},
		{"XDG_STATE_HOME", "home/.local/state"},
		// Short, so the CLI's messaging socket stays in this directory
		// rather than falling back to the shared /tmp/cc-socks-<uid>.
		{"XDG_RUNTIME_DIR", "r"},
		{"", "work"},
	} {
		p := filepath.Join(dir, d.sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, err
		}
		if d.name != "" {
			env = sandbox.With(env, d.name, p)
		}
	}
	for _, kv := range [][2]string{
		{"TERM", "dumb"},
		// No telemetry, update checks or feature flags: the only
		// connection is to the API (notes/claude-code-cli.md §3.2).
		{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
		{"DISABLE_AUTOUPDATER", "1"},
		// WithRetry retries, by type; the CLI's own ten retries would hide
		// a dead endpoint for minutes.
		{"CLAUDE_CODE_MAX_RETRIES", "0"},
		{"API_TIMEOUT_MS", strconv.FormatInt(timeout(c.Timeout).Milliseconds(), 10)},
	} {
		env = sandbox.With(env, kv[0], kv[1])
	}
	if maxTokens > 0 {
		// The CLI has no flag for it; without this it asks for 128000.
		env = sandbox.With(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS", strconv.Itoa(maxTokens))
	}
	return env, nil
}

// parseResult decodes the result object: the whole of stdout, or else its
// last non-empty line.
func parseResult(stdout string) (*cliResult, error) {
	s := strings.TrimSpace(stdout)
	if s == "" {
		return nil, errors.New("no output")
	}
	var r cliResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		if err2 := json.Unmarshal([]byte(lastLine(s)), &r); err2 != nil {
			return nil, fmt.Errorf("output is not a result object: %w", err)
		}
	}
	if r.Type != "result" {
		return nil, fmt.Errorf("output is a %q object, not a result", r.Type)
	}
	return &r, nil
}

// err maps a result that reports an error: an API error the endpoint could
// not help (no response, 408/409/429/5xx) is a TransportError; anything else
// — a refused request, the turn cap — is not.
func (r *cliResult) err(exit int) error {
	msg := fmt.Sprintf("exit %d, subtype %s, terminal_reason %s", exit, r.Subtype, r.TerminalReason)
	if r.Result != "" {
		msg += ": " + firstLine(r.Result)
	} else if len(r.Errors) > 0 {
		msg += ": " + strings.Join(r.Errors, "; ")
	}
	if r.TerminalReason == "api_error" && (r.APIErrorStatus == 0 || retryableStatus(r.APIErrorStatus)) {
		return &TransportError{Backend: "claude", Status: r.APIErrorStatus, Err: errors.New(msg)}
	}
	return errors.New("claude: " + msg)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
