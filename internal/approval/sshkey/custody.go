package sshkey

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// KeyEnv names the variable that locates the owner's private key when no
// path is passed.
const KeyEnv = "FIXRAIL_APPROVAL_KEY"

// ErrNoKey means no private key was named: no path passed, KeyEnv unset.
var ErrNoKey = errors.New("no approval key: pass --key FILE or set " + KeyEnv)

// Locate finds the owner's private key: path when it is not empty, else
// $FIXRAIL_APPROVAL_KEY (read through getenv), and enforces the one custody
// rule fixrail can check (CheckCustody).
func Locate(path, home string, getenv func(string) string) (string, error) {
	if path == "" {
		path = getenv(KeyEnv)
	}
	if path == "" {
		return "", ErrNoKey
	}
	if err := CheckCustody(path, home); err != nil {
		return "", err
	}
	return path, nil
}

// Open locates the owner's private key (Locate) and loads it (Load). It
// returns the path too, for the prompt that names the key about to sign.
func Open(path, home string, getenv func(string) string) (*keys.Key, string, error) {
	p, err := Locate(path, home, getenv)
	if err != nil {
		return nil, "", err
	}
	k, err := Load(p)
	if err != nil {
		return nil, "", err
	}
	return k, p, nil
}

// CheckCustody refuses a private key path inside home ($FIXRAIL_HOME, which
// the agent can read), comparing the path as given and as the file system
// resolves it against home as given and resolved: a symlink on either side
// must not hide the key inside.
func CheckCustody(keyPath, home string) error {
	abs, err := filepath.Abs(keyPath)
	if err != nil {
		return err
	}
	real, err := pathguard.ResolveExisting(abs)
	if err != nil {
		return fmt.Errorf("approval key %s: %w", keyPath, err)
	}
	homes := []string{home}
	if r, err := pathguard.ResolveExisting(home); err == nil {
		homes = append(homes, r)
	}
	for _, h := range homes {
		for _, p := range []string{abs, real} {
			if pathguard.Within(h, p) {
				return fmt.Errorf("refusing the approval key %s: it is inside %s, which the agent can read; keep it elsewhere", keyPath, home)
			}
		}
	}
	return nil
}

// Init writes a new native approval key: the private half at path (0600,
// never over an existing file, and not inside home), the public half into
// keysDir, named after the private key's file. It returns the public
// half's path.
func Init(path, home, keysDir string) (pubPath string, err error) {
	if err := CheckCustody(path, home); err != nil {
		return "", err
	}
	priv, pub, err := keys.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + ".pub"
	pubPath = filepath.Join(keysDir, name)
	if _, err := os.Stat(pubPath); err == nil {
		return "", fmt.Errorf("%s already exists; pick another key file name", pubPath)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := pathguard.WriteNew(path, priv, 0o600); err != nil {
		return "", fmt.Errorf("write the private key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(pubPath), 0o700); err != nil {
		return "", err
	}
	if err := pathguard.WriteNew(pubPath, pub, 0o644); err != nil {
		return "", fmt.Errorf("write the public key: %w", err)
	}
	return pubPath, nil
}
