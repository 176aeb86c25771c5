package redact

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// Precision and tier cases, one table per class of issue 17. Every
// token-shaped value is generated at run time from a fixed seed or
// assembled from parts ("sk"+"_live_"), so this file spells no token a
// secret scanner would report; the documented example values are the
// vendors' published ones, which scanners allowlist too.

// want is a case's expected outcome.
type want int

const (
	none   want = iota // no finding at all
	review             // findings, none blocking, one of them by rule
	block              // a blocking finding by rule
)

type precisionCase struct {
	name string
	in   string
	want want
	rule string // for review and block; "" accepts any rule
}

func checkPrecision(t *testing.T, cases []precisionCase) {
	t.Helper()
	e := mustNew(t, Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := e.Detect(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			byRule := tc.rule == "" || slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == tc.rule })
			blocks := slices.ContainsFunc(fs, func(f Finding) bool { return f.Blocking() && (tc.rule == "" || f.Rule == tc.rule) })
			anyBlocks := slices.ContainsFunc(fs, Finding.Blocking)
			switch tc.want {
			case none:
				if len(fs) > 0 {
					t.Errorf("Detect(%q) = %v, want no finding", tc.in, fs)
				}
			case review:
				if len(fs) == 0 || !byRule || anyBlocks {
					t.Errorf("Detect(%q) = %v, want review findings only, by %s", tc.in, fs, tc.rule)
				}
				// Review findings are redacted like any other.
				out, _, err := e.Redact(tc.in)
				if err != nil {
					t.Fatal(err)
				}
				if out == tc.in {
					t.Errorf("Redact left a review finding in place: %q", out)
				}
			case block:
				if !blocks {
					t.Errorf("Detect(%q) = %v, want a blocking %s finding", tc.in, fs, tc.rule)
				}
			}
		})
	}
}

func pem(label, body string) string {
	return "-----" + "BEGIN " + label + "-----" + body + "-----" + "END " + label + "-----"
}

// TestPlaceholders: issue 17 class 1, placeholders and documentation
// examples.
func TestPlaceholders(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	alphaRun := base64.StdEncoding.EncodeToString([]byte("abcdefghijklmnopqrstuvwxyz"))
	checkPrecision(t, []precisionCase{
		{"stand-in words", `db_password = "myfakepassword"`, none, ""},
		{"not a real one", "API_TOKEN=not_a_real_one", none, ""},
		{"replace with", `client_secret: "ReplaceWithYourSecret"`, none, ""},
		{"a credential's name as its value", `password: "real_token"`, none, ""},
		{"punctuation only", `password = ';:,.-!?'`, none, ""},
		{"PEM body of dots in JSON", `{"private_key": "` + pem("PRIVATE KEY", `\n...\n`) + `\n"}`, none, ""},
		{"PEM body of base64 text", pem("RSA PRIVATE KEY", "\n"+alphaRun+"\n"), none, ""},
		{"URL password of stand-in words", "https://admin:mysecretpassword@db.internal/app", none, ""},
		{"alphabet run with no name", "see tok_kKlLmMnNoOpPqQrRsStTuUvV9d8e7f for details", none, ""},
		// Fills behind a provider prefix or under a credential name:
		// redacted, not blocking.
		{"Stripe key of one character", "sk" + "_live_" + strings.Repeat("Q", 24), review, "stripe-key"},
		{"GitHub token of x", "gh" + "p_" + strings.Repeat("x", 36), review, "github-pat"},
		{"alphabet run inside a key", "sk" + "-" + randomString(r, alnumAlphabet, 20) + "abcdefgh" + randomString(r, alnumAlphabet, 20), review, "openai-api-key"},
		{"repeated unit under a credential name", `api_key = "9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c"`, review, ruleAssignment},
		{"repeated digits in a URL", "https://svc:2222@queue.internal/", review, ruleURLCredentials},
		{"AWS's documented example key", "key id " + "AK" + "IAIOSFODNN7" + "EXAMPLE", review, "aws-access-key-id"},
		// Controls: the same shapes with random values block.
		{"control: Stripe key", "sk" + "_live_" + randomString(r, alnumAlphabet, 24), block, "stripe-key"},
		{"control: passphrase under password", `db_password = "correct-horse-battery"`, block, ruleAssignment},
		{"concatenation with another quote", "{\"private_key\": \"` + pem(label) + `\"}", none, ""},
		{"control: PEM with a key body", pem("PRIVATE KEY", "\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"+randomString(r, alnumAlphabet+"+/", 40)+"\n"), block, rulePrivateKey},
	})
}

