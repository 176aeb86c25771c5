package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/ledger"
)

// pathLockPoll is how often a run waiting for a file another run holds
// tries again.
const pathLockPoll = 200 * time.Millisecond

// pathLockGate serialises findings whose plans touch the same file (S7),
// in two steps, in this order:
//
//  1. Every planned file and evidence path is held in the ledger for the
//     rest of the run, all or none. The ledger is the one every machine of
//     a fleet shares (Postgres), so this holds across machines; a run that
//     finds a path held waits its turn, until its wall clock HALTs it.
//  2. Then, holding them, the run asks the forge which files each open
//     fixrail PR changes. A plan that touches one HALTs in-flight: the
//     earlier fix is unmerged, and a second fix judged against the base
//     without it would be judged against a tree that will not exist. The
//     order matters: a run publishes before it releases its holds, so a
//     run that waited sees the PR the other one opened.
func (r *run) pathLockGate(inv *investigation) *gates.Gate {
	return &gates.Gate{
		Name:   "path-locks",
		Doc:    "no other run (on any machine sharing the ledger) is fixing a file this plan touches, and no open fixrail PR changes one; a run that finds a file held waits its turn",
		Reason: ReasonInFlight,
		Fails:  Halt,
		Run: func(ctx context.Context, _ *gates.Change) (gates.Verdict, error) {
			paths := slices.Concat(inv.plan.Files, inv.plan.Evidence)
			slices.Sort(paths)
			paths = slices.Compact(paths)
			waited, err := r.holdPaths(ctx, paths)
			if errors.Is(err, ledger.ErrBudgetUnreadable) || errors.Is(err, ledger.ErrLeaseLost) {
				// The ledger is what proves no one else holds them: unreadable
				// is held, like every ledger answer it cannot give.
				return fail(ReasonBudgetUnreadable, "path holds: "+err.Error())
			}
			if err != nil {
				return gates.Verdict{}, err
			}
			fixes, err := r.p.Forge.FixFiles(ctx)
			if err != nil {
				return gates.Verdict{}, fmt.Errorf("path-locks: the files of open fixes: %w", err)
			}
			var clash []string
			for _, f := range fixes {
				if f.ID == r.fin.ID {
					continue // this finding's own PR: open-work and the push judge it
				}
				var touched []string
				for _, p := range f.Files {
					if _, ok := slices.BinarySearch(paths, p); ok {
						touched = append(touched, p)
					}
				}
				if len(touched) > 0 {
					slices.Sort(touched)
					clash = append(clash, fmt.Sprintf("%s (finding %s) changes %s%s", f.Location, f.ID, codeList(slices.Compact(touched)), r.closeHint(f.ID)))
				}
			}
			if len(clash) > 0 {
				return gates.Verdict{Detail: "an open fixrail fix changes a file this plan touches; run again once it is merged or closed: " + strings.Join(clash, "; ")}, nil
			}
			detail := fmt.Sprintf("%d path(s) held for this run; %d open fix(es), none changing them", len(paths), len(fixes))
			if len(waited) > 0 {
				detail += "; waited for another run fixing " + codeList(waited)
			}
			return pass(detail)
		},
	}
}

// holdPaths holds paths in the ledger, waiting while another run holds any
// of them, and returns the paths it waited for.
func (r *run) holdPaths(ctx context.Context, paths []string) ([]string, error) {
	var waited []string
	for {
		err := r.res.HoldPaths(ctx, paths, time.Now())
		var held *ledger.PathsHeldError
		if !errors.As(err, &held) {
			if err != nil {
				return waited, fmt.Errorf("path-locks: %w", err)
			}
			return waited, nil
		}
		for _, h := range held.Holds {
			if !slices.Contains(waited, h.Path) {
				waited = append(waited, h.Path)
				r.note("path-lock", fmt.Sprintf("run %s (finding %s) is fixing %s; waiting for it", h.RunID, h.Finding, h.Path))
			}
		}
		select {
		case <-ctx.Done():
			return waited, fmt.Errorf("path-locks: waiting for %s: %w", strings.Join(waited, ", "), ctx.Err())
		case <-time.After(pathLockPoll):
		}
	}
}
