package approval

// SSHSIG is OpenSSH's detached signature format (PROTOCOL.sshsig in
// openssh-portable), the one `ssh-keygen -Y sign` writes. golang.org/x/crypto/ssh
// has every primitive but no SSHSIG API, so the envelope is built here.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"
)

const (
	sshsigMagic   = "SSHSIG"
	sshsigVersion = 1
	sshsigPEMType = "SSH SIGNATURE"
	sshsigHash    = "sha512" // what we sign with; ssh-keygen's default too
	armorWidth    = 70       // ssh-keygen wraps the base64 at 70 columns
)

// sshsigBlob is the signature blob inside the armor, after the magic.
type sshsigBlob struct {
	Version   uint32
	PublicKey []byte
	Namespace string
	Reserved  string
	Hash      string
	Signature []byte
}

// sshsigSignedData builds what the key actually signs: the magic and a
// namespace-bound hash of the message. Binding the namespace is what stops a
// git commit signature from passing as an approval.
func sshsigSignedData(namespace, hashAlg string, msg []byte) ([]byte, error) {
	var h []byte
	switch hashAlg {
	case "sha512":
		s := sha512.Sum512(msg)
		h = s[:]
	case "sha256":
		s := sha256.Sum256(msg)
		h = s[:]
	default:
		return nil, fmt.Errorf("unsupported SSHSIG hash %q", hashAlg)
	}
	return append([]byte(sshsigMagic), ssh.Marshal(struct {
		Namespace string
		Reserved  string
		Hash      string
		Digest    []byte
	}{namespace, "", hashAlg, h})...), nil
}

// SignSSH signs msg as `ssh-keygen -Y sign -n fixrail-approval` would and
// returns the armored SSHSIG (sha512). RSA keys sign with rsa-sha2-512.
func SignSSH(s ssh.Signer, msg []byte) ([]byte, error) {
	return signSSHSIG(s, Namespace, msg)
}

func signSSHSIG(s ssh.Signer, namespace string, msg []byte) ([]byte, error) {
	if namespace == "" {
		return nil, fmt.Errorf("sshsig: empty namespace")
	}
	data, err := sshsigSignedData(namespace, sshsigHash, msg)
	if err != nil {
		return nil, err
	}
	var sig *ssh.Signature
	if as, ok := s.(ssh.AlgorithmSigner); ok && s.PublicKey().Type() == ssh.KeyAlgoRSA {
		// OpenSSH refuses SHA-1 "ssh-rsa" signatures inside SSHSIG.
		sig, err = as.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA512)
	} else {
		sig, err = s.Sign(rand.Reader, data)
	}
	if err != nil {
		return nil, fmt.Errorf("sshsig: sign: %w", err)
	}
	blob := append([]byte(sshsigMagic), ssh.Marshal(sshsigBlob{
		Version:   sshsigVersion,
		PublicKey: s.PublicKey().Marshal(),
		Namespace: namespace,
		Hash:      sshsigHash,
		Signature: ssh.Marshal(sig),
	})...)
	return armor(blob), nil
}

func armor(blob []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b bytes.Buffer
	b.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > armorWidth {
		b.WriteString(enc[:armorWidth])
		b.WriteByte('\n')
		enc = enc[armorWidth:]
	}
	b.WriteString(enc)
	b.WriteString("\n-----END SSH SIGNATURE-----\n")
	return b.Bytes()
}

// parseSSHSIG unarmors and decodes a signature. It checks the envelope only;
// the caller checks namespace, key and signature.
func parseSSHSIG(armored []byte) (*sshsigBlob, *ssh.Signature, error) {
	blk, rest := pem.Decode(armored)
	if blk == nil || blk.Type != sshsigPEMType {
		return nil, nil, fmt.Errorf("%w: not an armored SSH signature", ErrMalformed)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, nil, fmt.Errorf("%w: data after the SSH signature", ErrMalformed)
	}
	if !bytes.HasPrefix(blk.Bytes, []byte(sshsigMagic)) {
		return nil, nil, fmt.Errorf("%w: SSH signature lacks the SSHSIG magic", ErrMalformed)
	}
	var w sshsigBlob
	if err := ssh.Unmarshal(blk.Bytes[len(sshsigMagic):], &w); err != nil {
		return nil, nil, fmt.Errorf("%w: SSH signature: %v", ErrMalformed, err)
	}
	if w.Version != sshsigVersion {
		return nil, nil, fmt.Errorf("%w: SSHSIG version %d", ErrMalformed, w.Version)
	}
	var sig ssh.Signature
	if err := ssh.Unmarshal(w.Signature, &sig); err != nil {
		return nil, nil, fmt.Errorf("%w: SSH signature value: %v", ErrMalformed, err)
	}
	return &w, &sig, nil
}
