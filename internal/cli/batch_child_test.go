package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/batch"
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
			res := runChild(t.Context(), exe, dir, []string{"run", "--report", "r.json"}, childLimits{timeout: time.Minute, grace: time.Second})
			if res.Terminal != verdict.Terminal(tc.terminal) || res.Exit != tc.wantExit || res.Error != tc.wantErr {
				t.Fatalf("runChild = terminal %q exit %d error %q; want %s, exit %d, error %q", res.Terminal, res.Exit, res.Error, tc.terminal, tc.wantExit, tc.wantErr)
			}
		})
	}
}

// TestRunChildTimeout: a run still going at its time limit is stopped
// with everything it started (its process group: SIGTERM, then SIGKILL
// after the grace for what ignores it), and its row is HALT wall-clock,
// timed out, with HALT's exit code, whatever it printed on the way down,
// but for an ESCALATE, which stays. The progress line and --json say so.
func TestRunChildTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		script   string
		terminal verdict.Terminal
		exit     int
	}{
		{"hangs", "sleep 20 & echo $! > grandchild\nwait\n", verdict.Halt, 3},
		{"ignores SIGTERM", "trap '' TERM\nsleep 20 & echo $! > grandchild\nwhile :; do wait; done\n", verdict.Halt, 3},
		{"halts on SIGTERM", "trap 'printf %s \"{\\\"terminal\\\": \\\"HALT\\\", \\\"reason\\\": \\\"interrupted\\\"}\"; exit 3' TERM\nsleep 20 & echo $! > grandchild\nwait\n", verdict.Halt, 3},
		{"escalated, then hung", "printf %s '{\"terminal\": \"ESCALATE\", \"reason\": \"leak\"}'\nsleep 20 & echo $! > grandchild\nwait\n", verdict.Escalate, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "fake-run")
			if err := os.WriteFile(exe, []byte("#!/bin/sh\ncd "+dir+"\n"+tc.script), 0o755); err != nil {
				t.Fatal(err)
			}
			limits := childLimits{timeout: 500 * time.Millisecond, grace: 300 * time.Millisecond}
			var progress bytes.Buffer
			t0 := time.Now()
			res := batch.Run(t.Context(), []batch.Item{{ID: "gh-1"}}, func(ctx context.Context, _ batch.Item) batch.Result {
				return runChild(ctx, exe, dir, []string{"run", "--issue", "1"}, limits)
			}, batch.Options{Parallel: 1, Progress: &progress})[0]
			if took := time.Since(t0); took > 10*time.Second {
				t.Fatalf("the run was stopped after %s, not at its limit", took)
			}
			if !res.TimedOut || res.Terminal != tc.terminal || res.Exit != tc.exit || !strings.Contains(res.Error, "timed out: still running after 500ms (--run-timeout)") {
				t.Fatalf("row = %+v; want %s, exit %d, timed out", res, tc.terminal, tc.exit)
			}
			if tc.terminal == verdict.Halt && res.Reason != "wall-clock" {
				t.Fatalf("reason %q, want wall-clock", res.Reason)
			}
			if code := batch.ExitCode([]batch.Result{res}); code != tc.exit {
				t.Fatalf("batch exit %d, want %d", code, tc.exit)
			}
			if p := progress.String(); !strings.Contains(p, "batch: [1/1] gh-1 "+string(tc.terminal)) || !strings.Contains(p, "timed out: still running after 500ms") {
				t.Fatalf("progress does not say it timed out:\n%s", p)
			}
			if j, _ := json.Marshal(res); !strings.Contains(string(j), `"timed_out":true`) {
				t.Fatalf("--json row %s does not say it timed out", j)
			}
			// What the run started went with it.
			b, err := os.ReadFile(filepath.Join(dir, "grandchild"))
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || perr != nil {
				t.Fatalf("grandchild pid: %v %v", err, perr)
			}
			for deadline := time.Now().Add(3 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the run's child %d outlived it", pid)
				}
			}
		})
	}
}

// alive: pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestRunTimeoutDefault: a batch's runs are stopped after their wall
// clock plus the margin, or after --run-timeout, which may not cut a
// run's own budget short.
func TestRunTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		flag, wall, want time.Duration
		wantErr          string
	}{
		{0, 30 * time.Minute, 40 * time.Minute, ""},
		{0, 2 * time.Minute, 12 * time.Minute, ""},
		{45 * time.Minute, 30 * time.Minute, 45 * time.Minute, ""},
		{30 * time.Minute, 30 * time.Minute, 30 * time.Minute, ""},
		{5 * time.Minute, 30 * time.Minute, 0, "--run-timeout 5m0s is shorter than budget.wall_clock 30m0s"},
	} {
		got, err := runTimeout(tc.flag, tc.wall)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitCode(err) != exitUsage {
				t.Errorf("runTimeout(%s, %s) = %s, %v; want usage error %q", tc.flag, tc.wall, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("runTimeout(%s, %s) = %s, %v; want %s", tc.flag, tc.wall, got, err, tc.want)
		}
	}
}
