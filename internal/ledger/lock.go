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
	f *os.File
}

// TryLock takes the lock named name in dir without waiting. name must already
// be a safe file name (the caller validated the finding id).
func TryLock(dir, name string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock dir: %w", err)
	}
	// The state directory is the repository's: a lock planted as a
	// symlink must not make fixrail create or open a file elsewhere, and
	// a FIFO must not hang the open.
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is a %s, not a regular file", f.Name(), fi.Mode().Type())
		}
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, fmt.Errorf("flock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. The lock file stays: removing it would race a
// process that opened it and is about to lock it.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
