package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// probeEnv runs this test binary as a probe (TestMain): "keyring:DESC"
// tries the kernel keyrings, "limits" reports and tries to raise its
// resource limits.
const probeEnv = "FIXRAIL_SANDBOX_PROBE"

func railProbe(probe string) int {
	outcome := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	switch mode, arg, _ := strings.Cut(probe, ":"); mode {
	case "keyring":
		buf := make([]byte, 4096)
		// What `keyctl show @s` reads first.
		_, err := unix.KeyctlBuffer(unix.KEYCTL_READ, unix.KEY_SPEC_SESSION_KEYRING, buf, 0)
		fmt.Printf("read @s: %s\n", outcome(err))
		id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", arg, 0)
		fmt.Printf("search: %s\n", outcome(err))
		if err == nil {
			n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
			fmt.Printf("read key: %s\n", outcome(err))
			if err == nil {
				fmt.Printf("payload: %s\n", buf[:min(n, len(buf))])
			}
		}
		_, err = unix.AddKey("user", arg+"-planted", []byte("planted"), unix.KEY_SPEC_SESSION_KEYRING)
		fmt.Printf("add_key: %s\n", outcome(err))
		_, err = unix.RequestKey("user", arg, "", unix.KEY_SPEC_SESSION_KEYRING)
		fmt.Printf("request_key: %s\n", outcome(err))
		// io_uring_setup with no entries: EINVAL where it is allowed.
		_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 0, 0, 0)
		fmt.Printf("io_uring_setup: %s\n", outcome(errnoErr(errno)))
	case "limits":
		for _, r := range []struct {
			name string
			res  int
		}{{"nproc", unix.RLIMIT_NPROC}, {"fsize", unix.RLIMIT_FSIZE}, {"core", unix.RLIMIT_CORE}} {
			var l unix.Rlimit
			if err := unix.Getrlimit(r.res, &l); err != nil {
				fmt.Printf("%s: %v\n", r.name, err)
				continue
			}
			fmt.Printf("%s: %d %d\n", r.name, l.Cur, l.Max)
			if l.Max != unix.RLIM_INFINITY {
				raised := unix.Rlimit{Cur: l.Max + 1, Max: l.Max + 1}
				fmt.Printf("raise %s: %s\n", r.name, outcome(unix.Setrlimit(r.res, &raised)))
			}
		}
		f, err := os.Create(arg)
		if err == nil {
			_, err = f.Write(make([]byte, 2<<20))
			f.Close()
		}
		fmt.Printf("write 2 MiB: %s\n", outcome(err))
	case "cap":
		return capHelper(arg)
	default:
		fmt.Fprintf(os.Stderr, "unknown probe %q\n", probe)
		return 2
	}
	return 0
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// probeCmd runs this test binary as probe, in wt, sandboxed when sandboxed.
func probeCmd(t *testing.T, probe, wt string, sandboxed bool) sandbox.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := sandbox.Cmd{Args: []string{self}, Dir: wt, Env: []string{"PATH=/usr/bin:/bin", probeEnv + "=" + probe}, Timeout: time.Minute}
	if sandboxed {
		c.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}, RO: []string{self}}
	}
	return c
}

// TestSandboxKeyrings: the kernel keyrings are not namespaced, and a
// sandboxed command possesses the session keyring of whoever started
// fixrail: without the system call filter it finds and reads a key an
// operator's tool cached there (the unsandboxed control does, from the
// same session keyring). With it keyctl, add_key and request_key are
// refused (EPERM), and so is io_uring_setup, the filter's other probe
// that a test can tell from the kernel's own answer.
func TestSandboxKeyrings(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	desc := fmt.Sprintf("fixrail-test-%d", time.Now().UnixNano())
	payload := "CANARY-keyring-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	type run struct {
		res sandbox.Result
		err error
	}
	runs := make(chan run, 2)
	setup := make(chan error, 1)
	go func() {
		// Never unlocked: the thread's own session keyring ends with it,
		// and the host's session keyring is untouched. Run forks from
		// this thread, so the command inherits the ring.
		runtime.LockOSThread()
		if _, err := unix.KeyctlJoinSessionKeyring(desc); err != nil {
			setup <- fmt.Errorf("join a session keyring: %w", err)
			return
		}
		if _, err := unix.AddKey("user", desc, []byte(payload), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			setup <- fmt.Errorf("add a key: %w", err)
			return
		}
		setup <- nil
		for _, sandboxed := range []bool{false, true} {
			res, err := sandbox.Run(t.Context(), probeCmd(t, "keyring:"+desc, wt, sandboxed))
			runs <- run{res, err}
		}
	}()
	if err := <-setup; err != nil {
		t.Fatalf("the kernel keyrings cannot be tried here: %v", err)
	}
	control := <-runs
	if control.err != nil || !strings.Contains(control.res.Stdout, "payload: "+payload) {
		t.Fatalf("control: unsandboxed, the probe does not read the key, so the test cannot see a leak: %+v, %v", control.res, control.err)
	}
	got := <-runs
	if got.err != nil || !got.res.Success() || !got.res.Sandboxed {
		t.Fatalf("Run = %+v, %v", got.res, got.err)
	}
	if strings.Contains(got.res.Stdout, payload) {
		t.Errorf("the sandboxed command read the key from the operator's session keyring:\n%s", got.res.Stdout)
	}
	for _, call := range []string{"read @s", "search", "add_key", "request_key", "io_uring_setup"} {
		if want := call + ": " + unix.EPERM.Error() + "\n"; !strings.Contains(got.res.Stdout, want) {
			t.Errorf("%s in the sandbox: want EPERM, got\n%s", call, got.res.Stdout)
		}
	}
}

