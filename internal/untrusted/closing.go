package untrusted

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// closingKeywords are the nine words GitHub reads as closing, any case,
// each a word of its own.
const closingKeywords = `(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b`

// closingRef matches what GitHub reads as closing an issue or pull request
// when a commit holding it reaches the default branch (or a pull request
// description holding it merges): one of the nine keywords, any case, a
// word of its own ("no-close" still holds one), an optional colon, then a
// reference — #N, OWNER/REPO#N, GH-N or a URL ending in issues/N or pull/N.
// It is wider than GitHub's own parser (no space is needed before the
// reference) so that a near miss is caught, never let through.
var closingRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(closingKeywords + `:?\s*(?:(?:issue|bug|pr|pull request)\s*)?(?:[\w.-]+/[\w.-]+#\d+|#\d+|gh-\d+|https?://\S+/(?:issues|pull)/\d+)`)
})

var closingKeyword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(closingKeywords)
})

// ClosingReference is the first closing reference in s, or "". Text an
// agent or a reporter chose that fixrail puts in a commit message or a PR
// title is checked with it: a merge must not close an issue, or another
// pull request, that nobody asked it to.
func ClosingReference(s string) string {
	return closingRef().FindString(s)
}

// ClosingBreak is what BreakClosing writes into a closing keyword: the
// escape of U+2060 (WORD JOINER) as Printable writes one, six ASCII
// characters, not the invisible rune itself. A reviewer sees where the
// text was changed, and no forge that drops or normalises invisible
// characters can join the keyword up again.
const ClosingBreak = `\u2060`

// BreakClosing returns s with every closing reference ClosingReference
// finds broken, and how many there were: ClosingBreak goes after the first
// letter of each closing keyword in one ("F\u2060ixes #12"), so no keyword
// is left for GitHub to read — not in a PR description, nor in the commit
// message a squash merge makes from it, where code spans mean nothing. The
// rest of "ixes", "lose", "esolve" is no keyword either, whatever a parser
// takes the break for. Every keyword inside a match is broken, not only
// its first: a URL's path may hold another ("close https://h/fixes#3/
// issues/1"). Nothing else changes, so ClosingReference finds nothing in
// the result.
func BreakClosing(s string) (string, int) {
	n := 0
	// One pass breaks every match; the loop only proves it (a break makes
	// no keyword and no reference, so a second pass finds none).
	for {
		refs := closingRef().FindAllStringIndex(s, -1)
		if len(refs) == 0 {
			return s, n
		}
		n += len(refs)
		var b strings.Builder
		b.Grow(len(s) + len(refs)*len(ClosingBreak))
		// Where the breaks go: each match's start (its keyword), and every
		// keyword inside it after that.
		var at []int
		kws, k := closingKeyword().FindAllStringIndex(s, -1), 0
		for _, ref := range refs {
			at = append(at, ref[0])
			for ; k < len(kws) && kws[k][0] < ref[1]; k++ {
				if kws[k][0] > ref[0] {
					at = append(at, kws[k][0])
				}
			}
		}
		last := 0
		for _, i := range at {
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[last : i+size])
			b.WriteString(ClosingBreak)
			last = i + size
		}
		b.WriteString(s[last:])
		s = b.String()
	}
}
