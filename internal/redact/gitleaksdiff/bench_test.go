package gitleaksdiff

// Throughput beside gitleaks (issue 3, "Tests and measures").
//
//   - BenchmarkCleanDiff: one generated 10 MB clean diff (corpus_test.go).
//     fixrail scans it in one Detect call (MaxInput raised above its size,
//     so nothing is withheld) and, as fixrail-redact, one Redact call.
//     gitleaks scans it the way `gitleaks stdin` does: sources.File cuts
//     the stream into ~100 KB fragments and each goes through
//     Detector.DetectContext with the default config and MaxDecodeDepth 5.
//   - BenchmarkHostile: each hostile shape. fixrail at 1 MB and at 100 KB
//     in process. gitleaks at 100 KB (one fragment, DetectString), and at
//     1 MB (chunked like the CLI) only when GITLEAKSDIFF_GITLEAKS_1MB=1,
//     each in a child process killed after 10 s: gitleaks cannot be
//     interrupted inside a regexp call, so a goroutine with a timeout would
//     keep burning CPU under the next benchmark. A killed run is recorded
//     with the metric killed=1 and the bounds as ns/op (10 s) and MB/s
//     (size/10 s): read it as "> 10 s". For the child runs ns/op and MB/s
//     are the child's own timing of the scan, without process start-up and
//     detector construction.
//
// Run ./bench.sh for the MB/s table and the fixrail/gitleaks ratios.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/sources"
)

const (
	childEnv        = "GITLEAKSDIFF_CHILD" // "<shape>@<bytes>": run one gitleaks scan and exit
	gitleaks1MBEnv  = "GITLEAKSDIFF_GITLEAKS_1MB"
	gitleaksTimeout = 10 * time.Second
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(gitleaksChild(spec))
	}
	os.Exit(m.Run())
}

// gitleaksCLIScan scans s as `gitleaks stdin` does and returns the number
// of findings.
func gitleaksCLIScan(ctx context.Context, d *detect.Detector, s string) (int, error) {
	n := 0
	err := (&sources.File{Content: strings.NewReader(s)}).Fragments(ctx, func(f sources.Fragment, err error) error {
		if err != nil {
			return err
		}
		//lint:ignore SA1019 DetectContext takes a detect.Fragment in v8; sources.Fragment replaces it in v9
		n += len(d.DetectContext(ctx, detect.Fragment(f)))
		return nil
	})
	return n, err
}

func gitleaksKeywords(d *detect.Detector) []string {
	var ks []string
	for k := range d.Config.Keywords {
		ks = append(ks, k)
	}
	return ks
}

// gitleaksChild is the child process: it times one gitleaks scan of one
// shape and prints "ns=<n> findings=<k>".
func gitleaksChild(spec string) int {
	name, size, ok := strings.Cut(spec, "@")
	n, err := strconv.Atoi(size)
	if !ok || err != nil {
		fmt.Fprintf(os.Stderr, "bad %s=%q\n", childEnv, spec)
		return 2
	}
	d, err := gitleaksDetector()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var in string
	for _, sh := range hostileShapes(gitleaksKeywords(d)) {
		if sh.name == name {
			in = sh.gen(n)
		}
	}
	if in == "" {
		fmt.Fprintf(os.Stderr, "unknown shape %q\n", name)
		return 2
	}
	start := time.Now()
	var k int
	if n <= 128<<10 {
		k = len(d.DetectString(in))
	} else if k, err = gitleaksCLIScan(context.Background(), d, in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("ns=%d findings=%d\n", time.Since(start).Nanoseconds(), k)
	return 0
}

// runGitleaksChild runs one child scan; timedOut is set when it was killed.
func runGitleaksChild(b *testing.B, name string, n int) (ns int64, findings int, timedOut bool) {
	ctx, cancel := context.WithTimeout(context.Background(), gitleaksTimeout+5*time.Second) // + start-up
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s@%d", childEnv, name, n))
	cmd.WaitDelay = time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return 0, 0, true
	}
	if err != nil {
		b.Fatalf("gitleaks child %s@%d: %v\n%s", name, n, err, errb.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "ns=%d findings=%d", &ns, &findings); err == nil {
			if time.Duration(ns) > gitleaksTimeout {
				return ns, findings, true
			}
			return ns, findings, false
		}
	}
	b.Fatalf("gitleaks child %s@%d printed no timing:\n%s", name, n, out.String())
	return 0, 0, false
}