// TestSandboxLimits: the command runs with its file-size cap and core
// files off, soft and hard, and cannot raise either hard limit; a file
// grows no further than the cap. Unsandboxed (the control) the limits are
// fixrail's own.
func TestSandboxLimits(t *testing.T) {
	requireBwrap(t)
	const procs, fsize = 512, 1 << 20
	sandbox.SetLimits(t, procs, fsize)
	wt := t.TempDir()
	big := filepath.Join(wt, "big")
	res, err := sandbox.Run(t.Context(), probeCmd(t, "limits:"+big, wt, true))
	if err != nil || !res.Success() || !res.Sandboxed {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	eperm := unix.EPERM.Error()
	for _, want := range []string{
		fmt.Sprintf("nproc: %d %d\n", procs, procs), "raise nproc: " + eperm,
		fmt.Sprintf("fsize: %d %d\n", fsize, fsize), "raise fsize: " + eperm,
		"core: 0 0\n", "raise core: " + eperm,
		"write 2 MiB: write " + big + ": " + unix.EFBIG.Error(),
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("the sandboxed command's limits: want %q in\n%s", want, res.Stdout)
		}
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != fsize {
		t.Errorf("the file grew past the cap: %v, %v", fi, err)
	}

	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &own); err != nil {
		t.Fatal(err)
	}
	res, err = sandbox.Run(t.Context(), probeCmd(t, "limits:"+big, wt, false))
	if err != nil || !strings.Contains(res.Stdout, fmt.Sprintf("fsize: %d %d\n", own.Cur, own.Max)) {
		t.Errorf("control: unsandboxed, the limits are not fixrail's own (%d %d): %+v, %v", own.Cur, own.Max, res, err)
	}
}

// TestSandboxProcessCap: a fork bomb in the sandbox stops at the sandbox's
// process cap (the shell fails to fork), while the host — a process of
// the same uid — still starts processes and keeps its own limit. Without
// the cap all 200 processes start. The kernel exempts uid 0 from
// RLIMIT_NPROC, in a user namespace too, so as root the test runs the
// scenario in a helper as nobody.
func TestSandboxProcessCap(t *testing.T) {
	requireBwrap(t)
	dir, err := os.MkdirTemp("", "fxcap")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	wt := filepath.Join(dir, "wt")
	bin := filepath.Join(dir, "sandbox.test")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(wt, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, wt} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=/usr/bin:/bin", probeEnv + "=cap:" + wt}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	report := string(out)
	t.Logf("helper:\n%s", report)
	for _, want := range []string{"sandbox: released\n", "host: ok\n", "own limit: unchanged\n"} {
		if !strings.Contains(report, want) {
			t.Errorf("want %q in the helper's report:\n%s", want, report)
		}
	}
	var n int
	if _, err := fmt.Sscanf(report[strings.Index(report, "count: "):], "count: %d", &n); err != nil || n >= capBomb || n > capProcs || !strings.Contains(report, "fork") {
		t.Errorf("the fork bomb started %d processes past a cap of %d:\n%s", n, capProcs, report)
	}
}

const capProcs, capBomb = 32, 200

