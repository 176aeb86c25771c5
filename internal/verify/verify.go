// Package verify re-proves a fixrail commit from the repository alone:
// the claim its trailers make (claim.go) against what its parent, its
// tree and fresh checkouts of them show, with the base's own fixrail.yaml
// and the same gate values the run used; and the signed attestation of
// what a run judged (attest.go). It needs no state directory, ledger or
// token: everything it reads is in the clone.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// Check statuses.
const (
	Pass    = "pass"
	Fail    = "fail"
	Skipped = "skipped" // not re-run, and the detail says why
)

// Check is one re-derived fact.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Output string `json:"output,omitempty"`
}

// Report is what Verify found: every check it ran, in order, up to the
// first that failed.
type Report struct {
	Commit string  `json:"commit"`
	Claim  Claim   `json:"claim"`
	Checks []Check `json:"checks"`
	// Reproven is true when every check passed (skipped ones say why they
	// did not run). Difference names the first check that failed.
	Reproven   bool   `json:"reproven"`
	Difference string `json:"difference,omitempty"`
	// Unsandboxed: a command ran outside the sandbox (sandbox: auto with
	// no usable bubblewrap).
	Unsandboxed bool `json:"unsandboxed,omitempty"`
}

// Failed is the first failed check, or nil.
func (r *Report) Failed() *Check {
	for i := range r.Checks {
		if r.Checks[i].Status == Fail {
			return &r.Checks[i]
		}
	}
	return nil
}

