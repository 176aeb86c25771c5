package pipeline_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// reasonCase ends one run with one reason: either a CLI scenario that
// already does (the file must assert the reason), or a run here, over a
// scripted agent and the recording forge.
type reasonCase struct {
	scenario string // testdata/script file under internal/cli, or a test file here
	terminal pipeline.Terminal
	yaml     string                                             // replaces the base fixrail.yaml
	agent    func(inv runner.Invocation) (runner.Result, error) // wraps the good agent
	forge    func(f *forgetest.Fake)                            // expectations after P1's protection check
	before   func(t *testing.T, s *pipeline.Setup)              // before the run
	noGuard  bool                                               // the run ends before P1 asks the forge
	pastP3   bool                                               // the run passes P3's path locks, which ask for open fixes' files
}

const reasonsYAML = `runner: {kind: command, command: ["true"]}
test:   {command: ["sh", "{test_path}"], path_glob: "tests/**"}
suite:  {command: ["true"]}
paths:  {fixable: ["src/**"]}
sandbox: off
`

// goodAgent writes a failing check, then the fix.
func goodAgent(inv runner.Invocation) (runner.Result, error) {
	return scriptedAgent{}.Run(context.Background(), inv)
}

func failWith(phase runner.Phase, err error) func(runner.Invocation) (runner.Result, error) {
	return failWithResult(phase, runner.Result{}, err)
}

func failWithResult(phase runner.Phase, res runner.Result, err error) func(runner.Invocation) (runner.Result, error) {
	return func(inv runner.Invocation) (runner.Result, error) {
		if inv.Phase == phase {
			return res, err
		}
		return goodAgent(inv)
	}
}

// The last words of the scripted failing agent.
const (
	failStdout = "agent: step 3 of 3"
	failStderr = "agent: giving up\nmodel quota exhausted for org"
)

func publishFails(err error) func(*forgetest.Fake) {
	return func(f *forgetest.Fake) {
		f.ExpectFixFiles(forgetest.NoFixes).ExpectPublish(func(forge.PR) (forge.Published, error) { return forge.Published{}, err })
	}
}

