package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/runner"
)

// sh is an agent that is a shell script.
func sh(script string) *runner.Command {
	return &runner.Command{Argv: []string{"/bin/sh", "-c", script, "agent"}, Lookup: parent}
}

// parent is the environment the harness runs in: the three allowlisted names
// and things the agent must never see.
func parent(name string) (string, bool) {
	v, ok := map[string]string{
		"PATH":              os.Getenv("PATH"),
		"HOME":              "/home/op",
		"LANG":              "C.UTF-8",
		"SECRET_TOKEN":      "s3cr3t",
		"ANTHROPIC_API_KEY": "sk-ant-xxx",
		"GIT_DIR":           "/elsewhere/.git",
		"FIXRAIL_PLAN":      "/tmp/spoofed",
	}[name]
	return v, ok
}

func invocation(t *testing.T) runner.Invocation {
	t.Helper()
	out := t.TempDir()
	return runner.Invocation{
		Phase:      runner.Investigate,
		Worktree:   t.TempDir(),
		Prompt:     "fix the bug\n<<<untrusted nonce=ab12>>>\n$(rm -rf /) `id` 'quoted'\n",
		PlanPath:   filepath.Join(out, "PLAN.json"),
		ResultPath: filepath.Join(out, "result.json"),
		Timeout:    30 * time.Second,
		MaxTurns:   40,
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunContract checks what the agent gets: the prompt on stdin, the
// worktree as cwd, exactly the allowlisted environment, and nothing on argv.
func TestRunContract(t *testing.T) {
	// /proc/$$/environ is the environment the shell was started with,
	// before the shell adds PWD, SHLVL and the like to its own.
	const script = `cat > stdin.txt
pwd -P > cwd.txt
tr '\0' '\n' < /proc/$$/environ | sort > env.txt
echo "$#" > argc.txt
echo "agent says hi" >&2`
	tests := []struct {
		name   string
		phase  runner.Phase
		turns  int
		lookup func(string) (string, bool)
		env    []string // besides FIXRAIL_*
	}{
		{
			name:   "investigate",
			phase:  runner.Investigate,
			turns:  40,
			lookup: parent,
			env:    []string{"HOME=/home/op", "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH")},
		},
		{
			name:  "fix, LANG and HOME unset",
			phase: runner.Fix,
			turns: 7,
			lookup: func(name string) (string, bool) {
				if name == "PATH" || name == "SECRET_TOKEN" {
					return parent(name)
				}
				return "", false
			},
			env: []string{"PATH=" + os.Getenv("PATH")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := invocation(t)
			inv.Phase, inv.MaxTurns = tc.phase, tc.turns
			cmd := sh(script)
			cmd.Lookup = tc.lookup
			res, err := cmd.Run(t.Context(), inv)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.StderrTail != "agent says hi" {
				t.Errorf("StderrTail = %q, want the agent's stderr", res.StderrTail)
			}
			if res.NeverStarted || res.Metered {
				t.Errorf("NeverStarted %v, Metered %v: the command runner started an agent that reports no cost", res.NeverStarted, res.Metered)
			}
			if res.Duration <= 0 {
				t.Errorf("Duration = %v, want > 0", res.Duration)
			}
			if got := read(t, filepath.Join(inv.Worktree, "stdin.txt")); got != inv.Prompt {
				t.Errorf("stdin = %q, want the prompt %q", got, inv.Prompt)
			}
			wantCwd, err := filepath.EvalSymlinks(inv.Worktree)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(read(t, filepath.Join(inv.Worktree, "cwd.txt"))); got != wantCwd {
				t.Errorf("cwd = %q, want the worktree %q", got, wantCwd)
			}
			// The prompt is not on argv: the script got none past $0.
			if got := strings.TrimSpace(read(t, filepath.Join(inv.Worktree, "argc.txt"))); got != "0" {
				t.Errorf("agent got %s arguments, want 0", got)
			}
			want := append(slices.Clone(tc.env),
				"FIXRAIL_MAX_TURNS="+fmt.Sprint(tc.turns),
				"FIXRAIL_PHASE="+string(tc.phase),
				"FIXRAIL_PLAN="+inv.PlanPath,
				"FIXRAIL_RESULT="+inv.ResultPath,
			)
			sort.Strings(want)
			got := strings.Split(strings.TrimSuffix(read(t, filepath.Join(inv.Worktree, "env.txt")), "\n"), "\n")
			// The agent gets a throwaway TMPDIR (same value in TMP and TEMP),
			// a private fixrail directory that is gone once Run returns.
			var tmp string
			got = slices.DeleteFunc(got, func(kv string) bool {
				k, v, _ := strings.Cut(kv, "=")
				if k != "TMPDIR" && k != "TMP" && k != "TEMP" {
					return false
				}
				if tmp != "" && v != tmp {
					t.Errorf("%s = %q, want %q like the others", k, v, tmp)
				}
				tmp = v
				return true
			})
			if !strings.Contains(tmp, "fixrail-run-") {
				t.Errorf("TMPDIR = %q, want a private fixrail directory", tmp)
			} else if _, err := os.Stat(tmp); !os.IsNotExist(err) {
				t.Errorf("the agent's TMPDIR %s outlived the run: %v", tmp, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("agent environment (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-agent")
	tests := []struct {
		name    string
		cmd     *runner.Command
		timeout time.Duration
		// ctx builds the run's context; the returned func is deferred.
		ctx      func(context.Context) (context.Context, context.CancelFunc)
		want     runner.Kind
		detail   string // prefix of Error.Detail
		maxTaken time.Duration
	}{
		{name: "exit 3", cmd: sh("echo failing >&2; exit 3"), want: runner.Failed, detail: "agent exited 3"},
		{name: "exit 1 with output", cmd: sh("echo done; exit 1"), want: runner.Failed, detail: "agent exited 1"},
		{name: "SIGKILL", cmd: sh("kill -9 $$"), want: runner.Crashed, detail: "agent was killed"},
		{name: "SIGSEGV", cmd: sh("kill -SEGV $$"), want: runner.Crashed, detail: "agent was segmentation fault"},
		{
			name: "own timeout", cmd: sh("sleep 30"), timeout: 200 * time.Millisecond,
			want: runner.TimedOut, detail: "no result after ", maxTaken: 10 * time.Second,
		},
		{
			name: "run canceled mid-way", cmd: sh("sleep 30"),
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(200*time.Millisecond, cancel)
				return ctx, cancel
			},
			want: runner.Canceled, detail: "stopped with the run", maxTaken: 10 * time.Second,
		},
		{
			name: "run canceled before start", cmd: sh("touch ran.txt"),
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				return ctx, cancel
			},
			want: runner.Canceled, detail: "stopped with the run",
		},
		{
			// The run's wall clock is a deadline on ctx, not the
			// invocation's timeout: the run was stopped, the agent did not
			// time out.
			name: "wall clock", cmd: sh("sleep 30"),
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 200*time.Millisecond)
			},
			want: runner.Canceled, detail: "stopped with the run", maxTaken: 10 * time.Second,
		},
		{
			name: "missing binary", cmd: &runner.Command{Argv: []string{missing}, Lookup: parent},
			want: runner.Unavailable, detail: "start " + missing,
		},
		{
			name: "not on PATH", cmd: &runner.Command{Argv: []string{"fixrail-no-such-agent"}, Lookup: parent},
			want: runner.Unavailable, detail: "start fixrail-no-such-agent",
		},
		{
			name: "empty argv", cmd: &runner.Command{Lookup: parent},
			want: runner.Unavailable, detail: "start: empty argv",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			if tc.ctx != nil {
				ctx, cancel = tc.ctx(t.Context())
			}
			defer cancel()
			inv := invocation(t)
			if tc.timeout != 0 {
				inv.Timeout = tc.timeout
			}
			start := time.Now()
			_, err := tc.cmd.Run(ctx, inv)
			if tc.maxTaken != 0 && time.Since(start) > tc.maxTaken {
				t.Errorf("Run took %v, want the agent stopped within %v", time.Since(start), tc.maxTaken)
			}
			e, ok := runner.AsError(err)
			if !ok {
				t.Fatalf("Run error = %v, want a *runner.Error", err)
			}
			if e.Kind != tc.want || !strings.HasPrefix(e.Detail, tc.detail) {
				t.Errorf("Run error = {%s %q}, want {%s %q…}", e.Kind, e.Detail, tc.want, tc.detail)
			}
			if want := string(e.Kind) + ": " + e.Detail; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			// A process that died before answering is a transport
			// failure; an exit code, a deadline or a refusal is an answer.
			if got, want := runner.TransportFailure(err) != "", e.Kind == runner.Crashed; got != want {
				t.Errorf("transport failure = %v (%q), want %v", got, runner.TransportFailure(err), want)
			}
			if _, err := os.Stat(filepath.Join(inv.Worktree, "ran.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the agent ran although the run was already stopped")
			}
		})
	}
}

func TestAsError(t *testing.T) {
	inner := &runner.Error{Kind: runner.Failed, Detail: "agent exited 3"}
	tests := []struct {
		name string
		err  error
		want *runner.Error
	}{
		{"nil", nil, nil},
		{"other error", errors.New("boom"), nil},
		{"direct", inner, inner},
		{"wrapped", fmt.Errorf("investigate: %w", inner), inner},
		{"joined", errors.Join(errors.New("cleanup"), inner), inner},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := runner.AsError(tc.err)
			if ok != (tc.want != nil) || got != tc.want {
				t.Errorf("AsError(%v) = %v, %v; want %v", tc.err, got, ok, tc.want)
			}
		})
	}
}

