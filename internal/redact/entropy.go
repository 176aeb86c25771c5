package redact

import (
	"encoding/base64"
	"math"
	"strings"
	"sync/atomic"
)

// The random-token test. A token is a maximal run of tokenChar of at least
// minTokenLen bytes; it is split at separators into parts, and a part of at
// least minPartLen bytes (minHexLen for hex) is judged against the entropy
// a uniformly random string of its own alphabet and length would have. One
// threshold for every alphabet cannot work: hex carries at most 4 bits per
// character, so a floor that suits base64 misses every hex key, and one
// that suits hex flags English.

const (
	minTokenLen = 20
	minPartLen  = 16
	minHexLen   = 20
	maxTableLen = 256
)

var (
	tokenChar = makeCharset("A-Za-z0-9+/=_.@-")
	partSep   = makeCharset("/._@=-")
)

// Alphabets a part is judged against: the smallest standard one holding it.
const (
	alphaHex = iota // 0-9a-f or 0-9A-F
	alpha36         // one letter case and digits
	alpha52         // both letter cases, no digits
	alpha62         // both letter cases and digits
	alpha64         // base64 ('+' too)
	numAlpha
)

var alphaSize = [numAlpha]int{16, 36, 52, 62, 64}

// thresholdSlack is k in E[H] - k/sqrt(L): measured on 20,000 random strings
// per cell, the 1st percentile of H sits 1.7–2.2/sqrt(L) below the mean for
// 16 ≤ L ≤ 64 (hex at the top of that range), and closer above it.
var thresholdSlack = [numAlpha]float64{2.2, 2.0, 2.0, 2.0, 2.0}

// thresholds caches threshold per cell as float64 bits; 0 is not computed
// yet. Cells are filled on first use, so a process that never judges a
// 200-character token never pays for it.
var thresholds [numAlpha][maxTableLen + 1]atomic.Uint64

// threshold is the entropy a part of alphabet a and length n must reach.
func threshold(a, n int) float64 {
	n = min(n, maxTableLen)
	cell := &thresholds[a][n]
	if v := cell.Load(); v != 0 {
		return math.Float64frombits(v)
	}
	v := expectedEntropy(alphaSize[a], n) - thresholdSlack[a]/math.Sqrt(float64(n))
	cell.Store(math.Float64bits(v))
	return v
}

// expectedEntropy is the exact mean Shannon entropy (bits per character) of
// the empirical distribution of n uniform draws from an alphabet of size a:
// by linearity, a times the expectation of -(X/n)log2(X/n) for X ~ Bin(n, 1/a).
func expectedEntropy(a, n int) float64 {
	p := 1 / float64(a)
	pmf := math.Pow(1-p, float64(n)) // P(X=0)
	sum := 0.0
	for k := 1; k <= n; k++ {
		pmf *= float64(n-k+1) / float64(k) * p / (1 - p)
		f := float64(k) / float64(n)
		sum -= pmf * f * math.Log2(f)
	}
	return float64(a) * sum
}

// entropy is the Shannon entropy of s in bits per character, computed as
// log2(n) - (1/n)·Σ c·log2(c) over the character counts c.
func entropy(s string) float64 {
	var counts [256]uint32
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	sum := 0.0
	for i := 0; i < len(s); i++ {
		if c := counts[s[i]]; c > 0 {
			sum += clog2(c)
			counts[s[i]] = 0
		}
	}
	n := float64(len(s))
	return math.Log2(n) - sum/n
}

// clogTable holds c·log2(c) for small counts.
var clogTable = func() (t [257]float64) {
	for c := 2; c < len(t); c++ {
		t[c] = float64(c) * math.Log2(float64(c))
	}
	return t
}()

func clog2(c uint32) float64 {
	if c < uint32(len(clogTable)) {
		return clogTable[c]
	}
	return float64(c) * math.Log2(float64(c))
}

func scanEntropy(t string, c *collector) {
	for i := 0; i < len(t); {
		for i < len(t) && !tokenChar[t[i]] {
			i++
		}
		s := i
		for i < len(t) && tokenChar[t[i]] {
			i++
		}
		if i-s >= minTokenLen && !judgeToken(t, s, i, c) {
			return
		}
	}
}

