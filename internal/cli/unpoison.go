package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/fixrail/fixrail/internal/gitx"
)

var cmdUnpoison = &command{
	Name:  "unpoison",
	Usage: "[--repo DIR] [--yes] [--json]",
	Short: "show, and with --yes clear, the record of a clone changed under a run",
	Long: `
When repository code that fixrail ran (an agent, a test, the suite) changed
the clone's git config, refs, HEAD, hooks or info files, the run escalates and
fixrail records it in the clone's git directory (` + gitx.PoisonFile + `).
Every later run on that clone refuses to start (exit 5) until the record is
cleared: a planted filter or hook would otherwise be taken as the next run's
starting point.

Without --yes, unpoison prints what was recorded and exits 5 if there is a
record. Inspect the clone (git config --local --list, .git/hooks, .git/info,
the refs), undo what you do not want, then clear the record with --yes.`,
	Flags: func() *flag.FlagSet { fs, _ := unpoisonFlags(); return fs },
	Run:   runUnpoison,
}

type unpoisonOpts struct {
	repo      string
	yes, json bool
}

func unpoisonFlags() (*flag.FlagSet, *unpoisonOpts) {
	o := &unpoisonOpts{}
	fs := flag.NewFlagSet("unpoison", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "the repository's work tree")
	fs.BoolVar(&o.yes, "yes", false, "clear the record")
	fs.BoolVar(&o.json, "json", false, "print the record as JSON")
	return fs, o
}

func runUnpoison(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := unpoisonFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unpoison takes no arguments")
	}
	repo, err := gitx.Open(ctx, o.repo)
	if err != nil {
		return usagef("%s is not a git work tree: %v", o.repo, err)
	}
	get := gitx.PersistedPoison
	if o.yes {
		get = gitx.ClearPoison
	}
	p, err := get(repo.CommonDir())
	if err != nil {
		return err
	}
	if o.json {
		out := struct {
			Poisoned bool         `json:"poisoned"`
			Cleared  bool         `json:"cleared"`
			Record   *gitx.Poison `json:"record,omitempty"`
		}{p != nil, p != nil && o.yes, p}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdio.Stdout, string(b))
	}
	switch {
	case p == nil:
		if !o.json {
			fmt.Fprintln(stdio.Stdout, "no poison recorded: runs may start")
		}
		return nil
	case o.yes:
		if !o.json {
			fmt.Fprintf(stdio.Stdout, "cleared the record of %s: %s\n", p.Time.Format("2006-01-02 15:04:05Z07:00"), p.Cause)
		}
		return nil
	}
	if !o.json {
		fmt.Fprintf(stdio.Stdout, "poisoned %s: %s\ninspect the clone, then run: fixrail unpoison --yes\n", p.Time.Format("2006-01-02 15:04:05Z07:00"), p.Cause)
	}
	return &errFound{n: 1}
}