// reasonCases is every reason code a run can end with. A reason added to
// package verdict or to runner's kinds without a case here fails
// TestEveryReasonEndsARun.
var reasonCases = map[string]reasonCase{
	"fixed":              {scenario: "run_s1_null_deref.txtar"},
	"in-flight":          {scenario: "run_halt_in_flight_branch.txtar"},
	"wall-clock":         {scenario: "run_halt_wall_clock.txtar"},
	"interrupted":        {scenario: "run_halt_signal.txtar"},
	"declined":           {scenario: "run_interactive_declined.txtar"},
	"no-plan":            {scenario: "run_plan_invalid.txtar"},
	"works-as-designed":  {scenario: "run_not_a_bug.txtar"},
	"cannot-reproduce":   {scenario: "run_not_a_bug.txtar"},
	"unsafe-path":        {scenario: "run_evidence_fifo.txtar"},
	"write-before-repro": {scenario: "run_s10_write_before_repro.txtar"},
	"green-on-base":      {scenario: "run_s4_green_on_base.txtar"},
	"symptom-mismatch":   {scenario: "run_s4b_symptom_mismatch.txtar"},
	"bad-test-path":      {scenario: "run_evidence_symlink_test.txtar"},
	"sensitive-path":     {scenario: "run_s2_sensitive_path.txtar"},
	"config-drift":       {scenario: "run_config_drift.txtar"},
	"no-sandbox":         {scenario: "run_no_bubblewrap.txtar"},
	"poisoned-clone":     {scenario: "run_unconfined_attr.txtar"},
	"undeclared-changes": {scenario: "run_evidence_fixtures.txtar"},
	"leak":               {scenario: "run_leak_context_line.txtar"},
	"budget-unreadable":  {scenario: "run_budget_unreadable.txtar"},
	"high-risk":          {scenario: "run_high_risk.txtar"},
	"empty-diff":         {scenario: "run_evidence_fifo.txtar"},
	"diff-outside-plan":  {scenario: "run_s1b_unplanned_file.txtar"},
	"diff-budget":        {scenario: "run_halt_diff_budget.txtar"},
	"test-modified":      {scenario: "run_test_modified.txtar"},
	"oracle-still-red":   {scenario: "run_oracle_still_red.txtar"},
	"suite-red":          {scenario: "run_suite_red.txtar"},
	"egress-refused":     {scenario: "run_egress_exfiltration.txtar"},
	"egress-cap":         {scenario: "run_egress_cap.txtar"},

	"evidence-changes-tracked": {scenario: "run_evidence_overwrites_suite_test.txtar"},
	"evidence-breaks-suite":    {scenario: "run_evidence_breaks_suite.txtar"},

	"runner-crashed":         {scenario: "run_halt_runner_crashed.txtar"},
	"forge-error":            {scenario: "run_unconfined_state_dir.txtar"},
	"llm-fail":               {scenario: "llm_gate_test.go"},
	"in-flight-broken":       {scenario: "forgework_test.go"},
	"token-lacks-permission": {scenario: "run_gh_token_cannot_push.txtar"},
	"escalation-open":        {scenario: "forgework_test.go"},
	"ci-failed":              {scenario: "forgework_test.go"},
	"recheck-failed":         {scenario: "run_gh_recheck_still_red.txtar"},
	"dry-run":                {scenario: "dryrun_test.go"},

	"package-not-in-manifest": {scenario: "run_cve_not_in_manifest.txtar"},
	"no-safe-version":         {scenario: "run_cve_no_safe_version.txtar"},
	"no-location":             {scenario: "run_sast_suppressed.txtar"},
	"scanner-suppressed":      {scenario: "run_sast_suppressed.txtar"},
	"new-scanner-result":      {scenario: "run_sast_new_high.txtar"},
	"build-check-failed":      {scenario: "run_sast_build_fails.txtar"},
	"lockfile-regen-failed":   {scenario: "run_cve_npm_regen_fails.txtar"},
	"lockfile-source":         {scenario: "run_cve_npm_lock_foreign_host.txtar"},
	"no-advisory-data":        {scenario: "run_cve_no_advisory_data.txtar"},
	"unbumpable-declaration":  {scenario: "run_cve_requirements_markers.txtar"},
	"added-package-advisory":  {scenario: "run_added_package_malware.txtar"},
	"added-package-unchecked": {scenario: "run_added_package_unchecked.txtar"},

	"budget-exhausted": {terminal: pipeline.Halt, noGuard: true,
		yaml: reasonsYAML + "budget: {actor_day: {cost_usd: 15, runs: 1, turns: 400}}\n",
		before: func(t *testing.T, s *pipeline.Setup) {
			// One run spends the actor's only run of the day.
			rep := runOnce(t, s, "first", goodAgent, func(f *forgetest.Fake) {
				f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).ExpectPublish(forgetest.Published(1)).ExpectWaitChecks(forgetest.NoCI)
			})
			if rep.Terminal != pipeline.DraftPR {
				t.Fatalf("the first run ended %s %s: %s", rep.Terminal, rep.Reason, rep.Detail)
			}
		}},
	"bad-result": {terminal: pipeline.Escalate, pastP3: true, agent: func(inv runner.Invocation) (runner.Result, error) {
		res, err := goodAgent(inv)
		if inv.Phase == runner.Fix {
			os.WriteFile(inv.ResultPath, []byte(`{"summary": "fixed", "files_changed": "src/fixed"}`), 0o600)
		}
		return res, err
	}},
	"closes-an-issue": {terminal: pipeline.Escalate, pastP3: true, agent: func(inv runner.Invocation) (runner.Result, error) {
		// A planned path the commit's File trailer would carry.
		switch inv.Phase {
		case runner.Investigate:
			os.WriteFile(filepath.Join(inv.Worktree, "tests", "check.sh"), []byte("test -f 'src/fixes #1' || { echo BROKEN; exit 1; }\n"), 0o644)
			os.WriteFile(inv.PlanPath, []byte(`{"summary": "s", "files": ["src/fixes #1"], "test": {"path": "tests/check.sh", "name": "check", "symptom": "BROKEN"}}`), 0o600)
		case runner.Fix:
			os.WriteFile(filepath.Join(inv.Worktree, "src", "fixes #1"), []byte("ok\n"), 0o644)
			os.WriteFile(inv.ResultPath, []byte(`{"summary": "fixed", "files_changed": ["src/fixes #1"]}`), 0o600)
		}
		return runner.Result{}, nil
	}},
	"gate-error": {terminal: pipeline.Escalate, pastP3: true,
		yaml: strings.Replace(reasonsYAML, `suite:  {command: ["true"]}`, `suite:  {command: ["./no-such-suite-binary"]}`, 1)},
	"check-error": {terminal: pipeline.Halt, noGuard: true, before: func(t *testing.T, s *pipeline.Setup) {
		// The lock directory is a file: the lock cannot be taken.
		dir, err := s.StateDir("runs")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "locks"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	"internal-error": {terminal: pipeline.Halt, pastP3: true, agent: func(inv runner.Invocation) (runner.Result, error) {
		if inv.Phase == runner.Fix {
			panic("the agent adapter has a bug")
		}
		return goodAgent(inv)
	}},
	"forge-rate-limited":      {terminal: pipeline.Halt, forge: publishFails(&forge.RateLimitError{})},
	"forge-unavailable":       {terminal: pipeline.Halt, forge: publishFails(forge.ErrUnavailable)},
	"draft-unsupported":       {terminal: pipeline.Escalate, forge: publishFails(forge.ErrDraftUnsupported)},
	"actions-cannot-open-prs": {terminal: pipeline.Escalate, forge: publishFails(forge.ErrActionsCannotOpenPRs)},
	"no-branch-protection": {terminal: pipeline.Halt, noGuard: true, forge: func(f *forgetest.Fake) {
		f.ExpectAssertProtected(func(string, []string) (forge.Protection, error) {
			return forge.Protection{}, &forge.ProtectionError{Found: forge.Protection{Branch: "main", Applicable: true}}
		})
	}},
}

func init() {
	// Every runner failure kind ends a run: a HALT, but an agent outside
	// its rails is a breach, and ESCALATEs.
	for _, k := range []runner.Kind{runner.Crashed, runner.TimedOut, runner.Failed, runner.Unavailable, runner.Canceled, runner.OutOfTurns, runner.APIError, runner.Refused, runner.Unconfined, runner.OverBudget} {
		if _, ok := reasonCases[string(k)]; ok || k == runner.Canceled {
			continue
		}
		t := pipeline.Halt
		if k == runner.Unconfined {
			t = pipeline.Escalate
		}
		// What the agent said and spent, as a metered adapter reports it;
		// an agent that could not start said and spent nothing.
		res := runner.Result{Metered: true, Cost: 0.125, Turns: 2, StdoutTail: failStdout, StderrTail: failStderr}
		if k == runner.Unavailable || k == runner.Refused {
			res = runner.Result{NeverStarted: true}
		}
		reasonCases[string(k)] = reasonCase{terminal: t, agent: failWithResult(runner.Investigate, res, &runner.Error{Kind: k, Detail: "scripted"})}
	}
}

func runOnce(t *testing.T, s *pipeline.Setup, id string, agent func(runner.Invocation) (runner.Result, error), expect func(*forgetest.Fake)) *pipeline.Report {
	t.Helper()
	f := forgetest.New(t)
	if expect != nil {
		expect(f)
	}
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: id, Title: "broken", Body: "it is BROKEN"},
		Runner:  funcAgent(agent),
		Forge:   f,
		TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

type funcAgent func(runner.Invocation) (runner.Result, error)

func (a funcAgent) Run(_ context.Context, inv runner.Invocation) (runner.Result, error) {
	return a(inv)
}

// neverTerminal are defined reasons no run ends with, and why.
var neverTerminal = map[string]string{
	// The run's own stop (interrupted, wall-clock) is decided before the
	// runner's error is read; an adapter canceled by anything else is a
	// failure (TestCanceledAdapterIsAFailure).
	string(runner.Canceled): "a stop decides first",
}

// TestCanceledAdapterIsAFailure: an adapter that says it was canceled
// while the run was not stopped ends the run as runner-failed.
func TestCanceledAdapterIsAFailure(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "src/README": "source\n", "tests/.keep": ""})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep := runOnce(t, s, "canceled", failWith(runner.Fix, &runner.Error{Kind: runner.Canceled, Detail: "scripted"}), func(f *forgetest.Fake) {
		f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes)
	})
	if rep.Terminal != pipeline.Halt || rep.Reason != string(runner.Failed) {
		t.Fatalf("ended %s %s (%s), want HALT runner-failed", rep.Terminal, rep.Reason, rep.Detail)
	}
}