// judgeToken adds a finding for t[s:e] if a part of it looks random: the
// whole token, or for a URL the path segment holding the part. It reports
// whether the collector has room for more.
func judgeToken(t string, s, e int, c *collector) bool {
	tok := t[s:e]
	if a, b, ok := discordToken(tok); ok {
		return c.addReview(ruleDiscord, s+a, s+b, "")
	}
	if exemptToken(t, s, tok) {
		return true
	}
	url := strings.Contains(tok, "//")
	for ps := s; ps < e; {
		for ps < e && partSep[t[ps]] {
			ps++
		}
		pe := ps
		for pe < e && !partSep[t[pe]] {
			pe++
		}
		if pe-ps >= minPartLen && randomPart(t, ps, pe) {
			if b64Placeholder(tok) || publicValue(t, s) {
				return true // judged once a part reads random: these cost more
			}
			if !url {
				return c.addReview(ruleEntropy, s, e, ReviewNoName)
			}
			a, b := s, e
			if k := strings.LastIndexByte(t[s:ps], '/'); k >= 0 {
				a = s + k + 1
			}
			if k := strings.IndexByte(t[pe:e], '/'); k >= 0 {
				b = pe + k
			}
			if !c.addReview(ruleEntropy, a, b, ReviewNoName) {
				return false
			}
			pe = b
		}
		ps = pe
	}
	// Base64 splits at '/' into parts too short to judge; judge it whole.
	if core := strings.TrimRight(tok, "="); len(core) >= minTokenLen && strings.ContainsAny(core, "+/") && allIn(core, csB64) && randomPart(t, s, s+len(core)) && !b64Placeholder(tok) && !publicValue(t, s) {
		return c.addReview(ruleEntropy, s, e, ReviewNoName)
	}
	return true
}

func allIn(s string, cs *charset) bool {
	for i := 0; i < len(s); i++ {
		if !cs[s[i]] {
			return false
		}
	}
	return true
}

// exemptToken reports tokens whose randomness is expected and public:
// subresource-integrity and go.sum hashes, data: URIs, file paths.
func exemptToken(t string, s int, tok string) bool {
	for _, p := range []string{"sha1-", "sha256-", "sha384-", "sha512-", "md5-"} {
		if strings.HasPrefix(tok, p) {
			return true
		}
	}
	if s >= 7 && t[s-7:s] == "base64," || s >= 3 && t[s-3:s] == "h1:" {
		return true
	}
	return pathLike(t, s, tok) || objectPath(t, s, tok)
}

// objectPath reports an object-store URL (s3://bucket/key, gs://…): its
// segments are object names, often hashes or UUIDs, never credentials.
func objectPath(t string, s int, tok string) bool {
	if s == 0 || t[s-1] != ':' || !strings.HasPrefix(tok, "//") {
		return false
	}
	i := s - 1
	for i > 0 && s-1-i < 8 && csAlnum[t[i-1]] {
		i--
	}
	return foldIn(objectSchemes, t[i:s-1])
}

var objectSchemes = wordSet("s3", "s3a", "s3n", "gs", "gcs", "az", "abfs", "abfss", "wasb", "wasbs", "r2", "oss", "cos", "hdfs")

// pathLike reports a file path: it starts at a root (/, ./, ../, ~/) or its
// last segment carries a short lower-case extension. A URL (after a colon
// or holding //) is not a path.
func pathLike(t string, s int, tok string) bool {
	slash := strings.LastIndexByte(tok, '/')
	if slash < 0 || s > 0 && t[s-1] == ':' || strings.Contains(tok, "//") {
		return false
	}
	if strings.HasPrefix(tok, "./") || strings.HasPrefix(tok, "../") || strings.HasPrefix(tok, "~/") {
		return true
	}
	if tok[0] == '/' && strings.Count(tok, "/") >= 2 && !strings.ContainsAny(tok, "+=") {
		return true
	}
	last := tok[slash+1:]
	k := strings.LastIndexByte(last, '.')
	if k <= 0 || len(last)-k-1 < 1 || len(last)-k-1 > 5 {
		return false
	}
	for i := k + 1; i < len(last); i++ {
		if b := last[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9') {
			return false
		}
	}
	return true
}

// randomPart judges one separator-free part: random by its alphabet's
// entropy, and not an alphabet run a person typed (checked last: it is
// rarely needed).
func randomPart(t string, ps, pe int) bool {
	return randomShape(t, ps, pe) && !alphabetRun(t[ps:pe])
}

