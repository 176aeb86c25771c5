package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// Credential-named assignments: KEY=value, KEY: value, "key": "value",
// key => value, key := value, --key value. The scan finds operators and
// reads the key backwards (at most maxKeyLen bytes) and the value forwards
// (at most maxValueLen bytes), by hand: a look-ahead regexp over
// "a=a=a=…" is what made earlier redactors quadratic.

const (
	maxKeyLen   = 64
	maxValueLen = 4096
	minValueLen = 8
)

var keyChar = makeCharset("A-Za-z0-9_.-")

// unquotedStop ends an unquoted value.
var unquotedStop = makeCharset(" \t\n\r\f\v\"'`,;&)]}<>")

// credentialWords are matched in the key lower-cased with separators
// removed, so API_KEY, api-key and apiKey all read "apikey".
var credentialWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "privatekey", "auth", "credential"}

// metaWords, as the key's last word, name something about a credential
// rather than the credential: token_url, password_file, secret_name.
var metaWords = map[string]bool{
	"url": true, "uri": true, "endpoint": true, "path": true, "file": true, "dir": true, "name": true,
	"type": true, "count": true, "length": true, "len": true, "size": true, "limit": true, "env": true,
	"header": true, "prefix": true, "format": true, "mode": true, "ttl": true, "timeout": true,
	"expiry": true, "expires": true, "expiration": true, "id": true, "ids": true, "enabled": true,
	"required": true, "field": true, "label": true, "hint": true, "description": true, "regex": true,
	"pattern": true, "kind": true, "version": true, "scope": true, "scopes": true, "method": true,
}

// Kinds of key name (credentialKind).
const (
	notCredential = iota
	strongName    // password, secret, token, api_key, pass, pwd, …
	ambiguousName // key alone as the last word: license_key, PresharedKey
)

// credentialKind says whether key names a credential, and how surely.
// "key" as the key's last word (license_key, Key, PresharedKey, ANY_KEY)
// often names a credential but as often a cache, sort or map key, so it is
// ambiguous: only a token-shaped value counts, and only for review. pass
// and pwd count only as whole words (DB_PASS, Pwd in an ODBC string), not
// inside bypass or compass.
func credentialKind(key string) int {
	if credentialName(key) {
		return strongName
	}
	// Only keys ending in s, d or y can end in pass, pwd or key.
	if k := strings.TrimRight(key, "_.-"); k == "" || strings.IndexByte("sSdDyY", k[len(k)-1]) < 0 {
		return notCredential
	}
	lw := lastWord(key)
	if strings.EqualFold(lw, "pass") || strings.EqualFold(lw, "pwd") {
		return strongName
	}
	if !strings.EqualFold(lw, "key") {
		return notCredential
	}
	prev := lastWord(key[:len(key)-len(lw)])
	if foldIn(keyQualifiers, prev) || strings.HasSuffix(strings.ToLower(prev), "public") {
		return notCredential
	}
	return ambiguousName
}

// keyQualifiers, as the word before a last word "key", name a key that is
// no credential: a public key, a sort, cache or map key.
var keyQualifiers = wordSet("public", "pub", "sort", "primary", "foreign", "partition", "cache", "idempotency",
	"hash", "row", "routing", "object", "lookup", "group", "shard", "index", "unique", "translation", "i18n",
	"message", "label", "map", "dict", "composite", "natural", "join", "hot", "short", "sign", "verify",
	"verification", "host", "dedup", "dedupe", "idempotence", "registry", "config", "env", "field", "s3")

// tokenValue reports a value shaped like a key, for an ambiguous name: one
// run of base64 or base64url characters holding letters and digits, not a
// path or a dotted name.
func tokenValue(v string) bool {
	var letter, digit bool
	for i := 0; i < len(v); i++ {
		b := v[i]
		switch {
		case b >= '0' && b <= '9':
			digit = true
		case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
			letter = true
		case b == '+' || b == '/' || b == '=' || b == '-' || b == '_':
		default:
			return false
		}
	}
	return letter && digit && !strings.Contains(v, "//") && !pathLike(v, 0, v)
}

// credentialName reports whether key names a credential unambiguously.
func credentialName(key string) bool {
	var buf [maxKeyLen + 8]byte
	n := 0
	for i := 0; i < len(key) && n < len(buf); i++ {
		b := key[i]
		switch {
		case b >= 'A' && b <= 'Z':
			buf[n] = b + 'a' - 'A'
			n++
		case b >= 'a' && b <= 'z' || b >= '0' && b <= '9':
			buf[n] = b
			n++
		}
	}
	k := buf[:n]
	for j := 0; j+4 <= len(k); j++ {
		// Every credential word starts with one of these four-byte
		// prefixes: one comparison per position instead of one per word.
		var ws []string
		switch string(k[j : j+4]) {
		case "pass":
			ws = credentialWords[0:3]
		case "secr":
			ws = credentialWords[3:4]
		case "toke":
			ws = credentialWords[4:5]
		case "apik":
			ws = credentialWords[5:6]
		case "acce":
			ws = credentialWords[6:7]
		case "priv":
			ws = credentialWords[7:8]
		case "auth":
			ws = credentialWords[8:9]
		case "cred":
			ws = credentialWords[9:10]
		default:
			continue
		}
		for _, w := range ws {
			if !bytes.HasPrefix(k[j:], []byte(w)) {
				continue
			}
			rest, before := k[j+len(w):], k[:j]
			switch w {
			case "auth":
				// author, authority, authored; not authorization
				if bytes.HasPrefix(rest, []byte("or")) && !bytes.HasPrefix(rest, []byte("oriz")) {
					continue
				}
			case "token":
				// tokenizer, max_tokens, next_page_token: counts and cursors
				if bytes.HasPrefix(rest, []byte("iz")) || notCredentialToken(before) {
					continue
				}
			}
			lw := lastWord(key)
			return !foldIn(metaWords, lw) && !strings.EqualFold(lw, "tokens")
		}
	}
	return false
}

