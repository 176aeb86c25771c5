package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// ignoreDuration: durations vary; only their sign is checked where it
// matters. Started is checked on its own (TestRunStarted).
var ignoreDuration = cmpopts.IgnoreFields(sandbox.Result{}, "Duration", "Started")

func sh(script string, args ...string) []string {
	return append([]string{"/bin/sh", "-c", script, "sh"}, args...)
}

func TestRunResult(t *testing.T) {
	tests := []struct {
		name string
		cmd  sandbox.Cmd
		want sandbox.Result
	}{
		{
			name: "exit 0",
			cmd:  sandbox.Cmd{Args: []string{"true"}},
			want: sandbox.Result{ExitCode: 0},
		},
		{
			name: "exit 3",
			cmd:  sandbox.Cmd{Args: sh("exit 3")},
			want: sandbox.Result{ExitCode: 3},
		},
		{
			name: "both streams",
			cmd:  sandbox.Cmd{Args: sh("echo out; echo err >&2; exit 1")},
			want: sandbox.Result{ExitCode: 1, Stdout: "out\n", Stderr: "err\n"},
		},
		{
			name: "killed by SIGKILL",
			cmd:  sandbox.Cmd{Args: sh("echo before; kill -9 $$")},
			want: sandbox.Result{ExitCode: -1, Signal: "killed", Stdout: "before\n"},
		},
		{
			name: "killed by SIGTERM",
			cmd:  sandbox.Cmd{Args: sh("kill -TERM $$")},
			want: sandbox.Result{ExitCode: -1, Signal: "terminated"},
		},
		{
			name: "stdin is written then closed",
			cmd:  sandbox.Cmd{Args: []string{"cat"}, Stdin: []byte("hello\n")},
			want: sandbox.Result{Stdout: "hello\n"},
		},
		{
			name: "no stdin reads as empty",
			cmd:  sandbox.Cmd{Args: []string{"cat"}},
			want: sandbox.Result{},
		},
		{
			name: "invalid UTF-8 replaced",
			cmd:  sandbox.Cmd{Args: sh(`printf 'a\377b'; printf '\300\300x' >&2`)},
			want: sandbox.Result{Stdout: "a\uFFFDb", Stderr: "\uFFFDx"},
		},
		{
			name: "exact env",
			cmd:  sandbox.Cmd{Args: []string{"/usr/bin/env"}, Env: []string{"A=1", "B=two words"}},
			want: sandbox.Result{Stdout: "A=1\nB=two words\n"},
		},
		{
			name: "nil env is empty",
			cmd:  sandbox.Cmd{Args: []string{"/usr/bin/env"}},
			want: sandbox.Result{},
		},
		{
			name: "dir",
			cmd:  sandbox.Cmd{Args: []string{"/bin/pwd"}, Dir: "/"},
			want: sandbox.Result{Stdout: "/\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := sandbox.Run(t.Context(), tc.cmd)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreDuration); diff != "" {
				t.Errorf("Run result (-want +got):\n%s", diff)
			}
			if got.Duration <= 0 {
				t.Errorf("Duration = %v, want > 0", got.Duration)
			}
		})
	}
}

func TestRunRelativePathIsRelativeToDir(t *testing.T) {
	dir := t.TempDir()
	// A symlink rather than a freshly written script: exec of a file just
	// written can fail with ETXTBSY while other tests fork.
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sh", filepath.Join(dir, "bin", "shell")); err != nil {
		t.Fatal(err)
	}
	got, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: []string{"./bin/shell", "-c", "echo ok"},
		Dir:  dir,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(sandbox.Result{Stdout: "ok\n"}, got, ignoreDuration); diff != "" {
		t.Errorf("Run result (-want +got):\n%s", diff)
	}
}

