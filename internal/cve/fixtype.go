package cve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// ErrNoAdvisoryData means OSV or deps.dev could not be asked (offline with
// nothing cached, or a service unreachable): no version can be decided or
// judged, so nothing is run (the pipeline HALTs no-advisory-data, as
// resolve-version exits 1). The service's error is wrapped with it.
var ErrNoAdvisoryData = errors.New("no advisory data")

// noData wraps a service error that means no answer, else returns nil.
func noData(err error) error {
	if errors.Is(err, vulndata.ErrUnreachable) || errors.Is(err, vulndata.ErrOfflineMiss) {
		return fmt.Errorf("%w: %w", ErrNoAdvisoryData, err)
	}
	return nil
}

// ErrNotAffected means the repository's version of the package is not
// affected by any known advisory: nothing to reproduce (NOT-REPRO).
var ErrNotAffected = errors.New("the repository's version is not affected")

// Plan is what Prepare decided before any edit: the declaration to bump,
// the red oracle, and the version decision.
type Plan struct {
	Finding *findings.Vuln
	Eco     vulndata.Ecosystem
	// Dep is the first declaration (the alert's manifest first); Deps are
	// every one, and Bump those the fix moves to the target.
	Dep      manifest.Dep
	Deps     []manifest.Dep
	Bump     []manifest.Dep
	Red      RedResult
	Decision *Decision
	// vulnsSeen are the advisories red judged with.
	vulnsSeen []vulndata.Vuln
}

// ErrUnbumpable means a declaration of the package decides the build's
// version and neither the bumper nor the fix can move it (an include
// fixrail cannot read, a declaration only some of which the bumper
// edits): the pipeline escalates unbumpable-declaration naming it.
var ErrUnbumpable = errors.New("a declaration the fix cannot move")

// Type is the cve fix type as the pipeline drives it: Prepare, Edit (the
// built-in bumper), Verify (the oracle after), PRSection.
type Type struct {
	Source Source
	// Resolve, when set, asks the build which version of a Go module it
	// uses (go list -m in the sandbox, on the checkout judged); nil judges
	// go.mod's require lines alone (the pure tests).
	Resolve Resolver
}

// Prepare finds the package in the repository's manifests (the finding's
// package and manifest are hints), judges it red, and decides the target.
// Typed outcomes for the pipeline:
//   - *manifest.NotInManifestError → NOT-REPRO package-not-in-manifest
//   - ErrNotAffected              → NOT-REPRO green-on-base
//   - *NoSafeError (plan returned) → ESCALATE no-safe-version
//   - ErrNoAdvisoryData            → HALT no-advisory-data
func (t *Type) Prepare(ctx context.Context, root string, f *findings.Vuln) (*Plan, error) {
	eco, err := vulndata.ParseEcosystem(f.Ecosystem)
	if err != nil {
		return nil, err
	}
	decl, err := manifest.FindAll(root, eco, f.Package, f.Manifest)
	if err != nil {
		return nil, err
	}
	p := &Plan{Finding: f, Eco: eco, Dep: decl.Deps[0], Deps: decl.Deps}
	if len(decl.Blocked) > 0 {
		var why []string
		for _, b := range decl.Blocked {
			why = append(why, b.String())
		}
		return p, fmt.Errorf("%w: %s", ErrUnbumpable, strings.Join(why, "; "))
	}
	vulns, _, err := t.Source.Vulns(ctx, eco, p.Dep.Name)
	if err != nil {
		if nd := noData(err); nd != nil {
			return p, nd
		}
		return nil, err
	}
	if err := resolveGo(ctx, t.Resolve, p.Deps, decl.Replaces); err != nil {
		return p, err
	}
	// A replace of the installed version (or of every version) means the
	// build does not use the registry's module at all.
	var installed []string
	for _, d := range p.Deps {
		installed = append(installed, d.Current(), d.Resolved)
	}
	if reps := replacesApplying(decl.Replaces, installed...); len(reps) > 0 {
		return p, fmt.Errorf("%w: %s: the build does not use the registry's %s, which the advisories judge; no bump moves a replaced copy", ErrUnbumpable, strings.Join(reps, "; "), p.Dep.Name)
	}
	p.vulnsSeen = vulns
	p.Red = RedAll(eco, p.Deps, vulns)
	if !p.Red.Red {
		return p, fmt.Errorf("%w: %s", ErrNotAffected, p.Red.Detail)
	}
	d, err := Decide(ctx, t.Source, eco, p.Dep.Name, p.Red.Version)
	p.Decision = d
	if err != nil {
		if nd := noData(err); nd != nil {
			return p, nd
		}
		return p, err
	}
	// A replace of the target would make the bump link something else.
	if reps := replacesApplying(decl.Replaces, d.Target); len(reps) > 0 {
		return p, fmt.Errorf("%w: %s: a bump to %s would make the build use the replacement, not the registry's %s %s", ErrUnbumpable, strings.Join(reps, "; "), d.Target, p.Dep.Name, d.Target)
	}
	p.Bump = bumpSet(eco, p.Deps, vulns)
	if err := manifest.CheckBumpAll(root, p.Bump, d.Target); err != nil {
		var ue *manifest.UnbumpableError
		if errors.As(err, &ue) {
			return p, fmt.Errorf("%w: %s", ErrUnbumpable, strings.Join(ue.Why, "; "))
		}
	}
	return p, nil
}

