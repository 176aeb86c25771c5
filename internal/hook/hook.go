package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/receipt"
)

// DefaultTTL is how long a pending approval request stays signable, and so
// how long an approval made from it may wait for its call.
const DefaultTTL = 30 * time.Minute

// reuseMargin is how much life a pending request must have left to be
// printed again instead of replaced: the owner needs time to sign it.
const reuseMargin = 2 * time.Minute

// Files and directories under $FIXRAIL_HOME.
const (
	PolicyFile   = "policy.json"     // rule modes (policy.Load)
	KeysDir      = "keys"            // approvers' public keys (see Hook.Keys)
	ApprovalsDir = "approvals"       // pending requests, tokens, spent nonces (approval.Store)
	ReceiptsFile = "receipts.ndjson" // the hash-chained receipt log (receipt.Log)
)

// Receipt verdicts beyond policy's allow, warn and deny.
const (
	// VerdictApproved: a gate-mode rule matched and a valid signed approval
	// let the call run once.
	VerdictApproved = "approved"
	// VerdictRecorded marks an outcome receipt.
	VerdictRecorded = "recorded"
)

// A Redactor scrubs secrets from text before it is written to a receipt. An
// error means the text could not be scrubbed; the receipt then withholds it.
type Redactor interface {
	Redact(s string) (string, error)
}

// RedactorFunc adapts a function to Redactor.
type RedactorFunc func(s string) (string, error)

// Redact calls f.
func (f RedactorFunc) Redact(s string) (string, error) { return f(s) }

// Hook is one configured hook process: the protocol it speaks, where its
// state lives and how it fails. The zero value is not usable; set at least
// Home.
type Hook struct {
	Format Format // default Claude
	Event  Event  // assumed when the input names no event; default Pre
	// Home is $FIXRAIL_HOME: policy.json, keys/, approvals/, receipts.ndjson.
	Home string
	// Env describes the agent's machine for the policy. Its FixrailHome is
	// set to Home when empty, so self-mod protects the directory this hook
	// reads.
	Env policy.Env
	// Phase, when set, makes this the pipeline's phase hook: only the
	// phase's tools and paths are allowed, there are no approvals, and every
	// error denies. Nil is the user's hook, whose engine errors allow.
	Phase *Phase
	// ReceiptLog overrides Home/receipts.ndjson.
	ReceiptLog string
	// TTL of new pending requests; DefaultTTL when zero.
	TTL time.Duration
	// Keys loads the approvers' keys from dir ($FIXRAIL_HOME/keys) as the
	// verifier of their signatures. The composition root chooses it: the
	// keyring in process (package keys), or, in the slim binary that links
	// no signature code, the fixrail binary beside it. Nil verifies nothing:
	// every approval is rejected.
	Keys func(dir string) (approval.Verifier, error)
	// NewRedactor builds the redactor the first time a receipt is written.
	// Nil, or an error from it, withholds every input and reason from the
	// receipts instead of writing them unredacted.
	NewRedactor func() (Redactor, error)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// SnapshotFiles are settings files a session snapshot covers besides
	// the agent CLI's own layers: a --settings file, say.
	SnapshotFiles []string
	// Command and Executable are the hook's command line and binary, part
	// of a session snapshot; os.Args and os.Executable when empty.
	Command    []string
	Executable string
	// SetupErr is a configuration error found before Run (say, no way to
	// locate $FIXRAIL_HOME). Run answers every tool event with it as an
	// engine error, under the hook's posture.
	SetupErr error

	// Test seams: fault injection for the posture tests.
	loadPolicy func(path string) (*policy.Policy, error)
	analyze    func(c policy.Call, env policy.Env) ([]policy.Match, error)
	take       func(s *approval.Store, callKey string, k approval.Verifier, now time.Time) (*approval.Token, error)
	appendTo   func(l *receipt.Log, r receipt.Receipt, sync bool) error
	lockWait   time.Duration // receipt.DefaultLockWait when zero

	// pol is the policy this call was decided under; nil until it is
	// loaded, or when it cannot be.
	pol *policy.Policy

	redactOnce sync.Once
	redactor   Redactor
	redactErr  error
}

