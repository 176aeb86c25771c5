package redact

import (
	"encoding/base64"
	"slices"
	"strings"
	"sync"
)

// RuleInfo describes one shape rule.
type RuleInfo struct {
	ID          string
	Description string
	// Example is a synthetic value the rule matches. It is assembled at
	// init from parts, so no literal in this source looks like a token.
	Example string
}

// Rules lists the shape rules, the ones that need no configured value, in
// a stable order. Rule IDs are stable: they appear in markers and reports.
// The list is built on first call: its examples cost a hook process, which
// never shows them, a noticeable part of its start-up.
func Rules() []RuleInfo { return slices.Clone(rulesList()) }

var rulesList = sync.OnceValue(func() []RuleInfo {
	tokenRulesOnce.Do(initTokenRules)
	var rules []RuleInfo
	for _, r := range tokenRules {
		rules = append(rules, RuleInfo{ID: r.id, Description: r.desc, Example: r.example()})
	}
	return append(rules,
		RuleInfo{ID: rulePrivateKey, Description: "PEM private key block (-----BEGIN … PRIVATE KEY----- through its END line)",
			Example: "-----" + "BEGIN " + "PRIVATE KEY" + "-----\n" + synthetic(csB64, 64) + "\n" + synthetic(csB64, 40) + "\n-----" + "END " + "PRIVATE KEY" + "-----"},
		RuleInfo{ID: ruleURLCredentials, Description: "password in a URL's userinfo (scheme://user:password@host); only the password is redacted. Not reported: placeholders and templates (user:password@, {password}, $(DB_PASS), ${PW}), and a password equal to the user name (postgres:postgres@, guest:guest@), which is an image's documented default, public rather than secret",
			Example: "postgres://app:" + "Example" + "Pass" + "word42@db.example.com:5432/app"},
		RuleInfo{ID: ruleAssignment, Description: "value assigned to a credential-named key (password, passphrase, secret, token, api_key, auth, credential, pass, pwd …), 8 characters or more, not code; it blocks when someone chose or generated it (a digit, a symbol, random letters, a passphrase), while words, labels, names, sentences, documentation passwords (P@ssw0rd!) and dotted numbers are for review; under key alone (license_key, PresharedKey) only a token-shaped value, for review",
			Example: "DB_" + "PASSWORD=" + "correct-horse-battery"},
		RuleInfo{ID: ruleEntropy, Description: "random-looking token, judged against the expected entropy of its own alphabet and length; for review only (it has no credential name)",
			Example: "value " + synthetic(csAlnum, 40)},
		RuleInfo{ID: ruleCard, Description: "payment card number: 13–19 digits, issuer prefix 2–6, Luhn-valid, in a card's context: printed in a card layout (4-4-4-4, 4-6-5) or with a card word on its line (card, cc, pan, visa, cardNumber …); the bare number alone in a string literal is for review; an integer in code is not reported",
			Example: "card " + "4111" + " 1111 " + "1111 1111"},
	)
})

const (
	rulePrivateKey     = "private-key"
	ruleJWT            = "jwt"
	ruleDiscord        = "discord-bot-token"
	ruleB64JSON        = "base64-json-key"
	ruleURLCredentials = "url-credentials"
	ruleAssignment     = "credential-assignment"
	ruleCard           = "card-number"
	ruleEntropy        = "high-entropy"
)

// charset is a byte-membership table. makeCharset reads "a-z" as a range;
// a literal '-' goes last.
type charset [256]bool

func makeCharset(spec string) *charset {
	var c charset
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			if spec[i] > spec[i+2] {
				panic("redact: bad charset range in " + spec)
			}
			for b := int(spec[i]); b <= int(spec[i+2]); b++ {
				c[b] = true
			}
			i += 2
			continue
		}
		c[spec[i]] = true
	}
	return &c
}

var (
	csAlnum      = makeCharset("A-Za-z0-9")
	csWord       = makeCharset("A-Za-z0-9_")
	csB64URL     = makeCharset("A-Za-z0-9_-")
	csUpperDigit = makeCharset("A-Z0-9")
	csHex        = makeCharset("0-9a-fA-F")
	csSlack      = makeCharset("A-Za-z0-9-")
	csB64        = makeCharset("A-Za-z0-9+/=")
	csSlackHook  = makeCharset("A-Za-z0-9+/_-")
	csAlpha      = makeCharset("A-Za-z")
	csPscale     = makeCharset("A-Za-z0-9_=.-")
	csDigit      = makeCharset("0-9")
)

// runMemo finds the end of a maximal run of one charset. Prefix searches
// visit positions in increasing order, so a run already measured is not
// measured again when a later candidate starts inside it: each byte is
// read once per memo however many prefixes a hostile run repeats.
type runMemo struct {
	cs         *charset
	start, end int
}

func (r *runMemo) runEnd(t string, i int) int {
	if i >= r.start && i < r.end {
		return r.end
	}
	j := i
	for j < len(t) && r.cs[t[j]] {
		j++
	}
	if j > i {
		r.start, r.end = i, j
	}
	return j
}

// body describes the characters after a literal prefix.
type body struct {
	cs       *charset
	min, max int
}

