package sandbox_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// requireBwrap fails the test where bubblewrap is missing or unusable: these
// are the containment canaries, and a canary that skips guards nothing. The
// test command installs bubblewrap; set FIXRAIL_SANDBOX_TESTS=skip to skip
// them knowingly on a machine that cannot run it.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, ok := sandbox.Detect(); ok {
		return
	}
	if os.Getenv("FIXRAIL_SANDBOX_TESTS") == "skip" {
		t.Skip("bubblewrap unusable here and FIXRAIL_SANDBOX_TESTS=skip")
	}
	t.Fatal("bubblewrap (bwrap) is missing or cannot create a sandbox here; the containment canaries need it " +
		"(apt-get install bubblewrap, or FIXRAIL_SANDBOX_TESTS=skip to skip them knowingly)")
}

// hostile is a fake operator: a HOME holding credentials (fixrail's own
// HOME, via t.Setenv), a worktree, and a sibling directory outside it.
type hostile struct {
	home, worktree, sibling string
	canaries                map[string]string // path → content that must stay untouched and unread
}

func newHostile(t *testing.T) *hostile {
	t.Helper()
	root := t.TempDir()
	h := &hostile{
		home:     filepath.Join(root, "home", "operator"),
		worktree: filepath.Join(root, "work", "wt"),
		sibling:  filepath.Join(root, "work", "sibling"),
		canaries: map[string]string{},
	}
	for _, d := range []string{h.home, h.worktree, h.sibling} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for i, rel := range []string{".ssh/id_ed25519", ".config/gh/hosts.yml", ".aws/credentials", ".gitconfig", ".cargo/credentials.toml"} {
		h.plant(t, filepath.Join(h.home, rel), fmt.Sprintf("CANARY-home-%d-%d", i, time.Now().UnixNano()))
	}
	h.plant(t, filepath.Join(h.sibling, "canary.txt"), fmt.Sprintf("CANARY-sibling-%d", time.Now().UnixNano()))
	t.Setenv("HOME", h.home)
	return h
}

func (h *hostile) plant(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	h.canaries[path] = content
}

// changed reports the canaries that were changed or removed.
func (h *hostile) changed() []string {
	var bad []string
	for p, want := range h.canaries {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			bad = append(bad, p)
		}
	}
	return bad
}

// leaked reports the canaries whose content appears in out.
func (h *hostile) leaked(out string) []string {
	var bad []string
	for p, c := range h.canaries {
		if strings.Contains(out, c) {
			bad = append(bad, p)
		}
	}
	return bad
}

