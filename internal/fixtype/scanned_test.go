package fixtype

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/risk"
	"github.com/fixrail/fixrail/internal/sensitive"
)

// fakeKey is a synthetic credential, assembled at run time so no
// credential-shaped literal sits in the source.
var fakeKey = "sk_" + "live_" + strings.Repeat("Zq7x", 6)

func TestRecoverSecret(t *testing.T) {
	sum := digestOf(fakeKey)
	for _, tc := range []struct {
		name      string
		text      string
		line, end int
		ok        bool
	}{
		{"quoted", "package x\n\nconst key = \"" + fakeKey + "\"\n", 3, 0, true},
		{"env style", "A=1\nSTRIPE_KEY=" + fakeKey + "\n", 2, 2, true},
		{"in a URL", "url: https://user:" + fakeKey + "@host/x\n", 1, 0, true},
		{"yaml", "stripe:\n  key: " + fakeKey + "   \n", 2, 0, true},
		{"anywhere when no line", "x\ny\nz = '" + fakeKey + "'\n", 0, 0, true},
		{"another line", "key = '" + fakeKey + "'\nother\n", 2, 0, false},
		{"a prefix only", "key = '" + fakeKey[:20] + "'\n", 1, 0, false},
		{"glued to other text", "key = x" + fakeKey + "\n", 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := RecoverSecret([]byte(tc.text), tc.line, tc.end, sum)
			if ok != tc.ok || (ok && got != fakeKey) {
				t.Errorf("RecoverSecret = %v (value match %v), want %v", ok, got == fakeKey, tc.ok)
			}
		})
	}
}

func TestFilesHolding(t *testing.T) {
	dir := t.TempDir()
	write := func(p string, data []byte) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", []byte("k := \""+fakeKey+"\""))
	write("clean.go", []byte("package x"))
	write("deep/b64.txt", []byte("blob: "+base64.StdEncoding.EncodeToString([]byte(fakeKey))))
	// A value straddling the 1 MiB read boundary is still found.
	big := make([]byte, 1<<20-5)
	for i := range big {
		big[i] = 'a'
	}
	write("big.bin", append(big, []byte(fakeKey)...))
	write(".git/config", []byte(fakeKey))
	if err := os.Symlink(filepath.Join(dir, "a.go"), filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	raw, err := filesHolding(dir, [][]byte{[]byte(fakeKey)})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a.go", "big.bin"}, raw); d != "" {
		t.Errorf("raw (-want +got):\n%s", d)
	}
	enc, err := filesHolding(dir, encodings(fakeKey))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a.go", "big.bin", "deep/b64.txt"}, enc); d != "" {
		t.Errorf("encoded (-want +got):\n%s", d)
	}
}

