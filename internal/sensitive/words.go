package sensitive

import (
	"strings"
	"unicode"
)

// matchMode says how a deny word is compared with a word token.
type matchMode int

const (
	contains matchMode = iota // the token contains the stem
	prefix                    // the token starts with the stem
	exact                     // the token is the stem or the stem plus "s"
)

type denyWord struct {
	stem string
	mode matchMode
}

// denyWords is the built-in word list, in match order: a more specific stem
// comes before one it contains, so "oauth2" reports word:oauth, not
// word:auth. It is a superset of the floor every agent hook ships (auth,
// credentials, oauth, oidc, sso, jwt, saml, secrets, security, encryption,
// signing, permissions, authorization) plus migrations, rls, crypto and the
// key-material names.
var denyWords = []denyWord{
	// Identity and access.
	{"oauth", contains},
	{"auth", contains}, // authn, authz, authorization, authentication, oauth, webauthn
	{"oidc", contains},
	{"saml", contains},
	{"jwt", contains},
	{"sso", exact},
	{"mfa", exact},
	{"totp", exact},
	{"otp", exact},
	{"2fa", exact},
	{"permission", contains},
	{"privileg", contains}, // privilege, privileged, unprivileged
	{"rbac", exact},
	{"abac", exact},
	{"acl", exact},
	{"rls", exact}, // row-level security
	{"csrf", exact},
	{"xsrf", exact},
	// Secrets and key material.
	{"secret", contains},
	{"credential", contains},
	{"password", contains},
	{"passwd", contains},
	{"keystore", contains},
	{"keychain", contains},
	{"keyring", contains},
	{"vault", exact},
	{"kms", exact},
	// Cryptography.
	{"crypt", contains}, // crypto, encrypt, decrypt, bcrypt, scrypt, cryptography
	{"cipher", contains},
	{"hmac", contains},
	{"signing", prefix},
	{"signature", prefix},
	{"certificat", contains}, // certificate, certificates
	{"x509", exact},
	{"tls", exact},
	{"ssl", exact},
	{"nonce", exact},
	// Security in general: security, secure, insecure, secured.
	{"secur", contains},
	// Schema changes.
	{"migrat", contains}, // migration, migrations, migrate, migrator
}

// DenyWords lists the built-in deny stems for documentation and tests, in
// match order. The package doc describes how each is matched. It is a copy:
// changing it does not change classification.
var DenyWords = func() []string {
	s := make([]string, len(denyWords))
	for i, w := range denyWords {
		s[i] = w.stem
	}
	return s
}()

// DenyGlobs lists the built-in deny globs (doublestar syntax, matched
// case-insensitively) for documentation and tests. It is a copy: changing it
// does not change classification.
var DenyGlobs = append([]string(nil), denyGlobs...)

// denyGlobs is the built-in glob list. Besides key material and secrets
// files it covers the surfaces an agent could use to change its own rails:
// CI and repository configuration, git internals, fixrail's own config and
// state (fixrail.yaml holds the deny-list extension, so shrinking it is
// itself denied), and agent instructions and settings (CLAUDE.md, AGENTS.md,
// .claude, .mcp.json, ...). "**/Dockerfile" is deliberately absent: it is
// too common a fix target.
var denyGlobs = []string{
	// Key material and secrets files.
	"**/*.pem",
	"**/*.key",
	"**/*.p12",
	"**/*.pfx",
	"**/*.jks",
	"**/*.keystore",
	"**/id_rsa*",
	"**/id_dsa*",
	"**/id_ecdsa*",
	"**/id_ed25519*",
	"**/.env*",
	"**/.netrc",
	"**/.npmrc",
	"**/.pypirc",
	"**/.htpasswd",
	"**/*.tfstate",
	"**/*.tfstate.*",
	"**/.ssh/**",
	"**/.aws/**",
	"**/.gnupg/**",
	// CI and repository governance.
	"**/.github/**",
	".gitlab-ci.yml",
	".circleci/**",
	".buildkite/**",
	"azure-pipelines.yml",
	"**/Jenkinsfile",
	"**/CODEOWNERS",
	// Git internals and git-executed configuration.
	"**/.git",
	"**/.git/**",
	".gitmodules",
	"**/.gitattributes",
	".pre-commit-config.yaml",
	"**/.husky/**",
	// fixrail itself: the deny-list manifest and its state.
	"fixrail.yaml",
	"fixrail.yml",
	".fixrail/**",
	// Agent instructions and settings.
	"**/.claude/**",
	"**/CLAUDE.md",
	"**/AGENTS.md",
	"**/GEMINI.md",
	"**/.gemini/**",
	"**/.codex/**",
	"**/.cursor/**",
	"**/.cursorrules",
	"**/.mcp.json",
	"**/opencode.json",
	"**/opencode.jsonc",
	"**/.opencode/**",
	"**/.aider.conf.yml",
	"**/.continue/**",
	"**/.kiro/**",
	"**/.roo/**",
	// What an editor or a shell tool runs from the project it opens or
	// enters.
	"**/.vscode/**",
	"**/*.code-workspace",
	"**/.idea/**",
	"**/*.run.xml",
	"**/.devcontainer/**",
	"**/.devcontainer.json",
	"**/mise.toml",
	"**/mise.*.toml",
	"**/.mise.toml",
	"**/.mise.*.toml",
	"**/.mise/**",
	"**/.config/mise/**",
}

// deniedWord returns the first deny stem that one of text's word tokens
// matches.
func deniedWord(text string) (string, bool) {
	toks := tokens(text)
	for _, w := range denyWords {
		for _, t := range toks {
			if w.matches(t) {
				return w.stem, true
			}
		}
	}
	return "", false
}

func (w denyWord) matches(tok string) bool {
	switch w.mode {
	case contains:
		return strings.Contains(tok, w.stem)
	case prefix:
		return strings.HasPrefix(tok, w.stem)
	default:
		return tok == w.stem || tok == w.stem+"s"
	}
}

// tokens splits text into lower-case word tokens: every maximal run of
// letters and digits, and additionally its camelCase parts when it has more
// than one. "AuthService" yields "authservice", "auth", "service"; "JWTs"
// yields "jwts" (and "jw", "ts"), so whole runs keep acronyms intact.
func tokens(text string) []string {
	var out []string
	for _, run := range strings.FieldsFunc(text, notAlnum) {
		out = append(out, strings.ToLower(run))
		parts := camelParts(run)
		if len(parts) > 1 {
			for _, p := range parts {
				out = append(out, strings.ToLower(p))
			}
		}
	}
	return out
}

func notAlnum(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// camelParts splits a run of letters and digits at lower→Upper and
// digit→Upper transitions, and before the last capital of an acronym that
// starts a new word ("HTTPAuth" → "HTTP", "Auth"). Digits stay with what
// precedes them: "oauth2Client" → "oauth2", "Client".
func camelParts(run string) []string {
	rs := []rune(run)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		split := false
		switch {
		case unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			split = true
		case unicode.IsUpper(cur) && unicode.IsUpper(prev) &&
			i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			split = true
		}
		if split {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}
