package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// A Tree is a commit or tree checked out by fixrail into a plain directory
// with a private index kept outside it. The directory has no .git link, so
// nothing run inside it can point fixrail's git elsewhere, and git run
// inside it finds no repository at all. Every call on a Tree names the
// recorded git directory, the directory and the index explicitly.
//
// Trees are fixrail's evidence: the agent works in one, each oracle and
// suite run gets a fresh one of the exact object it judges, and what ships
// is built from blobs fixrail read itself (Entry), never from what a
// directory holds at commit time.
type Tree struct {
	Dir   string // absolute, symlink-free
	Rev   string // the tree or commit checked out
	index string
	repo  *Repo
	dev   uint64 // Dir's device and inode when it was made: a directory
	ino   uint64 // renamed away and replaced (by a link) is not this Tree
}

// ErrTreeReplaced reports a Tree whose directory is no longer the one
// Checkout made: something moved it and put another (or a symlink) there.
var ErrTreeReplaced = errors.New("gitx: a checked-out tree's directory was replaced")

// Verify checks that Dir is still the directory Checkout made.
func (t *Tree) Verify() error {
	dev, ino, err := dirID(t.Dir)
	if err != nil || dev != t.dev || ino != t.ino {
		return fmt.Errorf("%s: %w", t.Dir, ErrTreeReplaced)
	}
	return nil
}

func dirID(p string) (dev, ino uint64, err error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() {
		return 0, 0, fmt.Errorf("%s: not a directory", p)
	}
	return uint64(st.Dev), st.Ino, nil
}

// ErrPlantedGit reports a .git entry at the top of a Tree: something run
// there tried to give the directory a repository of its own.
var ErrPlantedGit = errors.New("gitx: a .git entry appeared in a checked-out tree")

// ErrFileType reports a changed path that is neither a regular file nor a
// symlink (a FIFO, a socket, a device): nothing fixrail would ship.
var ErrFileType = errors.New("gitx: not a regular file or symlink")

// Checkout checks rev (a commit or tree) out into dir, which must not exist
// or be an empty directory (not a link to one), with a new private index at index (which must not exist).
// Filters and line-ending conversion apply as the base's own attributes say:
// the tree being checked out is the trusted base or evidence built on it.
func (r *Repo) Checkout(ctx context.Context, dir, index, rev string) (*Tree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("checkout %s: %w", dir, err)
	}
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("checkout %s: %w", dir, err)
	}
	// dir itself must be a directory, not a link to one: the retry's tree
	// is made where the sandboxed agent can write, and git would write the
	// tree wherever a planted link points. (A link above dir is the
	// caller's own, resolved below.)
	if fi, err := os.Lstat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("checkout %s: must be a directory, not a link or another file", dir)
	}
	if ents, err := os.ReadDir(abs); err != nil || len(ents) > 0 {
		return nil, fmt.Errorf("checkout %s: must be an empty directory", dir)
	}
	if _, err := os.Lstat(index); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkout %s: index %s already exists", dir, index)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("checkout %s: %w", dir, err)
	}
	oid, err := r.resolveTreeish(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("checkout %s: %w", dir, err)
	}
	dev, ino, err := dirID(abs)
	if err != nil {
		return nil, fmt.Errorf("checkout %s: %w", dir, err)
	}
	t := &Tree{Dir: abs, Rev: oid, index: index, repo: r, dev: dev, ino: ino}
	err = r.guarded(ctx, false, func() error {
		_, err := r.run(ctx, t.inv("read-tree", "--reset", "-u", oid))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkout %s into %s: %w", short(oid), dir, err)
	}
	return t, nil
}

func (t *Tree) inv(args ...string) invocation {
	return invocation{dir: t.Dir, gitDir: t.repo.gitDir, workTree: t.Dir, index: t.index, args: args}
}

// MaxStatusBytes bounds the listing Changed reads: about 300,000 paths of
// 100 bytes. An agent that leaves more has left no fix a gate would pass,
// and Changed is ErrOutputLimit.
const MaxStatusBytes = 32 << 20

