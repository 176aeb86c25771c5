package receipt

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ErrTornTail means the log does not end with a newline: a write was cut
// short (a crash or a full disk). Append refuses to extend such a log, since
// it cannot tell what the last receipt was; `fixrail receipts verify` shows
// the damaged line.
var ErrTornTail = errors.New("receipt log ends in a partial line")

// ErrNeedsRepair marks an append that failed on a damaged end of the log;
// Repair (`fixrail receipts repair`) lets appends resume.
var ErrNeedsRepair = errors.New("after a crash, `fixrail receipts repair` moves the damaged end aside")

// ErrLocked means the log stayed locked by another process for LockWait.
var ErrLocked = errors.New("the receipt log is locked by another process")

// DefaultLockWait is how long Log waits for the file lock when LockWait is
// zero. An append holds it for about a millisecond; a holder that keeps it
// longer is stuck or hostile (an agent can flock the file), and a hook that
// waited for it would hit the agent CLI's hook timeout, which lets the call
// run. So the wait is bounded well inside that timeout, and the hook's
// posture decides what a receipt it could not write means.
const DefaultLockWait = 5 * time.Second

// A Log is the receipt log at Path. The zero value is not usable; the file
// and its directory are created on the first Append (0600 and 0700).
type Log struct {
	Path string
	// LockWait bounds the wait for the file lock; DefaultLockWait when zero.
	LockWait time.Duration
}

