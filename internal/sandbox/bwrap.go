package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// Mode says whether a command must, may or must not run in the sandbox; it is
// config's `sandbox: auto | required | off`.
type Mode string

// The sandbox modes. The zero Mode in a Spec means Auto.
const (
	// Auto sandboxes where bubblewrap is usable and otherwise runs the
	// command unsandboxed, with Result.Sandboxed false so that the caller
	// can say so (the PR body does).
	Auto Mode = "auto"
	// Required refuses to run without the sandbox: Run returns ErrNoSandbox.
	Required Mode = "required"
	// Off never sandboxes.
	Off Mode = "off"
)

// ParseMode reads a config value: exactly "auto", "required" or "off".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Required, Off:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q: want auto, required or off", s)
}

// ErrNoSandbox is returned by Run when the Spec's Mode is Required and
// bubblewrap is missing or unusable (unprivileged user namespaces disabled,
// /proc not mountable, …). The pipeline HALTs no-sandbox on it.
var ErrNoSandbox = errors.New("no usable sandbox")

// Spec asks Run to run a command inside a bubblewrap sandbox.
//
// What the command sees (Mounts is the one account of it): the paths in RW
// read-write (the worktree); the system toolchain read-only (/usr, /etc and
// the /bin, /sbin, /lib* entries, plus each PATH entry as itself or as the
// toolchain root it is the bin directory of, e.g. /opt/go for /opt/go/bin:
// ToolchainRoot); the paths in RO read-only; a fresh /proc and a minimal
// /dev; a private /tmp (an empty tmpfs, or Tmp); and HOME as an empty
// tmpfs, so ~/.ssh, ~/.config/gh and ~/.aws do not exist. Nothing else of
// the host's filesystem is there: the operator's home is never mounted, a
// PATH entry inside it is skipped (add what a build needs from there to RO:
// Toolchains finds the dependency caches and says which), and no mount
// shows what Hide names, fixrail's TMPDIR or its binary. /etc/shadow,
// /etc/gshadow, /etc/ssl/private and sshd's private host keys are masked.
// No network: the command has its own network namespace, with only its own
// loopback, and with Egress its one way out is fixrail's proxy.
//
// All namespaces are new (bwrap --unshare-all): user, mount, pid, network,
// ipc, uts, cgroup. The command runs with no capabilities (--cap-drop ALL, so
// it cannot unmount a mask either), in a new session (--new-session, so it
// cannot push keystrokes into fixrail's terminal), under a pid-1 reaper that
// dies with bwrap (--die-with-parent). bwrap returns as soon as the command
// exits, or dies to Run's process-group kill; either way the reaper dies
// with it and the kernel kills everything left in the pid namespace —
// including a process that called setsid, which outside the sandbox would
// escape the group. (Without --die-with-parent the reaper outlives bwrap
// until its last child exits; the tests check this.)
//
// Namespaces do not cover all of the kernel, so every sandbox also runs
// under a system call filter (bwrap --seccomp, installed before the
// command starts) and resource limits. The filter refuses with EPERM the
// kernel keyrings (keyctl, add_key, request_key: the command would
// otherwise possess the session keyring of whoever started fixrail and
// could read a credential cached there), bpf, perf_event_open, io_uring,
// userfaultfd, kexec and module loading and open_by_handle_at; a system
// call of another arch (32-bit x86, AArch32) kills the process, and one
// through x86-64's x32 ABI gets ENOSYS. The limits, soft and hard, so
// that the command cannot raise them: RLIMIT_NPROC 4096 processes and
// threads (or CPUs×(CPUs+16) where that is more), counted in the
// sandbox's own user namespace (Linux 5.14 and later; before, against all
// of the operator's processes), so that a fork bomb stops there while the
// operator's session keeps its own limit — except that the kernel exempts
// uid 0 from it, so a fixrail run as root gets no process cap;
// RLIMIT_FSIZE 8 GiB in any one file (not a bound on the disk a command
// fills: it may write many files); RLIMIT_CORE 0, no core files. Detect's
// probe runs under the same filter and limits: where they cannot be
// applied there is no usable sandbox. Nested user namespaces are
// disabled (--disable-userns), and each tmpfs bounded to tmpfsSize
// (--size), where this bubblewrap can; Rails says where it cannot.
type Spec struct {
	// Mode is auto, required or off; empty means Auto.
	Mode Mode
	// RW is bound read-write at the same path: the worktree, and nothing
	// wider. A path that is or contains the operator's home, or that
	// overlaps the system toolchain, is refused.
	RW []string
	// RO is bound read-only at the same path (a module cache, the clone's
	// .git directory). A path that is or contains the operator's home is
	// refused; one inside it is allowed.
	RO []string
	// Egress, when set, is the command's one way out of its empty network
	// namespace: Run serves an egress proxy for it outside the sandbox on
	// a Unix socket bound inside, runs the command behind the forwarder
	// (fixrail's own binary, mounted read-only as egress.ForwarderName,
	// listening on the sandbox's loopback at egress.ListenAddr), and sets
	// HTTPS_PROXY and HTTP_PROXY (both cases) to it, NO_PROXY and
	// ALL_PROXY removed. The proxy is closed when Run returns. A command
	// that runs unsandboxed (Off, or Auto without bubblewrap) gets none of
	// this: it has the host's network, as Result.Sandboxed false says.
	// There is no way to give a sandboxed command the host's network.
	Egress *egress.Policy
	// Tmp, when set, is bound read-write at /tmp (a TempDir: disk-backed,
	// for builds whose temporary files would not fit in memory); empty
	// means a fresh tmpfs. Every environment value that names Tmp or a
	// path under it is rewritten to the same path under /tmp.
	Tmp string
	// Hide names fixrail's own places (the repository, its git directory,
	// .fixrail, the run's directory): no mount may show them. A PATH entry
	// that would is left out; RO, RW, Tmp or a system root that would is
	// refused with ErrExposes.
	Hide Hidden
	// GoCache, when set, is the standard library's build cache
	// (EnsureGoStdCache): bound read-only at its own path, and linked file
	// by file into the command's GOCACHE, which must lie in Tmp. Only a
	// command that runs sandboxed gets the links; outside the sandbox its
	// GOCACHE stays as empty as it was given.
	GoCache string
}

