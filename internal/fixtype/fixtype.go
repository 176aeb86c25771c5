// Package fixtype holds what differs between kinds of fix. A Type is a
// value the pipeline drives without naming it: how the investigate phase is
// briefed and what it may write, how its plan is read, the oracle that
// must be red before the fix and green after it, the gates the type adds,
// and its part of the commit message and the PR body. One file per type;
// each registers itself in the one list config validation, selection and
// doctor read.
package fixtype

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Type is one kind of fix. Every field is required except Retry and the
// optional harness parts (Plan, Edit) and what they replace: a type either briefs
// an investigate agent (Investigate, ReadPlan) or plans itself (Plan).
// Validate says which is missing; the pipeline calls them in this order.
type Type struct {
	// Name is the finding's fix type and the PR label fix:<Name>.
	Name string
	// Doc says in one line what the type fixes, for doctor and --help.
	Doc string
	// Subject is what one finding of the type is, in prose ("bug report").
	Subject string
	// Budget is the type's own caps, applied inside the configuration's.
	Budget Budget
	// Implied are intake risk keywords every finding of the type names by
	// definition (an advisory id says "cve" of every cve finding): for a
	// finding of this type they are no signal, and intake does not score
	// them. Every other keyword, label and path still counts. Optional.
	Implied []string
	// Check validates what the type needs from fixrail.yaml. It runs when
	// a finding of the type is taken, so a repository configures only the
	// types it uses.
	Check func(cfg *config.Config) error
	// Scope is where the investigate phase may write besides PLAN.json:
	// the globs its evidence (a reproducing test, fixtures) must match.
	Scope func(cfg *config.Config) []string
	// Plan, when set, is the harness's own investigation: P2 runs no agent
	// and calls Plan on a fresh checkout of the base (dir), for the finding
	// the run took. A *StopError ends the run in its terminal; any other
	// error means the plan could not be decided (ESCALATE). Exclusive with
	// Investigate and ReadPlan.
	Plan func(ctx context.Context, e *Env, dir string, f *findings.Finding) (*Plan, error)
	// Investigate and Fix are the agent's instructions for its two
	// invocations. They are fixrail's words, outside every fence; the
	// pipeline adds the fenced finding (and, for Fix, the fenced plan).
	Investigate func(b Brief) string
	Fix         func(b Brief, p *Plan) string
	// ReadPlan reads and validates PLAN.json: ErrInvalid, or ErrUnsafePath
	// for a path outside the repository.
	ReadPlan func(path string, cfg *config.Config) (*Plan, error)
	// Edit, when set, makes the fix itself in the agent's tree (dir) before
	// any agent is asked, and returns the result an agent would have
	// written. ErrAgentEdit (wrapped) hands the edit to the agent's fix
	// invocation (the Fix brief); a *StopError ends the run in its
	// terminal; any other error escalates.
	Edit func(ctx context.Context, e *Env, p *Plan, dir string) (*Result, error)
	// Retry, when set, is what the type adds to a recheck's follow-up fix
	// (attempt n, 1-based): words are fixrail's, said outside every fence;
	// values are data (version strings from a registry), fenced. The cve
	// type names the decision's next safe candidate. Optional.
	Retry func(e *Env, p *Plan, n int) (words, values string)
	// Red is the oracle before the fix. The pipeline runs it on the base
	// plus exactly the evidence; a failure is NOT-REPRO.
	Red func(e *Env, p *Plan) *gates.Gate
	// Gates are the type's fix-phase gates (its oracle after the fix among
	// them). They run on the candidate after the common structural gates
	// and before the suite.
	Gates func(e *Env, p *Plan) []*gates.Gate
	// CommitNote is the type's lines of the commit message, built from
	// validated values only.
	CommitNote func(e *Env, p *Plan) string
	// Section is the type's part of the PR body: what was proved, and how.
	// Every value an agent or a report chose goes in a code span.
	Section func(e *Env, p *Plan, commit string) string
	// Warning, when set, is what a reviewer must read before anything
	// else: the PR body opens with it (a secret's "rotate first").
	// Optional.
	Warning func(e *Env, p *Plan) string
	// Replay, when set, is the plan a commit's recorded claim stands for,
	// for `fixrail verify` to run the type's Red and Gates again from the
	// repository (and, for cve, the advisory data the type is bound to).
	// An error wrapping ErrClaimDiffers is a difference verify names; any
	// other error means it could not look. Nil: verify says the oracle was
	// not re-run. Optional.
	Replay func(ctx context.Context, e *Env, c Claimed) (*Plan, error)
}

