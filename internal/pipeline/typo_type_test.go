package pipeline_test

// A throwaway fix type, written only against package fixtype's API, to
// prove the seam: the pipeline drives it end to end without naming it
// (TestThrowawayFixType). Its finding is a misspelt word; its evidence is
// a file holding the word; its oracle is grep, run by the harness.

import (
	"context"
	"fmt"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/verdict"
)

func init() { fixtype.Register(typoType) }

type typoPlan struct {
	Summary string   `json:"summary"`
	Files   []string `json:"files"`
	Word    string   `json:"word"`
}

const typoEvidence = "evidence/typo.txt"

// typoGrep finds the misspelt word (the evidence file's line) in src.
func typoGrep() []string { return []string{"grep", "-rqF", "-f", typoEvidence, "src"} }

var typoType = &fixtype.Type{
	Name:    "typo",
	Doc:     "a misspelt word in the sources, found by grep",
	Subject: "typo report",
	Budget:  fixtype.Budget{MaxDiffLines: 4},
	Check:   func(*config.Config) error { return nil },
	Scope:   func(*config.Config) []string { return []string{"evidence/**"} },
	Investigate: func(b fixtype.Brief) string {
		return fmt.Sprintf("Write the misspelt word to %s and PLAN.json to %s.\n", typoEvidence, b.PlanPath)
	},
	Fix: func(b fixtype.Brief, _ *fixtype.Plan) string {
		return fmt.Sprintf("Correct the word in the planned files; write %s.\n", b.ResultPath)
	},
	ReadPlan: func(path string, _ *config.Config) (*fixtype.Plan, error) {
		var p typoPlan
		if err := fixtype.ReadStrict(path, &p); err != nil {
			return nil, err
		}
		for _, f := range p.Files {
			if _, err := pathguard.CleanRel(f); err != nil {
				return nil, fmt.Errorf("%w: %v", fixtype.ErrUnsafePath, err)
			}
		}
		return &fixtype.Plan{Summary: p.Summary, Files: p.Files, Evidence: []string{typoEvidence},
			Values: "word: " + p.Word, Report: map[string]any{"word": p.Word, "files": p.Files}, Detail: &p}, nil
	},
	Red: func(e *fixtype.Env, p *fixtype.Plan) *gates.Gate {
		return &gates.Gate{Name: "typo-present", Doc: "grep finds the word on the base", Reason: verdict.ReasonGreenOnBase, Fails: verdict.NotRepro,
			Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
				res, err := e.Exec(ctx, "typo-red", c.Commit, typoGrep(), e.Config.Suite.Timeout)
				if err != nil {
					return gates.Verdict{}, err
				}
				return gates.Verdict{Pass: res.Success(), Detail: "grep: " + res.Describe()}, nil
			}}
	},
	Gates: func(e *fixtype.Env, p *fixtype.Plan) []*gates.Gate {
		return []*gates.Gate{{Name: "typo-gone", Doc: "grep no longer finds the word", Reason: verdict.ReasonOracleStillRed,
			Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
				res, err := e.Exec(ctx, "typo-green", c.Commit, typoGrep(), e.Config.Suite.Timeout)
				if err != nil {
					return gates.Verdict{}, err
				}
				return gates.Verdict{Pass: res.ExitCode == 1, Detail: "grep: " + res.Describe()}, nil
			}}}
	},
	CommitNote: func(_ *fixtype.Env, p *fixtype.Plan) string {
		return "Typo corrected: " + p.Detail.(*typoPlan).Word + ".\n"
	},
	Section: func(_ *fixtype.Env, p *fixtype.Plan, commit string) string {
		return "### The typo\n\n" + markdown.Code(p.Detail.(*typoPlan).Word) + " is gone as of " + commit[:12] + ".\n"
	},
}
