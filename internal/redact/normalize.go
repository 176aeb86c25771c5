package redact

import "strings"

// invisible reports the length of an invisible formatting character at
// s[i] (zero-width space, non-joiner and joiner, word joiner, BOM, soft
// hyphen, Mongolian vowel separator), or 0. These are removed before
// matching so that "gh\u200bp_…" cannot hide a token.
func invisible(s string, i int) int {
	switch s[i] {
	case 0xC2: // U+00AD
		if i+1 < len(s) && s[i+1] == 0xAD {
			return 2
		}
	case 0xE1: // U+180E
		if i+2 < len(s) && s[i+1] == 0xA0 && s[i+2] == 0x8E {
			return 3
		}
	case 0xE2: // U+200B..U+200D, U+2060
		if i+2 < len(s) && (s[i+1] == 0x80 && s[i+2] >= 0x8B && s[i+2] <= 0x8D || s[i+1] == 0x81 && s[i+2] == 0xA0) {
			return 3
		}
	case 0xEF: // U+FEFF
		if i+2 < len(s) && s[i+1] == 0xBB && s[i+2] == 0xBF {
			return 3
		}
	}
	return 0
}

// offsetMap maps offsets in normalized text back to the original.
type offsetMap []int32

func (m offsetMap) start(i int) int {
	if i >= len(m)-1 {
		return int(m[len(m)-1])
	}
	return int(m[i])
}

// end maps an exclusive end offset: just past the last kept byte, so that
// invisible characters inside a span stay inside it.
func (m offsetMap) end(i int) int {
	if i == 0 {
		return int(m[0])
	}
	return int(m[i-1]) + 1
}

// normalize removes invisible characters. It returns s itself and a nil map
// when there are none, which is the common case and costs one pass.
func normalize(s string) (string, offsetMap) {
	first := firstInvisible(s)
	if first < 0 {
		return s, nil
	}
	var sb strings.Builder
	sb.Grow(len(s))
	m := make(offsetMap, 0, len(s)+1)
	sb.WriteString(s[:first])
	for i := range first {
		m = append(m, int32(i))
	}
	for i := first; i < len(s); {
		if s[i] >= 0xC2 {
			if n := invisible(s, i); n > 0 {
				i += n
				continue
			}
		}
		sb.WriteByte(s[i])
		m = append(m, int32(i))
		i++
	}
	m = append(m, int32(len(s)))
	return sb.String(), m
}

// firstInvisible returns the offset of the first invisible character, or
// -1. It looks only at the lead bytes those characters can start with,
// with IndexByte, so ASCII text costs almost nothing.
func firstInvisible(s string) int {
	first := -1
	for _, lead := range []byte{0xC2, 0xE1, 0xE2, 0xEF} {
		lim := len(s)
		if first >= 0 {
			lim = first
		}
		for off := 0; off < lim; {
			k := strings.IndexByte(s[off:lim], lead)
			if k < 0 {
				break
			}
			if invisible(s, off+k) > 0 {
				first = off + k
				break
			}
			off += k + 1
		}
	}
	return first
}

// normalizeValue removes invisible characters from a configured value.
func normalizeValue(v string) string {
	t, _ := normalize(v)
	return t
}
