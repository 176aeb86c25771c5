package forge_test

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/forge"
)

func TestParseCheckRef(t *testing.T) {
	for _, tc := range []struct {
		entry string
		want  forge.CheckRef
		err   string
	}{
		{entry: "CodeQL", want: forge.CheckRef{Name: "CodeQL"}},
		{entry: "CodeQL@github-advanced-security", want: forge.CheckRef{Name: "CodeQL", App: "github-advanced-security"}},
		// The last "@" splits; a name holding one names its app or "*".
		{entry: "deploy@prod@my-app", want: forge.CheckRef{Name: "deploy@prod", App: "my-app"}},
		{entry: "build (node@18)@*", want: forge.CheckRef{Name: "build (node@18)"}},
		{entry: "build (node@18)", err: `comes "18)"`},
		{entry: "CodeQL@Advanced", err: "not a GitHub App slug"},
		{entry: "CodeQL@", err: "not a GitHub App slug"},
		{entry: "@github-actions", err: "is not a check name"},
		{entry: "", err: "is not a check name"},
		{entry: strings.Repeat("n", 256), err: "is not a check name"},
	} {
		got, err := forge.ParseCheckRef(tc.entry)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseCheckRef(%q) = %+v, %v; want an error saying %q", tc.entry, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseCheckRef(%q) = %+v, %v; want %+v", tc.entry, got, err, tc.want)
		}
	}
}

// TestAnswer: a check run's identity is (name, app). A named app counts
// only its own runs, an impostor's are listed; a status never answers for
// a pinned check; a name with no app green from two sources is not passed,
// red from any source is red.
func TestAnswer(t *testing.T) {
	real := forge.Check{Name: "CodeQL", Kind: "check-run", State: "success", App: "github-advanced-security", AppID: 57789}
	fake := forge.Check{Name: "CodeQL", Kind: "check-run", State: "success", App: "github-actions", AppID: 15368}
	status := forge.Check{Name: "CodeQL", Kind: "status", State: "success"}
	red := func(c forge.Check) forge.Check { c.State = "failure"; return c }
	running := func(c forge.Check) forge.Check { c.State = "in_progress"; return c }
	bySlug := forge.CheckRef{Name: "CodeQL", App: "github-advanced-security"}
	byID := forge.CheckRef{Name: "CodeQL", AppID: 57789, PinnedBy: "ruleset o/r#1"}
	plain := forge.CheckRef{Name: "CodeQL"}
	for _, tc := range []struct {
		name    string
		ref     forge.CheckRef
		checks  []forge.Check
		state   string
		ignored int
	}{
		{"impostor alone does not answer for a named app", bySlug, []forge.Check{fake}, forge.OutcomeMissing, 1},
		{"impostor alone does not answer for a pinned id", byID, []forge.Check{fake}, forge.OutcomeMissing, 1},
		{"a status does not answer for a pin", byID, []forge.Check{status}, forge.OutcomeMissing, 1},
		{"the named app answers", bySlug, []forge.Check{fake, real}, forge.OutcomePassed, 1},
		{"the pinned id answers", byID, []forge.Check{real, fake}, forge.OutcomePassed, 1},
		{"an impostor's red is not the named app's", bySlug, []forge.Check{red(fake), real}, forge.OutcomePassed, 1},
		{"the named app's red", bySlug, []forge.Check{fake, red(real)}, forge.OutcomeFailed, 1},
		{"the named app still running", byID, []forge.Check{fake, running(real)}, forge.OutcomeRunning, 1},
		{"one app, no app named", plain, []forge.Check{real}, forge.OutcomePassed, 0},
		{"two apps green, no app named", plain, []forge.Check{real, fake}, forge.OutcomeAmbiguous, 0},
		{"a run and a status green, no app named", plain, []forge.Check{real, status}, forge.OutcomeAmbiguous, 0},
		{"red from any app, no app named", plain, []forge.Check{real, red(fake)}, forge.OutcomeFailed, 0},
		{"nothing", plain, []forge.Check{{Name: "test", Kind: "check-run", State: "success"}}, forge.OutcomeMissing, 0},
	} {
		a := forge.Answer(tc.ref, tc.checks)
		if a.State != tc.state || len(a.Ignored) != tc.ignored {
			t.Errorf("%s: %s with %d ignored, want %s with %d (%s)", tc.name, a.State, len(a.Ignored), tc.state, tc.ignored, a.Describe(tc.checks))
		}
	}
	// The detail names who reported, and the impostor it did not count.
	checks := []forge.Check{fake, real}
	if got, want := forge.Answer(bySlug, checks).Describe(checks), "CodeQL@github-advanced-security passed, reported by app github-advanced-security (id 57789); not counted, from another source than the one named: app github-actions (id 15368) success"; got != want {
		t.Errorf("Describe = %q\nwant       %q", got, want)
	}
	if got := forge.Answer(plain, checks).Describe(checks); !strings.Contains(got, "not taken as passed") || !strings.Contains(got, "app github-actions (id 15368)") {
		t.Errorf("Describe of an ambiguous answer = %q", got)
	}
}

// TestGateChecks: the CI gate requires the protection's pins, and a
// configured name with no app that a pin covers is left to the pin.
func TestGateChecks(t *testing.T) {
	pin := forge.CheckRef{Name: "CodeQL", AppID: 57789, PinnedBy: "ruleset o/r#1"}
	p := forge.Protection{RequiredChecks: []string{"CodeQL", "test"}, PinnedChecks: []forge.CheckRef{pin}}
	got := forge.GateChecks([]forge.CheckRef{{Name: "CodeQL"}, {Name: "test"}, {Name: "CodeQL", App: "github-advanced-security"}}, p)
	want := []forge.CheckRef{pin, {Name: "test"}, {Name: "CodeQL", App: "github-advanced-security"}}
	if len(got) != len(want) {
		t.Fatalf("GateChecks = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("GateChecks[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
