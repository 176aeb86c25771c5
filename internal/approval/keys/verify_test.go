package keys

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"github.com/fixrail/fixrail/internal/approval"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSSHKeygenSignsGoVerifies: a signature from `ssh-keygen -Y sign`, in
// both its file and its stdin modes, verifies as a token.
func TestSSHKeygenSignsGoVerifies(t *testing.T) {
	priv, pub := genSSHKey(t, "ed25519")
	ring := keyringDir(t, map[string]string{"owner.pub": pub + "\n"})
	r := testRequest(t)
	msg, err := r.Canonical()
	if err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(t.TempDir(), "request.json")
	if err := os.WriteFile(file, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runSSHKeygen(t, nil, "-Y", "sign", "-n", approval.Namespace, "-f", priv, file); err != nil {
		t.Fatal("ssh-keygen -Y sign failed")
	}
	fileSig, err := os.ReadFile(file + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	stdinSig, err := runSSHKeygen(t, msg, "-Y", "sign", "-n", approval.Namespace, "-f", priv)
	if err != nil {
		t.Fatal("ssh-keygen -Y sign on stdin failed")
	}

	for name, sig := range map[string][]byte{"file": fileSig, "stdin": stdinSig} {
		tok := &approval.Token{Request: *r, Signature: sig, Kind: approval.KindSSHSIG}
		if err := ring.Verify(tok, t0); err != nil {
			t.Errorf("%s mode: Verify: %v", name, err)
		}
		other := *r
		other.Cwd = "/elsewhere"
		if err := ring.Verify(&approval.Token{Request: other, Signature: sig, Kind: approval.KindSSHSIG}, t0); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s mode: signature over another request: %v, want ErrBadSignature", name, err)
		}
	}
}

func TestWrongNamespaceRejected(t *testing.T) {
	priv, pub := genSSHKey(t, "ed25519")
	ring := keyringDir(t, map[string]string{"owner.pub": pub})
	r := testRequest(t)
	msg, _ := r.Canonical()
	for _, ns := range []string{"git", "file", approval.CheckpointNamespace} {
		sig, err := runSSHKeygen(t, msg, "-Y", "sign", "-n", ns, "-f", priv)
		if err != nil {
			t.Fatal("ssh-keygen -Y sign failed")
		}
		err = ring.Verify(&approval.Token{Request: *r, Signature: sig, Kind: approval.KindSSHSIG}, t0)
		if !errors.Is(err, ErrBadSignature) || !strings.Contains(err.Error(), "namespace") {
			t.Errorf("namespace %s: Verify = %v, want ErrBadSignature about the namespace", ns, err)
		}
	}
}

// TestVerify runs every way a token can be wrong against both signature
// kinds. Each mutation changes one thing after signing.
func TestVerify(t *testing.T) {
	sshKey, sshPub := goSSHKey(t)
	edKey, edPub := nativeKey(t)
	strangerSSH, _ := goSSHKey(t)
	strangerEd, _ := nativeKey(t)
	ring := keyringDir(t, map[string]string{"owner.pub": sshPub, "native.pub": edPub})

	tests := []struct {
		name    string
		mut     func(tok *approval.Token)
		now     time.Time
		wantErr error
	}{
		{name: "valid", now: t0},
		{name: "valid one second before expiry", now: t0.Add(15*time.Minute - time.Second)},
		{name: "expired at the instant", now: t0.Add(15 * time.Minute), wantErr: ErrExpired},
		{name: "expired long ago", now: t0.Add(48 * time.Hour), wantErr: ErrExpired},
		{name: "one input byte", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) {
			tok.Request.Input = json.RawMessage(strings.Replace(string(tok.Request.Input), "main", "maim", 1))
		}},
		{name: "input number", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) {
			tok.Request.Input = json.RawMessage(strings.Replace(string(tok.Request.Input), "120000", "120001", 1))
		}},
		{name: "cwd", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) { tok.Request.Cwd += "/" }},
		{name: "rule", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) { tok.Request.Rule = "push-protected" }},
		{name: "tool", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) { tok.Request.Tool = "bash" }},
		{name: "expiry one second later", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) {
			tok.Request.Expires = tok.Request.Expires.Add(time.Second)
		}},
		{name: "nonce", now: t0, wantErr: ErrBadSignature, mut: func(tok *approval.Token) {
			tok.Request.Nonce = strings.Repeat("0", 32)
		}},
		{name: "malformed nonce", now: t0, wantErr: approval.ErrMalformed, mut: func(tok *approval.Token) { tok.Request.Nonce = "../../etc" }},
		{name: "unknown kind", now: t0, wantErr: approval.ErrMalformed, mut: func(tok *approval.Token) { tok.Kind = "hmac" }},
		{name: "empty signature", now: t0, wantErr: approval.ErrMalformed, mut: func(tok *approval.Token) { tok.Signature = nil }},
	}
	for _, k := range []struct {
		name          string
		key, stranger *Key
		strangerErr   error // what a signature by an unknown key yields
	}{
		{"sshsig", sshKey, strangerSSH, ErrNoKey},
		{"ed25519", edKey, strangerEd, ErrBadSignature},
	} {
		sign := func(t *testing.T) *approval.Token {
			tok, err := k.key.Approve(testRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		for _, tc := range tests {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				tok := sign(t)
				if tc.mut != nil {
					tc.mut(tok)
				}
				if err := ring.Verify(tok, tc.now); !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
					t.Errorf("Verify = %v, want %v", err, tc.wantErr)
				}
			})
		}
		t.Run(k.name+"/signed by a key not in the ring", func(t *testing.T) {
			tok, err := k.stranger.Approve(testRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := ring.Verify(tok, t0); !errors.Is(err, k.strangerErr) {
				t.Errorf("Verify = %v, want %v", err, k.strangerErr)
			}
		})
		t.Run(k.name+"/checkpoint signature is not an approval", func(t *testing.T) {
			r := testRequest(t)
			msg, _ := r.Canonical()
			sig, kind, err := k.key.SignCheckpoint(msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := ring.Verify(&approval.Token{Request: *r, Signature: sig, Kind: kind}, t0); !errors.Is(err, ErrBadSignature) {
				t.Errorf("Verify = %v, want ErrBadSignature", err)
			}
			if err := ring.VerifyCheckpoint(msg, sig, kind); err != nil {
				t.Errorf("VerifyCheckpoint: %v", err)
			}
		})
	}
}

