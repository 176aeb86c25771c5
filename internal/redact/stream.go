package redact

import (
	"errors"
	"io"
	"unicode/utf8"
)

// Streaming: DetectReader scans an input of any length in overlapping
// windows, holding at most one window in memory. Window i covers
// [a_i, b_i) of the stream and the next starts streamOverlap before its end,
// a_{i+1} = b_i - overlap. Window i reports only the findings that start in
// [a_i + streamContext, a_{i+1} + streamContext) (the first from 0, the last
// to the end): each start is reported by exactly one window, which sees at
// least streamContext bytes before it (the look-back of every rule: a key
// before its value, a scheme before its userinfo, a word before a card) and,
// for a span up to overlap - streamContext long, its whole extent. The
// longest span a rule reads is a PEM block (maxPEMBody), so overlap covers
// it. Findings of neighbouring windows that overlap are merged.
const (
	streamWindow  = 1 << 20
	streamContext = 1 << 10
	streamOverlap = maxPEMBody + 4*streamContext
)

// DetectReader scans all of r and calls emit with each finding, in order
// of Start, offsets into the whole stream; nothing is withheld whatever
// the length. Memory is bounded by one window (about 1 MiB), not by the
// input. A read error, an exhausted budget or emit's error stops the scan
// and is returned; the caller must then treat the input as leaking, as
// after Detect's error. Each window is charged to the engine's Budget as a
// Detect call of that size would be.
func (e *Engine) DetectReader(r io.Reader, emit func(Finding) error) error {
	overlap := streamOverlap
	if e.exact != nil {
		// A known value (or one of its encodings) must fit the overlap to
		// be seen whole across a window edge.
		overlap = max(overlap, e.exact.maxLen+2*streamContext)
	}
	return e.detectStream(r, emit, max(streamWindow, 4*overlap), overlap, streamContext)
}

// detectStream is DetectReader with its window, overlap and context as
// parameters (tests use small ones); window > overlap > context.
func (e *Engine) detectStream(r io.Reader, emit func(Finding) error, window, overlap, context int) error {
	buf := make([]byte, 0, window)
	base := 0 // stream offset of buf[0]
	own := 0  // stream offset from which the current window reports
	var (
		pending Finding
		held    bool
	)
	put := func(f Finding) error {
		if held && f.Start < pending.End {
			merged := mergeFindings([]Finding{pending, f})
			if len(merged) == 1 {
				pending = merged[0]
				return nil
			}
		}
		if held {
			if err := emit(pending); err != nil {
				return err
			}
		}
		pending, held = f, true
		return nil
	}
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		end := len(buf)
		next := 0
		if !eof {
			// Neither the scanned text nor the next window may start
			// inside a rune.
			end = runeStartBefore(buf, end)
			next = runeStartBefore(buf, end-overlap)
		}
		fs, err := e.scan(string(buf[:end]), e.callBudget(end), true)
		if err != nil {
			return err
		}
		limit := -1 // no upper bound: the last window reports the rest
		if !eof {
			limit = base + next + context
		}
		for _, f := range fs {
			f.Start += base
			f.End += base
			if f.Start < own || limit >= 0 && f.Start >= limit {
				continue
			}
			if err := put(f); err != nil {
				return err
			}
		}
		if eof {
			if held {
				return emit(pending)
			}
			return nil
		}
		own = limit
		buf = buf[:copy(buf, buf[next:])]
		base += next
	}
}

// runeStartBefore moves i back to the start of a rune (at most three
// bytes), so a window edge never splits one.
func runeStartBefore(b []byte, i int) int {
	for k := 0; k < utf8.UTFMax-1 && i > 0 && i < len(b) && !utf8.RuneStart(b[i]); k++ {
		i--
	}
	return i
}
