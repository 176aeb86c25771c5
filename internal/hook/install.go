package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Registration is the settings block that registers the hook with one agent
// CLI, and where it goes.
type Registration struct {
	// File is where the block belongs (merge it into what is there).
	File string
	// JSON is the block itself, indented.
	JSON []byte
	// Notes explain the form: what it protects against and what it does not.
	Notes string
}

// Settings returns the registration of command (the fixrail binary, shell
// quoted) for format f; flags (shell-quoted, each with its leading space)
// follow --event on the hook's command line. Managed selects the
// administrator-owned form, which a repository or the user's own settings
// cannot switch off.
func Settings(f Format, command, flags string, managed bool) (Registration, error) {
	pre, post := command+" hook --event pre"+flags, command+" hook --event post"+flags
	start, end := command+" hook --event session-start"+flags, command+" hook --event session-end"+flags
	if f != Claude {
		pre += " --format " + string(f)
		post += " --format " + string(f)
		start += " --format " + string(f)
		end += " --format " + string(f)
	}
	switch f {
	case Claude:
		block := object{{"hooks", object{
			{"PreToolUse", []any{group("*", pre, 30)}},
			{"PostToolUse", []any{group("*", post, 30)}},
			{"SessionStart", []any{sessionGroup(start, 30)}},
			{"SessionEnd", []any{sessionGroup(end, 30)}},
		}}}
		if !managed {
			return reg("~/.claude/settings.json", block, claudeUserNotes)
		}
		block = append(object{{"allowManagedHooksOnly", true}}, block...)
		return reg("/etc/claude-code/managed-settings.json (macOS: /Library/Application Support/ClaudeCode/managed-settings.json)", block, claudeManagedNotes)
	case Codex:
		block := object{{"hooks", object{
			{"PreToolUse", []any{group("*", pre, 30)}},
			{"PostToolUse", []any{group("*", post, 30)}},
			{"SessionStart", []any{sessionGroup(start, 30)}},
			{"SessionEnd", []any{sessionGroup(end, 30)}},
		}}}
		if !managed {
			return reg("~/.codex/hooks.json", block, codexUserNotes)
		}
		return reg("the managed hooks of your Codex deployment, with allow_managed_hooks_only = true in requirements.toml", block, codexManagedNotes)
	case Gemini:
		// Gemini CLI's timeout is in milliseconds and its tool matcher a
		// regular expression.
		block := object{{"hooks", object{
			{"BeforeTool", []any{group(".*", pre, 30000)}},
			{"AfterTool", []any{group(".*", post, 30000)}},
			{"SessionStart", []any{sessionGroup(start, 30000)}},
			{"SessionEnd", []any{sessionGroup(end, 30000)}},
		}}}
		if !managed {
			return reg("~/.gemini/settings.json", block, geminiUserNotes)
		}
		return reg("/etc/gemini-cli/settings.json (system settings, which override user and project settings)", block, geminiManagedNotes)
	}
	return Registration{}, fmt.Errorf("unknown hook format %q", f)
}

// sessionGroup registers a session event: no matcher, every source.
func sessionGroup(command string, timeout int) object {
	return object{{"hooks", []any{object{{"type", "command"}, {"command", command}, {"timeout", timeout}}}}}
}

// MCPServer returns the registration of the request path (fixrail mcp) for
// format f: command is the fixrail binary, args its arguments. Codex takes
// TOML, the others JSON.
func MCPServer(f Format, command string, args []string) (Registration, error) {
	switch f {
	case Claude, Gemini:
		file := "~/.claude.json (or a file passed with --mcp-config; `claude mcp add --scope user fixrail -- COMMAND ARGS` writes it)"
		if f == Gemini {
			file = "~/.gemini/settings.json"
		}
		block := object{{"mcpServers", object{{"fixrail", object{{"type", "stdio"}, {"command", command}, {"args", args}}}}}}
		if f == Gemini {
			block = object{{"mcpServers", object{{"fixrail", object{{"command", command}, {"args", args}}}}}}
		}
		return reg(file, block, mcpNotes)
	case Codex:
		var b strings.Builder
		b.WriteString("[mcp_servers.fixrail]\n")
		q, _ := jsonMarshal(command)
		fmt.Fprintf(&b, "command = %s\n", q)
		qa, _ := jsonMarshal(args)
		fmt.Fprintf(&b, "args = %s\n", qa)
		return Registration{File: "~/.codex/config.toml", JSON: []byte(b.String()), Notes: strings.TrimSpace(mcpNotes) + "\n"}, nil
	}
	return Registration{}, fmt.Errorf("unknown hook format %q", f)
}

