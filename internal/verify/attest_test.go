package verify_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/approval/sshkey"
	"github.com/fixrail/fixrail/internal/verify"
)

func statement() verify.Statement {
	sym := "'NoneType' object has no attribute 'upper'"
	return verify.NewStatement(strings.Repeat("c", 40), verify.Predicate{
		Claim: verify.Claim{Finding: "s1", FixType: "bug", Base: strings.Repeat("b", 40), TestPath: "t/x.py", TestName: "x",
			Symptom: sym, SymptomSHA256: verify.SymptomHash(sym), Evidence: []string{"t/x.py"}, Files: []string{"src/x.py"}, Version: "devel"},
		Tree: strings.Repeat("d", 40), Branch: "fixrail/s1", RunID: "r", Terminal: "DRAFT-PR", Reason: "fixed",
		Gates: []verify.GateVerdict{{Phase: "P3", Name: "oracle-red", Verdict: "pass", Detail: "test fails"}},
	})
}

// ringOf is a keyring of key's public half, read back from a .pub file as
// `fixrail verify --key` reads it.
func ringOf(t *testing.T, key *keys.Key) *keys.Keyring {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.pub")
	if err := os.WriteFile(p, []byte(key.AuthorizedKey()+" test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ring, err := keys.PublicKeyRing(p)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func TestAttestationSignVerifyTamper(t *testing.T) {
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	_, sshPriv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(sshPriv)
	if err != nil {
		t.Fatal(err)
	}
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		name string
		key  *keys.Key
	}{
		{"ed25519", keys.NewEd25519Key(edPriv)},
		{"sshsig", sshkey.FromSigner(signer)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := verify.Sign(tc.key, statement())
			if err != nil {
				t.Fatal(err)
			}
			ring := ringOf(t, tc.key)
			st, err := verify.Open(data, ring)
			if err != nil {
				t.Fatalf("a fresh attestation does not verify: %v", err)
			}
			if st.Commit() != strings.Repeat("c", 40) || st.Predicate.Claim.Finding != "s1" {
				t.Fatalf("statement read back wrong: %+v", st)
			}
			// Every single byte changed, anywhere in the file, fails.
			for i := range data {
				bad := append([]byte{}, data...)
				bad[i] ^= 0x01
				if _, err := verify.Open(bad, ring); !errors.Is(err, verify.ErrBadAttestation) {
					t.Fatalf("byte %d (%q) changed: err = %v, want ErrBadAttestation", i, data[i], err)
				}
			}
			// Another key: refused.
			if _, err := verify.Open(data, ringOf(t, keys.NewEd25519Key(otherPriv))); !errors.Is(err, verify.ErrBadAttestation) {
				t.Fatalf("wrong key: err = %v", err)
			}
		})
	}
}

// An approval signature over the same bytes is no attestation signature:
// the namespaces differ.
func TestAttestationNamespace(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := keys.NewEd25519Key(priv)
	data, err := verify.Sign(checkpointSigner{key}, statement())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Open(data, ringOf(t, key)); !errors.Is(err, verify.ErrBadAttestation) {
		t.Fatalf("a checkpoint-namespace signature verified as an attestation: %v", err)
	}
}

type checkpointSigner struct{ *keys.Key }

func (s checkpointSigner) SignAttestation(msg []byte) ([]byte, string, error) {
	return s.SignCheckpoint(msg)
}