// TestCodeAsLiteral: class 2, code and addresses read as a literal.
func TestCodeAsLiteral(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2))
	checkPrecision(t, []precisionCase{
		{"quotes paired across a concatenation", `hint = "Password: " + strength(pw) + " (weak)"`, none, ""},
		{"CSS id selector", `password_input: "#reset-password"`, none, ""},
		{"CSS class selector", `secret_toggle = ".show-secret-value"`, none, ""},
		{"ARN", `db_secret = "arn:aws:secretsmanager:eu-west-1:210987654321:secret:app/db-Xy12Ab"`, none, ""},
		{"shell variable in inner quotes", `PASSWORD="'$APP_DB_PASSWORD'"`, none, ""},
		{"Make variables in userinfo", "DSN = mysql://$(DB_USER):$(DB_PASS)@$(DB_HOST)/shop", none, ""},
		{"URL without userinfo under an auth key", "OAUTH_ISSUER=https://id.example.org/realms/staff", none, ""},
		{"connection URL under an auth key", "AUTH_DB=postgres://db.internal:5432/auth", none, ""},
		{"path under PWD", "PWD=/usr/src/app/current", none, ""},
		{"default credentials: user equals password", "postgres://postgres:postgres@localhost:5432/app", none, ""},
		{"default credentials: guest", "amqp://guest:guest@rabbitmq:5672/", none, ""},
		{"control: a random password in a URL", "postgres://app:" + randomString(r, alnumAlphabet, 14) + "@db/x", block, ruleURLCredentials},
		{"a Markdown code span after pass:", "- clean — pass: `no known advisory affects v1.0.2`", none, ""},
		{"a shell command substitution", "PASSWORD=`openssl rand -hex 32`", none, ""},
		{"control: one backquoted word", "token = `" + randomString(r, alnumAlphabet, 20) + "`", block, ruleAssignment},
		{"control: a double-quoted passphrase of words", `DB_PASS="correct horse battery staple"`, block, ruleAssignment},
	})
}

// TestHashesKeysPaths: class 3.
func TestHashesKeysPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 3))
	checkPrecision(t, []precisionCase{
		{"pnpm packageManager integrity", `"packageManager": "pnpm@9.12.0+sha512.` + randomString(r, hexAlphabet, 127) + `"`, none, ""},
		{"public key in hex", `SIGNING_PUBLIC_KEY="02` + randomString(r, hexAlphabet, 64) + `"`, none, ""},
		{"public key in base64", `"pubkey": "` + randomString(r, alnumAlphabet+"+/", 43) + `="`, none, ""},
		{"object-store path", "gsutil cp gs://ml-artifacts/runs/" + randomString(r, alnumAlphabet, 32) + "/model.bin .", none, ""},
		{"S3 path", "s3://exports/" + randomString(r, alnumAlphabet, 40) + "/part-0001", none, ""},
		{"control: the same hex with no context", "value " + randomString(r, hexAlphabet, 64) + " here", review, ruleEntropy},
	})
}

// TestLeftBoundaries: class 4.
func TestLeftBoundaries(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	body := randomString(r, alnumAlphabet, 40)
	noRule := func(name, in, rule string) precisionCase { return precisionCase{name, in, none, rule} }
	cases := []precisionCase{
		noRule("sk- glued to a letter", "s"+"sk"+"-ant-api03-"+body, "anthropic-api-key"),
		noRule("sk_live_ glued to a letter", "x"+"sk"+"_live_"+body[:24], "stripe-key"),
		noRule("rk_test_ glued to a word", "foo"+"rk"+"_test_"+body[:24], "stripe-key"),
		noRule("AKIA glued to a letter", "Z"+"AK"+"IA"+strings.ToUpper(randomString(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)), "aws-access-key-id"),
	}
	e := mustNew(t, Options{})
	for _, tc := range cases {
		fs, err := e.Detect(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == tc.rule || f.Blocking() }) {
			t.Errorf("%s: Detect(%q) = %v, want no %s finding and nothing blocking", tc.name, tc.in, fs, tc.rule)
		}
	}
	checkPrecision(t, []precisionCase{
		{"control: sk-ant- after a quote", `"` + "sk" + "-ant-api03-" + body + `"`, block, "anthropic-api-key"},
		{"control: AKIA after =", "id=" + "AK" + "IA" + "Q7" + strings.ToUpper(randomString(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 14)), block, "aws-access-key-id"},
	})
}

