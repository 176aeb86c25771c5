package events

import (
	"io"
	"sync"
	"time"
)

// DefaultHeartbeat is how often a plain console hears from a step that is
// still running.
const DefaultHeartbeat = 30 * time.Second

// Plain is the console off a terminal — a pipe, a CI log: the event lines
// as they come and, while a step (an agent invocation, a test, the suite,
// a checkout) runs longer than the interval, a line every interval naming
// it and its elapsed time, so a log that would otherwise stay silent for
// minutes shows the run alive. A terminal has Live instead, whose status
// line ticks. Use it as Open's console.
type Plain struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time // when a step starts; each tick brings its own time
	// ticker starts the heartbeat's clock; a test drives it by hand.
	ticker func(time.Duration) (<-chan time.Time, func())
}

// NewPlain is a plain console on w with a heartbeat every interval; an
// interval of 0 or less writes none.
func NewPlain(w io.Writer, every time.Duration) *Plain {
	return &Plain{w: w, every: every, now: time.Now, ticker: func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	}}
}

// Write writes p as it is.
func (p *Plain) Write(b []byte) (int, error) { return p.w.Write(b) }

// Step marks the start of a step that may run long and returns the
// function that ends it. On a Plain console with a heartbeat, a line
// "<step> still running after m:ss" follows every interval until then,
// through the same redaction and rendering as every event line. The event
// log records nothing of it: the events around a step already carry its
// times, and a line every 30 seconds would only pad the log. On any other
// console (a terminal's Live, a test's buffer, none) Step does nothing.
func (l *Log) Step(name string) (end func()) {
	p, ok := l.console.(*Plain)
	if !ok || p.every <= 0 {
		return func() {}
	}
	l.mu.Lock()
	phase := l.phase
	l.mu.Unlock()
	start := p.now()
	ticks, stopTicker := p.ticker(p.every)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer stopTicker()
		for {
			select {
			case <-stop:
				return
			case t := <-ticks:
				l.echo(Event{Type: "heartbeat", Phase: phase, Name: name, Verdict: clock(t.Sub(start))})
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
		})
	}
}

// echo writes e's console line only, after the redaction every event
// passes.
func (l *Log) echo(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scrubFields(&e)
	l.writeConsole(e)
}
