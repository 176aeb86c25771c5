package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func newLog(t *testing.T) *Log {
	t.Helper()
	return &Log{Path: filepath.Join(t.TempDir(), "receipts", "log.jsonl")}
}

// fill appends n receipts of rotating kinds.
func fill(t *testing.T, l *Log, n int) []Receipt {
	t.Helper()
	var out []Receipt
	for i := range n {
		r := Receipt{Time: t0.Add(time.Duration(i) * time.Second), ToolUseID: fmt.Sprintf("toolu_%02d", i), Session: "s1", Tool: "Bash"}
		switch i % 3 {
		case 0:
			r.Kind, r.Rule, r.Verdict, r.Reason = KindDecision, "push-force", "warn", "git push --force"
			r.Input = json.RawMessage(`{"command": "git push --force\norigin main"}`)
		case 1:
			r.Kind, r.Outcome = KindOutcome, json.RawMessage(`{"exit":0}`)
		case 2:
			r.Kind, r.Reason = KindEngineError, "policy unreadable"
		}
		got, err := l.Append(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

func lines(t *testing.T, l *Log) [][]byte {
	t.Helper()
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

func TestAppendRead(t *testing.T) {
	l := newLog(t)
	written := fill(t, l, 10)
	raw := lines(t, l)
	for i, r := range written {
		if r.Seq != int64(i+1) {
			t.Errorf("receipt %d: Seq %d", i, r.Seq)
		}
		wantPrev := ""
		if i > 0 {
			wantPrev = hashLine(bytes.TrimSuffix(raw[i-1], []byte("\n")))
		}
		if r.Prev != wantPrev {
			t.Errorf("receipt %d: Prev %q, want %q", i, r.Prev, wantPrev)
		}
	}
	read, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	// Input was compacted onto one line by json.Marshal; compare the rest.
	if diff := cmp.Diff(written, read, cmpReceipts); diff != "" {
		t.Errorf("Read mismatch (-written +read):\n%s", diff)
	}
	fi, err := os.Stat(l.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	rep, err := l.Verify(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Report{
		Lines: 10,
		Kinds: map[string]int64{KindDecision: 4, KindOutcome: 3, KindEngineError: 3},
		Head:  hashLine(bytes.TrimSuffix(raw[9], []byte("\n"))),
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("Verify mismatch (-want +got):\n%s", diff)
	}
	seq, head, err := l.Head()
	if err != nil || seq != 10 || head != want.Head {
		t.Errorf("Head = %d, %s, %v; want 10, %s", seq, head, err, want.Head)
	}
}

// cmpReceipts compares RawMessage fields by their compact form.
var cmpReceipts = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return x.String() == y.String()
})

func TestAppendRejects(t *testing.T) {
	l := newLog(t)
	for name, r := range map[string]Receipt{
		"unknown kind":              {Kind: "approval"},
		"checkpoint without data":   {Kind: KindCheckpoint},
		"decision with checkpoint":  {Kind: KindDecision, Checkpoint: &Checkpoint{}},
		"input that is not JSON":    {Kind: KindDecision, Input: json.RawMessage(`{oops`)},
		"outcome that is not JSON":  {Kind: KindOutcome, Outcome: json.RawMessage(`1 2`)},
		"empty kind":                {},
		"checkpoint kind elsewhere": {Kind: "Checkpoint", Checkpoint: &Checkpoint{}},
	} {
		if _, err := l.Append(r); err == nil {
			t.Errorf("%s: Append accepted it", name)
		}
	}
	if _, err := os.Stat(l.Path); err == nil {
		if data, _ := os.ReadFile(l.Path); len(data) != 0 {
			t.Errorf("rejected appends wrote %q", data)
		}
	}
}

func TestAppendTornTail(t *testing.T) {
	l := newLog(t)
	fill(t, l, 3)
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":4,"ti`)
	f.Close()
	if _, err := l.Append(Receipt{Kind: KindDecision}); !errors.Is(err, ErrTornTail) || !errors.Is(err, ErrNeedsRepair) {
		t.Errorf("Append after a torn write = %v, want ErrTornTail pointing at repair", err)
	}
	rep, err := l.Verify(nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break == nil || rep.Break.Line != 4 || rep.Lines != 3 {
		t.Errorf("Verify = %+v, want a break at line 4 after 3 good lines", rep)
	}
}

// TestVerifyDetects: each way of editing the log is reported at the right
// line.
func TestVerifyDetects(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(ls [][]byte) [][]byte
		wantLine int64
		wantWhy  string
	}{
		{
			// The chain can only tell that the link between lines 5 and 6
			// broke; the message names line 5 as the one altered.
			name: "tamper a middle line",
			edit: func(ls [][]byte) [][]byte {
				ls[4] = bytes.Replace(ls[4], []byte(`"exit":0`), []byte(`"exit":1`), 1)
				return ls
			},
			wantLine: 6, wantWhy: "line 5 was altered",
		},
		{
			name: "tamper a middle line into invalid JSON",
			edit: func(ls [][]byte) [][]byte {
				ls[4] = append([]byte("x"), ls[4]...)
				return ls
			},
			wantLine: 5, wantWhy: "not a receipt",
		},
		{
			name:     "delete a line",
			edit:     func(ls [][]byte) [][]byte { return append(ls[:4:4], ls[5:]...) },
			wantLine: 5, wantWhy: "seq is 6, want 5",
		},
		{
			name:     "delete the first line",
			edit:     func(ls [][]byte) [][]byte { return ls[1:] },
			wantLine: 1, wantWhy: "seq is 2, want 1",
		},
		{
			name: "swap two lines",
			edit: func(ls [][]byte) [][]byte {
				ls[2], ls[3] = ls[3], ls[2]
				return ls
			},
			wantLine: 3, wantWhy: "seq is 4, want 3",
		},
		{
			name: "insert a forged line with the right seq and prev, renumbering the rest",
			edit: func(ls [][]byte) [][]byte {
				forged := []byte(fmt.Sprintf(`{"seq":4,"time":"2026-03-14T15:09:30Z","prev":%q,"kind":"decision","verdict":"allow"}`+"\n",
					hashLine(bytes.TrimSuffix(ls[2], []byte("\n")))))
				out := append(append(append([][]byte{}, ls[:3]...), forged), ls[3:]...)
				for i := 4; i < len(out); i++ {
					out[i] = bytes.Replace(out[i], []byte(fmt.Sprintf(`"seq":%d,`, i)), []byte(fmt.Sprintf(`"seq":%d,`, i+1)), 1)
				}
				return out
			},
			wantLine: 5, wantWhy: "line 4 was altered",
		},
		{
			name: "first line given a prev",
			edit: func(ls [][]byte) [][]byte {
				ls[0] = bytes.Replace(ls[0], []byte(`"prev":""`), []byte(`"prev":"00"`), 1)
				return ls
			},
			wantLine: 1, wantWhy: "first line has a prev",
		},
		{
			name: "unknown kind",
			edit: func(ls [][]byte) [][]byte {
				ls[9] = bytes.Replace(ls[9], []byte(`"kind":"decision"`), []byte(`"kind":"approval"`), 1)
				return ls
			},
			wantLine: 10, wantWhy: "unknown kind",
		},
		{
			name: "truncated mid-line",
			edit: func(ls [][]byte) [][]byte {
				ls[11] = ls[11][:20]
				return ls
			},
			wantLine: 12, wantWhy: "partial last line",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			fill(t, l, 12)
			if err := os.WriteFile(l.Path, bytes.Join(tc.edit(lines(t, l)), nil), 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := l.Verify(nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Break == nil {
				t.Fatalf("Verify found no break: %+v", rep)
			}
			if rep.Break.Line != tc.wantLine || !strings.Contains(rep.Break.Reason, tc.wantWhy) {
				t.Errorf("break %v, want line %d mentioning %q", rep.Break, tc.wantLine, tc.wantWhy)
			}
			if rep.Lines != tc.wantLine-1 {
				t.Errorf("Lines = %d, want %d verified before the break", rep.Lines, tc.wantLine-1)
			}
		})
	}
}

func TestVerifyMissingLog(t *testing.T) {
	if _, err := newLog(t).Verify(nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Verify of a missing log = %v, want os.ErrNotExist", err)
	}
	if seq, head, err := newLog(t).Head(); seq != 0 || head != "" || err != nil {
		t.Errorf("Head of a missing log = %d, %q, %v", seq, head, err)
	}
}

// TestConcurrentAppendGoroutines: 8 goroutines × 50 appends, each with its
// own file descriptor and flock, make one linear chain holding every receipt.
func TestConcurrentAppendGoroutines(t *testing.T) {
	l := newLog(t)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := l.Append(Receipt{Kind: KindDecision, ToolUseID: fmt.Sprintf("g%d-%d", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkLinear(t, l, workers*each, func(w, i int) string { return fmt.Sprintf("g%d-%d", w, i) }, workers, each)
}

// TestConcurrentAppendProcesses: 4 child processes × 50 appends, racing 2
// goroutines in this process, keep one chain.
func TestConcurrentAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	l := newLog(t)
	const procs, each = 4, 50
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppend$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			"RECEIPT_HELPER_LOG="+l.Path,
			"RECEIPT_HELPER_ID=p"+strconv.Itoa(p),
			"RECEIPT_HELPER_N="+strconv.Itoa(each))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("child %d output:\n%s", p, out.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := range each {
				if _, err := l.Append(Receipt{Kind: KindOutcome, ToolUseID: fmt.Sprintf("g%d-%d", g, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
	}
	rs := checkLinear(t, l, (procs+2)*each, nil, 0, 0)
	seen := map[string]bool{}
	for _, r := range rs {
		seen[r.ToolUseID] = true
	}
	for p := range procs {
		for i := range each {
			if id := fmt.Sprintf("p%d-%d", p, i); !seen[id] {
				t.Errorf("receipt %s from a child process is missing", id)
			}
		}
	}
}

// TestHelperAppend is the child process of TestConcurrentAppendProcesses;
// it does nothing unless RECEIPT_HELPER_LOG is set.
func TestHelperAppend(t *testing.T) {
	path := os.Getenv("RECEIPT_HELPER_LOG")
	if path == "" {
		t.Skip("helper process only")
	}
	n, _ := strconv.Atoi(os.Getenv("RECEIPT_HELPER_N"))
	l := &Log{Path: path}
	for i := range n {
		if _, err := l.Append(Receipt{Kind: KindDecision, ToolUseID: fmt.Sprintf("%s-%d", os.Getenv("RECEIPT_HELPER_ID"), i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLinear verifies the chain has exactly n lines and no break, and when
// id is given that every id(w, i) appears once.
func checkLinear(t *testing.T, l *Log, n int, id func(w, i int) string, workers, each int) []Receipt {
	t.Helper()
	rep, err := l.Verify(nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break != nil || rep.Lines != int64(n) {
		t.Fatalf("Verify = %d lines, break %v; want %d lines and no break", rep.Lines, rep.Break, n)
	}
	rs, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range rs {
		count[r.ToolUseID]++
	}
	for w := range workers {
		for i := range each {
			if c := count[id(w, i)]; c != 1 {
				t.Errorf("receipt %s appears %d times", id(w, i), c)
			}
		}
	}
	return rs
}

func TestSeqOf(t *testing.T) {
	for _, tc := range []struct {
		line    string
		want    int64
		wantErr bool
	}{
		{line: `{"seq":1,"time":"2026-03-14T15:09:26Z"}`, want: 1},
		{line: `{"seq":9223372036854775807,"kind":"decision"}`, want: 9223372036854775807},
		// Not in Append's own order: decoded.
		{line: `{"time":"2026-03-14T15:09:26Z","seq":42}`, want: 42},
		{line: `{"seq": 7, "kind":"decision"}`, want: 7},
		{line: `{"seq":12}`, want: 12},
		{line: `{"seq":-3,"kind":"x"}`, want: -3},
		{line: `{"seq":"4","kind":"x"}`, wantErr: true},
		{line: `{"seq":4,`, wantErr: true},
		{line: `not json`, wantErr: true},
	} {
		got, err := seqOf([]byte(tc.line))
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("seqOf(%s) = %d, %v; want %d, error %v", tc.line, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestAppendLongLines chains receipts around and far past the first read
// of the log's tail, so the previous line is found across chunk borders.
func TestAppendLongLines(t *testing.T) {
	l := newLog(t)
	sizes := []int{10, 4 << 10, 4<<10 - 90, 5 << 10, 10, 70 << 10, 200 << 10, 1, 64 << 10}
	for i, n := range sizes {
		r := Receipt{Kind: KindDecision, Time: t0, Verdict: "allow", Reason: strings.Repeat("x", n)}
		appendFn := l.Append
		if i%2 == 1 {
			appendFn = l.AppendUnsynced
		}
		got, err := appendFn(r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq != int64(i+1) {
			t.Fatalf("receipt %d (reason %d bytes) got seq %d", i+1, n, got.Seq)
		}
	}
	if rep, err := l.Verify(nil); err != nil || rep.Break != nil || rep.Lines != int64(len(sizes)) {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	if seq, _, err := l.Head(); err != nil || seq != int64(len(sizes)) {
		t.Errorf("Head = %d, %v; want %d", seq, err, len(sizes))
	}
}

func TestRepair(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name    string
		damage  func(data []byte) []byte // the log's bytes after 5 receipts
		force   bool
		line    int64 // first line moved aside; 0: nothing to do
		lines   int64
		wantErr error
	}{
		{name: "whole", damage: func(d []byte) []byte { return d }},
		{name: "torn tail", damage: func(d []byte) []byte { return append(d, `{"seq":6,"ti`...) }, line: 6, lines: 1},
		{name: "last line lost to zeros", damage: func(d []byte) []byte {
			return append(d[:bytes.LastIndexByte(d[:len(d)-1], '\n')+1], make([]byte, 40)...)
		}, line: 5, lines: 1},
		{name: "last line garbled", damage: func(d []byte) []byte { return append(d, "\x00\x00not json\n"...) }, line: 6, lines: 1},
		{name: "middle edited", damage: func(d []byte) []byte {
			return bytes.Replace(d, []byte(`"seq":3,`), []byte(`"seq":3 ,`), 1)
		}, line: 4, lines: 2, wantErr: ErrDamageSpans},
		{name: "middle edited, forced", damage: func(d []byte) []byte {
			return bytes.Replace(d, []byte(`"seq":3,`), []byte(`"seq":3 ,`), 1)
		}, force: true, line: 4, lines: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			fill(t, l, 5)
			orig, err := os.ReadFile(l.Path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tc.damage(bytes.Clone(orig))
			if err := os.WriteFile(l.Path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := l.Repair(tc.force, now)
			if !errors.Is(err, tc.wantErr) || rep.Line != tc.line || (tc.line != 0 && rep.Lines != tc.lines) {
				t.Fatalf("Repair = %+v, %v; want line %d, %d lines, error %v", rep, err, tc.line, tc.lines, tc.wantErr)
			}
			if tc.wantErr != nil {
				after, _ := os.ReadFile(l.Path)
				if !bytes.Equal(after, damaged) {
					t.Error("a refused repair changed the log")
				}
				return
			}
			v, err := l.Verify(nil)
			if err != nil || v.Break != nil {
				t.Fatalf("after Repair, Verify = %+v, %v", v, err)
			}
			if tc.line == 0 {
				if v.Lines != 5 {
					t.Errorf("a whole log changed: %d lines", v.Lines)
				}
				return
			}
			// The log keeps every line before the break, then the repair
			// receipt; the aside file holds exactly what was cut.
			aside, err := os.ReadFile(rep.Aside)
			if err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(l.Path)
			kept := int64(len(damaged)) - rep.Bytes
			if !bytes.Equal(aside, damaged[kept:]) || !bytes.Equal(after[:kept], damaged[:kept]) {
				t.Errorf("aside %q and kept prefix do not split the damaged log", aside)
			}
			sum := sha256.Sum256(aside)
			last := lines(t, l)[v.Lines-1]
			if rep.Receipt.Kind != KindRepair || rep.Receipt.Seq != tc.line || !strings.Contains(string(last), hex.EncodeToString(sum[:])) || !strings.Contains(string(last), rep.Aside) {
				t.Errorf("repair receipt %+v / %s", rep.Receipt, last)
			}
			// Appends resume.
			if _, err := l.Append(Receipt{Kind: KindDecision, Time: now, Verdict: "allow"}); err != nil {
				t.Errorf("Append after Repair: %v", err)
			}
		})
	}
	t.Run("missing log", func(t *testing.T) {
		l := newLog(t)
		if rep, err := l.Repair(false, now); err != nil || rep.Line != 0 {
			t.Errorf("Repair = %+v, %v", rep, err)
		}
		if _, err := os.Stat(l.Path); !errors.Is(err, os.ErrNotExist) {
			t.Error("Repair created the log")
		}
	})
}

// TestAppendLockBounded: a process holding the log's lock (an agent can
// flock the file) makes Append fail after LockWait, never hang; once it
// lets go, appends resume.
func TestAppendLockBounded(t *testing.T) {
	l := newLog(t)
	fill(t, l, 1)
	l.LockWait = 100 * time.Millisecond
	holder, err := os.Open(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Append(Receipt{Kind: KindDecision, Time: t0})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Append under a held lock = %v, want ErrLocked", err)
		}
	case <-time.After(10 * time.Second):
		// A liveness bound, not a timing: a 100 ms wait that outlasts 10 s
		// is a wait that never ends.
		t.Fatal("Append under a held lock hung; it must give up after LockWait")
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(Receipt{Kind: KindDecision, Time: t0}); err != nil {
		t.Errorf("Append after the lock was let go: %v", err)
	}
}

// TestLogNotRegular: a FIFO in the log's place is an error at once for
// appends and reads, never a wait for the other end.
func TestLogNotRegular(t *testing.T) {
	l := newLog(t)
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(l.Path, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"Append": func() error { _, err := l.Append(Receipt{Kind: KindDecision, Time: t0}); return err },
		"Read":   func() error { _, err := l.Read(); return err },
		"Verify": func() error { _, err := l.Verify(nil); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s on a FIFO: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s blocked on a FIFO", name)
		}
	}
}