// TestTemplateMarkers: class 5, a template marker judged by whole shape.
func TestTemplateMarkers(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 5))
	rs := func(n int) string { return randomString(r, alnumAlphabet, n) }
	checkPrecision(t, []precisionCase{
		{"%( inside a random value", `api_key = "` + rs(8) + "%(" + rs(10) + `"`, block, ruleAssignment},
		{"${ inside a random value", `secret: "` + rs(6) + "${" + rs(10) + `"`, block, ruleAssignment},
		{"{{ inside a random value", `token = "` + rs(7) + "{{" + rs(3) + "}" + rs(6) + `"`, block, ruleAssignment},
		{"%s glued inside a random value", `password = "` + rs(6) + "%s" + rs(6) + `"`, block, ruleAssignment},
		{"a whole ${…} template", `auth_header = "Bearer ${API_TOKEN}"`, none, ""},
		{"a shell default", `password = "${DB_PASSWORD:-devpass}"`, none, ""},
		{"a Helm template", `password: "{{ .Values.db.password }}"`, none, ""},
		{"a printf verb", `secret = "token %s"`, none, ""},
		{"a named printf verb", `password = "%(db_password)s"`, none, ""},
		{"a shell variable", `token = "Bearer $GITHUB_TOKEN"`, none, ""},
	})
}

