package receipt_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/approval/sshkey"
	"github.com/fixrail/fixrail/internal/receipt"
	"golang.org/x/crypto/ssh"
)

// The approval key signs checkpoints and the keyring verifies them, without
// receipt importing approval.
var (
	_ receipt.Signer   = (*keys.Key)(nil)
	_ receipt.Verifier = (*keys.Keyring)(nil)
)

func owner(t *testing.T) (*keys.Key, *keys.Keyring) {
	t.Helper()
	priv, pub, err := keys.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := keys.ParseNativeKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "owner.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	ring, err := keys.LoadKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	return key, ring
}

func appendN(t *testing.T, l *receipt.Log, n int) {
	t.Helper()
	for range n {
		if _, err := l.Append(receipt.Receipt{Kind: receipt.KindDecision, Tool: "Bash", Verdict: "warn"}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckpoint(t *testing.T) {
	key, ring := owner(t)
	_, strangerRing := owner(t)
	l := &receipt.Log{Path: filepath.Join(t.TempDir(), "log.jsonl")}

	if _, err := l.Checkpoint(key); err == nil {
		t.Error("checkpoint of an empty log: no error")
	}
	appendN(t, l, 5)
	seq, head, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := l.Checkpoint(key)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != 6 || cp.Checkpoint.Seq != seq || cp.Checkpoint.Head != head || cp.Checkpoint.Kind != approval.KindEd25519 {
		t.Errorf("checkpoint receipt %+v, want seq 6 covering line %d with head %s", cp, seq, head)
	}
	appendN(t, l, 3)

	rep, err := l.Verify(ring)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break != nil || rep.Lines != 9 || rep.Checkpoints != 1 || rep.Kinds[receipt.KindCheckpoint] != 1 {
		t.Errorf("Verify with the owner's ring = %+v, want 9 lines, 1 verified checkpoint, no break", rep)
	}
	rep, err = l.Verify(nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break != nil || rep.Unchecked != 1 || rep.Checkpoints != 0 {
		t.Errorf("Verify without a verifier = %+v, want 1 unchecked checkpoint", rep)
	}
	rep, err = l.Verify(strangerRing)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break == nil || rep.Break.Line != 6 || !strings.Contains(rep.Break.Reason, "checkpoint signature") {
		t.Errorf("Verify with another ring = %+v, want a checkpoint signature break at line 6", rep)
	}
}

// TestCheckpointTamper: a checkpoint whose signature or statement was
// changed, even with the chain rebuilt around it, fails.
func TestCheckpointTamper(t *testing.T) {
	key, ring := owner(t)
	tests := []struct {
		name    string
		edit    func(c *receipt.Checkpoint)
		wantWhy string
	}{
		{"signature byte", func(c *receipt.Checkpoint) { c.Signature[3] ^= 1 }, "checkpoint signature"},
		{"signature kind", func(c *receipt.Checkpoint) { c.Kind = approval.KindSSHSIG }, "checkpoint signature"},
		{"covered seq moved back", func(c *receipt.Checkpoint) { c.Seq = 2 }, "does not match the hash of line 2"},
		{"covered seq not earlier", func(c *receipt.Checkpoint) { c.Seq = 4 }, "not before it"},
		{"head changed", func(c *receipt.Checkpoint) { c.Head = strings.Repeat("0", 64) }, "does not match the hash of line 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &receipt.Log{Path: filepath.Join(t.TempDir(), "log.jsonl")}
			appendN(t, l, 3)
			if _, err := l.Checkpoint(key); err != nil {
				t.Fatal(err)
			}
			// Rewrite line 4 as an attacker with write access would: edit
			// the checkpoint and keep the line valid JSON.
			data, err := os.ReadFile(l.Path)
			if err != nil {
				t.Fatal(err)
			}
			ls := bytes.SplitAfter(data, []byte("\n"))
			var r receipt.Receipt
			if err := json.Unmarshal(bytes.TrimSpace(ls[3]), &r); err != nil {
				t.Fatal(err)
			}
			tc.edit(r.Checkpoint)
			line, _ := json.Marshal(r)
			ls[3] = append(line, '\n')
			if err := os.WriteFile(l.Path, bytes.Join(ls, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := l.Verify(ring)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Break == nil || rep.Break.Line != 4 || !strings.Contains(rep.Break.Reason, tc.wantWhy) {
				t.Errorf("Verify = %+v, want a break at line 4 mentioning %q", rep.Break, tc.wantWhy)
			}
		})
	}
}

// TestCheckpointSSH: checkpoints signed with an SSH key verify, and a
// checkpoint signature is not accepted for another message.
func TestCheckpointSSH(t *testing.T) {
	ring := &keys.Keyring{}
	key := sshKey(t)
	if err := ring.Add(key.PublicKey(), "owner"); err != nil {
		t.Fatal(err)
	}
	l := &receipt.Log{Path: filepath.Join(t.TempDir(), "log.jsonl")}
	appendN(t, l, 2)
	cp, err := l.Checkpoint(key)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Checkpoint.Kind != approval.KindSSHSIG {
		t.Errorf("kind %q, want sshsig", cp.Checkpoint.Kind)
	}
	rep, err := l.Verify(ring)
	if err != nil || rep.Break != nil || rep.Checkpoints != 1 {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
	other := *cp.Checkpoint
	other.Seq = 1
	if err := ring.VerifyCheckpoint(other.Message(), cp.Checkpoint.Signature, cp.Checkpoint.Kind); !errors.Is(err, keys.ErrBadSignature) {
		t.Errorf("signature over another statement: %v, want ErrBadSignature", err)
	}
}

func sshKey(t *testing.T) *keys.Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sshkey.FromSigner(s)
}
