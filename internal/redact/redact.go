// Package redact finds and removes secrets and customer data from text: by
// exact value when the value is known, by shape when it is not. One linear
// engine serves both redaction and the leak scan.
//
// # Cost
//
// Everything here reads attacker-controllable text, so every pass is linear
// in the input and no regular expression runs over it. Known values and
// customer identifiers go through one Aho-Corasick automaton. Provider
// tokens are found in one pass that looks up each position's two bytes in a
// table of literal prefixes, then validated over bounded runs that are
// memoised, so a run of repeated prefixes is read once. Credential
// assignments, URL credentials, PEM blocks, cards and random tokens are
// hand-written single passes with bounded look-back. Findings are capped per
// call (maxFindings); past the cap the rest of the text is one
// "too-many-findings" finding, so a findings-heavy input costs no more than
// a clean one. Redact re-scans its own output (at most maxRounds times) so
// that redacting again finds nothing.
//
// Each call scans at most Options.MaxInput bytes. The remainder is never
// passed on unscanned: Redact replaces it with a marker and Detect reports
// it as a "withheld-oversize" finding. Work is charged to a [Budget]; an
// exhausted budget is an error, and the caller must fail closed.
//
// # Tiers
//
// Each finding is blocking or for review ([Finding.Review]): the leak gate
// stops only on blocking ones, while Redact removes both, so text going to
// a model stays aggressively redacted. Values are judged by whole shape
// (placeholder.go): what is no value at all (a whole template, words that
// stand in for a secret, a PEM block with no key in it) is not reported; a
// value that stands in for one (a fill, a repeated unit, an alphabet run, a
// documented example) is reported for review.
//
// # Residuals
//
//   - Shapes can miss a credential (an unknown provider format, a low-entropy
//     password outside a credential-named assignment). Exact values are the
//     strong path; shapes are the fallback.
//   - Known values are matched raw and in their base64 (std and URL, at all
//     three byte alignments), hex, URL-encoded and JSON-escaped forms, one
//     level deep. A value split across lines, nested in two layers of
//     encoding or otherwise transformed is not matched.
//   - The random-token test judges tokens of 20 characters or more, and
//     lets through about 2–3% of uniformly random ones (those that happen
//     to read like words or to have low entropy); single-case letters-only
//     tokens are treated as words.
//   - Zero-width characters and soft hyphens are removed before matching
//     (offsets map back to the original text); homoglyphs are not folded.
//   - A value made only of letters that holds a stand-in word (fake,
//     example, your, …) or a credential noun is taken for a placeholder, so
//     a letters-only passphrase with such a word in it is missed; values
//     with digits or mixed classes are never judged by their words.
package redact

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Rule IDs that are not shape rules; shape rules are listed in [Rules].
const (
	RuleKnownValue       = "known-value"        // an Options.Known value, raw or hex, URL- or JSON-escaped
	RuleKnownValueBase64 = "known-value-base64" // an Options.Known value in base64
	RuleCustomerID       = "customer-id"        // an Options.CustomerIDs entry
	RuleWithheld         = "withheld-oversize"  // input past Options.MaxInput
	RuleTooManyFindings  = "too-many-findings"  // the rest of the text after maxFindings findings
)

// DefaultMaxInput is the number of bytes scanned per call when
// Options.MaxInput is zero.
const DefaultMaxInput = 128 << 10

const (
	// minKnownLen is the shortest value New accepts: shorter values would
	// shred ordinary text.
	minKnownLen = 8
	// minCustomerIDLen is the shortest customer identifier New accepts.
	minCustomerIDLen = 3
	// maxFindings caps the findings of one call; see package doc.
	maxFindings = 10000
	// cutWindow is how far the oversize cut may move back to reach
	// whitespace.
	cutWindow = 1 << 10
	// maxRounds bounds the re-scans Redact makes of its own output; a text
	// that has not settled by then is treated as an exhausted budget.
	maxRounds = 4
	// unitsPerByte is the per-call default budget: enough for the first
	// scan and every re-scan round even when markers make the output a few
	// times longer than the input, so only a shared Budget can run out.
	unitsPerByte = 8 * (maxRounds + 1)
)

// A Finding is one span of the input that holds a secret or customer data.
// It never carries the matched value.
//
// Findings come in two tiers. A blocking finding (Review empty) is one the
// leak gate must stop on: an exact known value or customer identifier, a
// provider token, a private key, a password in a URL, a value under an
// unambiguous credential name, a card number. A review finding (Review
// set, to one of the Review* reasons) is redacted like any other but is too
// weak to throw a fix away for: randomness with no credential name, a
// placeholder-shaped or documented example value, a value under an
// ambiguous name. The zero value blocks, so a path that forgets to choose
// fails closed.
type Finding struct {
	Rule  string // e.g. "known-value", "github-pat", "private-key", "high-entropy"
	Start int    // byte offsets into the input
	End   int
	// Review is why the finding only needs review; "" means it blocks.
	Review string
}

