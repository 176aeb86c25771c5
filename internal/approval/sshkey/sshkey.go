// Package sshkey makes approval keys from OpenSSH private key files and
// ssh.Signers: the signing half of approvals, with the owner's key custody
// (custody.go: where the private key is found, the rule that it lies outside
// $FIXRAIL_HOME, creating a key pair), so that the CLI only parses flags and
// prints. It is apart from package approval so that the hook, which only
// verifies, does not link golang.org/x/crypto/ssh (whose init sets up a
// whole SSH transport, a tenth of a millisecond on every tool call).
package sshkey

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"golang.org/x/crypto/ssh"
)

// ErrEncryptedKey means an OpenSSH private key is passphrase-protected.
// fixrail does not prompt for passphrases; such a key signs through
// ssh-keygen.
var ErrEncryptedKey = errors.New("approval key is passphrase-protected; sign with `ssh-keygen -Y sign -n fixrail-approval -f KEY FILE` instead")

// Load reads a private key file: a native key file (keys.GenerateKey)
// or an unencrypted OpenSSH private key. It refuses a file that group or
// others may read, as ssh does.
func Load(path string) (*keys.Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load approval key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("load approval key %s: permissions %#o are too open; chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load approval key: %w", err)
	}
	k, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load approval key %s: %w", path, err)
	}
	return k, nil
}

// Parse parses the contents of a private key file (see Load).
func Parse(data []byte) (*keys.Key, error) {
	k, err := keys.ParseNativeKey(data)
	if !errors.Is(err, keys.ErrNotNativeKey) {
		return k, err
	}
	s, err := ssh.ParsePrivateKey(data)
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, ErrEncryptedKey
		}
		return nil, fmt.Errorf("parse private key (FIDO and agent-held keys sign with `ssh-keygen -Y sign -n fixrail-approval` instead): %w", err)
	}
	return FromSigner(s), nil
}

// FromSigner makes an approval key that signs SSHSIG with s (for example
// a key from an agent the owner controls). RSA keys sign with rsa-sha2-512:
// OpenSSH refuses SHA-1 "ssh-rsa" signatures inside SSHSIG.
func FromSigner(s ssh.Signer) *keys.Key {
	return keys.NewSSHKey(s.PublicKey().Marshal(), func(data []byte) ([]byte, error) {
		var sig *ssh.Signature
		var err error
		if as, ok := s.(ssh.AlgorithmSigner); ok && s.PublicKey().Type() == ssh.KeyAlgoRSA {
			sig, err = as.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA512)
		} else {
			sig, err = s.Sign(rand.Reader, data)
		}
		if err != nil {
			return nil, err
		}
		return ssh.Marshal(sig), nil
	})
}
