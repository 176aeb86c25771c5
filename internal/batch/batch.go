// Package batch takes many findings to their terminal states in one
// process: it reads a batch source, orders the findings so that two that
// touch the same file or manifest never run at once (S7), runs at most N
// at a time through a caller-supplied Exec (the CLI starts one `fixrail
// run` per finding, so each run keeps its own process, lock, ledger
// admission and containment), and reduces the runs to a summary and one
// exit code, the most severe of its runs. It sits above the pipeline and
// below the CLI, and names neither.
package batch

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Item is one finding of a batch.
type Item struct {
	// ID is the finding's id (already pathguard.SafeName by intake).
	ID string `json:"id"`
	// Title is untrusted text, for the summary only.
	Title string `json:"title,omitempty"`
	// Kind says how a run takes it: "report" (run --report), "vuln"
	// (run --vuln), "sarif" (run --sarif File --result ID), "issue" or
	// "alert" (by number on Repo).
	Kind string `json:"kind"`
	// File is the file a run reads the finding from: the source's own
	// file, or a one-finding file split from it.
	File string `json:"-"`
	// Keys are what the finding is known to touch before any plan
	// exists — "file:<path>", "manifest:<path>", "package:<eco>/<name>":
	// findings sharing a key run in sequence, in source order (S7).
	Keys []string `json:"keys,omitempty"`
	// Repo is the repository the finding belongs to ("" for the one the
	// batch runs in); many-repository batches group by it.
	Repo string `json:"repo,omitempty"`
	// Base is the base branch the listing was scanned against (a scan's
	// "base"): the run works the same one unless --base says otherwise.
	Base string `json:"base,omitempty"`
	// Listed is set for a finding the source holds that no run may take
	// (a scanner's result sorted "unfixable" or "posture"), Why says why:
	// it is summarised, never run.
	Listed string `json:"listed,omitempty"`
	Why    string `json:"why,omitempty"`
}

// Runnable splits items into those a run takes and those only listed.
func Runnable(items []Item) (run, listed []Item) {
	for _, it := range items {
		if it.Listed != "" {
			listed = append(listed, it)
		} else {
			run = append(run, it)
		}
	}
	return run, listed
}

