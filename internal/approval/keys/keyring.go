package keys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/fixrail/fixrail/internal/approval"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Verification errors. A token that fails with any of them must not let the
// call run.
var (
	ErrNoKey        = errors.New("approval not signed by a key in the keyring")
	ErrBadSignature = errors.New("approval signature does not verify")
	ErrExpired      = errors.New("approval has expired")
)

// AllowedSignersFile is the name, inside the keyring directory, of the
// ssh-keygen style allowed-signers file.
const AllowedSignersFile = "allowed_signers"

// A Keyring holds the approvers' public keys.
type Keyring struct {
	keys []ringKey
}

type ringKey struct {
	principals  string        // from allowed_signers, or the key comment or file name
	pub         *sshPublicKey // native ed25519 keys are held in SSH form too
	namespaces  []string      // allowed namespaces; nil means any
	validAfter  time.Time     // zero means unbounded
	validBefore time.Time
	source      string // file:line, for messages
}

// LoadKeyring reads the approvers' public keys from dir:
//
//   - allowed_signers: lines of `principals [options] keytype base64 [comment]`
//     as in ssh-keygen(1) ALLOWED SIGNERS. The options namespaces="…",
//     valid-after=… and valid-before=… are honoured; any other option (for
//     example cert-authority) is an error rather than being ignored.
//     Principals are recorded but not matched: every listed key is an approver.
//   - *.pub: OpenSSH public keys (one per line, no options), or a native
//     ed25519 public key file (see GenerateKey).
//
// Other files are ignored, but a file that holds a private key is an error:
// the keyring directory lives where the agent can read, so a private key
// there would let the agent approve its own calls. A missing directory is an
// empty keyring, against which every token fails with ErrNoKey.
func LoadKeyring(dir string) (*Keyring, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &Keyring{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load keyring: %w", err)
	}
	k := &Keyring{}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("load keyring: %w", err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := pathguard.ReadRegular(path, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("load keyring: %w", err)
		}
		if containsPrivateKey(data) {
			return nil, fmt.Errorf("load keyring: %s holds a private key; move it where the agent cannot read it and keep only the public key here", path)
		}
		switch {
		case name == AllowedSignersFile:
			err = k.addAllowedSigners(path, data)
		case strings.HasSuffix(name, ".pub"):
			err = k.addPublicKeyFile(path, data)
		}
		if err != nil {
			return nil, fmt.Errorf("load keyring: %w", err)
		}
	}
	return k, nil
}

// Add puts the public key whose SSH wire form is pub into the ring, as an
// approver for every namespace.
func (k *Keyring) Add(pub []byte, principal string) error {
	p, err := parseSSHPublicKey(bytes.Clone(pub))
	if err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	k.keys = append(k.keys, ringKey{principals: principal, pub: p, source: "added"})
	return nil
}

// Len is the number of keys in the ring.
func (k *Keyring) Len() int {
	if k == nil {
		return 0
	}
	return len(k.keys)
}

func (k *Keyring) addPublicKeyFile(path string, data []byte) error {
	if blk, _ := pem.Decode(data); blk != nil && blk.Type == nativePublicType {
		if len(blk.Bytes) != ed25519.PublicKeySize {
			return fmt.Errorf("%s: native public key is %d bytes, want %d", path, len(blk.Bytes), ed25519.PublicKeySize)
		}
		pub, err := parseSSHPublicKey(ed25519KeyBlob(blk.Bytes))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		k.keys = append(k.keys, ringKey{principals: filepath.Base(path), pub: pub, source: path})
		return nil
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pub, comment, opts, err := parseAuthorizedKey(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		if len(opts) > 0 {
			return fmt.Errorf("%s:%d: options are not allowed in a .pub file; use allowed_signers", path, i+1)
		}
		if comment == "" {
			comment = filepath.Base(path)
		}
		k.keys = append(k.keys, ringKey{principals: comment, pub: pub, source: fmt.Sprintf("%s:%d", path, i+1)})
	}
	return nil
}

func (k *Keyring) addAllowedSigners(path string, data []byte) error {
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		src := fmt.Sprintf("%s:%d", path, i+1)
		cut := strings.IndexAny(line, " \t")
		if cut < 0 {
			return fmt.Errorf("%s: want `principals [options] keytype key`", src)
		}
		rk := ringKey{principals: strings.Trim(line[:cut], `"`), source: src}
		pub, _, opts, err := parseAuthorizedKey(line[cut:])
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		rk.pub = pub
		for _, o := range opts {
			name, val, _ := strings.Cut(o, "=")
			val = strings.Trim(val, `"`)
			switch strings.ToLower(name) {
			case "namespaces":
				rk.namespaces = strings.Split(val, ",")
			case "valid-after":
				if rk.validAfter, err = parseSignerTime(val); err != nil {
					return fmt.Errorf("%s: valid-after: %w", src, err)
				}
			case "valid-before":
				if rk.validBefore, err = parseSignerTime(val); err != nil {
					return fmt.Errorf("%s: valid-before: %w", src, err)
				}
			default:
				// Ignoring an option could make a key more powerful than
				// its owner meant, so refuse the whole file instead.
				return fmt.Errorf("%s: unsupported option %q", src, name)
			}
		}
		k.keys = append(k.keys, rk)
	}
	return nil
}

