package pathguard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotPlainDir means a directory fixrail writes into, or one on the way
// to it beneath the root, is a symbolic link or not a directory: writing
// through it would land wherever it points. Returned wrapped.
var ErrNotPlainDir = errors.New("not a plain directory (a symlink or a file is refused)")

// OpenDirBeneath opens the directory rel (slash-separated, relative, no
// "..") beneath the directory root, making each missing component with
// perm, and follows no symbolic link on the way: each component must be a
// real directory, checked with Lstat and then confirmed to be the very
// directory opened, so a link swapped in between is caught too. root itself
// is the caller's (it may be reached through links). Every operation on
// the returned *os.Root stays beneath it. The caller closes it.
func OpenDirBeneath(root, rel string, perm fs.FileMode) (*os.Root, error) {
	cur, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	if rel == "" || rel == "." {
		return cur, nil
	}
	c, err := CleanRel(rel)
	if err != nil {
		cur.Close()
		return nil, err
	}
	at := root
	for _, name := range strings.Split(c, "/") {
		at = filepath.Join(at, name)
		next, err := openChild(cur, name, at, perm)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// hookBeforeOpen, when set by a test, runs between a component's Lstat
// and its opening: where a racing link swap would land.
var hookBeforeOpen func(at string)

// openChild opens parent/name, a real directory, making it if missing.
func openChild(parent *os.Root, name, at string, perm fs.FileMode) (*os.Root, error) {
	if err := parent.Mkdir(name, perm); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	fi, err := parent.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() { // a symlink's Lstat is never a directory
		return nil, fmt.Errorf("%s: %w", at, ErrNotPlainDir)
	}
	if hookBeforeOpen != nil {
		hookBeforeOpen(at)
	}
	child, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	got, err := child.Stat(".")
	if err != nil || !os.SameFile(fi, got) {
		child.Close()
		return nil, fmt.Errorf("%s: %w (replaced while opened)", at, ErrNotPlainDir)
	}
	return child, nil
}

// WriteBeneath writes data to rel beneath root with mode perm, making
// missing directories (0o755) and following no symbolic link: not in a
// directory on the way (OpenDirBeneath), not at rel itself. Without
// replace, rel must not exist (O_EXCL). With replace, the data goes to a
// new temporary file beside rel that is renamed over it, so a link at rel
// is replaced, never written through, and a reader sees the old file or
// the new one.
func WriteBeneath(root, rel string, data []byte, perm fs.FileMode, replace bool) error {
	c, err := CleanRel(rel)
	if err != nil {
		return err
	}
	dir, name := filepath.Split(filepath.FromSlash(c))
	d, err := OpenDirBeneath(root, filepath.ToSlash(filepath.Clean(dir)), 0o755)
	if err != nil {
		return err
	}
	defer d.Close()
	target := name
	if replace {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		target = ".fixrail-tmp-" + hex.EncodeToString(b[:])
	}
	// O_CREATE|O_EXCL never follows a link at the final component.
	f, err := d.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Chmod(perm), f.Sync(), f.Close()); err != nil {
		d.Remove(target)
		return err
	}
	if replace {
		if err := d.Rename(target, name); err != nil {
			d.Remove(target)
			return err
		}
	}
	return nil
}
