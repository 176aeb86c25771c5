package keys

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math/big"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// The verifier in sshpub.go is checked against golang.org/x/crypto/ssh,
// which the signing side (package sshkey) uses: on every case below and on
// fuzzed ones, what ours accepts x/crypto/ssh accepts too. Ours is
// stricter in three places, each on purpose: SHA-1 RSA signatures, RSA
// keys under 2048 bits and certificates are refused.

// marshalSSHSignature is the wire form of sig.
func marshalSSHSignature(sig *sshSignature) []byte {
	b := appendWireString(nil, []byte(sig.format))
	b = appendWireString(b, sig.blob)
	if sig.format == keySKEd25519 || sig.format == keySKECDSA {
		b = append(b, sig.flags)
		b = binary.BigEndian.AppendUint32(b, sig.counter)
	}
	return b
}

// marshalSSHSIG re-armors an SSHSIG envelope, for tests that tamper with one.
func marshalSSHSIG(b *sshsigBlob, sig *sshSignature) []byte {
	out := binary.BigEndian.AppendUint32([]byte(sshsigMagic), sshsigVersion)
	out = appendWireString(out, b.PublicKey)
	out = appendWireString(out, []byte(b.Namespace))
	out = appendWireString(out, nil)
	out = appendWireString(out, []byte(b.Hash))
	out = appendWireString(out, marshalSSHSignature(sig))
	return armor(out)
}

// signCase is a public key, data and a signature over it in wire form.
type signCase struct {
	name string
	pub  []byte
	data []byte
	sig  []byte
	ok   bool // ours must accept it
}

func mpintBytes(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// skSigned is what a FIDO authenticator signs for data.
func skSigned(app string, flags byte, counter uint32, data []byte) []byte {
	a, m := sha256.Sum256([]byte(app)), sha256.Sum256(data)
	b := append(a[:], flags)
	b = binary.BigEndian.AppendUint32(b, counter)
	return append(b, m[:]...)
}

// signCases makes valid signatures of every accepted key type, and the
// tampered and refused variants of them.
func signCases(t testing.TB) []signCase {
	data := []byte("SSHSIG signed data")
	var cases []signCase
	goSigner := func(name string, key any, algo string) {
		s, err := ssh.NewSignerFromKey(key)
		if err != nil {
			t.Fatal(err)
		}
		var sig *ssh.Signature
		if algo != "" {
			sig, err = s.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, data, algo)
		} else {
			sig, err = s.Sign(rand.Reader, data)
		}
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, signCase{name, s.PublicKey().Marshal(), data, ssh.Marshal(sig), algo != ssh.KeyAlgoRSA})
	}
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	goSigner("ed25519", edPriv, "")
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		goSigner("ecdsa-"+c.Params().Name, k, "")
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	goSigner("rsa-sha2-256", rsaKey, ssh.KeyAlgoRSASHA256)
	goSigner("rsa-sha2-512", rsaKey, ssh.KeyAlgoRSASHA512)
	goSigner("rsa-sha1 (refused)", rsaKey, ssh.KeyAlgoRSA)

	// Security keys, signed here as the authenticator would.
	for _, flags := range []byte{skUserPresent, skUserPresent | 0x04, 0} {
		pub := appendWireString(appendWireString(appendWireString(nil, []byte(keySKEd25519)), edPriv.Public().(ed25519.PublicKey)), []byte("ssh:"))
		sig := &sshSignature{format: keySKEd25519, blob: ed25519.Sign(edPriv, skSigned("ssh:", flags, 7, data)), flags: flags, counter: 7}
		cases = append(cases, signCase{"sk-ed25519 flags " + string('0'+flags), pub, data, marshalSSHSignature(sig), flags&skUserPresent != 0})

		ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		point, _ := ec.PublicKey.Bytes()
		pub = appendWireString(nil, []byte(keySKECDSA))
		pub = appendWireString(pub, []byte("nistp256"))
		pub = appendWireString(appendWireString(pub, point), []byte("ssh:"))
		h := sha256.Sum256(skSigned("ssh:", flags, 9, data))
		r, s, err := ecdsa.Sign(rand.Reader, ec, h[:])
		if err != nil {
			t.Fatal(err)
		}
		blob := appendWireString(appendWireString(nil, mpintBytes(r)), mpintBytes(s))
		sig = &sshSignature{format: keySKECDSA, blob: blob, flags: flags, counter: 9}
		cases = append(cases, signCase{"sk-ecdsa flags " + string('0'+flags), pub, data, marshalSSHSignature(sig), flags&skUserPresent != 0})
	}

	// Tampered variants of every valid case: other data, a flipped bit
	// in the signature value, another key.
	n := len(cases)
	for i := range n {
		c := cases[i]
		if !c.ok {
			continue
		}
		cases = append(cases, signCase{c.name + ", other data", c.pub, []byte("SSHSIG signed dat4"), c.sig, false})
		sig, err := parseSSHSignature(c.sig)
		if err != nil {
			t.Fatal(err)
		}
		flipped := *sig
		flipped.blob = append([]byte(nil), sig.blob...)
		flipped.blob[len(flipped.blob)-1] ^= 1
		cases = append(cases, signCase{c.name + ", flipped bit", c.pub, c.data, marshalSSHSignature(&flipped), false})
		for j := 1; j < n; j++ {
			if other := cases[(i+j)%n]; string(other.pub) != string(c.pub) {
				cases = append(cases, signCase{c.name + ", another key", other.pub, c.data, c.sig, false})
				break
			}
		}
	}
	return cases
}

