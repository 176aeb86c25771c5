// Package receipt keeps the append-only, hash-chained log of every hook
// decision.
//
// The log is a file of JSON lines, one Receipt per line. Each line records
// in Prev the hex SHA-256 of the previous line's bytes (without its newline)
// and in Seq its own 1-based line number, so editing, inserting or deleting
// any line but the last breaks a link that Verify reports. Appenders take an
// exclusive flock(2) on the file, read the last line, and write the new line
// with a single write(2), so any number of hooks in any number of processes
// extend one linear chain. Append then fsyncs, which also carries every
// earlier line to disk; AppendUnsynced leaves the line to the next fsync or
// the kernel's writeback, so a power loss can damage or drop only what was
// appended after the last fsync.
//
// A chain only proves internal consistency: whoever can write the file can
// truncate its tail or rewrite it wholesale. Checkpoint receipts anchor it:
// the owner signs (with the approval key, which the agent cannot reach) a
// statement of the head hash at some seq, and that statement is appended to
// the log. Keep a copy of the latest checkpoint somewhere the agent cannot
// write; a rewritten history then no longer matches it.
package receipt

import (
	"encoding/json"
	"fmt"
	"time"
)

// Receipt kinds.
const (
	KindDecision    = "decision"     // PreToolUse: the engine's verdict on a call
	KindOutcome     = "outcome"      // PostToolUse: what the call did, joined by ToolUseID
	KindEngineError = "engine-error" // the engine failed; the hook's posture decided
	KindCheckpoint  = "checkpoint"   // a signed statement of the chain head
	// KindRequest: the request path (fixrail mcp) was asked about a call
	// before it was made: a pending request written, or an approval's status.
	KindRequest = "request"
	// KindSessionStart snapshots the hook registration a session starts
	// with; KindSessionEnd closes the session.
	KindSessionStart = "session-start"
	KindSessionEnd   = "session-end"
)

var kinds = map[string]bool{KindDecision: true, KindOutcome: true, KindEngineError: true, KindCheckpoint: true, KindRepair: true,
	KindRequest: true, KindSessionStart: true, KindSessionEnd: true}

// A Receipt is one line of the log. Append sets Seq, Prev and, when zero,
// Time; the caller fills the rest and must have redacted Input and Outcome.
type Receipt struct {
	Seq        int64           `json:"seq"`
	Time       time.Time       `json:"time"`
	Prev       string          `json:"prev"` // hex SHA-256 of the previous line; "" on the first
	Kind       string          `json:"kind"`
	ToolUseID  string          `json:"tool_use_id,omitempty"`
	Session    string          `json:"session,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Rule       string          `json:"rule,omitempty"`
	Verdict    string          `json:"verdict,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Outcome    json.RawMessage `json:"outcome,omitempty"`
	Checkpoint *Checkpoint     `json:"checkpoint,omitempty"`
}

// A Checkpoint is a signed statement that the line numbered Seq hashes to
// Head. The signature covers Message(), not the receipt line.
type Checkpoint struct {
	Head      string `json:"head"`
	Seq       int64  `json:"seq"`
	Signature []byte `json:"signature"` // base64 in JSON
	Kind      string `json:"kind"`      // signature kind: "sshsig" or "ed25519"
}

// Message is the text a checkpoint signs:
//
//	fixrail receipt checkpoint v1
//	seq 42
//	head 3f2a…
func (c Checkpoint) Message() []byte {
	return fmt.Appendf(nil, "fixrail receipt checkpoint v1\nseq %d\nhead %s\n", c.Seq, c.Head)
}

// A Verifier checks a checkpoint signature over msg. keys.Keyring is one.
type Verifier interface {
	VerifyCheckpoint(msg, sig []byte, kind string) error
}

// A Signer signs a checkpoint message with the owner's key. keys.Key is one.
type Signer interface {
	SignCheckpoint(msg []byte) (sig []byte, kind string, err error)
}
