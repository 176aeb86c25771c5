package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
)

type acPattern struct {
	text string
	rule string
}

// knownVariants returns the forms of a known value that are matched.
func knownVariants(k string) []acPattern {
	var out []acPattern
	seen := map[string]bool{}
	add := func(text, rule string) {
		text = normalizeValue(text)
		if text == "" || seen[text] {
			return
		}
		seen[text] = true
		out = append(out, acPattern{text: text, rule: rule})
	}
	for _, v := range []string{k, normalizeValue(k)} {
		add(v, RuleKnownValue)
		add(hex.EncodeToString([]byte(v)), RuleKnownValue)
		add(strings.ToUpper(hex.EncodeToString([]byte(v))), RuleKnownValue)
		add(url.QueryEscape(v), RuleKnownValue)
		add(url.PathEscape(v), RuleKnownValue)
		for _, esc := range []bool{false, true} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(esc)
			if enc.Encode(v) == nil {
				q := strings.TrimSuffix(b.String(), "\n")
				add(strings.TrimSuffix(strings.TrimPrefix(q, `"`), `"`), RuleKnownValue)
			}
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			add(enc.EncodeToString([]byte(v)), RuleKnownValueBase64)
			// Inside a larger payload the value may start at any of three
			// byte alignments. Characters that also depend on neighbouring
			// bytes are dropped, which leaves at most 5 bits on each side
			// unmatched.
			for shift := range 3 {
				full := enc.EncodeToString(append(make([]byte, shift), v...))
				drop := [3]int{0, 2, 3}[shift]
				keep := (shift + len(v)) * 8 / 6
				if keep > drop {
					add(full[drop:keep], RuleKnownValueBase64)
				}
			}
		}
	}
	return out
}

// withheldTemplate is the withheld marker; '#' stands for one or more
// digits.
const withheldTemplate = "\n[WITHHELD by fixrail: # bytes over the scan limit]"

// markerTemplates are every marker Redact writes.
var markerTemplates = sync.OnceValue(func() []string {
	t := []string{withheldTemplate}
	for _, r := range allRuleIDs() {
		t = append(t, marker(r))
	}
	return t
})

// markerPieces are the literal runs of every marker: the redaction markers
// whole, the withheld marker split at its count.
var markerPieces = sync.OnceValue(func() []string {
	var p []string
	for _, m := range markerTemplates() {
		p = append(p, strings.Split(m, "#")...)
	}
	return p
})

// overlapsMarker reports whether v could be spelled, wholly or in part, by a
// marker that redaction writes: then redacting v could produce v again.
// Text copied from the input never holds a whole match (it would have been
// found), so v can only reappear across a marker: around all of it, inside
// it, over its start (a suffix of v that begins with '[' or a newline) or
// over its end (a prefix of v that ends with ']').
func overlapsMarker(v string) bool {
	if strings.Contains(v, "[REDACTED:") || strings.Contains(v, "[WITHHELD by fixrail") {
		return true
	}
	for _, p := range markerPieces() {
		if strings.Contains(p, v) {
			return true // inside
		}
	}
	if !strings.ContainsAny(v, "[]\n") {
		return false
	}
	tmpls := markerTemplates()
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '[', '\n':
			for _, m := range tmpls {
				if matchTemplate(v[i:], m, 0) >= 0 {
					return true // over the start
				}
			}
		case ']':
			for _, m := range tmpls {
				for ti := 0; ti < len(m); ti++ {
					if matchTemplate(v[:i+1], m, ti) == len(m) {
						return true // over the end
					}
				}
			}
		}
	}
	return false
}

// matchTemplate matches all of x against the marker template m from m[ti]
// and returns how far into m it got, or -1. The withheld marker's count
// ('#') matches nothing here: a value that could only be spelled with
// those digits is checked when the marker is written (Redact moves the cut
// until the count spells no pattern), since refusing every numeric value
// would refuse account numbers and PINs.
func matchTemplate(x, m string, ti int) int {
	i := 0
	for i < len(x) {
		if ti >= len(m) || m[ti] == '#' {
			return -1
		}
		if x[i] != m[ti] {
			return -1
		}
		i++
		ti++
	}
	return ti
}

// acMatcher is an Aho-Corasick automaton over exact patterns. At each input
// position it reports the longest pattern ending there; overlapping matches
// are merged by the collector, so every occurrence of every pattern is
// covered in one linear pass.
type acMatcher struct {
	root      [256]int32
	edgeStart []int32 // edges of state s are edgeStart[s]:edgeStart[s+1]
	edgeByte  []byte
	edgeNext  []int32
	fail      []int32
	maxLen    int
	outLen    []int32 // longest pattern that is a suffix of the state's string
	outRule   []string
	// delta, when the automaton is small enough, is the full transition
	// table over byte classes, so a step is one load.
	delta   []int32
	classOf [256]uint8
	nclass  int
	// pairs holds the first two bytes of every pattern: at the root, text
	// whose next two bytes start no pattern is skipped without stepping.
	pairs [1 << 16 / 64]uint64
}

// maxDelta bounds the transition table (entries of 4 bytes).
const maxDelta = 1 << 21

