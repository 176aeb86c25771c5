package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Mode is what a rule does when it matches: gate denies the call until an
// approval is presented, warn lets it run and leaves a receipt, off ignores it.
type Mode string

// The three modes a policy file may set.
const (
	Gate Mode = "gate"
	Warn Mode = "warn"
	Off  Mode = "off"
)

// Rule names one kind of consequential action. The logic of every rule lives
// in this package; a policy file only chooses its Mode.
type Rule string

// The rule catalogue.
const (
	SelfMod         Rule = "self-mod"
	PushForce       Rule = "push-force"
	PushProtected   Rule = "push-protected"
	Publish         Rule = "publish"
	EgressOther     Rule = "egress-other"
	Destructive     Rule = "destructive"
	ScopeEscalation Rule = "scope-escalation"
	Spend           Rule = "spend"

	// The consequential moves peer guards block by default. They start in
	// warn: each would cost signings a day in gate (see README, "Rules that
	// start in warn").
	Discard      Rule = "discard"       // uncommitted work a checkout, restore or reset --merge overwrites
	Teardown     Rule = "teardown"      // infrastructure destroyed or changed without review
	DataDrop     Rule = "data-drop"     // databases, framework resets, container volumes
	BranchDelete Rule = "branch-delete" // deleting a remote branch
	HistoryPrune Rule = "history-prune" // removing what recovery from a mistake needs
)

// Rules lists every rule in a fixed order; reports and tests follow it.
var Rules = []Rule{SelfMod, PushForce, PushProtected, Publish, EgressOther, Destructive, ScopeEscalation,
	Discard, Teardown, DataDrop, BranchDelete, HistoryPrune, Spend}

// DefaultModes returns the modes used for rules a policy file does not name:
// self-mod gates, spend is off (it cannot be told from a call's shape) and
// every other rule warns.
func DefaultModes() map[Rule]Mode {
	m := make(map[Rule]Mode, len(Rules))
	for _, r := range Rules {
		m[r] = Warn
	}
	m[SelfMod] = Gate
	m[Spend] = Off
	return m
}

// When receipts are forced to disk (policy.json's "receipts": {"sync": …}).
const (
	// SyncFlagged, the default, fsyncs every receipt except allow decisions
	// and outcomes: a power loss may drop the last seconds of calls no rule
	// flagged, never a warning, a denial, an approval or an engine error
	// (an fsync also carries every earlier line to disk).
	SyncFlagged = "flagged"
	// SyncAll fsyncs every receipt before the call is answered.
	SyncAll = "all"
)

// Policy holds the mode of each rule and the receipts' durability.
type Policy struct {
	Modes       map[Rule]Mode
	ReceiptSync string // SyncFlagged or SyncAll
}

// Default returns the policy used when no policy file exists.
func Default() *Policy { return &Policy{Modes: DefaultModes(), ReceiptSync: SyncFlagged} }

// Load reads a policy file of the form
//
//	{"modes": {"<rule>": "gate"|"warn"|"off"}, "receipts": {"sync": "flagged"|"all"}}
//
// A missing file yields the default policy; rules the file does not name keep
// their default mode. An unknown rule, an unknown mode, an unknown field or
// trailing data is an error, so a typo never silently weakens the policy.
func Load(path string) (*Policy, error) {
	data, err := pathguard.ReadRegular(path, maxPolicyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("load policy %s: %w", path, err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load policy %s: %w", path, err)
	}
	return p, nil
}

// maxPolicyFile bounds policy.json: a few hundred bytes in practice.
const maxPolicyFile = 1 << 20

// Parse decodes the contents of a policy file; see Load.
func Parse(data []byte) (*Policy, error) {
	var raw struct {
		Modes    map[string]string `json:"modes"`
		Receipts *struct {
			Sync string `json:"sync"`
		} `json:"receipts"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("parse policy: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("parse policy: trailing data after the JSON object")
	}
	p := Default()
	for name, mode := range raw.Modes {
		r := Rule(name)
		if !knownRule(r) {
			return nil, fmt.Errorf("parse policy: unknown rule %q", name)
		}
		switch m := Mode(mode); m {
		case Gate, Warn, Off:
			p.Modes[r] = m
		default:
			return nil, fmt.Errorf("parse policy: unknown mode %q for rule %q", mode, name)
		}
	}
	if raw.Receipts != nil {
		switch raw.Receipts.Sync {
		case SyncFlagged, SyncAll:
			p.ReceiptSync = raw.Receipts.Sync
		case "":
		default:
			return nil, fmt.Errorf("parse policy: unknown receipts sync %q (want %q or %q)", raw.Receipts.Sync, SyncFlagged, SyncAll)
		}
	}
	return p, nil
}

func knownRule(r Rule) bool {
	for _, k := range Rules {
		if k == r {
			return true
		}
	}
	return false
}

// Mode returns the mode of rule r. A rule missing from p.Modes takes its
// default; a rule this package does not know gates, so that a match nobody
// configured is never let through silently.
func (p *Policy) Mode(r Rule) Mode {
	if p != nil {
		if m, ok := p.Modes[r]; ok {
			return m
		}
	}
	if m, ok := DefaultModes()[r]; ok {
		return m
	}
	return Gate
}

// Verdicts a Decision can carry.
const (
	VerdictAllow = "allow"
	VerdictWarn  = "warn"
	VerdictDeny  = "deny"
)

// Decision is the policy's answer for one call.
type Decision struct {
	Verdict string  // VerdictAllow, VerdictWarn or VerdictDeny
	Matches []Match // the matches whose rule is not off, in input order
	Gated   []Match // the subset of Matches whose rule is in gate mode
}

// Decide applies the modes to the matches Analyze found. Any match of a
// gate-mode rule denies (presenting an approval is the hook's business, not
// the policy's); otherwise any match of a warn-mode rule warns; otherwise the
// call is allowed. An Unresolvable match counts exactly like a match: a gate
// rule that cannot tell whether it applies denies.
func (p *Policy) Decide(ms []Match) Decision {
	d := Decision{Verdict: VerdictAllow}
	for _, m := range ms {
		switch p.Mode(m.Rule) {
		case Off:
			continue
		case Gate:
			d.Gated = append(d.Gated, m)
		}
		d.Matches = append(d.Matches, m)
	}
	switch {
	case len(d.Gated) > 0:
		d.Verdict = VerdictDeny
	case len(d.Matches) > 0:
		d.Verdict = VerdictWarn
	}
	return d
}