// MaxDiffBytes bounds each output of DiffTrees (the text patch, the binary
// patch): a candidate is built from at most a few tens of MiB, and its
// diff is bounded by that; past it DiffTrees is ErrOutputLimit.
const MaxDiffBytes = 256 << 20

// Changed lists every path in the tree that may differ from what was
// checked out — modified, deleted, untracked and ignored files, mode and
// type changes — sorted and without duplicates. It compares the directory
// with the private index Checkout wrote (the tree checked out), never with
// the clone's HEAD: the base need not be the branch the clone has checked
// out, and a difference between the two is nothing anyone wrote here. It
// uses git's stat cache (and the content where the stat data differ), so
// it is a superset of what changed only as far as git can tell; callers
// read each path with ReadEntry and compare bytes, and whatever Changed
// misses simply is not shipped (nor judged). A .git entry at the top is
// ErrPlantedGit.
func (t *Tree) Changed(ctx context.Context) ([]string, error) {
	if err := t.Verify(); err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(t.Dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("changes in %s: %w", t.Dir, ErrPlantedGit)
	}
	// One listing against the index: modified (stat, then content, so a
	// file touched but not changed is not listed), deleted, and every file
	// the index does not hold — with no exclude option, ignored files too.
	var out []byte
	err := t.repo.guarded(ctx, false, func() (err error) {
		inv := t.inv("ls-files", "-z", "--modified", "--deleted", "--others")
		inv.limit = MaxStatusBytes
		out, err = t.repo.run(ctx, inv)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("changes in %s: %w", t.Dir, err)
	}
	var paths []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			// ls-files names a nested repository as "dir/".
			paths = append(paths, strings.TrimSuffix(p, "/"))
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// Entry is one path as fixrail read it, to be written as a blob: a regular
// file (mode 100644 or 100755), a symlink (120000, Data is the target), or a
// deletion (Mode "").
type Entry struct {
	Path string
	Mode string
	Data []byte
	OID  string // set by WriteBlobs
}

// Deleted reports whether e removes its path.
func (e Entry) Deleted() bool { return e.Mode == "" }

// Same reports whether two entries hold the same thing.
func (e Entry) Same(o Entry) bool {
	return e.Path == o.Path && e.Mode == o.Mode && bytes.Equal(e.Data, o.Data)
}

// Info is what Lstat learned of a path without reading a byte of it.
type Info struct {
	Path string
	// Mode is the mode git would record: "100644", "100755", "120000",
	// or "" for a path that is absent, a directory, or below a parent
	// that is no longer a directory (nothing to ship at this path).
	Mode string
	Dir  bool  // a directory stands at the path
	Size int64 // a regular file's size, a symlink's target length
}

// Lstat looks at rel inside root with lstat alone: no parent symlink is
// followed (one is ErrFileType), a symlink is not followed, and nothing is
// opened, so a caller can refuse a path by its kind and size before a byte
// of it is read. A FIFO, socket or device is ErrFileType.
func Lstat(root, rel string) (Info, error) {
	if err := checkPath(rel); err != nil {
		return Info{}, err
	}
	info := Info{Path: rel}
	dir := root
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return info, nil // its directory is gone: deleted
		}
		if err != nil {
			return Info{}, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return Info{}, fmt.Errorf("%s: %s is a symlink: %w", rel, dir, ErrFileType)
		}
		if !fi.IsDir() {
			return info, nil // replaced by a file: this path no longer exists
		}
	}
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return info, nil
	case err != nil:
		return Info{}, err
	case fi.Mode()&fs.ModeSymlink != 0:
		info.Mode, info.Size = "120000", fi.Size()
	case fi.IsDir():
		// A directory where the base had a file, or an untracked empty
		// directory: git reports its files separately, if any.
		info.Dir = true
	case !fi.Mode().IsRegular():
		return Info{}, fmt.Errorf("%s (%s): %w", rel, fi.Mode().Type(), ErrFileType)
	default:
		info.Mode, info.Size = "100644", fi.Size()
		if fi.Mode()&0o111 != 0 {
			info.Mode = "100755"
		}
	}
	return info, nil
}

