package gates

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
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
	var hits, unknown []string
	for _, p := range paths {
		if v := pol.Classify(p); pol.Sensitive(v) {
			hits = append(hits, DescribeVerdict(p, v))
			if v.Class == sensitive.Unknown {
				unknown = append(unknown, p)
			}
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
		d := strings.Join(hits, "; ")
		if len(unknown) > 0 {
			d += ". " + FixableHint(pol, unknown)
		}
		return Verdict{Detail: d}, nil
	}
	return Verdict{Pass: true, Detail: fmt.Sprintf("%d path(s) clear", len(paths))}, nil
}

// DescribeVerdict names a sensitive path and why: its class and, when there
// is one, the rule that matched. An unknown path matched nothing: it is
// sensitive only because it is not under paths.fixable, and says so.
func DescribeVerdict(p string, v sensitive.Verdict) string {
	switch {
	case v.Class == sensitive.Unknown:
		return fmt.Sprintf("%s (unknown: not under paths.fixable)", p)
	case v.Rule == "":
		return fmt.Sprintf("%s (%s)", p, v.Class)
	}
	return fmt.Sprintf("%s (%s %s)", p, v.Class, v.Rule)
}

// FixableHint is the line of fixrail.yaml a person would change for a fix
// to write the unknown paths: paths.fixable as it is, plus each path's
// directory ("dir/**"), or the path itself at the root. It is a
// suggestion to the owners, on the base branch; nothing applies it.
func FixableHint(pol *sensitive.Policy, unknown []string) string {
	globs := SuggestFixable(pol, unknown)
	quoted := make([]string, len(globs))
	for i, g := range globs {
		quoted[i] = strconv.Quote(g)
	}
	return fmt.Sprintf("To let a fix write there, the owners change paths.fixable in %s on the base branch to: fixable: [%s]", config.FileName, strings.Join(quoted, ", "))
}

// SuggestFixable is paths.fixable widened to the unknown paths.
func SuggestFixable(pol *sensitive.Policy, unknown []string) []string {
	var globs []string
	if pol != nil {
		globs = slices.Clone(pol.Fixable)
	}
	for _, p := range unknown {
		g := LiteralGlob(p)
		if d := path.Dir(p); d != "." {
			g = LiteralGlob(d) + "/**"
		}
		if !slices.Contains(globs, g) {
			globs = append(globs, g)
		}
	}
	return globs
}

// LiteralGlob escapes p's glob metacharacters, so it matches only p.
func LiteralGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(metaChars, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// metaChars are doublestar's.
const metaChars = `*?[]{}\`