// Blocking reports whether the leak gate must stop on f.
func (f Finding) Blocking() bool { return f.Review == "" }

// Reasons a finding needs review rather than blocking (Finding.Review).
const (
	// ReviewNoName: a random-looking token with no credential name and no
	// provider prefix (the high-entropy rule always reports this).
	ReviewNoName = "random-looking token with no credential name"
	// ReviewAmbiguousName: a value under a name that is often not a
	// credential (key, license_key, PresharedKey, pass, pwd).
	ReviewAmbiguousName = "value under an ambiguous name"
	// ReviewPlaceholder: a provider prefix, credential name or URL password
	// whose value is a repeated run, an alphabet run or a fill.
	ReviewPlaceholder = "placeholder-shaped value (repeated run, alphabet run or fill)"
	// ReviewExample: a value vendors publish in their documentation.
	ReviewExample = "documented example value"
)

// Options configures an [Engine].
type Options struct {
	// Known are exact secret values. Each is matched raw and in its base64
	// (std and URL alphabets, padded or not, at every byte alignment), hex
	// (lower and upper), URL-encoded and JSON-escaped forms. New refuses
	// values shorter than 8 bytes (too short to redact safely) and values
	// that overlap a redaction marker (redacting them could spell them
	// again).
	Known []string
	// CustomerIDs are exact customer identifiers, matched case-sensitively.
	CustomerIDs []string
	// MaxInput is the number of bytes scanned per call (DefaultMaxInput if
	// zero). Past it the text is withheld, the cut moved back to whitespace
	// within 1 KiB; it is never passed on unscanned.
	MaxInput int
	// Budget, if set, is shared by every call of the engine; nil gives each
	// call its own budget, sized so that linear work cannot exhaust it.
	Budget *Budget
}

// An Engine redacts and leak-scans text. It is safe for concurrent use.
type Engine struct {
	maxInput int
	budget   *Budget
	exact    *acMatcher // nil when there are no known values or customer IDs
	pats     []acPattern
}

// New returns an Engine for o.
func New(o Options) (*Engine, error) {
	e := &Engine{maxInput: o.MaxInput, budget: o.Budget}
	if e.maxInput == 0 {
		e.maxInput = DefaultMaxInput
	}
	if e.maxInput < 0 {
		return nil, fmt.Errorf("redact: negative MaxInput %d", o.MaxInput)
	}
	var pats []acPattern
	for i, k := range o.Known {
		// Invisible characters are removed before matching, so they do
		// not count towards the length.
		if n := len(normalizeValue(k)); n < minKnownLen {
			return nil, fmt.Errorf("redact: known value #%d is %d bytes without invisible characters, shorter than %d: too short to redact safely", i, n, minKnownLen)
		}
		for _, v := range knownVariants(k) {
			if overlapsMarker(v.text) {
				return nil, fmt.Errorf("redact: known value #%d overlaps a redaction marker and could not be removed reliably", i)
			}
			pats = append(pats, v)
		}
	}
	for i, c := range o.CustomerIDs {
		if len(c) < minCustomerIDLen {
			return nil, fmt.Errorf("redact: customer ID #%d is %d bytes, shorter than %d", i, len(c), minCustomerIDLen)
		}
		n := normalizeValue(c)
		if n == "" || overlapsMarker(n) {
			return nil, fmt.Errorf("redact: customer ID #%d overlaps a redaction marker and could not be removed reliably", i)
		}
		pats = append(pats, acPattern{text: n, rule: RuleCustomerID})
	}
	if len(pats) > 0 {
		e.pats = pats
		e.exact = newACMatcher(pats)
	}
	return e, nil
}

// With returns an engine that also knows the values known (each held as
// Options.Known is): a run adds a secret it learnt after it started.
func (e *Engine) With(known ...string) (*Engine, error) {
	add, err := New(Options{Known: known, MaxInput: e.maxInput})
	if err != nil {
		return nil, err
	}
	n := &Engine{maxInput: e.maxInput, budget: e.budget, pats: append(append([]acPattern{}, e.pats...), add.pats...)}
	if len(n.pats) > 0 {
		n.exact = newACMatcher(n.pats)
	}
	return n, nil
}

