package pipeline

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
)

// TestPRTitle: the report's title reaches the PR title escaped and cut,
// and not at all when GitHub would read it as closing an issue — the PR
// title is a squash merge's commit subject.
func TestPRTitle(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"check is BROKEN", "fixrail: gh-7: check is BROKEN"},
		{"crash\u202e on\tstart", `fixrail: gh-7: crash\u202e on start`},
		{strings.Repeat("a", 80), "fixrail: gh-7: " + strings.Repeat("a", 72) + "…"},
		{"Crash on start (fixes #12)", "fixrail: gh-7 (the report's title is left out: GitHub would read it as closing an issue)"},
		{"resolves octo/app#3 too", "fixrail: gh-7 (the report's title is left out: GitHub would read it as closing an issue)"},
		{"see #12", "fixrail: gh-7: see #12"},
	} {
		r := &run{fin: &findings.Finding{ID: "gh-7", Title: tc.title}}
		if got := r.prTitle(); got != tc.want {
			t.Errorf("prTitle(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
}
