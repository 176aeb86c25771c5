package redact

// Payment card numbers: 13–19 digits, either one digit run or groups in a
// printed card layout joined by single spaces or dashes, with an issuer prefix
// (first digit 2–6: Mastercard, Amex, Diners, JCB, Visa, Discover, UnionPay,
// Maestro) and a valid Luhn check digit. The issuer prefix keeps 13-digit
// millisecond timestamps and the like (which start with 1) out; a digit run
// longer than 19 is not a card.

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
			if span, ok := cardEndingAt(t, win[:n]); ok {
				if !c.add(ruleCard, span.start, span.end) {
					return
				}
				n = 0
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
func cardEndingAt(t string, gs []group) (group, bool) {
	last := gs[len(gs)-1]
	if l := last.end - last.start; l >= 13 && l <= 19 {
		return last, cardNumber(t, gs[len(gs)-1:])
	}
	for k := 0; k < len(gs)-1; k++ {
		if cardLayout(gs[k:]) && cardNumber(t, gs[k:]) {
			return group{gs[k].start, last.end}, true
		}
	}
	return group{}, false
}

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
