package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

// watchOpens reports, through the returned func, whether anything opened
// or read path since the call: inotify sees every open, root's included,
// so a refusal that claims "before a byte was read" can be checked.
func watchOpens(t *testing.T, path string) func() bool {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify (the read check needs it; Linux has it): %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_ACCESS); err != nil {
		t.Fatal(err)
	}
	return func() bool {
		buf := make([]byte, 4096)
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EAGAIN) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
}

// sparse makes a file of size bytes with nothing on disk.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestLstatReadsNothing: Lstat learns a file's kind and size without
// opening it (inotify sees no open), so a caller can refuse an oversize
// file before a byte of it is read; ReadEntry, which does read, is seen.
func TestLstatReadsNothing(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big.bin")
	sparse(t, big, 9<<20)
	if err := os.Chmod(big, 0o755); err != nil {
		t.Fatal(err)
	}
	opened := watchOpens(t, big)
	info, err := Lstat(root, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if info != (Info{Path: "big.bin", Mode: "100755", Size: 9 << 20}) {
		t.Errorf("Lstat = %+v", info)
	}
	if opened() {
		t.Fatal("Lstat opened the file")
	}
	// The watch works: a read is seen.
	if _, err := ReadEntry(root, "big.bin", 16<<20); err != nil {
		t.Fatal(err)
	}
	if !opened() {
		t.Fatal("ReadEntry's open was not seen: the watch proves nothing")
	}
	// Over the limit, ReadEntry too refuses from lstat, before opening.
	if _, err := ReadEntry(root, "big.bin", 8<<20); !errors.Is(err, ErrFileType) {
		t.Fatalf("oversize ReadEntry: err = %v, want ErrFileType", err)
	}
	if opened() {
		t.Fatal("ReadEntry opened a file lstat already showed over the limit")
	}
}

// TestLstatKinds: every kind Lstat tells apart, none of them opened.
func TestLstatKinds(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{"d/f.txt": "12345", "file": "x"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/f.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(root, "ld")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want Info
		err  error
	}{
		{"d/f.txt", Info{Path: "d/f.txt", Mode: "100644", Size: 5}, nil},
		{"d", Info{Path: "d", Dir: true}, nil},
		{"gone", Info{Path: "gone"}, nil},
		{"gone/x", Info{Path: "gone/x"}, nil},
		{"file/x", Info{Path: "file/x"}, nil},
		{"link", Info{Path: "link", Mode: "120000", Size: 7}, nil},
		{"fifo", Info{}, ErrFileType},
		{"ld/f.txt", Info{}, ErrFileType},
	} {
		got, err := Lstat(root, tc.path)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("Lstat(%s) = %+v, %v; want %+v, %v", tc.path, got, err, tc.want, tc.err)
		}
	}
}

// TestReadAtMost: a file is read to its end within the limit, exactly at
// it too; one byte over is refused, and so is a file that grew past the
// limit after its size was taken.
func TestReadAtMost(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "f")
	for _, tc := range []struct {
		name       string
		size, stat int64 // bytes in the file, size as fstat said
		limit      int64
		wantErr    bool
	}{
		{"empty", 0, 0, 10, false},
		{"under", 5, 5, 10, false},
		{"at the limit", 10, 10, 10, false},
		{"one over", 11, 11, 10, true},
		{"grew after fstat", 11, 3, 10, true},
		{"shrank after fstat", 3, 10, 10, false},
	} {
		if err := os.WriteFile(p, []byte(strings.Repeat("x", int(tc.size))), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := readAtMost(f, tc.stat, tc.limit)
		f.Close()
		if tc.wantErr {
			if !errors.Is(err, ErrFileType) {
				t.Errorf("%s: err = %v, want ErrFileType", tc.name, err)
			}
			continue
		}
		if err != nil || int64(len(data)) != tc.size {
			t.Errorf("%s: %d bytes, %v; want %d", tc.name, len(data), err, tc.size)
		}
	}
}

// TestOutputLimit: a git call with a limit is ErrOutputLimit past it, and
// the call under it returns everything; stderr is kept to its bound
// whatever git writes.
func TestOutputLimit(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": strings.Repeat("a\n", 100), "big.txt": strings.Repeat("b", 4<<20)})
	r := baselined(t, dir)
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "-p", "HEAD:a.txt"}, limit: 200})
	if err != nil || len(out) != 200 {
		t.Fatalf("at the limit: %d bytes, %v", len(out), err)
	}
	if _, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "-p", "HEAD:a.txt"}, limit: 199}); !errors.Is(err, ErrOutputLimit) {
		t.Fatalf("over the limit: err = %v, want ErrOutputLimit", err)
	}
	// Far over: git is stopped by the closed pipe, and the error still
	// says why, not that git failed.
	if _, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "-p", "HEAD:big.txt"}, limit: 4096}); !errors.Is(err, ErrOutputLimit) {
		t.Fatalf("far over the limit: err = %v, want ErrOutputLimit", err)
	}
	var ge *Error
	// ls-files names every unmatched pathspec on stderr: 300 KB of it.
	args := []string{"ls-files", "--error-unmatch", "--"}
	for i := range 300 {
		args = append(args, fmt.Sprintf("%04d%s", i, strings.Repeat("n", 1000)))
	}
	_, err = r.run(ctx, invocation{dir: r.top, args: args})
	if !errors.As(err, &ge) {
		t.Fatalf("a long stderr: err = %v, want an *Error", err)
	}
	if len(ge.Stderr) > maxStderr {
		t.Fatalf("a long stderr: %d bytes kept, bound %d", len(ge.Stderr), maxStderr)
	}
}
