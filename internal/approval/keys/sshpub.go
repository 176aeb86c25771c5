package keys

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// SSH public key algorithms the keyring accepts. Certificates are not
// among them: a keyring entry is one key, not an authority.
const (
	keyEd25519   = "ssh-ed25519"
	keySKEd25519 = "sk-ssh-ed25519@openssh.com"
	keyECDSA256  = "ecdsa-sha2-nistp256"
	keyECDSA384  = "ecdsa-sha2-nistp384"
	keyECDSA521  = "ecdsa-sha2-nistp521"
	keySKECDSA   = "sk-ecdsa-sha2-nistp256@openssh.com"
	keyRSA       = "ssh-rsa"
	sigRSA256    = "rsa-sha2-256"
	sigRSA512    = "rsa-sha2-512"
)

// minRSABits is the smallest RSA modulus the keyring accepts (ssh-keygen
// has refused to make smaller keys since OpenSSH 8.8).
const minRSABits = 2048

// skUserPresent is the FIDO flag that the key was touched for the
// signature.
const skUserPresent = 0x01

// An sshPublicKey is a parsed SSH public key.
type sshPublicKey struct {
	typ  string
	blob []byte // the wire form, as keys are compared and fingerprinted

	ed  ed25519.PublicKey
	ec  *ecdsa.PublicKey
	rsa *rsa.PublicKey
	app string // security keys: the FIDO application, "ssh:" by default
}

// sshSignature is an SSH signature: the algorithm, its blob, and for
// security keys the flags and counter that follow.
type sshSignature struct {
	format  string
	blob    []byte
	flags   byte
	counter uint32
}

// parseSSHPublicKey parses a public key in its wire form.
func parseSSHPublicKey(blob []byte) (*sshPublicKey, error) {
	r := &wireReader{b: blob}
	k := &sshPublicKey{typ: r.string(), blob: blob}
	if r.err != nil {
		return nil, fmt.Errorf("public key: %w", r.err)
	}
	switch k.typ {
	case keyEd25519, keySKEd25519:
		pk := r.bytes()
		if k.typ == keySKEd25519 {
			k.app = r.string()
		}
		if err := r.end(); err != nil {
			return nil, fmt.Errorf("%s public key: %w", k.typ, err)
		}
		if len(pk) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%s public key is %d bytes, want %d", k.typ, len(pk), ed25519.PublicKeySize)
		}
		k.ed = ed25519.PublicKey(pk)
	case keyECDSA256, keyECDSA384, keyECDSA521, keySKECDSA:
		curveName, point := r.string(), r.bytes()
		if k.typ == keySKECDSA {
			k.app = r.string()
		}
		if err := r.end(); err != nil {
			return nil, fmt.Errorf("%s public key: %w", k.typ, err)
		}
		curve, name := ecCurve(k.typ)
		if curveName != name {
			return nil, fmt.Errorf("%s public key names curve %q", k.typ, curveName)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, fmt.Errorf("%s public key: %w", k.typ, err)
		}
		k.ec = pub
	case keyRSA:
		e, n := r.mpint(), r.mpint()
		if err := r.end(); err != nil {
			return nil, fmt.Errorf("%s public key: %w", k.typ, err)
		}
		if n.BitLen() < minRSABits {
			return nil, fmt.Errorf("%s public key of %d bits; at least %d are needed", k.typ, n.BitLen(), minRSABits)
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return nil, fmt.Errorf("%s public key has an unusable exponent", k.typ)
		}
		k.rsa = &rsa.PublicKey{N: n, E: int(e.Int64())}
	default:
		if strings.Contains(k.typ, "-cert-") {
			return nil, fmt.Errorf("%q is a certificate; the keyring takes plain public keys", k.typ)
		}
		return nil, fmt.Errorf("unsupported public key type %q", k.typ)
	}
	return k, nil
}

// ed25519KeyBlob is the wire form of an ed25519 public key.
func ed25519KeyBlob(pub ed25519.PublicKey) []byte {
	return appendWireString(appendWireString(nil, []byte(keyEd25519)), pub)
}

// ecCurve is the curve and its SSH name for an ECDSA key type.
func ecCurve(typ string) (elliptic.Curve, string) {
	switch typ {
	case keyECDSA384:
		return elliptic.P384(), "nistp384"
	case keyECDSA521:
		return elliptic.P521(), "nistp521"
	}
	return elliptic.P256(), "nistp256"
}

// parseSSHSignature parses the wire form of a signature.
func parseSSHSignature(b []byte) (*sshSignature, error) {
	r := &wireReader{b: b}
	s := &sshSignature{format: r.string(), blob: r.bytes()}
	if s.format == keySKEd25519 || s.format == keySKECDSA {
		s.flags, s.counter = r.byte(), r.uint32()
	}
	if err := r.end(); err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	return s, nil
}