func (h *hostile) env(t *testing.T) []string {
	t.Helper()
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func (h *hostile) spec() *sandbox.Spec {
	return &sandbox.Spec{Mode: sandbox.Required, RW: []string{h.worktree}}
}

// TestSandboxHidesOperatorHome: a build script that reads the operator's SSH
// key, gh token, AWS and cargo credentials — through ~, through the absolute
// path, through the password database's home, and through a toolchain that
// PATH finds in the home (~/.cargo/bin) — finds none of them. Unsandboxed,
// the same script reads them all (the control: the script does reach).
func TestSandboxHidesOperatorHome(t *testing.T) {
	requireBwrap(t)
	h := newHostile(t)
	for _, d := range []string{".cargo/bin", "bin"} {
		if err := os.MkdirAll(filepath.Join(h.home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", filepath.Join(h.home, ".cargo/bin")+":"+filepath.Join(h.home, "bin")+":"+os.Getenv("PATH"))
	script := `for f in ~/.ssh/id_ed25519 ~/.config/gh/hosts.yml ~/.aws/credentials ~/.gitconfig ~/.cargo/credentials.toml \
			"$1/.ssh/id_ed25519" "$1/.config/gh/hosts.yml" "$1/.aws/credentials" "$1/.gitconfig" "$1/.cargo/credentials.toml" \
			"$(getent passwd "$(id -u)" | cut -d: -f6)/.ssh/id_ed25519" /proc/1/root"$1/.ssh/id_ed25519"; do
			cat "$f" 2>/dev/null && echo
		done
		ls -A ~ 2>&1
		exit 0`
	for _, sandboxed := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			c := sandbox.Cmd{Args: sh(script, h.home), Dir: h.worktree, Env: h.env(t)}
			if sandboxed {
				c.Sandbox = h.spec()
			}
			res, err := sandbox.Run(t.Context(), c)
			if err != nil || !res.Success() || res.Sandboxed != sandboxed {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			leaked := h.leaked(res.Output())
			switch {
			case sandboxed && len(leaked) > 0:
				t.Errorf("the sandboxed script read %v:\n%s", leaked, res.Output())
			case sandboxed && strings.TrimSpace(res.Stdout) != "":
				t.Errorf("the sandbox's HOME is not empty:\n%s", res.Stdout)
			case !sandboxed && len(leaked) != len(h.canaries)-1:
				t.Errorf("control: the unsandboxed script read %v, want every home canary; the test cannot see a leak:\n%s", leaked, res.Output())
			}
		})
	}
}

// TestSandboxWritesStayInWorktree: writes to the operator's home, a sibling
// of the worktree, the toolchain and /tmp fail or land in throwaway mounts;
// every canary is untouched and nothing new appears outside the worktree. The
// unsandboxed control shows that the script's writes do land.
func TestSandboxWritesStayInWorktree(t *testing.T) {
	requireBwrap(t)
	script := `echo inside > ./written
		echo pwned > "$1/.ssh/id_ed25519"
		echo pwned > "$1/.gitconfig"
		mkdir -p ~/.ssh && echo pwned > ~/.ssh/authorized_keys
		echo pwned > "$1/.ssh/authorized_keys"
		echo pwned > "$2/canary.txt"
		echo pwned > "$2/new"
		echo pwned > ../escaped
		if [ "$3" = system ]; then echo pwned > /usr/fixrail-pwned; echo pwned > /etc/fixrail-pwned; fi
		echo pwned > /tmp/fixrail-canary-` + fmt.Sprint(os.Getpid()) + `
		exit 0`
	for _, sandboxed := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			h := newHostile(t)
			// The control does not try the toolchain: it would succeed as root.
			c := sandbox.Cmd{Args: sh(script, h.home, h.sibling, "no-system"), Dir: h.worktree, Env: h.env(t)}
			if sandboxed {
				c.Args = sh(script, h.home, h.sibling, "system")
				c.Sandbox = h.spec()
			}
			hostTmp := filepath.Join(os.TempDir(), fmt.Sprintf("fixrail-canary-%d", os.Getpid()))
			t.Cleanup(func() { os.Remove(hostTmp) })
			res, err := sandbox.Run(t.Context(), c)
			if err != nil || !res.Success() {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if b, err := os.ReadFile(filepath.Join(h.worktree, "written")); err != nil || string(b) != "inside\n" {
				t.Errorf("write inside the worktree: %q, %v; want it to land", b, err)
			}
			outside := h.changed()
			for _, p := range []string{
				filepath.Join(h.home, ".ssh", "authorized_keys"), filepath.Join(h.sibling, "new"),
				filepath.Join(filepath.Dir(h.worktree), "escaped"), "/usr/fixrail-pwned", "/etc/fixrail-pwned", hostTmp,
			} {
				if _, err := os.Lstat(p); err == nil {
					outside = append(outside, p)
					if strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/etc/") {
						os.Remove(p)
					}
				}
			}
			if sandboxed && len(outside) > 0 {
				t.Errorf("the sandboxed script wrote outside the worktree: %v\n%s", outside, res.Output())
			}
			if !sandboxed && len(outside) < 7 {
				t.Errorf("control: the unsandboxed script changed only %v; the test cannot see a write", outside)
			}
		})
	}
}

