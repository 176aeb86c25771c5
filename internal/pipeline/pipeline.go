// Package pipeline runs one finding through the five phases — intake,
// investigate, reproduce, fix, terminal — and ends it in exactly one of four
// terminal states. It owns the order of the rails, the run report and the
// event log; the checks themselves live in gates, fixtype and the leaf
// packages, and the agent is an opaque Runner.
package pipeline

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/risk"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verify"
)

// Runner is the agent seam: one call per invocation.
type Runner interface {
	Run(ctx context.Context, inv runner.Invocation) (runner.Result, error)
}

// The forge seam, in the pieces the phases use. The CLI chooses the forge
// (the local outbox, GitHub) and hands it in whole.

// Publisher sends the finished fix: its branch and a draft PR.
type Publisher interface {
	Publish(ctx context.Context, pr forge.PR) (forge.Published, error)
}

// Guard asserts, at P1, that the base branch cannot be written without a
// reviewed pull request, and that the credential can do what P5 will ask
// of it (push, open a PR, comment), with probes that write nothing.
type Guard interface {
	AssertProtected(ctx context.Context, base string, requiredChecks []string) (forge.Protection, error)
	CheckAccess(ctx context.Context, req forge.AccessRequest) (forge.Access, error)
}

// Notifier tells the finding's tracker how a run ended (ESCALATE,
// NOT-REPRO); best effort.
type Notifier interface {
	Notify(ctx context.Context, n forge.Notice) error
}

// WorkFinder looks up the open work a run must not stack on: at P1 what is
// open for the finding, at P3 the files every open fix changes.
type WorkFinder interface {
	OpenWork(ctx context.Context, s forge.Subject) (forge.Work, error)
	FixFiles(ctx context.Context) ([]forge.OpenFix, error)
}

// Forge is every piece together.
type Forge interface {
	Publisher
	Guard
	Notifier
	WorkFinder
}

// withdrawer is a forge that can take a publication back (the local
// outbox) when the branch moved under the run after publishing.
type withdrawer interface {
	Withdraw(ctx context.Context, id string) error
}

// closeHinter is a forge that can say how a person withdraws a finding's
// open draft (the local forge: fixrail close ID), for the HALTs that wait
// on one.
type closeHinter interface {
	CloseHint(id string) string
}

// closeHint is " (to withdraw it: <how>)" when the forge can say how, else "".
func (r *run) closeHint(id string) string {
	if h, ok := r.p.Forge.(closeHinter); ok {
		if how := h.CloseHint(id); how != "" {
			return " (to withdraw it: " + how + ")"
		}
	}
	return ""
}

// ErrSetup marks a problem found before a run could start (not a git
// repository, no or bad fixrail.yaml): a usage error, not a terminal state.
var ErrSetup = errors.New("cannot start a run")

// StateDirName is the per-repository state directory.
const StateDirName = ".fixrail"

// Setup is what every run in a repository shares, read before any run starts.
type Setup struct {
	Repo    *gitx.Repo
	Base    string
	BaseSHA string
	Config  *config.Config
	// ConfigSHA256 is the hash of fixrail.yaml as the base holds it: the
	// ledger keeps it, with the rails, at each run's start.
	ConfigSHA256 string
	// Scrub is the run's redaction and leak-scan engine: it knows the
	// harness's own secrets and the operator's customer identifiers.
	Scrub *redact.Engine
	// snap is the operator's git config, frozen at start; every git call
	// reads it and checks its hash.
	snap *gitx.Snap
	// stacked: BaseSHA is a commit StackOn set, not the base branch's tip.
	stacked bool
}

// Close releases what Prepare took (the config snapshot's directory).
func (s *Setup) Close() error {
	if s == nil || s.snap == nil {
		return nil
	}
	return s.snap.Close()
}

