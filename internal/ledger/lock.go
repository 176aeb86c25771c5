// Package ledger holds the state that outlives one process: the budgets a
// run is admitted against, the runs in flight with their reservations, and
// how each run ended ([Ledger]: SQLite for one machine, Postgres for a
// fleet, one contract), plus the per-finding flock that is the local fast
// path of the in-flight check.
//
// The flock is flock(2) on .fixrail/locks/<id>.lock, so a crashed run
// releases it when the kernel closes its files. It stays consistent with
// the ledger by ordering: TryLock, then Reserve (which checks the finding
// again, across machines), then the run, then Settle, then Release. The
// flock alone never admits a run; the ledger alone suffices, the flock only
// answers a local double start without a transaction.
package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrHeld means another live process holds the lock.
var ErrHeld = errors.New("lock is held by another run")

// Lock is a held per-finding lock.
type Lock struct {
	f    *os.File
	path string
}

// maxLockAttempts bounds TryLock's retries when the file it locked was
// removed (pruned by the run that held it) between its open and its flock.
const maxLockAttempts = 8

// TryLock takes the lock named name in dir without waiting. name must already
// be a safe file name (the caller validated the finding id).
//
// Lock files are pruned: a finished run removes its own while it still
// holds it (Remove). A process that opened the file before that removal
// would then hold a flock on an unlinked inode while a third process
// creates and locks a fresh file at the same name; so after its flock
// TryLock checks that the name still leads to the inode it locked, and
// starts again when it does not.
func TryLock(dir, name string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock dir: %w", err)
	}
	path := filepath.Join(dir, name+".lock")
	for range maxLockAttempts {
		l, err := tryLockOnce(path)
		if err == nil || !errors.Is(err, errLockPruned) {
			return l, err
		}
	}
	return nil, fmt.Errorf("open lock: %s was removed under %d attempts to lock it", path, maxLockAttempts)
}

// betweenOpenAndFlock lets a test interleave a prune with a lock attempt.
var betweenOpenAndFlock func(path string)

// errLockPruned: the file locked is no longer the one at the name.
var errLockPruned = errors.New("lock file was pruned")

func tryLockOnce(path string) (*Lock, error) {
	// The state directory is the repository's: a lock planted as a
	// symlink must not make fixrail create or open a file elsewhere, and
	// a FIFO must not hang the open.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is a %s, not a regular file", f.Name(), fi.Mode().Type())
		}
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if betweenOpenAndFlock != nil {
		betweenOpenAndFlock(path)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, fmt.Errorf("flock: %w", err)
	}
	if now, err := os.Lstat(path); err != nil || !os.SameFile(fi, now) {
		f.Close()
		return nil, errLockPruned
	}
	return &Lock{f: f, path: path}, nil
}

// Release drops the lock and leaves the file, for a holder that may run
// again soon (the file is reused).
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Remove deletes the lock file while the lock is still held, then drops
// the lock: how a finished finding's lock is pruned, so the locks
// directory does not grow a file per finding forever. A process that
// opened the file before the removal finds, after its flock, that the name
// no longer leads to it, and starts over (TryLock).
func (l *Lock) Remove() error {
	if l == nil || l.f == nil {
		return nil
	}
	rmErr := os.Remove(l.path)
	if errors.Is(rmErr, os.ErrNotExist) {
		rmErr = nil
	}
	return errors.Join(rmErr, l.Release())
}
