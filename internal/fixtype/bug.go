package fixtype

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Bug is the bug fix type: the investigate phase writes a reproducing test
// (and the fixtures it needs) under test.path_glob; the oracle is that
// test, run by the harness, red on the base with the reported symptom and
// green on the candidate, byte for byte the same.
var Bug = &Type{
	Name:    "bug",
	Doc:     "a bug report: reproduced by a failing test the agent writes, fixed until that test passes",
	Subject: "bug report",
	Check:   checkBug,
	Scope:   func(cfg *config.Config) []string { return []string{cfg.Test.PathGlob} },
	Investigate: func(b Brief) string {
		var s strings.Builder
		s.WriteString("You MUST:\n")
		fmt.Fprintf(&s, "- reproduce the reported bug with ONE failing test before any fix exists, written under `%s` — the only place you may write in this phase;\n", b.Config.Test.PathGlob)
		s.WriteString("- make that test exercise the invariant the report implies — the concurrent, tenant or boundary path it describes (two callers at once, another tenant's data, the value at the limit), not only the happy path;\n")
		s.WriteString("- change no other file, and declare every file you wrote besides the test as a fixture: an undeclared write, or one anywhere else, ends the run with an escalation;\n")
		fmt.Fprintf(&s, "- write PLAN.json to %s (also in $FIXRAIL_PLAN): {\"summary\": \"…\", \"files\": [the source files the fix will change], \"test\": {\"path\": \"…\", \"name\": \"…\", \"symptom\": \"a short string the failing test's output contains, naming no issue (no 'fixes #N')\", \"fixtures\": [any other file you wrote for the test to run, such as an __init__.py, a conftest or testdata files]}};\n", b.PlanPath)
		s.WriteString("- plan sensitive files (authentication, credentials, secrets, crypto, migrations, permissions, CI configuration) honestly if the fix needs them: the harness then hands the fix to a human. Do not work around it.\n\n")
		fmt.Fprintf(&s, "If the code shows the reported behaviour is as designed, or you cannot reproduce it, say so instead of forcing a test: write no file, and write PLAN.json as {\"summary\": \"…\", \"conclusion\": \"works-as-designed\" or \"cannot-reproduce\", \"reason\": \"why, citing the code, documentation or tests you read (at most %d bytes)\"}, with no \"files\" and no \"test\". The run then ends without a fix and a human reads your reason. Whenever the bug does reproduce you must still write the failing test: a conclusion is for a report with no bug in it, never for a bug that is hard to test.\n\n", MaxConclusionReason)
		s.WriteString("The harness — not you — runs the test, commits, and opens a draft pull request. Never merge, push, comment or change dependencies.\n")
		return s.String()
	},
	Fix: func(b Brief, _ *Plan) string {
		var s strings.Builder
		s.WriteString("The harness ran your reproducing test on the unpatched tree and saw it fail with the symptom. Now:\n")
		s.WriteString("- make the smallest change to the planned files that turns that test green, keeping the existing suite green;\n")
		s.WriteString("- change only the planned files; do not edit the reproducing test;\n")
		fmt.Fprintf(&s, "- write the result to %s (also in $FIXRAIL_RESULT): {\"summary\": \"…\", \"files_changed\": [every file you changed]}.\n", b.ResultPath)
		return s.String()
	},
	ReadPlan: func(path string, cfg *config.Config) (*Plan, error) {
		bp, err := ReadBugPlan(path)
		if err != nil {
			return nil, err
		}
		if bp.Conclusion != "" {
			return &Plan{Summary: bp.Summary, Conclusion: &Conclusion{Code: bp.Conclusion, Reason: bp.Reason}, Detail: bp}, nil
		}
		// An empty name would run every test of the package, or none
		// (go test -run '^$'): not the test the plan names.
		if bp.Test.Name == "" && cfg != nil && mentions(cfg.Test.Command, "{test_name}") {
			return nil, fmt.Errorf("%w: test.name is required: test.command runs the test by its name ({test_name})", ErrInvalid)
		}
		return &Plan{
			Summary:  bp.Summary,
			Files:    bp.Files,
			Evidence: append([]string{bp.Test.Path}, bp.Test.Fixtures...),
			Tests:    []string{bp.Test.Path},
			Values: fmt.Sprintf("files: %s\ntest path: %s\ntest name: %s\nsymptom: %s",
				strings.Join(bp.Files, ", "), bp.Test.Path, bp.Test.Name, bp.Test.Symptom),
			Report: BugPlanRef{Files: bp.Files, TestPath: bp.Test.Path, TestName: bp.Test.Name, Symptom: bp.Test.Symptom, Fixtures: bp.Test.Fixtures},
			Detail: bp,
			Test:   &Test{Path: bp.Test.Path, Name: bp.Test.Name, Symptom: bp.Test.Symptom},
		}, nil
	},
	Replay: replayBug,
	Red:    bugRed,
	Gates:  func(e *Env, p *Plan) []*gates.Gate { return []*gates.Gate{testUnchanged(p), oracleGreen(e, p)} },
	CommitNote: func(e *Env, p *Plan) string {
		return fmt.Sprintf("Reproduced by %s (red on %s, green after).\n", bugOf(p).Test.Path, short(e.BaseSHA))
	},
	Section: bugSection,
}

