package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/keys"
)

// An attestation is an in-toto Statement v1 in a DSSE envelope: its
// subject the commit fixrail made, its predicate the claim (the same as
// the trailers), the run and every gate's verdict. The envelope is signed
// over DSSE's pre-authentication encoding with an approval-machinery key
// (an SSH key, SSHSIG; or a native ed25519 key) in the namespace
// "fixrail-attestation", so no approval or checkpoint signature passes
// for one.
const (
	StatementType = "https://in-toto.io/Statement/v1"
	PredicateType = "https://github.com/fixrail/fixrail/attestation/run/v1"
	PayloadType   = "application/vnd.in-toto+json"
)

// Statement is the in-toto statement.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

// Subject names the commit by its git object id.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Predicate is what the run judged.
type Predicate struct {
	Claim    Claim  `json:"claim"`
	Tree     string `json:"tree"`
	Branch   string `json:"branch"`
	RunID    string `json:"run_id"`
	Terminal string `json:"terminal"`
	Reason   string `json:"reason"`
	// Gates are the run's verdicts, in the order they ran.
	Gates []GateVerdict `json:"gates"`
}

// GateVerdict is one gate's verdict as the run report holds it.
type GateVerdict struct {
	Phase   string `json:"phase"`
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
}

// Envelope is a DSSE envelope.
type Envelope struct {
	PayloadType string         `json:"payloadType"`
	Payload     string         `json:"payload"`
	Signatures  []EnvSignature `json:"signatures"`
}

// EnvSignature is one DSSE signature. KeyID is the signature's kind and
// the key's SHA-256 fingerprint: "sshsig:SHA256:…" or "ed25519:SHA256:…".
type EnvSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// Signer signs an attestation (keys.Key).
type Signer interface {
	SignAttestation(msg []byte) (sig []byte, kind string, err error)
	PublicKey() []byte
}

// Verifier checks one (keys.Keyring).
type Verifier interface {
	VerifyAttestation(msg, sig []byte, kind string) error
	Fingerprints() []string
}

// PAE is DSSE's pre-authentication encoding: what is signed.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "DSSEv1 %d %s %d ", len(payloadType), payloadType, len(payload))
	b.Write(payload)
	return b.Bytes()
}

// NewStatement is the statement for commit sha with p as its predicate.
func NewStatement(sha string, p Predicate) Statement {
	return Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: p.Branch, Digest: map[string]string{"gitCommit": sha}}},
		PredicateType: PredicateType,
		Predicate:     p,
	}
}

// Sign makes the envelope file's bytes for st: compact JSON and a
// newline, the one form Open accepts.
func Sign(s Signer, st Statement) ([]byte, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	sig, kind, err := s.SignAttestation(PAE(PayloadType, payload))
	if err != nil {
		return nil, fmt.Errorf("sign the attestation: %w", err)
	}
	fp := sha256.Sum256(s.PublicKey())
	env := Envelope{
		PayloadType: PayloadType,
		Payload:     base64.StdEncoding.EncodeToString(payload),
		Signatures:  []EnvSignature{{KeyID: kind + ":SHA256:" + base64.RawStdEncoding.EncodeToString(fp[:]), Sig: base64.StdEncoding.EncodeToString(sig)}},
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// ErrBadAttestation marks an attestation that does not verify: a
// signature, a byte, a field that is not what fixrail signed.
var ErrBadAttestation = errors.New("the attestation does not verify")

// Open checks the envelope file data against v and returns its statement.
// The file must be exactly the bytes Sign wrote, so that one changed
// byte anywhere, even outside the signed payload, fails.
func Open(data []byte, v Verifier) (*Statement, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadAttestation, fmt.Sprintf(format, args...))
	}
	var env Envelope
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, bad("not a DSSE envelope: %v", err)
	}
	again, err := json.Marshal(env)
	if err != nil || !bytes.Equal(append(again, '\n'), data) {
		return nil, bad("the file is not byte for byte the envelope fixrail wrote")
	}
	if env.PayloadType != PayloadType {
		return nil, bad("payload type %s, want %s", strconv.Quote(env.PayloadType), PayloadType)
	}
	if len(env.Signatures) != 1 {
		return nil, bad("%d signatures, want 1", len(env.Signatures))
	}
	payload, err := base64.StdEncoding.Strict().DecodeString(env.Payload)
	if err != nil {
		return nil, bad("payload: %v", err)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(env.Signatures[0].Sig)
	if err != nil {
		return nil, bad("signature: %v", err)
	}
	kind, fp, _ := strings.Cut(env.Signatures[0].KeyID, ":")
	if kind == approval.KindSSHSIG && !keys.CanonicalSSHSIG(sig) {
		return nil, bad("the SSH signature is not in its one armoring")
	}
	if !slices.Contains(v.Fingerprints(), fp) {
		return nil, bad("keyid %s names no key given", strconv.Quote(env.Signatures[0].KeyID))
	}
	if err := v.VerifyAttestation(PAE(env.PayloadType, payload), sig, kind); err != nil {
		return nil, bad("signature: %v", err)
	}
	var st Statement
	dec = json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, bad("statement: %v", err)
	}
	switch {
	case st.Type != StatementType:
		return nil, bad("statement type %s", strconv.Quote(st.Type))
	case st.PredicateType != PredicateType:
		return nil, bad("predicate type %s", strconv.Quote(st.PredicateType))
	case len(st.Subject) != 1 || !fullSHA().MatchString(st.Subject[0].Digest["gitCommit"]):
		return nil, bad("the subject is not one git commit")
	}
	if err := st.Predicate.Claim.Validate(); err != nil {
		return nil, bad("claim: %v", err)
	}
	return &st, nil
}

// Commit is the commit the statement is about.
func (st *Statement) Commit() string { return st.Subject[0].Digest["gitCommit"] }

// Digest is the hex SHA-256 of an attestation file, for a comment that
// carries it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
