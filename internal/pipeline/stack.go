package pipeline

import (
	"context"
	"fmt"
)

// StackOn makes the run start from commit sha instead of the base branch's
// tip: a general seam for work that builds on earlier judged work (a
// batch's grouped dependency PR runs each finding on the commit the one
// before it left). Everything else stays the base branch's: fixrail.yaml
// as Prepare read it, the PR's base, the protection asserted. The commit
// must descend from the base branch's tip, so a run can never be pointed
// at history the base does not hold; the fix's commit then has sha as its
// one parent and names it in its Fixrail-Base trailer, so it is judged,
// and provable with `fixrail verify`, on its own.
func (s *Setup) StackOn(ctx context.Context, sha string) error {
	// A full object id, never a name: a ref could move between the
	// caller's judgement of it and this read.
	if !fullSHA(sha) {
		return fmt.Errorf("%w: stack on %q: want a full commit id", ErrSetup, sha)
	}
	full, err := s.Repo.RevParse(ctx, sha)
	if err != nil {
		return fmt.Errorf("%w: stack on %q: not a commit: %w", ErrSetup, sha, err)
	}
	ok, err := s.Repo.IsAncestor(ctx, s.BaseSHA, full)
	if err != nil {
		return fmt.Errorf("%w: stack on %s: %w", ErrSetup, short(full), err)
	}
	if !ok {
		return fmt.Errorf("%w: stack on %s: it does not descend from %s (%s)", ErrSetup, short(full), s.Base, short(s.BaseSHA))
	}
	if full != s.BaseSHA {
		s.BaseSHA, s.stacked = full, true
	}
	return nil
}

// judgedOn names what a run's red and green were judged on, for its
// detail: the base branch, or the commit it was stacked on.
func (s *Setup) judgedOn() string {
	if s.stacked {
		return short(s.BaseSHA) + " (stacked on " + s.Base + ")"
	}
	return s.Base
}

func fullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
