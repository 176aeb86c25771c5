package untrusted

import (
	"regexp"
	"sync"
)

// closingRef matches what GitHub reads as closing an issue or pull request
// when a commit holding it reaches the default branch (or a pull request
// description holding it merges): one of the nine keywords, any case, a
// word of its own ("no-close" still holds one), an optional colon, then a
// reference — #N, OWNER/REPO#N, GH-N or a URL ending in issues/N or pull/N.
// It is wider than GitHub's own parser (no space is needed before the
// reference) so that a near miss is caught, never let through.
var closingRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s*(?:(?:issue|bug|pr|pull request)\s*)?(?:[\w.-]+/[\w.-]+#\d+|#\d+|gh-\d+|https?://\S+/(?:issues|pull)/\d+)`)
})

// ClosingReference is the first closing reference in s, or "". Text an
// agent or a reporter chose that fixrail puts in a commit message or a PR
// title is checked with it: a merge must not close an issue, or another
// pull request, that nobody asked it to.
func ClosingReference(s string) string {
	return closingRef().FindString(s)
}
