package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// ErrExposes is a sandbox one of whose fixed mounts — a system root, an
// RO, RW or Tmp path — would show a sandboxed command fixrail's state,
// the repository or fixrail itself (see Hidden). Run refuses it before
// anything starts, whatever the Mode and whether or not bubblewrap is
// here; the pipeline HALTs no-sandbox on it.
var ErrExposes = errors.New("no sandboxed command may see it")

// Hidden names fixrail's own places, which no mount of a sandbox may show.
// Every path is compared as written (cleaned) and with its symbolic links
// resolved, against each mount's source both ways too: a PATH entry that
// is a link into the repository shows the repository.
type Hidden struct {
	// Repo is the repository's work tree: no mount equals or contains it.
	// A mount inside it (an in-tree virtualenv) shows only what lies in
	// that directory; its git directory and .fixrail are hidden on their
	// own.
	Repo string
	// GitDir is the repository's git directory and State its .fixrail: no
	// mount equals, contains or lies inside either.
	GitDir, State string
	// RunDir is the run's disposable directory: no mount equals or
	// contains it, and no PATH entry's mount lies inside it (the caller's
	// RW, RO and Tmp may: the worktree, the hand-off directory and the
	// command's TMPDIR are in it).
	RunDir string
	// Temp is where fixrail makes its disposable directories (every run's):
	// no mount equals or contains it. The process's TMPDIR (os.TempDir)
	// and fixrail's own binary (os.Executable, resolved) are hidden in
	// every sandbox, Hidden or not: no mount contains the binary but a
	// system root (/usr shows every program installed there) and an RO
	// path that is exactly the binary (the claude adapter's phase hook).
	Temp string
}

// executable is fixrail's own binary; a variable so that a test can stand
// in another path for the test binary.
var executable = os.Executable

// hidden is one place no mount may show.
type hidden struct {
	what  string   // how a message names it: "the repository /w/repo"
	forms []string // its path clean, and resolved when that differs
	// inside: a mount may not lie in it either; pathInside: a PATH
	// entry's mount may not.
	inside, pathInside bool
	binary             bool // fixrail's binary: see Hidden.Temp
}

// mountKind is where a mount comes from, which decides the rules it is
// held to.
type mountKind int

const (
	kindSystem mountKind = iota // a system root
	kindPath                    // a PATH entry or the toolchain root it names
	kindRO                      // Spec.RO
	kindRW                      // Spec.RW and Spec.Tmp
)

// forms returns p cleaned and, when it differs, with its links resolved
// (as far as it exists). A path that cannot be resolved keeps its clean
// form only; the caller compares every form.
func forms(p string) []string {
	p = filepath.Clean(p)
	out := []string{p}
	if r, err := pathguard.ResolveExisting(p); err == nil && r != p {
		out = append(out, r)
	}
	return out
}

// hiddenSet is Hidden with fixrail's TMPDIR and binary added.
func (h Hidden) set() []hidden {
	var hs []hidden
	add := func(p, what string, inside, pathInside, binary bool) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		hs = append(hs, hidden{what: what + " " + filepath.Clean(p), forms: forms(p), inside: inside, pathInside: pathInside, binary: binary})
	}
	add(h.Repo, "the repository", false, false, false)
	add(h.GitDir, "the repository's git directory", true, true, false)
	add(h.State, "fixrail's state directory", true, true, false)
	add(h.RunDir, "the run's directory", false, true, false)
	add(h.Temp, "fixrail's temporary directory", false, false, false)
	add(os.TempDir(), "fixrail's TMPDIR", false, false, false)
	if exe, err := executable(); err == nil {
		add(exe, "fixrail's own binary", false, false, true)
	}
	return hs
}

// shows says how a mount of src would show a hidden place — "is the
// repository /w/r", "holds fixrail's own binary /w/bin/fixrail", "lies in
// fixrail's state directory /w/r/.fixrail" — or "" when it shows none.
func shows(hs []hidden, src string, k mountKind) string {
	srcs := forms(src)
	for _, h := range hs {
		if h.binary && (k == kindSystem || k == kindRO && overlapsExactly(srcs, h.forms)) {
			continue
		}
		for _, s := range srcs {
			for _, p := range h.forms {
				switch {
				case s == p:
					return "is " + h.what
				case pathguard.Within(s, p):
					return "holds " + h.what
				case (h.inside || h.pathInside && k == kindPath) && pathguard.Within(p, s):
					return "lies in " + h.what
				}
			}
		}
	}
	return ""
}

