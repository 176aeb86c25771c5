package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/verdict"
)

// DiffWithinPlan holds the fix to what phase 1 planned: every changed path
// is a planned file or the reproducing test.
var DiffWithinPlan = &Gate{
	Name:   "diff-within-plan",
	Doc:    "every changed path is planned in PLAN.json",
	Reason: verdict.ReasonDiffOutsidePlan,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		v, unplanned, _ := planAndDeclaration(c)
		if len(unplanned) > 0 {
			return Verdict{Detail: "not in PLAN.json: " + strings.Join(unplanned, ", ")}, nil
		}
		return v, nil
	},
}

// DeclaredOnly holds the commit to what the agent declared: a changed file
// the result does not list is never committed and never silently dropped —
// the fix escalates.
var DeclaredOnly = &Gate{
	Name:   "declared-only",
	Doc:    "every changed source file is declared in the result's files_changed",
	Reason: verdict.ReasonUndeclared,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		_, _, undeclared := planAndDeclaration(c)
		if len(undeclared) > 0 {
			return Verdict{Detail: "not declared in files_changed: " + strings.Join(undeclared, ", ")}, nil
		}
		return Verdict{Pass: true, Detail: fmt.Sprintf("%d path(s), all declared", len(c.Changed))}, nil
	},
}

// planAndDeclaration sorts the changed paths into unplanned and undeclared.
func planAndDeclaration(c *Change) (pass Verdict, unplanned, undeclared []string) {
	planned, declared := map[string]bool{}, map[string]bool{}
	for _, e := range c.Evidence {
		planned[e.Path], declared[e.Path] = true, true
	}
	for _, f := range c.Planned {
		planned[f] = true
	}
	for _, f := range c.Declared {
		declared[f] = true
	}
	for _, p := range c.Changed {
		if !planned[p] {
			unplanned = append(unplanned, p)
		}
		if !declared[p] {
			undeclared = append(undeclared, p)
		}
	}
	return Verdict{Pass: true, Detail: fmt.Sprintf("%d path(s), all planned", len(c.Changed))}, unplanned, undeclared
}