func newACMatcher(pats []acPattern) *acMatcher {
	type node struct {
		next map[byte]int32
		len  int32
		rule string
	}
	nodes := []node{{next: map[byte]int32{}}}
	depth := []int32{0}
	for _, p := range pats {
		s := int32(0)
		for i := 0; i < len(p.text); i++ {
			b := p.text[i]
			n, ok := nodes[s].next[b]
			if !ok {
				n = int32(len(nodes))
				nodes = append(nodes, node{next: map[byte]int32{}})
				depth = append(depth, depth[s]+1)
				nodes[s].next[b] = n
			}
			s = n
		}
		if nodes[s].len == 0 || rulePriority(p.rule) > rulePriority(nodes[s].rule) {
			nodes[s].len = int32(len(p.text))
			nodes[s].rule = p.rule
		}
	}
	m := &acMatcher{
		fail:    make([]int32, len(nodes)),
		outLen:  make([]int32, len(nodes)),
		outRule: make([]string, len(nodes)),
	}
	// Breadth-first: a state's fail link and output depend only on
	// shallower states.
	queue := make([]int32, 0, len(nodes))
	for b, n := range nodes[0].next {
		m.root[b] = n
		queue = append(queue, n)
	}
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		if nodes[s].len > 0 {
			m.outLen[s], m.outRule[s] = nodes[s].len, nodes[s].rule
		} else {
			m.outLen[s], m.outRule[s] = m.outLen[m.fail[s]], m.outRule[m.fail[s]]
		}
		for b, n := range nodes[s].next {
			f := m.fail[s]
			for f != 0 {
				if x, ok := nodes[f].next[b]; ok {
					m.fail[n] = x
					break
				}
				f = m.fail[f]
			}
			if f == 0 {
				if x := m.root[b]; x != n {
					m.fail[n] = x
				}
			}
			queue = append(queue, n)
		}
	}
	for _, p := range pats {
		m.maxLen = max(m.maxLen, len(p.text))
		if len(p.text) >= 2 {
			h := uint16(p.text[0])<<8 | uint16(p.text[1])
			m.pairs[h/64] |= 1 << (h % 64)
		} else {
			for b := range 256 { // a one-byte pattern starts every pair
				h := uint16(p.text[0])<<8 | uint16(b)
				m.pairs[h/64] |= 1 << (h % 64)
			}
		}
	}
	m.edgeStart = make([]int32, len(nodes)+1)
	for s := range nodes {
		m.edgeStart[s] = int32(len(m.edgeByte))
		for b, n := range nodes[s].next {
			m.edgeByte = append(m.edgeByte, b)
			m.edgeNext = append(m.edgeNext, n)
		}
	}
	m.edgeStart[len(nodes)] = int32(len(m.edgeByte))

	// Byte classes: one per byte that occurs in a pattern, class 0 for the
	// rest (which always leads back to the root).
	var byteOf []byte
	byteOf = append(byteOf, 0)
	for _, p := range pats {
		for i := 0; i < len(p.text); i++ {
			if b := p.text[i]; m.classOf[b] == 0 && len(byteOf) < 256 {
				m.classOf[b] = uint8(len(byteOf))
				byteOf = append(byteOf, b)
			}
		}
	}
	if len(byteOf) >= 256 || len(nodes)*len(byteOf) > maxDelta {
		m.classOf = [256]uint8{}
		return m
	}
	nc := len(byteOf)
	m.nclass = nc
	m.delta = make([]int32, len(nodes)*nc)
	for c := 1; c < nc; c++ {
		m.delta[c] = m.root[byteOf[c]]
	}
	for _, s := range queue { // breadth-first: fail states come first
		row := m.delta[int(s)*nc : int(s+1)*nc]
		frow := m.delta[int(m.fail[s])*nc : int(m.fail[s]+1)*nc]
		copy(row, frow)
		for b, n := range nodes[s].next {
			row[m.classOf[b]] = n
		}
	}
	return m
}

func (m *acMatcher) step(s int32, b byte) int32 {
	for s != 0 {
		for i := m.edgeStart[s]; i < m.edgeStart[s+1]; i++ {
			if m.edgeByte[i] == b {
				return m.edgeNext[i]
			}
		}
		s = m.fail[s]
	}
	return m.root[b]
}

func (m *acMatcher) scan(t string, c *collector) {
	if m.delta != nil {
		m.scanDelta(t, c)
		return
	}
	s := int32(0)
	for i := 0; i < len(t); i++ {
		s = m.step(s, t[i])
		if n := m.outLen[s]; n > 0 {
			if !c.add(m.outRule[s], i+1-int(n), i+1) {
				return
			}
		}
	}
}

func (m *acMatcher) scanDelta(t string, c *collector) {
	s := int32(0)
	nc := int32(m.nclass)
	for i := 0; i < len(t); i++ {
		if s == 0 {
			// No match is under way: skip to the next position whose two
			// bytes begin a pattern (the last byte cannot begin one).
			for i+1 < len(t) {
				h := uint16(t[i])<<8 | uint16(t[i+1])
				if m.pairs[h/64]&(1<<(h%64)) != 0 {
					break
				}
				i++
			}
			if i+1 >= len(t) {
				return
			}
		}
		s = m.delta[s*nc+int32(m.classOf[t[i]])]
		if n := m.outLen[s]; n > 0 {
			if !c.add(m.outRule[s], i+1-int(n), i+1) {
				return
			}
		}
	}
}

// found reports whether t holds any pattern.
func (m *acMatcher) found(t string) bool {
	t, _ = normalize(t)
	c := &collector{limit: len(t)}
	c.begin()
	m.scan(t, c)
	return len(c.fs) > 0
}