// ErrBudget is returned when a call runs out of work budget. The caller must
// fail closed: treat the text as unredacted and as a leak.
var ErrBudget = errors.New("redact: work budget exhausted")

// A Budget is a pool of work units shared by the calls that hold it. One
// unit is one input byte through one full scan; Redact's re-scan of its own
// output costs again. Safe for concurrent use.
type Budget struct {
	left atomic.Int64
}

// NewBudget returns a Budget of units.
func NewBudget(units int64) *Budget {
	b := &Budget{}
	b.left.Store(units)
	return b
}

// Remaining reports the units left; it is negative once exhausted.
func (b *Budget) Remaining() int64 { return b.left.Load() }

func (b *Budget) charge(n int) error {
	if b.left.Add(-int64(n)) < 0 {
		return ErrBudget
	}
	return nil
}

func (e *Engine) callBudget(n int) *Budget {
	if e.budget != nil {
		return e.budget
	}
	return NewBudget(int64(n)*unitsPerByte + 64<<10)
}

// Detect reports the findings in s without rewriting it (leak-scan mode).
// An input longer than MaxInput yields a "withheld-oversize" finding for the
// part that was not scanned, so a caller that treats any finding as a leak
// stays closed.
func (e *Engine) Detect(s string) ([]Finding, error) {
	b := e.callBudget(min(len(s), e.maxInput))
	cut := e.cut(s)
	fs, err := e.scan(s[:cut], b, true)
	if err != nil {
		return nil, err
	}
	if cut < len(s) {
		fs = append(fs, Finding{Rule: RuleWithheld, Start: cut, End: len(s)})
	}
	return fs, nil
}

// Redact returns s with each finding replaced by "[REDACTED:<rule>]", and the
// findings (offsets into s). Past MaxInput the text is replaced by
// "\n[WITHHELD by fixrail: N bytes over the scan limit]". The output is
// re-scanned until it holds no finding, so redacting it again changes
// nothing. The error is non-nil only when the budget is exhausted (a text
// that does not settle within maxRounds re-scans counts as exhausting it);
// the output is then empty and the caller must fail closed.
func (e *Engine) Redact(s string) (string, []Finding, error) {
	b := e.callBudget(min(len(s), e.maxInput))
	cut := e.cut(s)
	for tries := 0; ; tries++ {
		out, fs, err := e.redact(s[:cut], b)
		if err != nil {
			return "", nil, err
		}
		if cut == len(s) {
			return out, fs, nil
		}
		m := withheldMarker(len(s) - cut)
		if e.exact != nil && e.exact.found(out[max(0, len(out)-e.exact.maxLen):]+m) {
			// The count spells (part of) a known value or customer ID:
			// withhold one more character, which changes the count.
			if tries == 16 || cut == 0 {
				return "", nil, ErrBudget
			}
			cut--
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			continue
		}
		return out + m, append(fs, Finding{Rule: RuleWithheld, Start: cut, End: len(s)}), nil
	}
}

// redact redacts text that fits the scan limit, re-scanning its own output
// until nothing is found in it.
func (e *Engine) redact(in string, b *Budget) (string, []Finding, error) {
	fs, err := e.scan(in, b, true)
	if err != nil {
		return "", nil, err
	}
	out, segs := render(in, fs)
	for round := 0; len(fs) > 0; round++ {
		if round == maxRounds {
			return "", nil, ErrBudget
		}
		// Exact values cannot reappear (copied text holds none, and New
		// refused values a marker could spell), so only shapes are
		// re-run.
		again, err := e.scan(out, b, false)
		if err != nil {
			return "", nil, err
		}
		if len(again) == 0 {
			break
		}
		grown := mergeFindings(append(slices.Clone(fs), mapBack(again, segs, fs)...))
		if slices.Equal(grown, fs) {
			// A rule fired on marker text alone; redacting again cannot
			// help and the output is already free of the input's findings.
			break
		}
		fs = grown
		out, segs = render(in, fs)
	}
	return out, fs, nil
}

func marker(rule string) string { return "[REDACTED:" + rule + "]" }

func withheldMarker(n int) string {
	return "\n[WITHHELD by fixrail: " + strconv.Itoa(n) + " bytes over the scan limit]"
}

// cut returns how much of s is scanned: all of it, or MaxInput moved back to
// whitespace (within cutWindow), else to punctuation, else to a rune start,
// so that as few tokens as possible are scanned half.
func (e *Engine) cut(s string) int {
	if len(s) <= e.maxInput {
		return len(s)
	}
	c := e.maxInput
	lo := max(0, c-cutWindow)
	if i := lastIndexFunc(s[lo:c], isSpace); i >= 0 {
		return lo + i
	}
	if i := lastIndexFunc(s[lo:c], func(b byte) bool { return !tokenChar[b] && b < utf8.RuneSelf }); i >= 0 {
		return lo + i + 1
	}
	for c > lo && !utf8.RuneStart(s[c]) {
		c--
	}
	return c
}