// Edit makes the built-in bump to the decided target. manifest.ErrNoBuiltIn
// means the agent makes the edit instead, with Bash
// limited to AgentRegen's command.
func (t *Type) Edit(root string, p *Plan) (*manifest.Edit, error) {
	if p.Decision == nil || p.Decision.Outcome != Upgrade {
		return nil, fmt.Errorf("%w: no decided target", manifest.ErrNoBuiltIn)
	}
	return manifest.BumpAll(root, p.Bump, p.Decision.Target)
}

// Verify is the oracle after the fix, run by the harness on the candidate.
func (t *Type) Verify(ctx context.Context, root string, p *Plan) GreenResult {
	var after []manifest.Dep
	decl, ferr := manifest.FindAll(root, p.Eco, p.Dep.Name, p.Dep.Manifest)
	if ferr == nil && len(decl.Blocked) > 0 {
		// After the edit every declaration must still be readable: what
		// cannot be read cannot be judged.
		var why []string
		for _, b := range decl.Blocked {
			why = append(why, b.String())
		}
		ferr = fmt.Errorf("%w: %s", ErrUnbumpable, strings.Join(why, "; "))
	}
	if ferr == nil {
		after = decl.Deps
		ferr = resolveGo(ctx, t.Resolve, after, decl.Replaces)
	}
	if ferr == nil {
		var applied []string
		for _, d := range after {
			applied = append(applied, d.Current(), d.Resolved)
		}
		if reps := replacesApplying(decl.Replaces, applied...); len(reps) > 0 {
			ferr = fmt.Errorf("%w: %s", ErrUnbumpable, strings.Join(reps, "; "))
		}
	}
	vulns, _, verr := t.Source.Vulns(ctx, p.Eco, p.Dep.Name)
	alerted := p.Red.Version
	if alerted == "" {
		alerted = p.Dep.Current()
	}
	if alerted == "" {
		alerted = p.Finding.Version
	}
	return GreenAfter(GreenInput{
		Ecosystem: p.Eco, Name: p.Dep.Name, Manifest: p.Dep.Manifest, Alerted: alerted,
		Manifests: p.Manifests(), RedVersions: p.redVersions(),
		After: after, FindErr: ferr, Vulns: vulns, VulnsErr: verr,
	})
}

// Manifests are the files the fix moves the package in, the alert's first.
func (p *Plan) Manifests() []string {
	out := []string{p.Dep.Manifest}
	for _, d := range p.Bump {
		if !slices.Contains(out, d.Manifest) {
			out = append(out, d.Manifest)
		}
	}
	return out
}

// redVersions are the versions red found affected, wherever they were.
func (p *Plan) redVersions() []string {
	var out []string
	for _, pl := range places(p.Deps) {
		if hits, err := affects(p.Eco, p.Dep.Name, pl.version, p.vulnsSeen); err == nil && len(hits) > 0 && !slices.Contains(out, pl.version) {
			out = append(out, pl.version)
		}
	}
	if len(out) == 0 && p.Red.Version != "" {
		out = append(out, p.Red.Version)
	}
	return out
}

// PRSection is the cve part of the PR body: the decision and the oracle's
// checks; registry strings are in code spans only.
func (p *Plan) PRSection(g *GreenResult) string {
	var b strings.Builder
	if p.Decision != nil {
		b.WriteString(p.Decision.Markdown())
		if len(p.Finding.Advisories) > 0 {
			b.WriteString("\n#### The alert's advisories\n\n")
			for _, id := range p.Finding.Advisories {
				status := "cleared by the target"
				switch {
				case p.Decision.Outcome != Upgrade && Names(p.Decision.Affecting, id):
					status = "affects the installed version; not cleared"
				case !Names(p.Decision.Affecting, id):
					status = "not among the advisories OSV lists as affecting the installed version (the alert is a hint; the decision used OSV's)"
				}
				fmt.Fprintf(&b, "- %s: %s\n", Code(id), status)
			}
		}
	}
	if g != nil {
		fmt.Fprintf(&b, "\n### Oracle after the fix: %s\n\n", g.Verdict)
		for _, c := range g.Checks {
			// "ok", not "pass": "pass: `<one word>`" reads as a
			// credential assignment to the leak scan, which would then
			// block the PR body.
			mark := "ok"
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(&b, "- %s — %s: %s\n", c.Name, mark, Code(c.Detail))
		}
	}
	return b.String()
}
