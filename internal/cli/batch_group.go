package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/batch"
	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verdict"
	"github.com/fixrail/fixrail/internal/verify"
)

// groupOpts are --group and the two flags a grouped batch gives each of
// its stacked runs: --stack-on (the commit the run starts from, a
// pipeline seam) and --hold-pr (the draft PR is written to a file for the
// batch, not published: the forge seam). They are public flags, so a
// person can run one step of a group by hand, but the batch sets them.
type groupOpts struct {
	group   string
	stackOn string
	holdPR  string
}

func (g *groupOpts) flags(fs *flag.FlagSet) {
	fs.StringVar(&g.group, "group", "", "with --batch: `manifest` makes a batch's cve findings on one manifest one draft PR, one commit per finding, each judged on the one before it")
	fs.StringVar(&g.stackOn, "stack-on", "", "start from this full commit `id` (it must descend from the base branch) instead of the base's tip; set by --group for each finding after the first")
	fs.StringVar(&g.holdPR, "hold-pr", "", "write a DRAFT-PR's draft to this new `file` instead of publishing it; set by --group, which publishes the group's PR itself")
}

// check refuses the flags where they mean nothing.
func (g *groupOpts) check(batchRun bool) error {
	if _, err := batch.ParseGroup(g.group); err != nil {
		return usagef("%v", err)
	}
	if batchRun && (g.stackOn != "" || g.holdPR != "") {
		return usagef("--stack-on and --hold-pr are set by --group for each finding; a batch takes neither")
	}
	if !batchRun && g.group != "" {
		return usagef("--group goes with --batch")
	}
	return nil
}

// stack moves a single run's start to --stack-on.
func (g *groupOpts) stack(ctx context.Context, s *pipeline.Setup) error {
	if g.stackOn == "" {
		return nil
	}
	return s.StackOn(ctx, g.stackOn)
}

// apply swaps the run's publisher for the holding one; the rest of the
// forge (protection, access, open work, notices) stays the one built.
func (g *groupOpts) apply(p *pipeline.Params) {
	if g.holdPR != "" {
		p.Forge = heldForge{Forge: p.Forge, path: g.holdPR}
	}
}

// wrap hands a run its publisher and guards: held first, then the dry
// run's wrapper over it, so a dry run's forge refuses the held write as it
// refuses any publication.
func (o *runOpts) wrap(p *pipeline.Params, s *runSink) {
	o.g.apply(p)
	o.x.apply(p, s)
}

// heldPR is a held draft: the PR with the body and patch forge.PR keeps
// out of its JSON.
type heldPR struct {
	PR    forge.PR `json:"pr"`
	Body  string   `json:"body"`
	Patch string   `json:"patch"`
}

// heldForge publishes nothing: it writes the draft, after every check
// Publish makes, to a new file for the batch that groups it. It has no
// WaitChecks: there is no PR whose CI a run could wait for.
type heldForge struct {
	pipeline.Forge
	path string
}