// verifyOurs and verifyTheirs verify a case with each implementation.
func verifyOurs(pub, data, sig []byte) error {
	k, err := parseSSHPublicKey(pub)
	if err != nil {
		return err
	}
	s, err := parseSSHSignature(sig)
	if err != nil {
		return err
	}
	return k.verify(data, s)
}

func verifyTheirs(pub, data, sig []byte) error {
	k, err := ssh.ParsePublicKey(pub)
	if err != nil {
		return err
	}
	var s ssh.Signature
	if err := ssh.Unmarshal(sig, &s); err != nil {
		return err
	}
	return k.Verify(data, &s)
}

func TestSSHVerifyAgainstXCrypto(t *testing.T) {
	for _, c := range signCases(t) {
		ours, theirs := verifyOurs(c.pub, c.data, c.sig), verifyTheirs(c.pub, c.data, c.sig)
		if (ours == nil) != c.ok {
			t.Errorf("%s: ours = %v, want accepted %v", c.name, ours, c.ok)
		}
		if ours == nil && theirs != nil {
			t.Errorf("%s: ours accepts what x/crypto/ssh refuses (%v)", c.name, theirs)
		}
		if c.ok && theirs != nil {
			t.Errorf("%s: x/crypto/ssh refuses a case ours must accept: %v", c.name, theirs)
		}
	}
}

// FuzzSSHVerify mutates valid public keys and signatures: ours never
// panics and never accepts what x/crypto/ssh refuses.
func FuzzSSHVerify(f *testing.F) {
	for _, c := range signCases(f) {
		if c.ok {
			f.Add(c.pub, c.data, c.sig)
		}
	}
	f.Fuzz(func(t *testing.T, pub, data, sig []byte) {
		if verifyOurs(pub, data, sig) == nil {
			if err := verifyTheirs(pub, data, sig); err != nil {
				t.Fatalf("ours accepts what x/crypto/ssh refuses: %v", err)
			}
		}
	})
}