// The path inside the sandbox that HOME names when the command's own HOME
// cannot be used (unset, relative, or inside the toolchain).
const fallbackHome = "/home/sandbox"

// systemRoots are bound read-only when they exist (symlinks, as on merged-/usr
// systems, are recreated as symlinks).
var systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// masked are readable by root (or their owner) and are credentials; they are
// replaced by an empty file or directory. Globs are expanded when the
// sandbox is built.
var masked = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssl/private", "/etc/ssh/ssh_host_*_key",
}

// Detect reports the bubblewrap binary on PATH and whether it is usable here:
// it runs a minimal sandbox with the namespaces Run asks for, once per binary
// path per process.
func Detect() (path string, ok bool) {
	path, err := detect()
	return path, err == nil
}

var probes struct {
	sync.Mutex
	result map[string]probed
}

// probed is what Detect learnt of one bwrap binary: whether it is usable,
// and whether it can keep the sandbox from making user namespaces of its
// own (--disable-userns: bubblewrap 0.8 or later, not setuid).
type probed struct {
	err      error
	noUserns bool
	// sized: this bwrap bounds a tmpfs (--size, 0.8 or later).
	sized bool
}

// tmpfsSize bounds each tmpfs a sandbox mounts (its HOME, /tmp when the
// command has no Tmp, the masks): a tmpfs lives in memory, and unbounded
// each may take half the host's, so a test that fills one starves the host;
// a variable so that a test can lower it.
var tmpfsSize int64 = 2 << 30

// noUsernsArgs keep the command from creating user namespaces of its own:
// inside one it holds every capability over a fresh set of namespaces,
// which opens kernel code (mount, netfilter, …) that is a way to root when
// it has a bug. Docker's default profile refuses them too, so suites
// already run without (a headless Chrome there takes --no-sandbox).
// --disable-userns needs the user namespace named, not just tried as
// --unshare-all does.
var noUsernsArgs = []string{"--unshare-user", "--disable-userns"}

// probeArgs are the namespace and mount options every sandbox uses, on the
// smallest tree that runs true(1).
var probeArgs = []string{
	"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
	"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
	"--", "true",
}

func detect() (string, error) {
	path, pr, err := detectFull()
	if err == nil {
		err = pr.err
	}
	return path, err
}

