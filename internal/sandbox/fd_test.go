package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// TestSandboxInheritsNoFD: a descriptor fixrail inherited from whatever
// started it without close-on-exec (a shell's `exec 9<dir`, a CI runner's
// or a process manager's pipe) is not passed to the command. An inherited
// directory descriptor is a way out of the mount namespace: through
// /proc/self/fd/N the command reads and writes the host's files (the
// operator's credentials here) as if nothing were hidden. The stand-in is
// a directory descriptor opened without O_CLOEXEC in this process.
func TestSandboxInheritsNoFD(t *testing.T) {
	requireBwrap(t)
	h := newHostile(t)
	fd, err := syscall.Open(h.home, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	// Control: the descriptor is open and not close-on-exec, as one
	// inherited from a parent would be.
	if flags, err := fcntl(fd, syscall.F_GETFD); err != nil || flags&syscall.FD_CLOEXEC != 0 {
		t.Fatalf("stand-in descriptor flags %#x, %v: want it inheritable", flags, err)
	}
	script := fmt.Sprintf(`ls /proc/self/fd/
		cat /proc/self/fd/%[1]d/.ssh/id_ed25519
		echo pwned > /proc/self/fd/%[1]d/.gitconfig
		echo pwned > /proc/self/fd/%[1]d/planted`, fd)
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{Args: []string{"/bin/sh", "-c", script}, Dir: h.worktree, Env: h.env(t), Sandbox: h.spec()})
	if err != nil || !res.Sandboxed {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if leaked := h.leaked(res.Output()); len(leaked) > 0 {
		t.Errorf("the command read %v through an inherited descriptor:\n%s", leaked, res.Output())
	}
	if changed := h.changed(); len(changed) > 0 {
		t.Errorf("the command changed %v through an inherited descriptor", changed)
	}
	if _, err := os.Lstat(filepath.Join(h.home, "planted")); err == nil {
		t.Errorf("the command created a file in the operator's home through an inherited descriptor")
	}
	// The descriptor itself stays usable by fixrail.
	if _, err := fcntl(fd, syscall.F_GETFD); err != nil {
		t.Errorf("the inherited descriptor was closed in fixrail: %v", err)
	}
}

func fcntl(fd, cmd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
