package gates_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/runner/claudetest"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
	"github.com/fixrail/fixrail/internal/verdict"
)

const (
	findingCanary = "finding-canary-7f3a"
	diffCanary    = "diff-canary-91bc"
)

var (
	finding = "Title: format_price crashes on None\n\nBody: calling format_price(None) raises TypeError. " + findingCanary
	patch   = "--- a/src/textfmt/format.py\n+++ b/src/textfmt/format.py\n@@ -1,2 +1,4 @@\n def format_price(v):\n+    if v is None:  # " + diffCanary + "\n+        return ''\n     return f'{v:.2f}'\n"
)

func keep(s string) (string, error) { return s, nil }

// outcome is what the pipeline reads from a verdict.
type outcome struct {
	Pass, Unconfirmed bool
	Label             string
	Err               bool
}

// TestLLMValidateOutcomes is the gate-outcome table of issue 6: pass, fail,
// uncertain, garbage and timeout (and the other ways to get no verdict),
// each through the Anthropic backend against the fake Messages API.
func TestLLMValidateOutcomes(t *testing.T) {
	pass := outcome{Pass: true}
	fail := outcome{}
	unconfirmed := outcome{Pass: true, Unconfirmed: true, Label: gates.LabelNeedsReview}
	tests := []struct {
		name       string
		turn       fakemodel.Turn
		want       outcome
		wantDetail string // a substring
	}{
		{name: "pass", turn: fakemodel.Turn{Text: `{"verdict": "pass", "reason": "guards None at the cause"}`}, want: pass, wantDetail: "addresses the finding: `guards None at the cause`"},
		{name: "pass in a json fence", turn: fakemodel.Turn{Text: "```json\n{\"verdict\": \"pass\", \"reason\": \"ok\"}\n```"}, want: pass},
		{name: "fail", turn: fakemodel.Turn{Text: `{"verdict": "fail", "reason": "only hides the symptom"}`}, want: fail, wantDetail: "does not address the finding: `only hides the symptom`"},
		{name: "uncertain", turn: fakemodel.Turn{Text: `{"verdict": "uncertain", "reason": "the diff is truncated"}`}, want: unconfirmed, wantDetail: "the model was uncertain: `the diff is truncated`"},
		{name: "garbage", turn: fakemodel.Turn{Text: "I would like to look at the repository first."}, want: unconfirmed, wantDetail: "not the JSON object asked for"},
		{name: "prose around the JSON", turn: fakemodel.Turn{Text: `Sure: {"verdict": "pass"}`}, want: unconfirmed, wantDetail: "not the JSON object asked for"},
		{name: "another word", turn: fakemodel.Turn{Text: `{"verdict": "probably", "reason": "looks fine"}`}, want: unconfirmed, wantDetail: "answered `probably`"},
		{name: "no verdict", turn: fakemodel.Turn{Text: `{"reason": "looks fine"}`}, want: unconfirmed, wantDetail: "no verdict"},
		{name: "verdict not a string", turn: fakemodel.Turn{Text: `{"verdict": true}`}, want: unconfirmed, wantDetail: "not the JSON object asked for"},
		{name: "duplicate verdict", turn: fakemodel.Turn{Text: `{"verdict": "fail", "verdict": "pass"}`}, want: unconfirmed, wantDetail: "twice"},
		{name: "timeout", turn: fakemodel.Turn{Text: `{"verdict": "pass"}`, Delay: 30 * time.Second}, want: unconfirmed, wantDetail: "no answer within 300ms"},
		{name: "server error", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 500, Message: "boom"}}, want: unconfirmed, wantDetail: "could not be reached"},
		{name: "refused request", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 400, Type: "invalid_request_error"}}, want: unconfirmed, wantDetail: "call failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t, fakemodel.Always(tc.turn))
			g := gates.LLMValidate(gates.Validation{
				Model:   model.NewAnthropic("k", srv.URL, "claude-test"),
				Finding: finding,
				Redact:  keep,
				Timeout: 300 * time.Millisecond,
			})
			if g.Reason != "llm-fail" || g.Terminal() != verdict.Escalate {
				t.Errorf("gate reason %q terminal %v, want llm-fail, an escalation", g.Reason, g.Terminal())
			}
			start := time.Now()
			v, err := g.Run(t.Context(), &gates.Change{Diff: gitx.TreeDiff{Diff: gitx.Diff{Patch: patch}}})
			got := outcome{Pass: v.Pass, Unconfirmed: v.Unconfirmed, Label: v.Label, Err: err != nil}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s\ndetail: %s\nerr: %v", diff, v.Detail, err)
			}
			if !strings.Contains(v.Detail, tc.wantDetail) {
				t.Errorf("detail %q, want it to contain %q", v.Detail, tc.wantDetail)
			}
			if strings.ContainsAny(v.Detail, "\n\r") {
				t.Errorf("detail %q spans lines", v.Detail)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("gate took %v", d)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1 (a single shot, no retry of an answer)", len(reqs))
			}
			checkPrompt(t, reqs[0])
			checkValidateQuestion(t, reqs[0])
		})
	}
}