// A tokenRule is a provider token: literal prefixes, then a bounded body.
type tokenRule struct {
	id, desc string
	prefixes []string
	body     body
	// match, if set, replaces the body check; it returns the rule that
	// matched (one prefix can serve several) and the token end, or -1.
	match   func(t string, i int, m *memos) (string, int)
	example func() string
	// boundary: the prefix must not follow a letter, digit or '_'
	// (ssk-ant-…, xsk_live_…, fooAKIA… are not tokens).
	boundary bool
}

// memos are one token rule's run memos for one scan.
type memos [3]runMemo

func (m *memos) get(k int, cs *charset) *runMemo {
	if m[k].cs != cs {
		m[k] = runMemo{cs: cs}
	}
	return &m[k]
}

// tokenRules and the prefix index are built on first use
// (tokenRulesOnce.Do(initTokenRules)): every fixrail command links this
// package, and most redact nothing.
var (
	tokenRules     []tokenRule
	tokenRulesOnce sync.Once
)

func initTokenRules() {
	defer indexPrefixes()
	ghBody := body{csAlnum, 36, 251}
	tokenRules = []tokenRule{
		{id: "github-pat", desc: "GitHub personal access token (classic)", prefixes: []string{"gh" + "p_"}, body: ghBody,
			example: func() string { return "gh" + "p_" + synthetic(csAlnum, 36) }},
		{id: "github-oauth", desc: "GitHub OAuth access token", prefixes: []string{"gh" + "o_"}, body: ghBody,
			example: func() string { return "gh" + "o_" + synthetic(csAlnum, 36) }},
		{id: "github-app-token", desc: "GitHub App user-to-server or server-to-server token", prefixes: []string{"gh" + "u_", "gh" + "s_"}, body: ghBody,
			example: func() string { return "gh" + "s_" + synthetic(csAlnum, 36) }},
		{id: "github-refresh-token", desc: "GitHub refresh token", prefixes: []string{"gh" + "r_"}, body: ghBody,
			example: func() string { return "gh" + "r_" + synthetic(csAlnum, 36) }},
		{id: "github-fine-grained-pat", desc: "GitHub fine-grained personal access token", prefixes: []string{"github" + "_pat_"}, body: body{csWord, 82, 244},
			example: func() string { return "github" + "_pat_" + synthetic(csAlnum, 22) + "_" + synthetic(csAlnum, 59) }},
		{id: "gitlab-pat", desc: "GitLab personal access token", prefixes: []string{"gl" + "pat-"}, body: body{csB64URL, 20, 255},
			example: func() string { return "gl" + "pat-" + synthetic(csAlnum, 20) }},
		{id: "slack-token", desc: "Slack bot, user, app-level, refresh, configuration or legacy token (xox[abeoprs]-)", prefixes: []string{"xo" + "x"}, match: matchSlack,
			example: func() string { return "xo" + "xb-" + synthetic(makeCharset("0-9"), 12) + "-" + synthetic(csAlnum, 24) }},
		{id: "slack-webhook-url", desc: "Slack incoming webhook or workflow URL (hooks.slack.com/services/…)", prefixes: []string{"hooks" + ".slack.com/"}, match: matchSlackHook,
			example: func() string {
				return "https://hooks" + ".slack.com/services/T" + synthetic(csUpperDigit, 8) + "/B" + synthetic(csUpperDigit, 10) + "/" + synthetic(csAlnum, 24)
			}},
		{id: "slack-app-token", desc: "Slack app configuration token (xapp-)", prefixes: []string{"xa" + "pp-"}, body: body{csSlack, 10, 255},
			example: func() string { return "xa" + "pp-1-" + synthetic(csAlnum, 30) }},
		{id: "gitlab-token", desc: "GitLab deploy, runner, CI/CD job, trigger, SCIM, OAuth application, agent, feed, incoming-mail and feature-flag tokens, runner registration tokens",
			prefixes: []string{"gl" + "agent-", "gl" + "dt-", "gl" + "soat-", "gl" + "cbt-", "gl" + "imt-", "gl" + "oas-", "gl" + "ptt-", "gl" + "rt-", "gl" + "ft-", "gl" + "ffct-", "GR" + "1348941"},
			body:     body{csB64URL, 20, 255}, boundary: true,
			example: func() string { return "gl" + "dt-" + synthetic(csAlnum, 20) }},
		{id: "stripe-key", desc: "Stripe secret or restricted key", prefixes: []string{"sk" + "_live_", "sk" + "_test_", "sk" + "_prod_", "rk" + "_live_", "rk" + "_test_", "rk" + "_prod_"}, body: body{csAlnum, 10, 247}, boundary: true,
			example: func() string { return "sk" + "_live_" + synthetic(csAlnum, 24) }},
		{id: "aws-access-key-id", desc: "AWS access key ID (AKIA, ASIA, ABIA, ACCA)", prefixes: []string{"AK" + "IA", "AS" + "IA", "AB" + "IA", "AC" + "CA"}, body: body{csUpperDigit, 16, 16}, boundary: true,
			example: func() string { return "AK" + "IA" + synthetic(csUpperDigit, 16) }},
		{id: "gcp-api-key", desc: "Google API key", prefixes: []string{"AI" + "za"}, body: body{csB64URL, 35, 35},
			example: func() string { return "AI" + "za" + synthetic(csAlnum, 35) }},
		{id: "openai-api-key", desc: "OpenAI API key (sk-, sk-proj-, sk-svcacct-, sk-admin-)", prefixes: []string{"sk" + "-"}, match: matchSK, boundary: true,
			example: func() string { return "sk" + "-proj-" + synthetic(csAlnum, 48) }},
		{id: "anthropic-api-key", desc: "Anthropic API key (sk-ant-)", match: nil, // found through the sk- prefix of openai-api-key
			example: func() string { return "sk" + "-ant-api03-" + synthetic(csAlnum, 40) }},
		{id: "npm-token", desc: "npm access token", prefixes: []string{"np" + "m_"}, body: body{csAlnum, 36, 255},
			example: func() string { return "np" + "m_" + synthetic(csAlnum, 36) }},
		{id: "pypi-token", desc: "PyPI upload token", prefixes: []string{"pypi" + "-AgEIcHlwaS5vcmc"}, body: body{csB64URL, 50, 1000},
			example: func() string { return "pypi" + "-AgEIcHlwaS5vcmc" + synthetic(csAlnum, 60) }},
		{id: "sendgrid-api-key", desc: "SendGrid API key (SG.<22>.<43>)", prefixes: []string{"SG" + "."}, match: matchSendGrid,
			example: func() string { return "SG" + "." + synthetic(csAlnum, 22) + "." + synthetic(csAlnum, 43) }},
		{id: "twilio-api-key", desc: "Twilio API key (SK + 32 hex)", prefixes: []string{"S" + "K"}, body: body{csHex, 32, 32},
			example: func() string { return "S" + "K" + synthetic(makeCharset("0-9a-f"), 32) }},
		{id: "age-secret-key", desc: "age encryption secret key (AGE-SECRET-KEY-1 and 58 bech32 characters)", prefixes: []string{"AGE" + "-SECRET-KEY-1"}, body: body{csUpperDigit, 58, 58}, boundary: true,
			example: func() string {
				return "AGE" + "-SECRET-KEY-1" + synthetic(makeCharset("ACDEFGHJKLMNPQRSTUVWXYZ023456789"), 58)
			}},
		{id: "docker-hub-pat", desc: "Docker Hub personal or organization access token (dckr_pat_, dckr_oat_)", prefixes: []string{"dckr" + "_pat_", "dckr" + "_oat_"},
			body: body{csB64URL, 24, 64}, boundary: true,
			example: func() string { return "dckr" + "_pat_" + synthetic(csAlnum, 27) }},
		{id: "tavily-api-key", desc: "Tavily API key (tvly-, tvly-dev-, tvly-prod-)", prefixes: []string{"tvly" + "-"}, match: matchTavily, boundary: true,
			example: func() string { return "tvly" + "-dev-" + synthetic(csAlnum, 32) }},
		{id: "crates-io-token", desc: "crates.io API token (cio and 32 letters and digits, all three classes)", prefixes: []string{"c" + "io"}, match: matchCratesIO, boundary: true,
			example: func() string { return "c" + "io" + synthetic(csAlnum, 32) }},
		{id: "okta-api-token", desc: "Okta API token in an SSWS authorization header", prefixes: []string{"SS" + "WS "}, match: matchOkta, boundary: true,
			example: func() string { return "Authorization: SS" + "WS 00" + synthetic(csB64URL, 40) }},
		{id: "azure-sas-signature", desc: "Azure shared access signature: the sig= parameter (base64 of a 32-byte HMAC) of a URL that also carries sv=", prefixes: []string{"si" + "g="}, match: matchSAS,
			example: func() string {
				return "https://acct.blob.core.windows.net/c?sv=2022-11-02&sr=c&sp=r&si" + "g=" + strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(synthetic(csAlnum, 32))), "=", "%3D")
			}},
		{id: "notion-token", desc: "Notion integration token (ntn_, 11 digits, 35 letters and digits)", prefixes: []string{"nt" + "n_"}, match: matchNotion, boundary: true,
			example: func() string { return "nt" + "n_" + synthetic(makeCharset("0-9"), 11) + synthetic(csAlnum, 35) }},
		{id: "groq-api-key", desc: "Groq API key (gsk_ and 52 letters and digits)", prefixes: []string{"gs" + "k_"}, match: matchGroq, boundary: true,
			example: func() string { return "gs" + "k_" + synthetic(csAlnum, 52) }},
		{id: "figma-pat", desc: "Figma personal access token (figd_)", prefixes: []string{"fi" + "gd_"}, body: body{csB64URL, 40, 64}, boundary: true,
			example: func() string { return "fi" + "gd_" + synthetic(csB64URL, 40) }},
		{id: "databricks-token", desc: "Databricks personal access token (dapi and 32 hex)", prefixes: []string{"da" + "pi"}, match: matchDatabricks, boundary: true,
			example: func() string { return "da" + "pi" + synthetic(makeCharset("0-9a-f"), 32) }},
		{id: "linear-api-key", desc: "Linear API key (lin_api_)", prefixes: []string{"li" + "n_api_"}, body: body{csAlnum, 40, 40}, boundary: true,
			example: func() string { return "li" + "n_api_" + synthetic(csAlnum, 40) }},
		{id: "huggingface-token", desc: "Hugging Face access token (hf_ and 34 letters)", prefixes: []string{"h" + "f_"}, match: matchHuggingFace, boundary: true,
			example: func() string { return "h" + "f_" + synthetic(makeCharset("A-Za-z"), 34) }},
		{id: "shopify-token", desc: "Shopify access, custom-app, private-app or shared-secret token (shpat_, shpca_, shppa_, shpss_ and 32 hex)",
			prefixes: []string{"sh" + "pat_", "sh" + "pca_", "sh" + "ppa_", "sh" + "pss_"}, body: body{csHex, 32, 32}, boundary: true,
			example: func() string { return "sh" + "pat_" + synthetic(makeCharset("0-9a-f"), 32) }},
		{id: "postman-api-key", desc: "Postman API key (PMAK-, 24 hex, -, 34 hex)", prefixes: []string{"PM" + "AK-"}, match: matchPostman, boundary: true,
			example: func() string {
				return "PM" + "AK-" + synthetic(makeCharset("0-9a-f"), 24) + "-" + synthetic(makeCharset("0-9a-f"), 34)
			}},
		{id: "pulumi-token", desc: "Pulumi access token (pul- and 40 hex)", prefixes: []string{"pu" + "l-"}, body: body{csHex, 40, 40}, boundary: true,
			example: func() string { return "pu" + "l-" + synthetic(makeCharset("0-9a-f"), 40) }},
		{id: "grafana-service-account-token", desc: "Grafana service account token (glsa_)", prefixes: []string{"gl" + "sa_"}, body: body{csWord, 41, 64}, boundary: true,
			example: func() string {
				return "gl" + "sa_" + synthetic(csAlnum, 32) + "_" + synthetic(makeCharset("0-9a-f"), 8)
			}},
		{id: "digitalocean-token", desc: "DigitalOcean personal, OAuth or refresh token (dop_v1_, doo_v1_, dor_v1_ and 64 hex)",
			prefixes: []string{"do" + "p_v1_", "do" + "o_v1_", "do" + "r_v1_"}, body: body{csHex, 64, 64}, boundary: true,
			example: func() string { return "do" + "p_v1_" + synthetic(makeCharset("0-9a-f"), 64) }},
		{id: "planetscale-token", desc: "PlanetScale service token, password or OAuth token (pscale_tkn_, pscale_pw_, pscale_oauth_)",
			prefixes: []string{"ps" + "cale_tkn_", "ps" + "cale_pw_", "ps" + "cale_oauth_"}, body: body{csPscale, 32, 64}, boundary: true,
			example: func() string { return "ps" + "cale_tkn_" + synthetic(csAlnum, 43) }},
		{id: ruleDiscord, desc: "Discord bot token (base64 of the bot's numeric ID, starting M, N or O; a 6-character timestamp; a 27- or 38-character HMAC, dot-separated)", match: nil, // found by the high-entropy scan, which reads every such run
			example: func() string {
				return "MT" + synthetic(csAlnum, 22) + "." + synthetic(csB64URL, 6) + "." + synthetic(csAlnum, 27)
			}},
		{id: ruleB64JSON, desc: "base64 of a JSON object with a credential field (eyJ…: Grafana, 1Password service account keys)", match: nil, // found through the eyJ prefix of jwt
			example: func() string {
				return "ey" + "JrIjoi" + synthetic(csAlnum, 32) + "IiwibiI6InNlcnZpY2UiLCJpZCI6MX0"
			}},
		{id: ruleJWT, desc: "JSON Web Token (eyJ….eyJ….signature)", prefixes: []string{"ey" + "J"}, match: matchJWT,
			example: func() string {
				return "ey" + "J" + synthetic(csAlnum, 20) + ".ey" + "J" + synthetic(csAlnum, 30) + "." + synthetic(csB64URL, 43)
			}},
	}
}