// tokenQualifiers, just before "token" in a key, make it a count or a
// cursor, not a credential: max_tokens, output_tokens, next_page_token.
var tokenQualifiers = []string{"max", "num", "total", "input", "output", "prompt", "completion", "usage",
	"page", "continuation", "pagination", "cursor", "sync", "cancel", "cancellation"}

func notCredentialToken(before []byte) bool {
	for _, q := range tokenQualifiers {
		if bytes.HasSuffix(before, []byte(q)) {
			return true
		}
	}
	return false
}

// lastWord is the key's last word: TOKEN_FILE gives FILE, tokenFile gives
// File.
func lastWord(key string) string {
	i := len(key)
	for i > 0 && !csAlnum[key[i-1]] {
		i--
	}
	end := i
	if i == 0 {
		return ""
	}
	switch b := key[i-1]; {
	case b >= 'a' && b <= 'z' || b >= '0' && b <= '9':
		for i > 0 && (key[i-1] >= 'a' && key[i-1] <= 'z' || key[i-1] >= '0' && key[i-1] <= '9') {
			i--
		}
		if i > 0 && key[i-1] >= 'A' && key[i-1] <= 'Z' {
			i--
		}
	default:
		for i > 0 && (key[i-1] >= 'A' && key[i-1] <= 'Z' || key[i-1] >= '0' && key[i-1] <= '9') {
			i--
		}
	}
	return key[i:end]
}

// foldIn reports whether a lower-case key of m equals s, ignoring case,
// without allocating.
func foldIn(m map[string]bool, s string) bool {
	var buf [16]byte
	if len(s) > len(buf) {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		buf[i] = b
	}
	return m[string(buf[:len(s)])]
}

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func isQuote(b byte) bool { return b == '"' || b == '\'' || b == '`' }

// keyBefore reads the key that ends before the operator at o.
func keyBefore(t string, o int) (key string, start int, ok bool) {
	j := o
	for k := 0; j > 0 && (t[j-1] == ' ' || t[j-1] == '\t') && k < 16; k++ {
		j--
	}
	if j > 0 && t[j-1] == '?' {
		j--
	}
	if j > 0 && t[j-1] == ']' {
		j--
	}
	if j > 0 && isQuote(t[j-1]) {
		q, end := t[j-1], j-1
		lo := max(0, end-maxKeyLen)
		k := strings.LastIndexByte(t[lo:end], q)
		if k < 0 || strings.IndexByte(t[lo+k:end], '\n') >= 0 {
			return "", 0, false
		}
		return t[lo+k+1 : end], lo + k, true
	}
	end := j
	lo := max(0, end-maxKeyLen)
	k := end
	for k > lo && keyChar[t[k-1]] {
		k--
	}
	if k == end {
		return "", 0, false
	}
	return t[k:end], k, true
}

// envStyle reports whether a key at start begins its line, alone or after
// indentation, a list or diff marker, or export/set/ENV/ARG: then KEY=value
// (as in a .env file, a shell script or a Dockerfile) and key: value (as in
// YAML) hold literals, never variable references. A Python field annotated
// with a type name reads the same way and is over-redacted; that is the
// accepted direction.
func envStyle(t string, start int) bool {
	ls := strings.LastIndexByte(t[max(0, start-32):start], '\n')
	var pre string
	if ls >= 0 {
		pre = t[max(0, start-32)+ls+1 : start]
	} else if start <= 32 {
		pre = t[:start]
	} else {
		return false
	}
	pre = strings.TrimLeft(pre, " \t+-")
	pre = strings.TrimRight(pre, " \t")
	switch pre {
	case "", "export", "set", "ENV", "ARG", "setenv":
		return true
	}
	return false
}

func scanAssignments(t string, c *collector) {
	var file diffFile
	for i := 0; i < len(t); {
		j := strings.IndexAny(t[i:], "=:")
		if j < 0 {
			return
		}
		o := i + j
		vs := o + 1
		switch t[o] {
		case ':':
			if o+1 < len(t) && t[o+1] == ':' || o > 0 && t[o-1] == ':' {
				i = o + 1
				continue
			}
			if strings.HasPrefix(t[o+1:], "//") {
				i = o + 3
				continue
			}
			if o+1 < len(t) && t[o+1] == '=' {
				vs = o + 2
			}
		case '=':
			if o+1 < len(t) && (t[o+1] == '=' || t[o+1] == '~') {
				i = o + 2
				continue
			}
			if o > 0 && strings.IndexByte("=!<>+-*/%&|^~", t[o-1]) >= 0 {
				i = o + 1
				continue
			}
			if o+1 < len(t) && t[o+1] == '>' {
				vs = o + 2
			}
		}
		key, ks, ok := keyBefore(t, o)
		kind := notCredential
		if ok {
			// In a dotted key only the last part names what is assigned:
			// db.password is a password, token.XOR a constant of package
			// token.
			key = key[strings.LastIndexByte(key, '.')+1:]
			kind = credentialKind(key)
		}
		if kind == notCredential || t[o] == ':' && ks > 0 && t[ks-1] == ':' {
			// a:b:c is a colon-separated name (an ARN, a URN), not
			// key: value
			i = o + 1
			continue
		}
		env := envStyle(t, ks) && (t[o] == ':' || ks+len(key) == o)
		op := t[o]
		if vs == o+2 && op == ':' {
			op = '=' // := is an assignment in code, not a YAML key
			env = false
		}
		if s, e, ok := assignedValue(t, vs, op, env); ok && !sameName(key, t[s:e]) && (kind == strongName || tokenValue(t[s:e])) {
			review := namedValueReview(key, kind, t[s:e])
			if review == "" {
				review = charLiteralReview(t, ks, s, e, &file)
			}
			if !c.addReview(ruleAssignment, s, e, review) {
				return
			}
			i = max(e, o+1)
			continue
		}
		i = o + 1
	}
}

