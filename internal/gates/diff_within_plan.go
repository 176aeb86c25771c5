package gates

import (
	"context"
	"fmt"
	"strings"
)

// DiffWithinPlan holds the fix to what phase 1 planned and phase 2 declared:
// every changed path is a planned file or the reproducing test, and every
// changed source file is listed in the result's files_changed.
var DiffWithinPlan = &Gate{
	Name:   "diff-within-plan",
	Doc:    "every changed path is planned in PLAN.json and declared in the result",
	Reason: "diff-outside-plan",
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		planned := map[string]bool{c.Plan.Test.Path: true}
		for _, f := range c.Plan.Files {
			planned[f] = true
		}
		declared := map[string]bool{c.Plan.Test.Path: true}
		for _, f := range c.Result.FilesChanged {
			declared[f] = true
		}
		var unplanned, undeclared []string
		for _, p := range c.Changed {
			switch {
			case !planned[p]:
				unplanned = append(unplanned, p)
			case !declared[p]:
				undeclared = append(undeclared, p)
			}
		}
		if len(unplanned)+len(undeclared) == 0 {
			return Verdict{Pass: true, Detail: fmt.Sprintf("%d path(s), all planned and declared", len(c.Changed))}, nil
		}
		var parts []string
		if len(unplanned) > 0 {
			parts = append(parts, "not in PLAN.json: "+strings.Join(unplanned, ", "))
		}
		if len(undeclared) > 0 {
			parts = append(parts, "not declared in files_changed: "+strings.Join(undeclared, ", "))
		}
		return Verdict{Detail: strings.Join(parts, "; ")}, nil
	},
}