// detectFull is detect with what the probe learnt of the binary.
func detectFull() (string, probed, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", probed{}, errors.New("bwrap (bubblewrap) is not on PATH")
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", probed{}, err
	}
	probes.Lock()
	defer probes.Unlock()
	if pr, ok := probes.result[path]; ok {
		return path, pr, nil
	}
	// The probe hands bwrap the rails every sandbox gets (the system
	// call filter, the limits), so that a host where they cannot work has
	// no usable sandbox rather than sandboxes that all fail. Nested user
	// namespaces are disabled and tmpfs mounts bounded where this bwrap
	// can; where it cannot, the sandbox still runs, and Rails says so.
	probe := func(extra []string) error {
		res, err := Run(context.Background(), Cmd{
			Args:    slices.Concat([]string{path}, railArgs, extra, probeArgs),
			rails:   true,
			Env:     []string{"PATH=/usr/bin:/bin"},
			Timeout: 10 * time.Second,
		})
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", path, err)
		case !res.Success():
			return fmt.Errorf("%s cannot create a sandbox here (%s): %s", path, res.Describe(), strings.TrimSpace(res.Stderr))
		}
		return nil
	}
	pr := probed{err: probe(nil)}
	if pr.err == nil {
		pr.noUserns = probe(noUsernsArgs) == nil
		pr.sized = probe([]string{"--size", "1048576", "--tmpfs", "/mnt"}) == nil
	}
	if probes.result == nil {
		probes.result = make(map[string]probed)
	}
	probes.result[path] = pr
	return path, pr, nil
}

// TmpfsBounded reports whether each tmpfs a sandbox mounts is bounded
// (tmpfsSize): false when the bubblewrap here cannot (older than 0.8) or
// there is no usable bubblewrap.
func TmpfsBounded() bool {
	_, pr, err := detectFull()
	return err == nil && pr.err == nil && pr.sized
}

// NestedUserns reports whether a sandbox's command can create user
// namespaces of its own: true when the bubblewrap here cannot disable
// them (older than 0.8, or setuid) or there is no usable bubblewrap.
func NestedUserns() bool {
	_, pr, err := detectFull()
	return err != nil || pr.err != nil || !pr.noUserns
}

// mount is one bwrap filesystem operation; dst is the path inside.
type mount struct {
	op       string // --ro-bind, --bind, --tmpfs, --symlink, --proc, --dev
	src, dst string
	from     string // why a bind is there, for MountPlan.Binds
}

func (m mount) args() []string {
	switch m.op {
	case "--ro-bind", "--bind", "--symlink":
		return []string{m.op, m.src, m.dst}
	}
	return []string{m.op, m.dst}
}

// wrapped is a command as Run starts it: bwrap's argv and environment when
// it is sandboxed, c's own otherwise, and what to stop once it has ended
// (its egress proxy).
type wrapped struct {
	argv, env []string
	sandboxed bool // and so handed the rails (railArgs)
	stop      func()
}

// wrap returns how to run c under s.
func (s *Spec) wrap(c Cmd) (wrapped, error) {
	mode := cmp.Or(s.Mode, Auto)
	unsandboxed := wrapped{argv: c.Args, env: c.Env, stop: func() {}}
	switch mode {
	case Off:
		return unsandboxed, nil
	case Auto, Required:
	default:
		return wrapped{}, fmt.Errorf("sandbox mode %q: want auto, required or off", s.Mode)
	}
	// The Spec is checked before bwrap is looked for, so that a bad one
	// fails the same way on every host.
	p, err := s.plan(c)
	if err != nil {
		return wrapped{}, err
	}
	bwrap, pr, err := detectFull()
	if err == nil {
		err = pr.err
	}
	if err != nil {
		if mode == Required {
			return wrapped{}, fmt.Errorf("%w: %v", ErrNoSandbox, err)
		}
		return unsandboxed, nil
	}
	if s.GoCache != "" {
		if err := s.seed(c.Env); err != nil {
			return wrapped{}, err
		}
	}
	stop := func() {}
	if s.Egress != nil {
		if stop, err = p.egress(s.Egress); err != nil {
			return wrapped{}, err
		}
	}
	return wrapped{argv: p.argv(bwrap, pr), env: p.env, sandboxed: true, stop: stop}, nil
}

// Where the egress rail's parts are inside the sandbox.
const (
	egressSocketDir = "/run/fixrail/egress"
	egressForwarder = "/run/fixrail/" + egress.ForwarderName
)

// proxyVars point an HTTP client at the forwarder; dropProxyVars would
// send it around it (the namespace has no other way out, but a client
// that tried would fail confusingly rather than be refused on the record).
var (
	proxyVars     = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"}
	dropProxyVars = []string{"NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"}
)

