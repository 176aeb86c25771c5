package redact

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func collectStream(t *testing.T, e *Engine, r io.Reader, window, overlap, context int) []Finding {
	t.Helper()
	var fs []Finding
	emit := func(f Finding) error {
		if n := len(fs); n > 0 && f.Start < fs[n-1].End {
			t.Errorf("finding %+v overlaps or precedes the one before, %+v", f, fs[n-1])
		}
		fs = append(fs, f)
		return nil
	}
	var err error
	if window == 0 {
		err = e.DetectReader(r, emit)
	} else {
		err = e.detectStream(r, emit, window, overlap, context)
	}
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// streamSecrets are the secrets placed in the streaming tests: a provider
// token, a credential assignment, a URL password and a private key, each
// assembled at run time.
func streamSecrets(r *rand.Rand) []string {
	alnum := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var body strings.Builder
	for range 12 {
		body.WriteString(randomString(r, alnum+"+/", 64) + "\n")
	}
	return []string{
		"gh" + "p_" + randomString(r, alnum, 36),
		"DB_" + "PASSWORD=" + randomString(r, alnum, 20),
		"api_" + `token: "` + randomString(r, alnum, 24) + `"`,
		"postgres://app:" + randomString(r, alnum, 16) + "@db.internal/x",
		pem("PRIVATE KEY", "\n"+body.String()),
	}
}

// TestDetectReaderWindowEdges places secrets at and around every window
// edge and ownership boundary of small windows: each is reported once,
// whole, as Detect over the whole text reports it.
func TestDetectReaderWindowEdges(t *testing.T) {
	const window, overlap, context = 4096, 1536, 256
	r := rand.New(rand.NewPCG(31, 1))
	secrets := streamSecrets(r)
	whole := mustNew(t, Options{MaxInput: 1 << 24})
	filler := "the handler retries a request when the upstream fails\n"
	for _, sec := range secrets[:4] { // the key is longer than overlap-context here
		for shift := -64; shift <= 64; shift++ {
			var b strings.Builder
			// Secrets near each of the first windows' ends and near each
			// ownership limit (next window start + context).
			for k := 1; k <= 4; k++ {
				edge := k*(window-overlap) + overlap // end of window k-1 in the stream
				next := edge - overlap               // where window k starts
				// Two in the zone the window before owns, so the later
				// one's duplicate cannot merge into the last finding
				// reported.
				for _, at := range []int{next + shift, next + shift + 64, next + context + shift, edge + shift} {
					for b.Len() < at {
						b.WriteString(filler[:min(len(filler), at-b.Len())])
					}
					b.WriteString("\n" + sec + "\n")
				}
			}
			b.WriteString(filler)
			text := b.String()
			want, err := whole.Detect(text)
			if err != nil {
				t.Fatal(err)
			}
			got := collectStream(t, whole, strings.NewReader(text), window, overlap, context)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("secret %.12q… shift %d: stream findings differ from Detect's (-want +got):\n%s", sec, shift, diff)
			}
			if len(got) != 16 {
				t.Errorf("secret %.12q… shift %d: %d findings, want 16: %+v", sec, shift, len(got), got)
			}
		}
	}
}

// TestDetectReaderDefaultWindows: with the real window sizes, a 5 MiB text
// holding every kind of secret, one of them a private key across the first
// window's end, is reported as Detect over the whole text reports it, and
// nothing is withheld.
func TestDetectReaderDefaultWindows(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	secrets := streamSecrets(r)
	var b strings.Builder
	var placed []string
	for b.Len() < 5<<20 {
		if b.Len() > streamWindow-700 && len(placed) == 0 {
			placed = append(placed, secrets[4])
			b.WriteString(secrets[4] + "\n")
		}
		if r.IntN(400) == 0 {
			s := secrets[r.IntN(len(secrets))]
			placed = append(placed, s)
			b.WriteString(s + "\n")
		}
		b.WriteString(cleanLine(r))
	}
	// The last one at the very end, no newline after it.
	placed = append(placed, secrets[0])
	b.WriteString(secrets[0])
	text := b.String()
	want, err := mustNew(t, Options{MaxInput: 1 << 24}).Detect(text)
	if err != nil {
		t.Fatal(err)
	}
	got := collectStream(t, mustNew(t, Options{}), strings.NewReader(text), 0, 0, 0)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("stream findings differ from Detect's (-want +got):\n%s", diff)
	}
	if len(got) != len(placed) {
		t.Errorf("%d findings for %d secrets", len(got), len(placed))
	}
	for _, f := range got {
		if f.Rule == RuleWithheld || f.Rule == RuleTooManyFindings {
			t.Errorf("stream reported %s", f.Rule)
		}
	}
	if last := got[len(got)-1]; last.End != len(text) || last.Rule != "github-pat" {
		t.Errorf("last finding %+v, want github-pat ending at %d", last, len(text))
	}
}