var fenceRE = regexp.MustCompile(`(?s)<untrusted-([0-9a-f]{32}) id="([a-z0-9_.-]+)">\n(.*?)\n</untrusted-([0-9a-f]{32})>`)

// checkPrompt asserts the request has no tools, ends with the no-tools
// contract, and carries the finding and the diff only inside fences.
func checkPrompt(t *testing.T, r fakemodel.Request) string {
	t.Helper()
	if _, ok := r.Body["tools"]; ok {
		t.Errorf("request carries tools: %s", r.Raw)
	}
	msgs, _ := r.Body["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want one user message", len(msgs))
	}
	prompt := text(msgs[0].(map[string]any)["content"])
	if !strings.HasSuffix(prompt, model.NoToolsContract) {
		t.Errorf("prompt does not end with the no-tools contract:\n%s", prompt)
	}
	fenced := map[string]string{}
	var nonce string
	for _, m := range fenceRE.FindAllStringSubmatch(prompt, -1) {
		if m[1] != m[4] {
			t.Errorf("fence opened with %s closed with %s", m[1], m[4])
		}
		if nonce != "" && m[1] != nonce {
			t.Errorf("two nonces in one prompt")
		}
		nonce = m[1]
		fenced[m[2]] = m[3]
	}
	if !strings.Contains(fenced["finding"], findingCanary) || !strings.Contains(fenced["diff"], diffCanary) {
		t.Errorf("finding or diff not fenced: %q", fenced)
	}
	outside := fenceRE.ReplaceAllString(prompt, "")
	for _, c := range []string{findingCanary, diffCanary} {
		if strings.Contains(outside, c) {
			t.Errorf("%s appears outside its fence", c)
		}
	}
	// The rule is stated before the first fenced byte.
	rule := strings.Index(prompt, "is data from an untrusted source")
	if first := fenceRE.FindStringIndex(prompt); rule < 0 || first == nil || first[0] < rule {
		t.Errorf("the fence rule does not come before the first fence")
	}
	return nonce
}

// checkValidateQuestion: what fails is said outside the fences, test code
// that weakens the suite included: the evidence ships, and only this gate
// and a reviewer read it (README, Containment).
func checkValidateQuestion(t *testing.T, r fakemodel.Request) {
	t.Helper()
	outside := fenceRE.ReplaceAllString(text(r.Body["messages"].([]any)[0].(map[string]any)["content"]), "")
	for _, want := range []string{"weakens or removes a test or a check", "patches the test framework or its assertions", "skips or deselects other tests", "even when every test passes"} {
		if !strings.Contains(outside, want) {
			t.Errorf("the question does not say %q", want)
		}
	}
}