func lastIndexFunc(s string, f func(byte) bool) int {
	for i := len(s) - 1; i >= 0; i-- {
		if f(s[i]) {
			return i
		}
	}
	return -1
}

// seg maps a span of Redact's output back to the input: either copied text
// (finding < 0) or the marker of fs[finding].
type seg struct {
	outStart, outEnd int
	inStart          int
	finding          int
}

func render(in string, fs []Finding) (string, []seg) {
	if len(fs) == 0 {
		return in, []seg{{0, len(in), 0, -1}}
	}
	var sb strings.Builder
	sb.Grow(len(in) + 16*len(fs))
	segs := make([]seg, 0, 2*len(fs)+1)
	pos := 0
	for i, f := range fs {
		if f.Start > pos {
			segs = append(segs, seg{sb.Len(), sb.Len() + f.Start - pos, pos, -1})
			sb.WriteString(in[pos:f.Start])
		}
		m := marker(f.Rule)
		segs = append(segs, seg{sb.Len(), sb.Len() + len(m), f.Start, i})
		sb.WriteString(m)
		pos = f.End
	}
	if pos < len(in) {
		segs = append(segs, seg{sb.Len(), sb.Len() + len(in) - pos, pos, -1})
		sb.WriteString(in[pos:])
	}
	return sb.String(), segs
}

// mapBack turns findings in rendered output into findings in the input: a
// span over copied text maps to the same text, a span touching a marker
// takes in that marker's whole finding.
func mapBack(out []Finding, segs []seg, fs []Finding) []Finding {
	res := make([]Finding, 0, len(out))
	for _, f := range out {
		i, _ := slices.BinarySearchFunc(segs, f.Start, func(s seg, pos int) int {
			if s.outEnd <= pos {
				return -1
			}
			if s.outStart > pos {
				return 1
			}
			return 0
		})
		start, end := -1, -1
		for ; i < len(segs) && segs[i].outStart < f.End; i++ {
			s := segs[i]
			var a, b int
			if s.finding >= 0 {
				a, b = fs[s.finding].Start, fs[s.finding].End
			} else {
				a = s.inStart + max(f.Start, s.outStart) - s.outStart
				b = s.inStart + min(f.End, s.outEnd) - s.outStart
			}
			if start < 0 || a < start {
				start = a
			}
			end = max(end, b)
		}
		if start >= 0 && end > start {
			res = append(res, Finding{Rule: f.Rule, Start: start, End: end, Review: f.Review})
		}
	}
	return res
}

// rulePriority decides which rule names a merged span: the most specific.
func rulePriority(rule string) int {
	switch rule {
	case RuleWithheld:
		return 300
	case RuleTooManyFindings:
		return 200
	case RuleKnownValue:
		return 100
	case RuleKnownValueBase64:
		return 99
	case RuleCustomerID:
		return 90
	case rulePrivateKey:
		return 80
	case ruleJWT:
		return 65
	case ruleURLCredentials:
		return 60
	case ruleAssignment:
		return 50
	case ruleCard:
		return 45
	case ruleEntropy:
		return 10
	}
	return 70 // provider token rules
}