// ReadEntry reads rel inside root the way fixrail ships it: without
// following any symlink (a symlinked parent directory is refused, a
// symlink itself is read as its target string), without blocking (a FIFO
// is ErrFileType, never opened for a read that waits for a writer), and
// at most limit bytes. A path that is absent is a deletion.
func ReadEntry(root, rel string, limit int64) (Entry, error) {
	info, err := Lstat(root, rel)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Path: rel}
	full := filepath.Join(root, filepath.FromSlash(rel))
	switch info.Mode {
	case "":
		return e, nil
	case "120000":
		target, err := os.Readlink(full)
		if err != nil {
			return Entry{}, err
		}
		e.Mode, e.Data = "120000", []byte(target)
		return e, nil
	}
	if info.Size > limit {
		return Entry{}, fmt.Errorf("%s: %w (%d bytes, limit %d)", rel, ErrFileType, info.Size, limit)
	}
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Entry{}, err
	}
	if !st.Mode().IsRegular() || st.Size() > limit {
		return Entry{}, fmt.Errorf("%s: %w (%d bytes, limit %d)", rel, ErrFileType, st.Size(), limit)
	}
	data, err := readAtMost(f, st.Size(), limit)
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %w", rel, err)
	}
	e.Mode, e.Data = "100644", data
	if st.Mode()&0o111 != 0 {
		e.Mode = "100755"
	}
	return e, nil
}

// readAtMost reads f to its end into one buffer sized by what fstat
// said (plus one byte to see the end), so a file costs its size once, not
// the doubling a growing buffer does; a file that grew past limit is
// ErrFileType, and a read never asks for more than limit+1 bytes in all.
func readAtMost(f *os.File, size, limit int64) ([]byte, error) {
	data := make([]byte, 0, min(size, limit)+1)
	for {
		if len(data) == cap(data) {
			if int64(len(data)) > limit {
				return nil, fmt.Errorf("grew past %d bytes: %w", limit, ErrFileType)
			}
			data = slices.Grow(data, int(min(int64(len(data)), limit+1-int64(len(data)))))
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			return nil, fmt.Errorf("grew past %d bytes: %w", limit, ErrFileType)
		}
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// TreeEntry reads path from rev's tree as an Entry, without filters or
// textconv; a path that rev does not hold is a deletion (Mode ""). Blobs
// larger than limit are refused.
func (r *Repo) TreeEntry(ctx context.Context, rev, path string, limit int64) (Entry, error) {
	if err := checkPath(path); err != nil {
		return Entry{}, err
	}
	oid, err := r.resolveTreeish(ctx, rev)
	if err != nil {
		return Entry{}, err
	}
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"ls-tree", "-z", "--full-tree", oid, "--", path}})
	if err != nil {
		return Entry{}, fmt.Errorf("read %s:%s: %w", short(oid), path, err)
	}
	e := Entry{Path: path}
	rec := strings.TrimSuffix(string(out), "\x00")
	if rec == "" {
		return e, nil
	}
	meta, name, ok := strings.Cut(rec, "\t")
	f := strings.Fields(meta)
	if !ok || name != path || len(f) != 3 {
		return Entry{}, fmt.Errorf("read %s:%s: unexpected ls-tree record %q", short(oid), path, rec)
	}
	if f[1] != "blob" {
		return e, nil // a directory or submodule: no file at this path
	}
	size, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "-s", f[2]}})
	if err != nil {
		return Entry{}, fmt.Errorf("read %s:%s: %w", short(oid), path, err)
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64); err != nil || n > limit {
		return Entry{}, fmt.Errorf("read %s:%s: blob of %s bytes is over the limit of %d", short(oid), path, strings.TrimSpace(string(size)), limit)
	}
	data, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "blob", f[2]}})
	if err != nil {
		return Entry{}, fmt.Errorf("read %s:%s: %w", short(oid), path, err)
	}
	e.Mode, e.Data, e.OID = f[0], data, f[2]
	return e, nil
}

