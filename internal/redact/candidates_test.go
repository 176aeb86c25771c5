package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCandidates(t *testing.T) {
	gh := "gh" + "p_" + strings.Repeat("EXAMPLE0123", 4)[:36]
	tests := []struct {
		name    string
		snippet string
		want    []string
	}{
		{"quoted assignment", `API_KEY = "sk-live-0123456789abcdef"`,
			[]string{`API_KEY = "sk-live-0123456789abcdef"`, "sk-live-0123456789abcdef"}},
		{"unquoted env", "DB_PASSWORD=correct-horse-battery",
			[]string{"DB_PASSWORD=correct-horse-battery", "correct-horse-battery"}},
		{"yaml", "  token: " + gh,
			[]string{"token: " + gh, gh}},
		{"json key is not a candidate", `{"client_secret": "s3cr3t-value-here"}`,
			[]string{`{"client_secret": "s3cr3t-value-here"}`, "s3cr3t-value-here"}},
		{"other quoted literals", `connect("db.example.com", "app-user-name", password="p4ssw0rd-long")`,
			[]string{`connect("db.example.com", "app-user-name", password="p4ssw0rd-long")`, "db.example.com", "p4ssw0rd-long", "app-user-name"}},
		{"diff line", `+    api_key = 'abcdef0123456789'`,
			[]string{`+    api_key = 'abcdef0123456789'`, `api_key = 'abcdef0123456789'`, "abcdef0123456789"}},
		{"a weak real value stays a candidate", `DB_PASSWORD=mysecretpassword`,
			[]string{"DB_PASSWORD=mysecretpassword", "mysecretpassword"}},
		{"code on the right", `password = os.environ["DB_PASSWORD"]`,
			[]string{`password = os.environ["DB_PASSWORD"]`}},
		{"longest first across lines", "a = \"short-value\"\nb = \"a-much-longer-value-here\"",
			[]string{"b = \"a-much-longer-value-here\"", "a-much-longer-value-here", "a = \"short-value\"", "short-value"}},
		{"masked stars", `API_KEY = "sk-****"`, nil},
		{"masked dots", `token: ghp_ab12....`, nil},
		{"masked ellipsis", `AWS_ACCESS_KEY_ID=AKIA12345…`, nil},
		{"masked x", `key = "sk-xxxxx12345"`, nil},
		{"masked hash", `password: ####`, nil},
		{"hidden value", `secret = "<hidden-value>"`, nil},
		{"redacted", `secret = "[REDACTED]"`, nil},
		{"key only", "GITHUB_TOKEN", nil},
		{"short value, the line remains", `pw = "abc"`, []string{`pw = "abc"`}},
		{"nothing of 8 bytes", `pw=abc`, nil},
		{"line over 4096", "token = \"" + strings.Repeat("a", 5000) + "\"", nil},
		{"one long line poisons the snippet", "ok = \"fine-value-1\"\n" + strings.Repeat("b", 4097), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Candidates(tc.snippet)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Candidates(%q) (-want +got):\n%s", tc.snippet, diff)
			}
			for _, c := range got {
				if _, err := New(Options{Known: []string{c}}); err != nil {
					t.Errorf("candidate %q refused by New: %v", c, err)
				}
			}
		})
	}
}

// TestCandidatesNeverKeyNames checks the rule over many key spellings.
func TestCandidatesNeverKeyNames(t *testing.T) {
	for _, key := range []string{"API_KEY", "GITHUB_TOKEN", "client_secret", "dbPassword", "X-Api-Key", "AWS_SECRET_ACCESS_KEY"} {
		for _, form := range []string{"%s=val-0123456789", "%s: val-0123456789", `"%s": "val-0123456789"`, `%s = "val-0123456789"`, `export %s='val-0123456789'`} {
			snippet := strings.Replace(form, "%s", key, 1)
			for _, c := range Candidates(snippet) {
				if c == key {
					t.Errorf("Candidates(%q) includes the key %q", snippet, key)
				}
			}
			if got := Candidates(snippet); len(got) == 0 || !contains(got, "val-0123456789") {
				t.Errorf("Candidates(%q) = %q, want the value", snippet, got)
			}
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
