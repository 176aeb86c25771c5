package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/risk"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// reproduce is P3: the harness itself runs the reproducing test on a fresh
// checkout of the base plus exactly the P2 evidence — it must fail, with
// the symptom — and then checks the plan against the deny list (Stage A)
// before any source may be written. The checkout is discarded afterwards:
// nothing the test does there reaches the agent's tree or the commit.
func (r *run) reproduce(ctx context.Context) *Outcome {
	// A high-risk finding gets its read-only investigation, and then a
	// human: the plan and the test are in the report, nothing is run.
	if r.risk.High() {
		return stop(Escalate, ReasonHighRisk, "high risk at intake: "+r.risk.Reason())
	}
	tp := r.plan.Test.Path
	if ok, _ := doublestar.Match(r.cfg.Test.PathGlob, tp); !ok {
		r.gate("P3", "oracle-red", "fail", tp+" is not under "+r.cfg.Test.PathGlob)
		return stop(NotRepro, ReasonBadTestPath, fmt.Sprintf("test path %s does not match test.path_glob %s", tp, r.cfg.Test.PathGlob))
	}
	r.oracleArgv = fixtype.OracleArgv(r.cfg.Test.Command, r.plan)
	res, err := r.execFresh(ctx, "red", r.redTree, r.oracleArgv, r.cfg.Test.Timeout)
	if o := r.containmentOutcome("P3", err); o != nil {
		return o
	}
	if err != nil {
		r.gate("P3", "oracle-red", "error", err.Error())
		return stop(Escalate, ReasonCheckError, "test command: "+err.Error())
	}
	if o := r.stopped(ctx); o != nil {
		return o
	}
	switch {
	case res.Success():
		r.gateOutput("P3", "oracle-red", "fail", "the test passes on the unpatched tree", res)
		return stop(NotRepro, ReasonGreenOnBase, "the reproducing test passes on "+r.s.Base+": nothing to fix, or the test does not exercise the bug")
	case !strings.Contains(res.Output(), r.plan.Test.Symptom):
		r.gateOutput("P3", "oracle-red", "fail", fmt.Sprintf("test fails (%s) but its output lacks the symptom", outcomeText(res)), res)
		return stop(NotRepro, ReasonSymptomMismatch, fmt.Sprintf("the test fails on %s but not with the reported symptom %q", r.s.Base, r.plan.Test.Symptom))
	}
	r.gateOutput("P3", "oracle-red", "pass", fmt.Sprintf("test fails on %s (%s) with the symptom", r.s.Base, outcomeText(res)), res)
	return r.stageA(ctx)
}

// stageA matches the plan (and the import lines the planned files hold on
// the base) against the deny list. One sensitive path escalates the whole
// fix: a benign half is never committed on its own. The files are read from
// the base commit, never from a directory an agent wrote in.
func (r *run) stageA(ctx context.Context) *Outcome {
	var hits []string
	var planned []risk.Planned
	for _, f := range append(append([]string{r.plan.Test.Path}, r.plan.Test.Fixtures...), r.plan.Files...) {
		if v := r.s.Policy.Classify(f); r.s.Policy.Sensitive(v) {
			hits = append(hits, gates.DescribeVerdict(f, v))
		}
	}
	for _, f := range r.plan.Files {
		e, err := r.s.Repo.TreeEntry(ctx, r.s.BaseSHA, f, maxEvidenceBytes)
		if err != nil {
			r.gate("P3", "stage-a", "error", err.Error())
			return stop(Escalate, ReasonCheckError, "stage-a: "+err.Error())
		}
		planned = append(planned, risk.Planned{Path: f, Content: e.Data})
		if e.Deleted() {
			continue // a new file has no imports yet; Stage B reads it after the fix
		}
		for _, v := range r.s.Policy.CheckImports(f, e.Data) {
			hits = append(hits, fmt.Sprintf("%s imports %q (%s)", f, v.Path, v.Rule))
		}
	}
	if len(hits) > 0 {
		r.gate("P3", "stage-a", "fail", strings.Join(hits, "; "))
		return stop(Escalate, ReasonSensitivePath, "the plan touches sensitive or unknown paths: "+strings.Join(hits, "; "))
	}
	r.gate("P3", "stage-a", "pass", fmt.Sprintf("%d planned path(s) and their imports clear", len(r.plan.Files)+1))
	// The root cause re-scores the risk; the later score wins, and it can
	// only go up.
	r.risk = r.rules.RootCause(r.risk, r.plan.Summary, planned)
	r.rep.Risk = &r.risk
	if r.risk.High() {
		r.gate("P3", "risk", "fail", "root cause: "+r.risk.Reason())
		return stop(Escalate, ReasonHighRisk, "high risk from the root cause: "+r.risk.Reason())
	}
	r.gate("P3", "risk", "pass", "root cause: "+r.risk.Level.String())
	return nil
}