// allRuleIDs lists every rule that can name a marker.
func allRuleIDs() []string {
	tokenRulesOnce.Do(initTokenRules)
	ids := []string{RuleKnownValue, RuleKnownValueBase64, RuleCustomerID, RuleWithheld, RuleTooManyFindings}
	for _, r := range tokenRules {
		ids = append(ids, r.id)
	}
	// The shape rules that are not token rules, as rulesList adds them
	// (without building the examples).
	return append(ids, rulePrivateKey, ruleURLCredentials, ruleAssignment, ruleEntropy, ruleCard)
}

// synthetic returns a deterministic, random-looking string over cs, for
// examples; it is not secret and never was.
func synthetic(cs *charset, n int) string {
	var alpha []byte
	for b := range 256 {
		if cs[b] {
			alpha = append(alpha, byte(b))
		}
	}
	x := uint64(0x9E3779B97F4A7C15) ^ uint64(n)*0x632BE59BD9B4E019 ^ uint64(len(alpha))
	out := make([]byte, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = alpha[x%uint64(len(alpha))]
	}
	return string(out)
}

func matchSlack(t string, i int, m *memos) (string, int) {
	p := i + 3
	if p+1 >= len(t) || strings.IndexByte("abeoprs", t[p]) < 0 || t[p+1] != '-' {
		return "", -1
	}
	return bodyEnd(t, p+2, body{csSlack, 10, 255}, m.get(0, csSlack), "slack-token")
}

