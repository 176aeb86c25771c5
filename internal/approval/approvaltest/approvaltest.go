// Package approvaltest holds test helpers shared by the approval packages'
// tests: running the real ssh-keygen, the independent implementation of
// SSHSIG that fixrail's signatures must interoperate with.
package approvaltest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SSHKeygen runs ssh-keygen with no agent (SSH_AUTH_SOCK empty), so
// nothing but the key file named in args can sign, and returns its
// standard output. The test fails when ssh-keygen is not installed (the
// test command installs openssh-client); a failing run is logged with its
// stderr and returned as an error, for tests that expect one.
func SSHKeygen(t testing.TB, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("ssh-keygen not installed: the test command installs openssh-client")
	}
	cmd := exec.Command(p, args...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("ssh-keygen %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, err
}
