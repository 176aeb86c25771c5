package events

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLive: event lines go out whole, each followed by a status line for
// the phase under way that ticks its elapsed time; a prompt (a partial
// line) keeps the status off until the next event; Close erases it.
func TestLive(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	l := newLive(&out, func() time.Time { return now })
	log, err := Open(filepath.Join(t.TempDir(), "events.ndjson"), "r1", l, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	step := func(want string, f func()) {
		t.Helper()
		out.Reset()
		f()
		if got := out.String(); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
	step("fixrail: run-start\n", func() { log.Emit(Event{Type: "run-start"}) })
	step("fixrail: P2 investigate: start\n\r\x1b[K- P2 investigate  0:00  (run 0:00)", func() {
		log.Emit(Event{Type: "phase-start", Phase: "P2 investigate"})
	})
	now = now.Add(75 * time.Second)
	step("\r\x1b[K\\ P2 investigate  1:15  (run 1:15)", l.tick)
	step("\r\x1b[Kfixrail: P2 investigate: note x\n\r\x1b[K\\ P2 investigate  1:15  (run 1:15)", func() {
		log.Emit(Event{Type: "note", Phase: "P2 investigate", Name: "x"})
	})
	step("\r\x1b[Kfixrail: P2 investigate: done\n", func() { log.Emit(Event{Type: "phase-end", Phase: "P2 investigate"}) })
	step("", l.tick) // between phases: no status line

	// A prompt in P5: the status line gives way and stays away while the
	// question waits for its answer.
	log.Emit(Event{Type: "phase-start", Phase: "P5 terminal"})
	now = now.Add(2 * time.Hour)
	step("\r\x1b[KOpen the draft PR? [y/N] ", func() { l.Write([]byte("Open the draft PR? [y/N] ")) })
	step("", l.tick)
	// What is written through Live is escaped; only its own controls go raw.
	step("\\u001b]0;x\\u0007\\u202e? ", func() { l.Write([]byte("\x1b]0;x\x07\u202e? ")) })
	step("fixrail: P5 terminal: done\n", func() { log.Emit(Event{Type: "phase-end", Phase: "P5 terminal"}) })

	log.Emit(Event{Type: "phase-start", Phase: "P1 intake"})
	step("\r\x1b[K", func() { l.Close() })
	step("", l.tick)
}

func TestLiveTicks(t *testing.T) {
	var out syncBuffer
	l := NewLive(&out, time.Millisecond)
	l.Observe(Event{Type: "phase-start", Phase: "P4 fix"})
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "P4 fix") < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	l.Close()
	if n := strings.Count(out.String(), "P4 fix"); n < 3 {
		t.Errorf("status drawn %d times, want the ticker to redraw it", n)
	}
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("Close left the status line on screen: %q", out.String())
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 1499 * time.Millisecond: "0:01", 59 * time.Second: "0:59", 61 * time.Second: "1:01",
		3599 * time.Second: "59:59", 3600 * time.Second: "1:00:00", 3723 * time.Second: "1:02:03", -time.Second: "0:00",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the ticker goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