func matchSK(t string, i int, m *memos) (string, int) {
	p := i + 3
	rest := t[p:]
	switch {
	case strings.HasPrefix(rest, "ant-"):
		return bodyEnd(t, p+4, body{csB64URL, 20, 255}, m.get(0, csB64URL), "anthropic-api-key")
	case strings.HasPrefix(rest, "proj-"):
		return bodyEnd(t, p+5, body{csB64URL, 20, 255}, m.get(0, csB64URL), "openai-api-key")
	case strings.HasPrefix(rest, "svcacct-"):
		return bodyEnd(t, p+8, body{csB64URL, 20, 255}, m.get(0, csB64URL), "openai-api-key")
	case strings.HasPrefix(rest, "admin-"):
		return bodyEnd(t, p+6, body{csB64URL, 20, 255}, m.get(0, csB64URL), "openai-api-key")
	}
	return bodyEnd(t, p, body{csAlnum, 32, 255}, m.get(1, csAlnum), "openai-api-key")
}

func matchSendGrid(t string, i int, m *memos) (string, int) {
	p := i + 3
	e1 := m.get(0, csB64URL).runEnd(t, p)
	if e1-p != 22 || e1 >= len(t) || t[e1] != '.' {
		return "", -1
	}
	return bodyEnd(t, e1+1, body{csB64URL, 43, 43}, m.get(1, csB64URL), "sendgrid-api-key")
}

