package conformance

import (
	"regexp"
	"sync"
)

// patterns lists every lazily compiled expression, so a test can compile
// them all: a bad pattern no longer panics at start-up.
var patterns []string

// lazyRE compiles expr on first use. Every fixrail command links this
// package and most never lint, so compiling at package init was start-up
// cost for nothing.
func lazyRE(expr string) func() *regexp.Regexp {
	patterns = append(patterns, expr)
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