// overlapsExactly reports whether a form of one path is a form of the other.
func overlapsExactly(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// MountPlan is the filesystem a sandboxed command sees: every bind, tmpfs,
// link and mask in the order bwrap applies them, and the PATH entries left
// out. Spec.Mounts makes it; Run runs commands in it and doctor reports
// it, so what doctor says is what a command gets.
type MountPlan struct {
	mounts   []mount
	skipped  []string
	withheld []string // the skipped lines of entries that show a hidden place
}

// Binds says, one line each, what is bound from the host: the system
// roots, each PATH entry's mount and why it is that directory, the RO and
// RW paths.
func (p MountPlan) Binds() []string {
	var out []string
	for _, m := range p.mounts {
		switch {
		case m.op == "--ro-bind" && m.src != os.DevNull:
			out = append(out, "read-only "+m.src+" ("+m.from+")")
		case m.op == "--bind":
			out = append(out, "read-write "+m.src+" at "+m.dst+" ("+m.from+")")
		}
	}
	return out
}

// Skipped says which PATH entries are not mounted, and why: one in the
// operator's home, or one that would show what Hidden names.
func (p MountPlan) Skipped() []string { return slices.Clone(p.skipped) }

// Withheld is the part of Skipped that would have shown what Hidden names
// (the operator's home is left out of every sandbox as a matter of
// course; a PATH entry that shows fixrail's own places is worth saying).
func (p MountPlan) Withheld() []string { return slices.Clone(p.withheld) }

// Shows returns the bind (its source) through which a command would see
// path, or "" when none would. Links are resolved on both sides.
func (p MountPlan) Shows(path string) string {
	if path == "" || !filepath.IsAbs(path) {
		return ""
	}
	ps := forms(path)
	for _, m := range p.mounts {
		if m.op != "--ro-bind" && m.op != "--bind" || m.src == os.DevNull {
			continue
		}
		for _, s := range forms(m.src) {
			for _, q := range ps {
				if pathguard.Within(s, q) {
					return m.src
				}
			}
		}
	}
	return ""
}

// Mounts is the filesystem a command with environment env would see under
// s (PATH and HOME are read from env): the system roots read-only, the
// masks, a fresh /proc and /dev, /tmp (a tmpfs, or Tmp), HOME as an empty
// tmpfs, a read-only mount for each PATH entry outside the system roots,
// and RO and RW. An error is a Spec that cannot be honoured: a bad RO, RW
// or Tmp path, or a fixed mount that would show what s.Hide names
// (wrapping ErrExposes).
//
// A PATH entry is mounted as itself, or as the toolchain root it is the
// bin directory of (ToolchainRoot: /opt/go for /opt/go/bin), never wider.
// An entry whose mount would be, contain or lie in the operator's home, or
// show what Hidden names, is not mounted and is listed in Skipped: the
// operator's PATH routinely holds ~/bin and the directory fixrail itself
// was found in, and leaving one out only costs a command that is not
// found inside. A root that would show a hidden place falls back to the
// entry itself.
func (s *Spec) Mounts(env []string) (MountPlan, error) {
	var p MountPlan
	homes := operatorHomes()
	hs := s.Hide.set()

	rw, err := checkPaths("read-write", s.RW, homes, true)
	if err != nil {
		return p, err
	}
	ro, err := checkPaths("read-only", s.RO, homes, false)
	if err != nil {
		return p, err
	}
	for _, r := range rw {
		if slices.Contains(ro, r) {
			return p, fmt.Errorf("sandbox: %s is both read-only and read-write", r)
		}
	}
	var tmp []string
	if s.Tmp != "" {
		if tmp, err = checkPaths("Tmp", []string{s.Tmp}, homes, true); err != nil {
			return p, err
		}
	}
	refuse := func(what, path string, k mountKind) error {
		if why := shows(hs, path, k); why != "" {
			return fmt.Errorf("sandbox: %s %s %s: %w", what, path, why, ErrExposes)
		}
		return nil
	}

	var ms []mount
	for _, r := range systemRoots {
		fi, err := os.Lstat(r)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(r)
			if err != nil {
				return p, fmt.Errorf("sandbox: %w", err)
			}
			ms = append(ms, mount{op: "--symlink", src: target, dst: r})
		case fi.IsDir():
			if err := refuse("the system root", r, kindSystem); err != nil {
				return p, err
			}
			ms = append(ms, mount{op: "--ro-bind", src: r, dst: r, from: "system"})
		}
	}
	for _, pattern := range masked {
		matches, _ := filepath.Glob(pattern) // the patterns are constant and valid
		for _, m := range matches {
			fi, err := os.Lstat(m)
			switch {
			case err != nil:
			case fi.IsDir():
				ms = append(ms, mount{op: "--tmpfs", dst: m})
			case fi.Mode().IsRegular():
				ms = append(ms, mount{op: "--ro-bind", src: os.DevNull, dst: m})
			}
		}
	}
	ms = append(ms, mount{op: "--proc", dst: "/proc"}, mount{op: "--dev", dst: "/dev"})
	if len(tmp) > 0 {
		if err := refuse("Tmp", tmp[0], kindRW); err != nil {
			return p, err
		}
		ms = append(ms, mount{op: "--bind", src: tmp[0], dst: "/tmp", from: "the command's TMPDIR"})
	} else {
		ms = append(ms, mount{op: "--tmpfs", dst: "/tmp"})
	}
	ms = append(ms, mount{op: "--tmpfs", dst: sandboxHome(env)})
	dirs, skipped, withheld := pathMounts(lookupEnv(env, "PATH"), homes, hs)
	ms = append(ms, dirs...)
	p.skipped, p.withheld = skipped, withheld
	for _, r := range ro {
		if err := refuse("the read-only path", r, kindRO); err != nil {
			return p, err
		}
		ms = append(ms, mount{op: "--ro-bind", src: r, dst: r, from: "read-only"})
	}
	if s.GoCache != "" {
		// Bound at its resolved path: the links seed makes name that.
		gc, err := filepath.EvalSymlinks(s.GoCache)
		if err != nil {
			return p, fmt.Errorf("sandbox: Go build cache: %w", err)
		}
		if _, err := checkPaths("Go build cache", []string{gc}, homes, false); err != nil {
			return p, err
		}
		if slices.ContainsFunc(rw, func(r string) bool { return pathguard.Within(r, gc) || pathguard.Within(gc, r) }) ||
			len(tmp) > 0 && (pathguard.Within(tmp[0], gc) || pathguard.Within(gc, tmp[0])) {
			return p, fmt.Errorf("sandbox: the Go build cache %s overlaps a writable path", gc)
		}
		if err := refuse("the Go build cache", gc, kindRO); err != nil {
			return p, err
		}
		ms = append(ms, mount{op: "--ro-bind", src: gc, dst: gc, from: "the standard library's build cache, linked into GOCACHE"})
	}
	for _, r := range rw {
		if err := refuse("the read-write path", r, kindRW); err != nil {
			return p, err
		}
		ms = append(ms, mount{op: "--bind", src: r, dst: r, from: "read-write"})
	}
	// A mount hides what was mounted at or under its path before it, so
	// shallower paths go first: the worktree lands on top of the tmpfs that
	// holds it, a mask on top of /etc.
	slices.SortStableFunc(ms, func(a, b mount) int { return depth(a.dst) - depth(b.dst) })
	p.mounts = ms
	return p, nil
}

