package policy

// This file holds archive extraction (tar -x, unzip): what an archive holds
// lands under the destination as surely as a copied tree does, though the
// command line names none of it.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Bounds on reading an archive in the hook, which answers within the agent
// CLI's timeout: a plain tar or a zip is read by its headers alone (seeking
// past the contents, or reading the central directory), a compressed tar
// must be decompressed to reach each header.
const (
	archiveMaxFile    = 4 << 30 // bytes of archive file opened at all
	archiveMaxZip     = 512 << 20
	archiveMaxMembers = 20000
	archiveMaxLink    = 4 << 10 // a zip symbolic link's target, stored as its contents
)

// Variables only so that a test can lower them.
var (
	archiveMaxRead     int64 = 64 << 20 // bytes read from the file (not counting what a tar seeks past)
	archiveMaxExpanded int64 = 64 << 20 // bytes decompressed from a gzip tar
)

// member is one entry of an archive, named as the archive names it.
type member struct {
	name string
	link string // a link's target; "" for a file or directory
	hard bool   // link is a hard link's target, named like a member
}

// errUnread is why an archive's members are not known: a format this
// analysis does not decompress, a damaged archive, or one past the bounds.
var errUnread = errors.New("archive not read")

// archiveMembers lists the members of the tar (plain or gzip) or
// zip archive at p, as the file holds them now. The format is read from the
// file's first bytes, as the extractors detect it, not from its name.
func archiveMembers(p string) ([]member, error) {
	f, size, err := pathguard.OpenRegular(p, archiveMaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	head := magic[:n]
	// Every byte read from the file counts against one budget, whatever
	// reads it: a zip's central directory, a tar's headers (PAX records
	// among them), a gzip stream's input (empty deflate blocks consume
	// input and yield nothing).
	in := &budgetFile{f: f, left: archiveMaxRead}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")):
		if size > archiveMaxZip {
			// archive/zip sizes its list by the count the archive
			// claims, up to one per 30 bytes of file.
			return nil, fmt.Errorf("%w: a zip of %d bytes, past %d", errUnread, size, int64(archiveMaxZip))
		}
		return zipMembers(in, size)
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", errUnread, err)
		}
		return tarMembers(&boundedReader{r: z, left: archiveMaxExpanded})
	}
	// A plain tar, or a compression this analysis does not read (bzip2,
	// xz, zstd, lz4…), which fails as a tar header. bzip2 is left out on
	// purpose: compress/bzip2 builds its tables at init, about 0.03 ms of
	// every hook call's start-up, for an archive format seldom seen.
	return tarMembers(in)
}

func tarMembers(r io.Reader) ([]member, error) {
	tr := tar.NewReader(r) // seeks past each member's contents when r is a file
	var ms []member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return ms, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUnread, err)
		}
		if len(ms) == archiveMaxMembers {
			return nil, fmt.Errorf("%w: more than %d members", errUnread, archiveMaxMembers)
		}
		m := member{name: h.Name}
		switch h.Typeflag {
		case tar.TypeSymlink:
			m.link = h.Linkname
		case tar.TypeLink:
			m.link, m.hard = h.Linkname, true
		}
		ms = append(ms, m)
	}
}

