package keys

// Store is tested here, with real keys and signatures, because what its
// Take and Peek decide rests on a Verifier: the keyring of this package.

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fixrail/fixrail/internal/approval"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// setup returns a store, the owner's key, a keyring holding it, and the
// pending request for a gated call with its call key.
func setup(t *testing.T) (*approval.Store, *Key, *Keyring, *approval.Request, string) {
	t.Helper()
	key, pub := nativeKey(t)
	ring := keyringDir(t, map[string]string{"owner.pub": pub})
	s := &approval.Store{Dir: filepath.Join(t.TempDir(), "approvals")}
	r := testRequest(t)
	ck, err := s.SavePending(r)
	if err != nil {
		t.Fatal(err)
	}
	return s, key, ring, r, ck
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func TestPending(t *testing.T) {
	s, _, _, r, ck := setup(t)
	want, _ := r.CallKey()
	if ck != want {
		t.Errorf("SavePending call key %s, want %s", ck, want)
	}
	data, err := os.ReadFile(s.PendingPath(ck))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := r.Canonical(); string(data) != string(c) {
		t.Errorf("pending file holds %q, want exactly the canonical request %q", data, c)
	}
	got, err := s.Pending(ck)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("Pending mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.Pending(strings64('0')); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Pending of an unknown call = %v, want fs.ErrNotExist", err)
	}
	if _, err := s.Pending("../../etc/passwd"); !errors.Is(err, approval.ErrMalformed) {
		t.Errorf("Pending with a path as call key = %v, want ErrMalformed", err)
	}
	for _, dir := range []string{s.Dir, filepath.Dir(s.PendingPath(ck))} {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", dir, fi.Mode().Perm(), err)
		}
	}
}

func strings64(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// TestTakeOnce: an approval lets exactly one call through; its replay is
// refused.
func TestTakeOnce(t *testing.T) {
	s, key, ring, r, ck := setup(t)
	if _, err := s.Take(ck, ring, t0); !errors.Is(err, approval.ErrNoToken) {
		t.Fatalf("Take before approval = %v, want ErrNoToken", err)
	}
	tok, err := key.Approve(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveToken(tok); err != nil {
		t.Fatal(err)
	}
	tokenFile, _ := os.ReadFile(tokenPath(s, ck))

	got, err := s.Take(ck, ring, t0.Add(time.Minute))
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if diff := cmp.Diff(tok, got); diff != "" {
		t.Errorf("Take returned another token (-want +got):\n%s", diff)
	}
	if !exists(t, filepath.Join(s.Dir, "spent", r.Nonce)) {
		t.Error("nonce not recorded as spent")
	}
	if exists(t, tokenPath(s, ck)) || exists(t, s.PendingPath(ck)) {
		t.Error("token or pending file left behind after use")
	}
	if _, err := s.Take(ck, ring, t0.Add(time.Minute)); !errors.Is(err, approval.ErrNoToken) {
		t.Errorf("second Take = %v, want ErrNoToken", err)
	}

	// Replay: the agent puts a copy of the used token file back.
	if err := os.WriteFile(tokenPath(s, ck), tokenFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ck, ring, t0.Add(2*time.Minute)); !errors.Is(err, approval.ErrReplayed) {
		t.Errorf("replayed Take = %v, want ErrReplayed", err)
	}
	if exists(t, tokenPath(s, ck)) {
		t.Error("replayed token not deleted")
	}

	// Replay with the nonce changed to dodge the spent record: only the
	// signature stops this one.
	var renonced approval.Token
	if err := json.Unmarshal(tokenFile, &renonced); err != nil {
		t.Fatal(err)
	}
	renonced.Request.Nonce = "fedcba9876543210fedcba9876543210"
	if err := s.SaveToken(&renonced); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ck, ring, t0.Add(2*time.Minute)); !errors.Is(err, ErrBadSignature) {
		t.Errorf("replay with a new nonce: Take = %v, want ErrBadSignature", err)
	}
	if exists(t, tokenPath(s, ck)) {
		t.Error("re-nonced token not deleted")
	}
}

// TestTakeDeletesBadTokens: every failing token is deleted, so it cannot
// fire (or be retried) on the next call.
func TestTakeDeletesBadTokens(t *testing.T) {
	stranger, _ := goSSHKey(t)
	tests := []struct {
		name    string
		prepare func(t *testing.T, s *approval.Store, key *Key, r *approval.Request, ck string)
		now     time.Time
		wantErr error
	}{
		{
			name: "expired",
			now:  t0.Add(time.Hour),
			prepare: func(t *testing.T, s *approval.Store, key *Key, r *approval.Request, ck string) {
				saveApproved(t, s, key, r)
			},
			wantErr: ErrExpired,
		},
		{
			name: "forged by a key outside the ring",
			now:  t0,
			prepare: func(t *testing.T, s *approval.Store, _ *Key, r *approval.Request, ck string) {
				saveApproved(t, s, stranger, r)
			},
			wantErr: ErrNoKey,
		},
		{
			name: "request edited after signing",
			now:  t0,
			prepare: func(t *testing.T, s *approval.Store, key *Key, r *approval.Request, ck string) {
				tok, err := key.Approve(r)
				if err != nil {
					t.Fatal(err)
				}
				tok.Request.Expires = tok.Request.Expires.Add(24 * time.Hour)
				if err := s.SaveToken(tok); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: ErrBadSignature,
		},
		{
			name: "token for another call under this call's name",
			now:  t0,
			prepare: func(t *testing.T, s *approval.Store, key *Key, _ *approval.Request, ck string) {
				other, err := approval.NewRequest("Bash", json.RawMessage(`{"command":"echo harmless"}`), "/home/dev/repo", "push-force", time.Hour, t0)
				if err != nil {
					t.Fatal(err)
				}
				tok, err := key.Approve(other)
				if err != nil {
					t.Fatal(err)
				}
				data, _ := json.Marshal(tok)
				writeToken(t, s, ck, data)
			},
			wantErr: approval.ErrMismatch,
		},
		{
			name: "garbage file",
			now:  t0,
			prepare: func(t *testing.T, s *approval.Store, _ *Key, _ *approval.Request, ck string) {
				writeToken(t, s, ck, []byte("{not json"))
			},
			wantErr: approval.ErrMalformed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, key, ring, r, ck := setup(t)
			tc.prepare(t, s, key, r, ck)
			if _, err := s.Take(ck, ring, tc.now); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Take = %v, want %v", err, tc.wantErr)
			}
			if exists(t, tokenPath(s, ck)) {
				t.Error("bad token file was not deleted")
			}
			if left, _ := filepath.Glob(filepath.Join(s.Dir, "tokens", "*")); len(left) != 0 {
				t.Errorf("files left in tokens/: %v", left)
			}
			if _, err := s.Take(ck, ring, tc.now); !errors.Is(err, approval.ErrNoToken) {
				t.Errorf("Take after deletion = %v, want ErrNoToken", err)
			}
			if exists(t, filepath.Join(s.Dir, "spent", r.Nonce)) {
				t.Error("a refused token spent its nonce")
			}
		})
	}
}