func matchJWT(t string, i int, m *memos) (string, int) {
	e1 := m.get(0, csB64URL).runEnd(t, i)
	if e1-i < 13 || e1+2 >= len(t) || t[e1] != '.' || t[e1+1] != 'e' || t[e1+2] != 'y' {
		if e1-i >= 32 && (e1 == len(t) || t[e1] != '.') && jsonCredential(t[i:e1]) {
			return ruleB64JSON, e1
		}
		return "", -1
	}
	e2 := m.get(1, csB64URL).runEnd(t, e1+1)
	if e2-(e1+1) < 12 || e2 >= len(t) || t[e2] != '.' {
		return "", -1
	}
	return ruleJWT, m.get(2, csB64URL).runEnd(t, e2+1)
}

// matchTavily: tvly-, an optional dev- or prod-, then 24–64 letters and
// digits.
func matchTavily(t string, i int, m *memos) (string, int) {
	p := i + len("tvly-")
	for _, env := range []string{"dev-", "prod-"} {
		if strings.HasPrefix(t[p:], env) {
			p += len(env)
			break
		}
	}
	return bodyEnd(t, p, body{csAlnum, 24, 64}, m.get(0, csAlnum), "tavily-api-key")
}

// exactRun returns the end of a run of cs exactly n long at p that no
// word character follows, or -1.
func exactRun(t string, p, n int, r *runMemo) int {
	if p > len(t) {
		return -1
	}
	e := r.runEnd(t, p)
	if e-p != n || e < len(t) && csWord[t[e]] {
		return -1
	}
	return e
}

// mixedClasses reports upper- and lower-case letters and digits in s: a
// random body has all three, a word or an identifier rarely does.
func mixedClasses(s string) bool {
	var up, low, dig bool
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'A' && b <= 'Z':
			up = true
		case b >= 'a' && b <= 'z':
			low = true
		case b >= '0' && b <= '9':
			dig = true
		}
	}
	return up && low && dig
}

// matchNotion: ntn_, 11 digits, then 35 letters and digits, no more.
func matchNotion(t string, i int, m *memos) (string, int) {
	p := i + len("ntn_")
	e := exactRun(t, p, 46, m.get(0, csAlnum))
	if e < 0 || !onlyIn(t[p:p+11], csDigit) {
		return "", -1
	}
	return "notion-token", e
}

// matchGroq: gsk_ and exactly 52 letters and digits.
func matchGroq(t string, i int, m *memos) (string, int) {
	if e := exactRun(t, i+len("gsk_"), 52, m.get(0, csAlnum)); e >= 0 {
		return "groq-api-key", e
	}
	return "", -1
}

// matchCratesIO: cio and exactly 32 letters and digits of all three
// classes ("cio" starts words: precious, Ciociaria).
func matchCratesIO(t string, i int, m *memos) (string, int) {
	e := exactRun(t, i+3, 32, m.get(0, csAlnum))
	if e < 0 || !mixedClasses(t[i+3:e]) {
		return "", -1
	}
	return "crates-io-token", e
}

// matchOkta: SSWS, a space, and a 40–44 character token of letters, digits,
// - and _ (Okta's are 42, starting 00) with letters and digits in it.
func matchOkta(t string, i int, m *memos) (string, int) {
	p := i + len("SSWS ")
	r := m.get(0, csB64URL)
	if p > len(t) {
		return "", -1
	}
	e := r.runEnd(t, p)
	if n := e - p; n < 40 || n > 44 || !hasLetterAndDigit(t[p:e]) {
		return "", -1
	}
	return "okta-api-token", e
}