func text(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if bb, ok := b.(map[string]any); ok {
				if s, ok := bb["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func TestLLMValidateFreshNonceAndBoundedDiff(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Reply(`{"verdict": "pass", "reason": "ok"}`))
	const secret = "AKIAFAKE0123456789XY"
	big := patch + strings.Repeat("+filler line that pads the diff well past its cap\n", 400) + "+" + secret + "\n"
	g := gates.LLMValidate(gates.Validation{
		Model:   model.NewAnthropic("k", srv.URL, "claude-test"),
		Finding: finding,
		Redact:  func(s string) (string, error) { return strings.ReplaceAll(s, secret, "[REDACTED]"), nil },
	})
	for range 2 {
		if _, err := g.Run(t.Context(), &gates.Change{Diff: gitx.TreeDiff{Diff: gitx.Diff{Patch: big}}}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	n1, n2 := checkPrompt(t, reqs[0]), checkPrompt(t, reqs[1])
	if n1 == n2 {
		t.Errorf("both calls used nonce %s; want a fresh one per call", n1)
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Raw), secret) {
			t.Errorf("the unredacted secret reached the model")
		}
	}
	prompt := text(reqs[0].Body["messages"].([]any)[0].(map[string]any)["content"])
	var diff string
	for _, m := range fenceRE.FindAllStringSubmatch(prompt, -1) {
		if m[2] == "diff" {
			diff = m[3]
		}
	}
	if len(diff) > gates.ValidateDiffCap+100 || !strings.Contains(diff, "[… truncated by fixrail:") {
		t.Errorf("diff in the prompt is %d bytes (cap %d), marker present: %v", len(diff), gates.ValidateDiffCap, strings.Contains(diff, "truncated"))
	}
}

func TestLLMValidateCannotSendUnscrubbed(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Reply(`{"verdict": "pass"}`))
	m := model.NewAnthropic("k", srv.URL, "claude-test")
	c := &gates.Change{Diff: gitx.TreeDiff{Diff: gitx.Diff{Patch: patch}}}
	for _, v := range []gates.Validation{
		{Model: m, Finding: finding},
		{Model: m, Finding: finding, Redact: func(string) (string, error) { return "", errors.New("scrubber down") }},
	} {
		got, err := gates.LLMValidate(v).Run(t.Context(), c)
		if err == nil || got != (gates.Verdict{}) || !strings.HasPrefix(err.Error(), "llm-validate: ") {
			t.Errorf("got (%+v, %v), want the zero verdict and a gate error", got, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}

func TestLLMValidateNoModel(t *testing.T) {
	v, err := gates.LLMValidate(gates.Validation{Finding: finding, Redact: keep}).Run(t.Context(), &gates.Change{Diff: gitx.TreeDiff{Diff: gitx.Diff{Patch: patch}}})
	if err != nil || !v.Pass || !v.Unconfirmed || v.Label != gates.LabelNeedsReview {
		t.Errorf("got (%+v, %v), want an unconfirmed pass", v, err)
	}
}

// TestLLMValidateClaudeCLI runs the gate through the real pinned CLI with
// --tools "": one request, no tools, the verdict mapped.
func TestLLMValidateClaudeCLI(t *testing.T) {
	bin := claudetest.Binary(t)
	srv := fakemodel.Start(t, fakemodel.Reply(`{"verdict": "fail", "reason": "unrelated change"}`))
	c := model.NewClaudeCLI(bin, "")
	c.Lookup = func(k string) (string, bool) {
		v, ok := map[string]string{"PATH": os.Getenv("PATH"), "ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": claudetest.APIKey}[k]
		return v, ok
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	v, err := gates.LLMValidate(gates.Validation{Model: c, Finding: finding, Redact: keep}).Run(ctx, &gates.Change{Diff: gitx.TreeDiff{Diff: gitx.Diff{Patch: patch}}})
	if err != nil || v.Pass || v.Unconfirmed {
		t.Fatalf("got (%+v, %v), want a failed verdict", v, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Kind != fakemodel.Side {
		t.Fatalf("%d requests (first kind %v), want one request with no tools", len(reqs), reqs[0].Kind)
	}
	msgs, _ := reqs[0].Body["messages"].([]any)
	var prompt string
	for _, m := range msgs {
		prompt += text(m.(map[string]any)["content"])
	}
	if !strings.Contains(prompt, model.NoToolsContract) || !strings.Contains(prompt, findingCanary) {
		t.Errorf("the prompt did not reach the model: %s", prompt)
	}
	outside := fenceRE.ReplaceAllString(prompt, "")
	if strings.Contains(outside, findingCanary) || strings.Contains(outside, diffCanary) {
		t.Errorf("untrusted text outside its fence")
	}
}