func TestRunStartErrors(t *testing.T) {
	tests := []struct {
		name string
		cmd  sandbox.Cmd
	}{
		{"empty argv", sandbox.Cmd{}},
		{"missing binary in PATH", sandbox.Cmd{Args: []string{"fixrail-no-such-binary"}}},
		{"missing binary by path", sandbox.Cmd{Args: []string{"/nonexistent/fixrail"}}},
		{"missing dir", sandbox.Cmd{Args: []string{"true"}, Dir: "/nonexistent/dir"}},
		{"not executable", sandbox.Cmd{Args: []string{"/etc/passwd"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sandbox.Run(t.Context(), tc.cmd)
			if err == nil {
				t.Fatalf("Run = %+v, nil error; want an error", got)
			}
		})
	}
}

func TestRunNotStartedWhenContextDone(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()

	tests := []struct {
		name    string
		ctx     context.Context
		timeout time.Duration
		want    sandbox.Result
	}{
		{"canceled", canceled, 0, sandbox.Result{ExitCode: -1, Canceled: true}},
		{"deadline passed", expired, 0, sandbox.Result{ExitCode: -1, TimedOut: true}},
		{"negative timeout", t.Context(), -time.Second, sandbox.Result{ExitCode: -1, TimedOut: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			got, err := sandbox.Run(tc.ctx, sandbox.Cmd{
				Args:    []string{"/usr/bin/touch", marker},
				Timeout: tc.timeout,
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreDuration); diff != "" {
				t.Errorf("Run result (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("child ran (stat %s: %v)", marker, err)
			}
			if got.Started {
				t.Error("Started is true for a child that never started")
			}
		})
	}
}

// TestRunStarted: a child that started is Started however it ended (the
// ledger charges an agent that started, and only one that did).
func TestRunStarted(t *testing.T) {
	for _, script := range []string{"exit 0", "exit 7", "kill -KILL $$"} {
		got, err := sandbox.Run(t.Context(), sandbox.Cmd{Args: sh(script), Timeout: time.Minute})
		if err != nil {
			t.Fatalf("Run %q: %v", script, err)
		}
		if !got.Started {
			t.Errorf("Run %q: Started is false for a child that ran (%s)", script, got.Describe())
		}
	}
}

// TestRunKillsGroup checks that fixrail's kill reaches a background
// grandchild, which also holds the output pipes, and that Run still returns.
func TestRunKillsGroup(t *testing.T) {
	tests := []struct {
		name        string
		timeout     time.Duration // Cmd.Timeout
		ctxTimeout  time.Duration // deadline on the caller's ctx
		cancelOnPID bool          // cancel ctx once the grandchild's pid is written
		script      string
		want        sandbox.Result
	}{
		{
			name:    "own timeout",
			timeout: time.Second,
			script:  `sleep 30 & echo $! > "$1"; sleep 30`,
			want:    sandbox.Result{ExitCode: -1, Signal: "killed", TimedOut: true},
		},
		{
			name:       "ctx deadline",
			ctxTimeout: time.Second,
			script:     `sleep 30 & echo $! > "$1"; sleep 30`,
			want:       sandbox.Result{ExitCode: -1, Signal: "killed", TimedOut: true},
		},
		{
			name:        "ctx canceled",
			cancelOnPID: true,
			script:      `sleep 30 & echo $! > "$1"; sleep 30`,
			want:        sandbox.Result{ExitCode: -1, Signal: "killed", Canceled: true},
		},
		{
			name:    "leader exits normally",
			timeout: time.Minute,
			script:  `sleep 30 & echo $! > "$1"; echo done`,
			want:    sandbox.Result{ExitCode: 0, Stdout: "done\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.ctxTimeout != 0 {
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			if tc.cancelOnPID {
				go func() {
					waitForFile(pidFile, 10*time.Second)
					cancel()
				}()
			}

			start := time.Now()
			got, err := sandbox.Run(ctx, sandbox.Cmd{Args: sh(tc.script, pidFile), Timeout: tc.timeout})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreDuration); diff != "" {
				t.Errorf("Run result (-want +got):\n%s", diff)
			}
			if elapsed > 10*time.Second {
				t.Errorf("Run took %v, want it to return soon after the kill", elapsed)
			}
			pid := readPID(t, pidFile)
			if !eventuallyDead(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("grandchild %d still running after Run returned", pid)
			}
		})
	}
}

// TestRunKillsDetachedChild: a runner that leaves a child behind the way a
// daemon would — forked twice so init adopts it, HUP and TERM ignored, stdio
// closed so no pipe ties it to Run — still dies with the group when the runner
// exits. (Only setsid/setpgid leave the group; see the next test and the
// sandbox, whose pid namespace catches those too.)
func TestRunKillsDetachedChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	got, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: sh(`(trap '' HUP TERM; nohup sleep 30 </dev/null >/dev/null 2>&1 & echo $! > "$1") &
			while [ ! -s "$1" ]; do sleep 0.01; done; echo done`, pidFile),
		Env: []string{"PATH=" + os.Getenv("PATH")},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(sandbox.Result{Stdout: "done\n"}, got, ignoreDuration); diff != "" {
		t.Errorf("Run result (-want +got):\n%s", diff)
	}
	pid := readPID(t, pidFile)
	if !eventuallyDead(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("detached child %d outlived the runner", pid)
	}
}

// TestRunEscapedProcessCannotHoldRun: a process that left the group cannot be
// killed through it, but keeping our output pipe open must not stall Run.
func TestRunEscapedProcessCannotHoldRun(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatal("setsid (util-linux) is required: the test command's machine has it")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	got, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: sh(`setsid sleep 30 & echo $! > "$1"; echo done`, pidFile),
		// setsid is found through PATH.
		Env: []string{"PATH=" + os.Getenv("PATH")},
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(readPID(t, pidFile), syscall.SIGKILL) })
	if diff := cmp.Diff(sandbox.Result{Stdout: "done\n"}, got, ignoreDuration); diff != "" {
		t.Errorf("Run result (-want +got):\n%s", diff)
	}
	if elapsed > 10*time.Second {
		t.Errorf("Run took %v, want it bounded despite the escaped process", elapsed)
	}
}