// namedValueReview is the tier of value v read under a credential name key
// of the given kind: "" (it blocks) or why it is for review.
func namedValueReview(key string, kind int, v string) string {
	review := secretValueReview(v)
	if review == "" {
		review = providerFormatReview(key, v)
	}
	if review == "" && repeatsKeyWord(key, v) {
		review = ReviewWords // auth: auth-and-writes
	}
	if review == "" && kind == ambiguousName && !azureAccountKey(key, v) {
		review = ReviewAmbiguousName
	}
	return review
}

// scanComparisons finds a credential-named variable compared for equality
// with a string literal, on either side: if (password == "…"),
// "…" !== api_key, token != '…'. Code that checks a credential against a
// literal holds the credential itself, as an assignment does. Only a
// strong name counts (key == "name" compares map keys), only a quoted
// literal (password == other is code), and the literal is judged as an
// assignment's value is, so a word, a label or a placeholder is for review
// or nothing.
func scanComparisons(t string, c *collector) {
	for pos := 0; ; {
		j := strings.Index(t[pos:], "=")
		if j < 0 {
			return
		}
		o := pos + j
		pos = o + 1
		var opStart, opEnd int
		switch {
		case o > 0 && t[o-1] == '!':
			opStart, opEnd = o-1, o+1 // != or !==
		case o+1 < len(t) && t[o+1] == '=' && (o == 0 || strings.IndexByte("=<>", t[o-1]) < 0):
			opStart, opEnd = o, o+2 // == or ===
		default:
			continue // =, <=, the tail of === or of a line of ====
		}
		if opEnd < len(t) && t[opEnd] == '=' {
			opEnd++
		}
		pos = opEnd
		var key string
		var s, e int
		if l := spaceBefore(t, opStart); l > 0 && isQuote(t[l-1]) {
			// "literal" == name
			e = l - 1
			lo := max(0, e-maxValueLen)
			k := strings.LastIndexByte(t[lo:e], t[e])
			if k < 0 || strings.IndexByte(t[lo+k:e], '\n') >= 0 {
				continue
			}
			s = lo + k + 1
			r := spaceAfter(t, opEnd)
			k = r
			for k < len(t) && k-r < maxKeyLen && keyChar[t[k]] {
				k++
			}
			key = t[r:k]
		} else {
			// name == "literal"
			kb, _, ok := keyBefore(t, opStart)
			r := spaceAfter(t, opEnd)
			if !ok || r >= len(t) || !isQuote(t[r]) {
				continue
			}
			s = r + 1
			if e = closingQuote(t, s, t[r]); e < 0 {
				continue
			}
			key = kb
		}
		key = key[strings.LastIndexByte(key, '.')+1:]
		v := t[s:e]
		if key == "" || credentialKind(key) != strongName || !literal(v) || sameName(key, v) {
			continue
		}
		if t[e] == '`' && (strings.Contains(v, "${") || strings.ContainsAny(v, " \t")) {
			continue // a template literal or a command: built, not written
		}
		review := namedValueReview(key, strongName, v)
		if review == "" && passphrase(v) {
			// Compared, lower-case words are a mode or an enum value
			// (credentials === 'same-origin'), not a chosen passphrase.
			review = ReviewWords
		}
		if !c.addReview(ruleAssignment, s, e, review) {
			return
		}
		pos = max(pos, e+1)
	}
}

// spaceBefore returns the index after the last non-blank byte before i;
// spaceAfter the index of the first non-blank byte at or after i.
func spaceBefore(t string, i int) int {
	for i > 0 && (t[i-1] == ' ' || t[i-1] == '\t') {
		i--
	}
	return i
}

func spaceAfter(t string, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	return i
}

// scanFlags finds --password value (the --password=value form is an
// assignment).
func scanFlags(t string, c *collector) {
	for pos := 0; ; {
		j := strings.Index(t[pos:], "--")
		if j < 0 {
			return
		}
		i := pos + j
		pos = i + 2
		if i > 0 && !isSpace(t[i-1]) && !isQuote(t[i-1]) {
			continue
		}
		k := i + 2
		for k < len(t) && k-i < 42 && (csB64URL[t[k]]) {
			k++
		}
		if k == i+2 || k+1 >= len(t) || t[k] != ' ' || t[k+1] == '-' || !credentialName(t[i+2:k]) {
			continue
		}
		if s, e, ok := assignedValue(t, k+1, ' ', false); ok {
			if !c.addReview(ruleAssignment, s, e, secretValueReview(t[s:e])) {
				return
			}
			pos = e
		}
	}
}

// scanLogins finds the password of a registry login given as -p (docker,
// podman, buildah, helm registry login -u user -p VALUE), where -p alone
// means nothing (ssh's port, mysql's prompt): only after "login" on the
// same line.
func scanLogins(t string, c *collector) {
	// seen: text up to here holds no -p a login before it could use, so a
	// run of logins reads each byte once.
	seen := 0
	for pos := 0; ; {
		j := strings.Index(t[pos:], "login ")
		if j < 0 {
			return
		}
		i := pos + j
		pos = i + len("login ")
		if i > 0 && !isSpace(t[i-1]) {
			continue
		}
		end := lineEnd(t, pos, min(len(t), pos+512))
		for k := max(pos, seen); k+3 < end; k++ {
			seen = k + 1
			if t[k] != '-' || t[k+1] != 'p' || t[k+2] != ' ' || !isSpace(t[k-1]) {
				continue
			}
			if s, e, ok := assignedValue(t, k+3, ' ', false); ok {
				if !c.addReview(ruleAssignment, s, e, secretValueReview(t[s:e])) {
					return
				}
				pos = e
			}
			break
		}
	}
}

// mysqlClients are the MySQL and MariaDB clients whose -p takes the
// password attached (-pVALUE); -p alone prompts for it, and -P is the port.
var mysqlClients = []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlslap", "mariadb", "mariadb-dump", "mariadb-admin"}

