package gates

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Sources are the package sources the operator named, which a lockfile a
// fix changes may newly resolve from.
type Sources struct {
	NPM    []string // npm registries (fixtype.NPMRegistries)
	Python []string // Python indexes, for uv.lock (fixtype.PythonIndexes)
}

// LockfileSources holds every URL a fix adds to a lockfile that names
// where each package is fetched — npm's (package-lock.json,
// npm-shrinkwrap.json: each "resolved") and uv's (uv.lock: each package's
// index and its files' URLs) — to the sources the operator named: npm ci
// and uv sync fetch what a lockfile names and check it only against the
// hash the same lockfile states, so an entry that names the right version
// on another host installs whatever that host serves. It holds whoever
// wrote the lockfile — the harness's regeneration, the agent's, the
// agent's own hand — and judges the candidate's bytes, not a working
// tree. A URL the base's copy already held is the repository's own choice
// and passes; a lockfile that does not parse fails.
func LockfileSources(s Sources) *Gate {
	return &Gate{
		Name:   "lockfile-sources",
		Doc:    "every package an npm lockfile or uv.lock newly resolves comes from a registry or index the operator named",
		Reason: verdict.ReasonLockfileSource,
		Run: func(ctx context.Context, c *Change) (Verdict, error) {
			return checkLockfileSources(ctx, s, c)
		},
	}
}

// check is how the gate reads one kind of lockfile: the URLs the
// candidate adds that no named source holds, and those sources.
func (s Sources) check(p string) (func(before, after []byte) ([]string, error), []string) {
	switch path.Base(p) {
	case "package-lock.json", "npm-shrinkwrap.json":
		return func(b, a []byte) ([]string, error) { return manifest.NPMResolvedOff(b, a, s.NPM...) }, s.NPM
	case "uv.lock":
		return func(b, a []byte) ([]string, error) { return manifest.UVResolvedOff(b, a, s.Python...) }, s.Python
	}
	return nil, nil
}

func checkLockfileSources(ctx context.Context, s Sources, c *Change) (Verdict, error) {
	var bad, named []string
	n := 0
	for _, p := range c.Changed {
		off, sources := s.check(p)
		if off == nil {
			continue
		}
		if len(sources) == 0 {
			return Verdict{}, fmt.Errorf("lockfile-sources: no source to hold %s to", p)
		}
		e, ok := c.Files[p]
		if !ok {
			return Verdict{}, fmt.Errorf("lockfile-sources: %s changed without an entry", p)
		}
		if e.Deleted() {
			continue
		}
		if c.Base == nil {
			return Verdict{}, errors.New("lockfile-sources: the change has no reader of the base")
		}
		b, err := c.Base(ctx, p)
		if err != nil {
			return Verdict{}, fmt.Errorf("lockfile-sources: the base's %s: %w", p, err)
		}
		n++
		for _, src := range sources {
			if !slices.Contains(named, src) {
				named = append(named, src)
			}
		}
		urls, err := off(b.Data, e.Data)
		if err != nil {
			bad = append(bad, show(p)+": "+err.Error())
			continue
		}
		for _, u := range urls {
			bad = append(bad, show(p)+": "+u)
		}
	}
	regs := strings.Join(named, ", ")
	switch {
	case len(bad) > 0:
		return Verdict{Detail: "resolved outside the sources the operator named (" + regs + "): " + list(bad) +
			"; a registry or index the operator uses is named by passing it through extra_env (npm_config_registry, npm_config_@SCOPE:registry; UV_DEFAULT_INDEX, UV_INDEX)"}, nil
	case n == 0:
		return Verdict{Pass: true, Detail: "no npm lockfile or uv.lock changed"}, nil
	}
	return Verdict{Pass: true, Detail: fmt.Sprintf("%d lockfile(s) changed; every URL they newly resolve comes from %s", n, regs)}, nil
}
