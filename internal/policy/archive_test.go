package policy

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// entry is one member of a test archive: a file with contents, or a link.
type entry struct {
	name, body, link string
	hard             bool
}

func writeTar(t testing.TB, p string, es ...entry) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w io.Writer = f
	if strings.HasSuffix(p, "gz") {
		z := gzip.NewWriter(f)
		defer z.Close()
		w = z
	}
	tw := tar.NewWriter(w)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch {
		case e.link != "" && e.hard:
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, e.link, 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeZip(t *testing.T, p string, es ...entry) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		if e.link != "" {
			h.SetMode(os.ModeSymlink | 0o777)
			body = e.link
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestArchiveExtraction: an extraction writes what its archive holds. The
// members of a local tar (plain or gzip) or zip are read and each landing
// path judged as a write: a project's .claude/settings.json, a git hook, a
// write through a link an earlier member made. An archive whose members
// cannot be read — standard input, a format not read here, one this command
// writes first, one past the bounds — is unresolvable where a protected name
// could land (the project's directory, one holding .git or .claude, a
// zone), and allowed into a plain directory.
func TestArchiveExtraction(t *testing.T) {
	env, home, repo, scratch := fsEnv(t)
	at := func(n string) string { return filepath.Join(repo, n) }
	settings := entry{name: ".claude/settings.json", body: "{}"}
	src := entry{name: "src/a.go", body: "package a\n"}
	writeTar(t, at("evil.tgz"), settings, src)
	writeTar(t, at("evil.tar"), settings, src)
	writeTar(t, at("ok.tgz"), src, entry{name: "README.md", body: "hi"})
	writeTar(t, at("hooks.tar"), entry{name: ".git/hooks/pre-commit", body: "#!/bin/sh\n"})
	writeTar(t, at("bare.tar"), entry{name: "settings.json", body: "{}"}) // harmless until it lands in a zone
	writeTar(t, at("deep.tar"), entry{name: "a/.claude/settings.json", body: "{}"})
	writeTar(t, at("sym.tar"), entry{name: "cfg", link: filepath.Join(home, ".claude")}, entry{name: "cfg/settings.json", body: "{}"})
	writeTar(t, at("dirlink.tar"), entry{name: ".claude", link: "/var/empty"}) // what /var/empty holds later is the settings
	writeTar(t, at("venv.tar"), entry{name: "venv/bin/python", link: "/usr/bin/python3"}, entry{name: "venv/lib/x.py", body: "x"})
	writeTar(t, at("hard.tar"), entry{name: "h", link: filepath.Join(home, ".claude", "settings.json"), hard: true}, entry{name: "h", body: "{}"})
	writeZip(t, at("evil.zip"), settings, src)
	writeZip(t, at("evil.jar"), settings, src)
	write(t, at("data.7z"), "7z\xbc\xaf\x27\x1c not a format the hook reads")
	write(t, at("data.rar"), "Rar!\x1a\x07\x01\x00 nor this")
	write(t, at("lib.a"), "!<arch>\n nor this")
	writeZip(t, at("zsym.zip"), entry{name: "lnk", link: filepath.Join(home, ".claude")}, entry{name: "lnk/settings.json", body: "{}"})
	write(t, at("data.txz"), "\xfd7zXZ\x00 not a tar the hook reads")
	write(t, at("data.tbz2"), "BZh91AY&SY not read either")
	if err := syscall.Mkfifo(at("fifo.tar"), 0o644); err != nil { // read, it would block the hook
		t.Fatal(err)
	}
	many := make([]entry, archiveMaxMembers+1)
	for i := range many {
		many[i] = entry{name: fmt.Sprintf("f/%06d", i)}
	}
	writeTar(t, at("many.tgz"), many...)
	write(t, filepath.Join(repo, "build", "keep"), "")
	writeTar(t, filepath.Join(scratch, "ok.tgz"), src)
	if err := os.Symlink(filepath.Join(home, ".claude"), at("cfg-link")); err != nil {
		t.Fatal(err)
	}

	for _, c := range []tc{
		{id: "tgz", in: "tar xzf evil.tgz", want: "self-mod"},
		{id: "tar", in: "tar -x -f evil.tar", want: "self-mod"},
		{id: "bsdtar", in: "bsdtar -xf evil.tgz", want: "self-mod"},
		{id: "zip", in: "unzip evil.zip", want: "self-mod"},
		{id: "bsdunzip", in: "bsdunzip evil.zip", want: "self-mod"},
		{id: "zip-name", in: "unzip evil", want: "self-mod"}, // unzip tries evil.zip
		{id: "elsewhere", in: "tar xzf evil.tgz -C " + scratch, want: "self-mod"},
		{id: "git-hook", in: "tar xf hooks.tar", want: "scope-escalation"},
		{id: "link", in: "tar xf sym.tar", want: "self-mod"},
		{id: "zip-link", in: "unzip zsym.zip", want: "self-mod"},
		{id: "hard-link", in: "tar xf hard.tar", want: "self-mod"},
		{id: "dir-link", in: "tar xf dirlink.tar -C " + scratch, want: "self-mod"},
		{id: "strip", in: "tar xf deep.tar --strip-components=1", want: "self-mod"},
		{id: "picked", in: "bsdtar -xf evil.tgz '*.json'", want: "self-mod"},
		{id: "excluded-not-picked", in: "unzip evil.zip -x '*.md'", want: "self-mod"},
		{id: "transform", in: "tar xzf ok.tgz --transform s,src,.claude,", want: "self-mod?"},
		{id: "bsdtar-substitute", in: "bsdtar -xf ok.tgz -s ,^src,.claude,", want: "self-mod?"},
		// The traditional first argument: each letter's value is the next
		// word, in the letters' order (C's is build, f's is evil.tar).
		{id: "old-style-C-first", in: "tar xCf build evil.tar", want: "self-mod"},
		{id: "old-style-f-first", in: "tar xfC evil.tar build", want: "self-mod"},
		{id: "old-style-zone", in: "tar xCf " + filepath.Join(home, ".claude") + " bare.tar", want: "self-mod"},
		// -C is cumulative, and GNU tar extracts a member operand in the
		// directory in effect where it stands, not in a -C after it.
		{id: "chdir-cumulative", in: "tar -C " + filepath.Join(home, ".claude") + " -xf " + at("bare.tar") + " -C sub", want: "self-mod"},
		{id: "chdir-before-member", in: "tar -C " + filepath.Join(home, ".claude") + " -xf " + at("bare.tar") + " settings.json -C " + scratch, want: "self-mod"},
		// -F (--info-script) takes a value: the command tar runs.
		{id: "info-script", in: "tar -c -M -L 1024 -F 'rm -rf /var/lib/app' -f out.tar src", want: "destructive"},

		// Other extractors: a tar or zip is read whichever tool unpacks it;
		// another format is judged by where it lands.
		{id: "7z-zip", in: "7z x evil.zip", want: "self-mod"},
		{id: "7z-unread", in: "7z x data.7z -y", want: "self-mod?"},
		{id: "7z-stdin", in: "curl -sL https://example.com/a.7z | 7za x -si", want: "self-mod?"},
		{id: "jar", in: "jar xf evil.jar", want: "self-mod"},
		{id: "jar-dashed", in: "jar --extract --file=evil.jar", want: "self-mod"},
		{id: "cpio", in: "cpio -idm < data.7z", want: "self-mod?"},
		{id: "cpio-pass", in: "find tmpl | cpio -pdm .", want: "self-mod?"},
		{id: "pax", in: "pax -r -f evil.tar", want: "self-mod"},
		{id: "pax-rename", in: "pax -r -s ,^src,.claude, -f ok.tgz", want: "self-mod?"},
		{id: "unrar", in: "unrar x data.rar", want: "self-mod?"},
		{id: "aunpack", in: "aunpack evil.zip", want: "self-mod"},
		{id: "ar", in: "ar x lib.a", want: "self-mod?"},
		{id: "python-zipfile", in: "python3 -m zipfile -e evil.zip .", want: "self-mod"},
		{id: "python-tarfile", in: "python3 -m tarfile -e evil.tar", want: "self-mod"},

		{id: "plain", in: "tar xzf ok.tgz", want: ""},
		{id: "7z-flat", in: "7z e evil.zip", want: ""}, // lands as settings.json
		{id: "7z-elsewhere", in: "7z x data.7z -o" + scratch, want: ""},
		{id: "7z-list", in: "7z l data.7z", want: ""},
		{id: "jar-list", in: "jar tf evil.jar", want: ""},
		{id: "cpio-elsewhere", in: "cpio -idm -D " + scratch + " < data.7z", want: ""},
		{id: "cpio-pass-build", in: "find src | cpio -pdm build", want: ""},
		{id: "pax-copy-build", in: "pax -rw src build", want: ""},
		{id: "unrar-elsewhere", in: "unrar x data.rar " + scratch + "/", want: ""},
		{id: "unar-elsewhere", in: "unar -o " + scratch + " data.rar", want: ""},
		{id: "ar-list", in: "ar t lib.a", want: ""},
		{id: "python-zipfile-list", in: "python3 -m zipfile -l evil.zip", want: ""},
		{id: "python-zipfile-build", in: "python3 -m zipfile -e ok.zip build", want: "scope-escalation?"}, // ok.zip is missing: see stdin-subdir
		{id: "plain-zip", in: "unzip -o -q evil.zip 'src/*'", want: ""},
		{id: "member", in: "tar xzf evil.tgz src/a.go", want: ""},
		{id: "old-style-elsewhere", in: "tar xCf " + scratch + " bare.tar", want: ""},
		{id: "chdir-member-elsewhere", in: "tar -C " + scratch + " -xf " + at("evil.tar") + " src/a.go", want: ""},
		{id: "strip-past", in: "tar xf deep.tar --strip-components=2", want: ""}, // lands as settings.json
		{id: "junk", in: "unzip -j evil.zip", want: ""},
		{id: "list", in: "tar tzf evil.tgz", want: ""},
		{id: "stdout", in: "tar xzOf evil.tgz", want: ""},
		{id: "zip-list", in: "unzip -l evil.zip", want: ""},
		{id: "venv", in: "tar xf venv.tar", want: ""}, // a link is not a write to its target
		{id: "create", in: "tar czf out.tgz src", want: ""},

		{id: "stdin", in: "curl -sL https://example.com/x.tgz | tar xz", want: "self-mod?"},
		{id: "stdin-elsewhere", in: "curl -sL https://example.com/x.tgz | tar xz -C " + scratch, want: ""},
		{id: "stdin-through-link", in: "cd cfg-link && curl -sL https://example.com/x.tgz | tar xz", want: "self-mod?"},
		// Below the project, unknown members may make a nested repository
		// (build/x/.git/config with core.fsmonitor runs when a prompt or an
		// editor runs git status there) or an .envrc: scope-escalation, not
		// agent settings, which an agent reads where it starts. A tree
		// copied from the disk is not an archive's unknown members.
		{id: "stdin-subdir", in: "curl -sL https://example.com/x.tgz | tar xz -C build", want: "scope-escalation?"},
		{id: "stdin-subdir", in: "curl -sL https://example.com/x.zip | bsdtar -xf - -C src/vendor", want: "scope-escalation?"},
		{id: "xz", in: "tar xJf data.txz", want: "self-mod?"},
		{id: "bzip2", in: "tar xjf data.tbz2", want: "self-mod?"},
		{id: "fifo", in: "tar xf fifo.tar", want: "self-mod?"},
		{id: "missing", in: "tar xzf later.tgz", want: "self-mod?"},
		// Into the settings' own directory, a member named settings.json
		// is the project's agent settings.
		{id: "missing-own-dir", in: "tar xzf later.tgz -C .claude", want: "self-mod?"},
		{id: "missing-own-dir", in: "cd .claude && tar xzf ../later.tgz", want: "self-mod?"},
		{id: "missing-own-dir", in: "unzip later.zip -d .claude", want: "self-mod?"},
		{id: "missing-own-dir", in: "curl -sL https://example.com/x.tgz | tar xz -C .git", want: "self-mod?"},
		{id: "missing-own-dir", in: "tar xzf later.tgz -C .claude/hooks/lib", want: "self-mod"},
		{id: "missing-own-dir", in: "wget --content-disposition -P .claude https://example.com/get", want: "self-mod?"},
		{id: "named-own-dir", in: "wget -P .claude https://example.com/settings.cgi", want: ""},
		{id: "missing-elsewhere", in: "tar xzf later.tgz -C .claude-old", want: "scope-escalation?"},
		{id: "missing-elsewhere", in: "tar xzf later.tgz -C build/.claude.d", want: "scope-escalation?"},
		{id: "written-first", in: "cp " + filepath.Join(scratch, "ok.tgz") + " ok.tgz && tar xzf ok.tgz", want: "self-mod?"},
		{id: "too-many", in: "tar xzf many.tgz", want: "self-mod?"},
		{id: "run-time", in: "tar xzf \"$ARCHIVE\"", want: "self-mod?"},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// FuzzArchiveMembers: whatever bytes an archive holds, listing it returns
// members or an error, within its bounds, and never panics.
func FuzzArchiveMembers(f *testing.F) {
	for _, b := range []string{"", "PK\x05\x06", "\x1f\x8b", "BZh91AY", "\xfd7zXZ\x00"} {
		f.Add([]byte(b))
	}
	seed := filepath.Join(f.TempDir(), "seed.tar")
	writeTar(f, seed, entry{name: ".claude/settings.json", body: "{}"}, entry{name: "l", link: "/etc"})
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "a")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ms, err := archiveMembers(p)
		if err == nil && len(ms) > archiveMaxMembers {
			t.Fatalf("%d members, past the bound %d", len(ms), archiveMaxMembers)
		}
	})
}

// TestArchiveReadBounds: an archive is read within its bounds whatever it
// holds — input a gzip stream consumes without output (empty deflate
// blocks), a decompressed stream past its size, tar headers grown by a PAX
// record — while a tar's contents are seeked past, not read. Past a bound
// the members are unknown (errUnread), which the extraction then judges by
// where it lands.
func TestArchiveReadBounds(t *testing.T) {
	read, expanded := archiveMaxRead, archiveMaxExpanded
	t.Cleanup(func() { archiveMaxRead, archiveMaxExpanded = read, expanded })
	archiveMaxRead, archiveMaxExpanded = 16<<10, 16<<10
	dir := t.TempDir()

	small := filepath.Join(dir, "small.tar")
	writeTar(t, small, entry{name: ".claude/settings.json", body: "{}"})
	tarBytes, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	// A gzip member of empty stored blocks, then the tar in a final stored
	// block: 20 KiB of input before a byte of output.
	var gz bytes.Buffer
	gz.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	for range (20 << 10) / 5 {
		gz.Write([]byte{0x00, 0x00, 0x00, 0xff, 0xff})
	}
	n := len(tarBytes)
	gz.Write([]byte{0x01, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
	gz.Write(tarBytes)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc32.ChecksumIEEE(tarBytes))
	binary.LittleEndian.PutUint32(trailer[4:], uint32(n))
	gz.Write(trailer[:])
	empty := filepath.Join(dir, "empty-blocks.tgz")
	if err := os.WriteFile(empty, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	big := strings.Repeat("x", 64<<10)
	for _, c := range []struct {
		name  string
		make  func(p string)
		bound bool // past a bound: errUnread
	}{
		{"small", func(p string) { writeTar(t, p, entry{name: "a", body: "x"}) }, false},
		{"content-seeked-past", func(p string) { writeTar(t, p, entry{name: "a", body: big}) }, false},
		{"pax-record", func(p string) {
			writeTar(t, p, entry{name: strings.Repeat("d/", 10<<10) + "a", body: "x"}) // a PAX path past 16 KiB
		}, true},
		{"decompressed", func(p string) { writeTar(t, p+".gz", entry{name: "a", body: big}); os.Rename(p+".gz", p) }, true},
		{"empty-blocks", func(p string) { os.Rename(empty, p) }, true},
	} {
		p := filepath.Join(dir, c.name)
		c.make(p)
		_, err := archiveMembers(p)
		if got := errors.Is(err, errUnread); got != c.bound || (!c.bound && err != nil) {
			t.Errorf("%s: archiveMembers err = %v, want past a bound: %v", c.name, err, c.bound)
		}
	}
	// The same gzip read whole, with the bounds as they ship.
	archiveMaxRead, archiveMaxExpanded = read, expanded
	if ms, err := archiveMembers(filepath.Join(dir, "empty-blocks")); err != nil || len(ms) != 1 {
		t.Errorf("empty-blocks under the shipped bounds: %v, %v; want its one member", ms, err)
	}
}
