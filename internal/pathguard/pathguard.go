// Package pathguard checks every path that comes from outside fixrail (a
// report, PLAN.json, a runner result) before it is used, guards every
// recursive delete so that only fixrail's own disposable directories can go,
// and creates files only where nothing stands yet (WriteNew).
package pathguard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fixrail/fixrail/internal/untrusted"
)

// ErrEscape means a path resolves outside the root it must stay within.
var ErrEscape = errors.New("path escapes its root")

// CleanRel validates a repository-relative, slash-separated path from
// untrusted input and returns it cleaned. It refuses absolute paths, "..",
// backslashes, the empty path, and any character that would not print as
// itself (untrusted.Escaped: C0 and C1 controls, DEL, bidirectional and
// zero-width controls, invalid UTF-8): a path a reviewer reads in the PR
// body or on the console must show what it is, not an escape of it or a
// reordering.
func CleanRel(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	for _, r := range p {
		if r == '\\' {
			return "", fmt.Errorf("path %q has a backslash", p)
		}
		if untrusted.Escaped(r) {
			return "", fmt.Errorf("path %q has a control, invisible or non-printing character", p)
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
	full, err := ResolveExisting(filepath.Join(realRoot, filepath.FromSlash(c)))
	if errors.Is(err, ErrDanglingLink) {
		// Its target may lie anywhere: callers treat it as an escape.
		return "", fmt.Errorf("path %q: %w (%w)", rel, ErrEscape, err)
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", rel, err)
	}
	if !Within(realRoot, full) {
		return "", fmt.Errorf("path %q: %w", rel, ErrEscape)
	}
	return full, nil
}

// ErrDanglingLink means a path runs through a symbolic link whose target does
// not exist. It is refused rather than resolved: where a write through it
// lands depends on the link's text read physically (a ".." after a linked
// directory), and no caller needs to write through one.
var ErrDanglingLink = errors.New("symbolic link to a path that does not exist")

// Within reports whether p is root or lies beneath it. It is lexical: both
// are cleaned, no symbolic link is resolved (pass ResolveExisting's results
// for that) and nothing is read from the file system. Both must be
// absolute; a relative one is never within anything, so that a path whose
// base is unknown cannot pass. "/a/bc" is not within "/a/b".
func Within(root, p string) bool {
	if !filepath.IsAbs(root) || !filepath.IsAbs(p) {
		return false
	}
	root, p = filepath.Clean(root), filepath.Clean(p)
	if p == root || root == string(filepath.Separator) {
		return true
	}
	return len(p) > len(root) && p[len(root)] == filepath.Separator && strings.HasPrefix(p, root)
}

// ResolveExisting resolves the symbolic links in the longest prefix of p
// that exists and appends the rest unchanged, so that a path not created yet
// is judged by where its deepest existing parent really is: a symlinked
// directory planted on the way cannot redirect a later write. An error
// other than a missing component (a loop, a permission denied, a file used
// as a directory) is returned, not skipped past, and so is a dangling
// symbolic link on the way (ErrDanglingLink): a write through it would create
// its target, wherever that is.
func ResolveExisting(p string) (string, error) {
	existing, rest := filepath.Clean(p), ""
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		// existing is missing; if it is there as a link, its target is.
		if fi, lerr := os.Lstat(existing); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%s: %w", existing, ErrDanglingLink)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", errors.New("no existing parent")
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
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
		os.Remove(dir)
		return "", err
	}
	// The owner's pid lets a later run tell a crashed process's leftovers
	// from a live one's (SweepStale).
	if err := os.WriteFile(filepath.Join(dir, ownerName), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		os.Remove(filepath.Join(dir, MarkerName))
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// Keep turns a disposable directory into a permanent one by removing its
// marker and owner files: after Keep nothing will ever sweep it.
func Keep(dir string) error {
	for _, name := range []string{MarkerName, ownerName} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ownerName holds the pid of the process that created a disposable dir.
const ownerName = ".fixrail-owner"

// SweepStale removes the disposable directories under parent (the system
// temp dir when empty) whose owning process is gone — what a fixrail killed
// with SIGKILL could not clean up. A directory whose owner is alive, whose
// owner cannot be read, or that fails AssertDisposable is left alone.
func SweepStale(parent string) (removed []string) {
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), TempPrefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if AssertDisposable(dir) != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, ownerName))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if RemoveDisposable(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// processAlive reports whether pid names a live process (or one we may not
// signal, which counts as alive: only a certain "no such process" frees it).
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
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
// not an error. A directory in it that a child left without owner write or
// search permission (a test's chmod 0500, Go's read-only module cache) is
// made u+rwx first, so it cannot pin the tree for a non-root owner (see
// RemoveWithin).
func RemoveDisposable(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := AssertDisposable(dir); err != nil {
		return err
	}
	return removeTree(filepath.Clean(dir))
}

// RemoveWithin deletes dir, which must lie strictly inside root (both
// absolute), with everything in it; a dir already gone is not an error. No
// component of dir below root may be a symbolic link, and nothing is ever
// followed out of the tree: directories that lack owner rwx are made u+rwx
// through an os.Root (a symbolic link in the tree is removed, never chmodded
// or entered), and only when a plain removal fails, so that the common case
// walks the tree once.
func RemoveWithin(root, dir string) error {
	if !filepath.IsAbs(root) || !filepath.IsAbs(dir) {
		return fmt.Errorf("refusing to delete %q under %q: not absolute", dir, root)
	}
	root, dir = filepath.Clean(root), filepath.Clean(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return fmt.Errorf("refusing to delete %s: %w %s", dir, ErrEscape, root)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("refusing to delete %s: %w", dir, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("refusing to delete %s: %s is a symbolic link", dir, p)
		}
	}
	return removeTree(dir)
}

// removeTree removes dir (absolute, clean, checked not to be a symbolic
// link); if that fails, it makes the tree writable and tries once more. The
// tree is opened as an os.Root through its parent, so that dir itself left
// at 0000 can be reopened.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	parent, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return err
	}
	defer parent.Close()
	base := filepath.Base(dir)
	fi, err := parent.Lstat(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil || !fi.IsDir() {
		return os.RemoveAll(dir)
	}
	if fi.Mode().Perm()&0o700 != 0o700 {
		_ = parent.Chmod(base, fi.Mode().Perm()|0o700)
	}
	if r, err := parent.OpenRoot(base); err == nil {
		makeWritable(r)
		r.Close()
	}
	return os.RemoveAll(dir)
}

// makeWritable gives the owner rwx on every directory in r's tree, parents
// before children, so that the next removal can empty them. Only what
// ReadDir calls a directory is changed, and os.Root keeps every call inside
// the tree (a directory swapped for a symbolic link mid-walk changes the
// link, or nothing outside). Errors are left for the removal to report.
func makeWritable(r *os.Root) {
	_ = fs.WalkDir(r.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if fi, err := r.Lstat(name); err == nil && fi.IsDir() && fi.Mode().Perm()&0o700 != 0o700 {
			_ = r.Chmod(name, fi.Mode().Perm()|0o700)
		}
		return nil
	})
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

// WriteNew creates path, which must not exist (O_EXCL: never through a file
// or symbolic link planted there), with data and mode perm, and syncs it.
// On failure nothing is left at path.
func WriteNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// ErrNotRegular means a file that must be a regular file is something else
// (a FIFO, a device, a directory), or grew past its limit.
var ErrNotRegular = errors.New("not a regular file of an accepted size")

// ReadRegular reads the regular file at path, at most limit bytes. It never
// blocks: a FIFO planted where a file is expected would otherwise stall the
// reader (the hook, into the agent CLI's timeout, which lets the call run).
// A missing file is an error wrapping fs.ErrNotExist.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, _, err := OpenRegular(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w (grew past %d bytes)", path, ErrNotRegular, limit)
	}
	return b, nil
}

// OpenRegular opens the regular file at path for reading, with its size,
// refusing anything else and anything larger than limit, as ReadRegular
// does: the open never blocks on a FIFO. For a reader that streams or seeks
// (an archive's index) rather than holding the whole file.
func OpenRegular(path string, limit int64) (*os.File, int64, error) {
	// Opened and checked below os.File: os.OpenFile registers a descriptor
	// opened non-blocking with Go's poller, and that registration (an epoll
	// instance, an eventfd, two epoll_ctl) was a visible part of a hook
	// call. A regular file never blocks, so once fstat says it is one the
	// flag is cleared and os.NewFile leaves the poller alone.
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > limit {
		// The refusal names the type as os does (a rare path: the poller
		// may be set up for it).
		f := os.NewFile(uintptr(fd), path)
		defer f.Close()
		var typ fs.FileMode
		if fi, err := f.Stat(); err == nil {
			typ = fi.Mode().Type()
		}
		return nil, 0, fmt.Errorf("%s: %w (%v, %d bytes, limit %d)", path, ErrNotRegular, typ, st.Size, limit)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, 0, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), st.Size, nil
}
