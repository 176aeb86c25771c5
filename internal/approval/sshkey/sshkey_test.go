package sshkey

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/approvaltest"
	"github.com/fixrail/fixrail/internal/approval/keys"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func request(t *testing.T) *approval.Request {
	t.Helper()
	r, err := approval.NewRequest("Bash", []byte(`{"command":"git push --force origin main"}`), "/home/dev/repo", "push-force", 15*time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sshKeygen(t *testing.T, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	return approvaltest.SSHKeygen(t, stdin, args...)
}

// writeKeyring writes one allowed_signers line into a new keyring.
func writeKeyring(t *testing.T, line string) *keys.Keyring {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, keys.AllowedSignersFile), []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := keys.LoadKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignsForSSHKeygen: an SSHSIG made from an OpenSSH key file of each
// type passes `ssh-keygen -Y verify` against an allowed_signers file, fails
// it for another namespace or message, and passes the keyring the hook
// uses.
func TestSignsForSSHKeygen(t *testing.T) {
	for _, typ := range [][]string{{"ed25519"}, {"rsa", "-b", "2048"}, {"ecdsa", "-b", "256"}, {"ecdsa", "-b", "384"}, {"ecdsa", "-b", "521"}} {
		t.Run(strings.Join(typ, ""), func(t *testing.T) {
			priv := filepath.Join(t.TempDir(), "id")
			if _, err := sshKeygen(t, nil, append([]string{"-q", "-N", "", "-C", "owner@example", "-f", priv, "-t"}, typ...)...); err != nil {
				t.Fatal("ssh-keygen key generation failed")
			}
			pubLine, err := os.ReadFile(priv + ".pub")
			if err != nil {
				t.Fatal(err)
			}
			key, err := Load(priv)
			if err != nil {
				t.Fatal(err)
			}
			if key.Kind() != approval.KindSSHSIG {
				t.Fatalf("Kind = %q, want %q", key.Kind(), approval.KindSSHSIG)
			}
			if got, want := key.AuthorizedKey(), strings.Join(strings.Fields(string(pubLine))[:2], " "); got != want {
				t.Errorf("AuthorizedKey = %q, want the .pub file's %q", got, want)
			}
			tok, err := key.Approve(request(t))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := tok.Request.Canonical()
			dir := t.TempDir()
			sigFile, allowed := filepath.Join(dir, "req.sig"), filepath.Join(dir, "allowed_signers")
			allowedLine := "owner@example " + strings.TrimSpace(string(pubLine))
			if err := os.WriteFile(sigFile, tok.Signature, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(allowed, []byte(allowedLine+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			verify := func(ns string, m []byte) error {
				_, err := sshKeygen(t, m, "-Y", "verify", "-f", allowed, "-I", "owner@example", "-n", ns, "-s", sigFile)
				return err
			}
			if err := verify(approval.Namespace, msg); err != nil {
				t.Fatal("ssh-keygen -Y verify rejected our signature")
			}
			if verify("git", msg) == nil {
				t.Error("ssh-keygen accepted our signature in namespace git")
			}
			if verify(approval.Namespace, append(msg, ' ')) == nil {
				t.Error("ssh-keygen accepted our signature over a changed message")
			}
			ring := writeKeyring(t, allowedLine)
			if err := ring.Verify(tok, t0); err != nil {
				t.Errorf("keyring Verify: %v", err)
			}

			// And the other way: ssh-keygen signs, the keyring verifies.
			sig, err := sshKeygen(t, msg, "-Y", "sign", "-n", approval.Namespace, "-f", priv)
			if err != nil {
				t.Fatal("ssh-keygen -Y sign failed")
			}
			if err := ring.Verify(&approval.Token{Request: tok.Request, Signature: sig, Kind: approval.KindSSHSIG}, t0); err != nil {
				t.Errorf("keyring Verify of ssh-keygen's signature: %v", err)
			}
			other := tok.Request
			other.Cwd = "/elsewhere"
			if err := ring.Verify(&approval.Token{Request: other, Signature: sig, Kind: approval.KindSSHSIG}, t0); !errors.Is(err, keys.ErrBadSignature) {
				t.Errorf("ssh-keygen's signature over another request: %v, want ErrBadSignature", err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Run("native key file", func(t *testing.T) {
		priv, pub, err := keys.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(priv), "-----BEGIN FIXRAIL ED25519 PRIVATE KEY-----\n") ||
			!strings.HasPrefix(string(pub), "-----BEGIN FIXRAIL ED25519 PUBLIC KEY-----\n") {
			t.Fatalf("unexpected key file headers:\n%s%s", priv, pub)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "approval.key")
		if err := os.WriteFile(path, priv, 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if k.Kind() != approval.KindEd25519 {
			t.Errorf("Kind = %q, want %q", k.Kind(), approval.KindEd25519)
		}
		tok, err := k.Approve(request(t))
		if err != nil {
			t.Fatal(err)
		}
		ringDir := filepath.Join(dir, "keys")
		if err := os.Mkdir(ringDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ringDir, "approval.pub"), pub, 0o644); err != nil {
			t.Fatal(err)
		}
		ring, err := keys.LoadKeyring(ringDir)
		if err != nil {
			t.Fatal(err)
		}
		if err := ring.Verify(tok, t0); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("encrypted OpenSSH key", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "id")
		if _, err := sshKeygen(t, nil, "-q", "-t", "ed25519", "-N", "correct horse", "-f", path); err != nil {
			t.Fatal("ssh-keygen failed")
		}
		_, err := Load(path)
		if !errors.Is(err, ErrEncryptedKey) || !strings.Contains(err.Error(), "ssh-keygen -Y sign") {
			t.Errorf("Load = %v, want ErrEncryptedKey suggesting ssh-keygen -Y sign", err)
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		priv, _, _ := keys.GenerateKey(rand.Reader)
		path := filepath.Join(t.TempDir(), "approval.key")
		if err := os.WriteFile(path, priv, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "too open") {
			t.Errorf("Load = %v, want a permissions error", err)
		}
	})
	t.Run("not a key", func(t *testing.T) {
		if _, err := Parse([]byte("hello")); err == nil {
			t.Error("Parse accepted garbage")
		}
	})
}