// Input is what Verify judges and where it may work.
type Input struct {
	Repo *gitx.Repo
	// Rev is the commit under judgment, by any name git resolves.
	Rev string
	// Trusted is the commit the claimed base must be (or be an ancestor
	// of): the tip of the base branch the reviewer trusts, never anything
	// the judged branch chose. BaseName names it in messages.
	Trusted, BaseName string
	// Body, when set, is the PR body: its evidence block must be the
	// trailers' claim, field for field.
	Body *string
	// TempDir is where the fresh checkouts go; empty is os.TempDir().
	TempDir string
	// Lookup reads the environment (the leak scan's known secrets, the
	// build environment's variables).
	Lookup func(string) (string, bool)
	// Types are fix types the CLI bound to its services (the cve type to
	// the advisory source its flags chose); a name not among them is the
	// registry's.
	Types []*fixtype.Type
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// maxFileBytes bounds one file verify reads from a tree, as the harness
// bounds evidence.
const maxFileBytes = 1 << 20

// maxClaimPaths bounds the paths a claim (with its follow-ups') declares,
// and maxClaimBytes what verify reads of them, the commit's and the
// base's together: far above what a run ships (a bug plans at most 100
// files and 100 fixtures; a run reads at most 32 MiB for a candidate).
const (
	maxClaimPaths = 1000
	maxClaimBytes = 64 << 20
)

// errClaimBytes is a claim whose paths hold over maxClaimBytes.
var errClaimBytes = errors.New("the declared paths are over the bytes verify reads")

// ErrCouldNotLook wraps every error that kept Verify from judging: the
// commit, the repository or the sandbox could not be read or run. It is
// never a difference.
var ErrCouldNotLook = errors.New("could not look")

// Verify re-derives rev's claim. A difference is a failed check in the
// report; an error means it could not look.
func Verify(ctx context.Context, in Input) (*Report, error) {
	v := &verifier{in: in, rep: &Report{Checks: []Check{}}}
	if in.Progress == nil {
		v.in.Progress = io.Discard
	}
	if in.Lookup == nil {
		v.in.Lookup = os.LookupEnv
	}
	err := v.run(ctx)
	if v.x != nil {
		v.rep.Unsandboxed = v.x.unsandboxed
		v.x.close()
	}
	if err != nil {
		return v.rep, fmt.Errorf("%w: %w", ErrCouldNotLook, err)
	}
	f := v.rep.Failed()
	v.rep.Reproven = f == nil
	if f != nil {
		v.rep.Difference = f.Name + ": " + f.Detail
	}
	return v.rep, nil
}

type verifier struct {
	in     Input
	rep    *Report
	commit gitx.Commit
	// claim is the head's, with Files the union the chain declares;
	// root is the claim of the chain's first commit (the draft as opened).
	claim, root Claim
	cfg         *config.Config
	typ         *fixtype.Type
	x           *executor
}

// record adds a check; it reports whether the check passed (or was
// skipped), so run can stop at the first difference.
func (v *verifier) record(name, status, detail string) bool {
	v.rep.Checks = append(v.rep.Checks, Check{Name: name, Status: status, Detail: detail})
	v.progress(name, status, detail)
	return status != Fail
}

// progress writes one check's line. A detail carries what the branch
// chose (a path's name, a trailer's value): escaped, it cannot forge a
// line after it (a CI log reads a line that starts "::" as a workflow
// command) or reach the terminal as a control sequence.
func (v *verifier) progress(name, status, detail string) {
	fmt.Fprintf(v.in.Progress, "verify: %s %s: %s\n", name, status, untrusted.OneLine(detail))
}

func (v *verifier) run(ctx context.Context) error {
	var err error
	if v.commit, err = v.in.Repo.ReadCommit(ctx, v.in.Rev); err != nil {
		return err
	}
	v.rep.Commit = v.commit.SHA
	// The claim: trailers that parse and hold together.
	c, err := ParseTrailers(v.commit.Message)
	if err != nil {
		v.record("trailers", Fail, err.Error())
		return nil
	}
	v.claim, v.root, v.rep.Claim = c, c, c
	if !v.record("trailers", Pass, fmt.Sprintf("finding %s, fix type %s, base %s, %d evidence and %d fix file(s), made by fixrail %s", c.Finding, c.FixType, short(c.Base), len(c.Evidence), len(c.Files), c.Version)) {
		return nil
	}
	// The parent chain, then the base on the branch the reviewer trusts:
	// only then is the base's fixrail.yaml the one to judge by.
	if ok, err := v.chain(ctx); !ok || err != nil {
		return err
	}
	if v.in.Body != nil {
		body, err := ParseBody(*v.in.Body)
		if err != nil {
			v.record("pr-body", Fail, err.Error())
			return nil
		}
		// fixrail writes the block once, when it opens the draft: it is
		// the first commit's claim; a follow-up's is accepted too.
		d := v.root.Diff(body)
		if d != "" && c.Diff(body) == "" {
			d = ""
		}
		if d != "" {
			v.record("pr-body", Fail, "the PR body's evidence block differs from the commit's trailers in "+d)
			return nil
		}
		v.record("pr-body", Pass, "the PR body's evidence block is the trailers' claim")
	}
	on, err := v.in.Repo.IsAncestor(ctx, c.Base, v.in.Trusted)
	if err != nil {
		return err
	}
	if !on {
		v.record("base", Fail, fmt.Sprintf("the base %s is not on %s (%s): its fixrail.yaml is not one the reviewer trusts", short(c.Base), v.in.BaseName, short(v.in.Trusted)))
		return nil
	}
	v.record("base", Pass, fmt.Sprintf("the base %s is on %s", short(c.Base), v.in.BaseName))
	if ok, err := v.setup(ctx); !ok || err != nil {
		return err
	}
	change, red, ok, err := v.tree(ctx)
	if !ok || err != nil {
		return err
	}
	return v.gates(ctx, change, red)
}

// setup reads fixrail.yaml from the base commit, the fix type it names,
// and makes the executor the oracles and the suite run in.
func (v *verifier) setup(ctx context.Context) (bool, error) {
	data, err := v.in.Repo.ShowFile(ctx, v.claim.Base, config.FileName)
	if errors.Is(err, gitx.ErrNotExist) {
		v.record("config", Fail, "the base "+short(v.claim.Base)+" has no "+config.FileName)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if v.cfg, err = config.Parse(config.FileName+" (at "+short(v.claim.Base)+")", data); err != nil {
		v.record("config", Fail, err.Error())
		return false, nil
	}
	var pins []gitx.Pin
	for _, p := range v.cfg.Git.Pins() {
		pins = append(pins, gitx.Pin{Key: p.Key, Value: p.Value})
	}
	if err := v.in.Repo.Pin(pins); err != nil {
		return false, err
	}
	if v.typ, err = v.lookupType(v.claim.FixType); err != nil {
		v.record("config", Fail, err.Error())
		return false, nil
	}
	if err := v.typ.Check(v.cfg); err != nil {
		v.record("config", Fail, fmt.Sprintf("the %s fix type: %v", v.typ.Name, err))
		return false, nil
	}
	if v.x, err = newExecutor(v.in, v.cfg); err != nil {
		return false, err
	}
	v.record("config", Pass, config.FileName+" read from the base "+short(v.claim.Base)+", never from the branch")
	return true, nil
}

// tree holds the commit's tree to the base plus exactly the declared
// paths, and builds what the gates judge: the change, the base plus the
// evidence (what ran red) and the base plus the fix alone.
func (v *verifier) tree(ctx context.Context) (*gates.Change, string, bool, error) {
	repo, c := v.in.Repo, v.claim
	// The claim chooses how many paths are read, each a few git processes
	// and up to maxFileBytes held: bounded before any is read, and in
	// bytes together, or a crafted claim holds verify for hours or takes
	// gigabytes.
	if n := len(c.Evidence) + len(c.Files); n > maxClaimPaths {
		v.record("tree", Fail, fmt.Sprintf("the claim declares %d paths, over the %d verify reads (no run ships that many)", n, maxClaimPaths))
		return nil, "", false, nil
	}
	left := int64(maxClaimBytes)
	read := func(rev string, paths []string) ([]gitx.Entry, error) {
		var out []gitx.Entry
		for _, p := range paths {
			e, err := repo.TreeEntry(ctx, rev, p, maxFileBytes)
			if err != nil {
				return nil, err
			}
			if left -= int64(len(e.Data)); left < 0 {
				return nil, errClaimBytes
			}
			out = append(out, e)
		}
		return out, nil
	}
	evidence, err := read(v.commit.SHA, c.Evidence)
	var fixes, baseFixes []gitx.Entry
	if err == nil {
		fixes, err = read(v.commit.SHA, c.Files)
	}
	if err == nil {
		baseFixes, err = read(c.Base, c.Files)
	}
	if errors.Is(err, errClaimBytes) {
		v.record("tree", Fail, fmt.Sprintf("the declared paths hold over %d bytes together in the commit and the base (no run ships that much)", maxClaimBytes))
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	all := slices.Concat(evidence, fixes)
	built, err := repo.BuildTree(ctx, c.Base, all, v.x.index("declared"))
	if err != nil {
		return nil, "", false, err
	}
	diff, err := repo.DiffTrees(ctx, c.Base, v.commit.SHA)
	if err != nil {
		return nil, "", false, err
	}
	if built != v.commit.Tree {
		var extra []string
		for _, p := range diff.Files {
			if !slices.Contains(c.Evidence, p) && !slices.Contains(c.Files, p) {
				extra = append(extra, p)
			}
		}
		v.record("tree", Fail, fmt.Sprintf("the commit's tree is not the base plus exactly the declared files: it also changes %s", strings.Join(extra, ", ")))
		return nil, "", false, nil
	}
	for _, e := range evidence {
		if e.Deleted() {
			v.record("tree", Fail, "the declared evidence "+e.Path+" is not in the commit")
			return nil, "", false, nil
		}
	}
	if d := unshipped(evidence, fixes, baseFixes); d != "" {
		v.record("tree", Fail, d)
		return nil, "", false, nil
	}
	v.record("tree", Pass, fmt.Sprintf("the base plus exactly the %d declared path(s)", len(all)))
	red, err := repo.BuildTree(ctx, c.Base, evidence, v.x.index("red"))
	if err != nil {
		return nil, "", false, err
	}
	files := map[string]gitx.Entry{}
	base := map[string]gitx.Entry{}
	for _, e := range all {
		files[e.Path] = e
	}
	for _, e := range baseFixes {
		base[e.Path] = e
	}
	// As the run built it: the fix without the evidence and without the
	// test files it adds (gates.AddedTests).
	globs := v.typ.Scope(v.cfg)
	if g := v.cfg.Test.PathGlob; g != "" {
		globs = append(slices.Clone(globs), g)
	}
	added, err := gates.AddedTests(globs, fixes, func(p string) (gitx.Entry, error) { return base[p], nil })
	if err != nil {
		return nil, "", false, err
	}
	own := slices.DeleteFunc(slices.Clone(fixes), func(e gitx.Entry) bool { return slices.Contains(added, e.Path) })
	fixOnly, err := repo.BuildTree(ctx, c.Base, own, v.x.index("fix-only"))
	if err != nil {
		return nil, "", false, err
	}
	fixTests, rest := gates.SplitTests(globs, fixes)
	fixAlone := v.commit.Tree
	if len(fixTests) > 0 {
		if fixAlone, err = repo.BuildTree(ctx, red, rest, v.x.index("fix-alone")); err != nil {
			return nil, "", false, err
		}
	}
	pol, err := sensitive.New(v.cfg.Paths.Fixable, v.cfg.Paths.Sensitive, v.typ.Scope(v.cfg)...)
	if err != nil {
		return nil, "", false, err
	}
	maxLines := v.cfg.Budget.MaxDiffLines
	if n := v.typ.Budget.MaxDiffLines; n > 0 && n < maxLines {
		maxLines = n
	}
	// The commit's tree stands for the commit in every fresh checkout:
	// FixOnly is a tree too, and equal to it when there is no evidence.
	return &gates.Change{
		Commit:       v.commit.Tree,
		Changed:      diff.Files,
		Diff:         diff,
		Files:        files,
		BaseFiles:    base,
		Planned:      c.Files,
		Declared:     c.Files,
		Policy:       pol,
		MaxDiffLines: maxLines,
		MaxDiffBytes: v.cfg.Budget.MaxDiffBytes,
		MaxLineBytes: v.cfg.Budget.MaxLineBytes,
		Evidence:     evidence,
		Base: func(ctx context.Context, p string) (gitx.Entry, error) {
			return repo.TreeEntry(ctx, c.Base, p, maxFileBytes)
		},
		FixOnly:    fixOnly,
		AddedTests: added,
		FixTests:   fixTests,
		FixAlone:   fixAlone,
		Suite: func(ctx context.Context, rev string) (sandbox.Result, error) {
			return v.x.exec(ctx, "suite", rev, v.cfg.Suite.Command, v.cfg.Suite.Timeout)
		},
	}, red, true, nil
}

// unshipped names the first declared entry a run refuses to ship, or "":
// evidence that is not a regular file (NOT-REPRO), a fix that writes a
// symlink or git metadata (ESCALATE unsafe-path). The tree check proves
// only that the commit is the base plus these paths; fixrail never makes
// such a commit, so none of it re-proves. base holds the base's entries
// at the fix paths, in order: a path the fix leaves as it was is not the
// fix's write.
func unshipped(evidence, fixes, base []gitx.Entry) string {
	for _, e := range evidence {
		if e.Mode != "100644" && e.Mode != "100755" {
			return fmt.Sprintf("the declared evidence %s is not a regular file (mode %s): a run records only regular files as evidence", e.Path, e.Mode)
		}
	}
	for i, e := range fixes {
		switch {
		case e.Same(base[i]):
		case e.Mode == "120000":
			return "the fix writes " + e.Path + ", a symlink: a run never ships one"
		case gitMetadata(e.Path):
			return "the fix writes " + e.Path + ", git metadata: a run never ships it"
		}
	}
	return ""
}

// gitMetadata is a path git reads as its own configuration in a work
// tree, wherever it lies (the run's rule, pipeline.isGitMetadata).
func gitMetadata(p string) bool {
	switch path.Base(p) {
	case ".gitattributes", ".gitmodules":
		return true
	}
	return false
}

// gates runs again the gates that need no model, in the run's order: the
// structural ones, the leak scan, the fix type's oracle red on the base
// plus the evidence and its gates on the commit, then the suite.
func (v *verifier) gates(ctx context.Context, c *gates.Change, red string) error {
	scrub, err := redact.FromEnvironment(v.in.Lookup, v.cfg.Redact.CustomerIDsFile)
	if err != nil {
		return fmt.Errorf("leak scan: %w", err)
	}
	run := func(g *gates.Gate, ch *gates.Change) (bool, error) {
		verdict, err := g.Run(ctx, ch)
		if err != nil {
			return false, fmt.Errorf("%s: %w", g.Name, err)
		}
		status := Pass
		switch {
		case !verdict.Pass:
			status = Fail
		case verdict.Unconfirmed:
			// What a run ships labelled (needs-review) verify reports as
			// not re-proven, never as passed.
			status = Skipped
			verdict.Detail = fmt.Sprintf("not confirmed (the run labels it %s): %s", verdict.Label, verdict.Detail)
		}
		v.rep.Checks = append(v.rep.Checks, Check{Name: g.Name, Status: status, Detail: verdict.Detail, Output: v.scrubbed(scrub, verdict.Output)})
		v.progress(g.Name, status, verdict.Detail)
		return verdict.Pass, nil
	}
	for _, g := range []*gates.Gate{gates.DiffNonEmpty, gates.StageB, gates.DiffBudget, leakGate(scrub, v.commit.Message)} {
		if ok, err := run(g, c); !ok || err != nil {
			return err
		}
	}
	if v.typ.Replay == nil {
		v.record("oracle", Skipped, fmt.Sprintf("the %s oracle is not replayable from a commit: not re-run", v.typ.Name))
	} else {
		env := &fixtype.Env{Config: v.cfg, Base: "the base", BaseSHA: v.claim.Base, Exec: v.x.exec, Read: v.x.read, Scan: v.x.scan}
		cl := fixtype.Claimed{Evidence: v.claim.Evidence, Files: v.claim.Files}
		if v.claim.TestPath != "" {
			cl.Test = &fixtype.Test{Path: v.claim.TestPath, Name: v.claim.TestName, Symptom: v.claim.Symptom}
		}
		if v.claim.Package != "" {
			cl.Dependency = &fixtype.Dependency{Ecosystem: v.claim.Ecosystem, Package: v.claim.Package, Manifest: v.claim.Manifest}
		}
		if v.claim.Rule != "" {
			a, err := v.claim.Alert() // validated with the claim
			if err != nil {
				return err
			}
			cl.Alert = &a
		}
		plan, err := v.typ.Replay(ctx, env, cl)
		if errors.Is(err, fixtype.ErrClaimDiffers) {
			v.record("oracle", Fail, err.Error())
			return nil
		}
		if err != nil {
			return fmt.Errorf("the %s oracle: %w", v.typ.Name, err)
		}
		// Evidence is what a bug's investigation writes; a type whose plan
		// has none never commits any, and files declared as evidence would
		// pass beside the plan's own unjudged.
		if len(plan.Evidence) == 0 && len(v.claim.Evidence) > 0 {
			v.record("oracle", Fail, fmt.Sprintf("the claim declares evidence (%s), which a %s run never writes", strings.Join(v.claim.Evidence, ", "), v.typ.Name))
			return nil
		}
		// A run's investigation writes only inside its type's evidence
		// scope (test.path_glob for a bug: the read-only gate); evidence
		// elsewhere is source the suite's first run never sees.
		scope := v.typ.Scope(v.cfg)
		for _, p := range v.claim.Evidence {
			if !slices.ContainsFunc(scope, func(g string) bool { ok, err := doublestar.Match(g, p); return err == nil && ok }) {
				v.record("oracle", Fail, fmt.Sprintf("the evidence %s is not under %s, where a %s run's investigation may write", p, strings.Join(scope, ", "), v.typ.Name))
				return nil
			}
		}
		redChange := &gates.Change{Commit: red, Evidence: c.Evidence, Planned: plan.Files, Policy: c.Policy}
		if ok, err := run(v.typ.Red(env, plan), redChange); !ok || err != nil {
			return err
		}
		for _, g := range v.typ.Gates(env, plan) {
			// test-unchanged compares the evidence a run ran red with the
			// commit's; here both are read from the commit, so it could
			// not fail, and a check that cannot fail is not reported.
			if g.Name == "test-unchanged" {
				continue
			}
			if ok, err := run(g, c); !ok || err != nil {
				return err
			}
		}
	}
	for _, g := range gates.Last {
		if ok, err := run(g, c); !ok || err != nil {
			return err
		}
	}
	return nil
}

// lookupType is the fix type the claim names: the CLI's binding of it,
// else the registry's.
func (v *verifier) lookupType(name string) (*fixtype.Type, error) {
	for _, t := range v.in.Types {
		if t.Name == name {
			return t, nil
		}
	}
	return fixtype.Lookup(name)
}

// maxChain bounds the first-parent walk: a recheck makes a few follow-ups,
// never this many.
const maxChain = 64

// chain holds the head's first-parent chain to the base its trailers name:
// every commit on it one parent, and every one but the head carrying the
// same finding's claim (finding, fix type, base, test, evidence,
// dependency) — the first commit and a recheck's follow-ups. The fix
// paths the chain declares are the union of its claims'. A commit whose
// base trailer is its own parent ends the walk, so a branch whose commits
// each stand on the one before is re-proven one commit at a time.
func (v *verifier) chain(ctx context.Context) (bool, error) {
	c := v.claim
	ok, err := v.in.Repo.IsAncestor(ctx, c.Base, v.commit.SHA)
	if err != nil {
		return false, err
	}
	if !ok || c.Base == v.commit.SHA {
		v.record("parent", Fail, fmt.Sprintf("the base %s the trailers name is not an ancestor of the commit", c.Base))
		return false, nil
	}
	cur, files := v.commit, slices.Clone(c.Files)
	var follow []string
	for n := 0; ; n++ {
		if len(cur.Parents) != 1 {
			v.record("parent", Fail, fmt.Sprintf("commit %s's parent is %s, not one commit on the way to the base %s", short(cur.SHA), parents(cur.Parents), short(c.Base)))
			return false, nil
		}
		if cur.Parents[0] == c.Base {
			break
		}
		if n == maxChain {
			v.record("parent", Fail, fmt.Sprintf("more than %d commits between the commit and the base %s", maxChain, short(c.Base)))
			return false, nil
		}
		follow = append(follow, short(cur.SHA))
		next, err := v.in.Repo.ReadCommit(ctx, cur.Parents[0])
		if err != nil {
			return false, err
		}
		pc, err := ParseTrailers(next.Message)
		if err != nil {
			v.record("parent", Fail, fmt.Sprintf("commit %s, between the commit and the base %s, is not fixrail's for this finding: %v", short(next.SHA), short(c.Base), err))
			return false, nil
		}
		if d := sameFinding(c, pc); d != "" {
			v.record("parent", Fail, fmt.Sprintf("commit %s, between the commit and the base %s, carries another claim: its %s differs (finding %s, fix type %s)", short(next.SHA), short(c.Base), d, pc.Finding, pc.FixType))
			return false, nil
		}
		for _, p := range pc.Files {
			if !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
		cur, v.root = next, pc
	}
	v.claim.Files = files
	if len(follow) == 0 {
		v.record("parent", Pass, "the commit's one parent is the base "+short(c.Base))
		return true, nil
	}
	slices.Reverse(follow)
	v.record("parent", Pass, fmt.Sprintf("commit %s stands on the base %s; follow-up(s) %s carry the same finding's trailers, one parent each", short(cur.SHA), short(c.Base), strings.Join(follow, ", ")))
	return true, nil
}

// sameFinding names the first part of the claim a follow-up must share
// with the commit before it, or "". Files may grow; the version is the
// binary's.
func sameFinding(a, b Claim) string {
	b.Files, b.Version = a.Files, a.Version
	return a.Diff(b)
}

func (v *verifier) scrubbed(s *redact.Engine, out string) string {
	if out == "" {
		return ""
	}
	red, _, err := s.Redact(out)
	if err != nil {
		return "[output withheld: its redaction failed]"
	}
	return red
}

// leakGate scans what the commit brings: its message (the trailers with
// it) and every line the patch adds. A deleted or context line is the
// base's already (a secret fix deletes the credential it was about; the
// run published that line with the value withheld). A blocking hit is a
// difference.
func leakGate(s *redact.Engine, msg string) *gates.Gate {
	return &gates.Gate{
		Name: "leak-scan",
		Doc:  "the commit message and every line the patch adds carry no secret",
		Run: func(_ context.Context, c *gates.Change) (gates.Verdict, error) {
			for _, t := range [][2]string{{"the commit message carries", msg}, {"a line the patch adds carries", added(c.Diff.Text)}} {
				fs, err := s.Detect(t[1])
				if err != nil {
					return gates.Verdict{}, err
				}
				var rules []string
				for _, f := range fs {
					if f.Blocking() && !slices.Contains(rules, f.Rule) {
						rules = append(rules, f.Rule)
					}
				}
				if len(rules) > 0 {
					return gates.Verdict{Detail: t[0] + " " + strings.Join(rules, ", ")}, nil
				}
			}
			return gates.Verdict{Pass: true, Detail: "commit message and every added line clean"}, nil
		},
	}
}

// added is a unified diff's added lines, one a line, without their "+":
// a "+" line inside a hunk (an added "++ x" is "+++ x" there, never a
// header), up to the next file's "diff --git" header.
func added(diff string) string {
	var b strings.Builder
	hunk := false
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			hunk = false
		case strings.HasPrefix(l, "@@ "):
			hunk = true
		case hunk && strings.HasPrefix(l, "+"):
			b.WriteString(l[1:])
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func parents(ps []string) string {
	switch len(ps) {
	case 0:
		return "none (a root commit)"
	case 1:
		return ps[0]
	}
	return strings.Join(ps, " and ") + " (a merge)"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
