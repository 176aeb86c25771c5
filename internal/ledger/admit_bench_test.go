package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// loopEnv makes a child admit in a loop instead of holding one run: it
// reserves FIXRAIL_LEDGER_LOOP findings one after another, holding each a
// moment and settling it, and prints "done OK EXHAUSTED ERRORS".
const loopEnv = "FIXRAIL_LEDGER_LOOP"

func loopChild() int {
	var lim Limits
	if err := json.Unmarshal([]byte(os.Getenv("FIXRAIL_LEDGER_LIMITS")), &lim); err != nil {
		fmt.Println("error", err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv(loopEnv))
	dir, _ := os.MkdirTemp("", "fxl")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, err := Open(ctx, os.Getenv("FIXRAIL_LEDGER_URL"), dir, lim)
	if err != nil {
		fmt.Println("error", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	bufio.NewReader(os.Stdin).ReadString('\n') // the parent's go: every child starts at once
	ok, exhausted, failed := 0, 0, 0
	for i := range n {
		r := req(os.Getenv("FIXRAIL_LEDGER_FINDING") + "-" + strconv.Itoa(i))
		res, err := l.Reserve(ctx, r)
		var ee *ExhaustedError
		switch {
		case err == nil:
			ok++
			time.Sleep(2 * time.Millisecond) // in flight a moment, so the concurrency cap is contended
			if _, err := res.Settle(ctx, Outcome{Terminal: "DRAFT-PR", Reason: "fixed", CostUSD: 1, CostKnown: true, Turns: 10, TurnsKnown: true, Now: t0}); err != nil {
				failed++
			}
		case errors.As(err, &ee):
			exhausted++
		default:
			failed++
		}
	}
	fmt.Println("done", ok, exhausted, failed)
	return 0
}

// BenchmarkAdmissions16 is the shared ledger under load: 16 processes
// admitting at once, each 25 runs in a loop (reserve, hold 2 ms, settle),
// against a day cap of 300 runs and a concurrency cap of 4. It reports
// admissions per second, and fails if any cap was overshot: more admitted
// than the day cap, the ledger's count not the children's, or more than 4
// in flight at any sample the parent took while they ran.
//
//	go test -run '^$' -bench Admissions16 -benchtime 1x ./internal/ledger/
func BenchmarkAdmissions16(b *testing.B) {
	const procs, each, dayRuns, inFlight = 16, 25, 300, 4
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			for range b.N {
				url := be.fresh(b)
				lim := roomy()
				lim.Global.Runs = dayRuns
				lim.ConcurrentGlobal = inFlight
				l, err := Open(context.Background(), url, b.TempDir(), lim)
				if err != nil {
					b.Fatal(err)
				}
				limJSON, _ := json.Marshal(lim)
				type kid struct {
					cmd *exec.Cmd
					in  *os.File
					out *bufio.Scanner
				}
				var kids []kid
				for i := range procs {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), loopEnv+"="+strconv.Itoa(each), "FIXRAIL_LEDGER_URL="+url,
						"FIXRAIL_LEDGER_FINDING="+fmt.Sprint("p", i), "FIXRAIL_LEDGER_LIMITS="+string(limJSON))
					cmd.Stderr = os.Stderr
					r, w, _ := os.Pipe()
					cmd.Stdin = r
					out, _ := cmd.StdoutPipe()
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					r.Close()
					kids = append(kids, kid{cmd, w, bufio.NewScanner(out)})
				}
				time.Sleep(500 * time.Millisecond) // every child open, at its barrier
				var peak int
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						rep, err := l.Report(context.Background(), req("x"))
						if err == nil {
							for _, s := range rep.Scopes {
								if s.Scope == "global" {
									peak = max(peak, s.InFlight)
								}
							}
						}
						time.Sleep(time.Millisecond)
					}
				})
				t0w := time.Now()
				for _, k := range kids {
					k.in.WriteString("go\n")
				}
				admitted, exhausted, failed := 0, 0, 0
				for _, k := range kids {
					if !k.out.Scan() {
						b.Fatal("a child printed nothing")
					}
					var ok, ex, fl int
					if _, err := fmt.Sscanf(k.out.Text(), "done %d %d %d", &ok, &ex, &fl); err != nil {
						b.Fatalf("child: %q", k.out.Text())
					}
					admitted, exhausted, failed = admitted+ok, exhausted+ex, failed+fl
					k.in.Close()
					k.cmd.Wait()
				}
				took := time.Since(t0w)
				close(stop)
				wg.Wait()
				rep, err := l.Report(context.Background(), req("x"))
				if err != nil {
					b.Fatal(err)
				}
				var runs int
				for _, s := range rep.Scopes {
					if s.Scope == "global" {
						runs = s.Runs
					}
				}
				if failed > 0 || admitted > dayRuns || runs != admitted || peak > inFlight || admitted+exhausted != procs*each {
					b.Fatalf("admitted %d (ledger counts %d, cap %d), exhausted %d, errors %d, peak in flight %d (cap %d)", admitted, runs, dayRuns, exhausted, failed, peak, inFlight)
				}
				b.ReportMetric(float64(admitted)/took.Seconds(), "admissions/s")
				b.ReportMetric(float64(admitted+exhausted)/took.Seconds(), "decisions/s")
				b.ReportMetric(float64(admitted), "admitted")
				b.ReportMetric(float64(peak), "peak-in-flight")
			}
		})
	}
}
