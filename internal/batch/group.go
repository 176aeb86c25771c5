package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/verdict"
)

// GroupManifest is the one --group value: a batch's cve findings on one
// manifest become one draft PR, one commit per finding.
const GroupManifest = "manifest"

// ParseGroup checks a --group value: "" (no grouping) or "manifest".
func ParseGroup(s string) (string, error) {
	switch s {
	case "", GroupManifest:
		return s, nil
	}
	return "", fmt.Errorf("--group %q: the one grouping is %q (a batch's cve findings on one manifest become one draft PR)", s, GroupManifest)
}

// manifestOf is the manifest a cve finding names ("" for any other item,
// or one naming no manifest or several).
func manifestOf(it Item) string {
	if it.Kind != "vuln" {
		return ""
	}
	m := ""
	for _, k := range it.Keys {
		if p, ok := strings.CutPrefix(k, "manifest:"); ok {
			if m != "" && m != p {
				return ""
			}
			m = p
		}
	}
	return m
}

// Member is one finding of a group and how its run ended.
type Member struct {
	Item Item
	// Parent is the commit the finding was judged on: the base, or the
	// commit of the last member before it that was included.
	Parent string
	// Commit is the finding's judged commit, "" when it was left out (its
	// run ended in anything but DRAFT-PR).
	Commit string
	Result Result
	// Body is the finding's own PR body, as its run rendered and
	// leak-scanned it (set by the caller before rendering the group's).
	Body string
}

// Included reports whether the member's commit is in the group's PR.
func (m Member) Included() bool { return m.Commit != "" }

// Group is a manifest's cve findings of one batch, in run order.
type Group struct {
	Manifest string
	// Base is the commit the first member was judged on.
	Base    string
	Members []Member
}

// Included are the members whose commits the group's branch holds, in
// order: each one's parent is the one before it.
func (g *Group) Included() []Member {
	var out []Member
	for _, m := range g.Members {
		if m.Included() {
			out = append(out, m)
		}
	}
	return out
}

// Tip is the group's last judged commit: what the next member is judged
// on and what its branch points at (the base while none is included).
func (g *Group) Tip() string {
	in := g.Included()
	if len(in) == 0 {
		return g.Base
	}
	return in[len(in)-1].Commit
}

// ID is the group's draft-PR id and branch suffix: a safe name from the
// manifest's path, with a hash of the whole path so two manifests never
// share one.
func (g *Group) ID() string {
	sum := sha256.Sum256([]byte(g.Manifest))
	var b strings.Builder
	for _, c := range g.Manifest {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteRune(c)
		} else if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
			b.WriteByte('-')
		}
	}
	slug := strings.Trim(b.String(), "-")
	if len(slug) > 40 {
		slug = strings.Trim(slug[:40], "-")
	}
	if slug == "" {
		slug = "manifest"
	}
	return "group-" + slug + "-" + hex.EncodeToString(sum[:4])
}

// StackExec runs one finding on top of commit on, holding its draft PR
// instead of publishing it; it returns the run's result and, for a
// DRAFT-PR, the judged commit it held.
type StackExec func(ctx context.Context, it Item, on string) (Result, string)

// Grouper routes a batch's findings: a cve finding that shares its
// manifest with another cve finding of the batch runs stacked, on its
// group's tip; every other finding runs as it would ungrouped. Findings
// of one manifest share a key, so Run already takes them one after
// another in source order: the tip a member reads is the last one's.
type Grouper struct {
	mu      sync.Mutex
	of      map[string]*Group // by finding id
	groups  []*Group
	stacked StackExec
	plain   Exec
}

// NewGrouper groups items by manifest, each group starting at base (the
// base branch's commit when the batch began). A manifest with one cve
// finding is no group: that finding opens its own PR, as ungrouped.
func NewGrouper(items []Item, base string, stacked StackExec, plain Exec) *Grouper {
	g := &Grouper{of: map[string]*Group{}, stacked: stacked, plain: plain}
	byKey := map[string][]Item{}
	var keys []string
	for _, it := range items {
		m := manifestOf(it)
		if m == "" {
			continue
		}
		k := it.Repo + "\x00" + m
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], it)
	}
	for _, k := range keys {
		its := byKey[k]
		if len(its) < 2 {
			continue
		}
		grp := &Group{Manifest: manifestOf(its[0]), Base: base}
		for _, it := range its {
			g.of[it.ID] = grp
		}
		g.groups = append(g.groups, grp)
	}
	return g
}

// Exec is the batch's Exec: stacked for a group's member, plain otherwise.
// A member is judged on the group's tip; it joins the chain only if its
// run ended DRAFT-PR with a commit, else it is left out and the next
// member is judged on the same tip.
func (g *Grouper) Exec(ctx context.Context, it Item) Result {
	g.mu.Lock()
	grp := g.of[it.ID]
	var on string
	if grp != nil {
		on = grp.Tip()
	}
	g.mu.Unlock()
	if grp == nil {
		return g.plain(ctx, it)
	}
	r, commit := g.stacked(ctx, it, on)
	if r.Terminal != verdict.DraftPR {
		commit = ""
	} else if commit == "" {
		// A DRAFT-PR that held no commit cannot be grouped, nor
		// published on its own: it is a broken run.
		r.Terminal, r.Reason, r.Exit = "", "", exitInternal
		r.Error = "the run ended DRAFT-PR but held no commit for the group"
	}
	g.mu.Lock()
	grp.Members = append(grp.Members, Member{Item: it, Parent: on, Commit: commit, Result: r})
	g.mu.Unlock()
	return r
}

// Groups are the batch's groups, in the order of their first finding.
func (g *Grouper) Groups() []*Group {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.groups
}