func hasLetterAndDigit(s string) bool {
	var l, d bool
	for i := 0; i < len(s); i++ {
		l = l || isLetter(s[i])
		d = d || isDigit(s[i])
	}
	return l && d
}

// matchDatabricks: dapi, 32 hex, an optional -N suffix.
func matchDatabricks(t string, i int, m *memos) (string, int) {
	r := m.get(0, csHex)
	p := i + 4
	if p > len(t) {
		return "", -1
	}
	e := r.runEnd(t, p)
	if e-p != 32 || !hasLetterAndDigit(t[p:e]) {
		return "", -1
	}
	if e+1 < len(t) && t[e] == '-' && isDigit(t[e+1]) {
		e += 2
	}
	if e < len(t) && csWord[t[e]] {
		return "", -1
	}
	return "databricks-token", e
}

// matchHuggingFace: hf_ and exactly 34 letters in both cases.
func matchHuggingFace(t string, i int, m *memos) (string, int) {
	e := exactRun(t, i+3, 34, m.get(0, csAlpha))
	if e < 0 {
		return "", -1
	}
	var up, low bool
	for _, b := range []byte(t[i+3 : e]) {
		up = up || isUpper(b)
		low = low || !isUpper(b)
	}
	if !up || !low {
		return "", -1
	}
	return "huggingface-token", e
}

// matchPostman: PMAK-, 24 hex, -, 34 hex.
func matchPostman(t string, i int, m *memos) (string, int) {
	p := i + len("PMAK-")
	e := m.get(0, csHex).runEnd(t, p)
	if e-p != 24 || e >= len(t) || t[e] != '-' {
		return "", -1
	}
	if e2 := exactRun(t, e+1, 34, m.get(1, csHex)); e2 >= 0 {
		return "postman-api-key", e2
	}
	return "", -1
}

// matchSAS: sig= after ? or & in a URL query that also carries sv= (the
// signed version every Azure SAS has), with a value that is the base64,
// URL-encoded or not, of exactly 32 bytes (an HMAC-SHA256).
func matchSAS(t string, i int, m *memos) (string, int) {
	if i == 0 || t[i-1] != '?' && t[i-1] != '&' {
		return "", -1
	}
	p := i + len("sig=")
	e := p
	for e < len(t) && e-p < 160 && (csB64[t[e]] || t[e] == '%') {
		e++
	}
	v := t[p:e]
	if len(v) < 43 {
		return "", -1
	}
	var b strings.Builder
	for k := 0; k < len(v); k++ {
		if v[k] == '%' && k+2 < len(v) {
			switch strings.ToUpper(v[k+1 : k+3]) {
			case "2B":
				b.WriteByte('+')
			case "2F":
				b.WriteByte('/')
			case "3D":
				b.WriteByte('=')
			default:
				return "", -1
			}
			k += 2
			continue
		}
		b.WriteByte(v[k])
	}
	dec, err := base64.StdEncoding.DecodeString(b.String())
	if err != nil || len(dec) != 32 {
		return "", -1
	}
	// The query it belongs to: the URL around it, on its line.
	lo, hi := max(0, i-512), min(len(t), e+512)
	q := t[lo:hi]
	if k := strings.LastIndexAny(t[lo:i], " \t\n\"'<>`"); k >= 0 {
		q = t[lo+k+1 : hi]
	}
	if k := strings.IndexAny(q, " \t\n\"'<>`"); k >= 0 {
		q = q[:k]
	}
	if !strings.Contains(q, "?sv=") && !strings.Contains(q, "&sv=") {
		return "", -1
	}
	return "azure-sas-signature", e
}

// matchSlackHook matches hooks.slack.com/services/… (or workflows/,
// triggers/) with a path of at least 20 characters.
func matchSlackHook(t string, i int, m *memos) (string, int) {
	p := i + len("hooks.slack.com/")
	for _, kind := range []string{"services/", "workflows/", "triggers/"} {
		if strings.HasPrefix(t[p:], kind) {
			return bodyEnd(t, p+len(kind), body{csSlackHook, 20, 160}, m.get(0, csSlackHook), "slack-webhook-url")
		}
	}
	return "", -1
}

// jsonCredential reports base64 (URL or standard alphabet, unpadded)
// whose first bytes decode to a JSON object naming a credential field:
// "k", or a key holding key, secret, token, password or private. A JWT
// header ("alg") is not one.
func jsonCredential(run string) bool {
	run = run[:min(len(run), 512)/4*4]
	dec, err := base64.RawURLEncoding.DecodeString(run)
	if err != nil {
		return false
	}
	d := strings.ToLower(string(dec))
	if !strings.HasPrefix(d, `{"`) || strings.Contains(d, `"alg"`) {
		return false
	}
	if strings.HasPrefix(d, `{"k":`) || strings.Contains(d, `,"k":`) {
		return true
	}
	for _, w := range []string{"key\":", "secret", "token\":", "password\":", "private"} {
		if strings.Contains(d, w) {
			return true
		}
	}
	return false
}

func bodyEnd(t string, p int, b body, m *runMemo, rule string) (string, int) {
	if p > len(t) {
		return "", -1
	}
	n := m.runEnd(t, p) - p
	if n < b.min {
		return "", -1
	}
	return rule, p + min(n, b.max)
}

