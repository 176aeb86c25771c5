package risk

import (
	"slices"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
)

// The built-in high-risk labels and keywords, spelled out: the other tests
// iterate over the lists they test, so a word removed from the code would
// leave them green. Each entry here must, on its own, raise a report from a
// writer to high with itself as the reason.

var pinnedLabels = []string{"security", "sev0", "sev1", "sev-0", "sev-1", "p0", "critical", "data-loss", "dataloss",
	"payments", "billing", "auth", "vulnerability", "incident", "privacy"}

var pinnedKeywords = []string{
	"payment", "billing", "checkout", "refund", "invoice", "charge card",
	"auth", "authentication", "authorization", "authn", "authz", "oauth", "sso", "saml", "login", "password", "credential", "2fa", "mfa",
	"sev0", "sev1", "data loss", "data leak", "corruption", "corrupted",
	"security", "vulnerability", "cve", "exploit", "rce", "remote code execution", "injection", "xss", "csrf", "ssrf",
	"privilege escalation", "gdpr", "pii", "hipaa", "encryption", "decrypt", "secret",
}

func TestBuiltInRiskListsPinned(t *testing.T) {
	r := rules(t, config.Risk{})
	for _, l := range pinnedLabels {
		s := r.Intake(Report{Title: "typo in the footer", Labels: []string{"bug", l}, Access: AccessWrite})
		if got := kinds(s, High); !slices.Equal(got, []string{"label:" + l}) {
			t.Errorf("label %q: high inputs %q, want exactly label:%s", l, got, l)
		}
	}
	for _, kw := range pinnedKeywords {
		s := r.Intake(Report{Title: "the " + kw + " page shows the wrong footer", Access: AccessWrite})
		if got := kinds(s, High); !slices.Equal(got, []string{"keyword:" + kw}) {
			t.Errorf("keyword %q: high inputs %q, want exactly keyword:%s", kw, got, kw)
		}
	}
	if !slices.Equal(DefaultLabels, pinnedLabels) {
		t.Errorf("DefaultLabels = %q, want %q", DefaultLabels, pinnedLabels)
	}
	if !slices.Equal(DefaultKeywords, pinnedKeywords) {
		t.Errorf("DefaultKeywords = %q, want %q", DefaultKeywords, pinnedKeywords)
	}
}