// capHelper runs TestSandboxProcessCap's scenario in wt and reports it.
func capHelper(wt string) int {
	sandbox.SetProcessCap(capProcs)
	var before unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &before); err != nil {
		fmt.Println(err)
		return 1
	}
	// The subshell forks until it cannot, and dies of it; the outer shell
	// says so and waits on the fifo with builtins only, holding the
	// sandbox at its cap while the host starts a process.
	script := `mkfifo "$1/go" || exit 1
		( i=0; while [ $i -lt ` + strconv.Itoa(capBomb) + ` ]; do sleep 300 & i=$((i+1)); echo $i > "$1/count"; done ) 2>"$1/err"
		echo full > "$1/full"
		read x < "$1/go"
		echo released`
	done := make(chan sandbox.Result, 1)
	go func() {
		res, err := sandbox.Run(context.Background(), sandbox.Cmd{Args: sh(script, wt), Dir: wt, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute,
			Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}}})
		if err != nil {
			fmt.Println("Run:", err)
		}
		done <- res
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(wt, "full")); err == nil {
			break
		}
		select {
		case res := <-done:
			fmt.Printf("the sandbox ended before it was full: %+v\n", res)
			return 1
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fmt.Println("the sandbox did not fill up in 30 s")
			return 1
		}
	}
	if out, err := exec.Command("/bin/sh", "-c", "echo host").CombinedOutput(); err != nil {
		fmt.Printf("host: %v %s\n", err, out)
	} else {
		fmt.Println("host: ok")
	}
	go func() {
		// Opening blocks until the shell reads; Run's end unblocks it.
		if f, err := os.OpenFile(filepath.Join(wt, "go"), os.O_WRONLY, 0); err == nil {
			f.WriteString("go\n")
			f.Close()
		}
	}()
	res := <-done
	fmt.Printf("sandbox: %s", res.Stdout)
	b, _ := os.ReadFile(filepath.Join(wt, "count"))
	fmt.Printf("count: %s\n", strings.TrimSpace(string(b)))
	errs, _ := os.ReadFile(filepath.Join(wt, "err"))
	fmt.Printf("stderr: %q\n", errs)
	var after unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &after); err != nil || after != before {
		fmt.Printf("own limit: changed %+v → %+v, %v\n", before, after, err)
	} else {
		fmt.Println("own limit: unchanged")
	}
	return 0
}

// TestSandboxNoNestedUserns: a sandboxed command cannot create a user
// namespace of its own (in one it would hold every capability over new
// namespaces, and reach the kernel code they guard), while the same
// command outside the sandbox can (the control: this kernel allows it).
// Where bubblewrap cannot disable them, NestedUserns says so and the test
// is skipped.
func TestSandboxNoNestedUserns(t *testing.T) {
	requireBwrap(t)
	unshare, err := exec.LookPath("unshare")
	requireSandboxFeature(t, err == nil, "unshare(1) (util-linux) is missing")
	out, err := exec.Command(unshare, "--user", "true").CombinedOutput()
	requireSandboxFeature(t, err == nil, fmt.Sprintf("this host does not let a process create a user namespace (the control): %v %s", err, out))
	requireSandboxFeature(t, !sandbox.NestedUserns(), "this bubblewrap cannot disable nested user namespaces (older than 0.8, or setuid)")
	wt := t.TempDir()
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: []string{unshare, "--user", "true"}, Dir: wt, Env: []string{"PATH=/usr/bin:/bin"},
		Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}},
	})
	if err != nil || !res.Sandboxed {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if res.Success() {
		t.Errorf("unshare --user succeeded inside the sandbox: %s", res.Output())
	}
}

// TestSandboxTmpfsBounded: a tmpfs lives in the host's memory, so each one
// the sandbox mounts is bounded; writing past the bound into the
// sandbox's HOME fails (ENOSPC) instead of taking the host's memory.
// Without the bound the whole 4 MiB is written.
func TestSandboxTmpfsBounded(t *testing.T) {
	requireBwrap(t)
	requireSandboxFeature(t, sandbox.TmpfsBounded(), "this bubblewrap cannot bound a tmpfs (older than 0.8)")
	sandbox.SetTmpfsSize(t, 1<<20)
	wt := t.TempDir()
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: []string{"/bin/sh", "-c", `dd if=/dev/zero of="$HOME/fill" bs=65536 count=64 2>&1; echo "rc=$?"; wc -c < "$HOME/fill"`},
		Dir:  wt, Env: []string{"PATH=/usr/bin:/bin", "HOME=/home/sandbox"},
		Sandbox: &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}},
	})
	if err != nil || !res.Sandboxed {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	out := res.Output()
	if !strings.Contains(out, "No space left on device") || strings.Contains(out, "rc=0") {
		t.Errorf("filling HOME past the bound did not fail:\n%s", out)
	}
	if strings.Contains(out, "\n4194304") {
		t.Errorf("the whole 4 MiB was written into the sandbox's HOME:\n%s", out)
	}
}

// requireSandboxFeature fails the test when what it checks is missing, as
// requireBwrap does: a rail whose test is skipped proves nothing, so CI
// installs a bubblewrap that has it. FIXRAIL_SANDBOX_TESTS=skip skips
// knowingly on a machine that cannot.
func requireSandboxFeature(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("FIXRAIL_SANDBOX_TESTS") == "skip" {
		t.Skip(why + ", and FIXRAIL_SANDBOX_TESTS=skip")
	}
	t.Fatal(why + "; this rail's test needs it (bubblewrap 0.8 or later, unprivileged user namespaces), or FIXRAIL_SANDBOX_TESTS=skip to skip it knowingly")
}
