package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var cmdClose = &command{
	Name:  "close",
	Usage: "[--repo DIR] [--base BRANCH] [--force] [--json] ID",
	Short: "withdraw a local draft (its bundle and branch) and free its finding",
	Long: `
Close withdraws what the local forge holds for finding ID: the draft bundle
in .fixrail/outbox/ID/ (pr.json, body.md, fix.patch, and a notice if one was
written) and the branch fixrail/ID. Until then a new run on that finding
HALTs in-flight, and so does a run of another finding whose plan touches a
file the draft changes.

The branch is deleted only while it still holds the commit the bundle
records (git's compare-and-swap): a commit someone added to it is never
deleted with it, and close then refuses (exit 3) unless --force is given.
Without a bundle the branch is deleted only with --force. The commit the
branch held is printed, so the branch can be made again
(git branch fixrail/ID SHA).

Close takes the finding's lock first: while a run works on ID, close
refuses (exit 3). It needs the repository's fixrail.yaml on the checked-out
branch (or --base), as run does, and works on the local forge only: a draft
on GitHub is closed there.

Exit status: 0 closed, 2 usage (nothing open for ID, a bad ID), 3 would not
act (a run holds the finding, the branch holds other commits).`,
	Flags: func() *flag.FlagSet { fs, _ := closeFlags(); return fs },
	Run:   runClose,
}

type closeOpts struct {
	repo, base  string
	force, json bool
}

func closeFlags() (*flag.FlagSet, *closeOpts) {
	o := &closeOpts{}
	fs := flag.NewFlagSet("close", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "the repository's work tree")
	fs.StringVar(&o.base, "base", "", "the branch whose fixrail.yaml is read (default: the checked-out branch)")
	fs.BoolVar(&o.force, "force", false, "delete the branch even when it holds a commit the bundle does not record, or there is no bundle")
	fs.BoolVar(&o.json, "json", false, "print what was closed as JSON")
	return fs, o
}

// closed is what close did, for the text and JSON output alike.
type closed struct {
	ID string `json:"id"`
	// Bundle is the outbox directory withdrawn, empty when there was none.
	Bundle string `json:"bundle,omitempty"`
	// Branch was deleted when non-empty; Commit is what it held.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
}

func runClose(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := closeFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("close takes exactly one finding ID")
	}
	id := fs.Arg(0)
	if !pathguard.SafeName(id) {
		return usagef("%s is not a finding ID fixrail writes (letters, digits, '.', '_', '-')", untrusted.Printable(id))
	}
	s, err := pipeline.Prepare(ctx, o.repo, o.base)
	if err != nil {
		return err
	}
	defer s.Close()
	locks, err := s.StateDir("locks")
	if err != nil {
		return err
	}
	outbox, err := s.StateDir("outbox")
	if err != nil {
		return err
	}
	lock, err := ledger.TryLock(locks, id)
	if errors.Is(err, ledger.ErrHeld) {
		return &codedError{msg: "a run is working on finding " + id + "; close it once that run ends", code: exitHalt}
	}
	if err != nil {
		return err
	}
	// Pruned whatever happens: the finding is free, or was never held.
	defer lock.Remove()

	local := &forge.Local{Dir: outbox}
	bundle, hasBundle, err := local.Bundle(id)
	if err != nil {
		return err
	}
	branch := "fixrail/" + id
	exists, err := s.Repo.BranchExists(ctx, branch)
	if err != nil {
		return err
	}
	if !hasBundle && !exists {
		return usagef("nothing open for finding %s: no draft in %s and no branch %s", id, filepath.Join(outbox, id), branch)
	}
	out := closed{ID: id}
	if exists {
		head, err := s.Repo.RevParse(ctx, "refs/heads/"+branch)
		if err != nil {
			return err
		}
		switch {
		case !hasBundle && !o.force:
			return &codedError{msg: fmt.Sprintf("branch %s (at %s) has no draft bundle; review it, then close again with --force to delete it", branch, head), code: exitHalt}
		case hasBundle && bundle.HeadSHA != head && !o.force:
			return &codedError{msg: fmt.Sprintf("branch %s is at %s, not at the commit the draft records (%s): someone added to it; review it, then close again with --force", branch, head, untrusted.Printable(bundle.HeadSHA)), code: exitHalt}
		}
		// Deleted before the bundle goes: a bundle left without its branch
		// is still seen as open work, a branch without its bundle would not be.
		if err := s.Repo.DeleteBranch(ctx, branch, head); err != nil {
			return err
		}
		out.Branch, out.Commit = branch, head
	}
	if hasBundle {
		if err := local.Withdraw(ctx, id); err != nil {
			return err
		}
		out.Bundle = bundle.Location
	}
	if o.json {
		return writeJSON(stdio.Stdout, out)
	}
	if out.Branch != "" {
		fmt.Fprintf(stdio.Stdout, "deleted branch %s (was %s; to restore it: git branch %s %s)\n", out.Branch, out.Commit, out.Branch, out.Commit)
	}
	if out.Bundle != "" {
		fmt.Fprintf(stdio.Stdout, "withdrew the draft %s\n", out.Bundle)
	}
	fmt.Fprintf(stdio.Stdout, "finding %s is free: the next run starts afresh\n", id)
	return nil
}
