package gates

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
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
			full, err := pathguard.ResolveWithin(c.Worktree, p)
			if err != nil {
				return Verdict{}, fmt.Errorf("stage-b: %w", err)
			}
			data, err := os.ReadFile(full)
			if errors.Is(err, os.ErrNotExist) {
				continue // a deletion has no imports left
			}
			if err != nil {
				return Verdict{}, fmt.Errorf("stage-b: %w", err)
			}
			for _, v := range c.Policy.CheckImports(p, data) {
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
