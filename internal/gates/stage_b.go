package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/sensitive"
)

// StageB is the binding sensitive-path check: it runs on the paths the fix
// actually changed and on the import lines those files now hold, not on what
// the plan claimed. Unknown paths count as sensitive.
var StageB = &Gate{
	Name:   "stage-b",
	Doc:    "no changed path, and no import line in a changed file, is sensitive or unknown",
	Reason: "sensitive-path",
	Run: func(_ context.Context, c *Change) (Verdict, error) {
		var hits []string
		for _, p := range c.Changed {
			if v := c.Policy.Classify(p); c.Policy.Sensitive(v) {
				hits = append(hits, DescribeVerdict(p, v))
				continue
			}
			e, ok := c.Files[p]
			if !ok {
				return Verdict{}, fmt.Errorf("stage-b: %s is not in the candidate", p)
			}
			if e.Deleted() {
				continue // a deletion has no imports left
			}
			for _, v := range c.Policy.CheckImports(p, e.Data) {
				hits = append(hits, fmt.Sprintf("%s imports %q (%s)", p, v.Path, v.Rule))
			}
		}
		if len(hits) > 0 {
			return Verdict{Detail: strings.Join(hits, "; ")}, nil
		}
		return Verdict{Pass: true, Detail: fmt.Sprintf("%d path(s) clear", len(c.Changed))}, nil
	},
}

// DescribeVerdict names a sensitive path and why: its class and, when there
// is one, the rule that matched.
func DescribeVerdict(p string, v sensitive.Verdict) string {
	if v.Rule == "" {
		return fmt.Sprintf("%s (%s)", p, v.Class)
	}
	return fmt.Sprintf("%s (%s %s)", p, v.Class, v.Rule)
}