// scanMySQLPasswords finds the attached password of a MySQL client's -p
// (mysql -u root -pVALUE, -p'VALUE'): only on the line of a command word
// naming a client, since -pVALUE means other things to other tools.
func scanMySQLPasswords(t string, c *collector) {
	for pos := 0; ; {
		j := strings.Index(t[pos:], "-p")
		if j < 0 {
			return
		}
		k := pos + j
		pos = k + 2
		if k == 0 || !isSpace(t[k-1]) || k+2 >= len(t) || isSpace(t[k+2]) || t[k+2] == '-' {
			continue
		}
		if !mysqlOnLine(t, k) {
			continue
		}
		if s, e, ok := assignedValue(t, k+2, ' ', false); ok {
			if !c.addReview(ruleAssignment, s, e, secretValueReview(t[s:e])) {
				return
			}
			pos = e
		}
	}
}

// mysqlOnLine reports whether a MySQL client's name is a word on the line
// before position k.
func mysqlOnLine(t string, k int) bool {
	ls := strings.LastIndexByte(t[:k], '\n') + 1
	if k-ls > 512 {
		ls = k - 512
	}
	line := t[ls:k]
	for _, name := range mysqlClients {
		for off := 0; ; {
			i := strings.Index(line[off:], name)
			if i < 0 {
				break
			}
			i += off
			off = i + len(name)
			before := i == 0 || strings.IndexByte(" \t/;&|(\"'`", line[i-1]) >= 0
			after := off < len(line) && (line[off] == ' ' || line[off] == '\t')
			if before && after {
				return true
			}
		}
	}
	return false
}

// assignedValue reads the value after an operator, starting at vs, and
// reports its span when it is a literal worth redacting.
func assignedValue(t string, vs int, op byte, env bool) (int, int, bool) {
	return readValue(t, vs, op, env, true)
}

// readValue is assignedValue; with refs false it keeps bare identifiers,
// for a snippet already known to hold a secret.
func readValue(t string, vs int, op byte, env, refs bool) (int, int, bool) {
	lit := literal
	if !refs {
		// The snippet holds a secret: only masked values and templates
		// are not it (a weak real password such as mysecretpassword is).
		lit = func(v string) bool { return len(v) >= minValueLen && !maskedOrTemplate(v) }
	}
	p := vs
	for p < len(t) && (t[p] == ' ' || t[p] == '\t') && p-vs < 16 {
		p++
	}
	if p >= len(t) || t[p] == '\n' || t[p] == '\r' {
		return 0, 0, false
	}
	if (t[p] == 'b' || t[p] == 'r' || t[p] == 'B' || t[p] == 'R') && p+1 < len(t) && isQuote(t[p+1]) {
		p++
	}
	if k := backslashes(t, p); k > 0 && p+k < len(t) && (t[p+k] == '"' || t[p+k] == '\'') {
		// A quote escaped one level down or more: the text of a JSON
		// string (DB_PASSWORD=\"…\" in a tool call's command, as a hook
		// receipt or a report holds it), a shell's nested quoting (bash -c
		// "export PASSWORD=\"…\""), or both (\\\"). The value runs to the
		// same escaped quote.
		s := p + k + 1
		if e := escapedClosingQuote(t, s, t[p:s]); e >= 0 {
			if lit(t[s:e]) {
				return s, e, true
			}
			return 0, 0, false
		}
	}
	if isQuote(t[p]) {
		s := p + 1
		if e := closingQuote(t, s, t[p]); e >= 0 {
			// Backquotes around words are a shell command substitution
			// (PASSWORD=`openssl rand -hex 32`) or a Markdown code span
			// (pass: `the suite ran green`): neither is a literal.
			if refs && t[p] == '`' && strings.ContainsAny(t[s:e], " \t") {
				return 0, 0, false
			}
			if lit(t[s:e]) {
				return s, e, true
			}
			return 0, 0, false
		}
		p = s // unterminated: read it as unquoted
	}
	if codeAt(t, p) {
		return 0, 0, false
	}
	s, e := p, unquotedEnd(t, p)
	if authScheme(t[s:e]) && e+1 < len(t) && t[e] == ' ' {
		s = e + 1
		e = unquotedEnd(t, s)
	}
	v := t[s:e]
	if env && e < len(t) && (t[e] == ',' || t[e] == ')') {
		env = false // a keyword argument on its own line, not a .env entry
	}
	if !lit(v) || refs && (!env && (reference(v, op) || expression(t, e)) || op == ':' && typeAnnotation(v, t, e)) {
		return 0, 0, false
	}
	return s, e, true
}

func unquotedEnd(t string, p int) int {
	lim := min(len(t), p+maxValueLen)
	e := p
	for e < lim && !unquotedStop[t[e]] {
		e++
	}
	for e > p && strings.IndexByte(".:", t[e-1]) >= 0 {
		e--
	}
	return e
}

// closingQuote finds the quote that closes a literal opened before s, on
// the same line and within maxValueLen, honouring backslash escapes.
func closingQuote(t string, s int, q byte) int {
	lim := min(len(t), s+maxValueLen)
	for i := s; i < lim; i++ {
		switch t[i] {
		case q:
			return i
		case '\\':
			i++
		case '\n':
			return -1
		}
	}
	return -1
}

// backslashes counts the backslashes at t[p:].
func backslashes(t string, p int) int {
	k := 0
	for p+k < len(t) && t[p+k] == '\\' {
		k++
	}
	return k
}

// escapedClosingQuote finds the delimiter delim (backslashes and a quote,
// as the literal was opened) that closes a literal starting at s, on the
// same line and within maxValueLen: the first one not itself preceded by a
// backslash.
func escapedClosingQuote(t string, s int, delim string) int {
	lim := min(len(t), s+maxValueLen)
	for i := s; i < lim; {
		j := strings.Index(t[i:lim], delim)
		if j < 0 {
			return -1
		}
		e := i + j
		if nl := strings.IndexByte(t[s:e], '\n'); nl >= 0 {
			return -1
		}
		if e == s || t[e-1] != '\\' {
			return e
		}
		i = e + len(delim)
	}
	return -1
}