func randomShape(t string, ps, pe int) bool {
	p := t[ps:pe]
	var lower, upper, digit, other, hexLow, hexUp bool
	hexLow, hexUp = true, true
	for i := 0; i < len(p); i++ {
		switch b := p[i]; {
		case b >= 'a' && b <= 'z':
			lower = true
			hexUp = false
			if b > 'f' {
				hexLow = false
			}
		case b >= 'A' && b <= 'Z':
			upper = true
			hexLow = false
			if b > 'F' {
				hexUp = false
			}
		case b >= '0' && b <= '9':
			digit = true
		default:
			other = true
			hexLow, hexUp = false, false
		}
	}
	if !lower && !upper {
		return false // digits: numbers, timestamps, IDs; cards are judged apart
	}
	if sequential(p) || algoBefore(t, ps) {
		return false
	}
	// A hex key behind a short non-hex prefix (dapi…, 0x…) or in mixed
	// case is judged as hex, not against the alphabet its prefix adds.
	if !hexLow && !hexUp && !other {
		if hs := hexTail(p); hs >= 0 {
			h := strings.ToLower(p[hs:])
			if digestLen(len(h)) && digestContext(t, ps+hs, pe) {
				return false
			}
			return entropy(h) >= threshold(alphaHex, len(h))
		}
	}
	if hexLow || hexUp {
		if !digit || len(p) < minHexLen {
			return false
		}
		if digestLen(len(p)) && digestContext(t, ps, pe) {
			return false
		}
		return entropy(p) >= threshold(alphaHex, len(p))
	}
	if !digit && !other && lower != upper {
		return false // one-case letters only: words, not keys
	}
	if wordlike(p) {
		return false
	}
	a := alpha62
	switch {
	case other:
		a = alpha64
	case lower && upper && !digit:
		a = alpha52
	case !(lower && upper):
		a = alpha36
	}
	return entropy(p) >= threshold(a, len(p))
}

// hexTail returns where a hex run of at least minHexLen characters with a
// digit starts, when it runs to the end of p and is preceded by nothing, by
// "0x" or by at most six letters; else -1.
func hexTail(p string) int {
	k := len(p)
	digit := false
	for k > 0 && csHex[p[k-1]] {
		k--
		digit = digit || isDigit(p[k])
	}
	if !digit || len(p)-k < minHexLen || k > 6 {
		return -1
	}
	if k == 2 && p[0] == '0' && p[1]|0x20 == 'x' {
		return 2
	}
	for i := 0; i < k; i++ {
		if !isLetter(p[i]) {
			return -1
		}
	}
	return k
}

// algoBefore reports a part labelled with its hash algorithm:
// sha512.<hex> (pnpm's packageManager field), sha256:<hex>, md5-<b64>.
func algoBefore(t string, ps int) bool {
	if ps < 4 || strings.IndexByte(".:-", t[ps-1]) < 0 {
		return false
	}
	i := ps - 1
	for i > 0 && ps-1-i < 6 && isDigit(t[i-1]) {
		i--
	}
	switch {
	case i >= 3 && strings.EqualFold(t[i-3:i], "sha"):
		return true
	case i >= 3 && strings.EqualFold(t[i-3:i], "md5"), i >= 4 && strings.EqualFold(t[i-4:i], "blake"):
		return true
	}
	return false
}

// publicValue reports a token assigned to a key that names public
// material: DOTENV_PUBLIC_KEY=<hex>, "pubkey": "…", checksum: <hex>.
func publicValue(t string, s int) bool {
	j := s
	if j > 0 && isQuote(t[j-1]) {
		j--
	}
	for k := 0; j > 0 && (t[j-1] == ' ' || t[j-1] == '\t') && k < 16; k++ {
		j--
	}
	if j == 0 || t[j-1] != '=' && t[j-1] != ':' {
		return false
	}
	key, _, ok := keyBefore(t, j-1)
	if !ok {
		return false
	}
	return containsFold(key, "public") || containsFold(key, "pubkey") || foldIn(publicWords, lastWord(key))
}

// containsFold reports whether s holds the lower-case word w, ignoring
// case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// publicWords, as a key's last word, name a digest or other public value.
var publicWords = wordSet("hash", "checksum", "digest", "fingerprint", "integrity", "sha", "sha1", "sha256", "sha512", "etag")

