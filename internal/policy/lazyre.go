package policy

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use. The hook binary
// starts once per tool call and most calls need few of these patterns, so
// compiling them all at package init was most of this package's start-up.
type lazyRE struct {
	pat  string
	once sync.Once
	re   *regexp.Regexp
}

// patterns lists every lazy pattern, so a test can compile them all.
var patterns []*lazyRE

func lazy(pat string) *lazyRE {
	l := &lazyRE{pat: pat}
	patterns = append(patterns, l)
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pat) })
	return l.re
}

// MatchString reports whether s contains a match.
func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

// FindStringSubmatch returns the leftmost match and its submatches.
func (l *lazyRE) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
