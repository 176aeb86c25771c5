package pipeline_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// forgeRun runs one finding from issue #7 against the recording fake and
// counts the agent's invocations.
func forgeRun(t *testing.T, expect func(f *forgetest.Fake)) (*pipeline.Report, int32) {
	t.Helper()
	rep, calls, _ := forgeRunRepo(t, expect)
	return rep, calls
}

// forgeSetup is a repository for issue #7's runs, prepared (closed when
// the test ends), and the recording fake with expect's expectations.
func forgeSetup(t *testing.T, expect func(f *forgetest.Fake)) (*pipeline.Setup, *forgetest.Fake, string) {
	t.Helper()
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := forgetest.New(t)
	expect(f)
	return s, f, dir
}

// forgeRunRepo is forgeRun that also returns the repository it ran in.
func forgeRunRepo(t *testing.T, expect func(f *forgetest.Fake)) (*pipeline.Report, int32, string) {
	t.Helper()
	s, f, dir := forgeSetup(t, expect)
	var calls atomic.Int32
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "gh-7", Title: "broken", Body: "it is BROKEN", Issue: 7},
		Runner: funcAgent(func(inv runner.Invocation) (runner.Result, error) {
			calls.Add(1)
			return goodAgent(inv)
		}),
		Forge:   f,
		TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep, calls.Load(), dir
}

// TestOpenWorkGate: S7 — open work HALTs the run in P1, before any agent.
func TestOpenWorkGate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		work   forge.Work
		reason string
	}{
		{"left branch", forge.Work{LeftBranch: "fixrail/gh-7"}, "in-flight"},
		{"red fix", forge.Work{Fixes: []forge.OpenFix{{ID: "gh-3", Location: "https://forge.invalid/pull/3", Checks: forge.CIRed}}}, "in-flight-broken"},
		{"pending fix", forge.Work{Fixes: []forge.OpenFix{{ID: "gh-3", Location: "https://forge.invalid/pull/3", Checks: forge.CIPending}}}, "in-flight-broken"},
		{"open escalation", forge.Work{Escalation: &forge.OpenEscalation{Number: 7, Label: forge.LabelEscalated, Location: "https://forge.invalid/issues/7"}}, "escalation-open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var subject forge.Subject
			var notice *forge.Notice
			rep, agent := forgeRun(t, func(f *forgetest.Fake) {
				f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(func(s forge.Subject) (forge.Work, error) {
					subject = s
					return tc.work, nil
				})
				if tc.work.Escalation != nil {
					// A no-op with a comment: the issue is told why nothing ran.
					f.ExpectNotify(func(n forge.Notice) error { notice = &n; return nil })
				}
			})
			if tc.work.Escalation != nil && (notice == nil || notice.Number != 7 || !strings.Contains(notice.Body, "already carries an open escalation")) {
				t.Errorf("no comment on the already-escalated issue: %+v", notice)
			}
			if rep.Terminal != pipeline.Halt || rep.Reason != tc.reason {
				t.Fatalf("ended %s %s (%s), want HALT %s", rep.Terminal, rep.Reason, rep.Detail, tc.reason)
			}
			if agent != 0 {
				t.Errorf("the agent ran %d time(s) before the open-work check stopped the run", agent)
			}
			if subject != (forge.Subject{ID: "gh-7", Issue: 7}) {
				t.Errorf("OpenWork asked about %+v", subject)
			}
		})
	}
	// A rate limit on the lookup HALTs forge-rate-limited.
	rep, _ := forgeRun(t, func(f *forgetest.Fake) {
		f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(func(forge.Subject) (forge.Work, error) {
			return forge.Work{}, &forge.RateLimitError{Reset: time.Now().Add(time.Minute)}
		})
	})
	if rep.Terminal != pipeline.Halt || rep.Reason != "forge-rate-limited" {
		t.Errorf("a rate-limited lookup ended %s %s", rep.Terminal, rep.Reason)
	}
}