// mergeFindings sorts fs and merges overlapping spans (and touching spans
// of the same rule); a merged span is named by its highest-priority rule.
func mergeFindings(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	slices.SortFunc(fs, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End || f.Start == last.End && f.Rule == last.Rule {
			last.End = max(last.End, f.End)
			if rulePriority(f.Rule) > rulePriority(last.Rule) {
				last.Rule = f.Rule
				if last.Review != "" {
					last.Review = f.Review
				}
			}
			if f.Review == "" {
				last.Review = "" // a span that holds a blocking finding blocks
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

// collector gathers the findings of one scan. Each pass adds its findings
// in increasing order and stops when its share is full; the text past the
// earliest such stop is then covered by one too-many-findings finding.
type collector struct {
	fs    []Finding
	limit int // offset past which some pass stopped early
	n     int // findings added by the current pass
	last  int // index in fs of the current pass's last finding, or -1
}

func (c *collector) begin() { c.n, c.last = 0, -1 }

// add records a blocking finding for the current pass and reports whether
// the pass may continue.
func (c *collector) add(rule string, start, end int) bool {
	return c.addReview(rule, start, end, "")
}

// addReview records a finding that needs review for the given reason
// ("" blocks).
func (c *collector) addReview(rule string, start, end int, review string) bool {
	if start >= c.limit {
		return false
	}
	if c.last >= 0 {
		l := &c.fs[c.last]
		if l.Rule == rule && start <= l.End && start >= l.Start {
			l.End = max(l.End, end)
			if review == "" {
				l.Review = ""
			}
			return true
		}
	}
	if c.n == maxFindings {
		c.limit = start
		return false
	}
	c.fs = append(c.fs, Finding{Rule: rule, Start: start, End: end, Review: review})
	c.n++
	c.last = len(c.fs) - 1
	return true
}

func (c *collector) finish(n int) []Finding {
	kept := c.fs[:0]
	for _, f := range c.fs {
		if f.Start < c.limit {
			kept = append(kept, f)
		}
	}
	fs := mergeFindings(kept)
	limit := c.limit
	if len(fs) >= maxFindings {
		limit = min(limit, fs[maxFindings-1].Start)
		fs = fs[:maxFindings-1]
	}
	if limit < n {
		if k := len(fs); k > 0 && fs[k-1].End > limit {
			fs[k-1].End = limit
		}
		fs = append(fs, Finding{Rule: RuleTooManyFindings, Start: limit, End: n})
	}
	return fs
}

// scan runs every pass over s (the exact-value pass only if exact) and
// returns merged findings in s's offsets.
func (e *Engine) scan(s string, b *Budget, exact bool) ([]Finding, error) {
	if err := b.charge(len(s)); err != nil {
		return nil, err
	}
	t, omap := normalize(s)
	c := &collector{limit: len(t)}
	if exact && e.exact != nil {
		c.begin()
		e.exact.scan(t, c)
	}
	scanShapes(t, c)
	fs := dropInsideMarkers(t, c.finish(len(t)))
	if omap != nil {
		for i := range fs {
			fs[i].Start = omap.start(fs[i].Start)
			fs[i].End = omap.end(fs[i].End)
		}
	}
	return fs, nil
}

// markerSpans returns the redaction and withheld markers in t, in order:
// exactly the text Redact writes, "[REDACTED:<rule>]" with a rule-shaped
// name and "[WITHHELD by fixrail: <digits> bytes over the scan limit]".
func markerSpans(t string) [][2]int {
	var spans [][2]int
	const red, wh, whEnd = "[REDACTED:", "[WITHHELD by fixrail: ", " bytes over the scan limit]"
	for pos := 0; ; {
		i := strings.Index(t[pos:], red)
		if i < 0 {
			break
		}
		i += pos
		j := i + len(red)
		for j < len(t) && j-i < 64 && (t[j] >= 'a' && t[j] <= 'z' || t[j] >= '0' && t[j] <= '9' || t[j] == '-') {
			j++
		}
		if j > i+len(red) && j < len(t) && t[j] == ']' {
			spans = append(spans, [2]int{i, j + 1})
		}
		pos = i + 1
	}
	for pos := 0; ; {
		i := strings.Index(t[pos:], wh)
		if i < 0 {
			break
		}
		i += pos
		j := i + len(wh)
		for j < len(t) && j-i < 64 && isDigit(t[j]) {
			j++
		}
		if j > i+len(wh) && strings.HasPrefix(t[j:], whEnd) {
			spans = append(spans, [2]int{i, j + len(whEnd)})
		}
		pos = i + 1
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	return spans
}

// dropInsideMarkers removes shape findings that lie wholly inside a marker:
// a marker holds no secret, and a rule that fires on its text (the password
// "known-value]" of "u[REDACTED:known-value]@") would keep redaction from
// settling. Exact-value findings are never dropped: a fake marker in the
// input may hold a numeric known value.
func dropInsideMarkers(t string, fs []Finding) []Finding {
	if len(fs) == 0 || !strings.Contains(t, "[REDACTED:") && !strings.Contains(t, "[WITHHELD by fixrail: ") {
		return fs
	}
	spans := markerSpans(t)
	out := fs[:0]
	k := 0
	for _, f := range fs {
		for k < len(spans) && spans[k][1] <= f.Start {
			k++
		}
		inside := false
		switch f.Rule {
		case RuleKnownValue, RuleKnownValueBase64, RuleCustomerID, RuleTooManyFindings:
		default:
			for j := k; j < len(spans) && spans[j][0] <= f.Start; j++ {
				if f.End <= spans[j][1] {
					inside = true
					break
				}
			}
		}
		if !inside {
			out = append(out, f)
		}
	}
	return out
}