// TestSandboxNetwork: a listener on the host's loopback is unreachable from
// the sandbox, and the same probe run unsandboxed (the control, which also
// proves that the probe can connect) reaches it.
func TestSandboxNetwork(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	probes := map[string][]string{
		"bash":    {"/bin/bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/$1 && echo connected`, "bash", port},
		"python3": {"python3", "-c", "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5); print('connected')", port},
	}
	for name, argv := range probes {
		for _, mode := range []sandbox.Mode{sandbox.Required, sandbox.Off} {
			network := mode == sandbox.Off
			t.Run(fmt.Sprintf("%s/%s", name, mode), func(t *testing.T) {
				res, err := sandbox.Run(t.Context(), sandbox.Cmd{
					Args:    argv,
					Dir:     wt,
					Env:     []string{"PATH=/usr/bin:/bin"},
					Timeout: 20 * time.Second,
					Sandbox: &sandbox.Spec{Mode: mode, RW: []string{wt}, Egress: &egress.Policy{}},
				})
				if err != nil || res.Sandboxed == network {
					t.Fatalf("Run = %+v, %v", res, err)
				}
				connected := strings.Contains(res.Stdout, "connected")
				got := 0
				if connected {
					// The listener's goroutine may not have run yet on a
					// loaded machine: wait for the accept it owes.
					select {
					case <-accepted:
						got++
					case <-time.After(10 * time.Second):
					}
				}
				for len(accepted) > 0 {
					<-accepted
					got++
				}
				if connected != network || (got > 0) != network {
					t.Errorf("sandbox %s: connected=%v, listener accepted %d; want both %v\n%s", mode, connected, got, network, res.Output())
				}
			})
		}
	}
}

// TestSandboxEnvDump: a runner or build script that dumps its environment
// finds only allowlisted names, sandboxed or not, with every credential
// fixrail knows set in fixrail's own environment.
func TestSandboxEnvDump(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	var canaries []string
	for _, n := range append(redact.CredentialEnv, "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "SSH_AUTH_SOCK", "FIXRAIL_UNLISTED") {
		v := "CANARY-ENV-" + n
		t.Setenv(n, v)
		canaries = append(canaries, v)
	}
	t.Setenv("BASH_ENV", "/nonexistent/CANARY-ENV-BASH_ENV")
	tmp, cleanup, err := sandbox.TempDir("")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for _, class := range []sandbox.Class{sandbox.Build, sandbox.Agent} {
		for _, sandboxed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sandboxed=%v", class, sandboxed), func(t *testing.T) {
				env, err := sandbox.Env(class, os.LookupEnv, []string{"MY_FLAG"})
				if err != nil {
					t.Fatal(err)
				}
				env = sandbox.WithTempDir(env, tmp)
				c := sandbox.Cmd{Args: []string{"/usr/bin/env"}, Dir: wt, Env: env}
				if sandboxed {
					c.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}}
				}
				res, err := sandbox.Run(t.Context(), c)
				if err != nil || !res.Success() {
					t.Fatalf("Run = %+v, %v", res, err)
				}
				allowed := append(sandbox.Names(class), "MY_FLAG", "TMPDIR", "TMP", "TEMP")
				if sandboxed {
					// bwrap sets PWD when it changes directory.
					allowed = append(allowed, "PWD")
				}
				var stray, leaked []string
				for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
					k, _, _ := strings.Cut(line, "=")
					if !contains(allowed, k) {
						stray = append(stray, k)
					}
				}
				for _, c := range canaries {
					if strings.Contains(res.Stdout, c) && !(class == sandbox.Agent && contains(modelCredentials, strings.TrimPrefix(c, "CANARY-ENV-"))) {
						leaked = append(leaked, c)
					}
				}
				if len(stray) > 0 || len(leaked) > 0 || strings.Contains(res.Stdout, "CANARY-ENV-BASH_ENV") {
					t.Errorf("env dump: names outside the %s allowlist %v, credentials %v:\n%s", class, stray, leaked, res.Stdout)
				}
				if class == sandbox.Agent && !strings.Contains(res.Stdout, "ANTHROPIC_API_KEY=CANARY-ENV-ANTHROPIC_API_KEY") {
					t.Errorf("the agent class lost the model credential:\n%s", res.Stdout)
				}
				wantTmp := tmp
				if sandboxed {
					wantTmp = "/tmp"
				}
				if !strings.Contains(res.Stdout, "TMPDIR="+wantTmp+"\n") {
					t.Errorf("TMPDIR is not %s:\n%s", wantTmp, res.Stdout)
				}
			})
		}
	}
}