// Tracked lists the paths at or under any of paths that the clone's index
// holds: what the repository, not fixrail, put in the working tree. One
// git call, whatever the number of paths.
func (r *Repo) Tracked(ctx context.Context, paths ...string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("tracked: no path")
	}
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return nil, err
		}
	}
	args := append([]string{"ls-files", "-z", "--cached", "--"}, paths...)
	out, err := r.run(ctx, invocation{dir: r.top, args: args})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", paths[0], err)
	}
	var tracked []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			tracked = append(tracked, p)
		}
	}
	return tracked, nil
}

// Files lists every path the clone's index tracks, relative to the top.
func (r *Repo) Files(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"ls-files", "-z", "--cached"}})
	if err != nil {
		return nil, fmt.Errorf("list tracked files: %w", err)
	}
	var files []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			files = append(files, p)
		}
	}
	return files, nil
}

// CaseVariants returns every spelling of name with its ASCII letters in
// either case (".fixrail", ".Fixrail", … ".FIXRAIL"): the index entries a
// case-insensitive checkout (core.ignorecase: macOS, Windows, a casefolded
// ext4 directory) puts at the same place on disk. Pathspecs stay literal
// (GIT_LITERAL_PATHSPECS, which git will not combine with icase), so the
// variants are spelt out. A name of more than 12 letters panics: this is
// for fixrail's own short names, not for input.
func CaseVariants(name string) []string {
	var letters []int
	for i := 0; i < len(name); i++ {
		if c := name[i] | 0x20; c >= 'a' && c <= 'z' {
			letters = append(letters, i)
		}
	}
	if len(letters) > 12 {
		panic("gitx: CaseVariants of a long name: " + name)
	}
	out := make([]string, 0, 1<<len(letters))
	b := []byte(name)
	for _, i := range letters {
		b[i] |= 0x20
	}
	for mask := 0; mask < 1<<len(letters); mask++ {
		v := slices.Clone(b)
		for bit, i := range letters {
			if mask&(1<<bit) != 0 {
				v[i] -= 'a' - 'A'
			}
		}
		out = append(out, string(v))
	}
	return out
}

// WriteBlobs stores each entry's bytes as a blob, exactly: no clean filter,
// no line-ending conversion, whatever attributes say. It sets OID.
func (r *Repo) WriteBlobs(ctx context.Context, entries []Entry) error {
	for i := range entries {
		e := &entries[i]
		if e.Deleted() {
			continue
		}
		switch e.Mode {
		case "100644", "100755", "120000":
		default:
			return fmt.Errorf("write blob %s: mode %q", e.Path, e.Mode)
		}
		out, err := r.run(ctx, invocation{dir: r.top, stdin: append([]byte{}, e.Data...),
			args: []string{"hash-object", "-w", "--no-filters", "-t", "blob", "--stdin"}})
		if err != nil {
			return fmt.Errorf("write blob %s: %w", e.Path, err)
		}
		e.OID = strings.TrimSpace(string(out))
		if err := checkSHA(e.OID); err != nil {
			return fmt.Errorf("write blob %s: %w", e.Path, err)
		}
	}
	return nil
}

