package redact

import (
	"slices"
	"strings"
)

// maxCandidateLine is the longest snippet line Candidates reads; a longer
// one makes it return nothing, and the caller falls back to shapes.
const maxCandidateLine = 4096

// Candidates returns the values in a secret finding's snippet that may be
// the credential, longest first: the right side of an assignment, the other
// quoted literals, and each stripped line (the form a unified diff holds).
// A key name is never a candidate: it is what a pull request must tell an
// operator to set. Masked values (sk-****, ghp_ab12...., <hidden-value>,
// [REDACTED], ####, xxxx…) are never candidates, since they match nothing
// real, and neither is anything shorter than New accepts. A snippet with a
// line over 4096 bytes yields none.
func Candidates(snippet string) []string {
	lines := strings.Split(snippet, "\n")
	for _, l := range lines {
		if len(l) > maxCandidateLine {
			return nil
		}
	}
	var vals []string
	keys := map[string]bool{}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if k, v, ok := splitAssignment(l); ok {
			keys[k] = true
			if v != "" {
				vals = append(vals, v)
			}
		}
		vals = append(vals, quotedLiterals(l)...)
		vals = append(vals, l)
		if l[0] == '+' || l[0] == '-' {
			vals = append(vals, strings.TrimSpace(l[1:]))
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if seen[v] || len(normalizeValue(v)) < minKnownLen || keys[v] || envName(v) || maskedCandidate(v) || overlapsMarker(v) {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// splitAssignment finds the first key-operator-value on the line and
// returns the key and, when it is a literal, the value.
func splitAssignment(l string) (key, value string, ok bool) {
	for i := 0; i < len(l); {
		j := strings.IndexAny(l[i:], "=:")
		if j < 0 {
			return "", "", false
		}
		o := i + j
		i = o + 1
		vs := o + 1
		if l[o] == ':' {
			if strings.HasPrefix(l[o+1:], "//") || strings.HasPrefix(l[o+1:], ":") || o > 0 && l[o-1] == ':' {
				continue
			}
			if strings.HasPrefix(l[o+1:], "=") {
				vs++
			}
		} else {
			if strings.HasPrefix(l[o+1:], "=") || o > 0 && strings.IndexByte("=!<>", l[o-1]) >= 0 {
				continue
			}
			if strings.HasPrefix(l[o+1:], ">") {
				vs++
			}
		}
		k, ks, kok := keyBefore(l, o)
		if !kok {
			continue
		}
		env := envStyle(l, ks) && (l[o] == ':' || ks+len(k) == o)
		if s, e, vok := readValue(l, vs, l[o], env, false); vok {
			// Trailing dots were trimmed as punctuation; a value masked
			// with them (ghp_ab12....) is still masked.
			re := e
			for re < len(l) && !unquotedStop[l[re]] {
				re++
			}
			if maskedCandidate(l[s:re]) {
				return k, "", true
			}
			return k, l[s:e], true
		}
		return k, "", true
	}
	return "", "", false
}

// quotedLiterals returns the non-empty quoted strings on a line.
func quotedLiterals(l string) []string {
	var out []string
	for i := 0; i < len(l); i++ {
		if !isQuote(l[i]) {
			continue
		}
		e := closingQuote(l, i+1, l[i])
		if e < 0 {
			continue
		}
		if e > i+1 {
			out = append(out, l[i+1:e])
		}
		i = e
	}
	return out
}

// envName reports an environment-variable name such as API_KEY: the name
// of a credential, not its value.
func envName(v string) bool {
	if strings.IndexByte(v, '_') < 0 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if b := v[i]; !(b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// maskedCandidate reports a value a scanner has masked, wholly or in part.
func maskedCandidate(v string) bool {
	if maskedOrTemplate(v) {
		return true
	}
	for _, m := range []string{"***", "...", "…", "####", "••", "●●", "<hidden", "[REDACTED", "REDACTED]", "<redacted", "[MASKED", "<masked", "[HIDDEN", "[FILTERED"} {
		if strings.Contains(v, m) {
			return true
		}
	}
	run := 0
	for i := 0; i < len(v); i++ {
		if v[i] == 'x' || v[i] == 'X' {
			if run++; run >= 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