var authSchemes = wordSet("bearer", "basic", "token", "digest", "bot")

func authScheme(v string) bool { return foldIn(authSchemes, v) }

// codeAt reports whether the text at p is code rather than a literal: a
// template or variable expansion, an environment lookup, or a call or
// index expression.
func codeAt(t string, p int) bool {
	rest := t[p:min(len(t), p+maxValueLen)]
	for _, pre := range []string{"${", "{{", "$(", "%(", "#{", "<%", "{%", "process.env", "os.environ", "import.meta.env", "ENV[", "ENV.", "System.getenv", "Deno.env", "env(", "env."} {
		if strings.HasPrefix(rest, pre) {
			return true
		}
	}
	n := identPathLen(rest)
	if n > 0 && n < len(rest) && (rest[n] == '(' || rest[n] == '[') {
		return true
	}
	if strings.HasPrefix(rest, "/^") {
		return true // a regular expression literal: /^Unexpected token/
	}
	if len(rest) > 1 && rest[0] == '[' {
		// an array of references: [constants.Auth.None]
		if n := identPathLen(rest[1:]); n > 0 && 1+n < len(rest) && strings.IndexByte("],", rest[1+n]) >= 0 {
			return true
		}
	}
	return false
}

// identPathLen is the length of an identifier path (a.b.c, a->b, a::b) at
// the start of s.
func identPathLen(s string) int {
	i := 0
	for {
		if i >= len(s) || !(csAlnum[s[i]] && !(s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '$') {
			return max(0, i-sepLen(s, i))
		}
		for i < len(s) && (csWord[s[i]] || s[i] == '$') {
			i++
		}
		switch {
		case i < len(s) && s[i] == '.':
			i++
		case strings.HasPrefix(s[i:], "->") || strings.HasPrefix(s[i:], "::"):
			i += 2
		default:
			return i
		}
	}
}

func sepLen(s string, i int) int {
	if i >= 2 && (s[i-2:i] == "->" || s[i-2:i] == "::") {
		return 2
	}
	if i >= 1 && s[i-1] == '.' {
		return 1
	}
	return 0
}

// literal reports whether v is long enough and not a placeholder or code.
func literal(v string) bool {
	return len(v) >= minValueLen && !placeholder(v) && !codeValue(v)
}

// codeValue reports a value that is code or an address read as a literal:
//   - the code between two string literals, when a quote closes one
//     literal and the next quote opens another (" + get() + ");
//   - a CSS selector ("#add-password", ".token-field");
//   - an ARN, which names a resource (arn:aws:secretsmanager:…);
//   - a URL: the URL rule reads its userinfo, and a connection URL under
//     an …AUTH… key is an address, not a secret;
//   - an absolute path.
func codeValue(v string) bool {
	t := strings.TrimSpace(v)
	if t == "" {
		return false
	}
	// the other literal may use another quote: `{"k": "` + f() + `"}`
	if u := strings.Trim(t, " `'\""); u != t && (strings.HasPrefix(u, "+ ") || strings.HasSuffix(u, " +")) {
		return true
	}
	if strings.HasPrefix(t, "+ ") || strings.HasPrefix(t, ". ") || strings.HasSuffix(t, " +") || strings.HasSuffix(t, " .") || t[0] == '+' && len(v) > len(t) {
		return true
	}
	if (t[0] == '#' || t[0] == '.') && selector(t[1:]) {
		return true
	}
	if strings.HasPrefix(t, "arn:") && strings.Count(t, ":") >= 5 {
		return true
	}
	if k := strings.Index(t, "://"); k > 0 && identPathLen(t[:k]) == k {
		return true // a URL: its password, if any, is the URL rule's
	}
	if (t[0] == '/' || strings.HasPrefix(t, "~/")) && pathLike(t, 0, t) {
		return true // a path (PWD=/usr/src/app)
	}
	return false
}

// selector reports the rest of a CSS selector after its # or .: letters,
// '-' and '_', with at least one '-' or '_' (add-password, token_input).
func selector(s string) bool {
	sep := false
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
		case b == '-' || b == '_':
			sep = true
		default:
			return false
		}
	}
	return sep && len(s) > 2
}

var placeholderWords = wordSet("changeme", "change-me", "change_me", "password", "passwd", "secret", "redacted", "hidden",
	"undefined", "required", "optional", "example", "placeholder", "null", "none", "true", "false")

// placeholder reports whether v is a masked, templated or stand-in value
// rather than a credential. Matching is by whole shape, never by substring,
// so appending a word to a secret cannot make it a placeholder.
func placeholder(v string) bool {
	if len(v) >= 2 && isQuote(v[0]) && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1] // '$VAR' inside double quotes
	}
	if noAlnum(v) || standIn(v) {
		return true
	}
	if strings.HasPrefix(v, "-----BEGIN ") {
		if k := strings.Index(v[11:], "-----"); k >= 0 && pemPlaceholder(v[11+k+5:]) {
			return true // a PEM block with no key in it
		}
	}
	return maskedOrTemplate(v)
}