// prefixPairs and prefixIndex index the token prefixes by their first two
// bytes, so that one pass over the text finds every candidate: a table load
// per byte instead of a strings.Index pass per prefix, most of which would
// stop on every 's', 'e' or 'g' of ordinary text. The index is two small
// levels (first byte, then second) rather than one 64 KiB table: the hook
// builds it in every process, and writing a table that size touches a
// page per prefix. For the same reason each level is allocated once at its
// final size: grown by append, the rows alone passed through six size
// classes, each a fresh span and two page faults in a process that lives
// for two milliseconds.
var (
	prefixPairs [1 << 16 / 64]uint64 // bit set: some prefix starts with these two bytes
	prefixRow   [256]uint8           // first byte → row of prefixCol, 0 = none
	prefixCol   [][256]uint8         // second byte → index into prefixLists, 0 = none
	prefixLists [][]prefixEntry
)

type prefixEntry struct {
	prefix string
	rule   int // index into tokenRules
}

func indexPrefixes() {
	// First pass: number the rows and the lists (a list per distinct first
	// two bytes, found by a linear search: there are a few dozen) and count
	// each list's entries.
	type pair struct{ a, b byte }
	total := 0
	for _, r := range tokenRules {
		total += len(r.prefixes)
	}
	pairs := make([]pair, 0, total)
	counts := make([]int, total+1)
	listOf := func(p string) int {
		for i, q := range pairs {
			if q == (pair{p[0], p[1]}) {
				return i + 1
			}
		}
		pairs = append(pairs, pair{p[0], p[1]})
		return len(pairs)
	}
	rows := 1
	var seenRow [256]bool
	for _, r := range tokenRules {
		for _, p := range r.prefixes {
			if !seenRow[p[0]] {
				seenRow[p[0]] = true
				rows++
			}
			counts[listOf(p)]++
		}
	}
	// Second pass: fill the levels, every list a window of one array.
	prefixCol = make([][256]uint8, 1, rows)
	prefixLists = make([][]prefixEntry, len(pairs)+1)
	entries := make([]prefixEntry, 0, total)
	for k := 1; k < len(prefixLists); k++ {
		prefixLists[k] = entries[len(entries) : len(entries) : len(entries)+counts[k]]
		entries = entries[:len(entries)+counts[k]]
	}
	for ri, r := range tokenRules {
		for _, p := range r.prefixes {
			h := uint16(p[0])<<8 | uint16(p[1])
			prefixPairs[h/64] |= 1 << (h % 64)
			if prefixRow[p[0]] == 0 {
				prefixRow[p[0]] = uint8(len(prefixCol))
				prefixCol = append(prefixCol, [256]uint8{})
			}
			k := listOf(p)
			prefixCol[prefixRow[p[0]]][p[1]] = uint8(k)
			prefixLists[k] = append(prefixLists[k], prefixEntry{p, ri})
		}
	}
}