// TestRecallGaps: class 6.
func TestRecallGaps(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 6))
	rs := func(cs string, n int) string { return randomString(r, cs, n) }
	const upperDigit = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	jsonKey := base64.RawURLEncoding.EncodeToString([]byte(`{"k":"` + rs(alnumAlphabet, 24) + `","n":"deploy","id":7}`))
	cases := []precisionCase{
		{"license_key", `license_key = "` + rs(upperDigit, 4) + "-" + rs(upperDigit, 4) + "-" + rs(upperDigit, 4) + "-" + rs(upperDigit, 4) + `"`, review, ruleAssignment},
		{"PresharedKey", "PresharedKey = " + rs(alnumAlphabet+"+/", 43) + "=", review, ""},
		{"Key=", "Key=" + rs(alnumAlphabet, 12) + "9", review, ruleAssignment},
		{"sort_key is no credential", `sort_key = "created_at_2024"`, none, ""},
		{"cache key is no credential", `cache_key: "user1234profile"`, none, ""},
		{"ODBC Pwd=", "Driver={ODBC Driver 18};Server=db;Uid=app;Pwd=" + rs(alnumAlphabet, 14) + ";", block, ruleAssignment},
		{"DB_PASS", "DB_PASS=" + rs(alnumAlphabet, 16), block, ruleAssignment},
		{"bypass is no credential", `bypass = "maintenance-window"`, none, ""},
		{"GPG_PASSPHRASE", "GPG_PASSPHRASE=" + rs(alnumAlphabet, 16), block, ruleAssignment},
		{"ssh_passphrase", `ssh_passphrase: "` + rs(alnumAlphabet, 14) + `"`, block, ruleAssignment},
		{"Slack webhook", "https://hooks" + ".slack.com/services/T" + rs(upperDigit, 8) + "/B" + rs(upperDigit, 10) + "/" + rs(alnumAlphabet, 24), block, "slack-webhook-url"},
		{"Slack xoxo-", "xo" + "xo-" + rs("0123456789", 12) + "-" + rs(alnumAlphabet, 24), block, "slack-token"},
		{".npmrc _authToken", "//registry.npmjs.org/:_authToken=" + rs(hexAlphabet, 8) + "-" + rs(hexAlphabet, 4) + "-4" + rs(hexAlphabet, 3) + "-9" + rs(hexAlphabet, 3) + "-" + rs(hexAlphabet, 12), block, ruleAssignment},
		{"hex behind dapi", "the job printed dapi" + rs(hexAlphabet, 32) + " to its log", block, "databricks-token"},
		{"hex behind 0x", "wallet 0x" + rs(hexAlphabet, 64) + "!", review, ruleEntropy},
		{"age secret key", "AGE" + "-SECRET-KEY-1" + rs("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), block, "age-secret-key"},
		{"base64 of a JSON key", "GRAFANA=glc_" + jsonKey, block, ruleB64JSON},
		{"a JWT header alone is no key", "header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 only", review, ruleEntropy},
	}
	for _, p := range []string{"agent-", "dt-", "soat-", "cbt-", "imt-", "oas-", "ptt-", "rt-", "ft-", "ffct-"} {
		cases = append(cases, precisionCase{"GitLab gl" + p, "gl" + p + rs(alnumAlphabet+"_-", 24), block, "gitlab-token"})
	}
	cases = append(cases, precisionCase{"GitLab runner registration", "GR" + "1348941" + rs(alnumAlphabet, 20), block, "gitlab-token"})
	checkPrecision(t, cases)
}

// TestTiers: class 7, which findings block.
func TestTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 7))
	e := mustNew(t, Options{Known: []string{"tier-known-value"}})
	tests := []struct {
		in     string
		rule   string
		review string // "" blocks
	}{
		{"known tier-known-value here", RuleKnownValue, ""},
		{"token " + "gh" + "p_" + randomString(r, alnumAlphabet, 36), "github-pat", ""},
		{"value " + randomString(r, alnumAlphabet, 40) + " seen", ruleEntropy, ReviewNoName},
		{"pan " + luhnNumber(r, "4", 16), ruleCard, ""},
		{`license_key = "` + randomString(r, alnumAlphabet, 10) + `7"`, ruleAssignment, ReviewAmbiguousName},
		{"key " + "AK" + "IAIOSFODNN7" + "EXAMPLE", "aws-access-key-id", ReviewExample},
		{"sk" + "_test_" + strings.Repeat("Zz", 12), "stripe-key", ReviewPlaceholder},
	}
	for _, tc := range tests {
		fs, err := e.Detect(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == tc.rule && f.Review == tc.review }) {
			t.Errorf("Detect(%q) = %+v, want %s with review %q", tc.in, fs, tc.rule, tc.review)
		}
	}
	// A span that holds a blocking finding blocks when merged with a
	// review one.
	in := "API_SECRET=" + randomString(r, alnumAlphabet, 40)
	fs, err := e.Detect(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || !fs[0].Blocking() {
		t.Errorf("Detect(%q) = %+v, want one blocking finding", in, fs)
	}
	merged := mergeFindings([]Finding{{ruleEntropy, 0, 10, ReviewNoName}, {ruleAssignment, 2, 8, ""}})
	if len(merged) != 1 || !merged[0].Blocking() || merged[0].Rule != ruleAssignment {
		t.Errorf("mergeFindings = %+v, want one blocking credential-assignment", merged)
	}
	// …also when the review finding names the span.
	merged = mergeFindings([]Finding{{"stripe-key", 0, 10, ReviewPlaceholder}, {ruleAssignment, 2, 8, ""}})
	if len(merged) != 1 || !merged[0].Blocking() || merged[0].Rule != "stripe-key" {
		t.Errorf("mergeFindings = %+v, want one blocking stripe-key", merged)
	}
	merged = mergeFindings([]Finding{{ruleEntropy, 0, 10, ReviewNoName}, {"stripe-key", 2, 8, ReviewPlaceholder}})
	if len(merged) != 1 || merged[0].Review != ReviewPlaceholder {
		t.Errorf("mergeFindings = %+v, want the stripe-key's reason", merged)
	}
}

