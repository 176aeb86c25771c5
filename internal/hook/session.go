package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/receipt"
)

// Session snapshots. The hook's registration lives in settings files the
// agent could edit between sessions (fixrail gates such edits, but an edit
// made outside a gated session is not seen). At SessionStart the hook hashes
// what decides which hooks run — the hook-related members of every settings
// layer, its own command line and binary — and compares the hash with the
// last accepted session's receipt. A change starts the session with a
// message saying what changed; when self-mod is in gate mode the new
// registration is accepted only with the owner's approval, and until then
// every session reports it again. SessionEnd writes a closing receipt.
//
// What it cannot do: a registration edited so that fixrail no longer runs
// leaves nobody to notice until a session that runs it again; a session
// snapshot proves what the files said when the session started, not during.

// RegistrationTool is the tool name of the approval request that accepts a
// changed hook registration.
const RegistrationTool = "fixrail:hook-registration"

// maxSettingsFile bounds a settings file read for a snapshot.
const maxSettingsFile = 4 << 20

// Snapshot is what a session-start receipt records.
type Snapshot struct {
	// Registration is the SHA-256 of the effective hook registration: the
	// hook-related members of each settings layer (hooks, disableAllHooks,
	// allowManagedHooksOnly), the hook's command line and its binary.
	Registration string `json:"registration_sha256"`
	// Files maps each settings file to the SHA-256 of its contents, or to
	// "absent" or "unreadable".
	Files map[string]string `json:"files"`
	// Hooks maps each settings file that registers anything to the SHA-256
	// of its hook-related members.
	Hooks   map[string]string `json:"hooks,omitempty"`
	Command []string          `json:"command"`
	Binary  string            `json:"binary_sha256"`
}

// settingsFiles lists the files whose contents decide the hooks of a
// session of format f started in project dir.
func (h *Hook) settingsFiles(f Format, home, project string) []string {
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	switch f {
	case Codex:
		for _, d := range []string{home, project} {
			if d != "" {
				add(filepath.Join(d, ".codex", "hooks.json"))
				add(filepath.Join(d, ".codex", "config.toml"))
			}
		}
		add("/etc/codex/requirements.toml")
	case Gemini:
		add("/etc/gemini-cli/settings.json")
		for _, d := range []string{home, project} {
			if d != "" {
				add(filepath.Join(d, ".gemini", "settings.json"))
			}
		}
	default:
		add("/etc/claude-code/managed-settings.json")
		add("/Library/Application Support/ClaudeCode/managed-settings.json")
		if home != "" {
			add(filepath.Join(home, ".claude", "settings.json"))
		}
		if project != "" {
			add(filepath.Join(project, ".claude", "settings.json"))
			add(filepath.Join(project, ".claude", "settings.local.json"))
		}
	}
	for _, p := range h.SnapshotFiles {
		add(p)
	}
	return out
}

// hookMembers are the settings members that decide which hooks run.
var hookMembers = []string{"hooks", "disableAllHooks", "allowManagedHooksOnly"}

// TakeSnapshot hashes the registration a session of this hook starts with.
func (h *Hook) TakeSnapshot(project string) (*Snapshot, error) {
	s := &Snapshot{Files: map[string]string{}, Hooks: map[string]string{}, Command: h.Command}
	if s.Command == nil {
		s.Command = os.Args
	}
	exe := h.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("snapshot: locate the hook binary: %w", err)
		}
	}
	sum, err := fileSHA256(exe)
	if err != nil {
		return nil, fmt.Errorf("snapshot: hash the hook binary: %w", err)
	}
	s.Binary = sum
	type layer struct {
		Path  string          `json:"path"`
		Hooks json.RawMessage `json:"hooks"`
	}
	var layers []layer
	for _, p := range h.settingsFiles(h.format(), h.Env.Home, project) {
		data, err := pathguard.ReadRegular(p, maxSettingsFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.Files[p] = "absent"
			continue
		case err != nil:
			s.Files[p] = "unreadable"
			layers = append(layers, layer{Path: p, Hooks: json.RawMessage(`"unreadable"`)})
			continue
		}
		d := sha256.Sum256(data)
		s.Files[p] = hex.EncodeToString(d[:])
		part, ok := hookPart(p, data)
		if !ok {
			continue
		}
		layers = append(layers, layer{Path: p, Hooks: part})
		hd := sha256.Sum256(part)
		s.Hooks[p] = hex.EncodeToString(hd[:])
	}
	reg, err := json.Marshal(map[string]any{"command": s.Command, "binary": s.Binary, "layers": layers})
	if err != nil {
		return nil, err
	}
	canon, err := approval.Canonicalize(reg)
	if err != nil {
		return nil, err
	}
	d := sha256.Sum256(canon)
	s.Registration = hex.EncodeToString(d[:])
	return s, nil
}

