package keys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/fixrail/fixrail/internal/approval"
	"io"
)

// PEM block types of the native key files.
const (
	nativePrivateType = "FIXRAIL ED25519 PRIVATE KEY"
	nativePublicType  = "FIXRAIL ED25519 PUBLIC KEY"
)

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
	return ed25519.Sign(priv, ed25519Message(approval.Namespace, msg))
}

// A Key is an approver's private key, loaded by the owner's own `fixrail
// approve` or `fixrail receipts checkpoint`, never by the hook.
type Key struct {
	kind    string
	pub     []byte                            // the public key's SSH wire form
	sshSign func(data []byte) ([]byte, error) // approval.KindSSHSIG
	ed      ed25519.PrivateKey                // approval.KindEd25519
}

// NewSSHKey makes a Key that signs SSHSIG with an SSH key held elsewhere:
// pub is the public key's SSH wire form, and sign returns the SSH wire form
// of a signature over its argument (RSA keys must sign with rsa-sha2-256 or
// rsa-sha2-512). Package sshkey makes one from an OpenSSH key file or an
// ssh.Signer.
func NewSSHKey(pub []byte, sign func(data []byte) ([]byte, error)) *Key {
	return &Key{kind: approval.KindSSHSIG, pub: pub, sshSign: sign}
}

// NewEd25519Key wraps a native ed25519 private key.
func NewEd25519Key(priv ed25519.PrivateKey) *Key {
	return &Key{kind: approval.KindEd25519, pub: ed25519KeyBlob(priv.Public().(ed25519.PublicKey)), ed: priv}
}

// ErrNotNativeKey means a key file is not a native key file; it may be an
// OpenSSH key, which package sshkey reads.
var ErrNotNativeKey = errors.New("not a native fixrail key file")

// ParseNativeKey parses the contents of a native private key file (see
// GenerateKey).
func ParseNativeKey(data []byte) (*Key, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != nativePrivateType {
		return nil, ErrNotNativeKey
	}
	if len(blk.Bytes) != ed25519.SeedSize {
		return nil, fmt.Errorf("native key: seed is %d bytes, want %d", len(blk.Bytes), ed25519.SeedSize)
	}
	return NewEd25519Key(ed25519.NewKeyFromSeed(blk.Bytes)), nil
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

// PublicKey returns the key's public half in its SSH wire form, as the
// keyring holds it.
func (k *Key) PublicKey() []byte { return bytes.Clone(k.pub) }

// AuthorizedKey returns the public key as one OpenSSH line (`type base64`),
// the form .pub and allowed_signers files hold.
func (k *Key) AuthorizedKey() string {
	r := &wireReader{b: k.pub}
	return r.string() + " " + base64.StdEncoding.EncodeToString(k.pub)
}

func (k *Key) sign(namespace string, msg []byte) ([]byte, error) {
	switch k.kind {
	case approval.KindSSHSIG:
		return signSSHSIG(k.pub, k.sshSign, namespace, msg)
	case approval.KindEd25519:
		return ed25519.Sign(k.ed, ed25519Message(namespace, msg)), nil
	}
	return nil, fmt.Errorf("%w: key kind %q", approval.ErrMalformed, k.kind)
}

// Approve signs r's canonical form and returns the token.
func (k *Key) Approve(r *approval.Request) (*approval.Token, error) {
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	msg, err := r.Canonical()
	if err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	sig, err := k.sign(approval.Namespace, msg)
	if err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	return &approval.Token{Request: *r, Signature: sig, Kind: k.kind}, nil
}

// SignCheckpoint signs a receipt-log checkpoint message in the checkpoint
// namespace. It satisfies receipt.Signer.
func (k *Key) SignCheckpoint(msg []byte) (sig []byte, kind string, err error) {
	sig, err = k.sign(approval.CheckpointNamespace, msg)
	return sig, k.kind, err
}

// SignAttestation signs an attestation's DSSE pre-authentication encoding
// in the attestation namespace: an attestation signature never passes as
// an approval or a checkpoint, nor the reverse.
func (k *Key) SignAttestation(msg []byte) (sig []byte, kind string, err error) {
	sig, err = k.sign(approval.AttestationNamespace, msg)
	return sig, k.kind, err
}

// containsPrivateKey reports whether data looks like any private key file,
// so LoadKeyring can refuse a keyring directory the agent could read a
// private key from.
func containsPrivateKey(data []byte) bool {
	return bytes.Contains(data, []byte("PRIVATE KEY-----"))
}
