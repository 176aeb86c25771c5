package sensitive

import (
	"slices"
	"testing"
)

// The built-in deny lists, spelled out. The other tests iterate over the
// lists they test, so removing an entry would leave them green; here every
// entry has a path of its own that must be denied by exactly that entry
// (the first rule that matches is the one reported). Adding an entry means
// adding its row; removing one turns this red, as it should: a shorter deny
// list is a weaker rail and has to be a decision someone reads.

var pinnedWords = []struct{ stem, path string }{
	{"oauth", "src/oauth/x.go"},
	{"auth", "src/authz.go"},
	{"oidc", "src/oidc_client.py"},
	{"saml", "lib/saml.py"},
	{"jwt", "lib/jwt.py"},
	{"sso", "src/sso/x.go"},
	{"mfa", "src/mfa.py"},
	{"totp", "src/totp.py"},
	{"otp", "src/otp.py"},
	{"2fa", "src/2fa.py"},
	{"permission", "src/permissions.py"},
	{"privileg", "src/unprivileged.c"},
	{"rbac", "src/rbac.go"},
	{"abac", "src/abac.go"},
	{"acl", "src/acl.go"},
	{"rls", "db/rls.sql"},
	{"csrf", "web/csrf.py"},
	{"xsrf", "web/xsrf.py"},
	{"secret", "src/secrets.go"},
	{"credential", "src/credential_store.py"},
	{"password", "src/password_reset.py"},
	{"passwd", "src/passwd.c"},
	{"keystore", "src/keystore.go"},
	{"keychain", "src/keychain.swift"},
	{"keyring", "src/keyring.py"},
	{"vault", "src/vault.go"},
	{"kms", "src/kms.go"},
	{"crypt", "src/bcrypt.go"},
	{"cipher", "src/cipher.go"},
	{"hmac", "src/hmac.go"},
	{"signing", "src/signing_keys.go"},
	{"signature", "src/signatures.go"},
	{"certificat", "src/certificates.go"},
	{"x509", "src/x509.go"},
	{"tls", "net/tls.go"},
	{"ssl", "net/ssl.c"},
	{"nonce", "src/nonce.go"},
	{"secur", "src/insecure.go"},
	{"migrat", "db/migrations/001.sql"},
}

var pinnedGlobs = []struct{ glob, path string }{
	{"**/*.pem", "a/b.pem"},
	{"**/*.key", "a/b.key"},
	{"**/*.p12", "a/b.p12"},
	{"**/*.pfx", "a/b.pfx"},
	{"**/*.jks", "a/b.jks"},
	{"**/*.keystore", "a/b.keystore"},
	{"**/id_rsa*", "home/id_rsa.pub"},
	{"**/id_dsa*", "home/id_dsa"},
	{"**/id_ecdsa*", "home/id_ecdsa"},
	{"**/id_ed25519*", "home/id_ed25519"},
	{"**/.env*", "app/.env.local"},
	{"**/.netrc", "a/.netrc"},
	{"**/.npmrc", "a/.npmrc"},
	{"**/.pypirc", "a/.pypirc"},
	{"**/.htpasswd", "a/.htpasswd"},
	{"**/*.tfstate", "infra/x.tfstate"},
	{"**/*.tfstate.*", "infra/x.tfstate.backup"},
	{"**/.ssh/**", "a/.ssh/config"},
	{"**/.aws/**", "a/.aws/config"},
	{"**/.gnupg/**", "a/.gnupg/x"},
	{"**/.github/**", ".github/workflows/ci.yml"},
	{".gitlab-ci.yml", ".gitlab-ci.yml"},
	{".circleci/**", ".circleci/config.yml"},
	{".buildkite/**", ".buildkite/pipeline.yml"},
	{"azure-pipelines.yml", "azure-pipelines.yml"},
	{"**/Jenkinsfile", "ci/Jenkinsfile"},
	{"**/CODEOWNERS", "docs/CODEOWNERS"},
	{"**/.git", "sub/.git"},
	{"**/.git/**", "sub/.git/config"},
	{".gitmodules", ".gitmodules"},
	{"**/.gitattributes", "a/.gitattributes"},
	{".pre-commit-config.yaml", ".pre-commit-config.yaml"},
	{"**/.husky/**", ".husky/pre-commit"},
	{"fixrail.yaml", "fixrail.yaml"},
	{"fixrail.yml", "fixrail.yml"},
	{".fixrail/**", ".fixrail/state.db"},
	{"**/.claude/**", ".claude/settings.json"},
	{"**/CLAUDE.md", "docs/CLAUDE.md"},
	{"**/AGENTS.md", "docs/AGENTS.md"},
	{"**/GEMINI.md", "docs/GEMINI.md"},
	{"**/.gemini/**", ".gemini/settings.json"},
	{"**/.codex/**", ".codex/config.toml"},
	{"**/.cursor/**", ".cursor/rules"},
	{"**/.cursorrules", "a/.cursorrules"},
	{"**/.mcp.json", "a/.mcp.json"},
	{"**/opencode.json", "opencode.json"},
	{"**/opencode.jsonc", "svc/opencode.jsonc"},
	{"**/.opencode/**", ".opencode/plugin/x.ts"},
	{"**/.aider.conf.yml", ".aider.conf.yml"},
	{"**/.continue/**", ".continue/config.yaml"},
	{"**/.kiro/**", ".kiro/hooks/lint.kiro.hook"},
	{"**/.roo/**", ".roo/mcp.json"},
	{"**/.vscode/**", ".vscode/settings.json"},
	{"**/*.code-workspace", "app.code-workspace"},
	{"**/.idea/**", ".idea/workspace.xml"},
	{"**/*.run.xml", "tools/Dev.run.xml"},
	{"**/.devcontainer/**", "svc/.devcontainer/devcontainer.json"},
	{"**/.devcontainer.json", ".devcontainer.json"},
	{"**/mise.toml", "mise.toml"},
	{"**/mise.*.toml", "mise.local.toml"},
	{"**/.mise.toml", "svc/.mise.toml"},
	{"**/.mise.*.toml", ".mise.dev.toml"},
	{"**/.mise/**", ".mise/config.toml"},
	{"**/.config/mise/**", ".config/mise/config.toml"},
}

func TestBuiltInDenyListsPinned(t *testing.T) {
	p := &Policy{Fixable: []string{"**"}}
	var words, globs []string
	for _, w := range pinnedWords {
		words = append(words, w.stem)
		if got := p.Classify(w.path); got.Class != Denied || got.Rule != "word:"+w.stem {
			t.Errorf("Classify(%q) = %+v, want denied by word:%s", w.path, got, w.stem)
		}
	}
	for _, g := range pinnedGlobs {
		globs = append(globs, g.glob)
		if got := p.Classify(g.path); got.Class != Denied || got.Rule != "glob:"+g.glob {
			t.Errorf("Classify(%q) = %+v, want denied by glob:%s", g.path, got, g.glob)
		}
	}
	// The classifying lists, not the exported copies, are what is pinned;
	// the copies must still say the same for the docs built from them.
	if !slices.Equal(words, DenyWords) {
		t.Errorf("DenyWords = %q, want %q", DenyWords, words)
	}
	if !slices.Equal(globs, DenyGlobs) {
		t.Errorf("DenyGlobs = %q, want %q", DenyGlobs, globs)
	}
}
