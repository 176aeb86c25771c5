package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fixrail/fixrail/internal/verdict"
)

// TestRunChildExitMatchesReport: a run whose process exit disagrees with
// the terminal state it printed (killed after the report, a crash on the
// way out) is flagged in its row, and its code is never milder than the
// report's.
func TestRunChildExitMatchesReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal string
		exit     int
		wantExit int
		wantErr  string
	}{
		{"agrees", "DRAFT-PR", 0, 0, ""},
		{"agrees on escalate", "ESCALATE", 5, 5, ""},
		{"killed after a draft", "DRAFT-PR", 1, 1, "the run reported DRAFT-PR but exited 1 (DRAFT-PR exits 0)"},
		{"escalate that exited 0", "ESCALATE", 0, 5, "the run reported ESCALATE but exited 0 (ESCALATE exits 5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "fake-run")
			script := "#!/bin/sh\nprintf '%s' '{\"terminal\": \"" + tc.terminal + "\", \"reason\": \"r\"}'\nexit " + string(rune('0'+tc.exit)) + "\n"
			if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			res := runChild(t.Context(), exe, dir, []string{"run", "--report", "r.json"})
			if res.Terminal != verdict.Terminal(tc.terminal) || res.Exit != tc.wantExit || res.Error != tc.wantErr {
				t.Fatalf("runChild = terminal %q exit %d error %q; want %s, exit %d, error %q", res.Terminal, res.Exit, res.Error, tc.terminal, tc.wantExit, tc.wantErr)
			}
		})
	}
}