func zipMembers(f io.ReaderAt, size int64) ([]member, error) {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return nil, fmt.Errorf("%w: zip: %v", errUnread, err)
	}
	if len(zr.File) > archiveMaxMembers {
		return nil, fmt.Errorf("%w: more than %d members", errUnread, archiveMaxMembers)
	}
	ms := make([]member, 0, len(zr.File))
	for _, zf := range zr.File {
		m := member{name: zf.Name}
		if zf.Mode()&fs.ModeSymlink != 0 {
			// unzip makes a link whose target is the entry's contents.
			rc, err := zf.Open()
			if err != nil {
				return nil, fmt.Errorf("%w: zip: %v", errUnread, err)
			}
			b, err := io.ReadAll(io.LimitReader(rc, archiveMaxLink))
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("%w: zip: %v", errUnread, err)
			}
			m.link = string(b)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// budgetFile reads a file until left bytes have been read, by Read or
// ReadAt; seeking (tar skipping a member's contents) reads nothing.
type budgetFile struct {
	f    *os.File
	left int64
}

func (b *budgetFile) spend(n int) error {
	b.left -= int64(n)
	if b.left < 0 {
		return fmt.Errorf("%w: more than %d bytes read", errUnread, archiveMaxRead)
	}
	return nil
}

func (b *budgetFile) Read(p []byte) (int, error) {
	n, err := b.f.Read(p)
	if e := b.spend(n); e != nil {
		return n, e
	}
	return n, err
}

func (b *budgetFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.f.ReadAt(p, off)
	if e := b.spend(n); e != nil {
		return n, e
	}
	return n, err
}

func (b *budgetFile) Seek(off int64, whence int) (int64, error) { return b.f.Seek(off, whence) }

// boundedReader fails once more than left bytes have been read through it.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: more than %d bytes decompressed", errUnread, archiveMaxExpanded)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// extraction is one archive extraction, as its command line describes it.
type extraction struct {
	how      string  // the command, for reasons
	archive  field   // the archive's path; ignored when stdin
	stdin    bool    // the archive comes from standard input
	dest     field   // where members land; the working directory when empty
	strip    int     // leading components dropped from each member (tar --strip-components)
	junk     bool    // only each member's last component is kept (unzip -j)
	absolute bool    // a member's leading / is kept (tar -P)
	renamed  string  // why member names are not the archive's (tar --transform, a program); "" when they are
	only     []field // the members named on the command line; none means all
	copies   bool    // a tree copied from the disk (cpio -p, pax -rw), not an archive
}

// selects reports whether the command line's member operands pick m: the
// member itself, a directory above it, or a pattern matching it (bsdtar,
// unzip and tar --wildcards match patterns; GNU tar's default is literal,
// which this over-reads). A name only known at run time picks everything.
func (x extraction) selects(name string) bool {
	if len(x.only) == 0 {
		return true
	}
	name = strings.TrimSuffix(strings.TrimLeft(name, "/"), "/")
	for _, o := range x.only {
		if o.dyn {
			return true
		}
		op := strings.TrimSuffix(strings.TrimLeft(o.s, "/"), "/")
		if name == op || strings.HasPrefix(name, op+"/") {
			return true
		}
		if !hasMeta(op) {
			continue
		}
		// The extractors' * also matches a slash (GNU tar's
		// --wildcards-match-slash, libarchive's pathmatch): match with the
		// slashes made ordinary characters. A pattern can also pick a
		// directory above the member.
		pat := strings.ReplaceAll(op, "/", "\x00")
		for d := name; d != "." && d != "/" && d != ""; d = path.Dir(d) {
			if ok, _ := path.Match(pat, strings.ReplaceAll(d, "/", "\x00")); ok {
				return true
			}
		}
	}
	return false
}

// extracts checks what an extraction writes. Each member's landing path is
// a write, as if the command named it; a link member is also a link at that
// path (ln's rule), and a later member under it is a write at the link's
// target, as is a file extracted again over a hard link. When the members cannot be known — the archive comes from
// standard input, is written earlier in this same command, is missing, is
// in a format not read here, or is past the bounds — the extraction is
// unresolvable where a protected name could land: the project's root or a
// directory above it, a repository's top, a directory already holding
// agent settings, the home directory, a protected zone.
func (a *analyzer) extracts(x extraction, st *state) {
	if st.remote {
		return
	}
	dest := st.cwd
	if x.dest.s != "" || x.dest.dyn {
		if x.dest.dyn {
			return // touchPath has judged a run-time destination
		}
		d, ok := cleanAbs(st.cwd, a.expandTilde(x.dest.s))
		if !ok {
			return
		}
		dest = d
	}
	if dest == "" {
		return
	}
	why := x.renamed
	var ms []member
	switch {
	case why != "":
	case x.stdin:
		why = "it comes from standard input"
	case x.archive.dyn:
		why = "its path is only known at run time"
	default:
		p, ok := cleanAbs(st.cwd, a.expandTilde(x.archive.s))
		if !ok {
			why = "the working directory is unknown"
			break
		}
		if a.written[p] {
			why = "this command writes it first"
			break
		}
		var err error
		ms, err = archiveMembers(p)
		if errors.Is(err, fs.ErrNotExist) {
			why = "it does not exist yet"
		} else if err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		exposed, what := a.exposedDir(dest)
		if r := a.resolve(dest); !exposed && r != dest {
			// A directory reached through a link (cd link && tar x) is
			// where the members land.
			exposed, what = a.exposedDir(r)
		}
		src := "standard input"
		if !x.stdin {
			src = x.archive.String()
		}
		switch {
		case exposed:
			a.add(SelfMod, true, "%s extracts %s into %s (%s), where project agent settings or git hooks could land; its members cannot be read here: %s",
				x.how, src, dest, what, why)
		case !x.copies && (a.nestedRepoDir(dest) || a.nestedRepoDir(a.resolve(dest))):
			a.add(ScopeEscalation, true, "%s extracts %s into %s, %s; its members cannot be read here: %s",
				x.how, src, dest, nestedWhere, why)
		}
		return
	}
	links := map[string]string{} // a symbolic link member's path → its target
	hard := map[string]string{}  // a hard link member's path → the file it links
	for _, m := range ms {
		if !a.step() {
			return
		}
		if !x.selects(m.name) {
			continue
		}
		name := m.name
		if !x.absolute || !strings.HasPrefix(name, "/") {
			name = strings.TrimLeft(name, "/")
		}
		if x.strip > 0 {
			comps := strings.Split(strings.Trim(path.Clean("/"+name), "/"), "/")
			if len(comps) <= x.strip {
				continue
			}
			name = strings.Join(comps[x.strip:], "/")
		}
		if x.junk {
			name = path.Base(name)
		}
		landing := filepath.Join(dest, filepath.FromSlash(name))
		if x.absolute && strings.HasPrefix(name, "/") {
			landing = filepath.Clean(name)
		}
		how := fmt.Sprintf("%s (member %q of %s)", x.how, m.name, x.archive)
		a.writePath(word(landing), st, how)
		// A member under a link an earlier member made is written
		// through it, to the link's target.
		for d := filepath.Dir(landing); d != dest && len(d) > len(dest); d = filepath.Dir(d) {
			if t, ok := links[d]; ok {
				rest, _ := filepath.Rel(d, landing)
				a.writePath(word(filepath.Join(t, rest)), st, how+" (through the link "+d+")")
				break
			}
		}
		if t, ok := hard[landing]; ok {
			// A file extracted again at a hard link's path may write the
			// linked file's contents.
			a.writePath(word(t), st, how+" (a hard link to "+t+")")
		}
		if m.link == "" {
			continue
		}
		a.linkHolds(landing, how)
		if m.hard {
			t := m.link
			if !filepath.IsAbs(t) {
				t = filepath.Join(dest, t) // a hard link names another member
			}
			hard[landing] = filepath.Clean(t)
			continue
		}
		t := m.link
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(landing), t)
		}
		links[landing] = filepath.Clean(t)
	}
}