func TestShapeHelpers(t *testing.T) {
	tests := []struct {
		fn   func(string) bool
		name string
		in   string
		want bool
	}{
		{fillShape, "fillShape", "AAAAAAAAAAAA", true},
		{fillShape, "fillShape", "abcd1234abcd1234abcd1234", true},
		{fillShape, "fillShape", "111111aaaaaaaaaaaaaaaaa", true},
		{fillShape, "fillShape", "x9Kq2LmZ0vTn5KpW3sYd", false},
		{alphabetRun, "alphabetRun", "q9ABCDEFGHz", true},
		{alphabetRun, "alphabetRun", "zz-hgfedcba-zz", true},
		{alphabetRun, "alphabetRun", "aAbBcCdDeEfF", true},
		{alphabetRun, "alphabetRun", "x9Kq2LmZ0vTn5KpW3sYd", false},
		{standIn, "standIn", "not_a_real_secret", true},
		{standIn, "standIn", "correct-horse-battery", false},
		{standIn, "standIn", "fake9Kq2LmZ0vTn5KpW3s", false}, // digits: not words
		{noAlnum, "noAlnum", "¿?!-,.", true},
		{noAlnum, "noAlnum", "¿?!é", false},
		{interpolates, "interpolates", "a${b}c", true},
		{interpolates, "interpolates", "x${e]y(z}", false},
		{interpolates, "interpolates", "{{ x }}", true},
		{interpolates, "interpolates", "a{{b}c}}", false},
		{interpolates, "interpolates", "q%sq", false},
		{interpolates, "interpolates", "q %s", true},
	}
	for _, tc := range tests {
		if got := tc.fn(tc.in); got != tc.want {
			t.Errorf("%s(%q) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestStructuredTokens: issue 31, provider tokens with fixed prefixes or a
// checked structure block (they reached only the review tier or nothing);
// their near misses do not.
func TestStructuredTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	rs := func(cs string, n int) string { return randomString(r, cs, n) }
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b64url := alnumAlphabet + "-_"
	sig := func(n int) string {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(r.IntN(256))
		}
		return url.QueryEscape(base64.StdEncoding.EncodeToString(raw))
	}
	sasURL := "https://acct.blob.core.windows.net/c/f.bak?sv=2022-11-02&sr=b&sp=r&se=2030-01-01T00:00:00Z&"
	checkPrecision(t, []precisionCase{
		{"Docker Hub PAT", "DOCKER_PAT=dckr" + "_pat_" + rs(b64url, 27), block, "docker-hub-pat"},
		{"Docker Hub PAT after login -p", "docker login -u bot -p dckr" + "_pat_" + rs(b64url, 27), block, "docker-hub-pat"},
		{"any password after docker login -p", "docker login -u bot -p " + rs(alnumAlphabet, 20) + " registry.example", block, ruleAssignment},
		{"podman login -p", "podman login quay.io -u bot -p " + rs(alnumAlphabet, 20), block, ruleAssignment},
		{"login -p from a variable", `docker login -u bot -p "$DOCKER_PASSWORD"`, none, ""},
		{"ssh -p is a port", "ssh -p 2222 deploy@host", none, ""},
		{"Docker PAT placeholder", "dckr" + "_pat_Example1234567890AbCdEfGhjK", review, "docker-hub-pat"},
		{"Tavily", "TAVILY_API_KEY=tvly" + "-" + rs(alnumAlphabet, 32), block, "tavily-api-key"},
		{"Tavily dev", "tvly" + "-dev-" + rs(alnumAlphabet, 32), block, "tavily-api-key"},
		{"crates.io", `token = "c` + `io` + rs(alnumAlphabet, 32) + `"`, block, "crates-io-token"},
		{"cio then lower-case letters", "c" + "io" + rs("abcdefghijklmnopqrstuvwxyz", 32), none, ""},
		{"cio inside a word", "preci" + "o" + rs(alnumAlphabet, 32), review, ruleEntropy},
		{"Okta SSWS", `-H "Authorization: SS` + `WS 00` + rs(b64url, 40) + `"`, block, "okta-api-token"},
		{"Okta SSWS template", `-H "Authorization: SSWS ${OKTA_TOKEN}"`, none, ""},
		{"Azure SAS sig", sasURL + "si" + "g=" + sig(32), block, "azure-sas-signature"},
		{"Azure SAS sig first", "https://a.queue.core.windows.net/q?si" + "g=" + sig(32) + "&sv=2021-08-06", block, "azure-sas-signature"},
		{"sig of 31 bytes", sasURL + "si" + "g=" + sig(31), review, ruleEntropy},
		{"sig without sv", "https://example.com/f?si" + "g=" + sig(32), review, ruleEntropy},
		{"Notion", "NOTION_TOKEN=nt" + "n_" + rs("0123456789", 11) + rs(alnumAlphabet, 35), block, "notion-token"},
		{"Groq", "gs" + "k_" + rs(alnumAlphabet, 52), block, "groq-api-key"},
		{"Groq, too long", "gs" + "k_" + rs(alnumAlphabet, 56), review, ruleEntropy},
		{"Notion, ten digits", "nt" + "n_" + rs("0123456789", 10) + rs(alnumAlphabet, 36), review, ruleEntropy},
		{"Figma", "fi" + "gd_" + rs(b64url, 40), block, "figma-pat"},
		{"Linear", "li" + "n_api_" + rs(alnumAlphabet, 40), block, "linear-api-key"},
		{"Hugging Face", "h" + "f_" + rs(letters, 34), block, "huggingface-token"},
		{"hf_ identifier", "hf_tokenizer_config_path_for_the_model", none, ""},
		{"Shopify", "sh" + "pat_" + rs(hexAlphabet, 32), block, "shopify-token"},
		{"Postman", "PM" + "AK-" + rs(hexAlphabet, 24) + "-" + rs(hexAlphabet, 34), block, "postman-api-key"},
		{"Pulumi", "pu" + "l-" + rs(hexAlphabet, 40), block, "pulumi-token"},
		{"Grafana service account", "gl" + "sa_" + rs(alnumAlphabet, 32) + "_" + rs(hexAlphabet, 8), block, "grafana-service-account-token"},
		{"DigitalOcean", "do" + "p_v1_" + rs(hexAlphabet, 64), block, "digitalocean-token"},
		{"PlanetScale", "ps" + "cale_pw_" + rs(b64url, 43), block, "planetscale-token"},
		{"Azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + base64.StdEncoding.EncodeToString([]byte(rs(alnumAlphabet, 64))) + ";EndpointSuffix=core.windows.net", block, ruleAssignment},
		{"AccountKey of another length", "AccountKey=" + base64.StdEncoding.EncodeToString([]byte(rs(alnumAlphabet, 48))), review, ruleAssignment},
		{"Discord bot token", "client.run('" + "MT" + rs(alnumAlphabet, 24) + "." + rs(b64url, 6) + "." + rs(alnumAlphabet, 27) + "')", block, ruleDiscord},
		{"Discord bot token, 38-character HMAC", `bot.run("` + "OD" + rs(alnumAlphabet, 22) + "." + rs(b64url, 6) + "." + rs(alnumAlphabet, 38) + `")`, block, ruleDiscord},
		{"Discord shape, ID not starting M, N or O", "AT" + rs(alnumAlphabet, 24) + "." + rs(b64url, 6) + "." + rs(alnumAlphabet, 27), review, ruleEntropy},
		{"Discord shape, four parts", "MT" + rs(alnumAlphabet, 24) + "." + rs(b64url, 6) + "." + rs(alnumAlphabet, 27) + "." + rs(alnumAlphabet, 8), review, ruleEntropy},
		{"token as the user of x-oauth-basic", "git+https://" + rs(hexAlphabet, 40) + ":x-oauth-basic@github.com/o/r.git", block, ruleURLCredentials},
	})
}

// TestAssignmentValues: issue 31, credential-assignment blocks on a value
// someone chose or generated, not on a field name, label, placeholder,
// mask, sentence or number that sits under a credential name.
func TestAssignmentValues(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 8))
	rs := func(cs string, n int) string { return randomString(r, cs, n) }
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	checkPrecision(t, []precisionCase{
		// field names, labels, routes, masks
		{"PHP form field", `$pwd = $_POST["password"];`, none, ""},
		{"label", `passwordLabel: "Password:"`, none, ""},
		{"label under a dotted key", `labels.password = "Password:"`, none, ""},
		{"mask", "password=######", none, ""},
		{"route name", `password: edit_password`, none, ""},
		{"enum value repeating the key", "two-factor auth: auth-and-writes", review, ruleAssignment},
		{"a word", `token: "creating"`, review, ruleAssignment},
		{"two words", `token.XOR: "bitwise complement"`, none, ""},
		{"two words under a token name", `"token": "quoted string"`, review, ruleAssignment},
		{"a sentence", `invalidTokenPanic = "invalid jsontext.Token; it has been voided by a subsequent json.Decoder call"`, review, ruleAssignment},
		{"a sentence with hex", `AuthRange: "Custom auth must be a value between 0x80 and 0xFE."`, review, ruleAssignment},
		{"test output", "--- PASS: very/nested/s/u/b/t/e/s/t", review, ruleAssignment},
		{"escaped prose", `'pass': 'The "pass" statement\n'`, review, ruleAssignment},
		{"OID", "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'", review, ruleAssignment},
		{"leet documentation password", `PASSWORD="P@ssw0rd!"`, review, ruleAssignment},
		{"documentation password in a URL", "https://user:secret123@api.example.com/x", review, ruleURLCredentials},
		{"foreign documentation password", `passwd='geheim$parole'`, review, ruleAssignment},
		{"numbered upper-case stand-in", "//host/:_authToken=MYTOKEN1", review, ruleAssignment},
		{"base64 of a stand-in", "password: '" + base64.StdEncoding.EncodeToString([]byte("not my real password")) + "'", review, ruleAssignment},
		{"regex literal", "const UNEXPECTED_TOKEN = /^Unexpected token '?(.)'?(,)? /i", none, ""},
		{"array of references", "const supportedAuthMethods = [constants_1.Socks5Auth.NoAuth];", none, ""},
		{"constant named for itself", "exports.SOCKS5_CUSTOM_AUTH_START = SOCKS5_CUSTOM_AUTH_START;", none, ""},
		{"AWS name, ciphertext value", "AWS_SECRET_ACCESS_KEY = " + rs(alnumAlphabet+"+/", 54) + "==", review, ruleAssignment},
		// what still blocks
		{"generated password", `password = "` + rs(alnumAlphabet+"!#%", 16) + `"`, block, ruleAssignment},
		{"weak real password", `password = "hunter2hunter"`, block, ruleAssignment},
		{"dashed passphrase", `password: "correct-horse"`, block, ruleAssignment},
		{"spaced passphrase", `DB_PASS="correct horse battery staple"`, block, ruleAssignment},
		{"random letters", `secret: "` + rs(letters, 6) + "Q" + rs(letters, 6) + "Zk" + `"`, block, ruleAssignment},
		{"symbols and template openers", `api_key = 'm{{h}o)p${e]nob(ody[finds>-_$#thisone}}'`, block, ruleAssignment},
		{"AWS secret of its format", "AWS_SECRET_ACCESS_KEY = " + rs(alnumAlphabet+"+/", 40), block, ruleAssignment},
		{"base64 of a real basic credential", "auth: '" + base64.StdEncoding.EncodeToString([]byte("deploy:"+rs(alnumAlphabet, 14))) + "'", block, ruleAssignment},
		{"URL password", "postgres://app:" + rs(alnumAlphabet, 16) + "@db/x", block, ruleURLCredentials},
	})
}

// TestComparisons: a credential-named variable compared with a literal
// holds the credential in the literal, on either side of ==, !=, ===, !==;
// a word, a mode, a template or another variable is not one.
func TestComparisons(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 11))
	rs := func(cs string, n int) string { return randomString(r, cs, n) }
	checkPrecision(t, []precisionCase{
		{"name == literal", `if (api_key == "` + rs(alnumAlphabet, 20) + `") {`, block, ruleAssignment},
		{"literal !== name", `if ("` + rs(alnumAlphabet+"$#", 20) + `" !== db_pass) {`, block, ruleAssignment},
		{"field === literal", `if (req.body.password === '` + rs(alnumAlphabet, 16) + `')`, block, ruleAssignment},
		{"Go !=", `if secret != "` + rs(alnumAlphabet, 24) + `" {`, block, ruleAssignment},
		{"compared with a variable", `if (password == expectedPassword) {`, none, ""},
		{"compared with a word", `if token_type == "refresh_token":`, none, ""},
		{"compared with a mode", `request.credentials === 'same-origin'`, review, ruleAssignment},
		{"compared with a label", `if (password === "Password:") {`, none, ""},
		{"compared with a template", "req.headers['proxy-authorization'] === `Basic ${Buffer.from('user:pass').toString('base64')}`", none, ""},
		{"compared with a mask", `if password == "********":`, none, ""},
		{"compared with empty", `if password == "":`, none, ""},
		{"ambiguous name", `if key == "` + rs(alnumAlphabet, 20) + `":`, review, ruleEntropy},
		{"not a credential name", `if (username == "` + rs(alnumAlphabet, 20) + `")`, review, ruleEntropy},
		{"assignment after a comparison", `ok := a == b; password = "` + rs(alnumAlphabet, 16) + `"`, block, ruleAssignment},
	})
}

