package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the child in its own process group, so the whole group can
// be killed at once, and has the kernel kill it if fixrail dies first, even
// by SIGKILL (PR_SET_PDEATHSIG). Pdeathsig fires when the forking OS thread
// exits, so Run holds that thread (runtime.LockOSThread) until the child is
// reaped. It reaches the child only: sandboxed, the child is bwrap, whose
// --die-with-parent reaper takes the whole pid namespace with it;
// unsandboxed, what the child started outlives a SIGKILLed fixrail (every
// other way Run ends kills the group).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

const pPID = 1 // P_PID in <sys/wait.h>

// waitExited blocks until pid has exited but leaves it unreaped (WNOWAIT): as a
// zombie it keeps its pid, so the group id stays safe to signal.
func waitExited(pid int) error {
	var info [16]uint64 // siginfo_t, 128 bytes
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

// killGroup sends SIGKILL to every process in the group pgid. ESRCH (the group
// is already empty) is the expected case and other errors leave nothing to do.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// signalName names the signal that ended the process, or "" if it exited.
func signalName(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	return ws.Signal().String()
}

// Linux's close_range(2) (5.11 and later) and its flag that marks the range
// close-on-exec instead of closing it; the number is the same on every
// architecture.
const (
	sysCloseRange     = 436
	closeRangeCloexec = 1 << 2
)

// closeOnExecInherited marks every descriptor above stderr close-on-exec.
// Go opens its own with O_CLOEXEC and hands a child only stdin, stdout and
// stderr, but a descriptor fixrail inherited without the flag (a shell's
// `exec 9<dir`, a CI runner's pipe) would reach every child — and a
// directory descriptor reaches the host's files through /proc/self/fd/N
// past every mount the sandbox hides. The descriptors stay open for
// fixrail itself.
func closeOnExecInherited() error {
	if _, _, errno := syscall.Syscall(sysCloseRange, 3, uintptr(^uint32(0)), closeRangeCloexec); errno == 0 {
		return nil
	}
	// Older kernels: each descriptor /proc lists. One that a concurrent
	// open or close reuses meanwhile is Go's, and already close-on-exec.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		syscall.CloseOnExec(fd)
	}
	return nil
}
