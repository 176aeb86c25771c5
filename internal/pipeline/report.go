package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/risk"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// Report is the run report: what `--json` prints and what is kept under
// .fixrail/runs/<run-id>.json.
type Report struct {
	RunID    string     `json:"run_id"`
	Terminal Terminal   `json:"terminal"`
	Reason   string     `json:"reason"`
	Detail   string     `json:"detail,omitempty"`
	Mode     string     `json:"mode"`
	Finding  FindingRef `json:"finding"`
	Base     string     `json:"base"`
	BaseSHA  string     `json:"base_sha"`
	Branch   string     `json:"branch,omitempty"`
	Commit   string     `json:"commit,omitempty"`
	PR       string     `json:"pr,omitempty"`
	// FixType is the fix type that took the finding.
	FixType string `json:"fix_type"`
	// Plan is what the run keeps of the plan, in the fix type's shape.
	Plan any `json:"plan,omitempty"`
	// Conclusion is the plan's answer that there was nothing to fix
	// (works-as-designed, cannot-reproduce), instead of a plan.
	Conclusion *Conclusion `json:"conclusion,omitempty"`
	// Risk is the raise-only score and its inputs: at intake, then
	// re-scored from the root cause (the later score wins).
	Risk  *risk.Score  `json:"risk,omitempty"`
	Gates []GateResult `json:"gates"`
	// Toolchains says what tests saw read-only besides their checkout
	// (and what was skipped, and why).
	Toolchains []string   `json:"toolchains,omitempty"`
	Agent      AgentUsage `json:"agent"`
	// Egress is what the sandboxed agent sent through the egress proxy;
	// absent when no agent ran sandboxed.
	Egress   *EgressUsage `json:"egress,omitempty"`
	Phases   []PhaseTime  `json:"phases"`
	Started  time.Time    `json:"started"`
	Ended    time.Time    `json:"ended"`
	Duration string       `json:"duration"`
	Log      string       `json:"event_log"`
	Warnings []string     `json:"warnings,omitempty"`
	// RailsLoosened is how the base's fixrail.yaml loosened the rails
	// since the repository's previous run (posture: the run goes on).
	RailsLoosened []string `json:"rails_loosened,omitempty"`

	// AgentOutput is the end of what the agent printed in the invocation
	// that failed (a runner-* ending, or a stop while it ran).
	AgentOutput *AgentOutput `json:"agent_output,omitempty"`
	// Charged is what the ledger charged the run; absent when the ledger
	// admitted no run (budget-exhausted, budget-unreadable, in-flight).
	Charged *Charge `json:"charged,omitempty"`
	// Retries are the attempts the run repeated, each with why: an agent
	// invocation whose channel failed (transport), or a follow-up fix after
	// the recheck's findings (recheck).
	Retries []Retry `json:"retries,omitempty"`
	// FollowUps are the commits pushed onto the draft's branch after it
	// was opened, oldest first.
	FollowUps []string `json:"follow_up_commits,omitempty"`

	// DryRun is set on a dry run's report (run --dry-run).
	DryRun bool `json:"dry_run,omitempty"`
}

// Retry is one repeated attempt.
type Retry struct {
	// Kind is transport (the same invocation again: its output was
	// unreadable or its process died before answering) or recheck (a new
	// fix, with the watched checks' findings as evidence).
	Kind    string `json:"kind"`
	Phase   string `json:"phase"`
	Attempt int    `json:"attempt"`
	Why     string `json:"why"`
}

// The kinds of retry.
const (
	RetryTransport = "transport"
	RetryRecheck   = "recheck"
)

// FindingRef identifies the finding in the report.
type FindingRef struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"`
}

// GateResult is one check and its verdict: pass, fail or error.
type GateResult struct {
	Name    string `json:"name"`
	Phase   string `json:"phase"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
	// Output is the end of the command's output, for the gates that run one.
	Output string `json:"output,omitempty"`
}

// AgentUsage sums what the agent's invocations reported: cost in US dollars,
// model turns and refused tool calls (zero where the runner cannot tell,
// as with the command runner).
type AgentUsage struct {
	Invocations int     `json:"invocations"`
	CostUSD     float64 `json:"cost_usd"`
	Turns       int     `json:"turns"`
	Denials     int     `json:"denials"`
}

// AgentOutput is the last lines (runner.TailLines, at most
// runner.TailBytes, per stream) an agent printed, redacted and escaped.
type AgentOutput struct {
	Phase  string `json:"phase"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// Charge is what the ledger charged the run against every day scope it
// counts in, and on what basis.
type Charge struct {
	CostUSD float64 `json:"cost_usd"`
	Turns   int     `json:"turns"`
	Basis   string  `json:"basis"`
}

// The bases of a charge.
const (
	// ChargeReported: the agent CLI's own account of every invocation.
	ChargeReported = "agent-reported"
	// ChargeNoAgent: no agent started (the harness alone, a runner that
	// could not start, a run stopped first): nothing was spent.
	ChargeNoAgent = "no-agent-started"
	// ChargeRunCaps: an agent ran and reported no cost (the command
	// runner): with no meter, the run's cost and turn caps.
	ChargeRunCaps = "run-caps"
	// ChargeReservation: the settlement failed, so the run stays held and
	// the ledger charges its whole reservation when it closes it.
	ChargeReservation = "reservation"
)

// PhaseTime is how long a phase took.
type PhaseTime struct {
	Phase    string `json:"phase"`
	Duration string `json:"duration"`
}

// scrub redacts the report in place through its JSON form, so no field can
// be forgotten. A redaction that cannot finish withholds the free-text
// fields rather than keeping them.
func (r *Report) scrub(e interface {
	Redact(string) (string, []redact.Finding, error)
}) error {
	// Without HTML escaping: json.Marshal writes & < > as \u0026 \u003c
	// \u003e, which breaks the shape of a credential holding them (a URL's
	// password with an &) where the scan reads the text.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	out, _, err := e.Redact(strings.TrimSuffix(buf.String(), "\n"))
	if err != nil || !json.Valid([]byte(out)) {
		r.Detail = "[WITHHELD by fixrail: the report could not be scrubbed]"
		r.Finding.Title = ""
		r.Plan = nil
		if r.Conclusion != nil {
			r.Conclusion.Reason = "[WITHHELD]"
		}
		for i := range r.Gates {
			r.Gates[i].Detail = "[WITHHELD]"
		}
		r.Warnings = append(r.Warnings, "report scrub failed; free text withheld")
		return nil
	}
	var clean Report
	if err := json.Unmarshal([]byte(out), &clean); err != nil {
		return err
	}
	*r = clean
	return nil
}

// writeTo writes the report through f, the file opened when the run
// started, and closes it.
func (r *Report) writeTo(f *os.File) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return fmt.Errorf("write run report: %w", err)
	}
	// The same value, with no raw control a reader's terminal acts on.
	if _, err := f.WriteAt([]byte(untrusted.Printable(string(b))+"\n"), 0); err != nil {
		f.Close()
		return fmt.Errorf("write run report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write run report: %w", err)
	}
	return nil
}
