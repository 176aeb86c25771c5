package events

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/untrusted"
)

// Live is the console on a terminal: the same lines as on any console,
// with a status line under them that keeps the current phase's elapsed time
// ticking, so that a runner thinking for minutes is visibly alive. Use it as
// Open's console. Everything written through it (event lines, a prompt)
// first clears the status line; after a partial line — a question waiting
// for an answer — the status stays off until the next event.
type Live struct {
	mu    sync.Mutex
	w     io.Writer
	now   func() time.Time
	start time.Time // the run's
	phase string    // the phase under way; "" between phases
	since time.Time // when it started
	shown bool      // the status line is on screen
	held  bool      // a partial line is on screen
	frame int
	stop  chan struct{}
	done  chan struct{}
}

// spinner frames: ASCII, so any terminal shows them.
const spinner = `-\|/`

// NewLive starts a live console on w (a terminal) that redraws its status
// line every tick. Close it before writing anything else to w.
func NewLive(w io.Writer, tick time.Duration) *Live {
	l := newLive(w, time.Now)
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.tick()
			}
		}
	}()
	return l
}

func newLive(w io.Writer, now func() time.Time) *Live {
	return &Live{w: w, now: now, start: now(), stop: make(chan struct{})}
}

// tick advances the spinner and redraws the status line.
func (l *Live) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frame++
	l.draw()
}

// Write clears the status line, writes p (escaped: Live writes to the
// terminal itself, so the controls it sends are only its own) and draws the
// status again, unless p ends inside a line.
func (l *Live) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	_, err := io.WriteString(l.w, untrusted.Printable(string(p)))
	l.held = len(p) > 0 && p[len(p)-1] != '\n'
	l.draw()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Observe follows the run's phases; Log calls it for every event before
// writing the event's line.
func (l *Live) Observe(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.Type {
	case "phase-start":
		l.phase, l.since = e.Phase, l.now()
	case "phase-end", "terminal":
		l.phase = ""
	}
	l.held = false
}

// Close stops the ticking and removes the status line.
func (l *Live) Close() error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	if l.done != nil {
		<-l.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.phase = ""
	return nil
}

// clearLine returns the cursor to the line's start and erases the line.
const clearLine = "\r\x1b[K"

func (l *Live) clear() {
	if l.shown {
		io.WriteString(l.w, clearLine)
		l.shown = false
	}
}

// draw shows the status line for the phase under way, if there is one and
// no prompt is waiting.
func (l *Live) draw() {
	if l.phase == "" || l.held {
		return
	}
	now := l.now()
	fmt.Fprintf(l.w, "%s%c %s  %s  (run %s)", clearLine, spinner[l.frame%len(spinner)], l.phase, clock(now.Sub(l.since)), clock(now.Sub(l.start)))
	l.shown = true
}

// clock renders d as m:ss, or h:mm:ss past an hour.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
