package conformance

import (
	"fmt"
	"strings"
	"testing"
)

func findingsOf(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %d:%d [%s] %s\n", f.Line, f.Column, f.Rule, f.Message)
	}
	return b.String()
}

// TestRuleExamples runs every rule's own examples: each positive example
// must produce a finding of the rule, each negative one none. A rule whose
// positive examples pass without it is a rule that cannot fail.
func TestRuleExamples(t *testing.T) {
	for _, r := range Rules() {
		t.Run(r.ID, func(t *testing.T) {
			if len(r.Positive) == 0 || len(r.Negative) == 0 {
				t.Fatalf("rule %s needs positive and negative examples", r.ID)
			}
			for i, src := range r.Positive {
				fs := Lint("pos.yml", []byte(src), Options{})
				if len(findingsOf(fs, r.ID)) == 0 {
					t.Errorf("positive example %d produced no %s finding; got:\n%s", i, r.ID, dump(fs))
				}
			}
			for i, src := range r.Negative {
				fs := Lint("neg.yml", []byte(src), Options{})
				if got := findingsOf(fs, r.ID); len(got) > 0 {
					t.Errorf("negative example %d produced %s findings:\n%s", i, r.ID, dump(got))
				}
			}
		})
	}
}

// TestCleanExamplesAreClean: the conforming examples and the reference
// workflow produce no finding of any rule.
func TestCleanExamplesAreClean(t *testing.T) {
	for name, src := range map[string]string{"goodAgent": goodAgent, "goodCLI": goodCLI, "plainCI": plainCI, "modeWorkflow": modeWorkflow, "reference": string(ReferenceWorkflow)} {
		if fs := Lint(name+".yml", []byte(src), Options{}); len(fs) > 0 {
			t.Errorf("%s is not clean:\n%s", name, dump(fs))
		}
	}
}
