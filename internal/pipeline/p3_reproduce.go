package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// reproduce is P3: the harness itself runs the reproducing test on the
// pre-fix tree — it must fail, with the symptom — and then checks the plan
// against the deny list (Stage A) before any source may be written.
func (r *run) reproduce(ctx context.Context) *Outcome {
	tp := r.plan.Test.Path
	if ok, _ := doublestar.Match(r.cfg.Test.PathGlob, tp); !ok {
		r.gate("P3", "oracle-red", "fail", tp+" is not under "+r.cfg.Test.PathGlob)
		return stop(NotRepro, ReasonBadTestPath, fmt.Sprintf("test path %s does not match test.path_glob %s", tp, r.cfg.Test.PathGlob))
	}
	full, err := pathguard.ResolveWithin(r.wt.Dir, tp)
	if errors.Is(err, pathguard.ErrEscape) {
		return stop(Escalate, ReasonUnsafePath, err.Error())
	}
	if err != nil {
		return stop(NotRepro, ReasonBadTestPath, err.Error())
	}
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() {
		r.gate("P3", "oracle-red", "fail", tp+" is not a regular file")
		return stop(NotRepro, ReasonBadTestPath, "the planned test "+tp+" was not written as a regular file")
	}
	if r.testWhenRed, err = os.ReadFile(full); err != nil {
		return stop(Escalate, ReasonCheckError, err.Error())
	}

	r.oracleArgv = fixtype.OracleArgv(r.cfg.Test.Command, r.plan)
	res, err := r.exec(ctx, r.oracleArgv, r.cfg.Test.Timeout)
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
	if r.artifacts, err = r.snapshotArtifacts(ctx); err != nil {
		return stop(Escalate, ReasonCheckError, "worktree status after the test run: "+err.Error())
	}
	switch {
	case res.Success():
		r.gate("P3", "oracle-red", "fail", "the test passes on the unpatched tree")
		return stop(NotRepro, ReasonGreenOnBase, "the reproducing test passes on "+r.s.Base+": nothing to fix, or the test does not exercise the bug")
	case !strings.Contains(res.Output(), r.plan.Test.Symptom):
		r.gate("P3", "oracle-red", "fail", fmt.Sprintf("test fails (%s) but its output lacks the symptom", outcomeText(res)))
		return stop(NotRepro, ReasonSymptomMismatch, fmt.Sprintf("the test fails on %s but not with the reported symptom %q", r.s.Base, r.plan.Test.Symptom))
	}
	r.gate("P3", "oracle-red", "pass", fmt.Sprintf("test fails on %s (%s) with the symptom", r.s.Base, outcomeText(res)))
	return r.stageA()
}

// stageA matches the plan (and the import lines of the planned files) against
// the deny list. One sensitive path escalates the whole fix: a benign half is
// never committed on its own.
func (r *run) stageA() *Outcome {
	var hits []string
	for _, f := range append([]string{r.plan.Test.Path}, r.plan.Files...) {
		if v := r.s.Policy.Classify(f); r.s.Policy.Sensitive(v) {
			hits = append(hits, gates.DescribeVerdict(f, v))
		}
	}
	for _, f := range r.plan.Files {
		full, err := pathguard.ResolveWithin(r.wt.Dir, f)
		if err != nil {
			hits = append(hits, fmt.Sprintf("%s (%v)", f, err))
			continue
		}
		data, err := os.ReadFile(full)
		if errors.Is(err, os.ErrNotExist) {
			continue // a new file has no imports yet; Stage B reads it after the fix
		}
		if err != nil {
			r.gate("P3", "stage-a", "error", err.Error())
			return stop(Escalate, ReasonCheckError, "stage-a: "+err.Error())
		}
		for _, v := range r.s.Policy.CheckImports(f, data) {
			hits = append(hits, fmt.Sprintf("%s imports %q (%s)", f, v.Path, v.Rule))
		}
	}
	if len(hits) > 0 {
		r.gate("P3", "stage-a", "fail", strings.Join(hits, "; "))
		return stop(Escalate, ReasonSensitivePath, "the plan touches sensitive or unknown paths: "+strings.Join(hits, "; "))
	}
	r.gate("P3", "stage-a", "pass", fmt.Sprintf("%d planned path(s) and their imports clear", len(r.plan.Files)+1))
	return nil
}

// exec runs a harness-owned command (test or suite) in the worktree: the
// build environment (no credentials), a private TMPDIR, and bubblewrap where
// the config asks for it. It holds the clone's gate shared while repository
// code runs and checks the git config for drift afterwards.
func (r *run) exec(ctx context.Context, argv []string, timeout time.Duration) (sandbox.Result, error) {
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, r.cfg.ExtraEnv)
	if err != nil {
		return sandbox.Result{}, err
	}
	tmp, cleanup, err := sandbox.TempDir(r.p.TempDir)
	if err != nil {
		return sandbox.Result{}, err
	}
	defer cleanup()
	mode, _ := sandbox.ParseMode(r.cfg.Sandbox) // validated with the config
	release := r.s.Repo.Shared()
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Args:    argv,
		Dir:     r.wt.Dir,
		Env:     sandbox.WithTempDir(env, tmp),
		Timeout: timeout,
		Sandbox: &sandbox.Spec{Mode: mode, RW: []string{r.wt.Dir}, Tmp: tmp},
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

func outcomeText(res sandbox.Result) string {
	switch {
	case res.TimedOut:
		return "timed out"
	case res.Signal != "":
		return "killed by " + res.Signal
	}
	return fmt.Sprintf("exit %d", res.ExitCode)
}
