package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// The helper is this test binary run again as a stand-in for fixrail: it runs
// one command through sandbox.Run and waits to be killed.
const helperEnv = "FIXRAIL_SANDBOX_DIE_HELPER"

func TestMain(m *testing.M) {
	// Sandboxed commands with an egress rail run behind this binary.
	egress.MaybeForward()
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(dieHelper(mode))
	}
	if probe := os.Getenv(probeEnv); probe != "" {
		os.Exit(railProbe(probe))
	}
	os.Exit(m.Run())
}

// dieHelper runs `sh -c 'sleep TOKEN & echo started > FILE; wait'` with the
// sandbox (mode "sandboxed") or without it, and never returns on its own: the
// test SIGKILLs it.
func dieHelper(mode string) int {
	wt, token := os.Getenv("HELPER_WT"), os.Getenv("HELPER_TOKEN")
	c := sandbox.Cmd{
		Args: sh(`sleep "$1" & echo started > "$2"; wait`, token, filepath.Join(wt, "started")),
		Dir:  wt,
		Env:  []string{"PATH=/usr/bin:/bin"},
	}
	switch mode {
	case "sandboxed":
		c.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}}
	case "egress":
		c.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}, Egress: &egress.Policy{}}
	}
	_, err := sandbox.Run(context.Background(), c)
	fmt.Fprintln(os.Stderr, "helper: Run returned", err)
	return 3
}

// withToken lists the pids whose command line holds token.
func withToken(token string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(token)) && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

func commName(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// TestTreeDiesWithKilledFixrail: kill -9 of the process that called Run
// (a helper standing in for fixrail) takes the command's whole tree with
// it when sandboxed — the shell and the grandchild it backgrounded.
// Unsandboxed, PR_SET_PDEATHSIG kills the direct child; the grandchild
// survives, the documented residual, and is the control that shows the
// sandbox is what kills it. With an egress rail the forwarder dies too,
// and the proxy, which answered on its socket before the kill, answers no
// more.
func TestTreeDiesWithKilledFixrail(t *testing.T) {
	for _, mode := range []string{"sandboxed", "egress", "unsandboxed"} {
		t.Run(mode, func(t *testing.T) {
			if mode != "unsandboxed" {
				requireBwrap(t)
			}
			n, err := rand.Int(rand.Reader, big.NewInt(1e9))
			if err != nil {
				t.Fatal(err)
			}
			token := fmt.Sprintf("3000.%09d", n) // a sleep duration no other process has
			wt := t.TempDir()
			helper := exec.Command(os.Args[0], "-test.run=^$")
			tmp := t.TempDir() // the helper's TMPDIR, where its proxy's socket goes
			helper.Env = append(os.Environ(), helperEnv+"="+mode, "HELPER_WT="+wt, "HELPER_TOKEN="+token, "TMPDIR="+tmp)
			var stderr bytes.Buffer
			helper.Stderr = &stderr
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				for _, pid := range withToken(token) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			waitForFile(filepath.Join(wt, "started"), 10*time.Second)
			var shells, sleeps, forwarders []int
			// The backgrounded subshell may not have exec'd sleep yet.
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				shells, sleeps, forwarders = nil, nil, nil
				for _, pid := range withToken(token) {
					switch commName(pid) {
					case "sh":
						shells = append(shells, pid)
					case "sleep":
						sleeps = append(sleeps, pid)
					case egress.ForwarderName[:15]: // comm is 15 bytes at most
						forwarders = append(forwarders, pid)
					}
				}
				if len(shells) == 1 && len(sleeps) == 1 {
					break
				}
			}
			if len(shells) != 1 || len(sleeps) != 1 {
				_ = helper.Process.Kill()
				_ = helper.Wait()
				t.Fatalf("want one shell and one sleep with the token, got %v %v (helper: %s)", shells, sleeps, stderr.String())
			}
			var socket string
			if mode == "egress" {
				socks, _ := filepath.Glob(filepath.Join(tmp, "fxe*", "s"))
				if len(forwarders) != 1 || len(socks) != 1 {
					t.Fatalf("want one forwarder and one proxy socket, got %v %v", forwarders, socks)
				}
				socket = socks[0]
				if got := proxyAnswer(socket); !strings.HasPrefix(got, "HTTP/1.1 403") {
					t.Fatalf("the live proxy answered %q, want a refusal", got)
				}
			}
			if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()
			if !eventuallyDead(shells[0]) {
				t.Errorf("the direct child (sh, pid %d) outlived the SIGKILLed parent", shells[0])
			}
			gone := eventuallyDead(sleeps[0])
			if mode == "egress" {
				if !eventuallyDead(forwarders[0]) {
					t.Errorf("the forwarder (pid %d) outlived the SIGKILLed parent", forwarders[0])
				}
				if got := proxyAnswer(socket); got != "" {
					t.Errorf("the proxy answered %q after its process was killed", got)
				}
			}
			switch {
			case mode != "unsandboxed" && !gone:
				t.Errorf("the grandchild (sleep, pid %d) outlived the SIGKILLed parent", sleeps[0])
			case mode == "unsandboxed" && gone:
				t.Errorf("unsandboxed, the grandchild died too: the documented residual is gone, update the docs")
			}
		})
	}
}

// proxyAnswer asks the proxy on socket to tunnel to a port nothing lists,
// and returns its first response line, or "" when nothing answers.
func proxyAnswer(socket string) string {
	c, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, "CONNECT 192.0.2.1:9 HTTP/1.1\r\nHost: x\r\n\r\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestRunSurvivesThreadExits: goroutines that lock their OS thread and
// return end that thread; if one were the thread that forked the child,
// Pdeathsig would kill the child mid-run. Run holds its thread, so the
// child runs to its end.
func TestRunSurvivesThreadExits(t *testing.T) {
	for range 3 {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				var inner sync.WaitGroup
				for range 8 {
					inner.Go(func() { runtime.LockOSThread() }) // returns locked: the thread ends
				}
				inner.Wait()
			}
		})
		res, err := sandbox.Run(t.Context(), sandbox.Cmd{Args: sh("sleep 0.5; echo done")})
		close(done)
		wg.Wait()
		if err != nil || !res.Success() || res.Stdout != "done\n" {
			t.Fatalf("Run = %+v, %v: the child was killed when a thread exited", res, err)
		}
	}
}
