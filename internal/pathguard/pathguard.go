// Package pathguard checks every path that comes from outside fixrail (a
// report, PLAN.json, a runner result) before it is used, and guards every
// recursive delete so that only fixrail's own disposable directories can go.
package pathguard

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrEscape means a path resolves outside the root it must stay within.
var ErrEscape = errors.New("path escapes its root")

// CleanRel validates a repository-relative, slash-separated path from
// untrusted input and returns it cleaned. It refuses absolute paths, "..",
// backslashes, NUL and other control bytes, and the empty path.
func CleanRel(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "", fmt.Errorf("path %q has a control character or backslash", p)
		}
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q is absolute", p)
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q: %w", p, ErrEscape)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("path %q: %w", p, ErrEscape)
		}
	}
	if strings.HasPrefix(c, "-") {
		return "", fmt.Errorf("path %q starts with '-'", p)
	}
	return c, nil
}

// ResolveWithin joins rel onto root and resolves symlinks on both sides; the
// result must stay inside root. A path that does not exist yet is resolved
// through its deepest existing parent, so a planted symlinked directory
// cannot redirect a later write.
func ResolveWithin(root, rel string) (string, error) {
	c, err := CleanRel(rel)
	if err != nil {
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve root: %w", err)
	}
	full := filepath.Join(realRoot, filepath.FromSlash(c))
	existing, rest := full, ""
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			full = filepath.Join(r, rest)
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", rel, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", fmt.Errorf("resolve %s: no existing parent", rel)
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	if full != realRoot && !strings.HasPrefix(full, realRoot+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q: %w", rel, ErrEscape)
	}
	return full, nil
}

// MarkerName is the file that marks a directory as fixrail's own disposable
// directory. It is written when the directory is created, never later.
const MarkerName = ".fixrail-disposable"

// TempPrefix begins the name of every disposable directory fixrail creates.
const TempPrefix = "fixrail-run-"

// NewDisposable creates a fresh disposable directory under parent (the
// system temp dir when empty) and marks it, writing content into the marker.
func NewDisposable(parent, content string) (string, error) {
	dir, err := os.MkdirTemp(parent, TempPrefix+"*")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, MarkerName), []byte(content), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// AssertDisposable returns nil only for a real (non-symlink) directory whose
// name starts with TempPrefix and that holds the marker file. Every recursive
// delete fixrail makes goes through it.
func AssertDisposable(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("refusing to delete %q: not absolute", dir)
	}
	clean := filepath.Clean(dir)
	if !strings.HasPrefix(filepath.Base(clean), TempPrefix) {
		return fmt.Errorf("refusing to delete %s: not a fixrail directory", clean)
	}
	fi, err := os.Lstat(clean)
	if err != nil {
		return fmt.Errorf("refusing to delete %s: %w", clean, err)
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("refusing to delete %s: not a plain directory", clean)
	}
	m, err := os.Lstat(filepath.Join(clean, MarkerName))
	if err != nil || !m.Mode().IsRegular() {
		return fmt.Errorf("refusing to delete %s: no fixrail marker", clean)
	}
	return nil
}

// RemoveDisposable deletes dir after AssertDisposable; a dir already gone is
// not an error.
func RemoveDisposable(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := AssertDisposable(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// SafeName reports whether s may be used as a single file or directory name,
// a branch component or a lock name: 1 to 64 letters, digits, '.', '_' and
// '-', starting with a letter or digit, with no "..", and not ending in '.'
// or ".lock" (git refuses both in ref names).
func SafeName(s string) bool {
	if len(s) == 0 || len(s) > 64 || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return !strings.Contains(s, "..") && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, ".lock")
}

// alnum is an ASCII letter or digit. (A hand-written check, not a regexp:
// the hook binary starts per tool call and package-level regexps cost start-up.)
func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
