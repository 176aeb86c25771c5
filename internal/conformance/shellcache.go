package conformance

import (
	"sync"

	"github.com/fixrail/fixrail/internal/policy"
)

// ShellCache remembers the hook's shell analysis of a script by its text
// for one lint run over many files: workflows repeat the same run: blocks
// (gh-aw lock files inline the same setup scripts, one repository's
// workflows share steps), and that analysis is the costliest part of
// no-merge. The analysis reads only the text and the fixed lintEnv (plus
// the linting machine's file system for symlinks, which one short run does
// not see change), so a remembered answer is the answer. Safe for
// concurrent use; bounded, after which it stops remembering.
type ShellCache struct {
	mu    sync.Mutex
	m     map[string][]policy.Match
	bytes int
}

// shellCacheBytes bounds the script text a cache holds.
const shellCacheBytes = 16 << 20

// NewShellCache returns an empty cache for one run.
func NewShellCache() *ShellCache { return &ShellCache{m: map[string][]policy.Match{}} }

// analyze is analyzeBash through the cache (c may be nil: no cache). The
// returned slice is shared: callers read it, never change it.
func (c *ShellCache) analyze(src string) []policy.Match {
	if c == nil {
		return analyzeBash(src)
	}
	c.mu.Lock()
	ms, ok := c.m[src]
	c.mu.Unlock()
	if ok {
		return ms
	}
	ms = analyzeBash(src)
	c.mu.Lock()
	if c.bytes+len(src) <= shellCacheBytes {
		if _, dup := c.m[src]; !dup {
			c.m[src] = ms
			c.bytes += len(src)
		}
	}
	c.mu.Unlock()
	return ms
}
