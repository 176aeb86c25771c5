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

// TestLockRemovePrunes: a finished finding's lock file is removed while
// held, and the next TryLock makes a fresh one.
func TestLockRemovePrunes(t *testing.T) {
	dir := t.TempDir()
	l, err := TryLock(dir, "gh-7")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "gh-7.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file still there after Remove: %v", err)
	}
	again, err := TryLock(dir, "gh-7")
	if err != nil {
		t.Fatalf("lock after prune: %v", err)
	}
	defer again.Release()
	if _, err := TryLock(dir, "gh-7"); !errors.Is(err, ErrHeld) {
		t.Fatalf("the fresh lock does not exclude: %v", err)
	}
}

// TestTryLockAfterPruneRace: a holder prunes the file between another
// process's open and its flock. That process must not end up holding a
// flock on the unlinked inode (a third process would then lock a fresh
// file at the same name and both would run): it starts over, and the lock
// it returns is on the file the name leads to.
func TestTryLockAfterPruneRace(t *testing.T) {
	dir := t.TempDir()
	pruned := 0
	betweenOpenAndFlock = func(path string) {
		if pruned == 0 {
			pruned++
			if err := os.Remove(path); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { betweenOpenAndFlock = nil }()
	l, err := TryLock(dir, "gh-7")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	held, err := l.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	now, err := os.Lstat(filepath.Join(dir, "gh-7.lock"))
	if err != nil || !os.SameFile(held, now) {
		t.Fatalf("the lock is held on a file the name no longer leads to (%v)", err)
	}
	if _, err := TryLock(dir, "gh-7"); !errors.Is(err, ErrHeld) {
		t.Fatalf("a second locker was not excluded: %v", err)
	}
}
