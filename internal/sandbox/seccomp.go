package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused with EPERM inside the sandbox (bwrap
// --seccomp). Namespaces do not isolate them: each reaches host-kernel
// state or a large body of kernel code that has been the way to root
// again and again, and no test suite fixrail runs needs one (go test
// -race, pytest, node and npm run without them; libuv falls back to its
// thread pool when io_uring is refused).
//
// EPERM, not ENOSYS: it is what Docker's and podman's default profiles
// answer for these, so software that runs in a container already copes,
// and it says "refused" where ENOSYS would claim the kernel lacks the
// call (and invite a fallback to some other call).
var deniedSyscalls = []struct {
	name string
	nr   uint32
}{
	// The kernel keyrings are not namespaced: the command possesses the
	// session keyring of whoever started fixrail and could read a
	// credential an operator's tool cached there (KEYCTL_READ), or reach
	// the user keyring and the kernel's key types.
	{"keyctl", unix.SYS_KEYCTL},
	{"add_key", unix.SYS_ADD_KEY},
	{"request_key", unix.SYS_REQUEST_KEY},
	// eBPF's verifier, perf events and io_uring are the kernel's largest
	// unprivileged attack surfaces (io_uring also runs its operations
	// where no seccomp filter sees them); userfaultfd is the usual tool
	// for stretching a kernel race wide enough to win.
	{"bpf", unix.SYS_BPF},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
	{"io_uring_setup", unix.SYS_IO_URING_SETUP},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER},
	{"userfaultfd", unix.SYS_USERFAULTFD},
	// These already need a capability in the host's user namespace, which
	// the command never has; refused here too so that a capability bug is
	// not the only thing between a test and the host kernel (loading a
	// module or kernel, or open_by_handle_at's walk past every mount).
	{"kexec_load", unix.SYS_KEXEC_LOAD},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD},
	{"init_module", unix.SYS_INIT_MODULE},
	{"finit_module", unix.SYS_FINIT_MODULE},
	{"delete_module", unix.SYS_DELETE_MODULE},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
}

// x32SyscallBit marks a system call made through the x32 ABI on x86-64,
// whose numbers (keyctl among them) differ from the 64-bit ones while its
// audit arch is the same.
const x32SyscallBit = 0x40000000

// Offsets in struct seccomp_data.
const (
	seccompNr   = 0
	seccompArch = 4
)

// seccompProgram is the filter bwrap installs before it runs the command:
// a system call of any arch but this one kills the process (a 32-bit
// int 0x80 call on x86-64, an AArch32 one on arm64, would otherwise use
// numbers the list does not name); an x32 call gets ENOSYS, as on the
// kernels built without x32 that most distributions ship; a denied call
// gets EPERM; every other call is allowed. It is built once; each
// sandbox is handed its own copy through a pipe.
var seccompProgram = sync.OnceValues(buildSeccomp)

func auditArch(goarch string) (uint32, error) {
	switch goarch {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("sandbox: no system call filter for %s (only amd64 and arm64)", goarch)
}

// buildSeccomp assembles the filter for the architecture fixrail was built
// for, whose system call numbers unix.SYS_* are.
func buildSeccomp() ([]byte, error) {
	goarch := runtime.GOARCH
	arch, err := auditArch(goarch)
	if err != nil {
		return nil, err
	}
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf}
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		stmt(ld, seccompArch),
		jump(jeq, arch, 1, 0),
		stmt(ret, unix.SECCOMP_RET_KILL_PROCESS),
		stmt(ld, seccompNr),
	}
	if goarch == "amd64" {
		prog = append(prog,
			jump(jge, x32SyscallBit, 0, 1),
			stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)))
	}
	n := len(deniedSyscalls)
	for i, s := range deniedSyscalls {
		// A match jumps past the rest of the list and the allow, to the
		// EPERM at the end.
		prog = append(prog, jump(jeq, s.nr, uint8(n-i), 0))
	}
	prog = append(prog,
		stmt(ret, unix.SECCOMP_RET_ALLOW),
		stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)))
	// bwrap reads struct sock_filter as the kernel lays it out.
	var b []byte
	for _, f := range prog {
		b = binary.NativeEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.NativeEndian.AppendUint32(b, f.K)
	}
	return b, nil
}
