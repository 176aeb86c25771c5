package pathguard

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCleanRel(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"src/a.py", "src/a.py", true},
		{"src/./b/../a.py", "src/a.py", false}, // ".." anywhere is refused, even when it cancels out
		{"./tests/t.py", "tests/t.py", true},
		{"../etc/passwd", "", false},
		{"/etc/passwd", "", false},
		{"a\\b", "", false},
		{"a\x00b", "", false},
		{"", "", false},
		{".", "", false},
		{"-rf", "", false},
	} {
		got, err := CleanRel(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("CleanRel(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestResolveWithin(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveWithin(root, "tests/new_test.py"); err != nil {
		t.Errorf("plain new file: %v", err)
	}
	if _, err := ResolveWithin(root, "tests/deep/new/x.py"); err != nil {
		t.Errorf("new nested file: %v", err)
	}
	if _, err := ResolveWithin(root, "link/x.py"); !errors.Is(err, ErrEscape) {
		t.Errorf("through a symlink out of root: got %v, want ErrEscape", err)
	}
	if _, err := ResolveWithin(root, "../x"); err == nil {
		t.Error("dot-dot accepted")
	}
}

func TestAssertDisposable(t *testing.T) {
	parent := t.TempDir()
	d, err := NewDisposable(parent, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := AssertDisposable(d); err != nil {
		t.Fatalf("own dir refused: %v", err)
	}
	plain := filepath.Join(parent, TempPrefix+"plain")
	os.Mkdir(plain, 0o755)
	if AssertDisposable(plain) == nil {
		t.Error("dir without marker accepted")
	}
	unnamed := filepath.Join(parent, "home")
	os.Mkdir(unnamed, 0o755)
	os.WriteFile(filepath.Join(unnamed, MarkerName), nil, 0o600)
	if AssertDisposable(unnamed) == nil {
		t.Error("marker planted in a dir with another name accepted")
	}
	link := filepath.Join(parent, TempPrefix+"link")
	os.Symlink(d, link)
	if AssertDisposable(link) == nil {
		t.Error("symlink to a disposable dir accepted")
	}
	if AssertDisposable("relative/"+TempPrefix+"x") == nil {
		t.Error("relative path accepted")
	}
	if err := RemoveDisposable(d); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("disposable dir still there: %v", err)
	}
	if err := RemoveDisposable(plain); err == nil {
		t.Error("RemoveDisposable deleted an unmarked dir")
	}
}

func TestSafeName(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"42", true}, {"GHSA-abcd-1234", true}, {"issue_9.v2", true},
		{"", false}, {".hidden", false}, {"-rf", false}, {"a/b", false}, {"a..b", false},
		{"x.lock", false}, {"trailing.", false}, {"sp ace", false}, {"ünï", false},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
	} {
		if got := SafeName(tc.in); got != tc.ok {
			t.Errorf("SafeName(%q) = %v, want %v", tc.in, got, tc.ok)
		}
	}
}

func FuzzResolveWithin(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.Symlink(outside, filepath.Join(root, "a", "out"))
	os.Symlink("../..", filepath.Join(root, "a", "b", "up"))
	os.Symlink("/", filepath.Join(root, "rootlink"))
	for _, s := range []string{"a/b/c", "a/out/x", "a/b/up/etc", "rootlink/etc/passwd", "../x", "a/../../x", "./a"} {
		f.Add(s)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	f.Fuzz(func(t *testing.T, p string) {
		got, err := ResolveWithin(root, p)
		if err != nil {
			return
		}
		if got != realRoot && !strings.HasPrefix(got, realRoot+string(filepath.Separator)) {
			t.Fatalf("ResolveWithin(%q) = %q, outside %q", p, got, realRoot)
		}
	})
}

func TestSweepStale(t *testing.T) {
	parent := t.TempDir()
	mine, err := NewDisposable(parent, "live")
	if err != nil {
		t.Fatal(err)
	}
	// A dir whose owner is a process that has exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead, err := NewDisposable(parent, "crashed")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dead, ownerName), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	os.MkdirAll(filepath.Join(dead, "ro", "deep"), 0o755)
	os.Chmod(filepath.Join(dead, "ro"), 0o500)
	// A dir named like ours, owner dead, but without the marker.
	foreign := filepath.Join(parent, TempPrefix+"foreign")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, ownerName), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)

	removed := SweepStale(parent)
	if len(removed) != 1 || removed[0] != dead {
		t.Errorf("SweepStale removed %v, want only %s", removed, dead)
	}
	for _, keep := range []string{mine, foreign} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}

func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteNew(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "x" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	// Never over an existing file, nor through a planted symbolic link.
	if err := WriteNew(p, []byte("y"), 0o600); err == nil {
		t.Error("WriteNew replaced an existing file")
	}
	target := filepath.Join(dir, "target")
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(filepath.Join(dir, "link"), []byte("z"), 0o600); err == nil {
		t.Error("WriteNew wrote through a symbolic link")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Error("the link's target was created")
	}
}

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegular(file, 5); err != nil || string(b) != "hello" {
		t.Errorf("regular file: %q, %v", b, err)
	}
	if _, err := ReadRegular(file, 4); !errors.Is(err, ErrNotRegular) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "nope"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := ReadRegular(dir, 5); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	// A FIFO with no writer: an error at once, never a wait.
	done := make(chan error, 1)
	go func() { _, err := ReadRegular(fifo, 5); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("fifo: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRegular blocked on a FIFO")
	}
}
