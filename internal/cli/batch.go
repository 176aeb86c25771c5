package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/batch"
	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/verdict"
)

// runMoreOpts are run's batch, dry-run and notification flags: kept here,
// beside the code that reads them, so run.go only hands them on.
type runMoreOpts struct {
	batch         string
	parallel      int
	reposParallel int
	dryRun        bool
	keep          bool
	runTimeout    time.Duration
}

func (x *runMoreOpts) flags(fs *flag.FlagSet) {
	fs.StringVar(&x.batch, "batch", "", "run every finding of a batch `source`: a scan's JSON, a vulnerable-dependency list, a scanner's SARIF log, a report file, or a directory of them")
	fs.IntVar(&x.parallel, "parallel", 0, "with --batch: at most `N` runs at once (default: the ledger's budget.concurrent caps; the ledger still admits each run)")
	fs.IntVar(&x.reposParallel, "repos-parallel", 0, "with --batch over a many-repository scan: at most `N` repositories cloned and worked at once (default 3)")
	fs.BoolVar(&x.keep, "keep", false, "with --batch over a many-repository scan: keep each whole clone after its runs (by default only its .fixrail/runs, batches and outbox are kept)")
	fs.DurationVar(&x.runTimeout, "run-timeout", 0, "with --batch: stop a run still going after `D` (SIGTERM to its process group, SIGKILL 30s later) and record it HALT wall-clock, timed out (default: budget.wall_clock plus 10m; never shorter than budget.wall_clock)")
	fs.BoolVar(&x.dryRun, "dry-run", false, "plan only: the fix phase's agent gets read tools only, the run stops after P3 (HALT dry-run) and the forge publishes nothing")
}

// runSink is the webhook a run reports to, when FIXRAIL_WEBHOOK_URL is set.
type runSink struct{ wh *events.Webhook }