// pathMounts are the read-only mounts a PATH asks for beyond the system
// roots, and the entries it leaves out. For each absolute entry (and its
// link target) that is a directory: nothing when a system root holds it
// already; else its toolchain root, when it is a toolchain's bin directory
// and the root is safe to show, else the entry itself when that is safe,
// else nothing (said in skipped). Safe: not the filesystem root, not
// containing a system root or /tmp, clear of every operator home (neither
// in one nor holding one) and showing nothing hidden.
func pathMounts(path string, homes []string, hs []hidden) (ms []mount, skipped, withheld []string) {
	special := append(slices.Clone(systemRoots), "/proc", "/dev", "/sys", "/tmp")
	covered := func(d string) bool {
		return slices.ContainsFunc(ms, func(m mount) bool { return pathguard.Within(m.src, d) })
	}
	// unsafe says why d must not be mounted for a PATH entry, or "", and
	// whether that is for showing a hidden place.
	unsafe := func(d string) (string, bool) {
		if d == "/" {
			return "is the filesystem root", false
		}
		for _, r := range special {
			if pathguard.Within(d, r) {
				return "holds the system path " + r, false
			}
		}
		for _, h := range homes {
			for _, f := range forms(d) {
				if pathguard.Within(h, f) || pathguard.Within(f, h) {
					return "is in or holds the operator's home " + h, false
				}
			}
		}
		if why := shows(hs, d, kindPath); why != "" {
			return why, true
		}
		return "", false
	}
	inSystem := func(d string) bool {
		for _, r := range special {
			if r != "/tmp" && pathguard.Within(r, d) {
				return true
			}
		}
		return false
	}
	note := func(s string, hidden bool) {
		if !slices.Contains(skipped, s) {
			skipped = append(skipped, s)
			if hidden {
				withheld = append(withheld, s)
			}
		}
	}
	for _, entry := range filepath.SplitList(path) {
		if !filepath.IsAbs(entry) {
			continue
		}
		entry = filepath.Clean(entry)
		cands := []string{entry}
		if real, err := filepath.EvalSymlinks(entry); err == nil && real != entry {
			cands = append(cands, real)
		}
		for _, c := range cands {
			if fi, err := os.Stat(c); err != nil || !fi.IsDir() || inSystem(c) {
				continue
			}
			d, from := c, "PATH entry "+entry
			if root, kind := ToolchainRoot(c); root != "" && !inSystem(root) && safe(unsafe(root)) {
				d, from = root, fmt.Sprintf("%s, for PATH entry %s", kind, entry)
			} else if why, hidden := unsafe(c); why != "" {
				if c != entry {
					why = "(a link to " + c + ") " + why
				}
				note("PATH entry "+entry+" "+why, hidden)
				continue
			}
			if covered(d) {
				continue
			}
			// A wider root may swallow ones added before it.
			ms = slices.DeleteFunc(ms, func(m mount) bool { return pathguard.Within(d, m.src) })
			ms = append(ms, mount{op: "--ro-bind", src: d, dst: d, from: from})
		}
	}
	return ms, skipped, withheld
}