// hookPart returns the canonical hook-related members of a settings file,
// and false when it registers nothing. A file that is not a JSON object (a
// TOML config, a file mid-edit) counts whole: any change to it may change
// the hooks.
func hookPart(path string, data []byte) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if strings.HasSuffix(path, ".json") && json.Unmarshal(data, &m) == nil {
		part := map[string]json.RawMessage{}
		for _, k := range hookMembers {
			if v, ok := m[k]; ok {
				part[k] = v
			}
		}
		if len(part) == 0 {
			return nil, false
		}
		b, _ := json.Marshal(part)
		if c, err := approval.Canonicalize(b); err == nil {
			return c, true
		}
		return b, true
	}
	d := sha256.Sum256(data)
	b, _ := json.Marshal("sha256:" + hex.EncodeToString(d[:]))
	return b, true
}

// fileSHA256 hashes a regular file by streaming it.
func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	d := sha256.New()
	if _, err := io.Copy(d, io.LimitReader(f, 1<<30)); err != nil {
		return "", err
	}
	return hex.EncodeToString(d.Sum(nil)), nil
}

// Session-start verdicts.
const (
	SessionFirst    = "first"    // no earlier accepted snapshot: this one is the baseline
	SessionSame     = "same"     // the registration is the one last accepted
	SessionAccepted = "accepted" // changed, accepted (self-mod not in gate mode)
	// VerdictApproved: changed, accepted with the owner's approval.
	// policy.VerdictDeny: changed, not accepted (self-mod gates, no approval).
)

// sessionRecord is the outcome of a session-start receipt.
type sessionRecord struct {
	Snapshot
	Event   string   `json:"event"`
	Source  string   `json:"source,omitempty"`
	Project string   `json:"project,omitempty"`
	Changes []string `json:"changes,omitempty"`
	Since   int64    `json:"since_seq,omitempty"` // the accepted receipt compared with
}

func (h *Hook) projectDir(c *Call) string {
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" && filepath.IsAbs(d) && h.format() == Claude {
		return filepath.Clean(d)
	}
	return c.Cwd
}

// sessionStart records the session's snapshot and reports what changed
// since the last accepted one.
func (h *Hook) sessionStart(c *Call) (Answer, error) {
	pol, err := h.readPolicy()
	h.pol = pol
	if err != nil {
		return Answer{}, err
	}
	project := h.projectDir(c)
	snap, err := h.TakeSnapshot(project)
	if err != nil {
		return Answer{}, err
	}
	prev, prevSeq, err := h.lastAccepted()
	if err != nil {
		return Answer{}, err
	}
	rec := sessionRecord{Snapshot: *snap, Event: orDefault(c.EventName, "SessionStart"), Source: c.Source, Project: project, Since: prevSeq}
	r := receipt.Receipt{Kind: receipt.KindSessionStart, Time: h.now().UTC(), Session: c.SessionID}
	var a Answer
	switch {
	case prev == nil:
		r.Verdict, r.Reason = SessionFirst, "first session snapshot: registration sha256 "+snap.Registration
	case prev.Registration == snap.Registration && maps(prev.Files, snap.Files):
		r.Verdict, r.Reason = SessionSame, "registration unchanged since seq "+fmt.Sprint(prevSeq)
	default:
		rec.Changes = changes(prev, snap)
		what := strings.Join(rec.Changes, "; ")
		r.Reason = "changed since seq " + fmt.Sprint(prevSeq) + ": " + what
		msg := fmt.Sprintf("fixrail: the hook registration or its settings changed since the last accepted session (receipt %d): %s", prevSeq, what)
		switch {
		case prev.Registration == snap.Registration:
			r.Verdict = SessionAccepted
			msg += ". The hooks themselves are unchanged."
		case pol.Mode(policy.SelfMod) != policy.Gate:
			r.Verdict = SessionAccepted
			msg += ". self-mod is not in gate mode, so the new registration is accepted; check it is yours."
		default:
			verdict, more, err := h.acceptRegistration(snap, project)
			if err != nil {
				return Answer{}, err
			}
			r.Verdict = verdict
			msg += more
		}
		r.Rule = string(policy.SelfMod)
		a = Answer{Message: msg, Context: msg}
	}
	out, err := jsonMarshal(rec)
	if err != nil {
		return Answer{}, err
	}
	r.Outcome = out
	r.Reason = h.redactText(r.Reason)
	if err := h.record(r); err != nil {
		a.Message = strings.TrimLeft(a.Message+"\nfixrail hook: session receipt not written: "+err.Error(), "\n")
	}
	return a, nil
}

