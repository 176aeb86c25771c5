package redact

import (
	"encoding/base64"
	"strings"
)

// Placeholder judgement by whole shape. A value is judged as a whole, never
// by a substring found somewhere in it, except where the whole value is
// made of words: then a stand-in word (fake, example, dummy, …) anywhere
// marks it, since a random secret is not made of words. Appending a word
// to a random secret therefore never hides it.
//
// Three outcomes, used by every rule that reads a value:
//   - not a value at all (a template, a stand-in made of words, punctuation
//     only): no finding;
//   - a value that stands in for a secret (a repeated run, an alphabet run,
//     a fill, a documented example): a review finding, redacted but not
//     blocking, since redacting it costs nothing and a gate that blocks on
//     it throws good fixes away;
//   - anything else: the rule's own tier.

// standInWords mark a value made of words as a stand-in. They are matched
// anywhere in a value that holds only letters and separators.
var standInWords = []string{"fake", "dummy", "example", "sample", "placeholder", "changeme", "notreal", "notareal",
	"replace", "insert", "your", "redacted", "foobar", "lorem", "bogus", "invalid"}

// nameWords, in a value made of letters and separators, make it the name of
// a credential rather than one: real_key, mypassword, YOUR_API_TOKEN.
var nameWords = []string{"password", "passwd", "secret", "token", "apikey", "key", "pass", "pwd", "credential"}