// TestRunOutputTails: each stream keeps its last TailLines lines, at most
// TailBytes bytes of them, marked when cut; the output cap's drop is said.
func TestRunOutputTails(t *testing.T) {
	long := strings.Repeat("x", 1500)
	for _, tc := range []struct {
		name, script   string
		stdout, stderr string
		prefix, suffix string // of StderrTail, when stderr is empty
		bytes          int    // StderrTail's length without "…"
	}{
		{name: "lines", script: `i=0; while [ $i -lt 300 ]; do printf '%09d\n' $i >&2; i=$((i+1)); done; echo out1; echo out2`,
			stdout: "out1\nout2", prefix: "000000280\n", suffix: "000000299", bytes: 20*10 - 1},
		{name: "bytes", script: `for i in 1 2 3; do printf '%s\n' "` + long + `" >&2; done; printf 'no newline'`,
			stdout: "no newline", prefix: "…xxx", suffix: "xxx", bytes: runner.TailBytes},
		{name: "the reason an agent gives", script: `echo "model quota exhausted for org" >&2; exit 7`,
			stderr: "model quota exhausted for org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := sh(tc.script).Run(t.Context(), invocation(t))
			if res.StdoutTail != tc.stdout {
				t.Errorf("StdoutTail = %q, want %q", res.StdoutTail, tc.stdout)
			}
			if tc.stderr != "" {
				if res.StderrTail != tc.stderr {
					t.Errorf("StderrTail = %q, want %q", res.StderrTail, tc.stderr)
				}
				return
			}
			got := res.StderrTail
			if !strings.HasPrefix(got, tc.prefix) || !strings.HasSuffix(got, tc.suffix) || len(strings.TrimPrefix(got, "…")) != tc.bytes {
				t.Errorf("StderrTail = %.40q…%q (%d bytes), want %q…%q, %d bytes", got, got[max(0, len(got)-12):], len(got), tc.prefix, tc.suffix, tc.bytes)
			}
		})
	}
}

// TestRunNeverStarted: an agent that could not be started, or whose run
// was stopped before it could be, is NeverStarted — nothing can have been
// spent — and one that started and failed is not.
func TestRunNeverStarted(t *testing.T) {
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		agent *runner.Command
		never bool
	}{
		{"binary missing", t.Context(), &runner.Command{Argv: []string{"/nonexistent/fixrail-test-agent"}, Lookup: parent}, true},
		{"not on PATH", t.Context(), &runner.Command{Argv: []string{"fixrail-test-agent-not-installed"}, Lookup: parent}, true},
		{"stopped before it started", stopped, sh("echo ran > ran"), true},
		{"started and failed", t.Context(), sh("exit 7"), false},
		{"started and crashed", t.Context(), sh("kill -KILL $$"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := invocation(t)
			res, err := tc.agent.Run(tc.ctx, inv)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			if res.NeverStarted != tc.never {
				t.Errorf("NeverStarted = %v, want %v (%v)", res.NeverStarted, tc.never, err)
			}
			if _, serr := os.Stat(filepath.Join(inv.Worktree, "ran")); tc.never && serr == nil {
				t.Error("the agent ran")
			}
		})
	}
}