// BuildTree writes the tree that is start with entries applied (written,
// replaced or deleted), using a private index at index, and returns its
// id. Entries must have been written with WriteBlobs.
func (r *Repo) BuildTree(ctx context.Context, start string, entries []Entry, index string) (string, error) {
	oid, err := r.resolveTreeish(ctx, start)
	if err != nil {
		return "", fmt.Errorf("build tree: %w", err)
	}
	inv := func(stdin []byte, args ...string) invocation {
		return invocation{dir: r.gitDir, gitDir: r.gitDir, index: index, stdin: stdin, args: args}
	}
	if _, err := r.run(ctx, inv(nil, "read-tree", oid)); err != nil {
		return "", fmt.Errorf("build tree: %w", err)
	}
	var in bytes.Buffer
	zero := strings.Repeat("0", len(oid))
	for _, e := range entries {
		if err := checkPath(e.Path); err != nil {
			return "", fmt.Errorf("build tree: %w", err)
		}
		if e.Deleted() {
			fmt.Fprintf(&in, "0 %s\t%s\x00", zero, e.Path)
			continue
		}
		if checkSHA(e.OID) != nil {
			return "", fmt.Errorf("build tree: %s has no blob", e.Path)
		}
		fmt.Fprintf(&in, "%s %s\t%s\x00", e.Mode, e.OID, e.Path)
	}
	if in.Len() > 0 {
		if _, err := r.run(ctx, inv(in.Bytes(), "update-index", "-z", "--index-info")); err != nil {
			return "", fmt.Errorf("build tree: %w", err)
		}
	}
	out, err := r.run(ctx, inv(nil, "write-tree"))
	if err != nil {
		return "", fmt.Errorf("build tree: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	if err := checkSHA(tree); err != nil {
		return "", fmt.Errorf("build tree: %w", err)
	}
	return tree, nil
}

// CommitTree makes a commit of tree with parent, authored and committed by
// id, with msg verbatim. No hook runs, nothing is signed, no ref moves.
func (r *Repo) CommitTree(ctx context.Context, tree, parent, msg string, id Identity) (string, error) {
	if err := checkSHA(tree); err != nil {
		return "", fmt.Errorf("commit tree: %w", err)
	}
	if err := checkSHA(parent); err != nil {
		return "", fmt.Errorf("commit tree: %w", err)
	}
	if strings.TrimSpace(msg) == "" {
		return "", errors.New("commit tree: empty message")
	}
	if err := checkIdentity(id); err != nil {
		return "", fmt.Errorf("commit tree: %w", err)
	}
	out, err := r.run(ctx, invocation{dir: r.gitDir, gitDir: r.gitDir, env: id.env(), stdin: []byte(msg),
		args: []string{"commit-tree", tree, "-p", parent, "-F", "-"}})
	if err != nil {
		return "", fmt.Errorf("commit tree: %w", err)
	}
	sha := strings.TrimSpace(string(out))
	return sha, checkSHA(sha)
}

// DiffTrees is the change from one tree-ish to another, computed bare:
// no work tree, so no attributes file inside one is read; --text, so no
// attribute can turn a file into "Binary files differ" and hide its lines;
// line counts from that text patch, not from --numstat (which honours
// -diff even with --text). Patch is the --binary form, for git apply.
func (r *Repo) DiffTrees(ctx context.Context, from, to string) (TreeDiff, error) {
	a, err := r.resolveTreeish(ctx, from)
	if err != nil {
		return TreeDiff{}, fmt.Errorf("diff: %w", err)
	}
	b, err := r.resolveTreeish(ctx, to)
	if err != nil {
		return TreeDiff{}, fmt.Errorf("diff: %w", err)
	}
	base := []string{"diff-tree", "-r", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", "--full-index", "--src-prefix=a/", "--dst-prefix=b/"}
	run := func(extra ...string) ([]byte, error) {
		args := append(slices.Clone(base), extra...)
		return r.run(ctx, invocation{dir: r.gitDir, gitDir: r.gitDir, args: append(args, a, b, "--"), limit: MaxDiffBytes})
	}
	text, err := run("--patch", "--text")
	if err != nil {
		return TreeDiff{}, fmt.Errorf("diff: %w", err)
	}
	patch, err := run("--patch", "--binary")
	if err != nil {
		return TreeDiff{}, fmt.Errorf("diff: %w", err)
	}
	names, err := run("--name-only", "-z")
	if err != nil {
		return TreeDiff{}, fmt.Errorf("diff: %w", err)
	}
	d := TreeDiff{Text: string(text)}
	d.Patch = string(patch)
	for _, n := range strings.Split(string(names), "\x00") {
		if n != "" {
			d.Files = append(d.Files, n)
		}
	}
	slices.Sort(d.Files)
	st := Measure(d.Text)
	d.Added, d.Deleted, d.Bytes, d.Longest = st.Added, st.Deleted, st.Bytes, st.Longest
	return d, nil
}

// DiffText is the text patch from one tree-ish to another restricted to
// paths, computed as DiffTrees computes its Text: bare, --text, no
// renames, no driver. It is what a reviewer is shown of a few files.
func (r *Repo) DiffText(ctx context.Context, from, to string, paths ...string) (string, error) {
	if len(paths) == 0 {
		return "", errors.New("diff: no path")
	}
	if err := checkPaths(paths); err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	a, err := r.resolveTreeish(ctx, from)
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	b, err := r.resolveTreeish(ctx, to)
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	args := []string{"diff-tree", "-r", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "--patch", "--text", a, b, "--"}
	out, err := r.run(ctx, invocation{dir: r.gitDir, gitDir: r.gitDir, args: append(args, paths...)})
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	return string(out), nil
}

// TreeDiff is a Diff between two trees, with the text form the gates read.
type TreeDiff struct {
	Diff
	// Text is the whole patch with every file as text (NUL bytes and all):
	// what the leak scan and the line budget read.
	Text string
	// Bytes and Longest are Measure's, of Text: what the byte budget and
	// the longest-line cap read.
	Bytes, Longest int
}

// CountLines counts the added and deleted lines of a unified diff by
// walking its hunks by their headers' counts, so a content line that looks
// like a header ("+++ x" added as "++ x") is still counted.
func CountLines(patch string) (added, deleted int) {
	s := Measure(patch)
	return s.Added, s.Deleted
}

// Stats measures a unified diff's content lines.
type Stats struct {
	Added, Deleted int // lines
	// Bytes is the size of every added and deleted line, without its
	// leading "+" or "-" and its newline: what the change writes and
	// removes, whatever the number of lines it is spread over.
	Bytes int
	// Longest is the length in bytes of the longest added line (without
	// "+" and newline): what a reviewer's diff view would have to scroll.
	Longest int
}

// Measure walks patch's hunks by their headers' counts, as CountLines
// does, and sizes their lines.
func Measure(patch string) Stats {
	var s Stats
	oldLeft, newLeft := 0, 0
	for rest := patch; rest != ""; {
		line, tail, _ := strings.Cut(rest, "\n")
		rest = tail
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(line, "+"):
				s.Added++
				s.Bytes += len(line) - 1
				s.Longest = max(s.Longest, len(line)-1)
				newLeft--
			case strings.HasPrefix(line, "-"):
				s.Deleted++
				s.Bytes += len(line) - 1
				oldLeft--
			case strings.HasPrefix(line, "\\"): // "\ No newline at end of file"
			default:
				oldLeft--
				newLeft--
			}
			continue
		}
		if strings.HasPrefix(line, "@@ ") {
			oldLeft, newLeft = hunkCounts(line)
		}
	}
	return s
}

// hunkCounts reads "@@ -a[,b] +c[,d] @@": b and d, each 1 when omitted.
func hunkCounts(h string) (int, int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	count := func(s string) int {
		_, n, ok := strings.Cut(s[1:], ",")
		if !ok {
			return 1
		}
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return 0
		}
		return v
	}
	return count(f[1]), count(f[2])
}

// resolveTreeish returns the full id of rev if it names a commit or a tree.
// A full object id is taken as it is (it cannot be read as an option, and
// the git call it goes to fails on an id that names no tree-ish).
func (r *Repo) resolveTreeish(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		return "", errors.New("empty revision")
	}
	if checkSHA(rev) == nil {
		return rev, nil
	}
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"rev-parse", "--verify", "--end-of-options", rev + "^{tree}"}})
	if err != nil {
		return "", fmt.Errorf("rev-parse %q: %w", rev, err)
	}
	oid := strings.TrimSpace(string(out))
	return oid, checkSHA(oid)
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}
