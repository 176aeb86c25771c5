package sandbox

import (
	"os"
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