// egress starts the proxy for pol on a socket in a private directory,
// binds that directory and fixrail's binary into the sandbox, and puts the
// command behind the forwarder. The returned func closes the proxy and
// removes the directory.
func (p *plan) egress(pol *egress.Policy) (func(), error) {
	exe, err := executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: egress forwarder (fixrail's binary): %w", err)
	}
	dir, err := os.MkdirTemp("", "fxe")
	if err != nil {
		return nil, fmt.Errorf("sandbox: egress socket directory: %w", err)
	}
	x, err := egress.Listen(filepath.Join(dir, "s"), pol)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p.mounts = append(p.mounts,
		mount{op: "--ro-bind", src: dir, dst: egressSocketDir, from: "the egress proxy's socket"},
		mount{op: "--ro-bind", src: exe, dst: egressForwarder, from: "fixrail's binary, the egress forwarder"})
	p.cmd = egress.ForwardArgs(egressForwarder, egressSocketDir+"/s", p.cmd)
	for _, k := range dropProxyVars {
		p.env = without(p.env, k)
	}
	for _, k := range proxyVars {
		p.env = With(p.env, k, "http://"+egress.ListenAddr)
	}
	return func() {
		x.Close()
		os.RemoveAll(dir)
	}, nil
}

// without is env with every entry for key removed.
func without(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == key
	})
}

// seed links GoCache into the command's GOCACHE, which must be an empty
// directory in Tmp: a GOCACHE anywhere else would outlive the command, and
// with it whatever the command wrote there.
func (s *Spec) seed(env []string) error {
	gc := lookupEnv(env, "GOCACHE")
	if s.Tmp == "" || !filepath.IsAbs(gc) || !pathguard.Within(filepath.Clean(s.Tmp), filepath.Clean(gc)) || filepath.Clean(gc) == filepath.Clean(s.Tmp) {
		return fmt.Errorf("sandbox: GOCACHE %q is not a directory in the command's Tmp %q, so the Go build cache cannot be linked into it", gc, s.Tmp)
	}
	if ents, err := os.ReadDir(gc); err != nil || len(ents) > 0 {
		return fmt.Errorf("sandbox: GOCACHE %s is not an empty directory (%v), so the Go build cache cannot be linked into it", gc, err)
	}
	seed, err := filepath.EvalSymlinks(s.GoCache)
	if err != nil {
		return fmt.Errorf("sandbox: Go build cache: %w", err)
	}
	if err := seedGoCache(seed, gc); err != nil {
		return fmt.Errorf("sandbox: Go build cache: %w", err)
	}
	return nil
}

// plan is a checked Spec applied to one command.
type plan struct {
	mounts []mount
	dir    string
	cmd    []string
	env    []string
}

func (p plan) argv(bwrap string, pr probed) []string {
	argv := []string{bwrap, "--unshare-all"}
	argv = append(argv, "--die-with-parent", "--new-session", "--cap-drop", "ALL")
	argv = append(argv, railArgs...)
	if pr.noUserns {
		argv = append(argv, noUsernsArgs...)
	}
	for _, m := range p.mounts {
		if m.op == "--tmpfs" && pr.sized {
			argv = append(argv, "--size", strconv.FormatInt(tmpfsSize, 10))
		}
		argv = append(argv, m.args()...)
	}
	argv = append(argv, "--chdir", p.dir, "--")
	return append(argv, p.cmd...)
}

func (s *Spec) plan(c Cmd) (plan, error) {
	var p plan
	mp, err := s.Mounts(c.Env)
	if err != nil {
		return p, err
	}
	p.mounts = mp.mounts

	p.dir = c.Dir
	if p.dir == "" {
		if p.dir, err = os.Getwd(); err != nil {
			return p, fmt.Errorf("sandbox: %w", err)
		}
	}
	if p.dir, err = filepath.Abs(p.dir); err != nil {
		return p, fmt.Errorf("sandbox: %w", err)
	}
	if !visible(p.dir, p.mounts) {
		return p, fmt.Errorf("sandbox: working directory %s is not inside the sandbox (add it to RW or RO)", p.dir)
	}

	p.cmd = slices.Clone(c.Args)
	switch name := c.Args[0]; {
	case !strings.Contains(name, "/"):
		// Found here so that a missing binary is a start error as outside
		// the sandbox; bwrap looks it up again, in the command's PATH.
		if _, err := exec.LookPath(name); err != nil {
			return p, fmt.Errorf("start %s: %w", name, err)
		}
	default:
		if !filepath.IsAbs(name) {
			p.cmd[0] = filepath.Join(p.dir, name)
		}
		if _, err := os.Stat(p.cmd[0]); err != nil {
			return p, fmt.Errorf("start %s: %w", name, err)
		}
	}

	p.env = With(c.Env, "HOME", sandboxHome(c.Env))
	for _, k := range tmpEnv {
		if lookupEnv(c.Env, k) != "" {
			p.env = With(p.env, k, "/tmp")
		}
	}
	if s.Tmp != "" {
		p.env = underTmp(p.env, filepath.Clean(s.Tmp))
	}
	return p, nil
}