// webhook reads the webhook's settings from the environment (never from
// fixrail.yaml); a URL without a signing key is a usage error, before
// anything runs.
func (x *runMoreOpts) webhook() (*runSink, error) {
	cfg, ok, err := events.WebhookFromEnv(os.LookupEnv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if !ok {
		return &runSink{}, nil
	}
	return &runSink{wh: events.NewWebhook(cfg)}, nil
}

// close delivers what is queued, for at most events.WebhookDrain; what
// was not delivered is a warning on stderr, never the run's outcome.
func (s *runSink) close(stderr io.Writer) {
	if s == nil || s.wh == nil {
		return
	}
	if err := s.wh.Close(events.WebhookDrain); err != nil {
		fmt.Fprintf(stderr, "fixrail: warning: %v\n", err)
	}
	s.wh = nil
}

// apply hands a single run its dry-run guards and its sink. The forge is
// wrapped here, in the composition root, so the third guard does not
// depend on the pipeline reading a flag.
func (x *runMoreOpts) apply(p *pipeline.Params, s *runSink) {
	if x.dryRun {
		p.DryRun = pipeline.DryRun{ReadOnlyAgent: true, StopAfterPlan: true}
		p.Forge = dryRunForge{forge.DryRun{Reader: p.Forge}}
	}
	if s != nil && s.wh != nil {
		p.Sink = s.wh
	}
}

// dryRunForge is forge.DryRun as the pipeline's Forge.
type dryRunForge struct{ forge.DryRun }

var _ pipeline.Forge = dryRunForge{}

// batchOnly are run's flags a batch reads itself; every other flag given
// is passed on to each finding's run unchanged.
var batchOnly = map[string]bool{"batch": true, "parallel": true, "repos-parallel": true, "keep": true, "run-timeout": true, "json": true, "repo": true, "dir": true,
	"report": true, "vuln": true, "issue": true, "alert": true, "event": true, "group": true}

// runBatch runs every finding of the source, each in a `fixrail run`
// process of its own: its own lock, ledger admission, containment and
// report, exactly as when run one by one.
func runBatch(ctx context.Context, stdio Stdio, fs *flag.FlagSet, o *runOpts) error {
	set := map[string]bool{}
	var pass []string
	fs.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		if !batchOnly[f.Name] {
			pass = append(pass, "--"+f.Name+"="+f.Value.String())
		}
	})
	for _, f := range []string{"report", "vuln", "issue", "alert", "event"} {
		if set[f] {
			return usagef("--batch names the findings; --%s names one more (pass one or the other)", f)
		}
	}
	if config.Mode(o.mode) == config.Interactive {
		return usagef("a batch has no terminal to confirm at: --mode interactive takes one finding at a time")
	}
	if o.x.parallel < 0 {
		return usagef("--parallel must be positive, not %d", o.x.parallel)
	}
	if o.x.runTimeout < 0 {
		return usagef("--run-timeout must be positive, not %s", o.x.runTimeout)
	}
	local := o.repo
	if set["dir"] {
		local = o.dir
	}
	// A scan's listing names its repositories: without --dir each is
	// cloned into a directory of its own (batch_clone.go); --dir is one
	// clone, so one repository. Read it without a state directory: it
	// splits nothing. Any item naming a repository decides, not the
	// first: the listing's order must not move a run from a fresh clone
	// into the local work tree.
	if items, err := batch.ReadSource(o.x.batch, batch.Intake{Split: func(string, []byte) (string, error) {
		return "", fmt.Errorf("not a scan's listing")
	}}); err == nil {
		switch repos := listingRepos(items); {
		case set["dir"] && len(repos) > 1:
			return usagef("--batch: the listing names %d repositories (%s); --dir is the clone of one (without --dir each is cloned)", len(repos), strings.Join(repos, ", "))
		case !set["dir"] && len(repos) > 0:
			if o.g.group != "" {
				return usagef("--group manifest groups a batch in one repository; a listing of several repositories is not grouped yet")
			}
			return runBatchClones(ctx, stdio, o, items, pass)
		}
	}
	if set["repos-parallel"] || set["keep"] {
		return usagef("--repos-parallel and --keep go with a batch over a scan's listing of several repositories")
	}
	// A grouping batch checks the signatures its stacked runs make (each
	// loads the key itself) with the key's public half; one that will not
	// load stops the batch before anything runs.
	var key *keys.Key
	var sink *runSink
	if o.g.group != "" {
		var err error
		if key, err = attestKey(o.attestKey, os.LookupEnv); err != nil {
			return err
		}
		// The group's publication is the batch's own event (each run
		// sends its own).
		if sink, err = o.x.webhook(); err != nil {
			return err
		}
		defer sink.close(stdio.Stderr)
	}
	parallel, dir, limits, err := batchSetup(ctx, local, o.base, o.x.parallel, o.x.runTimeout)
	if err != nil {
		return err
	}
	split := func(fid string, data []byte) (string, error) {
		if !pathguard.SafeName(fid) {
			return "", fmt.Errorf("finding id %q is not a safe name", fid)
		}
		p := filepath.Join(dir, fid+".finding.json")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		return p, errors.Join(err, f.Close())
	}
	// A SARIF log is sorted as run --sarif sorts it, against this
	// repository's work tree, base commit and scanners: (each run sorts it
	// again and refuses what is not to-fix).
	sortSARIF := func(name string, _ []byte) (*findings.SARIFScan, error) {
		setup, err := pipeline.Prepare(ctx, local, o.base)
		if err != nil {
			return nil, err
		}
		defer setup.Close()
		return readSARIFScan(ctx, setup, name)
	}
	items, err := batch.ReadSource(o.x.batch, batch.Intake{Split: split, SARIF: sortSARIF})
	if err != nil {
		return usagef("--batch: %v", err)
	}
	items, listed := batch.Runnable(items)
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate the fixrail binary: %w", err)
	}
	fmt.Fprintf(stdio.Stderr, "batch: %d finding(s) from %s, %d at a time, each stopped after %s; logs in %s\n", len(items), o.x.batch, parallel, limits.timeout, dir)
	run := func(ctx context.Context, it batch.Item, extra ...string) batch.Result {
		return runChild(ctx, exe, dir, append(childArgs(it, local, o.repo, set["repo"], pass), extra...), limits)
	}
	exec := func(ctx context.Context, it batch.Item) batch.Result { return run(ctx, it) }
	var grouped *groupBatch
	if o.g.group != "" {
		if grouped, err = newGroupBatch(ctx, local, o.base, dir, o.x.dryRun, key, items, run); err != nil {
			return err
		}
		if sink.wh != nil {
			grouped.sink = sink.wh
		}
		exec = grouped.g.Exec
	}
	t0 := time.Now()
	results := batch.Run(ctx, items, exec, batch.Options{Parallel: parallel, Progress: stdio.Stderr})
	if grouped != nil {
		grouped.publish(ctx, stdio.Stderr, results)
	}
	// The one-finding files split from the source were the runs' input
	// only (each run report holds its finding): the logs stay.
	for _, it := range items {
		if filepath.Dir(it.File) == dir && strings.HasSuffix(it.File, ".finding.json") {
			os.Remove(it.File)
		}
	}
	return finishBatch(stdio, o, results, listed, parallel, time.Since(t0))
}