// Prepare opens the repository and reads fixrail.yaml from the base branch.
// base may be empty: the repository's current branch is the base.
func Prepare(ctx context.Context, repoDir, base string) (_ *Setup, err error) {
	// The operator's git config is frozen before anything reads the
	// repository: later changes to ~/.gitconfig, by anyone, are not seen.
	snap, err := gitx.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: git: %w", ErrSetup, err)
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	repo, err := snap.Open(ctx, repoDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a git work tree: %w", ErrSetup, repoDir, err)
	}
	// The clone's own config, recorded before any repository code runs;
	// every later git call that follows repository code is checked against it.
	if err := repo.Baseline(ctx); err != nil {
		if errors.Is(err, gitx.ErrPoisoned) {
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		return nil, fmt.Errorf("%w: record the repository's git config: %w", ErrSetup, err)
	}
	if base == "" {
		if base, err = repo.CurrentBranch(ctx); err != nil {
			return nil, fmt.Errorf("%w: no base branch (pass --base): %w", ErrSetup, err)
		}
	}
	sha, err := repo.RevParse(ctx, "refs/heads/"+base)
	if err != nil {
		return nil, fmt.Errorf("%w: base branch %q has no commit in this repository (pass --base to name another): %w", ErrSetup, base, err)
	}
	// The base branch's copy, never the working tree's: an agent or a
	// checked-out PR could have rewritten the file on disk.
	data, err := repo.ShowFile(ctx, sha, config.FileName)
	if errors.Is(err, gitx.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s committed on %s (commit one: see the README's Configuration, or examples/textfmt/repo/%s)", ErrSetup, config.FileName, base, config.FileName)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read %s from %s: %w", ErrSetup, config.FileName, base, err)
	}
	cfg, err := config.Parse(config.FileName+" (on "+base+")", data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	// A clone whose own config names programs or includes a file may have
	// been prepared by code that ran in it, or take a command from a tracked
	// file the last commit rewrote; only the operator, through the base
	// branch's fixrail.yaml, can accept one, and only with its value.
	var pins []gitx.Pin
	for _, p := range cfg.Git.Pins() {
		pins = append(pins, gitx.Pin{Key: p.Key, Value: p.Value})
	}
	if err := repo.Pin(pins); err != nil {
		var up *gitx.UnpinnedError
		if errors.As(err, &up) {
			return nil, fmt.Errorf("%w: the clone's local git config names programs or includes (%s) with values git.allow_config does not pin; remove them, or pin each as key=value under git.allow_config in %s on %s if you put them there (fixrail never runs them)", ErrSetup, strings.Join(up.Keys, ", "), config.FileName, base)
		}
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	// The state directory holds the ledger, the locks, the reports and the
	// outbox: one the repository ships (a crafted state.db with triggers, a
	// lock file that is a link, a fake outbox bundle) would be trusted. The
	// index, not the base: it is what the checkout put on disk. Every case
	// spelling: a case-insensitive checkout puts .FixRail/ where .fixrail/ is.
	tracked, err := repo.Tracked(ctx, gitx.CaseVariants(StateDirName)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if len(tracked) > 0 {
		top, _, _ := strings.Cut(tracked[0], "/")
		return nil, fmt.Errorf("%w: the repository tracks %s (%s): fixrail's state directory must not come from the repository; remove it (git rm -r --cached %s) and commit", ErrSetup, top, strings.Join(tracked[:min(len(tracked), 3)], ", "), top)
	}
	// Every glob is checked now, so a bad one is a setup error before any
	// run; each run builds its policy with its fix type's evidence globs.
	if _, err := sensitive.New(cfg.Paths.Fixable, cfg.Paths.Sensitive); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSetup, config.FileName, err)
	}
	scrub, err := redact.FromEnvironment(os.LookupEnv, cfg.Redact.CustomerIDsFile)
	if err != nil {
		return nil, fmt.Errorf("%w: redact.customer_ids_file: %w", ErrSetup, err)
	}
	sum := sha256.Sum256(data)
	return &Setup{Repo: repo, Base: base, BaseSHA: sha, Config: cfg, ConfigSHA256: hex.EncodeToString(sum[:]), Scrub: scrub, snap: snap}, nil
}

// Params are one run's inputs.
type Params struct {
	Finding *findings.Finding
	// Mode overrides the configured mode when set.
	Mode config.Mode
	// Runner is the agent; Forge is where the fix goes. Both required:
	// the CLI builds them from the configuration.
	Runner Runner
	Forge  Forge
	// Types are fix types the CLI bound to its services (the cve type to
	// the advisory source its flags chose); a finding whose fix type is
	// named here takes this one instead of the registry's.
	Types []*fixtype.Type
	// Model answers the single-shot gates; nil records them unconfirmed.
	Model gates.Completer
	// Advisories is the advisory data the added-packages gate checks
	// every package a fix adds against (the CLI binds the source its
	// advisory flags chose); nil: an added package cannot be checked, and
	// the run escalates.
	Advisories gates.Advisories
	// Confirm asks the human in interactive mode.
	Confirm func(ctx context.Context, question string) (bool, error)
	// Console receives progress lines; nil discards them.
	Console io.Writer
	// TempDir is where disposable directories go; empty is os.TempDir().
	TempDir string
	// Actor is who the run is charged to in the ledger; empty is the local
	// operator (ledger.LocalActor).
	Actor string
	// ForgeRepo names the repository across machines ("github.com/o/r"),
	// so a fleet's runs share its ledger scope; empty names the clone.
	ForgeRepo string
	// Access is what the reporter may do in the repository, for risk
	// routing; empty is a local operator's report.
	Access risk.Access
	// DryRun is two of a dry run's three guards (the third is the forge
	// the CLI hands in, which refuses to publish). The CLI sets both;
	// each holds on its own, and each is tested alone.
	DryRun DryRun
	// Sink receives every event after the redaction chokepoint (a
	// webhook); nil: none.
	Sink events.Sink
}

// DryRun is what a dry run asks of the pipeline.
type DryRun struct {
	// ReadOnlyAgent gives the fix phase's agent read tools only: no
	// planned file to write, no shell rule.
	ReadOnlyAgent bool
	// StopAfterPlan ends the run after P3 (the plan reproduced red, Stage
	// A and the path locks passed): HALT dry-run, naming what the fix
	// would touch. P4 and P5 do not run.
	StopAfterPlan bool
}

// run holds one run's resources and handles; what the phases make they
// return, and pipeline passes it on.
type run struct {
	s   *Setup
	p   Params
	cfg *config.Config
	fin *findings.Finding
	typ *fixtype.Type
	env *fixtype.Env      // the harness as the fix type sees it
	pol *sensitive.Policy // paths.* plus the fix type's evidence globs

	stateDir string
	log      *events.Log
	rep      *Report
	reportF  *os.File // the run report, opened at start so it is always written

	parent    context.Context // cancelled by SIGINT/SIGTERM
	ledger    ledger.Ledger
	res       *ledger.Reservation // this run's reservation, settled in finish
	agents    int                 // agent invocations that started
	unmetered bool                // one of them reported no cost: the run is charged its caps
	rules     *risk.Rules
	risk      risk.Score
	lock      *ledger.Lock
	dir       string             // the run's disposable directory
	dirID     fileID             // its device and inode, recorded when made
	handoff   string             // dir/agent: the agent's tree and, beside it, PLAN.json and result.json
	wt        *gitx.Tree         // the agent's tree: the base, then the base plus the evidence
	checkouts int                // fresh checkouts made, for their names
	tc        *sandbox.Toolchain // the caches tests see, found on first use
	goStd     string             // the standard library's build cache, read-only to sandboxed commands; "" when none
	branch    string
	oldHead   string           // the branch's value before this run, "" if absent
	pub       *forge.Published // the draft PR, once P5 opened it
	protect   forge.Protection // what P1 found on the base: the CI gate honours its pinned checks
	claim     verify.Claim     // what the commit's trailers say, once P4 built it
	egress    *runEgress       // the agent's egress policy and account, made at its first invocation

	// What the review must know, gathered on the way.
	unsandboxed     bool     // a test or suite command ran outside a sandbox (mode auto)
	agentUnconfined bool     // an agent invocation ran outside the sandbox (mode auto)
	needsReview     []string // why the PR must be read with care: unconfirmed gates
	labels          []string // labels gates asked for
	withheld        []string // values no record or publication carries (withhold)

	// After the PR: where the post-PR gates, reasons and labels start, and
	// the reasons found then (recheck.go).
	postFrom, reviewFrom, labelFrom int
	postReasons                     []string
	sentLabels                      []string // the labels the draft was opened with
	// now is the PR as read back after the waits (nil before, or with
	// no PR on a forge that reads one back); readErr why it could not be.
	now     *forge.PRNow
	readErr error
}

// withheldMarker replaces a withheld value in the published patch.
const withheldMarker = "[REDACTED by fixrail: the alerted credential]"

// withhold makes vals — a credential the finding carried, or one its
// plan recovered from the tree — known to the run's redactor from here
// on, so every record and every publication redacts them; the shipped
// patch has them replaced (published). Only the fix prompt shows them.
func (r *run) withhold(vals ...string) error {
	sc, err := r.s.Scrub.With(vals...)
	if err != nil {
		return err
	}
	s := *r.s // the setup is shared by runs; this run's redactor is its own
	s.Scrub = sc
	r.s = &s
	r.withheld = append(r.withheld, vals...)
	return nil
}

// published is text as the run publishes it: every withheld value
// replaced. Only a deleted line of the patch can still hold one (the
// oracle proved the candidate free of it), so that is what this redacts.
func (r *run) published(text string) string {
	for _, v := range r.withheld {
		text = strings.ReplaceAll(text, v, withheldMarker)
	}
	return text
}

// investigation is what P2 makes: the plan, and the evidence as the
// harness read it, on top of the base.
type investigation struct {
	plan     *fixtype.Plan
	summary  string       // the plan's summary, redacted
	planned  bool         // the harness planned (fixtype.Type.Plan), no agent
	evidence []gitx.Entry // the test first, then the fixtures (for a bug)
	redTree  string       // the base plus the evidence: what runs red
	extended []string     // tracked test files the evidence adds lines to
}

// candidate is what P4 makes and P5 ships: what the gates judged.
type candidate struct {
	commit  string
	message string // the commit's message, as leak-scanned
	diff    gitx.TreeDiff
	paths   []string
	result  *fixtype.Result
	edited  bool // the harness made the edit (fixtype.Type.Edit), no agent
	impact  gates.ImpactReport
	// tests are the base's test files the fix phase changed, testsDiff
	// their diff (evidence.go).
	tests     []string
	testsDiff string
	// addedTests are the files the fix adds where the tests live
	// (gates.AddedTests): out of the tree the prior suite judges.
	addedTests []string
	// fixes are the entries the harness wrote on the red tree (evidence
	// aside), tree the commit's tree: what a follow-up builds on.
	fixes []gitx.Entry
	tree  string
}

// fixesOrNil is c's fixes; none for no candidate.
func (c *candidate) fixesOrNil() []gitx.Entry {
	if c == nil {
		return nil
	}
	return c.fixes
}

// Run takes one finding to a terminal state. The error is non-nil only when
// no run report could be produced at all (the state directory is unusable).
func Run(ctx context.Context, s *Setup, p Params) (rep *Report, err error) {
	r := &run{s: s, p: p, cfg: s.Config, fin: p.Finding, parent: ctx, branch: forge.BranchPrefix + p.Finding.ID}
	if p.Finding.Secret != "" {
		// Before anything is recorded: no record may carry it.
		if err := r.withhold(p.Finding.Secret); err != nil {
			return nil, fmt.Errorf("the finding's secret cannot be withheld: %w", err)
		}
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	defer func() {
		if err2 := r.finish(); err == nil && err2 != nil {
			err = err2
		}
	}()
	wall, cancel := context.WithTimeout(ctx, r.cfg.Budget.WallClock)
	defer cancel()
	defer r.cleanup()
	defer func() {
		if v := recover(); v != nil {
			r.end(stop(Halt, ReasonInternal, fmt.Sprintf("panic: %v", v)))
			r.log.Emit(events.Event{Type: "note", Name: "panic", Detail: string(debug.Stack())})
			rep = r.rep // the report of a run that panicked is returned too
		}
	}()
	r.end(r.pipeline(wall))
	r.notify()
	return r.rep, nil
}

// pipeline is the order of the phases and of their products: the
// investigation feeds the reproduction and the fix, the candidate the
// terminal.
func (r *run) pipeline(ctx context.Context) *Outcome {
	if o := r.phase(ctx, "P1 intake", r.intake); o != nil {
		return o
	}
	var inv *investigation
	if o := r.phase(ctx, "P2 investigate", func(ctx context.Context) (o *Outcome) {
		inv, o = r.investigate(ctx)
		return o
	}); o != nil {
		return o
	}
	if o := r.phase(ctx, "P3 reproduce", func(ctx context.Context) *Outcome { return r.reproduce(ctx, inv) }); o != nil {
		return o
	}
	if r.p.DryRun.StopAfterPlan {
		return r.dryRunStop(inv)
	}
	var c *candidate
	if o := r.phase(ctx, "P4 fix", func(ctx context.Context) (o *Outcome) {
		c, o = r.fix(ctx, inv)
		return o
	}); o != nil {
		return o
	}
	if o := r.phase(ctx, "P5 terminal", func(ctx context.Context) *Outcome { return r.terminal(ctx, inv, c) }); o != nil {
		return o
	}
	return stop(Halt, ReasonInternal, "pipeline ended without a terminal state")
}

func (r *run) phase(ctx context.Context, name string, f func(context.Context) *Outcome) *Outcome {
	if o := r.stopped(ctx); o != nil {
		return o
	}
	r.log.Emit(events.Event{Type: "phase-start", Phase: name})
	t0 := time.Now()
	o := f(ctx)
	took := time.Since(t0).Round(time.Millisecond).String()
	r.rep.Phases = append(r.rep.Phases, PhaseTime{Phase: name, Duration: took})
	// A deadline or a signal that fired during the phase decides the outcome:
	// whatever the phase concluded may be an artefact of the kill.
	if o == nil || o.Terminal != DraftPR {
		if so := r.stopped(ctx); so != nil {
			o = so
		}
	}
	// "done" only for a phase that let the run go on: one that ended it
	// says how, so a log never reads "done" above an escalation.
	end := "done in " + took
	if o != nil {
		end = fmt.Sprintf("ended the run after %s: %s (%s)", took, o.Terminal, o.Reason)
	}
	r.log.Emit(events.Event{Type: "phase-end", Phase: name, Verdict: end})
	return o
}

// stopped reports a HALT when the run was interrupted or ran out of wall clock.
func (r *run) stopped(ctx context.Context) *Outcome {
	if r.parent.Err() != nil {
		return stop(Halt, ReasonInterrupted, "stopped by a signal")
	}
	if ctx.Err() != nil {
		return stop(Halt, ReasonWallClock, fmt.Sprintf("budget.wall_clock of %s exceeded", r.cfg.Budget.WallClock))
	}
	return nil
}

func (r *run) open() error {
	// The seams and the fix type are checked first, so a run that cannot
	// start leaves nothing behind.
	if r.p.Runner == nil || r.p.Forge == nil {
		return fmt.Errorf("%w: no runner or no forge was given", ErrSetup)
	}
	typ, err := fixtype.Lookup(r.fin.Type())
	if err != nil {
		return fmt.Errorf("%w: finding %s: %w", ErrSetup, r.fin.ID, err)
	}
	for _, t := range r.p.Types {
		if t.Name == typ.Name {
			if err := fixtype.Validate(t); err != nil {
				return fmt.Errorf("%w: %v", ErrSetup, err)
			}
			typ = t
		}
	}
	if err := typ.Check(r.cfg); err != nil {
		return fmt.Errorf("%w: %s (on %s): the %s fix type: %w", ErrSetup, config.FileName, r.s.Base, typ.Name, err)
	}
	// A scanner entry's fix type decides what its results become: one no
	// type answers to would only fail later, on the finding it misroutes.
	for i, sc := range r.cfg.Scanners {
		if _, err := fixtype.Lookup(sc.FixType); err != nil && !slices.ContainsFunc(r.p.Types, func(t *fixtype.Type) bool { return t.Name == sc.FixType }) {
			return fmt.Errorf("%w: %s (on %s): scanners[%d].fix_type: %w", ErrSetup, config.FileName, r.s.Base, i, err)
		}
	}
	r.typ = typ
	if r.pol, err = sensitive.New(r.cfg.Paths.Fixable, r.cfg.Paths.Sensitive, typ.Scope(r.cfg)...); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSetup, config.FileName, err)
	}
	r.env = &fixtype.Env{Config: r.cfg, Base: r.s.Base, BaseSHA: r.s.BaseSHA, Exec: r.execFresh, ExecIn: r.execIn, Read: r.readFresh, Scan: r.scanFresh}
	runs, err := r.s.StateDir("runs")
	if err != nil {
		return err
	}
	r.stateDir = filepath.Dir(runs)
	id, err := newRunID()
	if err != nil {
		return err
	}
	// The report's file is created now and written through this handle at
	// the end, so whatever happens to runs/ meanwhile, the report exists
	// and the exit code matches it.
	if r.reportF, err = os.OpenFile(filepath.Join(runs, id+".json"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600); err != nil {
		return fmt.Errorf("run report: %w", err)
	}
	mode := r.cfg.Mode
	if r.p.Mode != "" {
		mode = r.p.Mode
	}
	r.rep = &Report{
		DryRun:  r.p.DryRun.StopAfterPlan || r.p.DryRun.ReadOnlyAgent,
		RunID:   id,
		Mode:    string(mode),
		FixType: typ.Name,
		Finding: FindingRef{ID: r.fin.ID, Source: r.fin.Source},
		Base:    r.s.Base,
		BaseSHA: r.s.BaseSHA,
		Gates:   []GateResult{},
		Started: time.Now().UTC(),
		Log:     filepath.Join(runs, id+".ndjson"),
	}
	r.log, err = events.Open(r.rep.Log, id, r.p.Console, r.scrubEvent)
	if err != nil {
		return err
	}
	if r.p.Sink != nil {
		r.log.AddSink(r.p.Sink)
	}
	r.log.Emit(events.Event{Type: "run-start", Detail: fmt.Sprintf("finding %s (%s), base %s, %s mode", r.fin.ID, typ.Name, r.s.Base, mode)})
	return nil
}

func (r *run) end(o *Outcome) {
	if r.rep.Terminal != "" {
		return // the first terminal decision stands
	}
	r.rep.Terminal, r.rep.Reason, r.rep.Detail = o.Terminal, o.Reason, o.Detail
	r.log.Emit(events.Event{Type: "terminal", Verdict: string(o.Terminal), Reason: o.Reason, Detail: o.Detail})
}

func (r *run) finish() error {
	r.settle()
	r.rep.Ended = time.Now().UTC()
	r.rep.Duration = r.rep.Ended.Sub(r.rep.Started).Round(time.Millisecond).String()
	if err := r.log.Err(); err != nil {
		r.rep.Warnings = append(r.rep.Warnings, err.Error())
	}
	r.log.Close()
	// The report is outbound too (printed, kept, shipped as a CI artefact):
	// it passes the same chokepoint, and the caller gets the scrubbed copy.
	if err := r.rep.scrub(r.s.Scrub); err != nil {
		return err
	}
	return r.rep.writeTo(r.reportF)
}

// settle records the run's end in the ledger with what it cost, on every
// exit path (finish is deferred), and the report says what the ledger
// charged. A run whose agent never started is charged nothing (it still
// counts as a run); one whose agent ran without a meter is charged its caps.
func (r *run) settle() {
	if r.res == nil {
		return
	}
	a := r.rep.Agent
	c, err := r.res.Settle(context.WithoutCancel(r.parent), ledger.Outcome{
		Terminal: string(r.rep.Terminal), Reason: r.rep.Reason,
		CostUSD: a.CostUSD, CostKnown: !r.unmetered,
		Turns: a.Turns, TurnsKnown: !r.unmetered,
		Now: time.Now(),
	})
	r.rep.Charged = chargeOf(c, err, r.res, r.agents)
	if err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "ledger settle: "+err.Error())
	}
	if err := r.ledger.Close(); err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "ledger close: "+err.Error())
	}
}