func TestParseSSHPublicKeyRefuses(t *testing.T) {
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallPub, err := ssh.NewPublicKey(&small.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(edPriv)
	cert := &ssh.Certificate{Key: signer.PublicKey(), CertType: ssh.UserCert, ValidPrincipals: []string{"owner"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, signer); err != nil {
		t.Fatal(err)
	}
	edBlob := signer.PublicKey().Marshal()
	for name, tc := range map[string]struct {
		blob []byte
		want string
	}{
		"rsa 1024":      {smallPub.Marshal(), "at least 2048"},
		"certificate":   {cert.Marshal(), "certificate"},
		"trailing byte": {append(append([]byte(nil), edBlob...), 0), "trailing"},
		"truncated":     {edBlob[:len(edBlob)-1], "truncated"},
		"unknown type":  {appendWireString(appendWireString(nil, []byte("ssh-dss")), []byte("x")), "unsupported"},
		"empty":         {nil, "truncated"},
	} {
		if _, err := parseSSHPublicKey(tc.blob); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseSSHPublicKey = %v, want an error containing %q", name, err, tc.want)
		}
	}
}

func TestParseAuthorizedKey(t *testing.T) {
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(edPriv)
	blob := signer.PublicKey().Marshal()
	b64 := base64.StdEncoding.EncodeToString(blob)
	for _, tc := range []struct {
		line    string
		comment string
		opts    []string
		wantErr string
	}{
		{line: "ssh-ed25519 " + b64, comment: ""},
		{line: "ssh-ed25519 " + b64 + " owner@example laptop", comment: "owner@example laptop"},
		{line: "\tssh-ed25519\t" + b64 + "\tc", comment: "c"},
		{line: `namespaces="fixrail-approval,git" ssh-ed25519 ` + b64, opts: []string{`namespaces="fixrail-approval,git"`}},
		{line: `valid-after="20260101",namespaces="a b" ssh-ed25519 ` + b64 + " c", comment: "c", opts: []string{`valid-after="20260101"`, `namespaces="a b"`}},
		{line: `cert-authority ssh-ed25519 ` + b64, opts: []string{"cert-authority"}},
		{line: "ssh-rsa " + b64, wantErr: "does not match"},
		{line: "ssh-ed25519", wantErr: "want"},
		{line: "ssh-ed25519 !!!", wantErr: "base64"},
		{line: `namespaces="unterminated ssh-ed25519 ` + b64, wantErr: "unterminated"},
		{line: `a,,b ssh-ed25519 ` + b64, wantErr: "empty key option"},
		{line: `namespaces="x"`, wantErr: "no key"},
	} {
		k, comment, opts, err := parseAuthorizedKey(tc.line)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v, want one containing %q", tc.line, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(k.blob) != string(blob) || comment != tc.comment || strings.Join(opts, "|") != strings.Join(tc.opts, "|") {
			t.Errorf("%q: got comment %q opts %q err %v; want %q %q", tc.line, comment, opts, err, tc.comment, tc.opts)
		}
		// x/crypto/ssh reads the same key, comment and options.
		xk, xc, xo, _, xerr := ssh.ParseAuthorizedKey([]byte(tc.line))
		if xerr != nil || string(xk.Marshal()) != string(blob) || xc != tc.comment || strings.Join(xo, "|") != strings.Join(tc.opts, "|") {
			t.Errorf("%q: x/crypto/ssh reads comment %q opts %q err %v", tc.line, xc, xo, xerr)
		}
	}
}

// FuzzParseAuthorizedKey: a line ours reads, x/crypto/ssh reads as the
// same key.
func FuzzParseAuthorizedKey(f *testing.F) {
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(edPriv)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	f.Add(line + " owner")
	f.Add(`namespaces="fixrail-approval" ` + line)
	f.Add(`a="b,c",d ` + line + " x y")
	f.Fuzz(func(t *testing.T, s string) {
		k, _, _, err := parseAuthorizedKey(s)
		if err != nil {
			return
		}
		xk, _, _, _, xerr := ssh.ParseAuthorizedKey([]byte(s))
		if xerr != nil {
			t.Fatalf("ours reads %q, x/crypto/ssh does not: %v", s, xerr)
		}
		if string(xk.Marshal()) != string(k.blob) {
			t.Fatalf("ours and x/crypto/ssh read different keys from %q", s)
		}
	})
}
