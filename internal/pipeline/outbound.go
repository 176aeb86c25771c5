package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/redact"
)

// Two chokepoints guard text. Inbound, every report field is redacted (by
// exact value and by shape) before it is bounded and fenced into a prompt.
// Outbound, every text that leaves the run — commit message, PR title, body,
// labels, branch name, the whole patch (context lines too), events, the run report — is
// scanned, and a hit, or a scanner error, is a leak: the text is not sent and
// the run escalates.

// leakError is an outbound text that must not be sent.
type leakError struct {
	what  string
	rules []string
	err   error
}

func (e *leakError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%s: the leak scan failed, so the text is treated as leaking: %v", e.what, e.err)
	}
	return fmt.Sprintf("%s carries %s", e.what, strings.Join(e.rules, ", "))
}

// checkOutbound scans each named text; the first blocking hit or scanner
// error wins. It never returns the matched value, only the rules that
// matched. Review-tier findings (redact.Finding.Review: a placeholder, an
// example value, randomness under an ambiguous name) do not block: they
// come back as reasons the PR must be read with care, "<what>: <rule> —
// <why>", and the caller labels the PR needs-review with them.
func (r *run) checkOutbound(texts ...[2]string) (reviews []string, err error) {
	for _, t := range texts {
		fs, err := r.s.Scrub.Detect(t[1])
		if err != nil {
			return nil, &leakError{what: t[0], err: err}
		}
		var rules []string
		for _, f := range fs {
			if f.Blocking() && !slices.Contains(rules, f.Rule) {
				rules = append(rules, f.Rule)
			}
		}
		if len(rules) > 0 {
			return nil, &leakError{what: t[0], rules: rules}
		}
		for _, f := range fs {
			why := fmt.Sprintf("%s: %s — %s", t[0], f.Rule, f.Review)
			if !slices.Contains(reviews, why) {
				reviews = append(reviews, why)
			}
		}
	}
	return reviews, nil
}

// leakOutcome turns a failed check into the run's terminal outcome.
func (r *run) leakOutcome(err error) *Outcome {
	var le *leakError
	if errors.As(err, &le) {
		r.gate("P5", "leak-scan", "fail", le.Error())
		return stop(Escalate, ReasonLeak, "outbound text blocked: "+le.Error())
	}
	return nil
}

// scrubInbound redacts one untrusted field before it is bounded and fenced.
// A redaction that cannot finish is treated as a leak: the field is not sent.
func (r *run) scrubInbound(s string) (string, error) {
	out, _, err := r.s.Scrub.Redact(s)
	if err != nil {
		return "", &leakError{what: "report text", err: err}
	}
	return out, nil
}

// scrubEvent is the event log's chokepoint: it redacts and reports a hit.
// Only a blocking finding counts as a hit; a review-tier one (a
// placeholder, a value under an ambiguous name) is redacted all the same.
func (r *run) scrubEvent(s string) (string, bool) {
	out, fs, err := r.s.Scrub.Redact(s)
	if err != nil {
		return "[WITHHELD by fixrail: the redaction of this text failed]", true
	}
	return out, slices.ContainsFunc(fs, redact.Finding.Blocking)
}

// scrubOutput redacts a command's output before it reaches the event log:
// what a repository's own tests print is not the run's text, so a fixture
// that looks like a secret is withheld without counting as a leak of the
// run's own words. A redaction that cannot finish withholds it all.
func (r *run) scrubOutput(s string) string {
	out, _, err := r.s.Scrub.Redact(s)
	if err != nil {
		return "[WITHHELD by fixrail: the redaction of this output failed]"
	}
	return out
}