const mcpNotes = `
The request path: fixrail mcp lets the agent ask for an approval before a
gated call (request_approval) and check for it (approval_status). The hook
stays the enforcement; this only saves a denied round trip.
`

func group(matcher, command string, timeout int) object {
	return object{
		{"matcher", matcher},
		{"hooks", []any{object{{"type", "command"}, {"command", command}, {"timeout", timeout}}}},
	}
}

// object is a JSON object that keeps its keys in order, so the printed
// block reads the way the documentation shows it.
type object []member

type member struct {
	key   string
	value any
}

// MarshalJSON encodes o with its keys in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := jsonMarshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := jsonMarshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func reg(file string, block object, notes string) (Registration, error) {
	b, err := jsonIndent(block)
	if err != nil {
		return Registration{}, err
	}
	return Registration{File: file, JSON: b, Notes: strings.TrimSpace(notes) + "\n"}, nil
}

func jsonIndent(v any) ([]byte, error) {
	b, err := jsonMarshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// ShellQuote quotes s for the command line of a hook registration, which
// the CLIs run with a shell.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const claudeUserNotes = `
User settings form: merge this block into ~/.claude/settings.json. Every tool
call goes through fixrail (matcher "*"); PostToolUse records each outcome;
SessionStart snapshots this registration and reports a change since the last
session, SessionEnd closes the session's receipts. A --settings file you start
sessions with is covered by adding --snapshot FILE to the commands.

Any settings layer with higher precedence can switch these hooks off: a
repository's .claude/settings.json holding "disableAllHooks": true disables
every non-managed hook (verified on Claude Code 2.1.328), and --bare and
--safe-mode skip them. A session you start inside an untrusted repository is
therefore only covered if you keep project settings out (--setting-sources
user) or add "disableAllHooks": false to a --settings file. fixrail gates
writes to these settings files (self-mod), but it cannot see a repository
that arrives with the file already in it. Use --managed for the form that
cannot be switched off.
`

const claudeManagedNotes = `
Managed settings form: install this file as root (owner root, mode 0644).
It is the form a repository cannot switch off, because
  - managed settings sit above every other layer: a "disableAllHooks": true
    in user, project or local settings, or in --settings, does not disable
    managed hooks; only managed settings can;
  - "allowManagedHooksOnly": true makes Claude Code ignore every hook that is
    not managed, so a repository cannot register a competing hook either;
  - the file is owned by root, so the agent, running as the user, cannot edit
    it, and --bare and --safe-mode still run managed hooks.
The managed form runs for every user of the machine; put the fixrail binary
somewhere only root can write (e.g. /usr/local/bin), and set FIXRAIL_HOME in
the environment of the sessions if it is not ~/.config/fixrail.
`

const codexUserNotes = `
Codex form: merge into ~/.codex/hooks.json (or [hooks] in config.toml). Codex
runs a non-managed hook only after you review and trust it (its hash is
pinned), and project hooks only in trusted projects. Shell calls arrive as
tool "Bash", file edits as "apply_patch"; both are analysed. Use --managed
for the form a project cannot override.
`

const codexManagedNotes = `
Codex managed form: deploy this block as a managed hook and set
allow_managed_hooks_only = true in requirements.toml, the administrator's
file; then user and project hooks are ignored and cannot displace this one.
`

const geminiUserNotes = `
Gemini CLI form: merge into ~/.gemini/settings.json. Timeouts are in
milliseconds. Project hooks (.gemini/settings.json) are fingerprinted and
warned about but can still be added by a repository; use --managed for the
system-settings form.
`

const geminiManagedNotes = `
Gemini CLI system form: install as root in /etc/gemini-cli/settings.json.
System settings override user and workspace settings, and the agent, running
as the user, cannot edit the file.
`
