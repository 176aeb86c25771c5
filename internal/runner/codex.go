package runner

import (
	"fmt"
	"strings"
)

// The Codex adapter (runner.kind: codex) is a portability check, not a
// runner. The rails wrap any agent that accepts a prompt, a tool allowlist
// per phase and a turn cap, and can be paused between the two phases (seed
// 000, "The two-invocation runner seam"). Read against the documented
// `codex exec` of @openai/codex 0.171.0 (notes/claude-code-cli.md §4), two
// of those are missing, so fixrail refuses to start Codex rather than run
// it with weaker rails. The table below is the decision; when a Codex
// release closes a gap, change its row and write the adapter.

// Capability is one thing the rails need from an agent CLI, and whether a
// given CLI has it.
type Capability struct {
	// Name says what the rails need.
	Name string
	// Have reports whether the CLI provides it.
	Have bool
	// Evidence is where the CLI provides it, or why it does not.
	Evidence string
}

// CodexCapabilities is what `codex exec` 0.171.0 offers each rail, from its
// --help and documentation (notes/claude-code-cli.md §4); it was not run
// against a model.
var CodexCapabilities = []Capability{
	{Name: "prompt on stdin", Have: true,
		Evidence: "codex exec reads the prompt from stdin when it is omitted or -"},
	{Name: "turn cap", Have: false,
		Evidence: "codex exec has no --max-turns or equivalent flag or config key; only the wall clock would bound a run"},
	{Name: "per-phase tool set", Have: false,
		Evidence: "the shell tool and apply_patch cannot be removed from the model's tools; --sandbox read-only|workspace-write opens writes to the whole workspace or to nothing, so the investigate phase cannot be held to the test path, and workspace-write leaves every write tool in place"},
	{Name: "pre-tool hook", Have: true,
		Evidence: "PreToolUse hooks (exit 2 blocks), but only from hooks.json or config.toml, and a non-managed hook runs only once trusted or with --dangerously-bypass-hook-trust"},
	{Name: "machine-readable result", Have: true,
		Evidence: "--json prints JSONL events: turn.completed with usage, turn.failed, error"},
	{Name: "non-interactive approvals", Have: true,
		Evidence: "-a never with -s read-only or workspace-write"},
}

// PreconditionError is an agent CLI that lacks a capability the rails need:
// the portability precondition. fixrail refuses to start such a runner.
type PreconditionError struct {
	Runner  string
	Version string
	Missing []Capability
}

func (e *PreconditionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runner.kind %s refused: %s %s lacks what fixrail's rails need (the portability precondition), and fixrail does not run an agent with weaker rails:", e.Runner, e.Runner, e.Version)
	for _, c := range e.Missing {
		fmt.Fprintf(&b, " no %s (%s);", c.Name, c.Evidence)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// CheckCodex returns the *PreconditionError that keeps fixrail from running
// Codex, or nil once CodexCapabilities has no gap.
func CheckCodex() error {
	var missing []Capability
	for _, c := range CodexCapabilities {
		if !c.Have {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &PreconditionError{Runner: "codex", Version: "exec 0.171.0", Missing: missing}
}