// TestCIGate: red checks on the draft PR ⇒ ESCALATE ci-failed with the PR
// open and a ci-failed notice on it; a failing notice changes nothing.
func TestCIGate(t *testing.T) {
	for _, notifyErr := range []error{nil, errors.New("500 from the comments API")} {
		var notice forge.Notice
		rep, _ := forgeRun(t, func(f *forgetest.Fake) {
			f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).ExpectPublish(forgetest.Published(9)).
				ExpectWaitChecks(func(pub forge.Published, deadline time.Time, _ []forge.CheckRef) (forge.CIResult, error) {
					if time.Until(deadline) < 29*time.Minute {
						t.Errorf("CI deadline %v away, want the 30m default", time.Until(deadline))
					}
					return forge.CIResult{State: forge.CIRed, HeadSHA: pub.Commit, Detail: "test: failure"}, nil
				}).
				ExpectNotify(func(n forge.Notice) error { notice = n; return notifyErr })
		})
		if rep.Terminal != pipeline.Escalate || rep.Reason != "ci-failed" || rep.PR != "https://forge.invalid/pull/9" {
			t.Fatalf("ended %s %s (%s), PR %q; want ESCALATE ci-failed with the PR open", rep.Terminal, rep.Reason, rep.Detail, rep.PR)
		}
		if notice.Number != 9 || !slices.Contains(notice.Labels, forge.LabelCIFailed) || !slices.Contains(notice.Labels, forge.LabelEscalated) || !strings.Contains(notice.Body, "ci-failed") {
			t.Errorf("notice = %+v", notice)
		}
		warned := slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "500 from the comments API") })
		if warned != (notifyErr != nil) {
			t.Errorf("warnings %q (notify error %v)", rep.Warnings, notifyErr)
		}
	}
	// Checks that never finish: a draft PR with the reason as a warning.
	rep, _ := forgeRun(t, func(f *forgetest.Fake) {
		f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).ExpectPublish(forgetest.Published(9)).
			ExpectWaitChecks(func(pub forge.Published, _ time.Time, _ []forge.CheckRef) (forge.CIResult, error) {
				return forge.CIResult{State: forge.CIPending, Detail: "test: in_progress"}, nil
			})
	})
	if rep.Terminal != pipeline.DraftPR || !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "CI pending") }) {
		t.Errorf("pending CI ended %s %s, warnings %q", rep.Terminal, rep.Reason, rep.Warnings)
	}
}

// TestNotifyOnEscalate: an ESCALATE of a finding from an issue posts a
// redacted notice there; the exit stands when it fails (see TestCIGate).
func TestNotifyOnEscalate(t *testing.T) {
	var notice forge.Notice
	rep, _ := forgeRun(t, func(f *forgetest.Fake) {
		f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).
			ExpectPublish(func(forge.PR) (forge.Published, error) { return forge.Published{}, forge.ErrDraftUnsupported }).
			ExpectNotify(func(n forge.Notice) error { notice = n; return nil })
	})
	if rep.Terminal != pipeline.Escalate || rep.Reason != "draft-unsupported" {
		t.Fatalf("ended %s %s", rep.Terminal, rep.Reason)
	}
	if notice.Number != 7 || notice.Terminal != forge.Escalate || !slices.Equal(notice.Labels, []string{forge.LabelEscalated}) || !strings.Contains(notice.Body, "draft-unsupported") {
		t.Errorf("notice = %+v", notice)
	}
}