func saveApproved(t *testing.T, s *approval.Store, key *Key, r *approval.Request) {
	t.Helper()
	tok, err := key.Approve(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveToken(tok); err != nil {
		t.Fatal(err)
	}
}

func writeToken(t *testing.T, s *approval.Store, ck string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(tokenPath(s, ck)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenPath(s, ck), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTakeSSHKeygenSignature is the no-fixrail-needed flow: the owner runs
// ssh-keygen on the pending file and the next identical call goes through.
func TestTakeSSHKeygenSignature(t *testing.T) {
	priv, pub := genSSHKey(t, "ed25519")
	ring := keyringDir(t, map[string]string{AllowedSignersFile: "owner@example " + pub})
	s := &approval.Store{Dir: t.TempDir()}
	r := testRequest(t)
	ck, err := s.SavePending(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runSSHKeygen(t, nil, "-Y", "sign", "-n", approval.Namespace, "-f", priv, s.PendingPath(ck)); err != nil {
		t.Fatal("ssh-keygen -Y sign failed")
	}
	if !exists(t, s.SigPath(ck)) {
		t.Fatalf("ssh-keygen did not write %s", s.SigPath(ck))
	}
	// The retry computes the call key from the live call, not the request.
	live, err := approval.CallKey("Bash", json.RawMessage(`{"timeout":120000,"command":"git push --force origin main"}`), "/home/dev/repo", "push-force")
	if err != nil || live != ck {
		t.Fatalf("live call key %s, %v; want %s", live, err, ck)
	}
	tok, err := s.Take(live, ring, t0)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if tok.Kind != approval.KindSSHSIG || tok.Request.Nonce != r.Nonce {
		t.Errorf("Take returned kind %q nonce %q", tok.Kind, tok.Request.Nonce)
	}
	if exists(t, s.SigPath(ck)) || exists(t, s.PendingPath(ck)) {
		t.Error("signature or pending file left behind")
	}

	// A signature in the wrong namespace is refused and deleted.
	r2 := testRequest(t)
	ck2, err := s.SavePending(r2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runSSHKeygen(t, nil, "-Y", "sign", "-n", "git", "-f", priv, s.PendingPath(ck2)); err != nil {
		t.Fatal("ssh-keygen -Y sign failed")
	}
	if _, err := s.Take(ck2, ring, t0); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Take with a git-namespace signature = %v, want ErrBadSignature", err)
	}
	if exists(t, s.SigPath(ck2)) {
		t.Error("bad signature file not deleted")
	}
}

// TestTakeConcurrent: many hooks racing for one approval; exactly one wins.
func TestTakeConcurrent(t *testing.T) {
	s, key, ring, r, ck := setup(t)
	saveApproved(t, s, key, r)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = s.Take(ck, ring, t0) })
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, approval.ErrNoToken), errors.Is(err, approval.ErrReplayed):
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d concurrent Takes succeeded, want exactly 1", wins)
	}
}