// standIn reports a value made only of letters and separators (no digits)
// that holds a stand-in word or a credential noun: somefakekey,
// not_a_real_token, REPLACE_WITH_PASSWORD, mysecretpassword. A passphrase of
// ordinary words (correct-horse-battery) is not one.
func standIn(v string) bool {
	if len(v) > 64 {
		return false
	}
	var buf [64]byte
	n := 0
	for i := 0; i < len(v); i++ {
		b := v[i]
		switch {
		case b >= 'a' && b <= 'z':
			buf[n] = b
			n++
		case b >= 'A' && b <= 'Z':
			buf[n] = b + 'a' - 'A'
			n++
		case b == '_' || b == '-' || b == ' ' || b == '.':
		default:
			return false
		}
	}
	w := string(buf[:n])
	for _, s := range standInWords {
		if strings.Contains(w, s) {
			return true
		}
	}
	for _, s := range nameWords {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// noAlnum reports a value with no letter or digit (",.:-@*?!", "-----"):
// punctuation, not a credential.
func noAlnum(v string) bool {
	for i := 0; i < len(v); i++ {
		if csAlnum[v[i]] || v[i] >= 0x80 && isLetterRune(v, i) {
			return false
		}
	}
	return true
}

// isLetterRune is a cheap test that the multi-byte rune at i is a letter:
// Latin-1 letters and everything above the Latin-1 block count, symbols
// such as ¨ and ¿ do not.
func isLetterRune(v string, i int) bool {
	if v[i] == 0xC2 {
		return false // U+0080..U+00BF: controls, punctuation, symbols
	}
	return v[i] >= 0xC3
}

// fillShape reports a value that a person typed to stand in for a secret:
// one character making up half of it (AAAA…, xxxx, 111111aaaa…), a short
// unit repeated (abcd1234abcd1234…), or an alphabet run. Separators are
// ignored; case is folded.
func fillShape(v string) bool {
	var s [128]byte
	n := 0
	for i := 0; i < len(v) && n < len(s); i++ {
		if b := v[i]; csAlnum[b] {
			s[n] = b | 0x20
			n++
		}
	}
	t := s[:n]
	if n < 4 {
		return n >= 2 && sequential(string(t))
	}
	var counts [256]uint8
	for _, b := range t {
		counts[b]++
		if int(counts[b])*2 >= n && n >= 4 {
			return true
		}
	}
	// A unit of at most 12 characters repeated: the text matches itself
	// shifted by the unit, but for a stray character.
	for p := 1; p <= 12 && 2*p <= n; p++ {
		miss := 0
		for i := p; i < n; i++ {
			if t[i] != t[i-p] {
				if miss++; miss*10 > n-p {
					break
				}
			}
		}
		if miss*10 <= n-p {
			return true
		}
	}
	return alphabetRun(v)
}

// alphabetRun reports an alphabet or digit run a person typed: eight
// characters that are eight consecutive letters or digits, in order but for
// one step (abcdefgh, 12345678, abdcefgh), or twelve whose case-folded
// neighbours repeat or step by one (aAbBcCdDeEfF, 112233445566).
func alphabetRun(v string) bool {
	// One pass over the alphanumerics, case folded (foldTab), with the
	// last eight kept in a ring. near counts the neighbours in a row that
	// are at most seven apart and of one class, without which no eight can
	// form a range of eight, so the window itself is rarely looked at.
	var ring [8]byte
	n, step, near := 0, 0, 0
	var prev byte
	for i := 0; i < len(v) && i < 4096; i++ {
		b := foldTab[v[i]]
		if b == 0 {
			continue
		}
		d := int(b) - int(prev)
		if n > 0 && (b >= 'a') == (prev >= 'a') && d >= -7 && d <= 7 {
			near++
			if d == 0 || d == 1 {
				if step++; step >= 11 {
					return true
				}
			} else {
				step = 0
			}
		} else {
			step, near = 0, 0
		}
		ring[n&7] = b
		n++
		prev = b
		if near >= 7 && rangeOfEight(&ring, n) {
			return true
		}
	}
	return false
}

// foldTab maps letters to lower case, digits to themselves and everything
// else to 0.
var foldTab = func() (t [256]byte) {
	for b := range 256 {
		switch {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
			t[b] = byte(b)
		case b >= 'A' && b <= 'Z':
			t[b] = byte(b) + 'a' - 'A'
		}
	}
	return t
}()

// rangeOfEight reports that the last eight bytes in the ring (n written so
// far) are eight distinct values spanning exactly eight, in order but for
// at most one step (abcdefgh, abdcefgh, 87654321): a random string holds
// such a window with a probability of about 2e-8 for letters and 2e-5 for
// digits.
func rangeOfEight(w *[8]byte, n int) bool {
	lo, hi := w[0], w[0]
	var seen uint64
	up, down := 0, 0
	for k := range 8 {
		b := w[(n+k)&7] // oldest first
		bit := uint64(1) << (b & 63)
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		lo, hi = min(lo, b), max(hi, b)
		if k > 0 {
			if prev := w[(n+k-1)&7]; b > prev {
				up++
			} else {
				down++
			}
		}
	}
	return hi-lo == 7 && (up >= 6 || down >= 6)
}

// docExamples are values vendors publish as examples in their own
// documentation (AWS's example access key pair, Stripe's documented test
// key). They are public, so they are reported for review only. Assembled
// from parts so this file spells none of them.
var docExamples = wordSet(
	"AK"+"IAIOSFODNN7"+"EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY"+"EXAMPLEKEY",
	"AK"+"IAI44QH8DHB"+"EXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvb"+"EXAMPLEKEY",
	"sk"+"_test_4eC39HqLyjWDarjtT1zdp7dc",
)

// docExample reports a documented example value (case-sensitive).
func docExample(v string) bool { return len(v) <= 64 && docExamples[v] }

// valueReview is the tier of a value that is not a placeholder: "" (the
// rule's own tier) or the reason it only needs review.
func valueReview(v string) string {
	switch {
	case docExample(v):
		return ReviewExample
	case fillShape(v):
		return ReviewPlaceholder
	}
	return ""
}

// pemPlaceholder reports a PEM private-key block whose body is no key: no
// base64 line at all ("..."), or base64 that decodes to printable text (an
// alphabet, a sentence). A real key body decodes to DER, an OpenSSH or PGP
// packet, or ciphertext, none of which is text. Lines holding a colon
// (Proc-Type: and the like) are headers and are skipped; a line may end in
// a literal \n, as in JSON.
func pemPlaceholder(body string) bool {
	if !hasKeyBody(body) {
		return true
	}
	var run []byte
	line := []byte(nil)
	flush := func() {
		ok := len(line) > 0
		for _, b := range line {
			if !csB64[b] && b != ' ' && b != '\t' && b != '\r' {
				ok = false
				break
			}
		}
		if ok {
			for _, b := range line {
				if csB64[b] && b != '=' {
					run = append(run, b)
				}
			}
		}
		line = line[:0]
	}
	for i := 0; i < len(body) && len(run) < 96; i++ {
		switch b := body[i]; {
		case b == '\n':
			flush()
		case b == '\\' && i+1 < len(body) && body[i+1] == 'n':
			flush()
			i++
		default:
			if len(line) < 256 {
				line = append(line, b)
			}
		}
	}
	if len(run) < 96 {
		flush()
	}
	run = run[:min(len(run), 96)/4*4]
	if len(run) < 16 {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(string(run))
	if err != nil {
		return false
	}
	for _, b := range dec {
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' || b >= 0x7f {
			return false
		}
	}
	return true
}