// parseSignerTime reads the allowed_signers time forms YYYYMMDD[Z] and
// YYYYMMDDHHMM[SS][Z]; without Z the time is local, as in ssh-keygen.
func parseSignerTime(s string) (time.Time, error) {
	loc := time.Local
	if v, ok := strings.CutSuffix(s, "Z"); ok {
		s, loc = v, time.UTC
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(s)]
	if !ok {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return time.ParseInLocation(layout, s, loc)
}

// allows reports why rk may not sign in namespace at now, or nil.
func (rk ringKey) allows(namespace string, now time.Time) error {
	if rk.namespaces != nil && !slices.Contains(rk.namespaces, namespace) {
		return fmt.Errorf("%w: key %s is not allowed for namespace %q", ErrNoKey, rk.source, namespace)
	}
	if !rk.validAfter.IsZero() && now.Before(rk.validAfter) {
		return fmt.Errorf("%w: key %s is valid only after %s", ErrNoKey, rk.source, rk.validAfter)
	}
	if !rk.validBefore.IsZero() && !now.Before(rk.validBefore) {
		return fmt.Errorf("%w: key %s was valid only before %s", ErrNoKey, rk.source, rk.validBefore)
	}
	return nil
}

// Verify checks that t may authorise its request at now: the signature is
// by a key in the ring, made for the fixrail-approval namespace, over
// exactly Canonical(t.Request), and the request has not expired. It does not
// spend the nonce; Store.Take does.
func (k *Keyring) Verify(t *approval.Token, now time.Time) error {
	if t == nil {
		return fmt.Errorf("%w: no token", approval.ErrMalformed)
	}
	if err := t.Request.Validate(); err != nil {
		return err
	}
	msg, err := t.Request.Canonical()
	if err != nil {
		return err
	}
	if err := k.verify(approval.Namespace, msg, t.Signature, t.Kind, now); err != nil {
		return err
	}
	if exp := t.Request.Expiry(); !now.Before(exp) {
		return fmt.Errorf("%w: at %s", ErrExpired, exp.Format(time.RFC3339))
	}
	return nil
}

// VerifyCheckpoint checks a receipt-log checkpoint signature over msg in the
// checkpoint namespace. It satisfies receipt.Verifier.
func (k *Keyring) VerifyCheckpoint(msg, sig []byte, kind string) error {
	return k.verify(approval.CheckpointNamespace, msg, sig, kind, time.Now())
}

// VerifyAttestation checks an attestation signature over msg in the
// attestation namespace.
func (k *Keyring) VerifyAttestation(msg, sig []byte, kind string) error {
	return k.verify(approval.AttestationNamespace, msg, sig, kind, time.Now())
}

// Fingerprints are the ring's keys' SHA256 fingerprints, as ssh-keygen -l
// prints them.
func (k *Keyring) Fingerprints() []string {
	var out []string
	for _, rk := range k.keys {
		out = append(out, rk.pub.fingerprint())
	}
	return out
}

// PublicKeyRing is a keyring of the one public key file at path: an
// OpenSSH .pub (one or more `type base64 [comment]` lines) or a native
// fixrail public key. A file holding a private key is refused: the
// verifier never needs one.
func PublicKeyRing(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if containsPrivateKey(data) {
		return nil, fmt.Errorf("%s holds a private key: give the public key (.pub)", path)
	}
	k := &Keyring{}
	if err := k.addPublicKeyFile(path, data); err != nil {
		return nil, err
	}
	if k.Len() == 0 {
		return nil, fmt.Errorf("%s holds no public key", path)
	}
	return k, nil
}

func (k *Keyring) verify(namespace string, msg, sig []byte, kind string, now time.Time) error {
	if k == nil {
		k = &Keyring{} // a nil ring trusts nobody
	}
	switch kind {
	case approval.KindSSHSIG:
		return k.verifySSHSIG(namespace, msg, sig, now)
	case approval.KindEd25519:
		return k.verifyEd25519(namespace, msg, sig, now)
	}
	return fmt.Errorf("%w: signature kind %q", approval.ErrMalformed, kind)
}

func (k *Keyring) verifySSHSIG(namespace string, msg, armored []byte, now time.Time) error {
	blob, sig, err := parseSSHSIG(armored)
	if err != nil {
		return err
	}
	if blob.Namespace != namespace {
		return fmt.Errorf("%w: namespace %q, want %q", ErrBadSignature, blob.Namespace, namespace)
	}
	i := slices.IndexFunc(k.keys, func(rk ringKey) bool { return bytes.Equal(rk.pub.blob, blob.PublicKey) })
	if i < 0 {
		return fmt.Errorf("%w: signer key %s", ErrNoKey, describeKey(blob.PublicKey))
	}
	rk := k.keys[i]
	if err := rk.allows(namespace, now); err != nil {
		return err
	}
	data, err := sshsigSignedData(namespace, blob.Hash, msg)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if err := rk.pub.verify(data, sig); err != nil {
		return fmt.Errorf("%w: key %s: %v", ErrBadSignature, rk.source, err)
	}
	return nil
}

// verifyEd25519 tries every ed25519 key in the ring: a raw signature does not
// name its key. With no usable ed25519 key it is ErrNoKey; with keys but no
// match it is ErrBadSignature.
func (k *Keyring) verifyEd25519(namespace string, msg, sig []byte, now time.Time) error {
	if len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: ed25519 signature is %d bytes, want %d", approval.ErrMalformed, len(sig), ed25519.SignatureSize)
	}
	signed := ed25519Message(namespace, msg)
	tried := 0
	for _, rk := range k.keys {
		if rk.pub.typ != keyEd25519 || rk.allows(namespace, now) != nil {
			continue
		}
		tried++
		if ed25519.Verify(rk.pub.ed, signed, sig) {
			return nil
		}
	}
	if tried == 0 {
		return fmt.Errorf("%w: no ed25519 key for namespace %q", ErrNoKey, namespace)
	}
	return fmt.Errorf("%w: no ed25519 key in the ring made it", ErrBadSignature)
}

func describeKey(blob []byte) string {
	pub, err := parseSSHPublicKey(blob)
	if err != nil {
		return "(unparseable)"
	}
	return pub.fingerprint()
}
