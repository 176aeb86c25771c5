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
		{"tests/naïve_café.py", "tests/naïve_café.py", true},
		{"tests/日本/t.py", "tests/日本/t.py", true},
		{"tests/a b.py", "tests/a b.py", true},
		// Every class a terminal or a renderer acts on, and anything that
		// would not print as itself.
		{"tests/\x1b[2J.py", "", false},
		{"tests/a\tb.py", "", false},
		{"tests/a\nb.py", "", false},
		{"tests/a\x7fb.py", "", false},
		{"tests/\u009b2J.py", "", false},
		{"tests/a\u0085b.py", "", false},
		{"tests/test_\u202eyp.enon.py", "", false},
		{"tests/a\u202ab.py", "", false},
		{"tests/a\u2066b.py", "", false},
		{"tests/a\u2069b.py", "", false},
		{"tests/a\u200eb.py", "", false},
		{"tests/a\u200fb.py", "", false},
		{"tests/a\u061cb.py", "", false},
		{"tests/a\u200bb.py", "", false},
		{"tests/a\u200db.py", "", false},
		{"tests/a\u2060b.py", "", false},
		{"tests/\ufefft.py", "", false},
		{"tests/a\u3164b.py", "", false},
		{"tests/a\u00a0b.py", "", false},
		{"tests/a\u2028b.py", "", false},
		{"tests/a\U000e0041b.py", "", false},
		{"tests/a\xffb.py", "", false},
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

// asOperator runs the calling test again in a copy of this binary as an
// unprivileged user (uid 65534) when the test runs as root, who ignores
// permission bits: a directory left 0500 pins a tree only for the non-root
// operator fixrail is meant for. It returns true when the child ran the test
// (and passed), so the caller returns.
func asOperator(t *testing.T) bool {
	t.Helper()
	const env = "PATHGUARD_TEST_AS_OPERATOR"
	if os.Getuid() != 0 {
		return false
	}
	if os.Getenv(env) != "" {
		t.Fatal("the child still runs as root")
	}
	dir, err := os.MkdirTemp("", "pathguard-operator-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // as root
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pathguard.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1", "TMPDIR="+dir, "HOME="+dir, "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s as uid 65534: %v\n%s", t.Name(), err, out)
	}
	return true
}

// pinnedTree makes a tree that a plain recursive delete cannot empty as its
// non-root owner: a 0500 directory with a 0500 subdirectory, a 0000
// directory with a file, and a symbolic link to a read-only directory
// outside, whose content must survive.
func pinnedTree(t *testing.T, top, outside string) {
	t.Helper()
	for _, d := range []string{"pinned/sub", "zero"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"pinned/f", "pinned/sub/f", "zero/f"} {
		if err := os.WriteFile(filepath.Join(top, f), []byte("x"), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(top, "pinned", "out")); err != nil {
		t.Fatal(err)
	}
	for d, mode := range map[string]os.FileMode{"pinned/sub": 0o500, "pinned": 0o500, "zero": 0} {
		if err := os.Chmod(filepath.Join(top, d), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRemoveReadOnlyTree(t *testing.T) {
	if asOperator(t) {
		return
	}
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(outside, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(outside, 0o700) })

	// The control: as this user, a plain recursive delete is pinned.
	control := filepath.Join(base, "control")
	pinnedTree(t, control, outside)
	if err := os.RemoveAll(control); err == nil {
		t.Fatal("os.RemoveAll emptied a 0500 tree: not running as an unprivileged user")
	}
	t.Cleanup(func() { RemoveWithin(base, control) })

	d, err := NewDisposable(base, "test")
	if err != nil {
		t.Fatal(err)
	}
	pinnedTree(t, filepath.Join(d, "wt"), outside)
	if err := RemoveDisposable(d); err != nil {
		t.Fatalf("RemoveDisposable: %v", err)
	}
	if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is still there: %v", d, err)
	}

	// A disposable directory whose own mode a child set to 0000.
	d, err = NewDisposable(base, "test")
	if err != nil {
		t.Fatal(err)
	}
	pinnedTree(t, filepath.Join(d, "wt"), outside)
	os.Chmod(d, 0)
	if err := RemoveWithin(base, d); err != nil {
		t.Fatalf("RemoveWithin a 0000 directory: %v", err)
	}
	if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is still there: %v", d, err)
	}

	// Nothing outside was changed through the link.
	fi, err := os.Stat(outside)
	if err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("outside: %v %v, want it left 0500", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("outside lost its content: %v", err)
	}
}

func TestRemoveWithinRefuses(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(other, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
	}{
		{"the root itself", root},
		{"outside", other},
		{"a parent", filepath.Dir(root)},
		{"dot-dot", root + "/a/../../x"},
		{"relative", "a"},
		{"through a symbolic link", filepath.Join(root, "link", "x")},
		{"the symbolic link", filepath.Join(root, "link")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := RemoveWithin(root, tc.dir); err == nil {
				t.Fatalf("RemoveWithin(%s, %s) accepted", root, tc.dir)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(other, "x")); err != nil {
		t.Errorf("the link's target lost x: %v", err)
	}
	if err := RemoveWithin(root, filepath.Join(root, "missing")); err != nil {
		t.Errorf("a missing dir: %v", err)
	}
	if err := RemoveWithin(root, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a is still there: %v", err)
	}
}