// Result is how one finding's run ended.
type Result struct {
	Item     Item             `json:"finding"`
	Terminal verdict.Terminal `json:"terminal,omitempty"`
	Reason   string           `json:"reason,omitempty"`
	Detail   string           `json:"detail,omitempty"`
	PR       string           `json:"pr,omitempty"`
	Report   string           `json:"report,omitempty"`
	Log      string           `json:"log,omitempty"`
	// Exit is the run's process exit code.
	Exit int `json:"exit"`
	// TimedOut is set for a run the batch stopped at its time limit
	// (--run-timeout): its row is HALT wall-clock and Error says so.
	TimedOut bool `json:"timed_out,omitempty"`
	// Error is why the run produced no terminal state (a usage or
	// internal error: exit 2 or 1), or why its exit disagrees with the
	// one it reported (killed after printing it); "" otherwise.
	Error    string        `json:"error,omitempty"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	// After names the findings this one waited for (a shared key).
	After []string `json:"after,omitempty"`
}

// Exec runs one finding to a terminal state. It must fill Terminal,
// Reason and Exit (or Error and Exit) and honour ctx.
type Exec func(ctx context.Context, it Item) Result

// Options are a batch's knobs.
type Options struct {
	// Parallel is the most runs at once; at least 1.
	Parallel int
	// Progress gets a line per finding as it starts and as it ends.
	Progress io.Writer
	// Now is the clock (tests).
	Now func() time.Time
}

// Chains groups items that share a key, transitively, each chain in
// source order; chains are in the order of their first item. A chain is
// the unit of scheduling: its items run one after another.
func Chains(items []Item) [][]int {
	parent := make([]int, len(items))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[string]int{}
	for i, it := range items {
		for _, k := range it.Keys {
			key := it.Repo + "\x00" + k // a path is one repository's
			if j, ok := owner[key]; ok {
				a, b := find(i), find(j)
				if a != b {
					parent[max(a, b)] = min(a, b)
				}
			} else {
				owner[key] = i
			}
		}
	}
	byRoot := map[int]int{}
	var chains [][]int
	for i := range items {
		r := find(i)
		c, ok := byRoot[r]
		if !ok {
			c = len(chains)
			byRoot[r] = c
			chains = append(chains, nil)
		}
		chains[c] = append(chains[c], i)
	}
	return chains
}

// Run takes every item to a result, at most o.Parallel at once, items
// sharing a key in sequence. The results are in source order. A cancelled
// ctx still yields a result per item: the ones never started say so.
func Run(ctx context.Context, items []Item, exec Exec, o Options) []Result {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	results := make([]Result, len(items))
	chains := Chains(items)
	var mu sync.Mutex // the progress writer and the done count
	done := 0
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(o.Progress, format, args...)
	}
	work := make(chan []int)
	var wg sync.WaitGroup
	for range min(o.Parallel, len(chains)) {
		wg.Go(func() {
			for chain := range work {
				var before []string
				for _, i := range chain {
					it := items[i]
					if ctx.Err() != nil {
						results[i] = Result{Item: it, Exit: exitInternal, Error: "not started: the batch was stopped", After: slices.Clone(before)}
					} else {
						say("batch: start %s%s\n", untrusted.OneLine(it.ID), waitNote(before))
						t0 := o.Now()
						r := exec(ctx, it)
						r.Item, r.Started, r.Duration = it, t0, o.Now().Sub(t0)
						r.After = slices.Clone(before)
						results[i] = r
					}
					mu.Lock()
					done++
					n := done
					mu.Unlock()
					say("batch: [%d/%d] %s\n", n, len(items), progressLine(results[i]))
					before = append(before, it.ID)
				}
			}
		})
	}
	for _, c := range chains {
		work <- c
	}
	close(work)
	wg.Wait()
	return results
}

func waitNote(before []string) string {
	if len(before) == 0 {
		return ""
	}
	return " (after " + untrusted.OneLine(before[len(before)-1]) + ": same file or manifest)"
}

func progressLine(r Result) string {
	s := untrusted.OneLine(r.Item.ID) + " "
	if r.Terminal == "" {
		s += fmt.Sprintf("no terminal state (exit %d): %s", r.Exit, untrusted.OneLine(r.Error))
	} else {
		s += fmt.Sprintf("%s (%s)", r.Terminal, untrusted.OneLine(r.Reason))
		if r.Error != "" {
			s += ": " + untrusted.OneLine(r.Error)
		}
	}
	s += " in " + r.Duration.Round(time.Millisecond).String()
	if r.PR != "" {
		s += " → " + untrusted.OneLine(r.PR)
	}
	return s
}

// Process exit codes, as the CLI's table has them.
const (
	exitOK       = 0
	exitInternal = 1
)

// Severity orders results for the batch's exit code: the four terminal
// states as verdict orders them, and above them a run that ended in no
// terminal state at all (it could not start, or fixrail failed), so a
// broken run can never read as a clean one.
func Severity(r Result) int {
	if r.Terminal == "" {
		return len(verdict.Terminals) + 1
	}
	return r.Terminal.Severity()
}

// ExitCode is the batch's exit code: that of its most severe run; 0 for
// an empty batch. Between runs as severe, the higher code: a run killed
// after printing DRAFT-PR (exit 1) is not hidden by a clean one that the
// source happened to list first.
func ExitCode(results []Result) int {
	worst, code := -1, exitOK
	for _, r := range results {
		if s := Severity(r); s > worst || s == worst && r.Exit > code {
			worst, code = s, r.Exit
		}
	}
	if worst > len(verdict.Terminals) && code == exitOK {
		return exitInternal // no terminal and a clean exit is a broken run
	}
	return code
}