func (h *Hook) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Hook) ttl() time.Duration {
	if h.TTL > 0 {
		return h.TTL
	}
	return DefaultTTL
}

func (h *Hook) format() Format {
	if h.Format == "" {
		return Claude
	}
	return h.Format
}

// errNoVerifier is Keys left nil: a hook built without a way to check a
// signature rejects every approval rather than trusting one.
var errNoVerifier = errors.New("this hook has no verifier of approval signatures")

func (h *Hook) loadKeys() (approval.Verifier, error) {
	if h.Keys == nil {
		return nil, errNoVerifier
	}
	return h.Keys(filepath.Join(h.Home, KeysDir))
}

func (h *Hook) store() *approval.Store {
	return &approval.Store{Dir: filepath.Join(h.Home, ApprovalsDir)}
}

func (h *Hook) log() *receipt.Log {
	if h.ReceiptLog != "" {
		return &receipt.Log{Path: h.ReceiptLog, LockWait: h.lockWait}
	}
	if !filepath.IsAbs(h.Home) {
		// Never a path relative to the agent's working directory.
		return &receipt.Log{Path: ""}
	}
	return &receipt.Log{Path: filepath.Join(h.Home, ReceiptsFile), LockWait: h.lockWait}
}

// Run handles one hook invocation: it decodes the harness's JSON from stdin,
// decides, appends receipts and answers on stdout/stderr in the hook's
// format. It returns the process exit code, ExitAllow or ExitBlock, and
// never panics.
//
// Posture: as the user's hook (Phase nil) an engine error — input that
// cannot be decoded or analysed, an unreadable policy, a panic — lets the
// call run (exit 0) with a message on stderr and a best-effort engine-error
// receipt, so a fixrail bug never bricks every tool call. The token layer is
// not the engine: a gate-mode match without a valid approval denies whatever
// went wrong while looking for one. As the phase hook every error denies.
func (h *Hook) Run(stdin io.Reader, stdout, stderr io.Writer) (code int) {
	ev := h.Event
	if ev == "" {
		ev = Pre
	}
	var call *Call
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("panic: %v\n%s", r, firstFrames(debug.Stack(), 12))
			code = h.engineError(call, ev, err, stdout, stderr)
		}
	}()
	c, err := Decode(stdin, ev)
	if err != nil {
		return h.engineError(nil, ev, err, stdout, stderr)
	}
	call = c
	if h.SetupErr == nil && !filepath.IsAbs(h.Home) {
		h.SetupErr = fmt.Errorf("fixrail home %q is not an absolute path", h.Home)
	}
	if h.SetupErr != nil && c.Event != "" {
		return h.engineError(c, c.Event, h.SetupErr, stdout, stderr)
	}
	if c.Event == "" {
		// Not a tool event: nothing to decide or record.
		return Encode(stdout, stderr, h.format(), Post, Answer{})
	}
	ev = c.Event
	var a Answer
	switch c.Event {
	case Post:
		a, err = h.outcome(c)
	case SessionStart:
		a, err = h.sessionStart(c)
	case SessionEnd:
		a, err = h.sessionEnd(c)
	default:
		a, err = h.decide(c)
	}
	if err != nil {
		return h.engineError(c, ev, err, stdout, stderr)
	}
	return Encode(stdout, stderr, h.format(), c.Event, a)
}

// firstFrames keeps the head of a stack trace: enough to find the bug,
// short enough for a hook message.
func firstFrames(stack []byte, lines int) string {
	s := strings.Split(strings.TrimSpace(string(stack)), "\n")
	if len(s) > lines {
		s = s[:lines]
	}
	return strings.Join(s, "\n")
}