// TestEscapedQuotes: a value in quotes escaped one level down — the text of
// a JSON string, as a hook receipt or a run report holds a command, or a
// shell's nested quoting — is read as the quoted value it is. Before, the
// backslash ended the value and the credential stayed in the receipt.
func TestEscapedQuotes(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 12))
	v := randomString(r, alnumAlphabet, 12) + "#7"
	checkPrecision(t, []precisionCase{
		{"JSON string of a command", `{"command":"export DB_PASSWORD=\"` + v + `\" && make test"}`, block, ruleAssignment},
		{"shell nested quoting", `bash -c "export API_TOKEN=\"` + v + `\" && ./deploy"`, block, ruleAssignment},
		{"single quotes escaped", `sh -c 'PASSWORD=\'` + v + `\' ./run'`, block, ruleAssignment},
		{"nested quoting inside a JSON string", `{"command":"bash -c \"export API_TOKEN=\\\"` + v + `\\\" && ./deploy\""}`, block, ruleAssignment},
		{"a flag in a JSON string", `{"command":"mysql --password \"` + v + `\" -e 'select 1'"}`, block, ""},
		{"a reference stays code", `{"command":"export DB_PASSWORD=\"$DB_PASSWORD\""}`, none, ""},
		{"an empty value", `{"command":"export DB_PASSWORD=\"\" && make"}`, none, ""},
		{"a placeholder stays a placeholder", `{"command":"export DB_PASSWORD=\"changeme\""}`, none, ""},
	})
	// Redacting the JSON text keeps it JSON and removes the value.
	e := mustNew(t, Options{})
	in := `{"command":"export DB_PASSWORD=\"` + v + `\" && make test"}`
	out, _, err := e.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, v) || !json.Valid([]byte(out)) {
		t.Errorf("Redact(%s) = %s; want valid JSON without the value", in, out)
	}
}

