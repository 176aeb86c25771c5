package approval

import (
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/ssh"
)

// Namespaces bind a signature to its purpose. An approval signature never
// verifies as a checkpoint signature, and a git or file signature made with
// the same SSH key verifies as neither.
const (
	Namespace           = "fixrail-approval"
	CheckpointNamespace = "fixrail-checkpoint"
)

// Signature kinds, as stored in tokens and checkpoints.
const (
	KindSSHSIG  = "sshsig"  // armored SSHSIG, as `ssh-keygen -Y sign` writes
	KindEd25519 = "ed25519" // raw 64-byte ed25519 signature from a native key
)

// PEM block types of the native key files.
const (
	nativePrivateType = "FIXRAIL ED25519 PRIVATE KEY"
	nativePublicType  = "FIXRAIL ED25519 PUBLIC KEY"
)

// ErrEncryptedKey means an OpenSSH private key is passphrase-protected. fixrail
// does not prompt for passphrases; such a key signs through ssh-keygen.
var ErrEncryptedKey = errors.New("approval key is passphrase-protected; sign with `ssh-keygen -Y sign -n fixrail-approval -f KEY FILE` instead")

// ed25519Message is what a native key signs: a fixed prefix and the
// namespace, then the message. The prefix gives raw ed25519 signatures the
// same domain separation SSHSIG has.
func ed25519Message(namespace string, msg []byte) []byte {
	b := make([]byte, 0, 16+len(namespace)+len(msg))
	b = append(b, "fixrail-sig-v1\x00"...)
	b = append(b, namespace...)
	b = append(b, 0)
	return append(b, msg...)
}

// SignEd25519 signs msg for the approval namespace with a native key. The
// signature covers "fixrail-sig-v1\x00fixrail-approval\x00" followed by msg.
func SignEd25519(priv ed25519.PrivateKey, msg []byte) []byte {
	return ed25519.Sign(priv, ed25519Message(Namespace, msg))
}

// A Key is an approver's private key, loaded by the owner's own `fixrail
// approve` or `fixrail receipts checkpoint`, never by the hook.
type Key struct {
	kind string
	ssh  ssh.Signer         // KindSSHSIG
	ed   ed25519.PrivateKey // KindEd25519
}

// NewSSHKey wraps an ssh.Signer (for example from an agent the owner
// controls) as a Key that makes SSHSIG signatures.
func NewSSHKey(s ssh.Signer) *Key { return &Key{kind: KindSSHSIG, ssh: s} }

// NewEd25519Key wraps a native ed25519 private key.
func NewEd25519Key(priv ed25519.PrivateKey) *Key { return &Key{kind: KindEd25519, ed: priv} }

// LoadKey reads a private key file: an unencrypted OpenSSH private key, or a
// native key file (see GenerateKey). It refuses a file that group or others
// may read, as ssh does.
func LoadKey(path string) (*Key, error) {
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
	k, err := ParseKey(data)
	if err != nil {
		return nil, fmt.Errorf("load approval key %s: %w", path, err)
	}
	return k, nil
}

// ParseKey parses the contents of a private key file.
func ParseKey(data []byte) (*Key, error) {
	if blk, _ := pem.Decode(data); blk != nil && blk.Type == nativePrivateType {
		if len(blk.Bytes) != ed25519.SeedSize {
			return nil, fmt.Errorf("native key: seed is %d bytes, want %d", len(blk.Bytes), ed25519.SeedSize)
		}
		return NewEd25519Key(ed25519.NewKeyFromSeed(blk.Bytes)), nil
	}
	s, err := ssh.ParsePrivateKey(data)
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, ErrEncryptedKey
		}
		return nil, fmt.Errorf("parse private key (FIDO and agent-held keys sign with `ssh-keygen -Y sign -n fixrail-approval` instead): %w", err)
	}
	return NewSSHKey(s), nil
}

// GenerateKey makes a native ed25519 approval key and returns the contents
// of its private and public key files. Both are PEM:
//
//	-----BEGIN FIXRAIL ED25519 PRIVATE KEY-----
//	<base64 of the 32-byte seed>
//	-----END FIXRAIL ED25519 PRIVATE KEY-----
//
//	-----BEGIN FIXRAIL ED25519 PUBLIC KEY-----
//	<base64 of the 32-byte public key>
//	-----END FIXRAIL ED25519 PUBLIC KEY-----
//
// The public file goes into the keyring directory; the private file goes
// where the agent cannot read it (see the package documentation).
func GenerateKey(rand io.Reader) (private, public []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, nil, fmt.Errorf("generate approval key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: nativePrivateType, Bytes: priv.Seed()}),
		MarshalPublicKey(pub), nil
}

// MarshalPublicKey returns a native public key file for pub.
func MarshalPublicKey(pub ed25519.PublicKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: nativePublicType, Bytes: pub})
}

// Kind is the kind of signature the key makes: KindSSHSIG or KindEd25519.
func (k *Key) Kind() string { return k.kind }

// PublicKey returns the key's public half in SSH form, as the keyring holds it.
func (k *Key) PublicKey() ssh.PublicKey {
	if k.kind == KindSSHSIG {
		return k.ssh.PublicKey()
	}
	pub, err := ssh.NewPublicKey(k.ed.Public())
	if err != nil {
		panic(err) // unreachable: an ed25519 public key always converts
	}
	return pub
}

func (k *Key) sign(namespace string, msg []byte) ([]byte, error) {
	switch k.kind {
	case KindSSHSIG:
		return signSSHSIG(k.ssh, namespace, msg)
	case KindEd25519:
		return ed25519.Sign(k.ed, ed25519Message(namespace, msg)), nil
	}
	return nil, fmt.Errorf("%w: key kind %q", ErrMalformed, k.kind)
}

// Approve signs r's canonical form and returns the token.
func (k *Key) Approve(r *Request) (*Token, error) {
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	msg, err := r.Canonical()
	if err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	sig, err := k.sign(Namespace, msg)
	if err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	return &Token{Request: *r, Signature: sig, Kind: k.kind}, nil
}

// SignCheckpoint signs a receipt-log checkpoint message in the checkpoint
// namespace. It satisfies receipt.Signer.
func (k *Key) SignCheckpoint(msg []byte) (sig []byte, kind string, err error) {
	sig, err = k.sign(CheckpointNamespace, msg)
	return sig, k.kind, err
}

// containsPrivateKey reports whether data looks like any private key file,
// so LoadKeyring can refuse a keyring directory the agent could read a
// private key from.
func containsPrivateKey(data []byte) bool {
	return bytes.Contains(data, []byte("PRIVATE KEY-----"))
}