// listingRepos are the repositories a listing's items name, in order.
func listingRepos(items []batch.Item) []string {
	var repos []string
	for _, it := range items {
		if it.Repo != "" && !slices.Contains(repos, it.Repo) {
			repos = append(repos, it.Repo)
		}
	}
	return repos
}

// finishBatch prints a batch's summary (and the job summary under
// Actions) and returns its exit.
func finishBatch(stdio Stdio, o *runOpts, results []batch.Result, listed []batch.Item, parallel int, took time.Duration) error {
	sum := batch.Summarise(o.x.batch, o.x.dryRun, parallel, took, results)
	sum.Listed = listed
	if err := stepSummary(os.LookupEnv, sum); err != nil {
		fmt.Fprintf(stdio.Stderr, "fixrail: warning: the job summary: %v\n", err)
	}
	if o.json {
		if err := writeJSON(stdio.Stdout, sum); err != nil {
			return err
		}
	} else {
		sum.Print(stdio.Stdout)
	}
	if sum.Exit == exitOK {
		return nil
	}
	return &codedError{msg: "batch", code: sum.Exit, shown: true}
}

// batchSetup reads a repository's committed config for a batch: the
// default width (the smaller concurrency cap; the runs read the config
// again, each on its own), each run's time limit (runTimeout), and a
// fresh directory for the batch's logs under its state directory.
func batchSetup(ctx context.Context, repo, base string, parallel int, timeout time.Duration) (int, string, childLimits, error) {
	setup, err := pipeline.Prepare(ctx, repo, base)
	if err != nil {
		return 0, "", childLimits{}, err
	}
	if parallel == 0 {
		c := setup.Config.Budget.Concurrent
		parallel = max(1, min(c.Repo, c.Global))
	}
	limits := childLimits{grace: childGrace}
	limits.timeout, err = runTimeout(timeout, setup.Config.Budget.WallClock)
	if err != nil {
		setup.Close()
		return 0, "", childLimits{}, err
	}
	batches, err := setup.StateDir("batches")
	setup.Close()
	if err != nil {
		return 0, "", childLimits{}, err
	}
	dir := filepath.Join(batches, time.Now().UTC().Format("20060102T150405Z")+"-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, "", childLimits{}, fmt.Errorf("batch directory: %w", err)
	}
	pruneBatches(batches, keptBatches)
	return parallel, dir, limits, nil
}

// runTimeoutMargin is how long past its budget.wall_clock a run may go on
// before the batch stops it: the run's clock starts after its setup and
// intake and stops before its teardown and notifications, and this is
// ledger.lease's default margin too, so a run stopped here had already
// outlived the default lease on its reservation.
const runTimeoutMargin = 10 * time.Minute

// runTimeout is how long one run of a batch may take: --run-timeout, or
// budget.wall_clock plus runTimeoutMargin. The run's own wall clock is
// its budget and ends it HALT wall-clock; the batch's limit is the
// backstop for a run whose clock failed or that hangs before starting
// it, so it is never shorter than the wall clock: a run within its
// budget is never cut off, and a run stopped at the limit has outlived
// its wall clock, which is what its row says.
func runTimeout(flag, wall time.Duration) (time.Duration, error) {
	if flag == 0 {
		return wall + runTimeoutMargin, nil
	}
	if flag < wall {
		return 0, usagef("--run-timeout %s is shorter than budget.wall_clock %s: a run's own wall clock ends it first; the batch's limit only stops one whose clock failed", flag, wall)
	}
	return flag, nil
}

