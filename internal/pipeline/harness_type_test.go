package pipeline_test

// A second throwaway fix type, of the other shape: the harness does all of
// it (Plan decides, Edit edits, the oracle reads files with the type's own
// code), no agent is asked anything, as the cve type's built-in bumper
// works. Registered with one line, it proves the harness seams are the
// pipeline's, not the cve type's (TestHarnessOnlyFixType).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/verdict"
)

func init() { fixtype.Register(respellType) }

const respellFile = "src/doc.txt"

// respellFinds reports whether respellFile under dir holds the
// misspelling: the type's own code reading a checkout, never running it.
func respellFinds(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, respellFile))
	if err != nil {
		return false, err
	}
	return bytes.Contains(b, []byte("teh ")), nil
}

// respellOracle is a gate that reads the change's checkout.
func respellOracle(e *fixtype.Env, name string, want bool, reason string, fails verdict.Terminal) *gates.Gate {
	return &gates.Gate{Name: name, Doc: "the misspelling is (or is not) in " + respellFile, Reason: reason, Fails: fails,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			var found bool
			err := e.Read(ctx, name, c.Commit, func(dir string) (err error) {
				found, err = respellFinds(dir)
				return err
			})
			if err != nil {
				return gates.Verdict{}, err
			}
			return gates.Verdict{Pass: found == want, Detail: fmt.Sprintf("misspelling present: %v", found)}, nil
		}}
}

var respellType = &fixtype.Type{
	Name:    "respell",
	Doc:     "a misspelling the harness finds and corrects itself",
	Subject: "spelling report",
	Budget:  fixtype.Budget{MaxDiffLines: 2},
	Check:   func(*config.Config) error { return nil },
	Scope:   func(*config.Config) []string { return nil },
	Plan: func(_ context.Context, _ *fixtype.Env, dir string, f *findings.Finding) (*fixtype.Plan, error) {
		found, err := respellFinds(dir)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, &fixtype.StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonGreenOnBase, Err: errors.New("no misspelling on the base")}
		}
		return &fixtype.Plan{Summary: "teh → the", Files: []string{respellFile}, Values: "word: teh",
			Report: map[string]any{"word": "teh"}, Detail: "teh"}, nil
	},
	Edit: func(_ context.Context, _ *fixtype.Env, _ *fixtype.Plan, dir string) (*fixtype.Result, error) {
		p := filepath.Join(dir, respellFile)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("teh "), []byte("the ")), 0o644); err != nil {
			return nil, err
		}
		return &fixtype.Result{Summary: "corrected teh", FilesChanged: []string{respellFile}}, nil
	},
	Fix: func(fixtype.Brief, *fixtype.Plan) string { return "unused: Edit makes the fix\n" },
	Red: func(e *fixtype.Env, _ *fixtype.Plan) *gates.Gate {
		return respellOracle(e, "respell-present", true, verdict.ReasonGreenOnBase, verdict.NotRepro)
	},
	Gates: func(e *fixtype.Env, _ *fixtype.Plan) []*gates.Gate {
		return []*gates.Gate{respellOracle(e, "respell-gone", false, verdict.ReasonOracleStillRed, "")}
	},
	CommitNote: func(*fixtype.Env, *fixtype.Plan) string { return "Respelt: teh.\n" },
	Section: func(_ *fixtype.Env, p *fixtype.Plan, commit string) string {
		return "### The spelling\n\n" + markdown.Code(p.Detail.(string)) + " corrected by the harness in " + commit[:12] + ".\n"
	},
}

// TestHarnessOnlyFixType: the harness-only type, registered with one line
// and named nowhere in the pipeline, runs to DRAFT-PR with no agent call:
// its Plan on the base, its oracle red on the base, its Edit, its oracle
// green on the candidate, its section in the body; and a base without the
// misspelling ends NOT-REPRO from its Plan.
func TestHarnessOnlyFixType(t *testing.T) {
	cfg := `runner: {kind: command, command: ["true"]}
suite:  {command: ["true"]}
paths:  {fixable: ["src/**"]}
sandbox: off
`
	for _, tc := range []struct {
		name, doc string
		want      pipeline.Terminal
	}{
		{"misspelt", "teh end\n", pipeline.DraftPR},
		{"clean", "the end\n", pipeline.NotRepro},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": cfg, respellFile: tc.doc})
			s, outbox := prepared(t, dir)
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: &findings.Finding{ID: "respell-1", Title: "teh", Body: "a misspelling", FixType: "respell"},
				Runner:  noAgent{t}, // cve_type_test.go's: any agent call fails the test
				Forge:   &forge.Local{Dir: outbox},
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, g := range rep.Gates {
				if strings.HasPrefix(g.Name, "respell-") {
					order = append(order, g.Phase+" "+g.Name+" "+g.Verdict)
				}
			}
			if rep.Terminal != tc.want {
				t.Fatalf("terminal %s (%s: %s), want %s; the type's gates: %v", rep.Terminal, rep.Reason, rep.Detail, tc.want, order)
			}
			if tc.want != pipeline.DraftPR {
				if rep.Reason != verdict.ReasonGreenOnBase {
					t.Errorf("reason %s, want the Plan's %s", rep.Reason, verdict.ReasonGreenOnBase)
				}
				return
			}
			if strings.Join(order, ", ") != "P3 respell-present pass, P4 respell-gone pass" {
				t.Errorf("the type's oracle ran as %v", order)
			}
			body, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(body), "### The spelling\n\n` teh ` corrected by the harness in "+rep.Commit[:12]) {
				t.Errorf("the body lacks the type's section:\n%s", body)
			}
		})
	}
}