// chargeOf is the report's account of what the ledger charged. A
// settlement that failed leaves the run held: the ledger charges it its
// whole reservation when it closes it (or did already, when the lease was
// lost).
func chargeOf(c ledger.Charge, err error, res *ledger.Reservation, agents int) *Charge {
	switch {
	case err != nil:
		return &Charge{CostUSD: res.CostUSD, Turns: res.Turns, Basis: ChargeReservation}
	case !c.CostKnown || !c.TurnsKnown:
		return &Charge{CostUSD: c.CostUSD, Turns: c.Turns, Basis: ChargeRunCaps}
	case agents == 0:
		return &Charge{CostUSD: c.CostUSD, Turns: c.Turns, Basis: ChargeNoAgent}
	}
	return &Charge{CostUSD: c.CostUSD, Turns: c.Turns, Basis: ChargeReported}
}

// account adds one invocation to the run's usage. An agent that never
// started spent nothing; one that started without its CLI's account of
// the cost leaves the run's cost unknown.
func (r *run) account(err error, res runner.Result) {
	r.rep.Agent.Invocations++
	if err != nil && res.NeverStarted {
		return
	}
	r.agents++
	r.unmetered = r.unmetered || !res.Metered
	r.rep.Agent.CostUSD += res.Cost
	r.rep.Agent.Turns += res.Turns
	r.rep.Agent.Denials += res.Denials
}

