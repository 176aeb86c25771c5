package events

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeTicker is a heartbeat clock the test drives: it records the interval
// asked for and whether the ticker was stopped.
type fakeTicker struct {
	c       chan time.Time
	every   time.Duration
	started int
	stopped int
}

func (f *fakeTicker) start(d time.Duration) (<-chan time.Time, func()) {
	f.every = d
	f.started++
	return f.c, func() { f.stopped++ }
}

// TestHeartbeat: on a plain console, a step still running says so at every
// tick — its phase, its name after the chokepoint, its elapsed time — and
// stops saying so when it ends; the event log gets none of it.
func TestHeartbeat(t *testing.T) {
	start := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	tick := &fakeTicker{c: make(chan time.Time)}
	var out bytes.Buffer
	p := &Plain{w: &out, every: 30 * time.Second, now: func() time.Time { return start }, ticker: tick.start}
	path := filepath.Join(t.TempDir(), "events.ndjson")
	scrub := func(s string) (string, bool) {
		return strings.ReplaceAll(s, "hunter2", "[REDACTED]"), strings.Contains(s, "hunter2")
	}
	log, err := Open(path, "r1", p, scrub)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()

	log.Emit(Event{Type: "phase-start", Phase: "P3 reproduce"})
	end := log.Step("`sh tests/hunter2.sh`")
	if tick.every != 30*time.Second {
		t.Errorf("ticker asked for %v, want the console's 30s", tick.every)
	}
	tick.c <- start.Add(30 * time.Second)
	tick.c <- start.Add(61 * time.Second)
	end()
	end() // ending twice is harmless
	select {
	case tick.c <- start.Add(90 * time.Second):
		t.Error("a tick after the step ended was taken")
	default:
	}
	if tick.stopped != 1 {
		t.Errorf("ticker stopped %d times, want 1", tick.stopped)
	}
	log.Emit(Event{Type: "phase-end", Phase: "P3 reproduce", Verdict: "done in 1m1s"})
	// Between phases a step has no phase to name.
	end = log.Step("checkout of 0123abcd")
	tick.c <- start.Add(45 * time.Second)
	end()

	want := "fixrail: P3 reproduce: start\n" +
		"fixrail: P3 reproduce: `sh tests/[REDACTED].sh` still running after 0:30\n" +
		"fixrail: P3 reproduce: `sh tests/[REDACTED].sh` still running after 1:01\n" +
		"fixrail: P3 reproduce: done in 1m1s\n" +
		"fixrail: checkout of 0123abcd still running after 0:45\n"
	if got := out.String(); got != want {
		t.Errorf("console:\n%s\nwant:\n%s", got, want)
	}
	if !log.Redacted() {
		t.Error("the chokepoint removed a secret from a heartbeat and the log does not say so")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 2 || strings.Contains(string(data), "heartbeat") || strings.Contains(string(data), "still running") {
		t.Errorf("the event log holds %d lines, want the 2 phase events and no heartbeat:\n%s", n, data)
	}
}

// TestHeartbeatOff: a terminal's Live console, any other writer, no
// console, or an interval of 0 start no heartbeat at all.
func TestHeartbeatOff(t *testing.T) {
	tick := &fakeTicker{c: make(chan time.Time)}
	for name, console := range map[string]func(*bytes.Buffer) io.Writer{
		"live":       func(b *bytes.Buffer) io.Writer { return newLive(b, time.Now) },
		"buffer":     func(b *bytes.Buffer) io.Writer { return b },
		"no console": func(*bytes.Buffer) io.Writer { return nil },
		"interval 0": func(b *bytes.Buffer) io.Writer { return &Plain{w: b, every: 0, now: time.Now, ticker: tick.start} },
		"interval <0": func(b *bytes.Buffer) io.Writer {
			return &Plain{w: b, every: -time.Second, now: time.Now, ticker: tick.start}
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			l, err := Open(filepath.Join(t.TempDir(), "events.ndjson"), "r1", console(&out), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			l.Step("the agent (fix)")()
			if strings.Contains(out.String(), "still running") {
				t.Errorf("wrote a heartbeat: %q", out.String())
			}
		})
	}
	if tick.started != 0 {
		t.Errorf("a heartbeat clock started %d times", tick.started)
	}
}

// TestHeartbeatTicks: NewPlain's own clock ticks.
func TestHeartbeatTicks(t *testing.T) {
	var out syncBuffer
	l, err := Open(filepath.Join(t.TempDir(), "events.ndjson"), "r1", NewPlain(&out, time.Millisecond), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	end := l.Step("the agent (investigate)")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "still running") < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	end()
	if n := strings.Count(out.String(), "fixrail: the agent (investigate) still running after 0:00\n"); n < 2 {
		t.Errorf("%d heartbeat lines, want the ticker to write them:\n%s", n, out.String())
	}
	after := out.String()
	time.Sleep(10 * time.Millisecond)
	if out.String() != after {
		t.Errorf("a heartbeat after the step ended: %q", strings.TrimPrefix(out.String(), after))
	}
}
