package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"github.com/fixrail/fixrail/internal/approval"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/approval/approvaltest"
	"golang.org/x/crypto/ssh"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// testRequest is a gated `git push --force` as a hook would record it.
func testRequest(t *testing.T) *approval.Request {
	t.Helper()
	r, err := approval.NewRequest("Bash", json.RawMessage(`{"command":"git push --force origin main","timeout":120000}`),
		"/home/dev/repo", "push-force", 15*time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runSSHKeygen runs ssh-keygen with no agent, so nothing but the key file
// can sign.
func runSSHKeygen(t *testing.T, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	return approvaltest.SSHKeygen(t, stdin, args...)
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
	k, err := ParseNativeKey(priv)
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
	return sshSignerKey(s), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
}

// sshSignerKey wraps an x/crypto/ssh signer (not RSA: it would sign SHA-1)
// as a Key, the way package sshkey does for the CLI.
func sshSignerKey(s ssh.Signer) *Key {
	return NewSSHKey(s.PublicKey().Marshal(), func(data []byte) ([]byte, error) {
		sig, err := s.Sign(rand.Reader, data)
		if err != nil {
			return nil, err
		}
		return ssh.Marshal(sig), nil
	})
}