// maskedOrTemplate is the part of placeholder that also holds for a
// snippet known to carry a secret (Candidates): a masked value or a
// template, never a weak but real value such as mysecretpassword.
func maskedOrTemplate(v string) bool {
	if v == "" || strings.HasPrefix(v, "[REDACTED") || strings.HasPrefix(v, "[WITHHELD") {
		return true
	}
	if masked(v) || partlyMasked(v) || envName(v) && !strings.ContainsAny(v, "0123456789") || interpolates(v) {
		return true
	}
	first, last := v[0], v[len(v)-1]
	switch {
	case first == '<' && last == '>',
		strings.HasPrefix(v, "${") && last == '}',
		strings.HasPrefix(v, "{{") && strings.HasSuffix(v, "}}"),
		first == '{' && last == '}' && identPathLen(v[1:]) == len(v)-2,
		first == '%' && last == '%' && len(v) > 2 && identPathLen(v[1:]) == len(v)-2,
		first == '$' && identPathLen(v[1:]) == len(v)-1,
		printfName(v):
		return true
	}
	if foldIn(placeholderWords, v) {
		return true
	}
	// your-api-key, YOUR_TOKEN_HERE: stand-in words, no digits
	if len(v) > 5 && strings.EqualFold(v[:4], "your") && strings.IndexByte("-_ ", v[4]) >= 0 {
		for i := 5; i < len(v); i++ {
			if b := v[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-' || b == '_' || b == ' ') {
				return false
			}
		}
		return true
	}
	return false
}

// interpolates reports a value that holds a well-formed template
// expression a program fills in, anywhere in it: `Bearer ${token}`,
// "{{ .Values.password }}", "token %s", "%(pw)s", "$(DB_PASS)", "$TOKEN".
// The expression must be whole (${ident…}, {{ … }} with no brace inside,
// %s between non-letters): a random secret that merely holds "${" or "%("
// is not a template.
func interpolates(v string) bool {
	for i := 0; i+1 < len(v); i++ {
		switch v[i] {
		case '$':
			switch v[i+1] {
			case '{':
				if shellExpansion(v[i+2:]) {
					return true
				}
			case '(':
				if n := identPathLen(v[i+2:]); n > 0 && i+2+n < len(v) && v[i+2+n] == ')' {
					return true
				}
			default:
				if (i == 0 || strings.IndexByte(" \t'\"/:=", v[i-1]) >= 0) && envRef(v[i+1:]) {
					return true
				}
			}
		case '{', '#':
			if v[i+1] == '{' && v[i] == '{' {
				if k := strings.Index(v[i+2:min(len(v), i+2+128)], "}}"); k > 0 && !strings.ContainsAny(v[i+2:i+2+k], "{}") {
					return true
				}
			}
			if v[i] == '#' && v[i+1] == '{' {
				if n := identPathLen(v[i+2:]); n > 0 && i+2+n < len(v) && v[i+2+n] == '}' {
					return true
				}
			}
		case '%':
			switch c := v[i+1]; {
			case c == '(':
				if printfName(v[i:min(len(v), i+68)]) || namedVerb(v[i:]) {
					return true
				}
			case c == 's' || c == 'v' || c == 'd' || c == 'q':
				if (i == 0 || !csAlnum[v[i-1]]) && (i+2 == len(v) || !csAlnum[v[i+2]]) {
					return true
				}
			}
		}
	}
	return false
}

// shellExpansion reports "ident}" or "ident:-default}" (and the other
// operators of ${…}) at the start of s, within 128 bytes.
func shellExpansion(s string) bool {
	n := identPathLen(s)
	if n == 0 {
		return false
	}
	s = s[n:min(len(s), n+128)]
	if strings.HasPrefix(s, "}") {
		return true
	}
	for _, op := range []string{":-", ":=", ":?", ":+", "-", "=", "?", "+", "#", "%", "/"} {
		if strings.HasPrefix(s, op) {
			k := strings.IndexByte(s, '}')
			return k > 0 && strings.IndexByte(s[:k], '{') < 0
		}
	}
	return false
}

// envRef reports an upper-case shell variable ($TOKEN, $DB_PASS) at the
// start of s: three or more of A-Z, 0-9, _ ending at a separator.
func envRef(s string) bool {
	n := 0
	for n < len(s) && (s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9' && n > 0 || s[n] == '_') {
		n++
	}
	return n >= 3 && (n == len(s) || strings.IndexByte(" \t'\"/:@;,)}", s[n]) >= 0)
}

// namedVerb reports %(name)s at the start of s.
func namedVerb(s string) bool {
	n := identPathLen(s[2:])
	return n > 0 && len(s) > n+3 && s[n+2] == ')' && s[n+3] >= 'a' && s[n+3] <= 'z'
}

// printfName reports a named format verb such as %(secret)s.
func printfName(v string) bool {
	if !strings.HasPrefix(v, "%(") {
		return false
	}
	n := identPathLen(v[2:])
	return n > 0 && len(v) == n+4 && v[n+2] == ')' && (v[n+3] >= 'a' && v[n+3] <= 'z')
}