// engineError applies the posture to an error the engine could not decide
// past, writes the best-effort receipt and answers. It must not panic: it
// runs inside Run's recover.
func (h *Hook) engineError(c *Call, ev Event, err error, stdout, stderr io.Writer) (code int) {
	block := h.Phase != nil && ev == Pre
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "fixrail hook: engine error while reporting an engine error: %v\n", r)
			code = ExitAllow
			if block {
				code = ExitBlock
			}
		}
	}()
	verdict, effect := policy.VerdictAllow, "the call is allowed (the user hook fails open; see fixrail's README, Postures)"
	if block {
		verdict, effect = policy.VerdictDeny, "the call is blocked (the phase hook fails closed)"
	}
	switch ev {
	case Post:
		effect = "its outcome was not recorded"
	case SessionStart, SessionEnd:
		effect = "the session receipt was not recorded"
	}
	msg := fmt.Sprintf("fixrail hook: engine error, %s: %v", effect, err)
	r := receipt.Receipt{Kind: receipt.KindEngineError, Time: h.now().UTC(), Verdict: verdict, Reason: h.redactText(err.Error())}
	if c != nil {
		r.ToolUseID, r.Session, r.Tool = c.ToolUseID, c.SessionID, c.Tool
	}
	if rerr := h.record(r); rerr != nil {
		msg += fmt.Sprintf("\nfixrail hook: the engine-error receipt was not written either: %v", rerr)
	}
	return Encode(stdout, stderr, h.format(), ev, Answer{Block: block, Message: msg})
}

// decide answers a Pre event.
func (h *Hook) decide(c *Call) (Answer, error) {
	pol, err := h.readPolicy()
	h.pol = pol
	if err != nil {
		return Answer{}, err
	}
	if h.Phase != nil {
		if why := h.Phase.check(c); why != "" {
			msg := fmt.Sprintf("fixrail: blocked %s in the %s phase: %s", c.Tool, h.Phase.Name, why)
			return h.answer(c, receipt.Receipt{Verdict: policy.VerdictDeny, Rule: "phase-" + h.Phase.Name, Reason: why},
				Answer{Block: true, Message: msg})
		}
	}
	env := h.Env
	if env.FixrailHome == "" {
		env.FixrailHome = h.Home
	}
	analyze := policy.Analyze
	if h.analyze != nil {
		analyze = h.analyze
	}
	ms, err := analyze(policy.Call{Tool: c.Tool, Input: c.Input, Cwd: c.Cwd}, env)
	if err != nil {
		return Answer{}, err
	}
	d := pol.Decide(ms)
	switch d.Verdict {
	case policy.VerdictAllow:
		return h.answer(c, receipt.Receipt{Verdict: policy.VerdictAllow}, Answer{})
	case policy.VerdictWarn:
		why := reasons(d.Matches)
		msg := fmt.Sprintf("fixrail: warning (%s, mode warn; the call runs and is receipted): %s", ruleKey(d.Matches), why)
		return h.answer(c, receipt.Receipt{Verdict: policy.VerdictWarn, Rule: ruleKey(d.Matches), Reason: why}, Answer{Message: msg})
	}
	if h.Phase != nil {
		why := reasons(d.Gated)
		msg := fmt.Sprintf("fixrail: blocked %s in the %s phase: %s (%s, mode gate; no approvals in a phase)", c.Tool, h.Phase.Name, why, ruleKey(d.Gated))
		return h.answer(c, receipt.Receipt{Verdict: policy.VerdictDeny, Rule: ruleKey(d.Gated), Reason: why}, Answer{Block: true, Message: msg})
	}
	return h.gate(c, d)
}

// readPolicy loads $FIXRAIL_HOME/policy.json (the defaults when it does not
// exist).
func (h *Hook) readPolicy() (*policy.Policy, error) {
	if h.loadPolicy != nil {
		return h.loadPolicy(filepath.Join(h.Home, PolicyFile))
	}
	return policy.Load(filepath.Join(h.Home, PolicyFile))
}

// answer writes the decision receipt for c and returns a. A receipt that
// cannot be written does not change a user hook's decision (a deny stays a
// deny, an allow an allow) but is reported; in a phase hook it is an error,
// and errors deny.
func (h *Hook) answer(c *Call, r receipt.Receipt, a Answer) (Answer, error) {
	r.Kind, r.Time = receipt.KindDecision, h.now().UTC()
	r.ToolUseID, r.Session, r.Tool = c.ToolUseID, c.SessionID, c.Tool
	r.Reason = h.redactText(r.Reason)
	r.Input = h.receiptInput(c.Input)
	if err := h.record(r); err != nil {
		if h.Phase != nil {
			return Answer{}, err
		}
		a.Message = strings.TrimLeft(a.Message+"\nfixrail hook: receipt not written: "+err.Error(), "\n")
	}
	return a, nil
}

