package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestTryLock(t *testing.T) {
	dir := t.TempDir()
	a, err := TryLock(dir, "42")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(dir, "42"); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock on the same id: got %v, want ErrHeld", err)
	}
	other, err := TryLock(dir, "43")
	if err != nil {
		t.Fatalf("lock on another id: %v", err)
	}
	defer other.Release()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	b, err := TryLock(dir, "42")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	b.Release()
}

// A lock file planted as a symlink, a FIFO or a directory is refused: the
// open neither follows the link (creating or opening a file outside the
// state directory) nor hangs.
func TestTryLockPlanted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, lock, outside string)
	}{
		{"dangling symlink", func(t *testing.T, lock, outside string) {
			if err := os.Symlink(outside, lock); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to a file", func(t *testing.T, lock, outside string) {
			if err := os.WriteFile(outside, []byte("keep\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, lock); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, lock, _ string) {
			if err := syscall.Mkfifo(lock, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, lock, _ string) {
			if err := os.Mkdir(lock, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, other := t.TempDir(), t.TempDir()
			outside := filepath.Join(other, "target")
			tc.plant(t, filepath.Join(dir, "gh-7.lock"), outside)
			before, _ := os.ReadFile(outside)
			l, err := TryLock(dir, "gh-7")
			if err == nil {
				l.Release()
				t.Fatal("TryLock took a planted lock file")
			}
			after, statErr := os.ReadFile(outside)
			if string(before) != string(after) || (before == nil && statErr == nil) {
				t.Errorf("the target outside the state directory changed: %q → %q (%v)", before, after, statErr)
			}
		})
	}
}