// TestSandboxTmpIsPrivate: the sandbox's /tmp is its own — the host's /tmp
// is not visible and nothing written there reaches the host — and Spec.Tmp
// puts a TempDir there instead.
func TestSandboxTmpIsPrivate(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	hostCanary, err := os.CreateTemp("", "fixrail-host-canary-")
	if err != nil {
		t.Fatal(err)
	}
	hostCanary.Close()
	t.Cleanup(func() { os.Remove(hostCanary.Name()) })
	tmp, cleanup, err := sandbox.TempDir("")
	if err != nil {
		t.Fatal(err)
	}
	script := `test -e "$1" && echo host-visible; ls -A /tmp; f=$(mktemp) && echo "$f"`
	for _, useTmp := range []bool{false, true} {
		t.Run(fmt.Sprintf("Tmp=%v", useTmp), func(t *testing.T) {
			spec := &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}}
			if useTmp {
				spec.Tmp = tmp
			}
			res, err := sandbox.Run(t.Context(), sandbox.Cmd{
				Args: sh(script, hostCanary.Name()), Dir: wt, Sandbox: spec,
				Env: sandbox.WithTempDir([]string{"PATH=/usr/bin:/bin"}, "/host/tmpdir"),
			})
			if err != nil || !res.Success() {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
			made := lines[len(lines)-1]
			if strings.Contains(res.Stdout, "host-visible") || strings.Contains(res.Stdout, filepath.Base(hostCanary.Name())) {
				t.Errorf("the host's /tmp is visible:\n%s", res.Stdout)
			}
			if filepath.Dir(made) != "/tmp" {
				t.Errorf("mktemp made %q, want it in the sandbox's /tmp", made)
			}
			_, err = os.Stat(filepath.Join(tmp, filepath.Base(made)))
			if useTmp != (err == nil) {
				t.Errorf("Tmp=%v: %s on the host: %v", useTmp, filepath.Join(tmp, filepath.Base(made)), err)
			}
			if _, err := os.Stat(made); err == nil {
				os.Remove(made)
				t.Errorf("the sandbox's temp file %s reached the host's /tmp", made)
			}
		})
	}
	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(tmp)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TempDir left after cleanup: %v", err)
	}
}

// TestSandboxKillsWholeTree: what the command leaves running — in the
// background, or after setsid(2), which outside the sandbox escapes the
// group — dies with the sandbox, on exit and on timeout. The unsandboxed
// setsid case is the control and the documented residual.
func TestSandboxKillsWholeTree(t *testing.T) {
	requireBwrap(t)
	tests := []struct {
		name      string
		sandboxed bool
		timeout   time.Duration
		script    string
		wantLate  bool
	}{
		{"background", true, 0, `sh -c "$late" sh "$1" & wait_started "$1"`, false},
		{"setsid", true, 0, `setsid sh -c "$late" sh "$1" & wait_started "$1"`, false},
		{"double fork", true, 0, `(trap "" HUP TERM; sh -c "$late" sh "$1" >/dev/null 2>&1 &); wait_started "$1"`, false},
		{"timeout", true, 500 * time.Millisecond, `setsid sh -c "$late" sh "$1" & wait_started "$1"; sleep 30`, false},
		{"setsid unsandboxed (residual)", false, 0, `setsid sh -c "$late" sh "$1" >/dev/null 2>&1 & wait_started "$1"`, true},
	}
	// The leftover process says it has started (after setsid, if any), then
	// writes late a second later; the leader waits for the first before it
	// says done, so that nothing is killed before it could escape.
	const prelude = `late='echo started > "$1/started"; sleep 1; echo late > "$1/late"'
		wait_started() { while [ ! -e "$1/started" ]; do sleep 0.01; done; echo done; }
		`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wt := t.TempDir()
			c := sandbox.Cmd{Args: sh(prelude+tc.script, wt), Dir: wt, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: tc.timeout}
			if tc.sandboxed {
				c.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}}
			}
			start := time.Now()
			res, err := sandbox.Run(t.Context(), c)
			if err != nil || res.Stdout != "done\n" || res.Sandboxed != tc.sandboxed || res.TimedOut != (tc.timeout > 0) {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Run took %v", elapsed)
			}
			time.Sleep(2500 * time.Millisecond)
			_, err = os.Stat(filepath.Join(wt, "late"))
			if late := err == nil; late != tc.wantLate {
				t.Errorf("a process left behind wrote after Run returned: %v, want %v", late, tc.wantLate)
			}
		})
	}
}

