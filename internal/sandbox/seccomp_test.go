package sandbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter interprets the few classic BPF instructions buildSeccomp uses
// on one system call, as the kernel would.
func runFilter(t *testing.T, prog []byte, arch, nr uint32) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc*8 < len(prog); pc++ {
		ins := prog[pc*8:]
		code, jt, jf, k := binary.NativeEndian.Uint16(ins), ins[2], ins[3], binary.NativeEndian.Uint32(ins[4:])
		switch code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			switch k {
			case seccompNr:
				acc = nr
			case seccompArch:
				acc = arch
			default:
				t.Fatalf("load of offset %d", k)
			}
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			hit := acc == k
			if code&0xf0 == unix.BPF_JGE {
				hit = acc >= k
			}
			if hit {
				pc += int(jt)
			} else {
				pc += int(jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return k
		default:
			t.Fatalf("instruction %#x", code)
		}
	}
	t.Fatal("the filter runs off its end")
	return 0
}

// TestSeccompProgram: every denied call gets EPERM, ordinary calls pass,
// a foreign arch (32-bit x86, AArch32) kills, and on x86-64 an x32 call —
// keyctl's x32 number among them — gets ENOSYS.
func TestSeccompProgram(t *testing.T) {
	prog, err := buildSeccomp()
	if err != nil {
		t.Fatal(err)
	}
	arch, _ := auditArch(runtime.GOARCH)
	eperm, enosys := unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM), unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)
	type tc struct {
		name     string
		arch, nr uint32
		want     uint32
	}
	tests := []tc{
		{"read", arch, unix.SYS_READ, unix.SECCOMP_RET_ALLOW},
		{"clone", arch, unix.SYS_CLONE, unix.SECCOMP_RET_ALLOW},
		{"execve", arch, unix.SYS_EXECVE, unix.SECCOMP_RET_ALLOW},
		{"setrlimit", arch, unix.SYS_PRLIMIT64, unix.SECCOMP_RET_ALLOW},
		{"foreign arch", unix.AUDIT_ARCH_I386, unix.SYS_READ, unix.SECCOMP_RET_KILL_PROCESS},
		{"foreign arch, keyctl", unix.AUDIT_ARCH_ARM, 311, unix.SECCOMP_RET_KILL_PROCESS},
	}
	for _, s := range deniedSyscalls {
		tests = append(tests, tc{s.name, arch, s.nr, eperm})
	}
	if runtime.GOARCH == "amd64" {
		tests = append(tests,
			tc{"x32 keyctl", arch, x32SyscallBit | unix.SYS_KEYCTL, enosys},
			tc{"x32 read", arch, x32SyscallBit, enosys})
	}
	for _, tc := range tests {
		if got := runFilter(t, prog, tc.arch, tc.nr); got != tc.want {
			t.Errorf("%s (arch %#x, nr %#x): %#x, want %#x", tc.name, tc.arch, tc.nr, got, tc.want)
		}
	}
}

func TestDefaultLimits(t *testing.T) {
	for _, tc := range []struct {
		cpus  int
		procs uint64
	}{{0, 4096}, {1, 4096}, {8, 4096}, {56, 4096}, {57, 57 * 73}, {128, 128 * 144}} {
		if got := defaultLimits(tc.cpus); got.procs != tc.procs || got.fileSize != 8<<30 {
			t.Errorf("defaultLimits(%d) = %+v, want %d processes, 8 GiB", tc.cpus, got, tc.procs)
		}
	}
}