// keepOutput keeps the end of what a failed invocation's agent printed —
// often the only account of why it stopped — in the run report and the
// event log, and so on the console: redacted through the run's chokepoint,
// then escaped, so that it can neither leak nor drive a terminal.
func (r *run) keepOutput(phase string, res runner.Result) {
	out := &AgentOutput{Phase: phase, Stdout: r.agentText(res.StdoutTail), Stderr: r.agentText(res.StderrTail)}
	if out.Stdout == "" && out.Stderr == "" {
		return
	}
	r.rep.AgentOutput = out
	for _, s := range []struct{ name, text string }{{"agent-stdout", out.Stdout}, {"agent-stderr", out.Stderr}} {
		if s.text == "" {
			continue
		}
		lines := strings.Split(s.text, "\n")
		r.log.Emit(events.Event{Type: "note", Phase: phase, Name: s.name,
			Detail: fmt.Sprintf("the agent's last %d line(s):\n  | %s", len(lines), strings.Join(lines, "\n  | "))})
	}
}

// agentText is an agent's output as the run keeps it: redacted, then every
// control character escaped.
func (r *run) agentText(s string) string {
	return untrusted.Printable(r.scrubOutput(s))
}

func (r *run) gate(phase, name, verdict, detail string) {
	r.rep.Gates = append(r.rep.Gates, GateResult{Name: name, Phase: phase, Verdict: verdict, Detail: detail})
	r.log.Emit(events.Event{Type: "gate", Phase: phase, Name: name, Verdict: verdict, Detail: detail})
}

