package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/ledger"
)

// pathLockPoll is how often a run waiting for a file another run holds
// tries again.
const pathLockPoll = 200 * time.Millisecond

// pathLockGate serialises findings whose plans touch the same file (S7):
// each planned file and evidence path is locked for the rest of the run,
// in sorted order so two runs never wait on each other crosswise, and a
// run that finds one held waits its turn — until the wall clock, which
// then HALTs it. The locks are flocks beside the finding locks: they hold
// on this machine; across machines the open-work check refuses to stack.
func (r *run) pathLockGate(inv *investigation) *gates.Gate {
	return &gates.Gate{
		Name:   "path-locks",
		Doc:    "no other run on this machine is fixing a file this plan touches; a run that finds one waits its turn",
		Reason: ReasonInFlight,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			paths := slices.Concat(inv.plan.Files, inv.plan.Evidence)
			slices.Sort(paths)
			paths = slices.Compact(paths)
			dir := filepath.Join(r.stateDir, "locks")
			var waited []string
			for _, p := range paths {
				name := pathLockName(p)
				for {
					l, err := ledger.TryLock(dir, name)
					if err == nil {
						r.pathLocks = append(r.pathLocks, l)
						break
					}
					if !errors.Is(err, ledger.ErrHeld) {
						return fail(ReasonCheckError, "path lock for "+p+": "+err.Error())
					}
					if !slices.Contains(waited, p) {
						waited = append(waited, p)
						r.note("path-lock", "another run is fixing "+p+"; waiting for it")
					}
					select {
					case <-ctx.Done():
						return gates.Verdict{}, fmt.Errorf("path-locks: waiting for %s: %w", p, ctx.Err())
					case <-time.After(pathLockPoll):
					}
				}
			}
			detail := fmt.Sprintf("%d path(s) held for this run", len(paths))
			if len(waited) > 0 {
				detail += "; waited for another run fixing " + codeList(waited)
			}
			return pass(detail)
		},
	}
}

// pathLockName is the lock file of a repository path: a hash, so any path
// makes a safe file name.
func pathLockName(p string) string {
	sum := sha256.Sum256([]byte(p))
	return "path-" + hex.EncodeToString(sum[:16])
}