func safe(why string, _ bool) bool { return why == "" }

// A toolchain layout: the files and directories (relative to the root)
// that make a directory that toolchain's install root. Each alternative in
// anyOf is one set of which all must be there.
type layout struct {
	kind  string
	files []string   // regular files (links followed), all required
	dirs  []string   // directories, all required
	anyOf [][]string // at least one of these directories (globs allowed)
}

// toolchainLayouts are the install roots a PATH entry's bin directory may
// stand for. Each asks for more than a bin directory: the toolchain's own
// library tree, which no directory holding a checkout has by accident.
var toolchainLayouts = []layout{
	// A Go distribution: the runtime's source, the compiler tools and the
	// version file (go env GOROOT).
	{kind: "a Go root", files: []string{"bin/go", "VERSION"}, dirs: []string{"src/runtime", "pkg/tool"}},
	// A Node.js prefix: npm and global modules, or node's headers.
	{kind: "a Node.js prefix", files: []string{"bin/node"}, anyOf: [][]string{{"lib/node_modules"}, {"include/node"}}},
	// A Python prefix or virtualenv: the interpreter and its library.
	{kind: "a Python prefix", files: []string{"bin/python3"}, anyOf: [][]string{{"lib/python3.*"}}},
	// A rustup toolchain: rustc and its target libraries.
	{kind: "a Rust toolchain", files: []string{"bin/rustc"}, dirs: []string{"lib/rustlib"}},
	// A JDK: java and its module image (9 and later) or rt.jar (8).
	{kind: "a JDK", files: []string{"bin/java", "release"}, anyOf: [][]string{{"lib/modules"}, {"jre/lib/rt.jar"}}},
}

// ToolchainRoot returns the install root that bin, a PATH entry, is the
// bin directory of, and what kind of root it is, when the parent directory
// has one of the recognised toolchain layouts: a Go root (bin/go, VERSION,
// src/runtime, pkg/tool), a Node.js prefix (bin/node and lib/node_modules
// or include/node), a Python prefix or virtualenv (bin/python3 and
// lib/python3.*), a Rust toolchain (bin/rustc, lib/rustlib) or a JDK
// (bin/java, release, and lib/modules or jre/lib/rt.jar). Otherwise it
// returns "", "": the entry stands for itself.
func ToolchainRoot(bin string) (root, kind string) {
	if !filepath.IsAbs(bin) || filepath.Base(bin) != "bin" {
		return "", ""
	}
	root = filepath.Dir(filepath.Clean(bin))
	if root == "/" {
		return "", ""
	}
	for _, l := range toolchainLayouts {
		if l.matches(root) {
			return root, l.kind
		}
	}
	return "", ""
}

func (l layout) matches(root string) bool {
	for _, f := range l.files {
		if fi, err := os.Stat(filepath.Join(root, f)); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	for _, d := range l.dirs {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	if len(l.anyOf) == 0 {
		return true
	}
	for _, set := range l.anyOf {
		if slices.IndexFunc(set, func(g string) bool { return !existsGlob(filepath.Join(root, g)) }) < 0 {
			return true
		}
	}
	return false
}

// existsGlob reports whether pattern names at least one existing path.
func existsGlob(pattern string) bool {
	if !strings.ContainsAny(pattern, "*?[") {
		_, err := os.Stat(pattern)
		return err == nil
	}
	m, _ := filepath.Glob(pattern)
	return len(m) > 0
}