// nestedRepoDir reports whether dir lies below the project's directory,
// where what an archive whose members are unknown holds could make a
// nested repository (a .git with its own config, hooks or commondir) or a
// direnv or mise file that runs when someone works there — not agent
// settings, which an agent reads where it starts (exposedDir).
func (a *analyzer) nestedRepoDir(dir string) bool {
	return a.cwd0 != "" && a.cwd0 != "/" && strings.HasPrefix(dir, a.cwd0+string(filepath.Separator))
}

// nestedWhere is what a ScopeEscalation match for nestedRepoDir says.
const nestedWhere = "inside the project, where a nested repository's git config or hooks, or a direnv or mise file, could land"

// exposedDir reports whether a protected name could land in dir from an
// archive whose members are unknown, and which.
func (a *analyzer) exposedDir(dir string) (bool, string) {
	if a.cwd0 != "" && (dir == a.cwd0 || strings.HasPrefix(a.cwd0, dir+string(filepath.Separator)) || dir == "/") {
		return true, "the project's directory or one above it"
	}
	if a.home != "" && dir == a.home {
		return true, "the home directory"
	}
	for _, n := range a.nameDirs() {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return true, "it holds " + n
		}
	}
	comps := splitPath(dir)
	for _, z := range a.zoneList() {
		if z.inside(comps) || z.containedBy(comps) {
			return true, z.what
		}
	}
	// The directory protected names sit in (.claude, whose settings.json
	// a member named settings.json would be), or one below a protected
	// run (.claude/hooks/x).
	for _, n := range a.names {
		if n.holdsPrefix(comps) || (n.under && n.match(comps)) {
			return true, "a directory that holds " + n.what
		}
	}
	return false, ""
}
