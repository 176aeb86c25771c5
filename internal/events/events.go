// Package events records every state transition of a run: one NDJSON line
// per event in the run's log, and a plain line on the console. Both go
// through Emit, the one place a later redaction pass plugs in.
package events

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/untrusted"
)

// Event is one state transition.
type Event struct {
	Time    time.Time `json:"time"`
	Run     string    `json:"run"`
	Type    string    `json:"type"` // run-start, phase-start, phase-end, gate, terminal, note, egress; heartbeat (console only); group (a grouping batch's publication, webhook only)
	Phase   string    `json:"phase,omitempty"`
	Name    string    `json:"name,omitempty"`
	Verdict string    `json:"verdict,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Detail  string    `json:"detail,omitempty"`
	// An egress event's request: the host:port the agent asked for and
	// the bytes each way (type egress).
	Host      string `json:"host,omitempty"`
	Port      int    `json:"port,omitempty"`
	BytesUp   int64  `json:"bytes_up,omitempty"`
	BytesDown int64  `json:"bytes_down,omitempty"`
}

// TypeGroup is the type of a grouping batch's event: whether the one draft
// that holds a group's findings reached the forge. Each finding's run sent
// its own terminal event (DRAFT-PR, its draft held for the group); a
// webhook gets this one too by default.
const TypeGroup = "group"

// Scrub is the redaction chokepoint every event passes: it returns the text
// to write and whether it had to remove anything.
type Scrub func(string) (string, bool)

// Log writes events to an NDJSON file and a console.
type Log struct {
	mu      sync.Mutex
	run     string
	file    *os.File
	console io.Writer
	scrub   Scrub
	now     func() time.Time
	err     error
	hit     bool
	phase   string // the phase under way, for a heartbeat's line
	sinks   []Sink // webhooks: each event after the chokepoint
}

// Open creates the NDJSON log at path (0600, must not exist) and echoes
// events to console, which may be nil. Every text field of every event goes
// through scrub first; nil means no redaction (tests only).
func Open(path, run string, console io.Writer, scrub Scrub) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	return &Log{run: run, file: f, console: console, scrub: scrub, now: time.Now}, nil
}

// Emit records e, stamping its time and run. A write failure is kept and
// reported by Err; the run goes on so that its terminal state is still
// decided and reported.
func (l *Log) Emit(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scrubFields(&e)
	switch e.Type {
	case "phase-start":
		l.phase = e.Phase
	case "phase-end", "terminal":
		l.phase = ""
	}
	e.Time = l.now().UTC()
	e.Run = l.run
	b, err := json.Marshal(e)
	if err == nil {
		// The same value, with no raw control a reader's terminal acts on.
		_, err = io.WriteString(l.file, untrusted.Printable(string(b))+"\n")
	}
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("event log: %w", err)
	}
	l.writeConsole(e)
	for _, s := range l.sinks {
		s.Send(e) // scrubbed above: a sink sees what the log holds
	}
}

// scrubFields passes every text field of e through the chokepoint.
func (l *Log) scrubFields(e *Event) {
	if l.scrub == nil {
		return
	}
	for _, f := range []*string{&e.Type, &e.Phase, &e.Name, &e.Verdict, &e.Reason, &e.Detail, &e.Host} {
		var hit bool
		*f, hit = l.scrub(*f)
		l.hit = l.hit || hit
	}
}

// writeConsole echoes e on the console, if there is one.
func (l *Log) writeConsole(e Event) {
	if l.console == nil {
		return
	}
	if o, ok := l.console.(interface{ Observe(Event) }); ok {
		o.Observe(e) // a Live console follows the phases
	}
	fmt.Fprintln(l.console, consoleLine(e))
}

// Err returns the first write error, if any.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Redacted reports whether the chokepoint removed anything from any event:
// something secret reached the run's own text, and the run must not send it.
func (l *Log) Redacted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hit
}

// Close flushes and closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}

// consoleLine renders e for a person. Every field is escaped
// (untrusted.OneLine: a path, a title or a test's output cannot act on the
// terminal); a detail keeps its lines, each after the first indented, so
// that nothing in it can pass for a line of fixrail's own.
func consoleLine(e Event) string {
	for _, f := range []*string{&e.Phase, &e.Type, &e.Name, &e.Verdict, &e.Reason} {
		*f = untrusted.OneLine(*f)
	}
	e.Detail = strings.ReplaceAll(untrusted.Printable(strings.TrimRight(e.Detail, "\n")), "\n", "\n    ")
	s := "fixrail: "
	if e.Phase != "" {
		s += e.Phase + ": "
	}
	switch e.Type {
	case "gate":
		s += fmt.Sprintf("gate %s %s", e.Name, e.Verdict)
	case "terminal":
		s += fmt.Sprintf("%s (%s)", e.Verdict, e.Reason)
	case "phase-start":
		s += "start"
	case "heartbeat":
		s += fmt.Sprintf("%s still running after %s", e.Name, e.Verdict)
	case "phase-end":
		// The pipeline says how the phase ended; an event without it is
		// an older writer's, and "done" was all it said.
		if e.Verdict != "" {
			s += e.Verdict
		} else {
			s += "done"
		}
	default:
		s += e.Type
		if e.Name != "" {
			s += " " + e.Name
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}
