package redact

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// CredentialEnv names the environment variables whose values fixrail may
// hold and must never let out: names, never patterns.
var CredentialEnv = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"FIXRAIL_WEBHOOK_SECRET", "FIXRAIL_WEBHOOK_URL", "FIXRAIL_FORGE_TOKEN",
	// The GitHub forge's own token, and the shared ledger's password.
	"FIXRAIL_GITHUB_TOKEN", "PGPASSWORD",
}

// FromEnvironment builds the engine fixrail runs with: the values of the
// CredentialEnv variables that are set (lookup is os.LookupEnv in
// production) as known secrets, and the customer identifiers listed one per
// line in customerIDsFile ("" for none; '#' starts a comment line).
func FromEnvironment(lookup func(string) (string, bool), customerIDsFile string) (*Engine, error) {
	var known []string
	for _, name := range CredentialEnv {
		// A value too short to redact safely is not a credential worth the
		// name; the engine would refuse it.
		if v, ok := lookup(name); ok && len(strings.TrimSpace(v)) >= 8 {
			known = append(known, strings.TrimSpace(v))
		}
	}
	var ids []string
	if customerIDsFile != "" {
		f, err := os.Open(customerIDsFile)
		if err != nil {
			return nil, fmt.Errorf("customer identifiers: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if id := strings.TrimSpace(sc.Text()); id != "" && !strings.HasPrefix(id, "#") {
				ids = append(ids, id)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("customer identifiers: %w", err)
		}
	}
	return New(Options{Known: known, CustomerIDs: ids})
}