// TestEveryReasonEndsARun: each reason code has a run that ends with it,
// and every reason the code defines is in the table.
func TestEveryReasonEndsARun(t *testing.T) {
	for _, code := range definedReasons(t) {
		if _, never := neverTerminal[code]; never {
			continue
		}
		if _, ok := reasonCases[code]; !ok {
			t.Errorf("reason %q has no case in reasonCases: add a run that ends with it", code)
		}
	}
	for code, tc := range reasonCases {
		t.Run(code, func(t *testing.T) {
			if tc.scenario != "" {
				path := filepath.Join("..", "cli", "testdata", "script", tc.scenario)
				want := `"reason": "` + code + `"`
				if strings.HasSuffix(tc.scenario, ".go") {
					path, want = tc.scenario, strconv.Quote(code)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("the case names %s: %v", tc.scenario, err)
				}
				if !strings.Contains(string(data), want) {
					t.Fatalf("%s does not assert %s", tc.scenario, want)
				}
				return
			}
			yaml := tc.yaml
			if yaml == "" {
				yaml = reasonsYAML
			}
			dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": yaml, "src/README": "source\n", "tests/.keep": ""})
			s, err := pipeline.Prepare(t.Context(), dir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tc.before != nil {
				tc.before(t, s)
			}
			agent := tc.agent
			if agent == nil {
				agent = goodAgent
			}
			rep := runOnce(t, s, "reason", agent, func(f *forgetest.Fake) {
				if !tc.noGuard {
					f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted)
				}
				if tc.pastP3 {
					f.ExpectFixFiles(forgetest.NoFixes)
				}
				if tc.forge != nil {
					tc.forge(f)
				}
			})
			if rep.Terminal != tc.terminal || rep.Reason != code {
				for _, g := range rep.Gates {
					t.Logf("%s %s %s %s", g.Phase, g.Name, g.Verdict, g.Detail)
				}
				t.Fatalf("ended %s %s (%s), want %s %s", rep.Terminal, rep.Reason, rep.Detail, tc.terminal, code)
			}
			if rep.Terminal != pipeline.DraftPR && rep.Branch != "" {
				t.Errorf("a %s run set branch %s", rep.Terminal, rep.Branch)
			}
			wantLedgerAgrees(t, s, rep)
			// A runner-* ending keeps the agent's last words (item: a
			// failing agent leaves a trace), unless it never started.
			if strings.HasPrefix(code, "runner-") && code != string(runner.Unavailable) && code != string(runner.Refused) {
				if o := rep.AgentOutput; o == nil || o.Phase != "P2" || o.Stdout != failStdout || o.Stderr != failStderr {
					t.Errorf("agent output %+v, want the scripted agent's last lines from P2", o)
				}
			}
		})
	}
}

// definedReasons reads the reason constants from package verdict's source
// (the one list) and the runner's failure kinds.
func definedReasons(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []struct{ path, prefix, typ string }{
		{"../verdict/verdict.go", "Reason", ""},
		{"../runner/runner.go", "", "Kind"},
	} {
		file, err := parser.ParseFile(token.NewFileSet(), f.path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if f.typ != "" {
					if id, ok := v.Type.(*ast.Ident); !ok || id.Name != f.typ {
						continue
					}
				}
				for i, name := range v.Names {
					if !strings.HasPrefix(name.Name, f.prefix) || i >= len(v.Values) {
						continue
					}
					if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						out = append(out, s)
					}
				}
			}
		}
	}
	slices.Sort(out)
	if len(out) < 30 {
		t.Fatalf("found only %d reason constants: the parse is broken", len(out))
	}
	return slices.Compact(out)
}
