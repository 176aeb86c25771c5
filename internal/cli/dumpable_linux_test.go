package cli

import (
	"syscall"
	"testing"
)

// TestHideEnvironment: after hideEnvironment the process is not dumpable,
// which is what keeps /proc/<pid>/environ from processes of the same user.
// (Root keeps CAP_SYS_PTRACE and can still read it: README, Containment.)
func TestHideEnvironment(t *testing.T) {
	const prGetDumpable, prSetDumpable = 3, 4
	get := func() uintptr {
		v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		return v
	}
	before := get()
	t.Cleanup(func() { syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, before, 0) })
	if err := hideEnvironment(); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != 0 {
		t.Fatalf("dumpable = %d after hideEnvironment, want 0", got)
	}
}