func (r *run) sandboxMode() sandbox.Mode {
	mode, _ := sandbox.ParseMode(r.cfg.Sandbox) // validated with the config
	return mode
}

// execFresh runs a harness-owned command (the oracle, the suite) in a fresh
// checkout of rev made for this one run and retired after it, so the
// command judges exactly rev and nothing it leaves behind is seen again.
func (r *run) execFresh(ctx context.Context, label, rev string, argv []string, timeout time.Duration) (sandbox.Result, error) {
	r.checkouts++
	name := fmt.Sprintf("%s-%d", label, r.checkouts)
	t, err := r.s.Repo.Checkout(ctx, filepath.Join(r.dir, name), r.indexPath(name), rev)
	if err != nil {
		return sandbox.Result{}, err
	}
	// Afterwards the checkout is moved out of the way at once, so nothing
	// can run in it or read it again by its path, and deleted with the run
	// directory: deleting a large tree between two checkouts makes the next
	// one several times slower on a filesystem that discards freed blocks.
	defer func() {
		if err := os.Rename(t.Dir, filepath.Join(r.dir, "used-"+name)); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, "retire "+name+": "+err.Error())
			if err := removeTree(t.Dir); err != nil {
				r.rep.Warnings = append(r.rep.Warnings, "remove "+name+": "+err.Error())
			}
		}
		_ = os.Remove(r.indexPath(name))
	}()
	return r.exec(ctx, t.Dir, argv, timeout)
}

// exec runs a harness-owned command in dir: the build environment (no
// credentials), a private TMPDIR, and bubblewrap where the config asks for
// it. It holds the clone's gate shared while repository code runs and
// checks the git config and the clone's state afterwards.
func (r *run) exec(ctx context.Context, dir string, argv []string, timeout time.Duration) (sandbox.Result, error) {
	tc, err := r.toolchain(ctx)
	if err != nil {
		return sandbox.Result{}, err
	}
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, r.cfg.ExtraEnv)
	if err != nil {
		return sandbox.Result{}, err
	}
	// A fresh TMPDIR per command: the build caches live in it (Toolchain.Env),
	// so nothing one test run writes is seen by the next.
	tmp, cleanup, err := sandbox.TempDir(r.dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	defer cleanup()
	if env, err = tc.Env(sandbox.WithTempDir(env, tmp), tmp); err != nil {
		return sandbox.Result{}, err
	}
	mode := r.sandboxMode()
	release := r.s.Repo.Shared()
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:    argv,
		Dir:     dir,
		Env:     env,
		Timeout: timeout,
		Sandbox: &sandbox.Spec{Mode: mode, RW: []string{dir}, RO: tc.RO(), Tmp: tmp},
	})
	release()
	if err != nil {
		return res, err
	}
	if !res.Sandboxed && mode != sandbox.Off {
		r.unsandboxed = true
	}
	if err := r.s.Repo.CheckDrift(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// toolchain finds, once per run, the dependency caches tests see read-only
// (the Go module cache, cargo's registry, …, and sandbox.ro_paths), and
// records them in the report.
func (r *run) toolchain(ctx context.Context) (sandbox.Toolchain, error) {
	if r.tc != nil {
		return *r.tc, nil
	}
	tc, err := sandbox.Toolchains(ctx, os.LookupEnv, r.cfg.SandboxROPaths)
	if err != nil {
		return sandbox.Toolchain{}, err
	}
	r.tc = &tc
	r.rep.Toolchains = tc.Describe()
	for _, d := range r.rep.Toolchains {
		r.note("toolchain", d)
	}
	return tc, nil
}

// gateOutput records a verdict with the end of the command's output, so a
// NOT-REPRO or a red suite can be read without rerunning anything. The
// report and the event log redact it on the way out.
func (r *run) gateOutput(phase, name, verdict, detail string, res sandbox.Result) {
	out := r.scrubOutput(outputTail(res))
	r.rep.Gates = append(r.rep.Gates, GateResult{Name: name, Phase: phase, Verdict: verdict, Detail: detail, Output: out})
	r.log.Emit(events.Event{Type: "gate", Phase: phase, Name: name, Verdict: verdict, Detail: detail + "\n" + out})
}

// outputLines is how much of a command's output a verdict keeps (the last
// lines, at most 16 KiB: sandbox.Result.Tail).
const outputLines = 40

func outputTail(res sandbox.Result) string { return res.Tail(outputLines) }

func outcomeText(res sandbox.Result) string {
	switch {
	case res.TimedOut:
		return "timed out"
	case res.Signal != "":
		return "killed by " + res.Signal
	}
	return fmt.Sprintf("exit %d", res.ExitCode)
}