// underTmp rewrites every value that names tmp or a path under it (GOCACHE,
// XDG_CACHE_HOME … that Toolchain.Env put in the command's TMPDIR) to the
// same path under /tmp, where tmp is bound inside.
func underTmp(env []string, tmp string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if v == tmp || strings.HasPrefix(v, tmp+"/") {
			kv = k + "=/tmp" + v[len(tmp):]
		}
		out[i] = kv
	}
	return out
}

// checkPaths cleans and checks RW, RO or Tmp paths: absolute, existing, not
// the operator's home or an ancestor of it, and, when writable, clear of the
// system toolchain.
func checkPaths(what string, paths, homes []string, writable bool) ([]string, error) {
	var out []string
	for _, raw := range paths {
		if !filepath.IsAbs(raw) {
			return nil, fmt.Errorf("sandbox: %s path %q is not absolute", what, raw)
		}
		p := filepath.Clean(raw)
		if p == "/" || p == "/tmp" {
			return nil, fmt.Errorf("sandbox: %s path %s is shared with every process on the host (Spec.Tmp gives the command a /tmp)", what, p)
		}
		for _, h := range homes {
			if pathguard.Within(p, h) {
				return nil, fmt.Errorf("sandbox: %s path %s would expose the operator's home %s", what, p, h)
			}
		}
		if writable {
			for _, r := range append(slices.Clone(systemRoots), "/proc", "/dev", "/sys") {
				if pathguard.Within(r, p) || pathguard.Within(p, r) {
					return nil, fmt.Errorf("sandbox: %s path %s overlaps the system path %s", what, p, r)
				}
			}
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("sandbox: %s path: %w", what, err)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// operatorHomes are the directories that must never be mounted: fixrail's own
// HOME and the user's home in the password database (which code finds by
// getpwuid even when HOME says otherwise). The command's HOME is not among
// them: a caller may point it at a throwaway directory.
func operatorHomes() []string {
	var homes []string
	add := func(h string) {
		if h == "" || !filepath.IsAbs(h) {
			return
		}
		if h = filepath.Clean(h); h != "/" && !slices.Contains(homes, h) {
			homes = append(homes, h)
		}
	}
	add(os.Getenv("HOME"))
	if u, err := user.Current(); err == nil {
		add(u.HomeDir)
	}
	return homes
}

// sandboxHome is where HOME points inside: the command's own HOME path when
// it can hold a tmpfs without hiding the toolchain, so that paths derived
// from it mean the same inside, else fallbackHome.
func sandboxHome(env []string) string {
	h := lookupEnv(env, "HOME")
	if h == "" || !filepath.IsAbs(h) {
		return fallbackHome
	}
	h = filepath.Clean(h)
	if h == "/" || h == "/tmp" {
		return fallbackHome
	}
	for _, r := range append(slices.Clone(systemRoots), "/proc", "/dev", "/sys") {
		if pathguard.Within(r, h) {
			return fallbackHome
		}
	}
	return h
}

// visible reports whether dir exists inside: it lies in a bound directory or
// is the top of a tmpfs (below which there is nothing yet).
func visible(dir string, ms []mount) bool {
	for _, m := range ms {
		switch m.op {
		case "--bind", "--ro-bind":
			if m.src != os.DevNull && pathguard.Within(m.dst, dir) {
				return true
			}
		case "--tmpfs", "--proc", "--dev":
			if dir == m.dst {
				return true
			}
		}
	}
	return false
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

func lookupEnv(env []string, key string) string {
	// The first entry, as getenv(3) finds it.
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