// partlyMasked reports a value a scanner or a writer has elided: it ends
// in an ellipsis or in xxx, or holds **** or xxxx (sk-live-…, sk-ant-xxx,
// Nil1Jii…). Such text is an example, not a credential.
func partlyMasked(v string) bool {
	if strings.HasSuffix(v, "…") || strings.HasSuffix(v, "...") || strings.Contains(v, "****") || strings.Contains(v, "…") {
		return true
	}
	run := 0
	for i := 0; i < len(v); i++ {
		if v[i] == 'x' || v[i] == 'X' {
			run++
			if run >= 4 || run >= 3 && i == len(v)-1 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// masked reports whether v is made only of masking characters (****,
// xxxx-xxxx, ####, ……), the form a scanner shows instead of a value.
func masked(v string) bool {
	n := 0
	for _, r := range v {
		switch r {
		case '*', 'x', 'X', '#', '.', '•', '●', '…', '·':
			n++
		case '-', '_', ' ':
		default:
			return false
		}
	}
	return n > 0
}

// reference reports whether an unquoted value is a bare identifier that
// names a variable, a field or a type rather than holding a literal: a
// dotted path, or without digits snake_case, CONSTANT_CASE, lowerCamelCase
// or a lower-case name in code.
func reference(v string, op byte) bool {
	if identPathLen(v) != len(v) {
		return false
	}
	hasUpper, hasLower, hasDigit, hasSep := false, false, false, false
	for i := 0; i < len(v); i++ {
		switch b := v[i]; {
		case b >= 'A' && b <= 'Z':
			hasUpper = true
		case b >= 'a' && b <= 'z':
			hasLower = true
		case b >= '0' && b <= '9':
			hasDigit = true
		case b == '.' || b == '$' || b == '-' || b == '>' || b == ':':
			return true // a.b, a->b, a::b, $var
		case b == '_':
			hasSep = true
		}
	}
	if hasDigit {
		return false // identifiers rarely carry digits; secrets usually do
	}
	switch {
	case hasSep:
		return true // snake_case, CONSTANT_CASE
	case hasLower && hasUpper && v[0] >= 'a' && v[0] <= 'z':
		return true // lowerCamelCase
	case hasLower && !hasUpper && op != ':':
		return true // lowercase name in code
	}
	return false
}

// expression reports an unquoted value that an operator continues
// (username + ":" + password): code, not a literal.
func expression(t string, e int) bool {
	k := e
	for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
		k++
	}
	return k > e && k < len(t) && strings.IndexByte("+*/%|&?^(", t[k]) >= 0
}

// sameName reports a value that repeats its key ("encodeUserPassword":
// "encodeUserPassword"), ignoring case and separators: a name table, not a
// credential.
func sameName(key, v string) bool {
	i, j := 0, 0
	for {
		for i < len(key) && !csAlnum[key[i]] {
			i++
		}
		for j < len(v) && !csAlnum[v[j]] {
			j++
		}
		if i == len(key) || j == len(v) {
			return i == len(key) && j == len(v)
		}
		if key[i]|0x20 != v[j]|0x20 {
			return false
		}
		i++
		j++
	}
}

// typeAnnotation reports "key: TypeName" followed by more code (; , ) = |
// & < > [ ] {), as in TypeScript fields and parameters.
func typeAnnotation(v, t string, e int) bool {
	if identPathLen(v) != len(v) || strings.ContainsAny(v, "0123456789") {
		return false
	}
	k := e
	for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
		k++
	}
	return k < len(t) && strings.IndexByte(";,)=|&<>[]{", t[k]) >= 0
}

// Reasons a value under a credential name is for review (Finding.Review).
const (
	// ReviewWords: the value reads as words, a label or a name (letters and
	// word punctuation, no digit): "Password:", "bitwise complement",
	// edit_password, a sentence. A letters-only passphrase is redacted but
	// does not block.
	ReviewWords = "value reads as words, a label or a name, not a secret"
	// ReviewWeakWord: what documentation and defaults write for a
	// password (P@ssw0rd!, password123, changeme): public, not secret.
	ReviewWeakWord = "a default or documentation password (P@ssw0rd!, password123, changeme)"
	// ReviewDotted: digits in dotted groups, a version, an IP address or an
	// object identifier (SERVER_AUTH = '1.3.6.1.5.5.7.3.1').
	ReviewDotted = "value is a version, address or object identifier"
	// ReviewFormat: the name is a provider's credential whose format is
	// documented, and the value does not fit it.
	ReviewFormat = "value does not fit the format of the credential its name names"
)

// secretValueReview is the tier of a value read under a credential name (an
// assignment, a --flag, a URL's password) that is not a placeholder: "" (it
// blocks) or why it only needs review. A value blocks when it could be a
// secret someone chose or generated: it holds a digit or a symbol, or
// letters in no word's pattern.
func secretValueReview(v string) string {
	switch {
	case valueReview(v) != "":
		return valueReview(v)
	case leetPlaceholder(v):
		return ReviewWeakWord
	case dottedNumber(v):
		return ReviewDotted
	case upperStandIn(v), encodedStandIn(v):
		// MYTOKEN1; base64 of "user:not my real password"
		return ReviewPlaceholder
	case wordsValue(v) && !passphrase(v), proseValue(v):
		return ReviewWords
	}
	return ""
}

// dottedNumber reports digits in three or more dot-separated groups.
func dottedNumber(v string) bool {
	return strings.Count(v, ".") >= 2 && onlyIn(v, csDigitDot) && !strings.Contains(v, "..") && v[0] != '.' && v[len(v)-1] != '.'
}

var csDigitDot = makeCharset("0-9.")

// upperStandIn reports a stand-in in capitals with a number after it, as
// documentation numbers its examples: MYTOKEN1, YOUR_KEY_2.
func upperStandIn(v string) bool {
	w := strings.TrimRight(v, "0123456789")
	return len(w) < len(v) && strings.ToUpper(w) == w && standIn(w)
}

// encodedStandIn reports base64 (padded or not) of printable text whose
// password part (after the first ':', as in Basic auth's user:password) is
// a placeholder or a stand-in made of words: "not my real password".
func encodedStandIn(v string) bool {
	if len(v) < 12 || !onlyIn(v, csB64) {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if dec, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return false
		}
	}
	d := string(dec)
	for i := 0; i < len(d); i++ {
		if d[i] < 0x20 || d[i] >= 0x7f {
			return false
		}
	}
	if _, pw, ok := strings.Cut(d, ":"); ok {
		d = pw
	}
	return placeholder(d) || leetPlaceholder(d)
}

// proseValue reports a sentence: four or more space-separated fields, at least
// three in four of them words (digits and hex such as 0x80 may sit among
// them). A secret rarely holds three spaces.
func proseValue(v string) bool {
	fields := strings.Fields(v)
	if len(fields) < 4 {
		return false
	}
	words := 0
	for _, f := range fields {
		if wordsValue(f) {
			words++
		}
	}
	return words*4 >= len(fields)*3 && !passphrase(v)
}

// repeatsKeyWord reports a value one of whose words is the key's last word
// (auth: auth-and-writes, token: refresh_token): it names the kind of thing
// assigned, as an enum value or a label does.
func repeatsKeyWord(key, v string) bool {
	lw := lastWord(key)
	if len(lw) < 3 {
		return false
	}
	for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == ' ' || r == '.' }) {
		if strings.EqualFold(w, lw) {
			return true
		}
	}
	return false
}