func scanTokenRules(t string, c *collector) {
	tokenRulesOnce.Do(initTokenRules)
	var (
		m       = make([]memos, len(tokenRules))
		lastEnd = make([]int, len(tokenRules))
	)
	c.begin()
	for i := 0; i+1 < len(t); i++ {
		h := uint16(t[i])<<8 | uint16(t[i+1])
		if prefixPairs[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		k := prefixCol[prefixRow[t[i]]][t[i+1]]
		for _, pe := range prefixLists[k] {
			// A rule does not look again inside its own match; other rules
			// still do.
			if i < lastEnd[pe.rule] || !strings.HasPrefix(t[i:], pe.prefix) {
				continue
			}
			r := &tokenRules[pe.rule]
			if r.boundary && i > 0 && csWord[t[i-1]] {
				continue
			}
			rule, end := "", -1
			if r.match != nil {
				rule, end = r.match(t, i, &m[pe.rule])
			} else {
				rule, end = bodyEnd(t, i+len(pe.prefix), r.body, m[pe.rule].get(0, r.body.cs), r.id)
			}
			if end < 0 {
				continue
			}
			review := valueReview(t[i:end])
			if !c.addReview(rule, i, end, review) {
				return
			}
			lastEnd[pe.rule] = end
		}
	}
}

// scanShapes runs every shape pass.
func scanShapes(t string, c *collector) {
	scanTokenRules(t, c)
	c.begin()
	scanPEM(t, c)
	c.begin()
	scanURLCredentials(t, c)
	c.begin()
	scanAssignments(t, c)
	c.begin()
	scanComparisons(t, c)
	c.begin()
	scanFlags(t, c)
	c.begin()
	scanLogins(t, c)
	c.begin()
	scanMySQLPasswords(t, c)
	c.begin()
	scanEntropy(t, c)
	c.begin()
	scanCards(t, c)
}

const maxPEMBody = 64 << 10

func scanPEM(t string, c *collector) {
	const begin, end = "-----BEGIN ", "-----END "
	nextEnd := -2 // -2: not searched yet; -1: there is none
	for pos := 0; ; {
		j := strings.Index(t[pos:], begin)
		if j < 0 {
			return
		}
		i := pos + j
		hdrEnd := pemHeader(t, i+len(begin))
		if hdrEnd < 0 {
			pos = i + 1
			continue
		}
		if nextEnd != -1 && nextEnd < hdrEnd {
			if k := strings.Index(t[hdrEnd:], end); k < 0 {
				nextEnd = -1
			} else {
				nextEnd = hdrEnd + k
			}
		}
		stop, body := -1, 0
		if nextEnd >= 0 && nextEnd-hdrEnd <= maxPEMBody {
			body = nextEnd
			e := nextEnd + len(end)
			lim := min(len(t), e+100)
			if k := strings.Index(t[e:lim], "-----"); k >= 0 {
				stop = e + k + 5
			} else {
				stop = lineEnd(t, e, lim)
			}
		}
		if stop < 0 {
			stop = pemBodyEnd(t, hdrEnd)
			body = stop
		}
		if pemPlaceholder(t[hdrEnd:body]) {
			// A header alone (in docs, in code that checks for it),
			// around prose, "..." or base64 of text is not a key.
			pos = hdrEnd
			continue
		}
		if !c.add(rulePrivateKey, i, stop) {
			return
		}
		pos = stop
	}
}

// hasKeyBody reports a run of at least 16 base64 characters: a key body
// line, not words.
func hasKeyBody(b string) bool {
	run := 0
	for i := 0; i < len(b); i++ {
		if csB64[b[i]] {
			if run++; run >= 16 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// pemHeader checks "<label>-----" at p for a private-key label and returns
// the offset after the dashes, or -1.
func pemHeader(t string, p int) int {
	q := p
	for q < len(t) && q-p <= 64 && (csAlnum[t[q]] || t[q] == ' ' || t[q] == '_') {
		q++
	}
	if !strings.HasPrefix(t[q:], "-----") {
		return -1
	}
	if !strings.Contains(strings.ToUpper(t[p:q]), "PRIVATE KEY") {
		return -1
	}
	return q + 5
}

func lineEnd(t string, p, lim int) int {
	if k := strings.IndexByte(t[p:lim], '\n'); k >= 0 {
		return p + k
	}
	return lim
}

// pemBodyEnd is the end of a key body with no END line in reach: the
// following lines of base64 or of PEM headers (Proc-Type: …), where a line
// may also end in a literal \n as in JSON. It stops at the first line that
// holds anything else, keeping base64 that line starts with.
func pemBodyEnd(t string, p int) int {
	lim := min(len(t), p+maxPEMBody)
	end := p
	for q := p; q < lim; {
		for q < lim && (t[q] == ' ' || t[q] == '\t') {
			q++
		}
		s := q
		h := q
		for h < lim && (csAlnum[t[h]] || t[h] == '-') {
			h++
		}
		if h > s && h < lim && t[h] == ':' {
			q = lineEnd(t, h, lim)
			for q > h && (t[q-1] == '\r' || t[q-1] == ' ') {
				q--
			}
		} else {
			for q < lim && csB64[t[q]] {
				q++
			}
		}
		if q > s {
			end = q
		}
		for q < lim && (t[q] == ' ' || t[q] == '\t' || t[q] == '\r') {
			q++
		}
		switch {
		case q >= lim:
			return end
		case t[q] == '\n':
			q++
		case t[q] == '\\' && q+1 < lim && (t[q+1] == 'n' || t[q+1] == 'r'):
			q += 2
		default:
			return end
		}
	}
	return end
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

func scanURLCredentials(t string, c *collector) {
	for pos := 0; ; {
		j := strings.Index(t[pos:], "://")
		if j < 0 {
			return
		}
		i := pos + j
		pos = i + 3
		if i == 0 || !csAlnum[t[i-1]] {
			continue
		}
		a := i + 3
		lim := min(len(t), a+256)
		at := -1
		k := a
		for ; k < lim; k++ {
			b := t[k]
			if b == '/' || b == '?' || b == '#' || isSpace(b) || b == '"' || b == '\'' || b == '`' || b == '<' || b == '>' || b == '\\' {
				break
			}
			if b == '@' {
				at = k
			}
		}
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(t[a:at], ':')
		if colon < 0 {
			continue
		}
		ps := a + colon + 1
		if strings.EqualFold(t[ps:at], "x-oauth-basic") {
			// GitHub's convention: the token is the user name and the
			// password says so (https://TOKEN:x-oauth-basic@github.com).
			if u := t[a : ps-1]; len(u) >= 20 && !placeholder(u) {
				if !c.addReview(ruleURLCredentials, a, ps-1, secretValueReview(u)) {
					return
				}
			}
			pos = at
			continue
		}
		if ps >= at || placeholder(t[ps:at]) || maskedPassword(t[ps:at]) || strings.EqualFold(t[a:ps-1], t[ps:at]) {
			// user:user@ is an image's documented default
			// (postgres:postgres@, guest:guest@): public, not a secret.
			continue
		}
		if !c.addReview(ruleURLCredentials, ps, at, secretValueReview(t[ps:at])) {
			return
		}
		pos = at
	}
}

// maskedPassword is a documentation password in a URL: the word itself.
func maskedPassword(p string) bool { return foldIn(passwordWords, p) }

var passwordWords = wordSet("pass", "pwd", "passwd", "password", "secret", "pw")