// Claimed is what a commit's trailers record of its plan: the test, the
// evidence and fix paths, and the dependency a cve fix moved.
type Claimed struct {
	Test       *Test
	Evidence   []string
	Files      []string
	Dependency *Dependency
	// Alert is the scanner result a scanned fix (sast, iac) was judged
	// by, as the commit's trailers name it.
	Alert *Alert
}

// Alert is the scanner result a scanned plan judged: the tool that
// reported it, its rule, where, and how severe. Every value was
// validated before it was planned on (ValidAlert).
type Alert struct {
	Tool, Rule, Path string
	Line, EndLine    int
	Severity         string
}

// Location renders an alert's place as the Fixrail-Location trailer
// writes it: path:line-endline, the end only when past the line, the line
// only when there is one (ValidAlert refuses a path holding a colon with
// none).
func (a Alert) Location() string {
	switch {
	case a.Line > 0 && a.EndLine > a.Line:
		return fmt.Sprintf("%s:%d-%d", a.Path, a.Line, a.EndLine)
	case a.Line > 0:
		return fmt.Sprintf("%s:%d", a.Path, a.Line)
	}
	return a.Path
}

// The bounds of an alert's values: they come from an untrusted report.
var (
	// ruleID bounds a rule id to what scanners use (gosec G201, semgrep's
	// dotted ids, CodeQL's go/sql-injection, checkov's CKV_AWS_20).
	ruleID   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,199}$`) })
	toolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_. +-]{0,63}$`) })
	severity = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{1,16}$`) })
)

// MaxAlertLine bounds an alert's line numbers.
const MaxAlertLine = 1 << 24

// ValidAlert says which of a's values is not one fixrail plans on: a rule
// id of the scanners' charset, a tool name of letters, digits and a few
// marks, a clean relative path, lines in order (0: none), a lower-case
// severity word; a path with a colon only with a line.
func ValidAlert(a Alert) error {
	switch {
	case !ruleID().MatchString(a.Rule):
		return fmt.Errorf("rule %q is not a scanner's rule id", a.Rule)
	case a.Tool != "" && (!toolName().MatchString(a.Tool) || strings.TrimSpace(a.Tool) != a.Tool):
		return fmt.Errorf("tool %q is not a scanner's name", a.Tool)
	case a.Severity != "" && !severity().MatchString(a.Severity):
		return fmt.Errorf("severity %q is not a lower-case word", a.Severity)
	case a.Line < 0 || a.Line > MaxAlertLine || a.EndLine < 0 || a.EndLine > MaxAlertLine:
		return fmt.Errorf("line %d-%d is out of range", a.Line, a.EndLine)
	case a.EndLine != 0 && a.EndLine < a.Line, a.Line == 0 && a.EndLine != 0:
		return fmt.Errorf("end line %d is before line %d", a.EndLine, a.Line)
	}
	if c, err := pathguard.CleanRel(a.Path); err != nil || c != a.Path {
		return fmt.Errorf("path %q is not a clean relative path", a.Path)
	}
	if a.Line == 0 && strings.Contains(a.Path, ":") {
		// path:line is how a trailer writes a place: a colon is only
		// unambiguous with the line after it.
		return fmt.Errorf("path %q holds a colon and the alert names no line", a.Path)
	}
	return nil
}

// ErrClaimDiffers wraps a Replay error that is a finding about the claim
// (the base does not declare the package it names), not a failure to look.
var ErrClaimDiffers = errors.New("the claim does not hold")

// Dependency is the package a cve plan judged, as the repository's
// manifests name it: what the commit's trailers record so verify can ask
// the same question of the same declaration.
type Dependency struct {
	Ecosystem, Package, Manifest string
}

// Test is the reproducing test a type's oracle runs, as its plan named
// it: what the commit's trailers record.
type Test struct {
	Path, Name, Symptom string
}

// Budget is what a type caps beyond the configuration.
type Budget struct {
	// MaxDiffLines caps added plus deleted lines; 0 leaves
	// budget.max_diff_lines alone, and a type can only lower it.
	MaxDiffLines int
	// BashRules are the shell commands the fix phase may run (Claude Code
	// permission rules); none for most types.
	BashRules []string
}

// Brief is what the pipeline tells a type about the invocation it briefs.
type Brief struct {
	PlanPath   string
	ResultPath string
	Config     *config.Config
}

// Env is the harness as a type sees it: the configuration, the base, and
// the one way repository code is run — in a fresh checkout, sandboxed,
// with the build environment and no credentials.
type Env struct {
	Config  *config.Config
	Base    string
	BaseSHA string
	// Exec runs argv in a fresh checkout of rev (a commit or a tree),
	// made for this one command and discarded after it. label names the
	// checkout in the run directory.
	Exec func(ctx context.Context, label, rev string, argv []string, timeout time.Duration) (sandbox.Result, error)
	// ExecIn runs argv in dir — the agent's tree, for an Edit's lockfile
	// regeneration — sandboxed like Exec, with env added to the build
	// environment. Only harness-chosen argv and env, never a finding's.
	ExecIn func(ctx context.Context, dir string, argv, env []string, timeout time.Duration) (sandbox.Result, error)
	// Read gives fn a fresh checkout of rev to read (never to run code
	// in), discarded after it: how a type's oracle judges a candidate's
	// files with its own code.
	Read func(ctx context.Context, label, rev string, fn func(dir string) error) error
	// Scan runs a configured scanner in a fresh checkout of rev, sandboxed
	// like Exec, with a fresh empty output directory outside the checkout
	// (out) writable too and ro (its rule packs) bound read-only; read sees
	// the checkout and out after the command, before both are discarded.
	Scan func(ctx context.Context, label, rev string, argv func(dir, out string) []string, ro []string, timeout time.Duration, read func(dir, out string) error) (sandbox.Result, error)
}

// Plan is what the investigate phase decided, in the terms the pipeline
// needs; Detail is the type's own plan for its oracle and its sections.
type Plan struct {
	// Summary is the agent's account: untrusted, redacted before use.
	Summary string
	// Files are the source paths the fix may change.
	Files []string
	// Evidence are the files the investigate phase wrote: recorded as
	// blobs, run red, shipped, and never changed by the fix.
	Evidence []string
	// Tests are the evidence files that are tests (a bug's reproducing
	// test): one may add lines to a file the base already has. Every other
	// evidence file (a fixture) must be new, or left as the base has it.
	Tests []string
	// Values are the plan's other fields for the fix prompt, fenced there
	// as data.
	Values string
	// Report is what the run report keeps of the plan (JSON).
	Report any
	// Detail is the type's own.
	Detail any
	// Withhold are values no record or publication of the run may carry
	// (a secret finding's credential, recovered from the tree). The
	// pipeline adds them to the run's redactor as soon as the plan is
	// read, and replaces them in the published patch, where only a deleted
	// line can still hold one. Values — the fix prompt — may show them.
	// Only a harness plan (Plan) sets it.
	Withhold []string
	// Conclusion, when set, is the investigation's answer that there is
	// nothing to fix, instead of a reproduction: Files and Evidence are
	// empty, and the run ends in the conclusion's terminal (Conclusions).
	Conclusion *Conclusion
	// Test is the reproducing test the oracle runs, for a type that has
	// one; nil otherwise.
	Test *Test
	// Dependency is the package a harness plan judged (cve); nil
	// otherwise.
	Dependency *Dependency
	// Alert is the scanner result a scanned plan judged (sast, iac), its
	// severity as the oracle settled it; nil otherwise.
	Alert *Alert
}

// Conclusion is an investigation's answer that there is no bug to fix.
type Conclusion struct {
	// Code is the reason code the run ends with, a key of Conclusions.
	Code string
	// Reason is the agent's account of why, for a human: untrusted,
	// redacted and escaped before anyone reads it, never acted on.
	Reason string
}

// Conclusions are the answers an investigation may give instead of a
// reproduction, each with the terminal its run ends in. Neither ships
// anything; each tells the reviewer what the agent concluded, and why.
var Conclusions = map[string]verdict.Terminal{
	verdict.ReasonWorksAsDesigned: verdict.NotRepro,
	verdict.ReasonCannotReproduce: verdict.NotRepro,
}

// MaxConclusionReason bounds a conclusion's reason, in bytes.
const MaxConclusionReason = 2000

// Result is what the agent writes after the fix phase.
type Result struct {
	Summary      string   `json:"summary"`
	FilesChanged []string `json:"files_changed"`
}

// ErrInvalid marks agent output that is missing or malformed.
var ErrInvalid = errors.New("invalid agent output")

// ErrUnsafePath marks agent output naming a path outside the repository.
var ErrUnsafePath = errors.New("unsafe path in agent output")

// ErrAgentEdit (wrapped) is Edit's answer when the harness does not make
// the edit itself and the agent's fix invocation must.
var ErrAgentEdit = errors.New("the agent makes this edit")

// StopError is a terminal a type's harness step (Plan, Edit) decided: a
// finding the repository does not reproduce, or one no edit can fix.
type StopError struct {
	Terminal verdict.Terminal
	Reason   string
	Err      error
}

func (e *StopError) Error() string { return e.Err.Error() }
func (e *StopError) Unwrap() error { return e.Err }

// ErrUnknown marks a fix type no registered Type has.
var ErrUnknown = errors.New("unknown fix type")

// registry is the one list of types, in the order doctor shows them.
var registry = []*Type{Bug, CVE, SAST, Secret, IaC}

// Register adds t to the registry; a test registers a throwaway type with
// it. It panics on a type that lacks a part or reuses a name, as a
// duplicate flag would.
func Register(t *Type) {
	if err := Validate(t); err != nil {
		panic(err)
	}
	if _, err := Lookup(t.Name); err == nil {
		panic("fixtype: " + t.Name + " registered twice")
	}
	registry = append(registry, t)
}

// Unregister removes a type Register added (tests clean up with it).
func Unregister(name string) {
	registry = slices.DeleteFunc(registry, func(t *Type) bool { return t.Name == name })
}

// Lookup returns the registered type called name.
func Lookup(name string) (*Type, error) {
	for _, t := range registry {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknown, name, Names())
}

// Names lists the registered types.
func Names() []string {
	var out []string
	for _, t := range registry {
		out = append(out, t.Name)
	}
	return out
}

// All returns the registered types.
func All() []*Type { return slices.Clone(registry) }

// Validate reports the first part t lacks.
func Validate(t *Type) error {
	missing := ""
	switch {
	case t == nil:
		return errors.New("fixtype: nil type")
	case t.Name == "" || !pathguard.SafeName(t.Name):
		missing = "a safe Name"
	case t.Doc == "":
		missing = "Doc"
	case t.Subject == "":
		missing = "Subject"
	case t.Check == nil:
		missing = "Check"
	case t.Scope == nil:
		missing = "Scope"
	case t.Plan != nil && (t.Investigate != nil || t.ReadPlan != nil):
		return fmt.Errorf("fixtype %q has both Plan and Investigate/ReadPlan: the harness plans, or an agent does, not both", t.Name)
	case t.Plan == nil && t.Investigate == nil:
		missing = "Investigate (or Plan)"
	case t.Fix == nil:
		missing = "Fix"
	case t.Plan == nil && t.ReadPlan == nil:
		missing = "ReadPlan (or Plan)"
	case t.Red == nil:
		missing = "Red"
	case t.Gates == nil:
		missing = "Gates"
	case t.CommitNote == nil:
		missing = "CommitNote"
	case t.Section == nil:
		missing = "Section"
	case t.Budget.MaxDiffLines < 0:
		return fmt.Errorf("fixtype %s: negative Budget.MaxDiffLines", t.Name)
	}
	if missing != "" {
		return fmt.Errorf("fixtype %q lacks %s", t.Name, missing)
	}
	return nil
}

// maxHandoffBytes bounds PLAN.json and the result file: they are agent
// output, read by the harness, and have no reason to be large.
const maxHandoffBytes = 256 << 10

// ReadResult reads and validates the fix phase's result file.
func ReadResult(path string) (*Result, error) {
	var r Result
	if err := ReadStrict(path, &r); err != nil {
		return nil, err
	}
	for i, f := range r.FilesChanged {
		c, err := pathguard.CleanRel(f)
		if err != nil {
			return nil, fmt.Errorf("%w: files_changed[%d]: %v", ErrUnsafePath, i, err)
		}
		r.FilesChanged[i] = c
	}
	return &r, nil
}

// ReadStrict decodes an agent's hand-off file into v: a regular file, not
// a link (it could name any file fixrail can read) and never a FIFO (it
// would hang the read), bounded, one JSON value, no unknown fields.
func ReadStrict(path string, v any) error {
	// Errors name the file, not where fixrail keeps it: they reach the
	// report, and from there an issue comment.
	name := filepath.Base(path)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrInvalid, name)
	}
	buf, err := io.ReadAll(io.LimitReader(f, maxHandoffBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	if len(buf) > maxHandoffBytes {
		return fmt.Errorf("%w: %s is over %d bytes", ErrInvalid, name, maxHandoffBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	return nil
}

// CleanPaths validates agent-chosen paths (field names them in errors)
// and returns them cleaned, refusing duplicates against seen.
func CleanPaths(field string, paths []string, seen map[string]bool) ([]string, error) {
	out := make([]string, len(paths))
	for i, f := range paths {
		c, err := pathguard.CleanRel(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d]: %v", ErrUnsafePath, field, i, err)
		}
		if seen[c] {
			return nil, fmt.Errorf("%w: %s lists %s, which is already planned or declared", ErrInvalid, field, c)
		}
		seen[c] = true
		out[i] = c
	}
	return out, nil
}