// hashLine is the chain hash of one line, given without its newline.
func hashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// open opens the log and takes a flock of the given type (LOCK_EX to append,
// LOCK_SH to read). Closing the file releases the lock.
func (l *Log) open(how int) (*os.File, error) {
	var f *os.File
	var err error
	if how == syscall.LOCK_EX {
		if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
			return nil, fmt.Errorf("receipt log: %w", err)
		}
		f, err = openBlocking(l.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	} else {
		f, err = os.OpenFile(l.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block the open
	}
	if err != nil {
		return nil, fmt.Errorf("receipt log: %w", err)
	}
	// A FIFO or device planted in the log's place would block a write (or
	// a read) until the agent CLI's hook timeout, which lets the call run.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("receipt log %s: not a regular file", l.Path)
	}
	if err := l.lock(f, how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lock takes the flock without blocking, retrying with a growing pause
// until LockWait has passed.
func (l *Log) lock(f *os.File, how int) error {
	wait := l.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == syscall.EINTR:
			continue
		case err != syscall.EWOULDBLOCK:
			return fmt.Errorf("receipt log: flock: %w", err)
		case !time.Now().Before(deadline):
			return fmt.Errorf("receipt log %s: %w for %v", l.Path, ErrLocked, wait)
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Append adds r to the log and returns it as written, with Seq, Prev and
// (when r.Time is zero) Time filled in. The caller's Seq and Prev are
// ignored. The line is on disk (fsync) when Append returns, and so is every
// line before it.
func (l *Log) Append(r Receipt) (Receipt, error) { return l.append(r, true) }

// AppendUnsynced is Append without the fsync: the line is in the log for
// every reader at once but reaches the disk with the next Append (an fsync
// flushes the whole file) or the kernel's writeback, so a power loss can
// drop it. The chain stays whole either way, since lines reach the disk in
// order. It is for receipts whose loss hides nothing a rule flagged; the
// fsync is most of an append's cost.
func (l *Log) AppendUnsynced(r Receipt) (Receipt, error) { return l.append(r, false) }

func (l *Log) append(r Receipt, sync bool) (Receipt, error) {
	if !kinds[r.Kind] {
		return Receipt{}, fmt.Errorf("append receipt: unknown kind %q", r.Kind)
	}
	if (r.Kind == KindCheckpoint) != (r.Checkpoint != nil) {
		return Receipt{}, fmt.Errorf("append receipt: a checkpoint field belongs on, and only on, a %s receipt", KindCheckpoint)
	}
	f, err := l.open(syscall.LOCK_EX)
	if err != nil {
		return Receipt{}, err
	}
	defer f.Close()
	return appendLocked(f, r, sync)
}

// appendLocked appends r to f, which the caller holds LOCK_EX on.
func appendLocked(f *os.File, r Receipt, sync bool) (Receipt, error) {
	fi, err := f.Stat()
	if err != nil {
		return Receipt{}, fmt.Errorf("append receipt: %w", err)
	}
	last, err := lastLine(f, fi.Size())
	if errors.Is(err, ErrTornTail) {
		return Receipt{}, fmt.Errorf("append receipt: %w (%w)", err, ErrNeedsRepair)
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("append receipt: %w", err)
	}
	r.Seq, r.Prev = 1, ""
	if last != nil {
		seq, err := seqOf(last)
		if err != nil {
			return Receipt{}, fmt.Errorf("append receipt: last line is not a receipt: %w (%w)", err, ErrNeedsRepair)
		}
		r.Seq, r.Prev = seq+1, hashLine(last)
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	// Newlines in strings are escaped and RawMessage fields compacted, so
	// the receipt is one line.
	line, err := marshalLine(r)
	if err != nil {
		return Receipt{}, fmt.Errorf("append receipt: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		// Cut off whatever part was written, so the log stays whole.
		return Receipt{}, errors.Join(fmt.Errorf("append receipt: %w", err), f.Truncate(fi.Size()))
	}
	if sync {
		if err := f.Sync(); err != nil {
			return Receipt{}, fmt.Errorf("append receipt: fsync: %w", err)
		}
	}
	return r, nil
}

// seqOf reads the seq of a receipt line. Lines written by Append start with
// it ({"seq":N,...}), so a valid JSON line in that form is read without
// decoding it (reflection's first use is a good part of a hook's cost);
// anything else is decoded.
func seqOf(line []byte) (int64, error) {
	const prefix = `{"seq":`
	if rest, ok := bytes.CutPrefix(line, []byte(prefix)); ok && json.Valid(line) {
		if i := bytes.IndexByte(rest, ','); i > 0 && i <= 19 {
			if n, err := strconv.ParseInt(string(rest[:i]), 10, 64); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	var r struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return 0, err
	}
	return r.Seq, nil
}

// lastLine returns the last line of f (size bytes long) without its
// newline, or nil for an empty file.
func lastLine(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return nil, err
	}
	if b[0] != '\n' {
		return nil, ErrTornTail
	}
	// Most receipts fit the first, small read; a long one is read in
	// larger chunks.
	chunk := int64(4 << 10)
	end := size - 1 // the final newline
	var tail []byte
	for pos := end; pos > 0; chunk = 64 << 10 {
		n := min(chunk, pos)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos-n); err != nil {
			return nil, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return append(buf[i+1:], tail...), nil
		}
		tail = append(buf, tail...)
		pos -= n
	}
	return tail, nil
}

// Head returns the seq and hash of the last line; 0 and "" for an empty or
// missing log.
func (l *Log) Head() (seq int64, head string, err error) {
	f, err := l.open(syscall.LOCK_SH)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, "", fmt.Errorf("receipt log head: %w", err)
	}
	last, err := lastLine(f, fi.Size())
	if err != nil || last == nil {
		return 0, "", err
	}
	seq, err = seqOf(last)
	if err != nil {
		return 0, "", fmt.Errorf("receipt log head: %w", err)
	}
	return seq, hashLine(last), nil
}

// Checkpoint signs the current head with s and appends the checkpoint
// receipt. Signing happens outside the lock (it may wait for a key touch),
// so other receipts may land in between; the checkpoint names the line it
// covers by Seq, and Verify checks it against that line.
func (l *Log) Checkpoint(s Signer) (Receipt, error) {
	seq, head, err := l.Head()
	if err != nil {
		return Receipt{}, err
	}
	if seq == 0 {
		return Receipt{}, errors.New("checkpoint: the receipt log is empty")
	}
	c := &Checkpoint{Head: head, Seq: seq}
	if c.Signature, c.Kind, err = s.SignCheckpoint(c.Message()); err != nil {
		return Receipt{}, fmt.Errorf("checkpoint: %w", err)
	}
	return l.Append(Receipt{Kind: KindCheckpoint, Checkpoint: c})
}

// Read returns every receipt in the log, in order. It does not check the
// chain; Verify does.
func (l *Log) Read() ([]Receipt, error) {
	f, err := l.open(syscall.LOCK_SH)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Receipt
	err = eachLine(f, func(n int64, line []byte, complete bool) error {
		if !complete {
			return fmt.Errorf("line %d: %w", n, ErrTornTail)
		}
		var r Receipt
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read receipts: %w", err)
	}
	return out, nil
}

// eachLine calls fn for each line (1-based n, without the newline); complete
// is false for a final line with no newline.
func eachLine(r io.Reader, fn func(n int64, line []byte, complete bool) error) error {
	br := bufio.NewReader(r)
	for n := int64(1); ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			if complete {
				line = line[:len(line)-1]
			}
			if ferr := fn(n, line, complete); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// openBlocking opens a file the way os.OpenFile does, minus the runtime's
// poller: os.NewFile of a blocking descriptor is not registered with
// epoll, which os.OpenFile does for every regular file on first use (an
// epoll instance, an eventfd and two epoll_ctl calls, a tenth of the
// hook's own system calls). The log is read and written with plain
// blocking calls either way.
func openBlocking(path string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, perm)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
