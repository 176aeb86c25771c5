package approval

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Namespaces bind a signature to its purpose. An approval signature never
// verifies as a checkpoint signature, and a git or file signature made with
// the same SSH key verifies as neither.
const (
	Namespace            = "fixrail-approval"
	CheckpointNamespace  = "fixrail-checkpoint"
	AttestationNamespace = "fixrail-attestation"
)

// Signature kinds, as stored in tokens and checkpoints.
const (
	KindSSHSIG  = "sshsig"  // armored SSHSIG, as `ssh-keygen -Y sign` writes
	KindEd25519 = "ed25519" // raw 64-byte ed25519 signature from a native key
)

// A Token is the owner's signature over one Request.
type Token struct {
	Request   Request
	Signature []byte // armored SSHSIG (KindSSHSIG) or a raw 64-byte ed25519 signature (KindEd25519)
	Kind      string // KindSSHSIG or KindEd25519
}

// tokenFile is the on-disk form of a Token (tokens/<callkey>.json):
//
//	{"v":"1","kind":"sshsig","request":{…canonical request…},"signature":"-----BEGIN SSH SIGNATURE-----\n…"}
//
// The signature is the armored text for sshsig and standard base64 for
// ed25519. The request is stored in canonical form, but what gets verified
// is Canonical() recomputed from its fields, never the stored bytes.
type tokenFile struct {
	V         string  `json:"v"`
	Kind      string  `json:"kind"`
	Request   Request `json:"request"`
	Signature string  `json:"signature"`
}

// MarshalJSON encodes the token file form.
func (t Token) MarshalJSON() ([]byte, error) {
	f := tokenFile{V: version, Kind: t.Kind, Request: t.Request}
	switch t.Kind {
	case KindSSHSIG:
		f.Signature = string(t.Signature)
	case KindEd25519:
		f.Signature = base64.StdEncoding.EncodeToString(t.Signature)
	default:
		return nil, fmt.Errorf("%w: signature kind %q", ErrMalformed, t.Kind)
	}
	return json.Marshal(f)
}

// UnmarshalJSON decodes the token file form, rejecting unknown members.
func (t *Token) UnmarshalJSON(data []byte) error {
	var f tokenFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%w: token: %w", ErrMalformed, err)
	}
	if f.V != version {
		return fmt.Errorf("%w: token version %q, want %q", ErrMalformed, f.V, version)
	}
	var sig []byte
	switch f.Kind {
	case KindSSHSIG:
		sig = []byte(f.Signature)
	case KindEd25519:
		var err error
		if sig, err = base64.StdEncoding.DecodeString(f.Signature); err != nil {
			return fmt.Errorf("%w: token signature: %v", ErrMalformed, err)
		}
	default:
		return fmt.Errorf("%w: signature kind %q", ErrMalformed, f.Kind)
	}
	*t = Token{Request: f.Request, Signature: sig, Kind: f.Kind}
	return nil
}