// TestRunDeadlineBeatsUnreadStdin: a child that never reads its stdin must not
// keep Run blocked in the stdin write past the deadline.
func TestRunDeadlineBeatsUnreadStdin(t *testing.T) {
	start := time.Now()
	got, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args:    []string{"sleep", "30"},
		Stdin:   bytes.Repeat([]byte("x"), 10<<20),
		Timeout: 200 * time.Millisecond,
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := sandbox.Result{ExitCode: -1, Signal: "killed", TimedOut: true}
	if diff := cmp.Diff(want, got, ignoreDuration); diff != "" {
		t.Errorf("Run result (-want +got):\n%s", diff)
	}
	if elapsed > 5*time.Second {
		t.Errorf("Run took %v with a 200ms timeout", elapsed)
	}
}

func TestRunLargeStdinIsDelivered(t *testing.T) {
	in := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, beyond a pipe buffer
	got, err := sandbox.Run(t.Context(), sandbox.Cmd{Args: []string{"cat"}, Stdin: in})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got.Stdout != string(in) || !got.Success() {
		t.Errorf("Run = exit %d, %d bytes of stdout; want exit 0 and the %d bytes of stdin back",
			got.ExitCode, len(got.Stdout), len(in))
	}
}

func TestRunOutputCap(t *testing.T) {
	const (
		printed = 6 << 20
		limit   = 1 << 20
	)
	tests := []struct {
		name      string
		redirect  string
		outputCap int
		want      [4]int64 // len(Stdout), StdoutDropped, len(Stderr), StderrDropped
	}{
		{"stdout", "", limit, [4]int64{limit, printed - limit, 0, 0}},
		{"stderr", ">&2", limit, [4]int64{0, 0, limit, printed - limit}},
		{"default cap", "", 0, [4]int64{sandbox.DefaultOutputCap, printed - sandbox.DefaultOutputCap, 0, 0}},
		{"under the cap", "", printed + 1, [4]int64{printed, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := sandbox.Run(t.Context(), sandbox.Cmd{
				Args:      sh(fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a %s", printed, tc.redirect)),
				Env:       []string{"PATH=" + os.Getenv("PATH")},
				OutputCap: tc.outputCap,
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			sizes := [4]int64{int64(len(got.Stdout)), got.StdoutDropped, int64(len(got.Stderr)), got.StderrDropped}
			if diff := cmp.Diff(tc.want, sizes); diff != "" {
				t.Errorf("kept and dropped sizes (-want +got):\n%s", diff)
			}
			if strings.Trim(got.Stdout+got.Stderr, "a") != "" {
				t.Errorf("kept output is not the child's first bytes")
			}
			if !got.Success() {
				t.Errorf("Run = %+v, want success", got)
			}
		})
	}
}

func TestResultOutput(t *testing.T) {
	tests := []struct {
		stdout, stderr, want string
	}{
		{"", "", ""},
		{"out\n", "", "out\n"},
		{"", "err\n", "err\n"},
		{"out\n", "err\n", "out\nerr\n"},
		{"out", "err", "out\nerr"},
	}
	for _, tc := range tests {
		r := sandbox.Result{Stdout: tc.stdout, Stderr: tc.stderr}
		if got := r.Output(); got != tc.want {
			t.Errorf("Result{Stdout: %q, Stderr: %q}.Output() = %q, want %q", tc.stdout, tc.stderr, got, tc.want)
		}
	}
}

func TestResultSuccess(t *testing.T) {
	tests := []struct {
		name string
		r    sandbox.Result
		want bool
	}{
		{"exit 0", sandbox.Result{}, true},
		{"exit 0 with dropped output", sandbox.Result{StdoutDropped: 1}, true},
		{"exit 1", sandbox.Result{ExitCode: 1}, false},
		{"signal", sandbox.Result{ExitCode: -1, Signal: "killed"}, false},
		{"timed out", sandbox.Result{TimedOut: true}, false},
		{"canceled", sandbox.Result{Canceled: true}, false},
		{"signal with exit 0", sandbox.Result{Signal: "killed"}, false},
	}
	for _, tc := range tests {
		if got := tc.r.Success(); got != tc.want {
			t.Errorf("%s: Success() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// waitForFile polls until path is non-empty or the limit passes.
func waitForFile(path string, limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("grandchild pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("grandchild pid %q: %v", b, err)
	}
	return pid
}

// eventuallyDead reports whether pid is gone or a zombie within a few seconds.
// A zombie counts as dead: the orphan is reaped by whatever init this machine
// has, if it reaps at all, and that is no concern of Run's.
func eventuallyDead(pid int) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// The state follows the parenthesised command name, which may itself
		// contain ") ".
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			return true
		}
	}
	return false
}
