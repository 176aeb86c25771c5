package gates_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/runner/fakemodel"
	"github.com/fixrail/fixrail/internal/runner/model"
)

func TestImpact(t *testing.T) {
	// No assessment is level unknown, never a level nobody assessed; the
	// reason is the report's own (the PR body carries it).
	unknown := gates.ImpactReport{
		Level:       gates.ImpactUnknown,
		Description: "No model assessed this change's production impact.",
	}
	tests := []struct {
		name    string
		turn    fakemodel.Turn
		want    gates.ImpactReport
		wantErr string // a substring of the *ImpactError; empty for success
	}{
		{
			name: "valid",
			turn: fakemodel.Turn{Text: `{"level": "high", "description": "Changes how prices render.",
				"concerns": ["callers relying on the TypeError", "  "], "manual_steps": ["clear the price cache"]}`},
			want: gates.ImpactReport{
				Level: "high", Description: "Changes how prices render.",
				Concerns: []string{"callers relying on the TypeError"}, ManualSteps: []string{"clear the price cache"},
				Assessed: true,
			},
		},
		{
			name: "level case and empty lists",
			turn: fakemodel.Turn{Text: "```json\n{\"level\": \" Low \", \"description\": \"Local.\", \"concerns\": [], \"manual_steps\": null}\n```"},
			want: gates.ImpactReport{Level: "low", Description: "Local.", Assessed: true},
		},
		{name: "garbage", turn: fakemodel.Turn{Text: "This looks risky to me."}, want: unknown, wantErr: "not a JSON object"},
		{name: "unknown level", turn: fakemodel.Turn{Text: `{"level": "critical", "description": "x"}`}, want: unknown, wantErr: `level "critical"`},
		{name: "no level", turn: fakemodel.Turn{Text: `{"description": "x"}`}, want: unknown, wantErr: `level ""`},
		{name: "server error", turn: fakemodel.Turn{Error: &fakemodel.APIError{Status: 503}}, want: unknown, wantErr: "transport"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t, fakemodel.Always(tc.turn))
			got, err := gates.Impact(t.Context(), model.NewAnthropic("k", srv.URL, "claude-test"), finding, patch)
			want := tc.want
			if err != nil {
				want.Why = err.Error()
				if !strings.Contains(got.Why, tc.wantErr) {
					t.Errorf("Why %q lacks %q", got.Why, tc.wantErr)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			var ie *gates.ImpactError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != "" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want an *ImpactError containing %q", err, tc.wantErr)
			}
			if got.Label() != "impact:"+tc.want.Level {
				t.Errorf("label %q", got.Label())
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
			checkPrompt(t, srv.Requests()[0])
		})
	}
}

func TestImpactTimeoutIsUnknown(t *testing.T) {
	srv := fakemodel.Start(t, fakemodel.Always(fakemodel.Turn{Text: `{"level":"low","description":"x"}`, Delay: time.Minute}))
	a := model.NewAnthropic("k", srv.URL, "claude-test")
	a.Timeout = 200 * time.Millisecond
	got, err := gates.Impact(t.Context(), a, finding, patch)
	var ie *gates.ImpactError
	if !errors.As(err, &ie) || !model.IsTransport(err) || got.Level != gates.ImpactUnknown || got.Assessed || got.Why != err.Error() {
		t.Errorf("got (%+v, %v), want unknown, unassessed, the reason kept, with a transport ImpactError", got, err)
	}
	if got, err := gates.Impact(t.Context(), nil, finding, patch); err == nil || got.Level != gates.ImpactUnknown || !strings.Contains(got.Why, "no model is configured") {
		t.Errorf("no model: got (%+v, %v)", got, err)
	}
}

func TestImpactMarkdown(t *testing.T) {
	r := gates.ImpactReport{
		Level:       "high",
		Description: "Breaks ```callers``` [click](https://evil.example) @everyone",
		Concerns:    []string{"a"},
		ManualSteps: []string{"b"},
		Assessed:    true,
	}
	md := r.Markdown()
	want := "### Production impact: high\n\n" +
		"Assessed by a model with no tools, from the finding and the diff only. Unverified.\n\n" +
		"````text\nBreaks ```callers``` [click](https://evil.example) @everyone\n\nConcerns:\n- a\n\nManual steps:\n- b\n````\n"
	if diff := cmp.Diff(want, md); diff != "" {
		t.Errorf("markdown (-want +got):\n%s", diff)
	}
	failed := gates.DefaultImpact("impact analysis: no model is configured")
	want = "### Production impact: not assessed\n\n" +
		"No model assessed this change's production impact, so it is labelled `impact:unknown`, not a level. Why:\n\n" +
		"```text\nimpact analysis: no model is configured\n```\n"
	if diff := cmp.Diff(want, failed.Markdown()); diff != "" {
		t.Errorf("unassessed markdown (-want +got):\n%s", diff)
	}
}