// passphrase reports words a person chose as a secret: two or more
// lower-case words joined by dashes (correct-horse), or three or more
// joined by single spaces (correct horse battery staple). A name
// (edit_password, jsontext.Token), a label ("Password:") or a phrase of
// one or two words or with punctuation ("bitwise complement", a sentence)
// is not one.
func passphrase(v string) bool {
	sep := byte(0)
	words, wordLen := 0, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && v[i] >= 'a' && v[i] <= 'z' {
			wordLen++
			continue
		}
		if wordLen < 2 {
			return false
		}
		words++
		wordLen = 0
		if i == len(v) {
			break
		}
		if sep == 0 && (v[i] == '-' || v[i] == ' ') {
			sep = v[i]
		}
		if v[i] != sep {
			return false
		}
	}
	return sep == '-' && words >= 2 || sep == ' ' && words >= 3
}

// weakWords are what documentation and defaults write for a password,
// matched whole after leet spelling is undone and trailing digits and
// punctuation are dropped: P@ssw0rd!, password123, s3cr3t, changeme1.
var weakWords = wordSet("password", "passwd", "pass", "secret", "changeme", "letmein", "admin", "qwerty",
	"welcome", "default", "test", "root", "guest", "example", "sample", "dummy",
	// the same words in the languages documentation is often written in
	"geheim", "passwort", "kennwort", "parole", "motdepasse", "secreto", "segreto", "senha", "contrasena", "clave")

// leetPlaceholder reports a documentation password: a weak word, perhaps in
// leet spelling, perhaps followed by digits and punctuation, or weak words
// joined by a symbol (geheim$parole, secret+password).
func leetPlaceholder(v string) bool {
	if parts := strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune("$+&_-. ", r) }); len(parts) > 1 {
		for _, p := range parts {
			if !leetWord(p) {
				return false
			}
		}
		return true
	}
	return leetWord(v)
}

func leetWord(v string) bool {
	end := len(v)
	for end > 0 && (isDigit(v[end-1]) || strings.IndexByte("!?.*#_-", v[end-1]) >= 0) {
		end--
	}
	if end == 0 || end > 16 {
		return false
	}
	var buf [16]byte
	for i := 0; i < end; i++ {
		b := v[i] | 0x20
		switch v[i] {
		case '@', '4':
			b = 'a'
		case '0':
			b = 'o'
		case '1', '!':
			b = 'i'
		case '3':
			b = 'e'
		case '$', '5':
			b = 's'
		case '7':
			b = 't'
		default:
			if !isLetter(v[i]) {
				return false
			}
		}
		buf[i] = b
	}
	return weakWords[string(buf[:end])]
}

// wordsValue reports a value made of words: letters, whitespace and word
// punctuation, no digit and no other symbol, each run of letters in a
// word's case pattern (lower, UPPER, Capitalised, camelCase humps of at
// least two lower-case letters). Random letters in mixed case (XkQmZpLr)
// are not words.
func wordsValue(v string) bool {
	letters := false
	for i := 0; i < len(v); {
		b := v[i]
		switch {
		case isLetter(b):
			j := i
			for j < len(v) && isLetter(v[j]) {
				j++
			}
			if !wordCase(v[i:j]) {
				return false
			}
			letters = true
			i = j
			continue
		case b == '\\' && i+1 < len(v) && strings.IndexByte("nrt\"'", v[i+1]) >= 0:
			i++ // an escape in a string literal: \n, \"
		case b >= 0x80, strings.IndexByte(" \t-_.:;,/'\"!?()[]", b) >= 0:
		default:
			return false // a digit or a symbol
		}
		i++
	}
	return letters
}

// wordCase reports a run of letters in a word's case pattern.
func wordCase(w string) bool {
	humps := 0
	for i := 1; i < len(w); i++ {
		if !isUpper(w[i]) || isUpper(w[i-1]) {
			continue
		}
		// A hump: an upper-case letter after a lower-case one. The lower
		// case part after it (or the all-caps word it starts) must be two
		// letters or more.
		humps++
		j := i + 1
		for j < len(w) && !isUpper(w[j]) {
			j++
		}
		if j-i < 3 && j < len(w) {
			return false
		}
	}
	return humps*4 <= len(w)
}

// providerFormatReview checks a value against the documented format of the
// provider credential its name names. Only AWS's is judged: an access key
// ID is 20 characters (AKIA and 16 of A-Z2-7), a secret access key 40 of
// the base64 alphabet; a value of another shape under an AWS name (a
// ciphertext, a truncated or padded example) is for review.
func providerFormatReview(key, v string) string {
	var buf [maxKeyLen]byte
	n := 0
	for i := 0; i < len(key) && n < len(buf); i++ {
		if isLetter(key[i]) {
			buf[n] = key[i] | 0x20
			n++
		}
	}
	k := string(buf[:n])
	if !strings.Contains(k, "aws") || !strings.Contains(k, "secret") && !strings.Contains(k, "accesskey") {
		return ""
	}
	switch {
	case len(v) == 40 && onlyIn(v, csB64) && !strings.Contains(v, "="):
	case len(v) == 20 && onlyIn(v, csUpperDigit):
	default:
		return ReviewFormat
	}
	return ""
}

// azureAccountKey reports an Azure storage account key under its
// connection-string name: AccountKey= and the base64 of 64 bytes (88
// characters), which the ambiguous name "key" alone would leave to review.
func azureAccountKey(key, v string) bool {
	if !strings.EqualFold(key, "AccountKey") || len(v) != 88 || !strings.HasSuffix(v, "==") {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(v)
	return err == nil && len(dec) == 64
}

func onlyIn(v string, cs *charset) bool {
	for i := 0; i < len(v); i++ {
		if !cs[v[i]] {
			return false
		}
	}
	return true
}
