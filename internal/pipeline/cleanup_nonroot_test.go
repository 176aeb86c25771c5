package pipeline

// The run directory's cleanup as a non-root operator sees it: a test or an
// agent that left read-only (0500) or unreadable (0000) directories in its
// tree must not pin the tree. Root ignores directory permissions, so a test
// run as root shows nothing; CI runs as root, so there the test re-executes
// itself as uid/gid 65534 (nobody; no passwd entry is needed to setuid) and
// judges the child's verdict.

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const nonRootChildEnv = "FIXRAIL_CLEANUP_NONROOT_CHILD"

// nonRootUID is who the root-run test becomes: nobody on Debian and most
// distributions.
const nonRootUID = 65534

func TestCleanupReadOnlyDirsNonRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		if os.Getenv(nonRootChildEnv) != "" {
			t.Fatal("the re-executed child still runs as root")
		}
		reexecNonRoot(t, "TestCleanupReadOnlyDirsNonRoot")
		return
	}

	// A tree this uid cannot remove without help: the control shows it,
	// so the test cannot pass for a reason that has nothing to do with
	// removeTree.
	control := filepath.Join(t.TempDir(), "control")
	pinned := pinnedTree(t, control)
	if err := os.RemoveAll(control); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("os.RemoveAll of a tree with 0500 directories, uid %d: %v; want a permission error (else this test shows nothing)", os.Geteuid(), err)
	}
	for _, d := range pinned {
		_ = os.Chmod(d, 0o700) // so that t.TempDir's own cleanup succeeds
	}

	// Outside the run directory, reached only through a symlink inside it:
	// cleanup must neither follow the link nor chmod what it points at.
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(outside, 0o700) })

	dir := filepath.Join(t.TempDir(), "fixrail-run")
	pinnedTree(t, dir)
	if err := os.Symlink(outside, filepath.Join(dir, "agent", "link")); err != nil {
		t.Fatal(err)
	}
	id, err := idOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := removeRecorded(dir, id); err != nil {
		t.Fatalf("removeRecorded as uid %d: %v", os.Geteuid(), err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the run directory is still there after cleanup: %v", err)
	}
	fi, err := os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o500 {
		t.Errorf("cleanup changed the mode of %s, reached through a symlink, to %o", outside, fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("cleanup followed the symlink out of the run directory: %v", err)
	}
}

// pinnedTree builds, at root, a run directory's shape with what a test can
// leave behind: a 0500 directory holding a file, 0500 inside 0500, and an
// unreadable 0000 directory with a file in it. It returns the directories
// it locked, deepest first.
func pinnedTree(t *testing.T, root string) []string {
	t.Helper()
	files := []string{
		"agent/wt/src/lib.txt",
		"red-1/tests/ro/fixture.txt",
		"red-1/deep/a/b/c.txt",
		"used-green-2/locked/secret.txt",
	}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	locks := []struct {
		dir  string
		mode fs.FileMode
	}{
		{"red-1/deep/a/b", 0o500},
		{"red-1/deep/a", 0o500},
		{"red-1/tests/ro", 0o500},
		{"used-green-2/locked", 0o000},
	}
	var out []string
	for _, l := range locks {
		p := filepath.Join(root, filepath.FromSlash(l.dir))
		if err := os.Chmod(p, l.mode); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// reexecNonRoot runs this test binary's test name as uid/gid nonRootUID
// and fails unless the child ran that test and it passed. The binary is
// copied to a directory that uid can reach (go test keeps it under a 0700
// directory), and the child's TMPDIR is a directory it owns.
func reexecNonRoot(t *testing.T, name string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp("", "fixrail-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	// MkdirTemp makes 0700; the child must traverse it, and every parent.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := filepath.Dir(base); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Fatalf("uid %d cannot traverse %s (mode %o): point TMPDIR elsewhere", nonRootUID, p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	bin := filepath.Join(base, "pipeline.test")
	copyExecutable(t, self, bin)
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, nonRootUID, nonRootUID); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "HOME=" + tmp, nonRootChildEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nonRootUID, Gid: nonRootUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as uid %d: %v\n%s", name, nonRootUID, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name+" ") {
		t.Fatalf("%s as uid %d did not report a pass:\n%s", name, nonRootUID, out)
	}
	t.Logf("ran as uid %d:\n%s", nonRootUID, out)
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