func (h heldForge) Publish(_ context.Context, pr forge.PR) (forge.Published, error) {
	if err := forge.CheckHead(pr); err != nil {
		return forge.Published{}, err
	}
	data, err := json.Marshal(heldPR{PR: pr, Body: pr.Body, Patch: pr.Patch})
	if err != nil {
		return forge.Published{}, err
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return forge.Published{}, fmt.Errorf("hold the draft: %w", err)
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err != nil {
		return forge.Published{}, fmt.Errorf("hold the draft: %w", err)
	}
	return forge.Published{Location: "held for the batch's grouped draft PR", Branch: pr.Head, Commit: pr.Commit}, nil
}

// maxHeldBytes bounds a held draft read back (body and patch).
const maxHeldBytes = 8 << 20

// groupBatch is a --group manifest batch in one repository: the grouper
// routes each finding, the stacked runs hold their drafts in the batch
// directory, and publish sends one draft PR per group afterwards.
type groupBatch struct {
	g      *batch.Grouper
	dir    string
	local  string
	base   string
	dryRun bool
	// key is --attest-key: each stacked run signs its held draft with it,
	// and the batch checks each signature against its public half before
	// it puts the attestation beside the group's draft.
	key *keys.Key
	// sink is the webhook (FIXRAIL_WEBHOOK_URL), told each group's
	// publication or why it failed; scrub is the base branch's redaction,
	// what every event passes before it leaves.
	sink  interface{ Send(events.Event) }
	scrub *redact.Engine
	now   func() time.Time
}

// newGroupBatch reads the base branch's commit, which every group starts
// from, and builds the grouper around run (a finding's `fixrail run`).
func newGroupBatch(ctx context.Context, local, base, dir string, dryRun bool, key *keys.Key, items []batch.Item,
	run func(ctx context.Context, it batch.Item, extra ...string) batch.Result) (*groupBatch, error) {
	setup, err := pipeline.Prepare(ctx, local, base)
	if err != nil {
		return nil, err
	}
	gb := &groupBatch{dir: dir, local: local, base: setup.Base, dryRun: dryRun, key: key, scrub: setup.Scrub, now: time.Now}
	start := setup.BaseSHA
	setup.Close()
	stacked := func(ctx context.Context, it batch.Item, on string) (batch.Result, string) {
		held := gb.heldPath(it.ID)
		r := run(ctx, it, "--stack-on", on, "--hold-pr", held)
		if r.Terminal != verdict.DraftPR {
			return r, ""
		}
		h, err := readHeld(held)
		if err != nil {
			return r, ""
		}
		return r, h.PR.Commit
	}
	plain := func(ctx context.Context, it batch.Item) batch.Result { return run(ctx, it) }
	gb.g = batch.NewGrouper(items, start, stacked, plain)
	return gb, nil
}

func (gb *groupBatch) heldPath(id string) string { return filepath.Join(gb.dir, id+".held.json") }

// heldAttestationPath is where a run writes its held draft's attestation:
// beside the held draft, x.held.json → x.held.dsse.json.
func heldAttestationPath(held string) string { return strings.TrimSuffix(held, ".json") + ".dsse.json" }

// groupAttestationFile is an included finding's attestation beside the
// group's draft.
func groupAttestationFile(id string) string { return "attestation-" + id + ".dsse.json" }

func readHeld(path string) (*heldPR, error) {
	data, err := pathguard.ReadRegular(path, maxHeldBytes)
	if err != nil {
		return nil, err
	}
	var h heldPR
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &h, nil
}

// publish sends each group that holds a judged commit as one draft PR and
// writes the outcome into its members' results: the group's PR, or, if it
// could not be published, an error (their fixes reached no one). A dry run
// publishes nothing.
func (gb *groupBatch) publish(ctx context.Context, progress io.Writer, results []batch.Result) {
	for _, g := range gb.g.Groups() {
		gb.publishOne(ctx, progress, g, results)
	}
}

// publishOne publishes group g (publishGroup), says so on progress and to
// the webhook, and writes the outcome into its members' results.
func (gb *groupBatch) publishOne(ctx context.Context, progress io.Writer, g *batch.Group, results []batch.Result) {
	in := g.Included()
	if len(in) == 0 || gb.dryRun {
		return
	}
	var pub forge.Published
	var err error
	if ctx.Err() != nil {
		// A stopped batch publishes no half of a group.
		err = errors.New("the batch was stopped before the group was published")
	} else {
		pub, err = gb.publishGroup(ctx, g)
	}
	loc := pub.Location
	for i := range results {
		if !slices.ContainsFunc(in, func(m batch.Member) bool { return m.Item.ID == results[i].Item.ID }) {
			continue
		}
		if err != nil {
			results[i].Terminal, results[i].Reason, results[i].PR, results[i].Exit = "", "", "", exitInternal
			results[i].Error = "the group's draft PR was not published: " + err.Error()
		} else {
			results[i].PR = loc
		}
	}
	if err != nil {
		fmt.Fprintf(progress, "batch: group %s: %d commit(s) on %s, not published: %s\n", g.ID(), len(in), untrusted.OneLine(g.Manifest), untrusted.OneLine(err.Error()))
	} else {
		fmt.Fprintf(progress, "batch: group %s: %d of %d finding(s) on %s in one draft → %s\n", g.ID(), len(in), len(g.Members), untrusted.OneLine(g.Manifest), untrusted.OneLine(loc))
	}
	gb.notify(g, loc, err)
	for _, w := range pub.Warnings {
		fmt.Fprintf(progress, "batch: group %s: warning: %s\n", g.ID(), untrusted.OneLine(w))
	}
}

// notify sends the group's outcome to the webhook, through the redaction
// every event passes (a manifest's name and an error's text come from
// the findings and the repository): published, with where and which
// findings; or not published, with why.
func (gb *groupBatch) notify(g *batch.Group, loc string, err error) {
	if gb.sink == nil {
		return
	}
	var ids []string
	for _, m := range g.Included() {
		ids = append(ids, m.Item.ID)
	}
	e := events.Event{Time: gb.now().UTC(), Run: g.ID(), Type: events.TypeGroup, Name: g.ID(), Verdict: "published",
		Reason: fmt.Sprintf("%d of %d finding(s) on %s: %s", len(ids), len(g.Members), g.Manifest, strings.Join(ids, ", ")), Detail: loc}
	if err != nil {
		e.Verdict, e.Detail = "not-published", err.Error()
	}
	for _, f := range []*string{&e.Run, &e.Name, &e.Reason, &e.Detail} {
		*f = scrubEventText(gb.scrub, *f)
	}
	gb.sink.Send(e)
}

// scrubEventText redacts one field of an event the batch itself sends; a
// redaction that cannot finish, or no engine, withholds the field.
func scrubEventText(scrub *redact.Engine, s string) string {
	if scrub == nil {
		return "[WITHHELD by fixrail: no redaction engine]"
	}
	out, _, err := scrub.Redact(s)
	if err != nil {
		return "[WITHHELD by fixrail: the redaction of this text failed]"
	}
	return out
}

// publishGroup checks the chain the group's branch will hold — each
// commit's one parent is the commit it was judged on, and its own
// trailers name its own finding and that parent — renders the body,
// leak-scans what leaves, and publishes through the forge a single run
// would use. The branch is new: it is created once, never moved over
// earlier work, never force-pushed.
func (gb *groupBatch) publishGroup(ctx context.Context, g *batch.Group) (forge.Published, error) {
	setup, err := pipeline.Prepare(ctx, gb.local, gb.base)
	if err != nil {
		return forge.Published{}, err
	}
	defer setup.Close()
	pr := forge.PR{ID: g.ID(), Title: g.Title(), Base: setup.Base, Head: forge.BranchPrefix + g.ID(), Draft: true, Commit: g.Tip(), Files: []string{}}
	prev := g.Base
	var judged []*gitx.Commit // the included findings' commits, in order
	for i, m := range g.Members {
		if !m.Included() {
			continue
		}
		if m.Parent != prev {
			return forge.Published{}, fmt.Errorf("finding %s was judged on %.12s, not on the group's commit before it (%.12s)", m.Item.ID, m.Parent, prev)
		}
		c, err := setup.Repo.ReadCommit(ctx, m.Commit)
		if err != nil {
			return forge.Published{}, fmt.Errorf("finding %s: %w", m.Item.ID, err)
		}
		if len(c.Parents) != 1 || c.Parents[0] != prev {
			return forge.Published{}, fmt.Errorf("finding %s: commit %.12s's parent is not %.12s, the commit it was judged on", m.Item.ID, c.SHA, prev)
		}
		claim, err := verify.ParseTrailers(c.Message)
		if err != nil {
			return forge.Published{}, fmt.Errorf("finding %s: commit %.12s: %w", m.Item.ID, c.SHA, err)
		}
		if claim.Finding != m.Item.ID || claim.Base != prev {
			return forge.Published{}, fmt.Errorf("finding %s: commit %.12s's trailers name finding %q on base %.12s, not its own finding on its parent", m.Item.ID, c.SHA, claim.Finding, claim.Base)
		}
		h, err := readHeld(gb.heldPath(m.Item.ID))
		if err != nil {
			return forge.Published{}, fmt.Errorf("finding %s: its held draft: %w", m.Item.ID, err)
		}
		if h.PR.Commit != c.SHA || h.PR.ID != m.Item.ID {
			return forge.Published{}, fmt.Errorf("finding %s: its held draft is for %s at %.12s", m.Item.ID, h.PR.ID, h.PR.Commit)
		}
		g.Members[i].Body = h.Body
		judged = append(judged, &c)
		pr.Files = append(pr.Files, h.PR.Files...)
		pr.Labels = append(pr.Labels, h.PR.Labels...)
		prev = c.SHA
	}
	slices.Sort(pr.Files)
	pr.Files = slices.Compact(pr.Files)
	pr.Labels = append(pr.Labels, "fixrail:grouped")
	slices.Sort(pr.Labels)
	pr.Labels = slices.Compact(pr.Labels)
	pr.Body = g.Body(setup.Base)
	// What leaves goes through the leak scan, as a single run's does: each
	// finding's body passed its run's; the whole is scanned again, and any
	// finding at all stops the group (fail closed).
	for _, t := range [][2]string{{"PR title", pr.Title}, {"PR body", pr.Body}, {"PR labels", fmt.Sprint(pr.Labels)}} {
		fs, err := setup.Scrub.Detect(t[1])
		if err != nil {
			return forge.Published{}, fmt.Errorf("leak scan of the %s: %w", t[0], err)
		}
		if len(fs) > 0 {
			return forge.Published{}, fmt.Errorf("leak scan: the group's %s holds %s", t[0], fs[0].Rule)
		}
	}
	if exists, err := setup.Repo.BranchExists(ctx, pr.Head); err != nil || exists {
		if err == nil {
			err = fmt.Errorf("branch %s exists already: an earlier group's; review and close it first (fixrail never moves or force-pushes a published branch)", pr.Head)
		}
		return forge.Published{}, err
	}
	if pr.Patch, err = setup.Repo.DiffText(ctx, g.Base, pr.Commit, pr.Files...); err != nil {
		return forge.Published{}, err
	}
	sm, err := compose(setup, "", nil)
	if err != nil {
		return forge.Published{}, err
	}
	pub, err := sm.forge.Publish(context.WithoutCancel(ctx), pr)
	if err != nil {
		return forge.Published{}, fmt.Errorf("draft PR: %w", err)
	}
	if err := setup.Repo.UpdateBranch(context.WithoutCancel(ctx), pr.Head, pr.Commit, ""); err != nil {
		if w, ok := sm.forge.(interface {
			Withdraw(context.Context, string) error
		}); ok {
			err = errors.Join(err, w.Withdraw(context.WithoutCancel(ctx), pr.ID))
		}
		return forge.Published{}, err
	}
	// Each run left its own branch at its held commit; the group's branch
	// now holds them all. The per-finding branches go (compare-and-swap:
	// only while each still holds its commit), so a finding is open work
	// through the group alone and `fixrail close <group>` frees it.
	for _, m := range g.Included() {
		if err := setup.Repo.DeleteBranch(context.WithoutCancel(ctx), forge.BranchPrefix+m.Item.ID, m.Commit); err != nil {
			pub.Warnings = append(pub.Warnings, err.Error())
		}
	}
	pub.Warnings = append(pub.Warnings, gb.attestations(sm.forge, pub.Location, g.Included(), judged)...)
	return pub, nil
}

// attestations puts each included finding's attestation — signed by the
// run that judged it — beside the group's draft (the local forge), as
// attestation-<finding>.dsse.json, once it checks: signed by the key this
// batch was given, about the commit the group's branch holds for that
// finding, with that commit's tree and trailers. One that is missing or
// does not check is left out and named in a warning; the draft stands, as
// a single run's does when its attestation fails.
func (gb *groupBatch) attestations(f pipeline.Forge, dir string, in []batch.Member, judged []*gitx.Commit) []string {
	if gb.key == nil {
		return nil
	}
	if _, ok := f.(*forge.Local); !ok {
		return []string{"the group's attestations go beside a local draft only; this forge got none"}
	}
	ring := &keys.Keyring{}
	if err := ring.Add(gb.key.PublicKey(), "attest-key"); err != nil {
		return []string{"attestations: " + err.Error()}
	}
	var warn []string
	for i, m := range in {
		err := func() error {
			data, err := pathguard.ReadRegular(heldAttestationPath(gb.heldPath(m.Item.ID)), maxHeldBytes)
			if err != nil {
				return fmt.Errorf("none was held (its run's log says why): %w", err)
			}
			st, err := verify.Open(data, ring)
			if err != nil {
				return err
			}
			if d := statementDiff("its commit", judged[i], st); d != "" {
				return fmt.Errorf("%w: %s", verify.ErrBadAttestation, d)
			}
			return pathguard.WriteNew(filepath.Join(dir, groupAttestationFile(m.Item.ID)), data, 0o644)
		}()
		if err != nil {
			warn = append(warn, fmt.Sprintf("finding %s: no attestation beside the group's draft: %v", m.Item.ID, err))
		}
	}
	return warn
}
