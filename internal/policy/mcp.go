package policy

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode"
)

// MCP tools are judged by the words of their name (mcp__server__tool):
//   - a tool that runs shell commands (bash, shell, terminal, or run/exec/
//     execute with command/cmd/script: run_command, execute_command) has its
//     command string analysed like the Bash tool, and is unresolvable for
//     every rule when it has none; so has a run/exec/invoke tool given a
//     command, cmd or script argument (mcp__x__exec);
//   - merge, publish, release, deploy are publish;
//   - delete, remove, drop, destroy, purge, wipe, truncate, erase are
//     destructive;
//   - send, post, create, update, write, edit, upload, put, patch, set, add,
//     insert, comment, reply, message, email, invite, share, submit, transfer,
//     move, rename, copy, save, append, commit, push, assign, close, reopen,
//     approve, fork, star, execute, trigger, dispatch, schedule, book, order,
//     apply, modify, upsert, grant, revoke, pay, charge, refund are egress-other (the call changes something outside this machine),
//     unless the server looks local (filesystem, editor, ...) and the input
//     names a path, in which case the paths are checked as writes instead;
//     an absolute path or a file: URI given to any other server's writing
//     tool is checked as a write as well;
//   - a branch argument naming a protected branch on a writing tool is
//     push-protected, and force: true is push-force;
//   - a tool that runs database statements (query, sql, execute, exec,
//     run, statement in its name: query, execute_sql, write_query) has its
//     query/sql/statement argument read as a database client's command line
//     is: DROP, TRUNCATE, DELETE FROM, a MongoDB drop are destructive;
//   - tools whose words are only reads (get, list, search, read, fetch, ...)
//     match nothing, except a path argument under the approval keys.
//
// The heuristic is per name, not per server; a server that hides writes
// behind a reading name is not caught.

var (
	mcpShell   = wordSet{"bash", "shell", "terminal", "sh", "zsh", "powershell"}
	mcpRun     = wordSet{"run", "exec", "execute", "invoke"}
	mcpCommand = wordSet{"command", "commands", "cmd", "script", "shell"}
	mcpPublish = wordSet{"merge", "publish", "release", "deploy"}
	mcpDelete  = wordSet{"delete", "remove", "drop", "destroy", "purge", "wipe", "truncate", "erase", "unlink", "rm", "del"}
	mcpWrite   = wordSet{"send", "post", "create", "update", "write", "edit", "upload", "put", "patch", "set", "add", "insert",
		"comment", "reply", "message", "email", "mail", "invite", "share", "submit", "transfer", "move", "rename", "copy",
		"save", "append", "commit", "push", "assign", "close", "reopen", "approve", "fork", "star", "trigger", "dispatch",
		"schedule", "book", "order", "apply", "replace", "modify", "upsert", "store", "publish", "merge", "release",
		"deploy", "mkdir", "revoke", "grant", "pay", "charge", "refund", "execute", "exec"}
	mcpSQL      = wordSet{"query", "sql", "execute", "exec", "run", "statement"}
	mcpSQLKeys  = []string{"query", "sql", "statement", "stmt", "queries", "statements"}
	mcpPathKeys = []string{"path", "file_path", "filepath", "filename", "file", "destination", "dest", "target", "source",
		"directory", "dir", "notebook_path", "absolute_path", "paths", "files", "new_path", "old_path"}
)

// words splits a tool name into lower-case words on _, -, . and camelCase.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/':
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

func (a *analyzer) mcp(c Call) error {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(c.Input, &in); err != nil || in == nil {
		in = map[string]json.RawMessage{}
	}
	name := strings.TrimPrefix(strings.TrimPrefix(c.Tool, "mcp__"), "mcp_")
	server, tool, ok := strings.Cut(name, "__")
	if !ok {
		tool = name
	}
	ws := words(tool)
	has := func(m wordSet) string {
		for _, w := range ws {
			if m.has(w) {
				return w
			}
		}
		return ""
	}
	str := func(key string) (string, bool) {
		var s string
		raw, ok := in[key]
		if !ok || json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	shellTool := has(mcpShell) != "" || (has(mcpRun) != "" && has(mcpCommand) != "")
	if !shellTool && has(mcpRun) != "" {
		// run, exec, invoke with a command argument: whatever else the
		// name says (mcp__x__exec), the argument is what runs.
		for _, k := range []string{"command", "cmd", "script", "commandLine", "command_line"} {
			if _, ok := str(k); ok {
				shellTool = true
			}
		}
	}
	if shellTool {
		for _, k := range []string{"command", "cmd", "script", "code", "commandLine", "command_line"} {
			if s, ok := str(k); ok {
				a.script(s, a.top(), 1, c.Tool)
				return nil
			}
		}
		a.all(c.Tool + " runs commands this analysis cannot see")
		return nil
	}

	if has(mcpSQL) != "" {
		for _, k := range mcpSQLKeys {
			if destructiveSQL.MatchString(strings.Join(stringValues(in[k]), ";\n")) {
				a.add(Destructive, false, "%s runs a destructive statement (its %s)", c.Tool, k)
			}
		}
	}

	var paths []string
	for _, k := range mcpPathKeys {
		for _, v := range stringValues(in[k]) {
			if p, ok := fileURI(v); ok {
				v = p
			}
			paths = append(paths, v)
		}
	}
	for _, k := range []string{"uri", "url", "file_uri", "fileUri"} {
		for _, v := range stringValues(in[k]) {
			if p, ok := fileURI(v); ok {
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		a.readPath(word(p), a.toolState(), c.Tool, false)
	}

	writes := has(mcpWrite) != "" || has(mcpDelete) != ""
	if w := has(mcpPublish); w != "" {
		a.add(Publish, false, "%s (%s)", c.Tool, w)
	}
	if w := has(mcpDelete); w != "" {
		a.add(Destructive, false, "%s (%s)", c.Tool, w)
	}
	if writes {
		if b, ok := str("branch"); ok && a.protectedBranch(strings.TrimPrefix(b, "refs/heads/")) {
			a.add(PushProtected, false, "%s writes to the protected branch %s", c.Tool, b)
		}
		if raw, ok := in["force"]; ok && string(raw) == "true" {
			a.add(PushForce, false, "%s with force: true", c.Tool)
		}
		if len(paths) > 0 && localServer(server) {
			for _, p := range paths {
				a.writePath(word(p), a.toolState(), c.Tool)
			}
		} else {
			a.add(EgressOther, false, "%s changes something outside this machine", c.Tool)
			// An absolute path is this machine's more often than a
			// remote repository's (whose paths are relative): judged
			// as a local write as well.
			for _, p := range paths {
				if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") {
					a.writePath(word(p), a.toolState(), c.Tool)
				}
			}
		}
	}
	return nil
}

// fileURI returns the local path of a file: URI (file:///p or
// file://localhost/p, percent-decoded).
func fileURI(s string) (string, bool) {
	if len(s) < 7 || !strings.EqualFold(s[:7], "file://") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// stringValues reads an argument that is a string or a list of strings;
// anything else (or nothing) is none.
func stringValues(raw json.RawMessage) []string {
	var s string
	var ss []string
	switch {
	case raw == nil:
	case json.Unmarshal(raw, &s) == nil:
		return []string{s}
	case json.Unmarshal(raw, &ss) == nil:
		return ss
	}
	return nil
}

// localServer guesses whether an MCP server works on local files, so that
// its writes are file writes rather than egress.
func localServer(server string) bool {
	s := strings.ToLower(server)
	for _, w := range []string{"filesystem", "file", "fs", "local", "disk", "editor", "notebook", "jupyter", "desktop-commander", "serena", "ide"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
