package sshkey

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/keys"
)

func TestCheckCustody(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "fx")
	if err := os.MkdirAll(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(root, "owner", "approval.key"), true},
		{filepath.Join(home, "approval.key"), false},
		{filepath.Join(home, "keys", "a.key"), false},
		{filepath.Join(link, "a.key"), false}, // through a symlink
		{home + "2/a.key", true},              // a sibling with a common prefix
	} {
		err := CheckCustody(tc.path, home)
		if (err == nil) != tc.ok {
			t.Errorf("CheckCustody(%s) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

func TestLocate(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "fx")
	outside := filepath.Join(root, "owner", "approval.key")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == KeyEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, flag, env, want string
		err                   error // nil: want a path
	}{
		{name: "flag", flag: outside, env: filepath.Join(home, "ignored.key"), want: outside},
		{name: "environment", env: outside, want: outside},
		{name: "none", err: ErrNoKey},
		{name: "flag inside home", flag: filepath.Join(home, "a.key"), err: errCustody},
		{name: "environment inside home", env: filepath.Join(home, "a.key"), err: errCustody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Locate(tc.flag, home, env(tc.env))
			switch {
			case tc.err == nil && (err != nil || got != tc.want):
				t.Errorf("Locate = %q, %v; want %q", got, err, tc.want)
			case tc.err == ErrNoKey && !errors.Is(err, ErrNoKey):
				t.Errorf("Locate = %q, %v; want ErrNoKey", got, err)
			case tc.err == errCustody && err == nil:
				t.Errorf("Locate = %q, nil; want a custody refusal", got)
			}
		})
	}
}

// errCustody marks a case that CheckCustody must refuse (its error is a
// message, not a sentinel).
var errCustody = errors.New("custody")

// TestInitThenOpen writes a key the way approve --init-key does and loads it
// back: the private half 0600 outside home, the public half in keysDir, a
// second Init refusing to overwrite either, and Open refusing the key once
// its mode is loosened.
func TestInitThenOpen(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "fx")
	keysDir := filepath.Join(home, "keys")
	priv := filepath.Join(root, "owner", "approval.key")
	if _, err := Init(filepath.Join(home, "in.key"), home, keysDir); err == nil {
		t.Fatal("Init wrote a private key inside home")
	}
	pub, err := Init(priv, home, keysDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(keysDir, "approval.pub"); pub != want {
		t.Errorf("public key at %s, want %s", pub, want)
	}
	fi, err := os.Stat(priv)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %#o, want 0600", fi.Mode().Perm())
	}
	if _, err := Init(priv, home, keysDir); err == nil {
		t.Error("a second Init overwrote the key pair")
	}
	k, p, err := Open("", home, func(string) string { return priv })
	if err != nil || p != priv {
		t.Fatalf("Open = %v, %q, %v", k, p, err)
	}
	// The two halves match: a token the loaded key signs verifies against
	// the keyring Init wrote.
	kr, err := keys.LoadKeyring(keysDir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	req, err := approval.NewRequest("Bash", []byte(`{"command":"git push"}`), "/repo", "push-protected", time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Approve(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := kr.Verify(tok, now); err != nil {
		t.Errorf("the keyring Init wrote rejects the key's token: %v", err)
	}
	if err := os.Chmod(priv, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(priv, home, func(string) string { return "" }); err == nil {
		t.Error("Open loaded a private key group may read")
	}
}
