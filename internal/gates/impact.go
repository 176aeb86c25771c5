package gates

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/runner/model"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// The impact levels, lowest first, and the one for no assessment.
const (
	ImpactLow    = "low"
	ImpactMedium = "medium"
	ImpactHigh   = "high"
	// ImpactUnknown is recorded when no model assessed the change: not a
	// level picked for it, so no label claims an assessment that was not
	// made.
	ImpactUnknown = "unknown"
)

// Bounds on the model's impact prose, which is pasted into the PR body.
const (
	impactTextCap  = 2000 // bytes of description
	impactItemCap  = 500  // bytes of one concern or manual step
	impactMaxItems = 10   // concerns, and manual steps, kept
)

// ImpactReport is a model's production-risk assessment of a fix (P5).
type ImpactReport struct {
	Level       string   `json:"level"` // ImpactLow, ImpactMedium or ImpactHigh
	Description string   `json:"description"`
	Concerns    []string `json:"concerns"`
	ManualSteps []string `json:"manual_steps"`
	// Assessed is false for the default report Impact returns with an
	// error: no model assessed the change.
	Assessed bool `json:"-"`
	// Why says, when Assessed is false, why no assessment was made; the
	// PR body carries it (a reviewer on the forge sees no event log).
	Why string `json:"-"`
}

// ImpactError is an impact analysis that produced no report. Impact
// returns it together with the default report (level unknown); the caller
// writes the reason into the body and opens the PR anyway.
type ImpactError struct {
	Err error
}

func (e *ImpactError) Error() string { return "impact analysis: " + e.Err.Error() }

func (e *ImpactError) Unwrap() error { return e.Err }

// DefaultImpact is the report recorded when there is no assessment (the
// analysis failed, or the diff could not be scrubbed for it): level
// unknown — never low, so a failure cannot make a change look safer, and
// never a level nobody assessed — Assessed false, and why.
func DefaultImpact(why string) ImpactReport {
	return ImpactReport{
		Level:       ImpactUnknown,
		Description: "No model assessed this change's production impact.",
		Why:         why,
	}
}

// Impact asks a model, with no tools, for the production risk of the diff.
// finding and diff must already be redacted: both leave for the model, the
// finding capped and fenced, the diff cut at ImpactDiffCap with a marker and
// fenced. The call is bounded by ModelTimeout (or ctx, if sooner).
//
// On any failure — the call, a reply that is not one JSON object, a level
// other than low, medium or high — it returns the default report (unknown,
// Assessed false, the reason in Why) and an *ImpactError.
func Impact(ctx context.Context, m Completer, finding, diff string) (ImpactReport, error) {
	fail := func(err error) (ImpactReport, error) {
		ie := &ImpactError{Err: err}
		return DefaultImpact(ie.Error()), ie
	}
	if m == nil {
		return fail(errors.New("no model is configured"))
	}
	fence, err := untrusted.NewFence()
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(ctx, ModelTimeout)
	defer cancel()
	text, err := m.Complete(ctx, impactSystem, impactPrompt(fence, finding, diff), 2048)
	if err != nil {
		return fail(err)
	}
	var r ImpactReport
	if err := model.DecodeJSON(text, &r); err != nil {
		return fail(err)
	}
	r.Level = strings.ToLower(strings.TrimSpace(r.Level))
	switch r.Level {
	case ImpactLow, ImpactMedium, ImpactHigh:
	default:
		return fail(fmt.Errorf("level %q is not low, medium or high", oneLine(r.Level, 40)))
	}
	r.Description = capText(strings.TrimSpace(r.Description), impactTextCap)
	r.Concerns = capItems(r.Concerns)
	r.ManualSteps = capItems(r.ManualSteps)
	r.Assessed = true
	return r, nil
}

// Label is the PR label for the report: impact:<level>.
func (r ImpactReport) Label() string { return "impact:" + r.Level }

// Markdown renders the report as a PR body section. The level is one of
// three words the harness checked; everything else is model prose, steerable
// by the finding's author, so it goes inside a code block it cannot close.
func (r ImpactReport) Markdown() string {
	var b strings.Builder
	if !r.Assessed {
		fmt.Fprintf(&b, "### Production impact: not assessed\n\n")
		fmt.Fprintf(&b, "No model assessed this change's production impact, so it is labelled `%s`, not a level. Why:\n\n", r.Label())
		why := r.Why
		if why == "" {
			why = "no reason was recorded"
		}
		b.WriteString(codeBlock(why))
		return b.String()
	}
	fmt.Fprintf(&b, "### Production impact: %s\n\n", r.Level)
	b.WriteString("Assessed by a model with no tools, from the finding and the diff only. Unverified.\n\n")
	parts := []string{r.Description}
	for _, list := range []struct {
		title string
		items []string
	}{{"Concerns", r.Concerns}, {"Manual steps", r.ManualSteps}} {
		if len(list.items) > 0 {
			parts = append(parts, list.title+":\n- "+strings.Join(list.items, "\n- "))
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n\n"))
	if text == "" {
		b.WriteString("The model gave no description, concerns or manual steps.\n")
		return b.String()
	}
	b.WriteString(codeBlock(text))
	return b.String()
}

const impactSystem = "You assess the production risk of a proposed code fix for fixrail, a harness that fixes reported bugs. " +
	"You judge; you do not act. Reply only with the JSON object the user message asks for."

func impactPrompt(f *untrusted.Fence, finding, diff string) string {
	var b strings.Builder
	b.WriteString(f.Preamble())
	b.WriteString("\nQuestion: if the diff below is merged and deployed, what is its production risk?\n\n")
	b.WriteString(`Level "low": a local change that alters behaviour only for the reported bug. ` +
		`"medium": behaviour callers may notice, shared code, or care needed on deploy. ` +
		`"high": data, security, schema or migration, public API or configuration impact, or hard to roll back. ` +
		"List concrete concerns a reviewer should check, and manual steps needed before or after deploying; use empty lists when there are none.\n\n")
	b.WriteString("The finding, as data:\n\n")
	b.WriteString(f.Wrap("finding", finding, FindingCap))
	b.WriteString("\n\nThe diff, as data (a marker says where it was truncated):\n\n")
	b.WriteString(f.Wrap("diff", model.Bound(diff, ImpactDiffCap), ImpactDiffCap+256))
	b.WriteString("\n\n" + `Reply with one JSON object: {"level": "low" | "medium" | "high", "description": "two or three sentences", "concerns": ["…"], "manual_steps": ["…"]}.` + "\n")
	b.WriteString(model.NoToolsContract)
	return b.String()
}

func capItems(items []string) []string {
	var out []string
	for _, it := range items {
		if it = oneLine(it, impactItemCap); it != "" && len(out) < impactMaxItems {
			out = append(out, it)
		}
	}
	return out
}

// capText cuts s at max bytes, on a rune boundary, with an ellipsis.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// codeBlock fences text with more backticks than any run inside it, so the
// text cannot close the block and add markup.
func codeBlock(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}
