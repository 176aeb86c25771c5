package cli

import "syscall"

// hideEnvironment makes this process non-dumpable, so processes of the
// same user (an agent or a test that got outside its sandbox) cannot read
// its environment, and the credentials in it, from /proc/<pid>/environ or
// attach to it. Children start dumpable again: it protects fixrail only.
func hideEnvironment() error {
	const prSetDumpable = 4
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