// ruleKey names the rules of ms: sorted, unique, comma-joined. For a gated
// call it is the rule field of the approval request, so one signature
// covers every gate rule the call triggers, and a call that later triggers
// another gate rule needs a new one.
func ruleKey(ms []policy.Match) string {
	var rules []string
	for _, m := range ms {
		rules = append(rules, string(m.Rule))
	}
	slices.Sort(rules)
	return strings.Join(slices.Compact(rules), ",")
}

// reasons joins the distinct reasons of ms, unresolvable ones marked.
func reasons(ms []policy.Match) string {
	var out []string
	for _, m := range ms {
		s := string(m.Rule) + ": " + m.Reason
		if m.Unresolvable {
			s += " (unresolvable: decided as a match)"
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// gate handles a call that gate-mode rules deny: it looks for a signed
// approval and lets the call run once if there is a valid one; otherwise it
// denies and prints the request to sign. Every failure here denies.
func (h *Hook) gate(c *Call, d policy.Decision) (Answer, error) {
	rule := ruleKey(d.Gated)
	why := reasons(d.Gated)
	if len(d.Matches) > len(d.Gated) {
		why = reasons(d.Matches)
	}
	head := fmt.Sprintf("fixrail: blocked %s (%s, mode gate): %s", c.Tool, rule, why)
	now := h.now()

	callKey, err := approval.CallKey(c.Tool, c.Input, c.Cwd, rule)
	if err != nil {
		msg := head + "\nThis call cannot be approved (" + err.Error() + "); change the call or the policy."
		return h.answer(c, receipt.Receipt{Verdict: policy.VerdictDeny, Rule: rule, Reason: why + "; not approvable: " + err.Error()},
			Answer{Block: true, Message: msg})
	}
	tok, terr := h.takeToken(callKey, now)
	if terr == nil {
		digest := tok.Request.Digest()
		msg := fmt.Sprintf("fixrail: %s approved by a signed request (sha256 %.16s…), once: %s", rule, digest, why)
		return h.answer(c, receipt.Receipt{Verdict: VerdictApproved, Rule: rule, Reason: why + "; approval sha256 " + digest},
			Answer{Message: msg})
	}

	var b strings.Builder
	b.WriteString(head)
	reason := why
	if !errors.Is(terr, approval.ErrNoToken) {
		fmt.Fprintf(&b, "\nThe approval presented was rejected and deleted: %v", terr)
		reason += "; approval rejected: " + terr.Error()
	}
	req, path, perr := h.pending(c, rule, callKey, now)
	switch {
	case req == nil:
		fmt.Fprintf(&b, "\nThis call cannot be approved (%v); change the call or the policy.", perr)
		reason += "; not approvable: " + perr.Error()
	default:
		canon, _ := req.Canonical() // NewRequest or Pending validated it
		fmt.Fprintf(&b, "\nTo let this exact call run once (approval valid until %s), the owner signs the request with the approval key, outside the agent:", req.Expires.UTC().Format(time.RFC3339))
		fmt.Fprintf(&b, "\n  fixrail approve %s", callKey)
		if perr == nil {
			fmt.Fprintf(&b, "\nor\n  ssh-keygen -Y sign -n %s -f <approval key> %s", approval.Namespace, path)
		} else {
			fmt.Fprintf(&b, "\n(the request could not be saved, so it cannot be signed yet: %v)", perr)
			reason += "; pending request not saved: " + perr.Error()
		}
		fmt.Fprintf(&b, "\nRequest (RFC 8785 JSON, sha256 %s):\n%s", req.Digest(), canon)
		b.WriteString("\nThen retry the identical call. Agent: you cannot approve this yourself; ask the user.")
	}
	return h.answer(c, receipt.Receipt{Verdict: policy.VerdictDeny, Rule: rule, Reason: reason}, Answer{Block: true, Message: b.String()})
}

// takeToken is the token layer: load the keyring, then take, verify and
// spend the call's approval. Any failure, a panic included, is an error, and
// the caller denies.
func (h *Hook) takeToken(callKey string, now time.Time) (tok *approval.Token, err error) {
	defer func() {
		if r := recover(); r != nil {
			tok, err = nil, fmt.Errorf("internal error while checking the approval: %v", r)
		}
	}()
	kr, err := h.loadKeys()
	if err != nil {
		return nil, err
	}
	take := (*approval.Store).Take
	if h.take != nil {
		take = h.take
	}
	return take(h.store(), callKey, kr, now)
}

// pending returns the request the owner should sign for the call: the
// unexpired one a previous denial saved, so that a signature already being
// made stays valid, or a new one. path is where it is saved. When saving
// fails the request is still returned, with the error; when none can be
// made at all req is nil.
func (h *Hook) pending(c *Call, rule, callKey string, now time.Time) (req *approval.Request, path string, err error) {
	s := h.store()
	path = s.PendingPath(callKey)
	if r, err := s.Pending(callKey); err == nil && r.Expires.After(now.Add(reuseMargin)) {
		return r, path, nil
	}
	r, err := approval.NewRequest(c.Tool, c.Input, c.Cwd, rule, h.ttl(), now)
	if err != nil {
		return nil, "", err
	}
	if _, err := s.SavePending(r); err != nil {
		return r, "", err
	}
	return r, path, nil
}

// outcome answers a Post event: an outcome receipt joined to the decision
// by tool_use_id. It holds hashes and sizes, not the output itself.
func (h *Hook) outcome(c *Call) (Answer, error) {
	// Only for receipts.sync: an unreadable policy leaves h.pol nil, and
	// the outcome is synced.
	h.pol, _ = h.readPolicy()
	resp := c.Response
	sum := sha256.Sum256(resp)
	out := map[string]any{
		"event":           orDefault(c.EventName, "post"),
		"response_bytes":  len(resp),
		"response_sha256": hex.EncodeToString(sum[:]),
	}
	if resp == nil {
		out["response"] = "absent"
	}
	o, err := jsonMarshal(out)
	if err != nil {
		return Answer{}, err
	}
	r := receipt.Receipt{
		Kind: receipt.KindOutcome, Time: h.now().UTC(), ToolUseID: c.ToolUseID, Session: c.SessionID, Tool: c.Tool,
		Verdict: VerdictRecorded, Outcome: o,
	}
	if err := h.record(r); err != nil {
		return Answer{}, err
	}
	return Answer{}, nil
}

// record appends r to the receipt log. Whether the hook waits for the disk
// is the policy's receipts.sync: by default only allow decisions and
// outcomes skip the fsync (the larger part of a hook's own cost), so a
// power loss can drop the tail of calls no rule flagged but nothing a rule
// flagged — the fsync of a flagged receipt carries every earlier line with
// it. Without a policy (it could not be read) every receipt is synced.
func (h *Hook) record(r receipt.Receipt) error {
	sync := true
	if h.pol != nil && h.pol.ReceiptSync != policy.SyncAll {
		sync = r.Kind != receipt.KindOutcome && (r.Kind != receipt.KindDecision || r.Verdict != policy.VerdictAllow)
	}
	if h.appendTo != nil {
		return h.appendTo(h.log(), r, sync)
	}
	var err error
	if sync {
		_, err = h.log().Append(r)
	} else {
		_, err = h.log().AppendUnsynced(r)
	}
	return err
}

// HomeDir returns $FIXRAIL_HOME, or ~/.config/fixrail when it is unset, as
// an absolute path.
func HomeDir(lookup func(string) (string, bool)) (string, error) {
	if v, ok := lookup("FIXRAIL_HOME"); ok && v != "" {
		return filepath.Abs(v)
	}
	home, ok := lookup("HOME")
	if !ok || home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("FIXRAIL_HOME is unset and the home directory is unknown: %w", err)
		}
		home = h
	}
	return filepath.Abs(filepath.Join(home, ".config", "fixrail"))
}
