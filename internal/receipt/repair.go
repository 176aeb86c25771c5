package receipt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// KindRepair records that Repair moved a damaged tail of the log aside.
const KindRepair = "repair"

// ErrDamageSpans means the chain breaks before the last line: more than a
// crash would damage. Repair moves such a tail aside only when forced.
var ErrDamageSpans = errors.New("the chain breaks before the last line")

// A Repair is what Repair did. Line is 0 when the log was whole.
type Repair struct {
	Line    int64   `json:"line"`   // the first line moved aside
	Lines   int64   `json:"lines"`  // lines moved aside (a partial last line counts)
	Bytes   int64   `json:"bytes"`  // bytes moved aside
	Reason  string  `json:"reason"` // why the chain breaks at Line
	Aside   string  `json:"aside"`  // the file the bytes were moved to
	SHA256  string  `json:"sha256"` // of the bytes moved
	Receipt Receipt `json:"receipt"`
}

// Repair lets appends resume after a crash: a write cut short, or a last
// line the disk lost, leaves a tail that does not continue the chain, and
// Append refuses to extend it (it cannot know what the last receipt was).
// Repair moves everything from the first line that breaks the chain to the
// end of the log, byte for byte, into Path.damaged-<time> (nothing is
// deleted), truncates the log there and appends a fsync'd repair receipt
// naming the file and the hash of what it holds. A break before the last
// line is more than a crash damages — an edit, most likely — and is left
// for the owner to inspect (ErrDamageSpans) unless force is set.
// Checkpoint signatures are not checked: a bad signature is Verify's to
// report, not damage to cut.
func (l *Log) Repair(force bool, now time.Time) (Repair, error) {
	if _, err := os.Lstat(l.Path); errors.Is(err, fs.ErrNotExist) {
		return Repair{}, nil
	}
	f, err := l.open(syscall.LOCK_EX)
	if err != nil {
		return Repair{}, err
	}
	defer f.Close()

	var (
		rep      Repair
		hashes   []string
		off, cut int64 // cut: where the first broken line starts
	)
	err = eachLine(f, func(n int64, line []byte, complete bool) error {
		size := int64(len(line))
		if complete {
			size++
		}
		defer func() { off += size }()
		if rep.Line != 0 {
			rep.Lines++
			return nil
		}
		if _, why := chainCheck(n, line, complete, hashes); why != "" {
			rep.Line, rep.Lines, rep.Reason, cut = n, 1, why, off
			return nil
		}
		hashes = append(hashes, hashLine(line))
		return nil
	})
	if err != nil {
		return Repair{}, fmt.Errorf("repair receipts: %w", err)
	}
	if rep.Line == 0 {
		return Repair{}, nil
	}
	rep.Bytes = off - cut
	if rep.Lines > 1 && !force {
		return rep, fmt.Errorf("%w: line %d (%s) and the %d after it; a crash damages only the last line, so inspect the log (fixrail receipts verify) before moving them aside with --force",
			ErrDamageSpans, rep.Line, rep.Reason, rep.Lines-1)
	}

	tail := make([]byte, rep.Bytes)
	if _, err := f.ReadAt(tail, cut); err != nil && !errors.Is(err, io.EOF) {
		return Repair{}, fmt.Errorf("repair receipts: %w", err)
	}
	sum := sha256.Sum256(tail)
	rep.SHA256 = hex.EncodeToString(sum[:])
	rep.Aside = l.Path + ".damaged-" + now.UTC().Format("20060102T150405.000000000Z")
	if err := pathguard.WriteNew(rep.Aside, tail, 0o600); err != nil {
		return Repair{}, fmt.Errorf("repair receipts: keep the damaged tail: %w", err)
	}
	if err := f.Truncate(cut); err != nil {
		return Repair{}, fmt.Errorf("repair receipts: %w", err)
	}
	if err := f.Sync(); err != nil {
		return Repair{}, fmt.Errorf("repair receipts: fsync: %w", err)
	}
	rep.Receipt, err = appendLocked(f, Receipt{
		Kind: KindRepair, Time: now.UTC(),
		Reason: fmt.Sprintf("moved %d line(s) from line %d (%d bytes, sha256 %s) to %s: %s",
			rep.Lines, rep.Line, rep.Bytes, rep.SHA256, rep.Aside, rep.Reason),
	}, true)
	if err != nil {
		return Repair{}, fmt.Errorf("repair receipts: %w", err)
	}
	return rep, nil
}
