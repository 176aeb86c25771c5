// Package hook speaks the agent CLIs' hook protocols and decides each tool
// call: policy rules, signed approvals, receipts.
//
// # Protocol
//
// Claude Code, Codex and Gemini CLI run a command hook once per tool call
// and write one JSON object on its stdin: session_id, transcript_path, cwd,
// hook_event_name (PreToolUse/PostToolUse, or BeforeTool/AfterTool),
// tool_name, tool_input, tool_use_id (not from Gemini), and tool_response
// after the call. Decode turns any of them into a Call; unknown fields are
// ignored. Encode answers: exit 2 with the reason on stderr blocks the call
// in all three CLIs, and is the only answer that does — exit 1, a timeout,
// or malformed JSON let the call run. So Run never lets the runtime choose
// the exit code (a Go panic exits 2): it returns 0 or 2 by decision, and a
// top-level recover turns a panic into the posture's answer. Allowed calls
// exit 0 without a JSON "allow", which would skip the CLI's own permission
// rules; warnings go to stderr and, where the protocol shows it to the
// user, into a JSON systemMessage.
//
// # Decisions
//
// A PreToolUse call is analysed by policy.Analyze and policy.Decide with
// the modes of $FIXRAIL_HOME/policy.json:
//
//   - allow: exit 0, receipt "allow";
//   - warn: exit 0 with a note, receipt "warn";
//   - deny (a gate-mode rule matched): the token layer looks for an
//     approval of this exact call. The call key is approval.CallKey over
//     tool, input, cwd and the gate rules it triggered (sorted, comma
//     joined), so one signature covers all of a call's gate rules. A valid,
//     unexpired, unspent approval lets the call run once (receipt
//     "approved"); anything else — no approval, a bad or foreign signature,
//     an expired or replayed one, an unreadable keyring, a panic while
//     checking — denies (receipt "deny"). The denial prints the canonical
//     request and the commands that sign it: `fixrail approve <callkey>` or
//     `ssh-keygen -Y sign -n fixrail-approval -f <key> <pending file>`. An
//     unexpired pending request for the same call is printed again rather
//     than replaced, so a signature being made over it stays valid.
//
// A PostToolUse call appends an "outcome" receipt (sizes and hashes of the
// response, never the response) joined to its decision by tool_use_id.
// Every receipt's input and reason pass through the Redactor first; when no
// redactor can be built they are withheld, never written raw. Inputs over
// 16 KiB are kept as hash, size and a redacted excerpt.
//
// # Request path
//
// RequestApproval and ApprovalStatus (served by `fixrail mcp`) let an agent
// ask about one exact call before making it: the same analysis, policy and
// call key as a denial, the same pending request (reused while unexpired),
// and a check of the approval that verifies it without spending it
// (approval.Store.Peek). Each answer is a "request" receipt. Enforcement
// does not move: the hook decides the call when it is made and spends the
// approval then.
//
// # Session snapshots
//
// At SessionStart the hook hashes the registration the session runs with —
// the hook-related members (hooks, disableAllHooks, allowManagedHooksOnly)
// of every settings layer of its CLI plus any --snapshot file, its own
// command line and the SHA-256 of its binary — and writes a "session-start"
// receipt. Against the last accepted one: unchanged is "same"; a change of
// settings that leaves the hooks alone, or any change while self-mod is not
// in gate mode, is reported and "accepted"; a changed registration under a
// gating self-mod is reported to the user and the model, not accepted
// ("deny"), and stays reported every session until the owner approves that
// registration (an approval request for tool fixrail:hook-registration,
// signed like any other). SessionEnd writes a "session-end" receipt with
// the registration as it stands then. A registration edited so that the hook
// no longer runs cannot be reported by it: that shows only when a session
// runs the hook again.
//
// # Postures
//
// As the user's hook (Phase nil) an engine error — input that cannot be
// decoded or analysed, an unreadable or invalid policy, a panic — lets the
// call run: exit 0, a message on stderr, a best-effort engine-error receipt.
// A bug in fixrail must not brick every tool call. A receipt that cannot be
// written leaves the decision as it was and adds a warning. The token layer
// is not the engine and fails closed: see Decisions.
//
// As the pipeline's phase hook (Phase set) everything fails closed: any
// error blocks, and only the phase's tools are allowed — Read, Grep and Glob
// inside the worktree, and Write, Edit and MultiEdit to worktree paths an
// --allow glob names, symbolic links resolved (pathguard.ResolveWithin).
// Bash, WebFetch, MCP tools, NotebookEdit and everything else are denied.
// The policy rules still apply on top, with no approvals: a gate-mode match
// denies.
//
// Post events never block, in either posture: the call has already run.
//
// # Files
//
// $FIXRAIL_HOME (default ~/.config/fixrail) holds policy.json, keys/ (the
// approvers' public keys), approvals/ (approval.Store: pending requests,
// tokens, spent nonces) and receipts.ndjson. The private approval key is
// never there: the agent can read that directory. The policy's self-mod rule
// gates writes to it and reads of keys/.
//
// # Limits
//
// The hook decides on the shape of a call; patterns are evadable (see
// package policy). It cannot stop a harness that does not run it: a
// non-managed registration can be switched off by higher-precedence
// settings (see Settings and `fixrail hook install --print --managed`), a
// hook that times out lets the call run, and Codex and Gemini CLI formats are
// implemented from their documentation, not exercised against the real CLIs.
package hook