func cleanLine(r *rand.Rand) string {
	words := strings.Fields("the handler now retries a request when upstream returns transient error and records each attempt func return nil if err != len(s) := range")
	var b strings.Builder
	for range 4 + r.IntN(10) {
		b.WriteString(words[r.IntN(len(words))] + " ")
	}
	b.WriteString("\n")
	return b.String()
}

// TestDetectReaderKnownValueAcrossEdge: a known value longer than the
// default overlap widens it, so the value is found across a window edge.
func TestDetectReaderKnownValueAcrossEdge(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	known := randomString(r, "abcdefghijklmnopqrstuvwxyz0123456789", 100<<10)
	e := mustNew(t, Options{Known: []string{known}})
	// It starts before the second window does and ends after the first
	// window's end: only a widened overlap holds it whole.
	text := strings.Repeat("plain words\n", (streamWindow-90<<10)/12) + known + "\nthe end\n"
	got := collectStream(t, e, strings.NewReader(text), 0, 0, 0)
	i := strings.Index(text, known)
	want := []Finding{{Rule: RuleKnownValue, Start: i, End: i + len(known)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// lazyText yields n bytes of clean lines without holding them, then tail.
type lazyText struct {
	n    int
	line []byte
	tail []byte
	sent int
	peak uint64
}

func (l *lazyText) Read(p []byte) (int, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	l.peak = max(l.peak, ms.HeapAlloc)
	if l.sent >= l.n+len(l.tail) {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && l.sent < l.n {
		c := copy(p[k:], l.line[l.sent%len(l.line):])
		c = min(c, l.n-l.sent)
		k += c
		l.sent += c
	}
	if l.sent >= l.n && k < len(p) {
		c := copy(p[k:], l.tail[l.sent-l.n:])
		k += c
		l.sent += c
	}
	return k, nil
}

// TestDetectReaderBoundedMemory: 64 MiB with a token at the very end is
// scanned whole while the heap stays a few windows large.
func TestDetectReaderBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("scans 64 MiB")
	}
	tok := "gh" + "p_" + randomString(rand.New(rand.NewPCG(31, 4)), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 36)
	const n = 64 << 20
	l := &lazyText{n: n, line: []byte("func f(s string) error { return nil } // the handler retries\n"), tail: []byte("\ntoken " + tok + "\n")}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	got := collectStream(t, mustNew(t, Options{}), l, 0, 0, 0)
	want := []Finding{{Rule: "github-pat", Start: n + 7, End: n + 7 + len(tok)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if grew := l.peak - min(l.peak, before.HeapAlloc); grew > 48<<20 {
		t.Errorf("heap grew by %d MiB while scanning %d MiB: not bounded by the window", grew>>20, n>>20)
	}
}

// TestDetectReaderErrors: a read error, an emit error and an exhausted
// budget each stop the scan with an error (the caller fails closed).
func TestDetectReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	e := mustNew(t, Options{})
	r := io.MultiReader(strings.NewReader(strings.Repeat("x ", 1<<20)), errReader{boom})
	if err := e.DetectReader(r, func(Finding) error { return nil }); !errors.Is(err, boom) {
		t.Errorf("read error: got %v", err)
	}
	text := "gh" + "p_" + strings.Repeat("aB3", 12) + " and more\n"
	if err := e.DetectReader(strings.NewReader(text), func(Finding) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("emit error: got %v", err)
	}
	small := mustNew(t, Options{Budget: NewBudget(3 << 20)})
	big := bytes.Repeat([]byte("plain words\n"), 1<<20)
	if err := small.DetectReader(bytes.NewReader(big), func(Finding) error { return nil }); !errors.Is(err, ErrBudget) {
		t.Errorf("budget: got %v, want ErrBudget", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestDetectReaderSmallInputs: on inputs that fit one call, the stream
// reports what Detect reports (the hostile and precision shapes included).
func TestDetectReaderSmallInputs(t *testing.T) {
	e := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(31, 5))
	ins := append([]string{"", "x", "\xe2\x80"}, streamSecrets(r)...)
	for _, sh := range hostileShapes {
		ins = append(ins, sh.gen(64<<10))
	}
	for _, in := range ins {
		want, err := e.Detect(in)
		if err != nil {
			t.Fatal(err)
		}
		got := collectStream(t, e, strings.NewReader(in), 0, 0, 0)
		if !slices.Equal(want, got) {
			t.Errorf("%.40q: Detect %d findings, stream %d", in, len(want), len(got))
		}
	}
}