// fingerprint is the key's SHA256 fingerprint as ssh-keygen -l prints it.
func (k *sshPublicKey) fingerprint() string {
	sum := sha256.Sum256(k.blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// verify checks sig over data. The signature algorithm must be the key's
// own (for RSA, rsa-sha2-256 or rsa-sha2-512: SHA-1 is refused), and a
// security key's signature must carry the user-presence flag.
func (k *sshPublicKey) verify(data []byte, sig *sshSignature) error {
	switch k.typ {
	case keyEd25519:
		if sig.format != k.typ {
			return sigMismatch(k, sig)
		}
		if len(sig.blob) != ed25519.SignatureSize || !ed25519.Verify(k.ed, data, sig.blob) {
			return errors.New("ed25519 signature does not verify")
		}
		return nil
	case keyECDSA256, keyECDSA384, keyECDSA521:
		if sig.format != k.typ {
			return sigMismatch(k, sig)
		}
		return verifyECDSA(k.ec, ecHash(k.typ), data, sig.blob)
	case keyRSA:
		h := crypto.SHA256
		switch sig.format {
		case sigRSA256:
		case sigRSA512:
			h = crypto.SHA512
		case keyRSA:
			return errors.New("SHA-1 RSA signatures are refused")
		default:
			return sigMismatch(k, sig)
		}
		hh := h.New()
		hh.Write(data)
		if err := rsa.VerifyPKCS1v15(k.rsa, h, hh.Sum(nil), sig.blob); err != nil {
			return fmt.Errorf("RSA signature does not verify: %w", err)
		}
		return nil
	case keySKEd25519, keySKECDSA:
		if sig.format != k.typ {
			return sigMismatch(k, sig)
		}
		if sig.flags&skUserPresent == 0 {
			return errors.New("security key signature made without user presence (no touch)")
		}
		// A FIDO authenticator signs the application's hash, the flags
		// and counter, and the message's hash.
		app, msg := sha256.Sum256([]byte(k.app)), sha256.Sum256(data)
		signed := append(app[:], sig.flags, byte(sig.counter>>24), byte(sig.counter>>16), byte(sig.counter>>8), byte(sig.counter))
		signed = append(signed, msg[:]...)
		if k.typ == keySKEd25519 {
			if len(sig.blob) != ed25519.SignatureSize || !ed25519.Verify(k.ed, signed, sig.blob) {
				return errors.New("security key ed25519 signature does not verify")
			}
			return nil
		}
		return verifyECDSA(k.ec, sha256.New, signed, sig.blob)
	}
	return fmt.Errorf("unsupported public key type %q", k.typ)
}

func sigMismatch(k *sshPublicKey, sig *sshSignature) error {
	return fmt.Errorf("signature algorithm %q does not belong to a %s key", sig.format, k.typ)
}

// ecHash is the hash an ECDSA key type signs with (RFC 5656 §6.2.1).
func ecHash(typ string) func() hash.Hash {
	switch typ {
	case keyECDSA384:
		return sha512.New384
	case keyECDSA521:
		return sha512.New
	}
	return sha256.New
}

// verifyECDSA checks an SSH ECDSA signature blob (mpint r, mpint s).
func verifyECDSA(pub *ecdsa.PublicKey, newHash func() hash.Hash, data, blob []byte) error {
	r := &wireReader{b: blob}
	sr, ss := r.mpint(), r.mpint()
	if err := r.end(); err != nil {
		return fmt.Errorf("ECDSA signature: %w", err)
	}
	h := newHash()
	h.Write(data)
	if sr.Sign() <= 0 || ss.Sign() <= 0 || !ecdsa.Verify(pub, h.Sum(nil), sr, ss) {
		return errors.New("ECDSA signature does not verify")
	}
	return nil
}

// isKeyType reports whether s names an accepted public key type.
func isKeyType(s string) bool {
	switch s {
	case keyEd25519, keySKEd25519, keyECDSA256, keyECDSA384, keyECDSA521, keySKECDSA, keyRSA:
		return true
	}
	return false
}

// parseAuthorizedKey parses one line in the authorized_keys form OpenSSH
// uses for .pub files and allowed_signers key fields: [options] keytype
// base64 [comment]. Options are a comma-separated list in which a quoted
// value may hold commas and spaces; they are returned raw (name=value, the
// value still quoted).
func parseAuthorizedKey(line string) (k *sshPublicKey, comment string, opts []string, err error) {
	line = strings.TrimSpace(line)
	first := line
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		first = line[:i]
	}
	if !isKeyType(first) && !strings.Contains(first, "-cert-") {
		optText, rest, err := splitOptions(line)
		if err != nil {
			return nil, "", nil, err
		}
		if opts, err = splitOptionList(optText); err != nil {
			return nil, "", nil, err
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return nil, "", nil, errors.New("want `keytype base64-key [comment]`")
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return nil, "", nil, fmt.Errorf("key is not base64: %w", err)
	}
	if k, err = parseSSHPublicKey(blob); err != nil {
		return nil, "", nil, err
	}
	if k.typ != fields[0] {
		return nil, "", nil, fmt.Errorf("key type %q does not match the key's own type %q", fields[0], k.typ)
	}
	return k, strings.Join(fields[2:], " "), opts, nil
}

// splitOptions cuts the options field, which ends at the first blank
// outside double quotes, from the rest of the line.
func splitOptions(line string) (opts, rest string, err error) {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && quoted && i+1 < len(line):
			i++
		case c == '"':
			quoted = !quoted
		case (c == ' ' || c == '\t') && !quoted:
			return line[:i], strings.TrimSpace(line[i:]), nil
		}
	}
	if quoted {
		return "", "", errors.New("unterminated quote in the key options")
	}
	return "", "", errors.New("no key after the options")
}

// splitOptionList splits options at commas outside double quotes.
func splitOptionList(s string) ([]string, error) {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted && i+1 < len(s):
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	out = append(out, s[start:])
	for _, o := range out {
		if o == "" {
			return nil, errors.New("empty key option")
		}
	}
	return out, nil
}