// acceptRegistration is the token layer for a changed registration under a
// gating self-mod: an approval of this exact snapshot accepts it, once;
// otherwise the pending request is printed and the snapshot is not accepted.
func (h *Hook) acceptRegistration(snap *Snapshot, project string) (verdict, msg string, err error) {
	// What is approved is the registration, not the file list: files that
	// are absent (another HOME's, say) or register nothing stay out, so the
	// approval matches the next session that starts with these hooks.
	in, err := json.Marshal(map[string]any{
		"registration_sha256": snap.Registration, "hooks": snap.Hooks, "command": snap.Command, "binary_sha256": snap.Binary,
	})
	if err != nil {
		return "", "", err
	}
	rule := string(policy.SelfMod)
	callKey, err := approval.CallKey(RegistrationTool, in, project, rule)
	if err != nil {
		return "", "", err
	}
	now := h.now()
	if _, terr := h.takeToken(callKey, now); terr == nil {
		return VerdictApproved, " The owner approved this registration; it is accepted.", nil
	} else if !errors.Is(terr, approval.ErrNoToken) {
		msg = fmt.Sprintf(" The approval presented was rejected and deleted: %v.", terr)
	}
	req, path, perr := h.pending(&Call{Tool: RegistrationTool, Input: in, Cwd: project}, rule, callKey, now)
	if req == nil {
		return policy.VerdictDeny, msg + fmt.Sprintf(" It cannot be approved (%v).", perr), nil
	}
	msg += " self-mod is in gate mode: the new registration is NOT accepted until the owner approves it, and every session reports it until then. If the change is yours, sign it outside the agent:\n  fixrail approve " + callKey
	if perr == nil {
		msg += fmt.Sprintf("\nor\n  ssh-keygen -Y sign -n %s -f <approval key> %s", approval.Namespace, path)
	}
	msg += "\nthen start a new session. If it is not yours, inspect the files named above before running anything."
	return policy.VerdictDeny, msg, nil
}

// lastAccepted returns the snapshot of the last session-start receipt that
// accepted its registration, and that receipt's seq.
func (h *Hook) lastAccepted() (*Snapshot, int64, error) {
	rs, err := h.log().Read()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read the receipts for the last session snapshot: %w", err)
	}
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if r.Kind != receipt.KindSessionStart || r.Verdict == policy.VerdictDeny {
			continue
		}
		var rec sessionRecord
		if err := json.Unmarshal(r.Outcome, &rec); err != nil || rec.Registration == "" {
			continue
		}
		return &rec.Snapshot, r.Seq, nil
	}
	return nil, 0, nil
}

// maps reports whether two snapshots' files agree; a file one of them does
// not list counts as absent (another HOME names other absent files).
func maps(a, b map[string]string) bool {
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if fileState(a, k) != fileState(b, k) {
				return false
			}
		}
	}
	return true
}

func fileState(m map[string]string, p string) string {
	if v, ok := m[p]; ok {
		return v
	}
	return "absent"
}

// changes describes what differs between two snapshots, file by file.
func changes(prev, cur *Snapshot) []string {
	var out []string
	var paths []string
	for p := range cur.Files {
		paths = append(paths, p)
	}
	for p := range prev.Files {
		if _, ok := cur.Files[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		was, is := fileState(prev.Files, p), fileState(cur.Files, p)
		if was == is {
			continue
		}
		hooks := ""
		if prev.Hooks[p] != cur.Hooks[p] {
			hooks = " (its hooks changed)"
		}
		switch {
		case was == "absent":
			out = append(out, p+" appeared"+hooks)
		case is == "absent":
			out = append(out, p+" was removed"+hooks)
		default:
			out = append(out, p+" changed"+hooks)
		}
	}
	if !slices.Equal(prev.Command, cur.Command) {
		out = append(out, fmt.Sprintf("the hook's command line changed (%s)", strings.Join(cur.Command, " ")))
	}
	if prev.Binary != cur.Binary {
		out = append(out, "the hook binary changed (sha256 "+cur.Binary[:min(16, len(cur.Binary))]+"…)")
	}
	if len(out) == 0 {
		out = append(out, "the registration hash changed")
	}
	return out
}

// sessionEnd writes the session's closing receipt, with the registration as
// it stands at the end (a change during the session shows against the
// start's).
func (h *Hook) sessionEnd(c *Call) (Answer, error) {
	h.pol, _ = h.readPolicy()
	rec := map[string]any{"event": orDefault(c.EventName, "SessionEnd")}
	if c.Reason != "" {
		rec["reason"] = c.Reason
	}
	if snap, err := h.TakeSnapshot(h.projectDir(c)); err == nil {
		rec["registration_sha256"] = snap.Registration
	} else {
		rec["snapshot_error"] = err.Error()
	}
	out, err := jsonMarshal(rec)
	if err != nil {
		return Answer{}, err
	}
	r := receipt.Receipt{Kind: receipt.KindSessionEnd, Time: h.now().UTC(), Session: c.SessionID, Verdict: VerdictRecorded,
		Reason: h.redactText("session ended: " + orDefault(c.Reason, "unknown reason")), Outcome: out}
	return Answer{}, h.record(r)
}
