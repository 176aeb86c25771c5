package forge

import (
	"context"
	"errors"
)

// ErrDryRun is a dry run's forge refusing a write.
var ErrDryRun = errors.New("dry run: this forge publishes nothing (no branch, no PR, no comment, no label)")

// Reader is what a forge answers without writing: the P1 and P3 checks.
type Reader interface {
	AssertProtected(ctx context.Context, base string, requiredChecks []string) (Protection, error)
	CheckAccess(ctx context.Context, req AccessRequest) (Access, error)
	OpenWork(ctx context.Context, s Subject) (Work, error)
	FixFiles(ctx context.Context) ([]OpenFix, error)
}

// DryRun is a dry run's forge, the third of its guards: the reads pass
// through to the real forge, so the run checks what it would check, and
// every write is refused here, whatever the pipeline asks. It has only
// these methods: a forge's optional writes (withdrawing a bundle, waiting
// on CI) are not reachable through it.
type DryRun struct{ Reader }

// Publish refuses.
func (DryRun) Publish(context.Context, PR) (Published, error) { return Published{}, ErrDryRun }

// Notify refuses (a notice is best effort: the run goes on).
func (DryRun) Notify(context.Context, Notice) error { return ErrDryRun }