// BugPlan is PLAN.json as the bug type's investigate phase writes it:
// the files to fix and the test that reproduces the bug, or — instead of
// both — a conclusion that there is no bug to fix, and why.
type BugPlan struct {
	Summary string   `json:"summary"`
	Files   []string `json:"files"`
	Test    TestSpec `json:"test"`
	// Conclusion is a key of Conclusions (works-as-designed,
	// cannot-reproduce); Reason says why, for a human.
	Conclusion string `json:"conclusion,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// bugPlanJSON is PLAN.json as decoded, before it is told apart: with Test
// a pointer, a plan that both concludes and names a test is seen as such.
type bugPlanJSON struct {
	Summary    string    `json:"summary"`
	Files      []string  `json:"files"`
	Test       *TestSpec `json:"test"`
	Conclusion string    `json:"conclusion"`
	Reason     string    `json:"reason"`
}

// TestSpec names the reproducing test and the symptom its failure must show.
type TestSpec struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Symptom string `json:"symptom"`
	// Fixtures are the other files the investigate phase wrote for the test
	// to run — a conftest, an __init__.py, a table test's testdata files.
	// They are evidence like the test: recorded, run red, committed, and
	// never changed by the fix. Anything else the phase writes escalates.
	Fixtures []string `json:"fixtures,omitempty"`
}

// BugPlanRef is what the run report keeps of a bug's plan.
type BugPlanRef struct {
	Files    []string `json:"files"`
	TestPath string   `json:"test_path"`
	TestName string   `json:"test_name,omitempty"`
	Symptom  string   `json:"symptom"`
	Fixtures []string `json:"fixtures,omitempty"`
}

func bugOf(p *Plan) *BugPlan { return p.Detail.(*BugPlan) }

// replayBug is the plan a fixrail commit's claim stands for: the test it
// names (the first evidence file), the rest of the evidence as fixtures,
// and the fix's files as the planned ones.
func replayBug(_ context.Context, _ *Env, c Claimed) (*Plan, error) {
	t, evidence, files := c.Test, c.Evidence, c.Files
	if t == nil || t.Path == "" || len(evidence) == 0 || evidence[0] != t.Path {
		return nil, fmt.Errorf("%w: a bug fix's claim names no reproducing test as its first evidence", ErrClaimDiffers)
	}
	bp := &BugPlan{Files: files, Test: TestSpec{Path: t.Path, Name: t.Name, Symptom: t.Symptom, Fixtures: evidence[1:]}}
	return &Plan{Files: files, Evidence: evidence, Tests: []string{t.Path}, Detail: bp, Test: t}, nil
}

// checkBug holds the test section to what makes it an oracle.
func checkBug(cfg *config.Config) error {
	t := cfg.Test
	switch {
	case len(t.Command) == 0 || t.Command[0] == "":
		return errors.New("test.command is required: it is the oracle that must be red before the fix and green after")
	case !mentions(t.Command, "{test_path}") && !mentions(t.Command, "{test_name}"):
		return errors.New("test.command must name {test_path} or {test_name}: running the whole suite is not a reproduction")
	case t.PathGlob == "":
		return errors.New("test.path_glob is required: it is the only place phase 1 may write")
	case !doublestar.ValidatePattern(t.PathGlob):
		return fmt.Errorf("test.path_glob %q is not a valid glob", t.PathGlob)
	case t.Timeout <= 0:
		return errors.New("test.timeout must be a positive duration such as 10m")
	}
	return nil
}

func mentions(argv []string, placeholder string) bool {
	for _, a := range argv {
		if strings.Contains(a, placeholder) {
			return true
		}
	}
	return false
}

// plainTestID reports whether s may stand in for {test_name}: a test id in
// the usual runner syntaxes (letters, digits, _ . / : [ ] -, at most 200),
// never something that reads as a flag.
func plainTestID(s string) bool {
	if len(s) == 0 || len(s) > 200 || s[0] == '-' || s[0] == '.' || s[0] == '/' || s[0] == ':' || s[0] == '[' || s[0] == ']' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_./:[]-", c) >= 0) {
			return false
		}
	}
	return true
}

// ReadBugPlan reads and validates a bug's PLAN.json: a reproduction
// (files and a test) or a conclusion (and its reason), never both.
func ReadBugPlan(path string) (*BugPlan, error) {
	var raw bugPlanJSON
	if err := ReadStrict(path, &raw); err != nil {
		return nil, err
	}
	if strings.TrimSpace(raw.Summary) == "" {
		return nil, fmt.Errorf("%w: PLAN.json has no summary", ErrInvalid)
	}
	if raw.Conclusion != "" || raw.Reason != "" {
		return readConclusion(raw)
	}
	if raw.Test == nil {
		return nil, fmt.Errorf("%w: PLAN.json has no test (and no conclusion)", ErrInvalid)
	}
	p := BugPlan{Summary: raw.Summary, Files: raw.Files, Test: *raw.Test}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("%w: PLAN.json plans no source files", ErrInvalid)
	}
	if len(p.Files) > 100 {
		return nil, fmt.Errorf("%w: PLAN.json plans %d files", ErrInvalid, len(p.Files))
	}
	seen := map[string]bool{}
	files, err := CleanPaths("files", p.Files, seen)
	if err != nil {
		return nil, err
	}
	p.Files = files
	tp, err := CleanPaths("test.path", []string{p.Test.Path}, seen)
	if errors.Is(err, ErrInvalid) {
		return nil, fmt.Errorf("%w: the test file %s is also planned as a source file", ErrInvalid, p.Test.Path)
	}
	if err != nil {
		return nil, err
	}
	p.Test.Path = tp[0]
	if len(p.Test.Fixtures) > 100 {
		return nil, fmt.Errorf("%w: PLAN.json declares %d fixtures", ErrInvalid, len(p.Test.Fixtures))
	}
	if p.Test.Fixtures, err = CleanPaths("test.fixtures", p.Test.Fixtures, seen); err != nil {
		return nil, err
	}
	if len(p.Test.Fixtures) == 0 {
		p.Test.Fixtures = nil
	}
	if p.Test.Name != "" && !plainTestID(p.Test.Name) {
		return nil, fmt.Errorf("%w: test.name %q is not a plain test id", ErrInvalid, p.Test.Name)
	}
	if s := strings.TrimSpace(p.Test.Symptom); s == "" || len(s) > 500 || strings.ContainsAny(s, "\n\r") {
		return nil, fmt.Errorf("%w: test.symptom must be one line of 1 to 500 bytes", ErrInvalid)
	}
	p.Test.Symptom = strings.TrimSpace(p.Test.Symptom)
	// The symptom is a trailer of the commit: on the default branch GitHub
	// would read a closing keyword there and close an issue or pull
	// request the finding is not about.
	if ref := untrusted.ClosingReference(p.Test.Symptom); ref != "" {
		return nil, fmt.Errorf("%w: test.symptom holds %s, which GitHub reads as closing an issue once the commit is merged; a symptom must name no issue", ErrInvalid, untrusted.Quote(ref))
	}
	return &p, nil
}

// readConclusion validates a plan that concludes there is no bug to fix:
// a known conclusion, a reason of 1 to MaxConclusionReason bytes, and no
// files or test beside it — a plan reproduces or concludes, not both.
func readConclusion(raw bugPlanJSON) (*BugPlan, error) {
	if _, ok := Conclusions[raw.Conclusion]; !ok {
		return nil, fmt.Errorf("%w: PLAN.json's conclusion %q is none of %s", ErrInvalid, raw.Conclusion, strings.Join(conclusionNames(), ", "))
	}
	reason := strings.TrimSpace(raw.Reason)
	switch {
	case reason == "":
		return nil, fmt.Errorf("%w: PLAN.json concludes %s with no reason", ErrInvalid, raw.Conclusion)
	case len(reason) > MaxConclusionReason:
		return nil, fmt.Errorf("%w: PLAN.json's reason is %d bytes, over %d", ErrInvalid, len(reason), MaxConclusionReason)
	case raw.Test != nil:
		return nil, fmt.Errorf("%w: PLAN.json concludes %s and also plans a test: a plan reproduces the bug or concludes there is none, not both", ErrInvalid, raw.Conclusion)
	case raw.Files != nil:
		return nil, fmt.Errorf("%w: PLAN.json concludes %s and also plans files to fix", ErrInvalid, raw.Conclusion)
	}
	return &BugPlan{Summary: raw.Summary, Conclusion: raw.Conclusion, Reason: reason}, nil
}

func conclusionNames() []string {
	names := make([]string, 0, len(Conclusions))
	for c := range Conclusions {
		names = append(names, c)
	}
	slices.Sort(names)
	return names
}

// OracleArgv fills the test command's placeholders from the plan. The
// command itself comes from the base branch's fixrail.yaml; only the two
// validated values come from the agent, and never through a shell.
// {test_dir} is the directory holding the test ("." at the root), for a
// runner that takes a package, not a file (go test ./{test_dir}).
func OracleArgv(command []string, p *BugPlan) []string {
	r := strings.NewReplacer("{test_path}", p.Test.Path, "{test_name}", p.Test.Name, "{test_dir}", path.Dir(p.Test.Path))
	out := make([]string, len(command))
	for i, a := range command {
		out[i] = r.Replace(a)
	}
	return out
}

// bugRed runs the reproducing test on the base plus the evidence: it must
// fail, and its output must hold the symptom the plan declared.
func bugRed(e *Env, p *Plan) *gates.Gate {
	bp := bugOf(p)
	return &gates.Gate{
		Name:   "oracle-red",
		Doc:    "the reproducing test, run by the harness on the base plus the evidence, fails with the symptom the plan declared",
		Reason: verdict.ReasonGreenOnBase,
		Fails:  verdict.NotRepro,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			glob := e.Config.Test.PathGlob
			if ok, _ := doublestar.Match(glob, bp.Test.Path); !ok {
				return gates.Verdict{Reason: verdict.ReasonBadTestPath, Detail: bp.Test.Path + " is not under " + glob}, nil
			}
			res, err := e.Exec(ctx, "red", c.Commit, OracleArgv(e.Config.Test.Command, bp), e.Config.Test.Timeout)
			if err != nil {
				return gates.Verdict{}, fmt.Errorf("test command: %w", err)
			}
			switch {
			case res.Success():
				return gates.Verdict{Reason: verdict.ReasonGreenOnBase, Detail: "the test passes on the unpatched tree", Output: gates.Tail(res)}, nil
			case !strings.Contains(res.Output(), bp.Test.Symptom):
				return gates.Verdict{Reason: verdict.ReasonSymptomMismatch, Detail: fmt.Sprintf("test fails (%s) but its output lacks the symptom", res.Describe()), Output: gates.Tail(res)}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("test fails on %s (%s) with the symptom", e.Base, res.Describe()), Output: gates.Tail(res)}, nil
		},
	}
}

// testUnchanged makes the red→green flip mean something: the reproducing
// test and every fixture it came with must be byte for byte what the
// harness ran red, so the fix phase cannot turn it green by weakening it.
func testUnchanged(p *Plan) *gates.Gate {
	test := bugOf(p).Test.Path
	return &gates.Gate{
		Name:   "test-unchanged",
		Doc:    "the reproducing test and its fixtures are exactly the ones that were red on the base",
		Reason: verdict.ReasonTestModified,
		Run: func(_ context.Context, c *gates.Change) (gates.Verdict, error) {
			for _, ev := range c.Evidence {
				now, ok := c.Files[ev.Path]
				switch {
				case !ok:
					return gates.Verdict{}, fmt.Errorf("test-unchanged: %s is not in the candidate", ev.Path)
				case now.Deleted() && ev.Path == test:
					return gates.Verdict{Detail: "the reproducing test was deleted"}, nil
				case now.Deleted():
					return gates.Verdict{Detail: "the fix phase deleted " + ev.Path}, nil
				case !now.Same(ev):
					return gates.Verdict{Detail: "the fix phase edited " + ev.Path}, nil
				}
			}
			if len(c.Evidence) == 1 {
				return gates.Verdict{Pass: true, Detail: test}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("%s and %d fixture(s)", test, len(c.Evidence)-1)}, nil
		},
	}
}

// oracleGreen runs the reproducing test on a fresh checkout of the
// candidate; it must pass.
func oracleGreen(e *Env, p *Plan) *gates.Gate {
	argv := OracleArgv(e.Config.Test.Command, bugOf(p))
	return &gates.Gate{
		Name:   "oracle-green",
		Doc:    "the reproducing test, red on the base, passes on the fixed tree",
		Reason: verdict.ReasonOracleStillRed,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			res, err := e.Exec(ctx, "green", c.Commit, argv, e.Config.Test.Timeout)
			if err != nil {
				return gates.Verdict{}, fmt.Errorf("oracle-green: %w", err)
			}
			if !res.Success() {
				return gates.Verdict{Detail: "test still fails: " + res.Describe(), Output: gates.Tail(res)}, nil
			}
			if len(c.FixTests) == 0 || c.FixAlone == "" || c.FixAlone == c.Commit {
				return gates.Verdict{Pass: true, Detail: "test passes", Output: gates.Tail(res)}, nil
			}
			// The fix also wrote where the tests live: the flip must be
			// the fix's, not that test code's.
			alone, err := e.Exec(ctx, "green-fix-alone", c.FixAlone, argv, e.Config.Test.Timeout)
			if err != nil {
				return gates.Verdict{}, fmt.Errorf("oracle-green: %w", err)
			}
			if !alone.Success() {
				return gates.Verdict{Detail: fmt.Sprintf("test passes on the candidate but fails (%s) without the test files the fix adds, changes or deletes (%s): they, not the fix, turn it green", alone.Describe(), strings.Join(c.FixTests, ", ")), Output: gates.Tail(alone)}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("test passes, also without the %d test file(s) the fix adds, changes or deletes", len(c.FixTests)), Output: gates.Tail(res)}, nil
		},
	}
}

func bugSection(e *Env, p *Plan, commit string) string {
	bp := bugOf(p)
	var b strings.Builder
	b.WriteString("### What was reproduced\n\n")
	fmt.Fprintf(&b, "The harness ran %s on %s (%s) on a fresh checkout of the base plus the test before any fix existed: it failed, and its output contained %s, the symptom the plan declared (the investigating agent chose it; the harness checked only that the failure shows it). ",
		markdown.Code(strings.Join(OracleArgv(e.Config.Test.Command, bp), " ")), markdown.Code(e.Base), short(e.BaseSHA), markdown.Code(bp.Test.Symptom))
	fmt.Fprintf(&b, "After the fix, the same test, byte for byte, passes on a fresh checkout of commit %s, which is exactly what this branch holds.\n\n", short(commit))
	b.WriteString("### The test that proves it\n\n")
	fmt.Fprintf(&b, "- %s", markdown.Code(bp.Test.Path))
	if bp.Test.Name != "" {
		fmt.Fprintf(&b, " (%s)", markdown.Code(bp.Test.Name))
	}
	b.WriteString("\n")
	for _, f := range bp.Test.Fixtures {
		fmt.Fprintf(&b, "- fixture %s\n", markdown.Code(f))
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
