package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// limits are the resource limits every sandboxed command runs under, soft
// and hard alike (the command, with no capabilities, cannot raise a hard
// limit). Core files are always off.
type limits struct {
	// procs is RLIMIT_NPROC: processes and threads of the sandbox.
	procs uint64
	// fileSize is RLIMIT_FSIZE: bytes in any one file it writes.
	fileSize uint64
}

// sandboxLimits are the limits in force; a variable so that a test can
// lower them.
var sandboxLimits = defaultLimits(runtime.NumCPU())

// defaultLimits: 4096 processes and threads, or cpus×(cpus+16) where that
// is more (a build runs a compiler per CPU, each with up to a thread per
// CPU); 8 GiB per file, past the 4 GiB boundary that large-file tests
// cross.
func defaultLimits(cpus int) limits {
	n := uint64(max(cpus, 1))
	return limits{procs: max(4096, n*(n+16)), fileSize: 8 << 30}
}

// railArgs hand bwrap the descriptors of openRails: the system call
// filter (fd 3), where to write the sandbox's pid (fd 4), and what to wait
// on before running the command (fd 5).
var railArgs = []string{"--seccomp", "3", "--info-fd", "4", "--block-fd", "5"}

// rails are the descriptors behind railArgs, the child's ends (files,
// passed as ExtraFiles) and fixrail's.
type rails struct {
	files       []*os.File
	info, block *os.File
}

func openRails() (*rails, error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	r := &rails{}
	// A pipe per sandbox: bwrap reads the program to its end, so one
	// descriptor cannot serve two.
	progR, progW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	r.files = append(r.files, progR)
	// The program is far smaller than any pipe's buffer: this never blocks.
	_, err = progW.Write(prog)
	progW.Close()
	if err != nil {
		r.closeChild()
		return nil, err
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		r.closeChild()
		return nil, err
	}
	r.info, r.files = infoR, append(r.files, infoW)
	blockR, blockW, err := os.Pipe()
	if err != nil {
		r.closeChild()
		r.close()
		return nil, err
	}
	r.block, r.files = blockW, append(r.files, blockR)
	return r, nil
}

// closeChild closes the child's ends, once it has its copies (or will
// never start).
func (r *rails) closeChild() {
	for _, f := range r.files {
		f.Close()
	}
}

// close closes fixrail's ends.
func (r *rails) close() {
	if r.info != nil {
		r.info.Close()
	}
	if r.block != nil {
		r.block.Close()
	}
}

var childPid = regexp.MustCompile(`"child-pid":\s*([0-9]+)`)

// release sets l on the sandbox bwrap has just made and lets it go on to
// run the command. The limits are set from outside, on bwrap's child
// waiting on the block pipe, because neither place before works: set on
// bwrap itself, RLIMIT_NPROC would also become the cap of the user
// namespace bwrap creates, checked (kernel 5.14 and later) against every
// process of the operator's uid on the host — the sandbox could not start
// a process while the operator ran more than the cap. Set on the child,
// in the namespace, the cap counts the sandbox's processes alone, and the
// namespace keeps the operator's own limit above it. The child forks the
// command only after the block pipe, so the command and everything it
// starts inherit the limits.
//
// A bwrap that fails before it makes the sandbox writes no pid: there is
// nothing to limit and its exit status says what went wrong. An error
// means the limits could not be set; the caller kills bwrap. ctx ending
// first returns nil, for the caller's kill.
func (r *rails) release(ctx context.Context, l limits) error {
	stop := context.AfterFunc(ctx, func() { _ = r.info.SetReadDeadline(time.Now()) })
	defer stop()
	// bwrap closes its end once it has written the pid, and its child
	// closed its own copy first.
	b, err := io.ReadAll(io.LimitReader(r.info, 1<<12))
	if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: reading bwrap's info: %w", err)
	}
	if len(b) == 0 {
		return nil
	}
	m := childPid.FindSubmatch(b)
	if m == nil {
		return fmt.Errorf("sandbox: bwrap's info names no child pid: %q", b)
	}
	pid, err := strconv.Atoi(string(m[1]))
	if err != nil {
		return fmt.Errorf("sandbox: bwrap's info: %w", err)
	}
	for _, lim := range []struct {
		res  int
		name string
		max  uint64
	}{
		{unix.RLIMIT_NPROC, "RLIMIT_NPROC", l.procs},
		{unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", l.fileSize},
		{unix.RLIMIT_CORE, "RLIMIT_CORE", 0},
	} {
		var old unix.Rlimit
		if err := prlimitRetry(pid, lim.res, nil, &old); err != nil {
			return fmt.Errorf("sandbox: %s of the sandbox: %w", lim.name, err)
		}
		// Never above the limit it already has: lowering needs no
		// privilege, raising would.
		v := min(lim.max, old.Max)
		if err := unix.Prlimit(pid, lim.res, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return fmt.Errorf("sandbox: %s of the sandbox: %w", lim.name, err)
		}
	}
	if _, err := r.block.Write([]byte{1}); err != nil {
		return fmt.Errorf("sandbox: releasing the sandbox: %w", err)
	}
	return nil
}

// prlimitRetry is prlimit(2) on pid, retried while it is refused for a
// while: a setuid bwrap's child keeps euid 0 until it drops its
// privileges, which it does before it waits on the block pipe.
func prlimitRetry(pid, res int, newLimit, old *unix.Rlimit) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := unix.Prlimit(pid, res, newLimit, old)
		if err != unix.EPERM || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// Rails says what every sandbox runs under besides its namespaces and
// mounts, for doctor: Detect's probe ran under the same filter and limits,
// so a usable sandbox has both, and found whether this bubblewrap can
// disable nested user namespaces.
func Rails() string {
	l := sandboxLimits
	s := fmt.Sprintf("system calls refused with EPERM: the kernel keyrings (keyctl, add_key, request_key), bpf, perf_event_open, io_uring, userfaultfd, module and kexec loading, open_by_handle_at; "+
		"at most %d processes and threads, %s per file, no core files", l.procs, sizeString(l.fileSize))
	if os.Geteuid() == 0 {
		s += " (as root the process cap does not bind: the kernel exempts uid 0 from RLIMIT_NPROC)"
	}
	if TmpfsBounded() {
		s += fmt.Sprintf("; each tmpfs it mounts (its HOME, the masks, /tmp when it has no TMPDIR of its own) at most %s", sizeString(uint64(tmpfsSize)))
	} else {
		s += "; its tmpfs mounts are NOT bounded: this bubblewrap cannot (--size needs 0.8 or later)"
	}
	if NestedUserns() {
		s += "; nested user namespaces are NOT disabled: this bubblewrap cannot (--disable-userns needs 0.8 or later, not setuid)"
	} else {
		s += "; no nested user namespaces (bwrap --disable-userns)"
	}
	return s
}

func sizeString(n uint64) string {
	if n%(1<<30) == 0 {
		return strconv.FormatUint(n>>30, 10) + " GiB"
	}
	return strconv.FormatUint(n, 10) + " bytes"
}