// b64Placeholder reports base64 whose first bytes decode to an alphabet
// run, a fill or a stand-in made of words: a placeholder in disguise.
func b64Placeholder(tok string) bool {
	core := strings.TrimRight(tok, "=")
	core = core[:min(len(core), 96)/4*4]
	if len(core) < 16 {
		return false
	}
	// Base64 of printable ASCII starts every four characters with one of
	// I-Z or a-f (the top six bits of a byte 0x20-0x7e): most random
	// tokens fail this before any decoding.
	for i := 0; i < len(core); i += 4 {
		if b := core[i]; !(b >= 'I' && b <= 'Z' || b >= 'a' && b <= 'f') {
			return false
		}
	}
	var dec [72]byte
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		n, err := enc.Decode(dec[:], []byte(core))
		if err != nil {
			continue
		}
		for _, b := range dec[:n] {
			if b < 0x20 || b >= 0x7f {
				return false
			}
		}
		return fillShape(string(dec[:n]))
	}
	return false
}

func digestLen(n int) bool {
	switch n {
	case 32, 40, 56, 64, 96, 128:
		return true
	}
	return false
}

// digestWords, among the three words before a hex digest on its line, mark
// it as a commit or content hash rather than a key.
var digestWords = map[string]bool{
	"commit": true, "commits": true, "index": true, "sha": true, "sha1": true, "sha224": true, "sha256": true,
	"sha384": true, "sha512": true, "shasum": true, "sha1sum": true, "sha256sum": true, "sha512sum": true,
	"md5": true, "md5sum": true, "revision": true, "rev": true, "checksum": true, "checksums": true,
	"resolved": true, "hash": true, "digest": true, "fixed": true, "introduced": true, "tree": true, "blob": true, "parent": true, "merge": true,
	"object": true, "oid": true, "from": true, "integrity": true, "head": true, "base": true, "ref": true,
	"refs": true, "reference": true, "pick": true, "revert": true, "reverts": true, "fixup": true,
	"squash": true, "cherry": true, "compare": true, "blame": true, "raw": true, "sum": true,
	"checkout": true, "tag": true, "tags": true, "branch": true,
}

// digestContext reports whether the hex part at t[ps:pe] sits where a git
// SHA or checksum goes: after @ or # or .., before .., within three words
// after a digest word or another digest on the same line (looking back at
// most 64 bytes), or just before a digest word.
func digestContext(t string, ps, pe int) bool {
	if ps >= 1 && (t[ps-1] == '@' || t[ps-1] == '#') || ps >= 2 && t[ps-2:ps] == ".." || strings.HasPrefix(t[pe:], "..") {
		return true
	}
	lo := max(0, ps-64)
	i := ps
	for words := 0; words < 3 && i > lo; {
		for i > lo && !csAlnum[t[i-1]] {
			if t[i-1] == '\n' {
				return false
			}
			i--
		}
		end := i
		for i > lo && csAlnum[t[i-1]] {
			i--
		}
		if end == i {
			break
		}
		if end-i <= 9 {
			var w [9]byte
			for k := i; k < end; k++ {
				b := t[k]
				if b >= 'A' && b <= 'Z' {
					b += 'a' - 'A'
				}
				w[k-i] = b
			}
			if digestWords[string(w[:end-i])] {
				return true
			}
		}
		if digestLen(end-i) && isHex(t[i:end]) {
			return true // a pair of digests: old new, Merge: a b
		}
		words++
	}
	// or a digest word right after it: <sha> HEAD -> main, <sha> refs/heads/x
	k := pe
	for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
		k++
	}
	e := k
	for e < len(t) && e-k <= 9 && csAlnum[t[e]] {
		e++
	}
	return e > k && e-k <= 9 && foldIn(digestWords, t[k:e])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !csHex[s[i]] {
			return false
		}
	}
	return true
}

// sequential reports runs such as 0123456789abcdef, 00112233… or ABCDEF…:
// most neighbours at most one code point apart.
func sequential(p string) bool {
	n := 0
	for i := 1; i < len(p); i++ {
		if d := int(p[i]) - int(p[i-1]); d >= -1 && d <= 1 {
			n++
		}
	}
	return 2*n >= len(p)-1
}

