package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/policy"
	"github.com/fixrail/fixrail/internal/receipt"
)

// The request path: an agent asks, before it acts, whether one exact call
// needs an approval, and has the pending request written for the owner to
// sign (fixrail mcp serves it). It changes nothing about enforcement: the
// hook still decides the call when it is made, and presents the approval
// then. It only saves the agent a denied round trip.

// Verdicts of request receipts.
const (
	RequestNotGated = "not-gated" // the policy would not gate the call: no approval needed
	RequestPending  = "pending"   // the call is gated and its request waits for the owner's signature
	RequestApproved = "approved"  // an approval the hook would accept exists now
	RequestNone     = "none"      // status: gated, and no valid approval exists yet
)

// A RequestAnswer is what the request path says about one call.
type RequestAnswer struct {
	Verdict string // one of the Request* verdicts
	// Decision is policy's verdict for the call as it stands: allow, warn
	// or deny (a gate-mode rule matches).
	Decision string
	Rule     string // the gate rules, comma-joined (the approval's rule field); the warn rules when not gated
	Reasons  string
	CallKey  string
	// Request is the canonical request (RFC 8785) the owner signs, and
	// Digest its SHA-256; empty when the call is not gated.
	Request     string
	Digest      string
	PendingPath string
	Expires     time.Time
	// Commands are the ways to sign, to show the user.
	Commands []string
	// Problem says why an approval was rejected or a request not saved.
	Problem string
}

// RequestApproval answers the request path's "please approve this call":
// when the policy gates the call it writes (or reuses, as a denial would)
// the pending request and returns it with the signing commands. The answer
// is receipted.
func (h *Hook) RequestApproval(session, tool string, input json.RawMessage, cwd string) (*RequestAnswer, error) {
	return h.inquire("request_approval", session, tool, input, cwd, true)
}

// ApprovalStatus answers "is there an approval for this call now": it
// verifies a token without spending it (approval.Store.Peek). The answer is
// receipted.
func (h *Hook) ApprovalStatus(session, tool string, input json.RawMessage, cwd string) (*RequestAnswer, error) {
	return h.inquire("approval_status", session, tool, input, cwd, false)
}

func (h *Hook) inquire(asked, session, tool string, input json.RawMessage, cwd string, write bool) (*RequestAnswer, error) {
	if h.SetupErr != nil {
		return nil, h.SetupErr
	}
	if !filepath.IsAbs(h.Home) {
		return nil, fmt.Errorf("fixrail home %q is not an absolute path", h.Home)
	}
	if tool == "" {
		return nil, errors.New("no tool named")
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("cwd %q is not an absolute path", cwd)
	}
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	pol, err := h.readPolicy()
	h.pol = pol
	if err != nil {
		return nil, err
	}
	env := h.Env
	if env.FixrailHome == "" {
		env.FixrailHome = h.Home
	}
	ms, err := policy.Analyze(policy.Call{Tool: tool, Input: input, Cwd: cwd}, env)
	if err != nil {
		return nil, err
	}
	d := pol.Decide(ms)
	a := &RequestAnswer{Decision: d.Verdict}
	now := h.now()
	if d.Verdict != policy.VerdictDeny {
		a.Verdict, a.Rule, a.Reasons = RequestNotGated, ruleKey(d.Matches), reasons(d.Matches)
		return a, h.requestReceipt(asked, session, tool, input, a)
	}
	a.Rule, a.Reasons = ruleKey(d.Gated), reasons(d.Gated)
	if a.CallKey, err = approval.CallKey(tool, input, cwd, a.Rule); err != nil {
		return nil, err
	}
	s := h.store()
	kr, kerr := h.loadKeys()
	var tok *approval.Token
	if kerr == nil {
		tok, err = s.Peek(a.CallKey, kr, now)
	} else {
		err = kerr
	}
	switch {
	case err == nil:
		a.Verdict = RequestApproved
		h.fillRequest(a, &tok.Request, s.PendingPath(a.CallKey))
		return a, h.requestReceipt(asked, session, tool, input, a)
	case kerr != nil:
		a.Problem = "the approvers' keys cannot be read, so no approval can be checked: " + kerr.Error()
	case !errors.Is(err, approval.ErrNoToken):
		a.Problem = "an approval exists but the hook would reject it: " + err.Error()
	}
	if !write {
		a.Verdict = RequestNone
		if r, err := s.Pending(a.CallKey); err == nil {
			h.fillRequest(a, r, s.PendingPath(a.CallKey))
		}
		return a, h.requestReceipt(asked, session, tool, input, a)
	}
	c := &Call{Tool: tool, Input: input, Cwd: cwd}
	r, path, perr := h.pending(c, a.Rule, a.CallKey, now)
	if r == nil {
		return nil, perr
	}
	if perr != nil {
		a.Problem = strings.TrimPrefix(a.Problem+"; the request could not be saved: "+perr.Error(), "; ")
	}
	a.Verdict = RequestPending
	h.fillRequest(a, r, path)
	return a, h.requestReceipt(asked, session, tool, input, a)
}

func (h *Hook) fillRequest(a *RequestAnswer, r *approval.Request, path string) {
	canon, err := r.Canonical()
	if err != nil {
		return
	}
	a.Request, a.Digest, a.Expires = string(canon), r.Digest(), r.Expires.UTC()
	a.Commands = []string{"fixrail approve " + a.CallKey}
	if path != "" {
		a.PendingPath = path
		a.Commands = append(a.Commands, fmt.Sprintf("ssh-keygen -Y sign -n %s -f <approval key> %s", approval.Namespace, path))
	}
}

// requestReceipt records one request-path answer: the call asked about
// (redacted), what the path said and the request's digest.
func (h *Hook) requestReceipt(asked, session, tool string, input json.RawMessage, a *RequestAnswer) error {
	why := asked + ": " + a.Verdict
	if a.Digest != "" {
		why += "; request sha256 " + a.Digest
	}
	if a.Reasons != "" {
		why += "; " + a.Reasons
	}
	if a.Problem != "" {
		why += "; " + a.Problem
	}
	r := receipt.Receipt{
		Kind: receipt.KindRequest, Time: h.now().UTC(), Session: session, Tool: tool,
		Rule: a.Rule, Verdict: a.Verdict, Reason: h.redactText(why), Input: h.receiptInput(input),
	}
	return h.record(r)
}