func TestPrune(t *testing.T) {
	s, key, ring, r, ck := setup(t)
	saveApproved(t, s, key, r)
	if _, err := s.Take(ck, ring, t0); err != nil {
		t.Fatal(err)
	}
	later := testRequest(t)
	later.Expires = t0.Add(48 * time.Hour)
	laterKey, err := s.SavePending(later)
	if err != nil {
		t.Fatal(err)
	}
	stale := testRequest(t)
	stale.Cwd = "/other"
	staleKey, err := s.SavePending(stale)
	if err != nil {
		t.Fatal(err)
	}

	if err := s.Prune(t0.Add(24 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Join(s.Dir, "spent", r.Nonce)) {
		t.Error("expired spent nonce not pruned")
	}
	if exists(t, s.PendingPath(staleKey)) {
		t.Error("expired pending request not pruned")
	}
	if !exists(t, s.PendingPath(laterKey)) {
		t.Error("live pending request pruned")
	}
}

func TestPendingRequests(t *testing.T) {
	s := &approval.Store{Dir: filepath.Join(t.TempDir(), "approvals")}
	if ps, err := s.PendingRequests(); err != nil || len(ps) != 0 {
		t.Fatalf("empty store: %v, %v", ps, err)
	}
	var keys []string
	for i, ttl := range []time.Duration{30 * time.Minute, time.Minute, 10 * time.Minute} {
		r, err := approval.NewRequest("Bash", json.RawMessage(fmt.Sprintf(`{"command":"git push --force origin b%d"}`, i)), "/repo", "push-force", ttl, t0)
		if err != nil {
			t.Fatal(err)
		}
		k, err := s.SavePending(r)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// Not pending requests: a signature beside one, a stray file.
	for _, name := range []string{keys[0] + ".json.sig", "notes.txt", "ABC.json"} {
		if err := os.WriteFile(filepath.Join(s.Dir, "pending", name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := s.PendingRequests()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.CallKey)
	}
	if want := []string{keys[1], keys[2], keys[0]}; !slices.Equal(got, want) {
		t.Errorf("PendingRequests order %v, want soonest to expire first %v", got, want)
	}
	// A damaged request is an error that names it, not a silent skip.
	if err := os.WriteFile(s.PendingPath(keys[2]), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PendingRequests(); err == nil || !strings.Contains(err.Error(), keys[2]) {
		t.Errorf("damaged request: %v", err)
	}
}

// Peek answers "would Take accept an approval now" without using it up.
func TestPeek(t *testing.T) {
	s, key, ring, r, ck := setup(t)
	if _, err := s.Peek(ck, ring, t0); !errors.Is(err, approval.ErrNoToken) {
		t.Fatalf("Peek before approval = %v, want ErrNoToken", err)
	}
	stranger, _ := goSSHKey(t)
	saveApproved(t, s, stranger, r)
	if _, err := s.Peek(ck, ring, t0); !errors.Is(err, ErrNoKey) {
		t.Errorf("Peek of a stranger's token = %v, want ErrNoKey", err)
	}
	saveApproved(t, s, key, r)
	for i := 0; i < 2; i++ {
		if _, err := s.Peek(ck, ring, t0.Add(time.Minute)); err != nil {
			t.Fatalf("Peek %d of a valid token: %v", i, err)
		}
	}
	if !exists(t, tokenPath(s, ck)) || exists(t, filepath.Join(s.Dir, "spent", r.Nonce)) {
		t.Fatal("Peek spent or removed the token")
	}
	if _, err := s.Peek(ck, ring, r.Expires); !errors.Is(err, ErrExpired) {
		t.Errorf("Peek at expiry = %v, want ErrExpired", err)
	}
	tokenFile, _ := os.ReadFile(tokenPath(s, ck))
	if _, err := s.Take(ck, ring, t0.Add(time.Minute)); err != nil {
		t.Fatalf("Take after Peek: %v", err)
	}
	writeToken(t, s, ck, tokenFile)
	if _, err := s.Peek(ck, ring, t0.Add(time.Minute)); !errors.Is(err, approval.ErrReplayed) {
		t.Errorf("Peek of a spent token = %v, want ErrReplayed", err)
	}
	other := strings64('a')
	if _, err := s.Peek(other, ring, t0); !errors.Is(err, approval.ErrNoToken) {
		t.Errorf("Peek of another call = %v, want ErrNoToken", err)
	}
	writeToken(t, s, other, tokenFile)
	if _, err := s.Peek(other, ring, t0.Add(time.Minute)); !errors.Is(err, approval.ErrMismatch) {
		t.Errorf("Peek of a token filed under another call = %v, want ErrMismatch", err)
	}
}

// tokenPath is where `fixrail approve` writes the token for callKey, as
// Store's documentation lays the directory out.
func tokenPath(s *approval.Store, callKey string) string {
	return filepath.Join(s.Dir, "tokens", callKey+".json")
}