// bigramCost is -2·log2 P(next letter | letter), rounded and capped at 35,
// as base-36 digits, row by row from "aa": measured over the letter pairs
// of the English comments in the Go 1.26 standard library (8.1 million
// pairs, add-one smoothed). Only statistics, no text, are kept.
const bigramCost = "nb88leaobpd6a5sbm775bbigcn8dfi4hjv7bo6hk8ikc8f7jkn5j5jci6jf6au8adk4dkbe6bhnnfu9gc83fgj5hnaef6fda8e9fffcn9h86bbdhemka96hbd558hdeafn9mdg87io4wv9fg4gq8c98pmmdpaibi4hd67robf84gk99baiktki5nml2nnp6ypigm8lsdf9enmvjlce8bb99rlog8a48dmb56pcsfvd8lke3hmmeqkmeg9eqj5l3lmnon6efe2gbj6rmff9gelg7gckfpep8ie94fhk6oi6jk6hlfa89ffp8m4ajd4lnm8wie9h66nlcg9kmqlt9j856d6lanecec7fnj65dcksdncda9e7eocqea85c9y5b879bkoq5gcd5jidawg7ek69l6978hhmasid9ehgikjppcahnfccbi1qgkkd7hbc3dbk7qddb97hma89acfoasagbc4gi97obcef8aje847lglal8ibi5hk37vodgk7dm98canej9mbbad7ccr9wr696gal666qqoevj5cca2hje8uoecjb9egefjdbboj6idh4jj54woegb7il7bhgkgnqj7f9g7cjg6pogdia4lge4fhhcdqgfcj9jkkatm759d3n777ikerlh8kfg1lnk8sqdliakqahkklgdeb"

// wordlike reports a part made of words: identifiers such as
// findSignatureInBlock and TestToolIDsAreUnique, or run-together prose. It
// averages bigramCost over letter pairs, skipping word boundaries and
// acronyms (a pair whose second letter is a capital) when the part has
// lower-case letters. Word text averages 7 (half-bits); uniformly random
// letters average near 14.7. The cut-offs, by the number of pairs counted,
// let through at most about 0.5% of random strings (measured on 200,000
// random base26/36/52/62 strings of 16–45 characters) and hold about 82%
// of the standard library's 19,000 mixed-case identifiers of 20 or more
// characters; the rest (mostly generated names such as OpAMD64VPBROADCASTQ128)
// are left to the entropy floor.
func wordlike(p string) bool {
	hasLower := false
	for i := 0; i < len(p); i++ {
		if p[i] >= 'a' && p[i] <= 'z' {
			hasLower = true
			break
		}
	}
	sum, n := bigramSum(p, hasLower)
	if hasLower && n < 6 {
		// mostly capitals (KeyAlgoRSASHA512): count every letter pair
		sum, n = bigramSum(p, false)
	}
	var cut int // in tenths of a half-bit
	switch {
	case n < 6:
		return false
	case n < 8:
		cut = 85
	case n < 12:
		cut = 100
	default:
		cut = 110
	}
	return sum*10 < cut*n
}

func bigramSum(p string, lowerOnly bool) (sum, n int) {
	for i := 0; i+1 < len(p); i++ {
		a, b := p[i], p[i+1]
		if !isLetter(a) || !isLetter(b) || lowerOnly && !(b >= 'a' && b <= 'z') {
			continue
		}
		c := bigramCost[int(a|0x20-'a')*26+int(b|0x20-'a')]
		if c <= '9' {
			sum += int(c - '0')
		} else {
			sum += int(c-'a') + 10
		}
		n++
	}
	return sum, n
}

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// discordToken finds a Discord bot token in a run of token characters: three
// dot-separated base64url parts, the first 24–27 characters (the bot's
// numeric ID, whose first digit encodes as M, N or O), the second 6 (a
// timestamp), the third 27 or 38 (the HMAC), the first and last holding
// upper- and lower-case letters and digits. It returns the token's span in
// tok. A run with more or fewer parts (a JWT, a dotted name) is not one.
func discordToken(tok string) (int, int, bool) {
	a := 0
	for a < len(tok) && tok[a] == '=' {
		a++ // DISCORD_TOKEN=M…: the run starts at the operator
	}
	id, rest, ok := strings.Cut(tok[a:], ".")
	if !ok || len(id) < 24 || len(id) > 27 || strings.IndexByte("MNO", id[0]) < 0 {
		return 0, 0, false
	}
	ts, mac, ok := strings.Cut(rest, ".")
	if !ok || len(ts) != 6 || len(mac) != 27 && len(mac) != 38 {
		return 0, 0, false
	}
	if !allIn(id, csAlnum) || !allIn(ts, csB64URL) || !allIn(mac, csB64URL) || !mixedClasses(id) || !mixedClasses(mac) {
		return 0, 0, false
	}
	return a, len(tok), true
}