// TestSandboxRun: the sandboxed command behaves as an ordinary child —
// exit status, streams, stdin, cwd, exact environment — and holds no
// capabilities, and the host's credential files in /etc are masked.
func TestSandboxRun(t *testing.T) {
	requireBwrap(t)
	wt := t.TempDir()
	if err := os.Mkdir(filepath.Join(wt, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sh", filepath.Join(wt, "shell")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	spec := &sandbox.Spec{Mode: sandbox.Required, RW: []string{wt}}
	tests := []struct {
		name string
		cmd  sandbox.Cmd
		want sandbox.Result
	}{
		{"exit 3", sandbox.Cmd{Args: sh("echo out; echo err >&2; exit 3")},
			sandbox.Result{ExitCode: 3, Stdout: "out\n", Stderr: "err\n"}},
		{"stdin", sandbox.Cmd{Args: []string{"cat"}, Stdin: []byte("hello\n")},
			sandbox.Result{Stdout: "hello\n"}},
		{"cwd", sandbox.Cmd{Args: []string{"/bin/pwd"}, Dir: filepath.Join(wt, "sub")},
			sandbox.Result{Stdout: filepath.Join(wt, "sub") + "\n"}},
		{"relative argv[0]", sandbox.Cmd{Args: []string{"./shell", "-c", "echo ok"}},
			sandbox.Result{Stdout: "ok\n"}},
		{"exact env, HOME replaced by an empty one at the same path",
			sandbox.Cmd{Args: sh(`env | sort; ls -A "$HOME"`), Env: []string{"A=1", "HOME=" + home, "PATH=/usr/bin:/bin"}},
			sandbox.Result{Stdout: "A=1\nHOME=" + home + "\nPATH=/usr/bin:/bin\nPWD=" + wt + "\n"}},
		{"HOME set when absent", sandbox.Cmd{Args: sh(`echo "$HOME"; test -d "$HOME" && test -w "$HOME"`)},
			sandbox.Result{Stdout: "/home/sandbox\n"}},
		{"signal inside reported by bwrap as 128+n", sandbox.Cmd{Args: sh("kill -9 $$")},
			sandbox.Result{ExitCode: 128 + 9}},
		{"no capabilities", sandbox.Cmd{Args: sh(`grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status | tr -d '\t'`)},
			sandbox.Result{Stdout: "CapPrm:0000000000000000\nCapEff:0000000000000000\nCapBnd:0000000000000000\nCapAmb:0000000000000000\n"}},
		// Without capabilities the masks cannot be unmounted either.
		{"masked /etc files", sandbox.Cmd{Args: sh(`for m in /etc/shadow /etc/gshadow /etc/ssl/private /etc/ssh/ssh_host_*_key; do umount "$m"; done 2>/dev/null
			cat /etc/shadow /etc/gshadow 2>/dev/null; ls -A /etc/ssl/private 2>/dev/null; cat /etc/ssh/ssh_host_*_key 2>/dev/null; exit 0`)},
			sandbox.Result{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.cmd
			c.Sandbox = spec
			if c.Dir == "" {
				c.Dir = wt
			}
			if c.Env == nil {
				c.Env = []string{"PATH=/usr/bin:/bin"}
			}
			tc.want.Sandboxed = true
			got, err := sandbox.Run(t.Context(), c)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreDuration); diff != "" {
				t.Errorf("Run result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSandboxSpecErrors: a Spec that would expose the operator's home, the
// whole filesystem, the host's /tmp or a writable toolchain is refused before
// anything runs, whether or not bubblewrap is here.
func TestSandboxSpecErrors(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home", "op")
	wt := filepath.Join(root, "wt")
	other := filepath.Join(root, "other")
	for _, d := range []string{home, wt, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	type tcase struct {
		name string
		spec sandbox.Spec
		cmd  sandbox.Cmd
		want string // in the error
	}
	tests := []tcase{
		{"rw root", sandbox.Spec{RW: []string{wt, "/"}}, sandbox.Cmd{}, "shared with every process"},
		{"rw home", sandbox.Spec{RW: []string{wt, home}}, sandbox.Cmd{}, "operator's home"},
		{"rw above home", sandbox.Spec{RW: []string{wt, filepath.Dir(home)}}, sandbox.Cmd{}, "operator's home"},
		{"ro above home", sandbox.Spec{RW: []string{wt}, RO: []string{root}}, sandbox.Cmd{}, "operator's home"},
		{"rw host tmp", sandbox.Spec{RW: []string{wt, "/tmp"}}, sandbox.Cmd{}, "shared with every process"},
		{"tmp is host tmp", sandbox.Spec{RW: []string{wt}, Tmp: "/tmp"}, sandbox.Cmd{}, "shared with every process"},
		{"rw toolchain", sandbox.Spec{RW: []string{wt, "/usr/local"}}, sandbox.Cmd{}, "overlaps the system path /usr"},
		{"rw etc", sandbox.Spec{RW: []string{wt, "/etc"}}, sandbox.Cmd{}, "overlaps the system path /etc"},
		{"rw relative", sandbox.Spec{RW: []string{wt, "wt"}}, sandbox.Cmd{}, "not absolute"},
		{"rw missing", sandbox.Spec{RW: []string{wt, filepath.Join(root, "nope")}}, sandbox.Cmd{}, "no such file"},
		{"both ro and rw", sandbox.Spec{RW: []string{wt}, RO: []string{wt}}, sandbox.Cmd{}, "both read-only and read-write"},
		{"dir outside", sandbox.Spec{RW: []string{other}}, sandbox.Cmd{}, "not inside the sandbox"},
		{"dir under a tmpfs", sandbox.Spec{}, sandbox.Cmd{}, "not inside the sandbox"},
		{"missing binary", sandbox.Spec{RW: []string{wt}}, sandbox.Cmd{Args: []string{"fixrail-no-such-binary"}}, "executable file not found"},
		{"missing binary by path", sandbox.Spec{RW: []string{wt}}, sandbox.Cmd{Args: []string{"./nope"}}, "no such file"},
		{"bad mode", sandbox.Spec{Mode: "sometimes", RW: []string{wt}}, sandbox.Cmd{}, "want auto, required or off"},
	}
	// Code finds the password database's home by getpwuid whatever HOME says.
	if u, err := user.Current(); err == nil && u.HomeDir != "/" {
		if _, err := os.Stat(u.HomeDir); err == nil {
			tests = append(tests, tcase{"ro the password database's home",
				sandbox.Spec{RW: []string{wt}, RO: []string{u.HomeDir}}, sandbox.Cmd{}, "operator's home"})
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(wt, "ran")
			os.Remove(marker)
			c := tc.cmd
			if c.Args == nil {
				c.Args = []string{"/usr/bin/touch", marker}
			}
			c.Dir = wt
			spec := tc.spec
			c.Sandbox = &spec
			got, err := sandbox.Run(t.Context(), c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %+v, %v; want an error saying %q", got, err, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran")
			}
		})
	}
}

// TestSandboxModes: Required without a usable bubblewrap is ErrNoSandbox and
// runs nothing; Auto without it runs unsandboxed and says so; Off never
// sandboxes. "Without" is simulated twice: no bwrap on PATH, and a bwrap that
// cannot create namespaces.
func TestSandboxModes(t *testing.T) {
	wt := t.TempDir()
	noBwrap := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "bwrap"),
		[]byte("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, haveBwrap := sandbox.Detect()
	tests := []struct {
		name      string
		path      string // fixrail's PATH; "" keeps it
		mode      sandbox.Mode
		wantErr   bool
		sandboxed bool
	}{
		{"required, none on PATH", noBwrap, sandbox.Required, true, false},
		{"required, unusable", broken, sandbox.Required, true, false},
		{"auto, none on PATH", noBwrap, sandbox.Auto, false, false},
		{"auto, unusable", broken, sandbox.Auto, false, false},
		{"zero mode is auto", noBwrap, "", false, false},
		{"off", "", sandbox.Off, false, false},
		{"auto with bwrap", "", sandbox.Auto, false, true},
		{"required with bwrap", "", sandbox.Required, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			} else if !haveBwrap {
				requireBwrap(t)
			}
			marker := filepath.Join(wt, "ran")
			os.Remove(marker)
			res, err := sandbox.Run(t.Context(), sandbox.Cmd{
				Args:    []string{"/usr/bin/touch", marker},
				Dir:     wt,
				Sandbox: &sandbox.Spec{Mode: tc.mode, RW: []string{wt}},
			})
			_, statErr := os.Stat(marker)
			if tc.wantErr {
				if !errors.Is(err, sandbox.ErrNoSandbox) || statErr == nil {
					t.Errorf("Run = %+v, %v (marker: %v); want ErrNoSandbox and nothing run", res, err, statErr)
				}
				if tc.path == broken && (err == nil || !strings.Contains(err.Error(), "Permission denied")) {
					t.Errorf("error %v does not say why bwrap is unusable", err)
				}
				return
			}
			if err != nil || !res.Success() || statErr != nil || res.Sandboxed != tc.sandboxed {
				t.Errorf("Run = %+v, %v (marker: %v); want it run with Sandboxed=%v", res, err, statErr, tc.sandboxed)
			}
		})
	}
	for _, s := range []string{"auto", "required", "off"} {
		if m, err := sandbox.ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "on", "Auto", "yes"} {
		if _, err := sandbox.ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q) = nil error", s)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