func BenchmarkCleanDiff(b *testing.B) {
	in := cleanDiff10MB()
	b.Run("fixrail", func(b *testing.B) {
		e := newEngine(b, len(in)+1)
		b.SetBytes(int64(len(in)))
		var k int
		for b.Loop() {
			fs, err := e.Detect(in)
			if err != nil {
				b.Fatal(err)
			}
			k = len(fs)
		}
		b.ReportMetric(float64(k), "findings")
	})
	b.Run("fixrail-redact", func(b *testing.B) {
		e := newEngine(b, len(in)+1)
		b.SetBytes(int64(len(in)))
		var k int
		for b.Loop() {
			_, fs, err := e.Redact(in)
			if err != nil {
				b.Fatal(err)
			}
			k = len(fs)
		}
		b.ReportMetric(float64(k), "findings")
	})
	b.Run("gitleaks", func(b *testing.B) {
		d := newGitleaks(b)
		b.SetBytes(int64(len(in)))
		var k int
		for b.Loop() {
			var err error
			if k, err = gitleaksCLIScan(context.Background(), d, in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(k), "findings")
	})
}

func BenchmarkHostile(b *testing.B) {
	shapes := hostileShapes(gitleaksKeywords(newGitleaks(b)))
	gitleaksSizes := []int{100 << 10}
	if os.Getenv(gitleaks1MBEnv) == "1" {
		gitleaksSizes = append(gitleaksSizes, 1<<20)
	}
	for _, sh := range shapes {
		for _, n := range []int{1 << 20, 100 << 10} {
			in := sh.gen(n)
			b.Run(fmt.Sprintf("%s/fixrail-%s", sh.name, sizeName(n)), func(b *testing.B) {
				e := newEngine(b, 2<<20)
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					if _, err := e.Detect(in); err != nil {
						b.Fatal(err)
					}
				}
			})
			if n == 1<<20 {
				b.Run(fmt.Sprintf("%s/fixrail-redact-%s", sh.name, sizeName(n)), func(b *testing.B) {
					e := newEngine(b, 2<<20)
					b.SetBytes(int64(len(in)))
					for b.Loop() {
						if _, _, err := e.Redact(in); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
		for _, n := range gitleaksSizes {
			b.Run(fmt.Sprintf("%s/gitleaks-%s", sh.name, sizeName(n)), func(b *testing.B) {
				var total int64
				var findings int
				for range b.N {
					ns, k, timedOut := runGitleaksChild(b, sh.name, n)
					if timedOut {
						// Recorded, not skipped: ns/op and MB/s are then the
						// bounds (> 10 s, < size/10 s) and killed=1.
						b.Logf("gitleaks did not finish %s of %s within %v (killed)", sizeName(n), sh.name, gitleaksTimeout)
						b.ReportMetric(float64(gitleaksTimeout.Nanoseconds()), "ns/op")
						b.ReportMetric(float64(n)/gitleaksTimeout.Seconds()/1e6, "MB/s")
						b.ReportMetric(1, "killed")
						return
					}
					total += ns
					findings = k
				}
				perOp := float64(total) / float64(b.N)
				b.ReportMetric(perOp, "ns/op")
				b.ReportMetric(float64(n)/(perOp/1e9)/1e6, "MB/s")
				b.ReportMetric(float64(findings), "findings")
				b.ReportMetric(0, "killed")
			})
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%dKB", n>>10)
}

// TestCleanDiffIsClean checks the benchmark's clean text: fixrail must
// find nothing in the whole 10 MB (a finding would be a false positive, or
// a generator that wrote something secret-shaped), and the size and shape
// must be what the benchmark claims. gitleaks' findings on the first
// megabyte are reported (the whole would take gitleaks ~15 s).
func TestCleanDiffIsClean(t *testing.T) {
	full := cleanDiff10MB()
	if len(full) < 10<<20-4096 || !strings.HasPrefix(full, "commit ") || !strings.Contains(full, "\ndiff --git a/") {
		t.Fatalf("cleanDiff: unexpected output (%d bytes)", len(full))
	}
	in := cleanDiff(1 << 20)
	if !strings.HasPrefix(full, in) {
		t.Fatal("cleanDiff is not deterministic")
	}
	in = full
	fs, err := newEngine(t, len(in)+1).Detect(in)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		if i == 10 {
			t.Errorf("… %d fixrail findings in all", len(fs))
			break
		}
		line := in[strings.LastIndexByte(in[:f.Start], '\n')+1 : f.End]
		t.Errorf("fixrail finding %s at %d: %q", f.Rule, f.Start, abridge(line, 160))
	}
	n, err := gitleaksCLIScan(context.Background(), newGitleaks(t), in[:strings.LastIndexByte(in[:1<<20], '\n')+1])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean diff: fixrail %d findings in 10 MB; gitleaks %d findings in the first 1 MB", len(fs), n)
}

// TestHostileShapesBuild keeps the shapes honest without timing them:
// each builds the size asked for.
func TestHostileShapesBuild(t *testing.T) {
	for _, sh := range hostileShapes(gitleaksKeywords(newGitleaks(t))) {
		if n := len(sh.gen(100 << 10)); n < 100<<10-16 || n > 100<<10+16 {
			t.Errorf("%s: %d bytes, want 100 KB", sh.name, n)
		}
	}
}
