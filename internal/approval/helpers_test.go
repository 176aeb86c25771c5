package approval

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// testRequest is a gated `git push --force` as a hook would record it.
func testRequest(t *testing.T) *Request {
	t.Helper()
	r, err := NewRequest("Bash", json.RawMessage(`{"command":"git push --force origin main","timeout":120000}`),
		"/home/dev/repo", "push-force", 15*time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sshKeygen returns the path of ssh-keygen, skipping the test without it.
func sshKeygen(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("ssh-keygen not installed: the test command installs openssh-client")
	}
	return p
}

// runSSHKeygen runs ssh-keygen with no agent, so nothing but the key file
// can sign.
func runSSHKeygen(t *testing.T, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(sshKeygen(t), args...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("ssh-keygen %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, err
}

// genSSHKey makes an unencrypted OpenSSH key of the given type in a temp
// dir and returns its private key path and its public key line.
func genSSHKey(t *testing.T, typ string) (privPath string, pubLine string) {
	t.Helper()
	privPath = filepath.Join(t.TempDir(), "id_"+typ)
	args := []string{"-q", "-t", typ, "-N", "", "-C", "owner@example", "-f", privPath}
	if typ == "rsa" {
		args = append(args, "-b", "2048")
	}
	if _, err := runSSHKeygen(t, nil, args...); err != nil {
		t.Fatal("ssh-keygen key generation failed")
	}
	pub, err := os.ReadFile(privPath + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return privPath, strings.TrimSpace(string(pub))
}

// keyringDir writes files (name → contents) into a new directory and loads
// it as a keyring.
func keyringDir(t *testing.T, files map[string]string) *Keyring {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := LoadKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// nativeKey returns a fresh native key and its public key file contents.
func nativeKey(t *testing.T) (*Key, string) {
	t.Helper()
	priv, pub, err := GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k, string(pub)
}

// goSSHKey returns a fresh in-memory SSH ed25519 key and its public line.
func goSSHKey(t *testing.T) (*Key, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k := NewSSHKey(s)
	return k, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k.PublicKey())))
}
