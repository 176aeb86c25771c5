package gates

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/fixrail/fixrail/internal/manifest"
	"github.com/fixrail/fixrail/internal/verdict"
)

// LockfileSources holds every "resolved" URL a fix adds to an npm lockfile
// (package-lock.json, npm-shrinkwrap.json) to registries, the ones the
// operator named (fixtype.NPMRegistries): npm ci fetches what a lockfile
// resolves and checks only the integrity the same lockfile states, so an
// entry that names the right version on another host installs whatever
// that host serves. It holds whoever wrote the lockfile — the harness's
// regeneration, the agent's, the agent's own hand — and judges the
// candidate's bytes, not a working tree. A URL the base's copy already
// held is the repository's own choice and passes; a lockfile that does
// not parse fails.
func LockfileSources(registries []string) *Gate {
	return &Gate{
		Name:   "lockfile-sources",
		Doc:    "every package an npm lockfile newly resolves comes from a registry the operator named",
		Reason: verdict.ReasonLockfileSource,
		Run: func(ctx context.Context, c *Change) (Verdict, error) {
			return checkLockfileSources(ctx, registries, c)
		},
	}
}

// npmLockfile reports whether p is a lockfile npm installs from.
func npmLockfile(p string) bool {
	b := path.Base(p)
	return b == "package-lock.json" || b == "npm-shrinkwrap.json"
}

func checkLockfileSources(ctx context.Context, registries []string, c *Change) (Verdict, error) {
	if len(registries) == 0 {
		return Verdict{}, errors.New("lockfile-sources: no registry to hold lockfiles to")
	}
	var bad []string
	n := 0
	for _, p := range c.Changed {
		if !npmLockfile(p) {
			continue
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
		off, err := manifest.NPMResolvedOff(b.Data, e.Data, registries...)
		if err != nil {
			bad = append(bad, show(p)+": "+err.Error())
			continue
		}
		for _, u := range off {
			bad = append(bad, show(p)+": "+u)
		}
	}
	regs := strings.Join(registries, ", ")
	switch {
	case len(bad) > 0:
		return Verdict{Detail: "resolved outside the registries the operator named (" + regs + "): " + list(bad)}, nil
	case n == 0:
		return Verdict{Pass: true, Detail: "no npm lockfile changed"}, nil
	}
	return Verdict{Pass: true, Detail: fmt.Sprintf("%d npm lockfile(s) changed; every URL they newly resolve lies under %s", n, regs)}, nil
}
