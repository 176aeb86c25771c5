package cli

import (
	"errors"
	"os"
	"os/exec"
	"runtime/debug"
	"syscall"
	"testing"
)

func TestMemLimit(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		name       string
		lookup     func(string) (string, bool)
		cgroup, as int64
		want       int64
		set        bool
	}{
		{"nothing known", none, 0, 0, defaultMemLimit, true},
		{"the operator's GOMEMLIMIT stands", func(k string) (string, bool) { return "300MiB", k == "GOMEMLIMIT" }, 0, 0, 0, false},
		{"an empty GOMEMLIMIT is none", func(k string) (string, bool) { return "", k == "GOMEMLIMIT" }, 0, 0, defaultMemLimit, true},
		{"half a small cgroup", none, 512 << 20, 0, 256 << 20, true},
		{"a large cgroup leaves the default", none, 16 << 30, 0, defaultMemLimit, true},
		{"half an address-space limit", none, 0, 1500 << 20, 750 << 20, true},
		{"the least of both", none, 1 << 30, 800 << 20, 400 << 20, true},
		{"exactly twice the default", none, 2 << 30, 0, defaultMemLimit, true},
	} {
		got, set := memLimit(tc.lookup, tc.cgroup, tc.as)
		if got != tc.want || set != tc.set {
			t.Errorf("%s: memLimit = %d, %v; want %d, %v", tc.name, got, set, tc.want, tc.set)
		}
	}
}

// TestFatalIsNotUsage: a fatal runtime error (here a stack overflow) in a
// process that ran guardRuntime ends in SIGABRT, never exit 2, which the
// exit table keeps for usage errors; without it Go exits 2.
func TestFatalIsNotUsage(t *testing.T) {
	if os.Getenv("FIXRAIL_TEST_FATAL") != "" {
		if os.Getenv("FIXRAIL_TEST_FATAL") == "guarded" {
			if err := hideEnvironment(); err != nil { // as run does: no core
				os.Exit(9)
			}
			guardRuntime()
		}
		debug.SetMaxStack(1 << 20)
		var recurse func(int) int
		recurse = func(n int) int { var pad [256]byte; pad[n%256] = byte(n); return recurse(n+1) + int(pad[0]) }
		recurse(0)
		os.Exit(0)
	}
	for _, tc := range []struct {
		mode   string
		signal bool
	}{{"bare", false}, {"guarded", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFatalIsNotUsage$")
		cmd.Env = append(os.Environ(), "FIXRAIL_TEST_FATAL="+tc.mode, "GOTRACEBACK=")
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: err = %v, want the process to fail", tc.mode, err)
		}
		ws := ee.Sys().(syscall.WaitStatus)
		switch {
		case tc.signal && !(ws.Signaled() && ws.Signal() == syscall.SIGABRT):
			t.Errorf("%s: %v, want SIGABRT", tc.mode, ws)
		case !tc.signal && ws.ExitStatus() != 2:
			t.Errorf("%s: %v, want exit 2 (Go's own, which this test shows guardRuntime changes)", tc.mode, ws)
		}
	}
}
