package verify

import (
	"strings"
	"testing"
)

func TestAdded(t *testing.T) {
	for _, tc := range []struct{ name, diff, want string }{
		{"added and deleted", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old secret\n+new line\n", "new line\n"},
		{"an added line that looks like a header", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n ctx\n+++ hidden\n", "++ hidden\n"},
		{"two files", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+one\ndiff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+two\n", "one\ntwo\n"},
		{"a deletion only", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-gone\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := added(tc.diff); got != tc.want {
				t.Fatalf("added = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSameFinding(t *testing.T) {
	head := sampleClaim()
	head.Files = []string{"src/app/format.py", "src/app/other.py"}
	head.Version = "v2"
	for _, tc := range []struct {
		name string
		edit func(*Claim)
		want string
	}{
		{"a follow-up's parent: fewer files, another version", func(*Claim) {}, ""},
		{"another finding", func(c *Claim) { c.Finding = "s2" }, "finding"},
		{"another fix type", func(c *Claim) { c.FixType = "sast" }, "fix_type"},
		{"another base", func(c *Claim) { c.Base = strings.Repeat("cd", 20) }, "base"},
		{"another test", func(c *Claim) { c.TestName = "test_other" }, "test_name"},
		{"other evidence", func(c *Claim) { c.Evidence = c.Evidence[:1] }, "evidence"},
		{"another package", func(c *Claim) { c.Package = "urllib3" }, "package"},
		{"another tool", func(c *Claim) { c.Tool = "semgrep" }, "tool"},
		{"another rule", func(c *Claim) { c.Rule = "G202" }, "rule"},
		{"another location", func(c *Claim) { c.Location = "db/users.go:3" }, "location"},
		{"another severity", func(c *Claim) { c.Severity = "low" }, "severity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := sampleClaim()
			tc.edit(&parent)
			if got := sameFinding(head, parent); got != tc.want {
				t.Fatalf("sameFinding = %q, want %q", got, tc.want)
			}
		})
	}
}
