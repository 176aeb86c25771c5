package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/receipt"
)

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

// TestDefaultHookBinary: hook install registers fixrail-hook when it was
// installed beside fixrail and can run, else fixrail itself.
func TestDefaultHookBinary(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "fixrail")
	slim := filepath.Join(dir, "fixrail-hook")
	if got := defaultHookBinary(self); got != self {
		t.Errorf("no fixrail-hook: %s, want %s", got, self)
	}
	if err := os.WriteFile(slim, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := defaultHookBinary(self); got != self {
		t.Errorf("fixrail-hook not executable: %s, want %s", got, self)
	}
	if err := os.Chmod(slim, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := defaultHookBinary(self); got != slim {
		t.Errorf("fixrail-hook beside fixrail: %s, want %s", got, slim)
	}
	if err := os.Remove(slim); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(slim, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := defaultHookBinary(self); got != self {
		t.Errorf("fixrail-hook a directory: %s, want %s", got, self)
	}
}
