package redact

import "strings"

// Payment card numbers: 13–19 digits, either one digit run or groups in a
// printed card layout joined by single spaces or dashes, with an issuer prefix
// (first digit 2–6: Mastercard, Amex, Diners, JCB, Visa, Discover, UnionPay,
// Maestro) and a valid Luhn check digit. The issuer prefix keeps 13-digit
// millisecond timestamps and the like (which start with 1) out; a digit run
// longer than 19 is not a card.
//
// One number in ten passes Luhn, so the check alone says little: code is full
// of long integers (bit masks, seeds, table entries). A number is a card only
// in a card's context:
//   - printed in a card layout (4-4-4-4, 4-6-5) or with a card word on its
//     line (card, cc, pan, credit, visa, …; cardNumber, cc_num): blocking;
//   - a string literal that is the bare number ("4111…"): for review, since
//     a numeric ID in JSON reads the same;
//   - anything else (an integer in code, a fraction's digits): no finding.

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

type group struct{ start, end int }

func scanCards(t string, c *collector) {
	// The last few groups of the current sequence: a card spans at most
	// five, so the scan keeps no more whatever the sequence's length.
	var win [5]group
	for i := 0; i < len(t); {
		for i < len(t) && !isDigit(t[i]) {
			i++
		}
		if i >= len(t) {
			return
		}
		if i > 0 && csAlnum[t[i-1]] {
			// Digits glued to letters (inside a hash, an ID, a token) are
			// not a card: skip the whole word.
			for i < len(t) && csAlnum[t[i]] {
				i++
			}
			continue
		}
		n := 0
		for {
			s := i
			for i < len(t) && isDigit(t[i]) {
				i++
			}
			more := i+1 < len(t) && (t[i] == ' ' || t[i] == '-') && isDigit(t[i+1])
			if !more && i < len(t) && csAlnum[t[i]] {
				break // the last group runs into a word
			}
			if n == len(win) {
				copy(win[:], win[1:])
				n--
			}
			win[n] = group{s, i}
			n++
			if span, layout, ok := cardEndingAt(t, win[:n]); ok {
				if review, report := cardContext(t, span, layout); report {
					if !c.addReview(ruleCard, span.start, span.end, review) {
						return
					}
					n = 0
				}
			}
			if !more {
				break
			}
			i++
		}
	}
}

// cardEndingAt looks for a card that ends with the last group in gs: that
// group alone as one digit run, or a printed layout of whole groups.
// layout reports the second.
func cardEndingAt(t string, gs []group) (span group, layout, ok bool) {
	last := gs[len(gs)-1]
	if l := last.end - last.start; l >= 13 && l <= 19 {
		return last, false, cardNumber(t, gs[len(gs)-1:])
	}
	for k := 0; k < len(gs)-1; k++ {
		if cardLayout(gs[k:]) && cardNumber(t, gs[k:]) {
			return group{gs[k].start, last.end}, true, true
		}
	}
	return group{}, false, false
}

// ReviewCardNoContext is the review reason of a Luhn-valid number alone in
// a string literal, with no card word near it and not printed in a card
// layout.
const ReviewCardNoContext = "Luhn-valid number in a string with no card word or card layout"

// cardContext decides a Luhn-valid span's tier (see the file comment):
// whether to report it, and the review reason ("" blocks).
func cardContext(t string, span group, layout bool) (review string, report bool) {
	if layout || cardWordNear(t, span.start, span.end) {
		return "", true
	}
	if span.start > 0 && span.end < len(t) && isQuote(t[span.start-1]) && t[span.end] == t[span.start-1] {
		return ReviewCardNoContext, true
	}
	return "", false
}

// cardWords name a payment card, matched as whole words of the text around
// a number: split at non-letters and at camelCase humps (cardNumber, cc_num,
// CreditCard), compared lower-cased. Concatenations people write as one
// word are listed whole.
var cardWords = wordSet("card", "cards", "cc", "ccn", "ccnum", "cardnum", "cardno", "cardnumber", "creditcard",
	"debitcard", "pan", "credit", "debit", "visa", "mastercard", "amex", "maestro", "jcb", "unionpay", "diners")

// cardWordNear reports a card word on the number's line, within 64 bytes
// before it or 32 after.
func cardWordNear(t string, start, end int) bool {
	lo, hi := max(0, start-64), min(len(t), end+32)
	if i := strings.LastIndexByte(t[lo:start], '\n'); i >= 0 {
		lo += i + 1
	}
	if i := strings.IndexByte(t[end:hi], '\n'); i >= 0 {
		hi = end + i
	}
	return hasWord(t[lo:start], cardWords) || hasWord(t[end:hi], cardWords)
}

// hasWord reports whether s holds one of words (lower case) as a whole word:
// a run of letters, split where a lower-case letter meets an upper-case one.
func hasWord(s string, words map[string]bool) bool {
	for i := 0; i < len(s); {
		if !isLetter(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isLetter(s[j]) && !(isUpper(s[j]) && !isUpper(s[j-1])) {
			j++
		}
		if foldIn(words, s[i:j]) {
			return true
		}
		i = j
	}
	return false
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// cardLayout accepts the groupings cards are printed in: fours with a
// shorter last group (4-4-4-4, 4-4-4-4-3, 4-4-4-1…), or 4-6-5 and 4-6-4
// (American Express, Diners). Loose digit groups such as "6286256 100644"
// (an abbreviated SHA and a file mode) do not pass.
func cardLayout(gs []group) bool {
	n := 0
	var lens [5]int
	if len(gs) > len(lens) {
		return false
	}
	for i, g := range gs {
		lens[i] = g.end - g.start
		n += lens[i]
	}
	if n < 13 || n > 19 {
		return false
	}
	if len(gs) == 3 && lens[0] == 4 && lens[1] == 6 && (lens[2] == 4 || lens[2] == 5) {
		return true
	}
	for i, l := range lens[:len(gs)] {
		if l != 4 && !(i == len(gs)-1 && l >= 1 && l <= 4) {
			return false
		}
	}
	return true
}

// cardNumber checks the issuer prefix and the Luhn digit of the digits in
// gs.
func cardNumber(t string, gs []group) bool {
	if first := t[gs[0].start]; first < '2' || first > '6' {
		return false
	}
	sum, double := 0, false
	for g := len(gs) - 1; g >= 0; g-- {
		for i := gs[g].end - 1; i >= gs[g].start; i-- {
			d := int(t[i] - '0')
			if double {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
			double = !double
		}
	}
	return sum%10 == 0
}