// TestVerifyPathIsExercised is the falsification guard: with Verify stubbed
// to return nil, every case here goes red. (Checked by hand: with Keyring.Verify
// stubbed, this test, TestVerify, both interop tests, TestWrongNamespaceRejected,
// TestTakeDeletesBadTokens (expired, forged, edited) and TestTakeOnce's
// re-nonced replay fail. A plain replay is stopped by the spent-nonce record,
// not the signature; stubbing Store.spend instead makes TestTakeOnce fail.)
func TestVerifyPathIsExercised(t *testing.T) {
	owner, ownerPub := goSSHKey(t)
	stranger, _ := goSSHKey(t)
	ring := keyringDir(t, map[string]string{"owner.pub": ownerPub})

	good, err := owner.Approve(testRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ring.Verify(good, t0); err != nil {
		t.Fatalf("the owner's own token does not verify: %v", err)
	}
	forged, err := stranger.Approve(testRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if ring.Verify(forged, t0) == nil {
		t.Error("a token signed by a key outside the ring verified")
	}
	// Same signer and request, one bit of the signature value flipped.
	blob, sig, err := parseSSHSIG(good.Signature)
	if err != nil {
		t.Fatal(err)
	}
	sig.blob[0] ^= 1
	flipped := *good
	flipped.Signature = marshalSSHSIG(blob, sig)
	if err := ring.Verify(&flipped, t0); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a token with a corrupted signature: Verify = %v, want ErrBadSignature", err)
	}
	if ring.Verify(good, t0.Add(time.Hour)) == nil {
		t.Error("an expired token verified")
	}
	var empty Keyring
	if err := empty.Verify(good, t0); !errors.Is(err, ErrNoKey) {
		t.Errorf("empty keyring: Verify = %v, want ErrNoKey", err)
	}
}

func TestLoadKeyring(t *testing.T) {
	_, sshPub := goSSHKey(t)
	_, nativePub := nativeKey(t)
	sshK, _ := goSSHKey(t)
	sshLine := sshK.AuthorizedKey()
	privFile, _, _ := GenerateKey(rand.Reader)

	t.Run("missing directory is an empty ring", func(t *testing.T) {
		k, err := LoadKeyring(filepath.Join(t.TempDir(), "nope"))
		if err != nil || k.Len() != 0 {
			t.Errorf("LoadKeyring = %v keys, %v; want 0, nil", k.Len(), err)
		}
	})
	t.Run("pub files, allowed_signers, comments, other files", func(t *testing.T) {
		k := keyringDir(t, map[string]string{
			"a.pub":            "# owner\n" + sshPub + "\n\n",
			"native.pub":       nativePub,
			AllowedSignersFile: "# approvers\nowner@example,alt@example " + sshLine + "\n",
			"README":           "not a key",
		})
		if k.Len() != 3 {
			t.Errorf("Len = %d, want 3", k.Len())
		}
	})
	for name, files := range map[string]map[string]string{
		"private key in the directory": {"id.pub": sshPub, "id": string(privFile)},
		"unsupported option":           {AllowedSignersFile: "owner cert-authority " + sshLine},
		"garbage line":                 {AllowedSignersFile: "owner ssh-ed25519 AAAAnotbase64"},
		"options in a pub file":        {"x.pub": `restrict ` + sshLine},
		"bad valid-before":             {AllowedSignersFile: `owner valid-before="soon" ` + sshLine},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for n, d := range files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(d), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := LoadKeyring(dir); err == nil {
				t.Error("LoadKeyring: no error")
			}
		})
	}
	t.Run("allowed_signers options restrict the key", func(t *testing.T) {
		tests := []struct {
			options string
			wantErr error
		}{
			{`namespaces="fixrail-approval,git"`, nil},
			{`namespaces="git"`, ErrNoKey},
			{`valid-after="20260101"`, nil},
			{`valid-after=20270101Z`, ErrNoKey},
			{`valid-before="202603141500Z"`, ErrNoKey},
			{`valid-before="20260314151000Z",namespaces="fixrail-approval"`, nil},
		}
		tok, err := sshK.Approve(testRequest(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			k := keyringDir(t, map[string]string{AllowedSignersFile: "owner@example " + tc.options + " " + sshLine + "\n"})
			if err := k.Verify(tok, t0); !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("options %s: Verify = %v, want %v", tc.options, err, tc.wantErr)
			}
		}
	})
}

