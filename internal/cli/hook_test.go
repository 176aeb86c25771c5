package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/receipt"
)

func TestNewHookFlags(t *testing.T) {
	wt := t.TempDir()
	t.Setenv("FIXRAIL_HOME", filepath.Join(t.TempDir(), "fx"))
	tests := []struct {
		name    string
		o       hookOpts
		wantErr string
	}{
		{"defaults", hookOpts{event: "pre", format: "claude"}, ""},
		{"codex post", hookOpts{event: "post", format: "codex"}, ""},
		{"phase", hookOpts{event: "pre", format: "claude", phase: "fix", worktree: wt, allow: stringList{"src/**"}}, ""},
		{"bad format", hookOpts{event: "pre", format: "cursor"}, "unknown hook format"},
		{"bad event", hookOpts{event: "PreToolUse", format: "claude"}, "unknown hook event"},
		{"phase without worktree", hookOpts{event: "pre", format: "claude", phase: "fix"}, "needs --worktree"},
		{"allow without phase", hookOpts{event: "pre", format: "claude", allow: stringList{"*"}}, "need --phase"},
		{"worktree without phase", hookOpts{event: "pre", format: "claude", worktree: wt}, "need --phase"},
		{"escaping glob", hookOpts{event: "pre", format: "claude", phase: "fix", worktree: wt, allow: stringList{"../x"}}, `".." is not allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHook(&tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.SetupErr != nil || !filepath.IsAbs(h.Home) || h.Env.FixrailHome != h.Home || h.NewRedactor == nil {
				t.Errorf("hook %+v", h)
			}
			if (h.Phase != nil) != (tc.o.phase != "") {
				t.Errorf("phase %+v for %q", h.Phase, tc.o.phase)
			}
		})
	}
}

// TestNewRedactor: the receipts' redactor removes a credential held in the
// environment by exact value.
func TestNewRedactor(t *testing.T) {
	const tok = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	t.Setenv("GITHUB_TOKEN", tok)
	r, err := newRedactor()
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Redact("git push https://x:" + tok + "@github.com/o/r")
	if err != nil || strings.Contains(out, tok) {
		t.Errorf("Redact = %q, %v", out, err)
	}
}

func TestCheckCustody(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "fx")
	if err := os.MkdirAll(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(root, "owner", "approval.key"), true},
		{filepath.Join(home, "approval.key"), false},
		{filepath.Join(home, "keys", "a.key"), false},
		{filepath.Join(link, "a.key"), false}, // through a symlink
		{home + "2/a.key", true},              // a sibling with a common prefix
	} {
		err := checkCustody(tc.path, home)
		if (err == nil) != tc.ok {
			t.Errorf("checkCustody(%s) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"git push":             "git push",
		"a\nb":                 "a\nb",
		"\x1b[2Jcleared":       `\u001b[2Jcleared`,
		"tab\there":            `tab\u0009here`,
		"rtl\u202eevil":        `rtl\u202eevil`,
		"csi\u009b31m":         `csi\u009b31m`,
		"zero\u200bwidth":      `zero\u200bwidth`,
		"naïve café":           "naïve café",
		"bad \xff utf8":        `bad \ufffd utf8`,
		"ansi\x1b]0;title\x07": `ansi\u001b]0;title\u0007`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReceiptLine(t *testing.T) {
	r := receipt.Receipt{Seq: 7, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Kind: receipt.KindDecision,
		Verdict: "deny", Rule: "push-force", Tool: "Bash", ToolUseID: "toolu_1", Reason: "git push --force\n\x1b[31mfake"}
	want := `   7 2026-01-02T03:04:05Z decision     deny     push-force     Bash       toolu_1  git push --force \u001b[31mfake`
	if got := receiptLine(r); got != want {
		t.Errorf("receiptLine =\n%q\nwant\n%q", got, want)
	}
}

func TestIsCallKey(t *testing.T) {
	if !isCallKey(strings.Repeat("a1", 32)) {
		t.Error("a valid key was refused")
	}
	for _, s := range []string{"", "abc", strings.Repeat("A1", 32), strings.Repeat("a", 63) + "/", "../" + strings.Repeat("a", 61)} {
		if isCallKey(s) {
			t.Errorf("isCallKey(%q) = true", s)
		}
	}
}
