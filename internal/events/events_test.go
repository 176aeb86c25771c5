package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// fixedNow is the clock of every test log: a non-UTC zone, so the test also
// sees that Emit stamps UTC.
var fixedNow = time.Date(2026, 3, 4, 10, 30, 0, 123456789, time.FixedZone("CET", 3600))

func open(t *testing.T, console *bytes.Buffer) (*Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.ndjson")
	var l *Log
	var err error
	if console == nil {
		l, err = Open(path, "r-1", nil, nil)
	} else {
		l, err = Open(path, "r-1", console, nil)
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	l.now = func() time.Time { return fixedNow }
	return l, path
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ndjson")
	l, err := Open(path, "r-1", nil, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer l.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode(); got != 0o600 {
		t.Errorf("mode = %v, want -rw-------", got)
	}
	if fi.Size() != 0 {
		t.Errorf("new log has %d bytes, want 0", fi.Size())
	}

	tests := []struct {
		name string
		path string
	}{
		{"existing log", path},
		{"existing other file", writeFile(t, dir, "report.json", "keep me")},
		{"symlink to a file", symlink(t, dir, "link.ndjson", writeFile(t, dir, "target", "keep me"))},
		{"dangling symlink", symlink(t, dir, "dangling.ndjson", filepath.Join(dir, "nowhere"))},
		{"missing directory", filepath.Join(dir, "no", "run.ndjson")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeErr := os.ReadFile(tc.path)
			l, err := Open(tc.path, "r-2", nil, nil)
			if err == nil {
				l.Close()
				t.Fatalf("Open(%s) succeeded, want an error", tc.path)
			}
			if !strings.HasPrefix(err.Error(), "open event log: ") {
				t.Errorf("error %q does not name the operation", err)
			}
			after, afterErr := os.ReadFile(tc.path)
			if !bytes.Equal(before, after) || (beforeErr == nil) != (afterErr == nil) {
				t.Errorf("Open changed %s: %q (%v) → %q (%v)", tc.path, before, beforeErr, after, afterErr)
			}
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Open created the target of a dangling symlink")
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func symlink(t *testing.T, dir, name, target string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// run is a whole run's events, as the pipeline emits them.
var run = []Event{
	{Type: "run-start", Detail: "finding issue-42, base main, autonomous mode"},
	{Type: "phase-start", Phase: "P1"},
	{Type: "note", Phase: "P1", Name: "sweep", Detail: "removed 1 stale worktree"},
	{Type: "phase-end", Phase: "P1"},
	{Type: "gate", Phase: "P4", Name: "diff-within-plan", Verdict: "pass", Detail: "2 path(s), all planned and declared"},
	{Type: "gate", Phase: "P4", Name: "stage-b", Verdict: "fail", Detail: `src/a.py imports "from app.auth import x" (import:auth)`},
	// A caller cannot choose the run or the time: both are stamped.
	{Type: "terminal", Verdict: "ESCALATE", Reason: "sensitive-path", Run: "spoofed", Time: time.Unix(0, 0)},
}

// TestEmitGolden checks the NDJSON log byte for byte against
// testdata/run.ndjson; go test -update rewrites it.
func TestEmitGolden(t *testing.T) {
	l, path := open(t, nil)
	for _, e := range run {
		l.Emit(e)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "run.ndjson")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}

// TestEmitLines checks every line on its own: valid JSON, one event, stamped.
func TestEmitLines(t *testing.T) {
	l, path := open(t, nil)
	for _, e := range run {
		l.Emit(e)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var got []Event
	for i, line := range readLines(t, path) {
		var e Event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		if dec.More() {
			t.Errorf("line %d holds more than one value: %q", i+1, line)
		}
		got = append(got, e)
	}
	var want []Event
	for _, e := range run {
		e.Run, e.Time = "r-1", fixedNow.UTC()
		want = append(want, e)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for i, e := range got {
		if e.Time.Location() != time.UTC {
			t.Errorf("event %d time %v is not UTC", i, e.Time)
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("log does not end in a newline: %q", data)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestEmitStampsRealTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.ndjson")
	l, err := Open(path, "r-9", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	l.Emit(Event{Type: "note"})
	after := time.Now()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var e Event
	if err := json.Unmarshal([]byte(readLines(t, path)[0]), &e); err != nil {
		t.Fatal(err)
	}
	if e.Run != "r-9" || e.Time.Before(before.Add(-time.Second)) || e.Time.After(after.Add(time.Second)) {
		t.Errorf("event %+v: want run r-9 stamped between %v and %v", e, before, after)
	}
}

func TestConsoleLines(t *testing.T) {
	tests := []struct {
		name  string
		event Event
		want  string
	}{
		{"gate pass", Event{Type: "gate", Phase: "P4", Name: "stage-b", Verdict: "pass", Detail: "2 path(s) clear"},
			"fixrail: P4: gate stage-b pass: 2 path(s) clear"},
		{"gate fail", Event{Type: "gate", Phase: "P4", Name: "diff-budget", Verdict: "fail", Detail: "300 of 200 lines"},
			"fixrail: P4: gate diff-budget fail: 300 of 200 lines"},
		{"gate without detail", Event{Type: "gate", Phase: "P3", Name: "stage-a", Verdict: "pass"},
			"fixrail: P3: gate stage-a pass"},
		{"terminal", Event{Type: "terminal", Verdict: "DRAFT-PR", Reason: "fixed", Detail: ".fixrail/outbox/issue-42"},
			"fixrail: DRAFT-PR (fixed): .fixrail/outbox/issue-42"},
		{"terminal without detail", Event{Type: "terminal", Verdict: "HALT", Reason: "wall-clock"},
			"fixrail: HALT (wall-clock)"},
		{"phase start", Event{Type: "phase-start", Phase: "P2"}, "fixrail: P2: start"},
		{"phase end", Event{Type: "phase-end", Phase: "P2", Verdict: "done in 1.2s"}, "fixrail: P2: done in 1.2s"},
		{"phase that ended the run", Event{Type: "phase-end", Phase: "P4", Verdict: "ended the run after 3s: ESCALATE (leak)"}, "fixrail: P4: ended the run after 3s: ESCALATE (leak)"},
		{"phase end from an older writer", Event{Type: "phase-end", Phase: "P2"}, "fixrail: P2: done"},
		{"run start", Event{Type: "run-start", Detail: "finding issue-42"}, "fixrail: run-start: finding issue-42"},
		{"named note", Event{Type: "note", Phase: "P1", Name: "sweep", Detail: "1 stale worktree"},
			"fixrail: P1: note sweep: 1 stale worktree"},
		{"bare note", Event{Type: "note"}, "fixrail: note"},
		// Untrusted text reaches the terminal escaped, and a detail's own
		// lines cannot pass for fixrail's.
		{"hostile path", Event{Type: "gate", Phase: "P4", Name: "diff-within-plan", Verdict: "fail",
			Detail: "not in PLAN.json: src/\x1b]0;owned\x07\x1b[2J\x1b]52;c;aGk=\x07.py"},
			`fixrail: P4: gate diff-within-plan fail: not in PLAN.json: src/\u001b]0;owned\u0007\u001b[2J\u001b]52;c;aGk=\u0007.py`},
		{"hostile fields", Event{Type: "note", Phase: "P1\u009b2J", Name: "x\u202ey\nfixrail: forged"},
			`fixrail: P1\u009b2J: note x\u202ey\u000afixrail: forged`},
		{"multi-line detail", Event{Type: "gate", Phase: "P3", Name: "oracle-red", Verdict: "pass", Detail: "red\nTraceback\u200b\nfixrail: DRAFT-PR (fixed)\n"},
			"fixrail: P3: gate oracle-red pass: red\n    Traceback\\u200b\n    fixrail: DRAFT-PR (fixed)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var console bytes.Buffer
			l, _ := open(t, &console)
			l.Emit(tc.event)
			if diff := cmp.Diff(tc.want+"\n", console.String()); diff != "" {
				t.Errorf("console (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEmitEscapesLog: the NDJSON line holds no raw control (C1 and bidi
// are not escaped by encoding/json) and still decodes to the event.
func TestEmitEscapesLog(t *testing.T) {
	l, path := open(t, nil)
	detail := "\x1b[2J \u009b31m \u202eevil \u200b \U000E0041"
	l.Emit(Event{Type: "note", Detail: detail})
	lines := readLines(t, path)
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, r := range []rune{0x1b, 0x9b, 0x202e, 0x200b, 0xe0041} {
		if strings.ContainsRune(lines[0], r) {
			t.Errorf("log line holds %U raw: %q", r, lines[0])
		}
	}
	var e Event
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil || e.Detail != detail {
		t.Errorf("decoded %q, %v; want %q", e.Detail, err, detail)
	}
}

func TestNilConsole(t *testing.T) {
	l, path := open(t, nil)
	l.Emit(Event{Type: "note", Detail: "no console"})
	if err := l.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	if n := len(readLines(t, path)); n != 1 {
		t.Errorf("%d lines, want 1", n)
	}
}

// TestErr: a failed write is kept (the first one), reported by Err, and does
// not stop the console or the run.
func TestErr(t *testing.T) {
	tests := []struct {
		name     string
		breakLog func(t *testing.T, l *Log)
		console  string // when not the usual three lines
		want     error
	}{
		{
			name: "file closed under the log",
			breakLog: func(t *testing.T, l *Log) {
				if err := l.file.Close(); err != nil {
					t.Fatal(err)
				}
			},
			want: os.ErrClosed,
		},
		{
			name: "emit after Close",
			breakLog: func(t *testing.T, l *Log) {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			},
			want: os.ErrInvalid,
		},
		{
			// The failed Close and the ErrInvalid of the next Emit come
			// after the first failure and do not replace it.
			name: "file closed under the log, then Close",
			breakLog: func(t *testing.T, l *Log) {
				if err := l.file.Close(); err != nil {
					t.Fatal(err)
				}
				l.Emit(Event{Type: "note", Name: "lost"})
				if err := l.Close(); !errors.Is(err, os.ErrClosed) {
					t.Errorf("Close of a closed file = %v, want ErrClosed", err)
				}
			},
			console: "fixrail: note before\nfixrail: note lost\nfixrail: note lost\nfixrail: note lost too\n",
			want:    os.ErrClosed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var console bytes.Buffer
			l, path := open(t, &console)
			l.Emit(Event{Type: "note", Name: "before"})
			if err := l.Err(); err != nil {
				t.Fatalf("Err before the failure: %v", err)
			}
			tc.breakLog(t, l)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Emit panicked: %v", r)
					}
				}()
				l.Emit(Event{Type: "note", Name: "lost"})
			}()
			err := l.Err()
			if !errors.Is(err, tc.want) {
				t.Fatalf("Err() = %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "event log: ") {
				t.Errorf("Err() = %q, want it to name the event log", err)
			}
			// Later failures do not replace the first.
			l.Emit(Event{Type: "note", Name: "lost too"})
			if again := l.Err(); again != err {
				t.Errorf("Err changed after a second failure: %v then %v", err, again)
			}
			wantConsole := "fixrail: note before\nfixrail: note lost\nfixrail: note lost too\n"
			if tc.console != "" {
				wantConsole = tc.console
			}
			if diff := cmp.Diff(wantConsole, console.String()); diff != "" {
				t.Errorf("console (-want +got):\n%s", diff)
			}
			if n := len(readLines(t, path)); n != 1 {
				t.Errorf("log has %d lines, want the 1 written before the failure", n)
			}
		})
	}
}

func TestCloseTwice(t *testing.T) {
	l, _ := open(t, nil)
	if err := l.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

// TestEmitConcurrent: lines from concurrent Emits never interleave.
func TestEmitConcurrent(t *testing.T) {
	var console bytes.Buffer
	l, path := open(t, &console)
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l.Emit(Event{Type: "gate", Phase: "P4", Name: fmt.Sprintf("g%d", i), Verdict: "pass",
				Detail: strings.Repeat("x", 4096)})
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range readLines(t, path) {
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %.60q…: %v", line, err)
		}
		seen[e.Name] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct events in the log, want %d", len(seen), n)
	}
	if got := strings.Count(console.String(), "\n"); got != n {
		t.Errorf("%d console lines, want %d", got, n)
	}
}

// TestScrubChokepoint: every text field passes the scrubber before it is
// written or echoed, and a hit is remembered.
func TestScrubChokepoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.ndjson")
	var console strings.Builder
	scrub := func(s string) (string, bool) {
		if strings.Contains(s, "hunter2-secret") {
			return strings.ReplaceAll(s, "hunter2-secret", "[REDACTED]"), true
		}
		return s, false
	}
	l, err := Open(path, "r-s", &console, scrub)
	if err != nil {
		t.Fatal(err)
	}
	l.Emit(Event{Type: "note", Name: "plain"})
	if l.Redacted() {
		t.Fatal("Redacted after a clean event")
	}
	l.Emit(Event{Type: "gate", Name: "g", Verdict: "fail", Detail: "token hunter2-secret in body"})
	if !l.Redacted() {
		t.Error("Redacted = false after a hit")
	}
	l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"log": string(data), "console": console.String()} {
		if strings.Contains(text, "hunter2-secret") || !strings.Contains(text, "[REDACTED]") {
			t.Errorf("%s was not scrubbed:\n%s", name, text)
		}
	}
}