func TestTokenJSON(t *testing.T) {
	sshK, _ := goSSHKey(t)
	edK, _ := nativeKey(t)
	for _, k := range []*Key{sshK, edK} {
		tok, err := k.Approve(testRequest(t))
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(tok)
		if err != nil {
			t.Fatal(err)
		}
		var back approval.Token
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", k.Kind(), err)
		}
		if got, want := string(mustJSON(t, back)), string(data); got != want {
			t.Errorf("%s: round trip changed the token:\n got %s\nwant %s", k.Kind(), got, want)
		}
		if k.Kind() == approval.KindSSHSIG && !strings.Contains(string(data), `"signature":"-----BEGIN SSH SIGNATURE-----\n`) {
			t.Errorf("sshsig token does not carry the armored text: %s", data)
		}
	}
	var tok approval.Token
	for _, bad := range []string{
		`{"v":"1","kind":"sshsig","request":{},"signature":""}`,
		`{"v":"2","kind":"ed25519","request":null,"signature":""}`,
		`{"v":"1","kind":"ed25519","signature":"!!"}`,
		`{"v":"1","kind":"sshsig","signature":"","extra":1}`,
	} {
		if err := json.Unmarshal([]byte(bad), &tok); err == nil {
			t.Errorf("Unmarshal(%s): no error", bad)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSignFunctions: the package-level signing helpers make tokens the ring
// accepts, and a nil ring trusts nobody.
func TestSignFunctions(t *testing.T) {
	sshK, sshPub := goSSHKey(t)
	edK, edPub := nativeKey(t)
	ring := keyringDir(t, map[string]string{"a.pub": sshPub, "b.pub": edPub})
	r := testRequest(t)
	msg, _ := r.Canonical()

	sig, err := sshK.sign(approval.Namespace, msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []*approval.Token{
		{Request: *r, Signature: sig, Kind: approval.KindSSHSIG},
		{Request: *r, Signature: SignEd25519(edK.ed, msg), Kind: approval.KindEd25519},
	} {
		if err := ring.Verify(tok, t0); err != nil {
			t.Errorf("%s: Verify: %v", tok.Kind, err)
		}
		var none *Keyring
		if err := none.Verify(tok, t0); !errors.Is(err, ErrNoKey) {
			t.Errorf("%s: nil keyring Verify = %v, want ErrNoKey", tok.Kind, err)
		}
	}
}