// TestOpenFixOnTheSameFile: S7 across machines and across time — an open
// fixrail PR (another finding's) that changes a file this plan touches
// HALTs the run in P3, before the fix phase; one that changes other files,
// or this finding's own, does not. A forge that cannot say what open PRs
// change ends the run as its error says.
func TestOpenFixOnTheSameFile(t *testing.T) {
	other := forge.OpenFix{ID: "gh-3", Branch: "fixrail/gh-3", Number: 3, Location: "https://forge.invalid/pull/3"}
	with := func(fix forge.OpenFix, files ...string) forge.OpenFix { fix.Files = files; return fix }
	for _, tc := range []struct {
		name     string
		fixes    []forge.OpenFix
		err      error
		terminal pipeline.Terminal
		reason   string
		detail   string
	}{
		{name: "another finding's open PR changes the planned file", fixes: []forge.OpenFix{with(other, "docs/x.md", "src/fixed")},
			terminal: pipeline.Halt, reason: "in-flight", detail: "https://forge.invalid/pull/3 (finding gh-3) changes src/fixed"},
		{name: "a rename away from the planned file counts", fixes: []forge.OpenFix{with(other, "src/renamed", "src/fixed")},
			terminal: pipeline.Halt, reason: "in-flight", detail: "changes src/fixed"},
		{name: "an open PR on other files", fixes: []forge.OpenFix{with(other, "src/other", "tests/other")}, terminal: pipeline.DraftPR, reason: "fixed"},
		{name: "this finding's own PR is not another's", fixes: []forge.OpenFix{with(forge.OpenFix{ID: "gh-7", Location: "https://forge.invalid/pull/8"}, "src/fixed")}, terminal: pipeline.DraftPR, reason: "fixed"},
		{name: "rate limited while listing", err: &forge.RateLimitError{}, terminal: pipeline.Halt, reason: "forge-rate-limited"},
		{name: "the files cannot be told", err: errors.New("outbox: gh-3/pr.json records no files"), terminal: pipeline.Escalate, reason: "gate-error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, calls := forgeRun(t, func(f *forgetest.Fake) {
				f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).
					ExpectFixFiles(func() ([]forge.OpenFix, error) { return tc.fixes, tc.err })
				switch tc.terminal {
				case pipeline.DraftPR:
					f.ExpectPublish(forgetest.Published(9)).ExpectWaitChecks(forgetest.NoCI)
				case pipeline.Escalate:
					f.ExpectNotify(func(forge.Notice) error { return nil })
				}
			})
			if rep.Terminal != tc.terminal || rep.Reason != tc.reason || !strings.Contains(rep.Detail, tc.detail) {
				t.Fatalf("ended %s %s (%s), want %s %s with %q", rep.Terminal, rep.Reason, rep.Detail, tc.terminal, tc.reason, tc.detail)
			}
			if tc.terminal != pipeline.DraftPR && calls != 1 {
				t.Errorf("%d agent invocation(s), want the investigation only: the fix must not start", calls)
			}
		})
	}
}

// TestFailedPublishMovesNoBranch: whatever way the forge refuses the draft,
// the run's branch does not exist afterwards. The bundle or PR goes first
// and the branch moves only once it exists, so a failed publish can never
// leave a pushed-looking branch with no PR (a mutation that moved the
// branch first stayed green before this test).
func TestFailedPublishMovesNoBranch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		terminal pipeline.Terminal
	}{
		{"draft unsupported", forge.ErrDraftUnsupported, pipeline.Escalate},
		{"actions cannot open PRs", forge.ErrActionsCannotOpenPRs, pipeline.Escalate},
		{"rate limited", &forge.RateLimitError{Reset: time.Now().Add(time.Minute)}, pipeline.Halt},
		{"forge unavailable", forge.ErrUnavailable, pipeline.Halt},
		{"any other error", errors.New("outbox: no space left on device"), pipeline.Escalate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _, dir := forgeRunRepo(t, func(f *forgetest.Fake) {
				f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).
					ExpectPublish(func(forge.PR) (forge.Published, error) { return forge.Published{}, tc.err })
				if tc.terminal == pipeline.Escalate {
					f.ExpectNotify(func(forge.Notice) error { return nil })
				}
			})
			if rep.Terminal != tc.terminal {
				t.Fatalf("ended %s %s (%s), want %s", rep.Terminal, rep.Reason, rep.Detail, tc.terminal)
			}
			if rep.Branch != "" {
				t.Errorf("report names branch %q after a failed publish", rep.Branch)
			}
			out, err := exec.Command("git", "-C", dir, "for-each-ref", "--format=%(refname)", "refs/heads/fixrail/").CombinedOutput()
			if err != nil {
				t.Fatalf("for-each-ref: %v\n%s", err, out)
			}
			if len(out) != 0 {
				t.Errorf("a failed publish left branch(es):\n%s", out)
			}
		})
	}
}
