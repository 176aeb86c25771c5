package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
)

// StageB is the binding sensitive-path check: it runs on the paths the fix
// actually changed and on the import lines those files now hold, not on what
// the plan claimed. Unknown paths count as sensitive. Stage A (in the
// pipeline, before any source is written) is the same check over the plan.
var StageB = &Gate{
	Name:   "stage-b",
	Doc:    "no changed path, and no import line in a changed file, is sensitive or unknown",
	Reason: verdict.ReasonSensitivePath,
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		return SensitivePaths(c.Policy, c.Changed, func(p string) (gitx.Entry, error) {
			e, ok := c.Files[p]
			if !ok {
				return gitx.Entry{}, fmt.Errorf("stage-b: %s is not in the candidate", p)
			}
			return e, nil
		})
	},
}

// SensitivePaths is Stage A and Stage B: every path is classified, and
// every one that exists in the tree read reads is checked for sensitive
// imports. A path that cannot be read is an error (the check could not
// decide), never a pass; a path absent from the tree (a deletion, a file
// still to be written) has no imports to check.
func SensitivePaths(pol *sensitive.Policy, paths []string, read func(string) (gitx.Entry, error)) (Verdict, error) {
	var hits []string
	for _, p := range paths {
		if v := pol.Classify(p); pol.Sensitive(v) {
			hits = append(hits, DescribeVerdict(p, v))
			continue
		}
		e, err := read(p)
		if err != nil {
			return Verdict{}, err
		}
		if e.Deleted() {
			continue
		}
		for _, v := range pol.CheckImports(p, e.Data) {
			hits = append(hits, fmt.Sprintf("%s imports %s (%s)", p, untrusted.Quote(v.Path), v.Rule))
		}
	}
	if len(hits) > 0 {
		return Verdict{Detail: strings.Join(hits, "; ")}, nil
	}
	return Verdict{Pass: true, Detail: fmt.Sprintf("%d path(s) clear", len(paths))}, nil
}

// DescribeVerdict names a sensitive path and why: its class and, when there
// is one, the rule that matched.
func DescribeVerdict(p string, v sensitive.Verdict) string {
	if v.Rule == "" {
		return fmt.Sprintf("%s (%s)", p, v.Class)
	}
	return fmt.Sprintf("%s (%s %s)", p, v.Class, v.Rule)
}
