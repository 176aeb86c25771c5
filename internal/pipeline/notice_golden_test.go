package pipeline_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// TestNoticeBodyGolden pins the comment posted on the issue when a run
// ends ESCALATE or NOT-REPRO, or finds an escalation already open: what
// the reporter and the maintainers read — for a plan that concludes there
// is no bug, the agent's reason, quoted as its own. One agent names a file with
// Markdown in it (a mention, an image the forge would fetch on every view,
// a link): it shows as text.
func TestNoticeBodyGolden(t *testing.T) {
	hostile := "src/@octocat ![x](https:attacker.invalid?d=1) [y](https:attacker.invalid)"
	for _, tc := range []struct {
		name   string
		agent  func(runner.Invocation) (runner.Result, error)
		expect func(f *forgetest.Fake)
		want   pipeline.Terminal
	}{
		{name: "escalate-draft-unsupported", agent: goodAgent, want: pipeline.Escalate,
			expect: func(f *forgetest.Fake) {
				f.ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).
					ExpectPublish(func(forge.PR) (forge.Published, error) { return forge.Published{}, forge.ErrDraftUnsupported })
			}},
		{name: "not-repro-no-plan", want: pipeline.NotRepro,
			agent:  func(runner.Invocation) (runner.Result, error) { return runner.Result{}, nil },
			expect: func(f *forgetest.Fake) { f.ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted) }},
		{name: "not-repro-works-as-designed", want: pipeline.NotRepro,
			agent: concludes("{\"summary\": \"None is not text\", \"conclusion\": \"works-as-designed\", \"reason\": " +
				"\"shout() says None is not text (src/README).\\n@octocat ![x](https:attacker.invalid?d=1) [y](https:attacker.invalid)\\n\\u001b]52;c;aGk=\\u0007 ````\\n# not a heading\"}"),
			expect: func(f *forgetest.Fake) { f.ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted) }},
		{name: "not-repro-cannot-reproduce", want: pipeline.NotRepro,
			agent:  concludes(`{"summary": "fine on main", "conclusion": "cannot-reproduce", "reason": "shout(None) returns \"!\" on main; the traceback names 1.0."}`),
			expect: func(f *forgetest.Fake) { f.ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted) }},
		{name: "escalate-hostile-path", want: pipeline.Escalate,
			agent: func(inv runner.Invocation) (runner.Result, error) {
				if inv.Phase == runner.Investigate {
					if err := os.WriteFile(filepath.Join(inv.Worktree, hostile), []byte("x\n"), 0o644); err != nil {
						return runner.Result{}, err
					}
				}
				return goodAgent(inv)
			},
			expect: func(f *forgetest.Fake) { f.ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted) }},
		// A name with terminal escapes, a C1 CSI and a bidi override: the
		// notice shows each as a visible escape, never the raw control.
		{name: "escalate-control-path", want: pipeline.Escalate,
			agent: func(inv runner.Invocation) (runner.Result, error) {
				if inv.Phase == runner.Investigate {
					name := "src/\x1b]0;owned\x07\x1b[2J\u009b31m\u202eyp.live\u200b"
					if err := os.WriteFile(filepath.Join(inv.Worktree, name), []byte("x\n"), 0o644); err != nil {
						return runner.Result{}, err
					}
				}
				return goodAgent(inv)
			},
			expect: func(f *forgetest.Fake) { f.ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted) }},
		{name: "escalation-open", agent: goodAgent, want: pipeline.Halt,
			expect: func(f *forgetest.Fake) {
				f.ExpectOpenWork(func(forge.Subject) (forge.Work, error) {
					return forge.Work{Escalation: &forge.OpenEscalation{Number: 7, Label: forge.LabelEscalated, Location: "https://forge.invalid/issues/7"}}, nil
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
			s, err := pipeline.Prepare(t.Context(), dir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var notice forge.Notice
			f := forgetest.New(t)
			f.ExpectAssertProtected(forgetest.Protected)
			tc.expect(f)
			f.ExpectNotify(func(n forge.Notice) error { notice = n; return nil })
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: &findings.Finding{ID: "gh-7", Title: "broken", Body: "it is BROKEN", Issue: 7},
				Runner:  funcAgent(tc.agent),
				Forge:   f,
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != tc.want {
				t.Fatalf("ended %s %s (%s), want %s", rep.Terminal, rep.Reason, rep.Detail, tc.want)
			}
			matchGolden(t, filepath.Join("testdata", "notice", tc.name+".md"), normalise(notice.Body))
		})
	}
}

// concludes is an investigating agent that writes plan as PLAN.json and
// nothing else.
func concludes(plan string) func(runner.Invocation) (runner.Result, error) {
	return func(inv runner.Invocation) (runner.Result, error) {
		if inv.Phase != runner.Investigate {
			return runner.Result{}, errors.New("a concluding run has no fix phase")
		}
		return runner.Result{}, os.WriteFile(inv.PlanPath, []byte(plan), 0o600)
	}
}