func newRunID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), nil
}

// marker is written into each disposable directory so a later run can tell
// whose it was.
type marker struct {
	Finding string `json:"finding"`
	Repo    string `json:"repo"`
	Run     string `json:"run"`
	PID     int    `json:"pid"`
}

func (m marker) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// StateDir returns the directory name under the repository's .fixrail
// state directory ("" for the state directory itself), made if missing; a
// symlink or a file there is refused, because it would send what fixrail
// writes wherever it points. The state directory ignores itself, so it
// never shows up as a change. Concurrent runs may call it at once.
func (s *Setup) StateDir(name string) (string, error) {
	top := filepath.Join(s.Repo.Top(), StateDirName)
	// Beneath the repository's top, through real directories only.
	d, err := pathguard.OpenDirBeneath(s.Repo.Top(), path.Join(StateDirName, name), 0o755)
	if err != nil {
		return "", fmt.Errorf("%w: state dir: %w", ErrSetup, err)
	}
	d.Close()
	// O_EXCL, so never written through a planted link; one that exists
	// (an earlier run's, a concurrent run's, a committed one) is left be.
	err = pathguard.WriteNew(filepath.Join(top, ".gitignore"), []byte("*\n"), 0o644)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%w: state dir: %w", ErrSetup, err)
	}
	return filepath.Join(top, name), nil
}
