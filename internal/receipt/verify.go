package receipt

import (
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
)

// A Report is what Verify found.
type Report struct {
	Lines       int64            // lines that verified, up to the break if any
	Kinds       map[string]int64 // receipts per kind among them
	Checkpoints int64            // checkpoints whose signature verified
	Unchecked   int64            // checkpoints not checked because no Verifier was given
	Head        string           // hash of the last line that verified
	Break       *Break           // the first break in the chain; nil if there is none
}

// A Break is where the chain stops verifying. Line is 1-based.
type Break struct {
	Line   int64
	Reason string
}

func (b *Break) String() string { return fmt.Sprintf("line %d: %s", b.Line, b.Reason) }

// Verify walks the whole chain: every line must be a receipt of a known
// kind, numbered one more than the line before, whose Prev is the hash of
// the line before. A checkpoint must name an earlier line and that line's
// hash, and its signature must verify with k. When k is nil checkpoint
// signatures are counted as Unchecked, not verified.
//
// A broken chain is reported in Report.Break, not as an error; the error is
// for failing to read the log at all. A changed line shows up at the next
// line, whose Prev no longer matches; a deleted line shows up as a gap in
// Seq. Changes to the last line, and truncation of the tail, are invisible
// to the chain alone: compare Head with a checkpoint kept elsewhere.
func (l *Log) Verify(k Verifier) (Report, error) {
	rep := Report{Kinds: map[string]int64{}}
	f, err := l.open(syscall.LOCK_SH)
	if err != nil {
		return rep, err
	}
	defer f.Close()

	var hashes []string // hashes[i] is the hash of line i+1
	brk := func(n int64, format string, args ...any) error {
		rep.Break = &Break{Line: n, Reason: fmt.Sprintf(format, args...)}
		return errStop
	}
	err = eachLine(f, func(n int64, line []byte, complete bool) error {
		r, why := chainCheck(n, line, complete, hashes)
		if why != "" {
			return brk(n, "%s", why)
		}
		if c := r.Checkpoint; c != nil {
			if k == nil {
				rep.Unchecked++
			} else if err := k.VerifyCheckpoint(c.Message(), c.Signature, c.Kind); err != nil {
				return brk(n, "checkpoint signature: %v", err)
			} else {
				rep.Checkpoints++
			}
		}
		h := hashLine(line)
		hashes = append(hashes, h)
		rep.Lines, rep.Head = n, h
		rep.Kinds[r.Kind]++
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return rep, fmt.Errorf("verify receipts: %w", err)
	}
	return rep, nil
}

var errStop = errors.New("stop")

// chainCheck checks line n (complete: it ends in a newline) against the
// chain before it, hashes[i] being the hash of line i+1: a receipt of a
// known kind, numbered n, linked to line n-1, and a checkpoint naming an
// earlier line by its hash. Checkpoint signatures are the caller's. It
// returns the receipt, or why the chain breaks at this line.
func chainCheck(n int64, line []byte, complete bool, hashes []string) (Receipt, string) {
	var r Receipt
	if !complete {
		return r, "partial last line with no newline (a write was cut short)"
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Sprintf("not a receipt: %v", err)
	}
	if r.Seq != n {
		return r, fmt.Sprintf("seq is %d, want %d: a line was deleted, inserted or renumbered", r.Seq, n)
	}
	switch {
	case n == 1 && r.Prev != "":
		return r, "the first line has a prev hash; lines before it are missing"
	case n > 1 && r.Prev != hashes[n-2]:
		return r, fmt.Sprintf("prev does not match the hash of line %d: line %d was altered, or this line's prev was", n-1, n-1)
	}
	if !kinds[r.Kind] {
		return r, fmt.Sprintf("unknown kind %q", r.Kind)
	}
	if (r.Kind == KindCheckpoint) != (r.Checkpoint != nil) {
		return r, fmt.Sprintf("checkpoint field on a %q receipt", r.Kind)
	}
	if c := r.Checkpoint; c != nil {
		if c.Seq < 1 || c.Seq >= n {
			return r, fmt.Sprintf("checkpoint names line %d, which is not before it", c.Seq)
		}
		if c.Head != hashes[c.Seq-1] {
			return r, fmt.Sprintf("checkpoint head does not match the hash of line %d", c.Seq)
		}
	}
	return r, ""
}
