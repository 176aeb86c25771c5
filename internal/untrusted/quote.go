package untrusted

import (
	"strconv"
	"strings"
)

// Quote sets a value apart inside a line a human reads (a gate's detail,
// a risk reason): in backticks, as Markdown and most terminals show code,
// escaped by OneLine so it can neither hold a control nor end the line.
// A value that itself holds a backtick is Go-quoted instead, so the quoting
// cannot be closed from inside. It is not JSON: a reader sees `a > b`,
// not "a \u003e b", and an import of "crypto/ecdsa" once quoted.
func Quote(s string) string {
	s = OneLine(s)
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}
