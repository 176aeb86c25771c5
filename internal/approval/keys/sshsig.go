package keys

// SSHSIG is OpenSSH's detached signature format (PROTOCOL.sshsig in
// openssh-portable), the one `ssh-keygen -Y sign` writes. The envelope is
// built and read here; the key's own signature inside it comes from an SSH
// signer (package sshkey, or ssh-keygen) and is checked in sshpub.go.

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"github.com/fixrail/fixrail/internal/approval"
)

const (
	sshsigMagic   = "SSHSIG"
	sshsigVersion = 1
	sshsigPEMType = "SSH SIGNATURE"
	sshsigHash    = "sha512" // what we sign with; ssh-keygen's default too
	armorWidth    = 70       // ssh-keygen wraps the base64 at 70 columns
)

// sshsigBlob is the signature blob inside the armor, after the magic and
// the version.
type sshsigBlob struct {
	PublicKey []byte
	Namespace string
	Hash      string
	Signature []byte // the wire form of an SSH signature
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
	b := []byte(sshsigMagic)
	b = appendWireString(b, []byte(namespace))
	b = appendWireString(b, nil) // reserved
	b = appendWireString(b, []byte(hashAlg))
	return appendWireString(b, h), nil
}

// signSSHSIG makes an armored SSHSIG (sha512) over msg in namespace with
// the SSH key whose wire form is pub; sign returns the wire form of an SSH
// signature over its argument.
func signSSHSIG(pub []byte, sign func(data []byte) ([]byte, error), namespace string, msg []byte) ([]byte, error) {
	if namespace == "" {
		return nil, fmt.Errorf("sshsig: empty namespace")
	}
	data, err := sshsigSignedData(namespace, sshsigHash, msg)
	if err != nil {
		return nil, err
	}
	sig, err := sign(data)
	if err != nil {
		return nil, fmt.Errorf("sshsig: sign: %w", err)
	}
	b := binary.BigEndian.AppendUint32([]byte(sshsigMagic), sshsigVersion)
	b = appendWireString(b, pub)
	b = appendWireString(b, []byte(namespace))
	b = appendWireString(b, nil) // reserved
	b = appendWireString(b, []byte(sshsigHash))
	b = appendWireString(b, sig)
	return armor(b), nil
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
func parseSSHSIG(armored []byte) (*sshsigBlob, *sshSignature, error) {
	blk, rest := pem.Decode(armored)
	if blk == nil || blk.Type != sshsigPEMType {
		return nil, nil, fmt.Errorf("%w: not an armored SSH signature", approval.ErrMalformed)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, nil, fmt.Errorf("%w: data after the SSH signature", approval.ErrMalformed)
	}
	body, ok := bytes.CutPrefix(blk.Bytes, []byte(sshsigMagic))
	if !ok {
		return nil, nil, fmt.Errorf("%w: SSH signature lacks the SSHSIG magic", approval.ErrMalformed)
	}
	r := &wireReader{b: body}
	version := r.uint32()
	w := sshsigBlob{PublicKey: r.bytes(), Namespace: r.string()}
	r.bytes() // reserved: ignored, as OpenSSH does
	w.Hash, w.Signature = r.string(), r.bytes()
	if err := r.end(); err != nil {
		return nil, nil, fmt.Errorf("%w: SSH signature: %v", approval.ErrMalformed, err)
	}
	if version != sshsigVersion {
		return nil, nil, fmt.Errorf("%w: SSHSIG version %d", approval.ErrMalformed, version)
	}
	sig, err := parseSSHSignature(w.Signature)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: SSH signature value: %v", approval.ErrMalformed, err)
	}
	return &w, sig, nil
}

// CanonicalSSHSIG reports whether armored is byte for byte the armoring
// fixrail writes of the signature it holds. Unarmoring is lenient (PEM
// whitespace, base64 padding bits); an attestation, whose every byte must
// count, accepts only this one form.
func CanonicalSSHSIG(armored []byte) bool {
	blk, _ := pem.Decode(armored)
	return blk != nil && bytes.Equal(armor(blk.Bytes), armored)
}