func TestBuildChecks(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"go.mod", "svc/api/go.mod", "web/package.json", "infra/main.tf"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := BuildChecks(dir, []string{"svc/api/db/q.go", "cmd/main.go", "web/src/app.ts", "tools/gen.py", "infra/main.tf", "Dockerfile", "svc/api/x.go"})
	want := []BuildCheck{
		{Lang: "go", Root: "svc/api", Tool: "go", Argv: []string{"go", "-C", "svc/api", "build", "./..."}},
		{Lang: "go", Root: ".", Tool: "go", Argv: []string{"go", "-C", ".", "build", "./..."}},
		{Lang: "javascript", Root: "web", Tool: "npm", Argv: []string{"npm", "--prefix", "web", "run", "build", "--if-present"}},
		{Lang: "python", Root: "tools", Tool: "python3", Argv: []string{"python3", "-m", "py_compile", "tools/gen.py"}},
		{Lang: "terraform", Root: "infra", Tool: "terraform", Argv: []string{"terraform", "-chdir=infra", "validate", "-no-color"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestBuildCheckMissingToolchain: a toolchain that is not installed
// skips its check with the needs-review label, never a silent pass.
func TestBuildCheckMissingToolchain(t *testing.T) {
	defer func(f func(string) (string, error)) { lookPath = f }(lookPath)
	lookPath = func(string) (string, error) { return "", os.ErrNotExist }
	g := buildCheckGate(&Env{}, func() []BuildCheck {
		return []BuildCheck{{Lang: "go", Root: ".", Tool: "go", Argv: []string{"go", "build", "./..."}}}
	})
	v, err := g.Run(context.Background(), &gates.Change{})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || !v.Unconfirmed || v.Label != gates.LabelNeedsReview || !strings.Contains(v.Detail, "go is not installed") {
		t.Errorf("verdict = %+v, want an unconfirmed pass labelled %s naming the toolchain", v, gates.LabelNeedsReview)
	}
}

func TestNoSuppression(t *testing.T) {
	for _, tc := range []struct {
		name, added string
		pass        bool
	}{
		{"a real fix", "rows, err := db.Query(\"SELECT * FROM u WHERE id = ?\", id)", true},
		{"gosec nosec", "rows, err := db.Query(q) // #nosec G201", false},
		{"gosec disable directive", "q := fmt.Sprintf(\"SELECT %s\", name) //gosec:disable G201 -- reviewed", false},
		{"gosec disable directive, own line", "\t//gosec:disable", false},
		{"nolint", "rows, err := db.Query(q) //nolint:gosec", false},
		{"semgrep", "x = run(cmd)  # nosemgrep", false},
		{"semgrep short form", "x = run(cmd)  # nosem: python.lang.security.dangerous-subprocess-use", false},
		{"semgrep short form, upper case", "x = run(cmd)  // NOSEM", false},
		{"checkov", "# checkov:skip=CKV_AWS_20: fine", false},
		{"gitleaks", "key = load() // gitleaks:allow", false},
		{"tfsec", "#tfsec:ignore:aws-s3-enable-bucket-encryption", false},
		{"eslint-disable", "const s = eval(body); // eslint-disable-line security/detect-eval-with-expression", false},
		{"eslint configuration comment", "/* eslint security/detect-eval-with-expression: off */", false},
		{"eslint configuration comment, no blank", "/*eslint security/detect-eval-with-expression:0*/", false},
		{"eslint-env is no suppression", "/* eslint-env node */", true},
		{"a comment naming eslint", "// parsed as JSON: eslint flagged the eval", true},
		// Lines that take a Go file out of gosec's scan (the real gosec
		// reports nothing for the file after each; the build check does not
		// build a file a constraint leaves out).
		{"go build constraint", "//go:build ignore", false},
		{"go build constraint, a release tag", "//go:build prod", false},
		{"old build constraint", "// +build ignore", false},
		{"cgo import", "import \"C\"", false},
		{"cgo import in a group", "\t\"C\"", false},
		{"generated-code header", "// Code generated by hand. DO NOT EDIT.", false},
		{"a string C in a list", "\t\"C\",", true},
		{"a comment on building", "// go build it with the default tags", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diff := gitx.TreeDiff{Text: "diff --git a/q.go b/q.go\n--- a/q.go\n+++ b/q.go\n@@ -1 +1 @@\n-old\n+" + tc.added + "\n"}
			v, err := noSuppression().Run(context.Background(), &gates.Change{Diff: diff})
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass {
				t.Errorf("pass = %v, want %v (%s)", v.Pass, tc.pass, v.Detail)
			}
		})
	}
	// A build constraint in a file that is not Go is text, not a directive.
	diff := gitx.TreeDiff{Text: "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+//go:build ignore\n"}
	if v, err := noSuppression().Run(context.Background(), &gates.Change{Diff: diff}); err != nil || !v.Pass {
		t.Errorf("a //go:build line in README.md: %+v, %v; want a pass", v, err)
	}
}

// TestIaCImplied: tfsec's own text for a security group open to the world
// scores low for the iac type, so the finding is worked; a high-risk word
// it does not imply still escalates, and the same text under a type that
// does not imply "security" is high.
func TestIaCImplied(t *testing.T) {
	pol, err := sensitive.New([]string{"infra/**"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	r := risk.NewRules(config.Risk{}, pol)
	for _, tc := range []struct {
		name, title, body string
		implied           []string
		high              bool
	}{
		{"tfsec's security group result", "An ingress security group rule allows traffic from /0.", "Security group rule allows ingress from public internet.", IaC.Implied, false},
		{"a word iac does not imply", "Unencrypted S3 bucket.", "Bucket does not have encryption enabled", IaC.Implied, true},
		{"payment still routes", "An ingress security group rule allows traffic from /0.", "the payment gateway's group", IaC.Implied, true},
		{"the same text under the bug type", "An ingress security group rule allows traffic from /0.", "", Bug.Implied, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := r.Intake(risk.Report{Title: tc.title, Body: tc.body, Access: risk.AccessWrite, Implied: tc.implied})
			if s.High() != tc.high {
				t.Errorf("high = %v, want %v: %s", s.High(), tc.high, s.Reason())
			}
		})
	}
}

func TestScannedReplay(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "db", "users.go"), []byte("package db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("users.go", filepath.Join(dir, "db", "link.go")); err != nil {
		t.Fatal(err)
	}
	base := strings.Repeat("ab", 20)
	var read []string
	e := &Env{Config: &config.Config{Scanners: []config.Scanner{{Name: "gosec", Tools: []string{"gosec"}}}}, BaseSHA: base,
		Read: func(_ context.Context, _, rev string, fn func(string) error) error {
			read = append(read, rev)
			return fn(dir)
		}}
	good := Alert{Tool: "GoSec", Rule: "G201", Path: "db/users.go", Line: 3, EndLine: 4, Severity: "medium"}
	for _, tc := range []struct {
		name    string
		alert   *Alert
		differs string
		scanner string
	}{
		{"configured", &good, "", "gosec"},
		{"no scanner for the tool", &Alert{Tool: "semgrep", Rule: "G201", Path: "db/users.go", Line: 3}, "", ""},
		{"no alert", nil, "names no scanner result", ""},
		{"bad rule", &Alert{Tool: "gosec", Rule: "G201 x", Path: "db/users.go", Line: 3}, "not a scanner's rule id", ""},
		{"escaping path", &Alert{Tool: "gosec", Rule: "G201", Path: "../users.go", Line: 3}, "not a clean relative path", ""},
		{"not on the base", &Alert{Tool: "gosec", Rule: "G201", Path: "db/gone.go", Line: 3}, "does not hold as a regular file", ""},
		{"a link on the base", &Alert{Tool: "gosec", Rule: "G201", Path: "db/link.go", Line: 3}, "does not hold as a regular file", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read = nil
			p, err := SAST.Replay(context.Background(), e, Claimed{Files: []string{"db/users.go"}, Alert: tc.alert})
			if tc.differs != "" {
				if !errors.Is(err, ErrClaimDiffers) || !strings.Contains(err.Error(), tc.differs) {
					t.Fatalf("err = %v, want ErrClaimDiffers %q", err, tc.differs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(read) != 1 || read[0] != base {
				t.Errorf("read %v, want the base only", read)
			}
			sp := scanOf(p)
			if d := cmp.Diff([]string{tc.alert.Path}, p.Files); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			if sp.Rule != tc.alert.Rule || sp.Path != tc.alert.Path || sp.Line != tc.alert.Line || sp.EndLine != tc.alert.EndLine || sp.Severity != tc.alert.Severity {
				t.Errorf("plan %+v, want the alert %+v", sp, tc.alert)
			}
			if tc.scanner == "" {
				if sp.Scanner != nil {
					t.Fatalf("scanner %q for an unconfigured tool", sp.Scanner.Name)
				}
				// Red and green say the oracle could not run: unconfirmed,
				// needs-review, never a plain pass.
				for _, g := range append([]*gates.Gate{IaC.Red(e, p)}, IaC.Gates(e, p)[1]) {
					v, err := g.Run(context.Background(), &gates.Change{})
					if err != nil || !v.Unconfirmed || v.Label != gates.LabelNeedsReview {
						t.Errorf("%s = %+v, %v; want unconfirmed, needs-review", g.Name, v, err)
					}
				}
				return
			}
			if sp.Scanner == nil || sp.Scanner.Name != tc.scanner {
				t.Fatalf("scanner %v, want %s", sp.Scanner, tc.scanner)
			}
		})
	}
	if IaC.Replay == nil || SAST.Replay == nil {
		t.Fatal("a scanned type has no Replay")
	}
}

func TestValidAlert(t *testing.T) {
	for _, tc := range []struct {
		a    Alert
		want string
	}{
		{Alert{Tool: "gosec", Rule: "G201", Path: "a.go", Line: 1, EndLine: 2, Severity: "high"}, ""},
		{Alert{Rule: "go/sql-injection", Path: "a.go"}, ""},
		{Alert{Tool: "Semgrep OSS", Rule: "CKV_AWS_20", Path: "x/main.tf", Line: 3}, ""},
		{Alert{Rule: "", Path: "a.go"}, "rule"},
		{Alert{Rule: "-x", Path: "a.go"}, "rule"},
		{Alert{Tool: " gosec", Rule: "G1", Path: "a.go"}, "tool"},
		{Alert{Tool: "gosec\n", Rule: "G1", Path: "a.go"}, "tool"},
		{Alert{Rule: "G1", Path: "a.go", Severity: "High"}, "severity"},
		{Alert{Rule: "G1", Path: "a.go", Line: 3, EndLine: 2}, "before"},
		{Alert{Rule: "G1", Path: "a.go", EndLine: 2}, "before"},
		{Alert{Rule: "G1", Path: "a.go", Line: -1}, "range"},
		{Alert{Rule: "G1", Path: "/a.go", Line: 1}, "clean relative"},
		{Alert{Rule: "G1", Path: "a/../b.go", Line: 1}, "clean relative"},
		{Alert{Rule: "G1", Path: "a:b.go"}, "colon"},
		{Alert{Rule: "G1", Path: "a:b.go", Line: 1}, ""},
	} {
		err := ValidAlert(tc.a)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ValidAlert(%+v) = %v, want %q", tc.a, err, tc.want)
		}
	}
}

func TestLineTokens(t *testing.T) {
	text := "package x\n\n// apiKey is the provider's key.\nconst apiKey = \"" + fakeKey + "\"\nurl := \"https://user:" + fakeKey + "@host/p\"\n"
	for _, tc := range []struct {
		name      string
		line, end int
		want      []string
	}{
		{"the key's line", 4, 0, []string{fakeKey}},
		{"a URL's password", 5, 5, []string{fakeKey}},
		{"a span", 3, 4, []string{"provider", fakeKey}},
		{"no line: the whole file", 0, 0, []string{"provider", fakeKey}},
		{"a line with nothing long", 1, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, lineTokens([]byte(text), tc.line, tc.end)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestSecretReplay(t *testing.T) {
	base, commit := t.TempDir(), t.TempDir()
	write := func(dir, p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(base, "shop/client.go", "package shop\n\nconst apiKey = \""+fakeKey+"\"\n")
	trees := map[string]string{"BASE": base, "COMMIT": commit}
	e := &Env{Config: &config.Config{}, BaseSHA: "BASE", Read: func(_ context.Context, _, rev string, fn func(string) error) error { return fn(trees[rev]) }}
	if _, err := Secret.Replay(context.Background(), e, Claimed{Files: []string{"shop/client.go"}}); !errors.Is(err, ErrClaimDiffers) {
		t.Fatalf("no alert: err = %v, want ErrClaimDiffers", err)
	}
	if _, err := Secret.Replay(context.Background(), e, Claimed{Alert: &Alert{Rule: "r", Path: "shop/gone.go", Line: 3}}); !errors.Is(err, ErrClaimDiffers) {
		t.Fatalf("a file the base lacks: err = %v, want ErrClaimDiffers", err)
	}
	for _, tc := range []struct {
		name  string
		line  int
		files map[string]string
		green bool
		want  string
	}{
		{"removed everywhere", 3, map[string]string{"shop/client.go": "package shop\n\nvar apiKey = os.Getenv(\"K\")\n"}, true, "in no tracked file"},
		{"moved to another file", 3, map[string]string{"shop/client.go": "package shop\n", "deploy/env": "K=" + fakeKey}, false, "deploy/env"},
		{"moved, base64 encoded", 3, map[string]string{"shop/client.go": "package shop\n", "x.txt": base64.StdEncoding.EncodeToString([]byte(fakeKey))}, false, "x.txt"},
		{"left in place", 3, map[string]string{"shop/client.go": "package shop\n\n// fixed\nconst apiKey = \"" + fakeKey + "\"\n"}, false, "still holds each of the 1 token"},
		{"file deleted", 3, map[string]string{"other.go": "package shop\n"}, true, "in no tracked file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.RemoveAll(commit); err != nil {
				t.Fatal(err)
			}
			for p, s := range tc.files {
				write(commit, p, s)
			}
			p, err := Secret.Replay(context.Background(), e, Claimed{Files: []string{"shop/client.go"}, Alert: &Alert{Tool: "gitleaks", Rule: "stripe-access-token", Path: "shop/client.go", Line: tc.line}})
			if err != nil {
				t.Fatal(err)
			}
			red, err := Secret.Red(e, p).Run(context.Background(), &gates.Change{Commit: "BASE"})
			if err != nil || !red.Pass {
				t.Fatalf("red = %+v, %v", red, err)
			}
			var absent *gates.Gate
			for _, g := range Secret.Gates(e, p) {
				if g.Name == "secret-absent" {
					absent = g
				}
			}
			v, err := absent.Run(context.Background(), &gates.Change{Commit: "COMMIT"})
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.green || !strings.Contains(v.Detail, tc.want) {
				t.Errorf("secret-absent = %v %q, want %v %q", v.Pass, v.Detail, tc.green, tc.want)
			}
			if strings.Contains(v.Detail+red.Detail, fakeKey) {
				t.Errorf("a verdict prints the value")
			}
		})
	}
}