// TestMySQLPasswords: a MySQL client's -p takes the password attached
// (-pVALUE); -p alone prompts, -P is the port, and -pVALUE means other
// things to other tools, so only a client's line counts.
func TestMySQLPasswords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	v := randomString(r, alnumAlphabet, 12) + "%2"
	checkPrecision(t, []precisionCase{
		{"mysql -pVALUE", "mysql -u root -p" + v + " -e 'select 1'", block, ruleAssignment},
		{"mysqldump, quoted", "mysqldump -h db -u app -p'" + v + "' app > dump.sql", block, ruleAssignment},
		{"a path to the client", "/usr/bin/mysqladmin -uroot -p" + v + " status", block, ruleAssignment},
		{"in a JSON string", `{"command":"mariadb -u app -p` + v + ` shop"}`, block, ruleAssignment},
		{"-p alone prompts", "mysql -u root -p -e 'select 1'", none, ""},
		{"-P is the port", "mysql -h db -P 3306 -u root", none, ""},
		{"a reference", `mysql -u root -p"$MYSQL_PWD" shop`, none, ""},
		{"another tool's -p", "ssh -p2222 deploy@host; rsync -pr src/ dst/", none, ""},
		{"mkdir -p", "mkdir -p" + v + "/logs", none, ""},
		{"a word containing mysql", "mysqlish -p" + v, none, ""},
	})
}
