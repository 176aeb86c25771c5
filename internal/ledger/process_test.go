package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child is this test binary re-executed to hold a reservation in a
// process of its own: it reserves, prints the verdict on one line, then
// holds (without settling) until its stdin closes or it is killed.
const childEnv = "FIXRAIL_LEDGER_TEST_CHILD"

func child() int {
	var lim Limits
	if err := json.Unmarshal([]byte(os.Getenv("FIXRAIL_LEDGER_LIMITS")), &lim); err != nil {
		fmt.Println("error", err)
		return 1
	}
	ms, _ := strconv.ParseInt(os.Getenv("FIXRAIL_LEDGER_NOW"), 10, 64)
	r := req(os.Getenv("FIXRAIL_LEDGER_FINDING"))
	r.Now = time.UnixMilli(ms).UTC()
	dir, _ := os.MkdirTemp("", "fxl")
	defer os.RemoveAll(dir)
	in := bufio.NewReader(os.Stdin)
	if os.Getenv("FIXRAIL_LEDGER_BARRIER") != "" {
		// Wait for the parent's go, so that every child opens at once.
		in.ReadString('\n')
	}
	l, err := Open(context.Background(), os.Getenv("FIXRAIL_LEDGER_URL"), dir, lim)
	if err == nil {
		_, err = l.Reserve(context.Background(), r)
	}
	var ee *ExhaustedError
	switch {
	case err == nil:
		fmt.Println("ok")
	case errors.As(err, &ee):
		fmt.Println("exhausted", ee.Scope, ee.Measure)
	case errors.Is(err, ErrInFlight):
		fmt.Println("inflight")
	default:
		fmt.Println("error", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	io.Copy(io.Discard, in)
	return 0
}

type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  chan string
}

func spawn(t *testing.T, url, finding string, lim Limits, now time.Time, env ...string) *proc {
	t.Helper()
	limJSON, _ := json.Marshal(lim)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "FIXRAIL_LEDGER_URL="+url, "FIXRAIL_LEDGER_FINDING="+finding,
		"FIXRAIL_LEDGER_LIMITS="+string(limJSON), "FIXRAIL_LEDGER_NOW="+strconv.FormatInt(now.UnixMilli(), 10))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: in, line: make(chan string, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			p.line <- sc.Text()
		} else {
			p.line <- "no output"
		}
		io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return p
}

func (p *proc) verdict(t *testing.T) string {
	t.Helper()
	select {
	case l := <-p.line:
		return l
	case <-time.After(2 * time.Minute):
		t.Fatal("child gave no verdict")
		return ""
	}
}

func TestProcessesAdmitExactlyTheCap(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url := b.fresh(t)
			lim := roomy()
			lim.Global.CostUSD = 3
			// Create the schema first so that the children race on the
			// reservation, not on the migration.
			l := open(t, url, lim)
			var ps []*proc
			for i := range 8 {
				ps = append(ps, spawn(t, url, fmt.Sprint("p", i), lim, t0))
			}
			got := map[string]int{}
			for _, p := range ps {
				got[p.verdict(t)]++
			}
			if got["ok"] != 3 || got["exhausted global cost_usd"] != 5 {
				t.Fatalf("verdicts %v; want 3 ok and 5 exhausted", got)
			}
			s := scopeOf(t, l, req("x"), "global")
			if s.ReservedCostUSD+s.SpentCostUSD > 3 || s.Runs != 3 {
				t.Fatalf("scope %+v: over the cap or miscounted", s)
			}
		})
	}
}

func TestKilledHolderIsChargedAndFreed(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url := b.fresh(t)
			lim := roomy()
			l := open(t, url, lim)
			p := spawn(t, url, "k", lim, t0)
			if v := p.verdict(t); v != "ok" {
				t.Fatalf("holder: %s", v)
			}
			// Alive, the holder keeps the finding.
			if _, err := l.Reserve(context.Background(), req("k")); !errors.Is(err, ErrInFlight) {
				t.Fatalf("while the holder lives: %v, want in flight", err)
			}
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			p.cmd.Wait()
			mustReserve(t, l, req("k"))
			s := scopeOf(t, l, req("k"), "global")
			if s.SpentCostUSD != 1 || s.SpentTurns != 10 || s.Runs != 2 || s.InFlight != 1 {
				t.Fatalf("after the kill: %+v, want the dead run charged its caps", s)
			}
		})
	}
}

// Eight processes that each open a ledger that does not exist yet race on
// creating it (the journal-mode switch and the schema), not only on the
// reservation: every one must come back admitted or exhausted, none
// unreadable. The first run on a fresh clone is exactly this.
func TestProcessesRaceAFreshLedger(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for round := range 5 {
				url := b.fresh(t)
				lim := roomy()
				lim.Global.CostUSD = 3
				var ps []*proc
				for i := range 8 {
					ps = append(ps, spawn(t, url, fmt.Sprint("r", round, "p", i), lim, t0, "FIXRAIL_LEDGER_BARRIER=1"))
				}
				time.Sleep(200 * time.Millisecond) // let every child reach the barrier
				for _, p := range ps {
					io.WriteString(p.stdin, "go\n")
				}
				got := map[string]int{}
				for _, p := range ps {
					got[p.verdict(t)]++
				}
				if got["ok"] != 3 || got["exhausted global cost_usd"] != 5 {
					t.Fatalf("round %d: verdicts %v; want 3 ok and 5 exhausted", round, got)
				}
			}
		})
	}
}