// keptBatches is how many batch directories (each run's console log) a
// repository keeps; the run reports, in .fixrail/runs, are not touched.
const keptBatches = 20

var batchDirName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9]+$`) })

// pruneBatches removes all but the newest keep batch directories (by
// name, which is their start time). Best effort: what cannot be removed
// stays. Only fixrail's own names; a link is removed, never followed.
func pruneBatches(batches string, keep int) {
	ents, err := os.ReadDir(batches)
	if err != nil {
		return
	}
	var names []string
	for _, e := range ents {
		if batchDirName().MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, n := range names[:max(0, len(names)-keep)] {
		os.RemoveAll(filepath.Join(batches, n))
	}
}

// childArgs is one finding's `fixrail run` command line. A GitHub item
// (from a scan) runs by number on its repository, in the clone; a file
// item in the local repository.
func childArgs(it batch.Item, local, repo string, repoSet bool, pass []string) []string {
	args := []string{"run", "--json"}
	switch it.Kind {
	case "issue", "alert":
		args = append(args, "--repo", it.Repo, "--dir", local, "--"+it.Kind, it.File)
	case "vuln":
		args = append(args, "--vuln", it.File, "--repo", local)
	case "sarif":
		args = append(args, "--sarif", it.File, "--result", it.ID, "--repo", local)
	default:
		args = append(args, "--report", it.File, "--repo", local)
	}
	// A scan's listing names the base it was scanned against: its runs
	// work that base, unless --base (in pass) names one for all.
	if it.Base != "" && !slices.ContainsFunc(pass, func(a string) bool { return strings.HasPrefix(a, "--base=") }) {
		args = append(args, "--base", it.Base)
	}
	return append(args, pass...)
}

// childReport is the part of a run report a batch reads.
type childReport struct {
	Terminal verdict.Terminal `json:"terminal"`
	Reason   string           `json:"reason"`
	Detail   string           `json:"detail"`
	PR       string           `json:"pr"`
	Log      string           `json:"event_log"`
}

// childGrace is how long a run has, once the batch is stopped or the run
// timed out, to end itself (HALT interrupted, its reservation settled)
// before its process group is killed.
const childGrace = 30 * time.Second

// childLimits bound one run: timeout from its start (0: none), then grace
// between SIGTERM and SIGKILL.
type childLimits struct {
	timeout, grace time.Duration
}

// runChild runs one `fixrail run` and reads its report. Its stderr (the
// run's console, already through the redaction chokepoint) goes to a log
// file beside the batch; stdin is empty, so nothing waits on a person.
//
// The run is the leader of a process group of its own, so that what it
// started goes with it: a run still going after limits.timeout gets
// SIGTERM across its group, then SIGKILL across it limits.grace later,
// and its row is HALT wall-clock, marked timed out, with HALT's exit
// code, whatever it printed on the way down (unless that was ESCALATE:
// never milder than what the run said). A stopped batch SIGTERMs the run
// alone (it stops what it started, then settles), and kills its group
// after the grace.
func runChild(ctx context.Context, exe, dir string, args []string, limits childLimits) (res batch.Result) {
	name := "run"
	for i, a := range args {
		if (a == "--report" || a == "--vuln" || a == "--issue" || a == "--alert" || a == "--result") && i+1 < len(args) {
			name = strings.TrimPrefix(a, "--") + "-" + filepath.Base(args[i+1])
		}
	}
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return batch.Result{Exit: exitInternal, Error: "log file: " + err.Error()}
	}
	defer logf.Close()
	var stdout bytes.Buffer
	tail := &tailWriter{max: 2048}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if limits.timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, limits.timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(runCtx, exe, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(logf, tail)
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var killer *time.Timer
	var mu sync.Mutex
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		mu.Lock()
		// After the grace the whole group goes, whatever ignored SIGTERM.
		killer = time.AfterFunc(limits.grace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		mu.Unlock()
		if ctx.Err() != nil {
			// A stopped batch asks each run to stop as a signal would; the
			// run ends HALT interrupted and settles its reservation.
			return cmd.Process.Signal(syscall.SIGTERM)
		}
		return syscall.Kill(-pgid, syscall.SIGTERM)
	}
	// The backstop for a group that still holds the run's output open.
	cmd.WaitDelay = limits.grace + time.Second
	err = cmd.Run()
	mu.Lock()
	if killer != nil && killer.Stop() {
		// The run ended within its grace: what is left of its group
		// (nothing, if it stopped what it started) goes now. The group
		// id cannot be reused while any member lives.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	mu.Unlock()
	timedOut := ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded)
	res = batch.Result{Log: logPath, Exit: exitOK}
	if timedOut {
		defer timeoutRow(&res, limits.timeout) // on the row as returned
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			res.Exit, res.Error = exitInternal, err.Error()
			return res
		}
		res.Exit = ee.ExitCode()
		if res.Exit < 0 {
			res.Exit = exitInternal // killed by a signal
		}
	}
	var rep childReport
	if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil || rep.Terminal == "" {
		res.Error = lastLine(tail.String())
		if res.Error == "" {
			res.Error = "the run printed no report"
		}
		if res.Exit == exitOK {
			res.Exit = exitInternal
		}
		return res
	}
	res.Terminal, res.Reason, res.Detail, res.PR = rep.Terminal, rep.Reason, rep.Detail, rep.PR
	if want := terminalExit(rep.Terminal); res.Exit != want {
		// The report and the process disagree (killed after it printed, a
		// crash on the way out): the row says so, and the code is never
		// milder than the report's.
		res.Error = fmt.Sprintf("the run reported %s but exited %d (%s exits %d)", rep.Terminal, res.Exit, rep.Terminal, want)
		res.Exit = max(res.Exit, want)
	}
	if rep.Log != "" {
		res.Report = strings.TrimSuffix(rep.Log, ".ndjson") + ".json"
	}
	return res
}

// timeoutRow is the row of a run the batch stopped at its time limit:
// HALT wall-clock (the limit is never shorter than the run's wall clock)
// with HALT's exit code, marked timed out, whatever the run printed as it
// went down, but for ESCALATE, which the row keeps: never milder than
// what the run said.
func timeoutRow(res *batch.Result, limit time.Duration) {
	res.TimedOut = true
	note := fmt.Sprintf("timed out: still running after %s (--run-timeout), its process group was stopped", limit)
	if res.Terminal == pipeline.Escalate {
		res.Error, res.Exit = note, max(res.Exit, exitEscalate)
		return
	}
	res.Terminal, res.Reason, res.Error, res.Exit = pipeline.Halt, pipeline.ReasonWallClock, note, exitHalt
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.b) }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// runStepSummary is one run's row for the job summary under Actions (the
// sweep's jobs run one finding each); a failure is a warning.
func runStepSummary(stderr io.Writer, rep *pipeline.Report) {
	r := batch.Result{Item: batch.Item{ID: rep.Finding.ID}, Terminal: rep.Terminal, Reason: rep.Reason,
		Detail: rep.Detail, PR: rep.PR, Exit: terminalExit(rep.Terminal)}
	sum := batch.Summarise(rep.Finding.ID, rep.DryRun, 1, 0, []batch.Result{r})
	if err := stepSummary(os.LookupEnv, sum); err != nil {
		fmt.Fprintf(stderr, "fixrail: warning: the job summary: %v\n", err)
	}
}

// stepSummary appends the terminal table to $GITHUB_STEP_SUMMARY under
// GitHub Actions (the job's summary page); elsewhere it does nothing.
func stepSummary(lookup func(string) (string, bool), sum *batch.Summary) error {
	if v, _ := lookup("GITHUB_ACTIONS"); v != "true" {
		return nil
	}
	path, _ := lookup("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	return errors.Join(sum.StepSummary(f), f.Close())
}
