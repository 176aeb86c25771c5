package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge/github"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pipeline"
)

var cmdBudget = &command{
	Name:  "budget",
	Usage: "[check] [--repo DIR | --repo OWNER/NAME (--issue N | --alert N) [--dir DIR]] [--actor NAME] [--finding ID] [--json]",
	Short: "show spend, reservations and caps per scope; check whether a run would start",
	Long: `
Budget reads the ledger fixrail.yaml names (ledger.url: .fixrail/state.db by
default, or a shared Postgres ledger) and shows, for today (UTC), every scope
a run is charged to: global, this repository, the actor, and the concurrency
caps, each with what is spent, what runs in flight have reserved, and the cap.
Then the runs in flight, with their lease ends.

  check   exit 0 when a run would be admitted now, 3 when a cap is
          exhausted, the finding (--finding) is in flight, or the ledger is
          unreadable (cannot be opened, locked past its timeout, a Postgres
          ledger unreachable, fixrail.yaml missing or invalid). Nothing is
          reserved. CI runs it as the precheck before starting a run.

--actor is the login runs are charged to (default local:<uid>, or
github:$GITHUB_ACTOR under Actions), the one a run started here would carry.

With --issue N, --repo names the GitHub repository (owner/name) as it does
for fixrail run: the scope is github.com/owner/name, the finding gh-N, and
the clone --dir (default "."). --alert N is the same for Dependabot alert N
(the finding dependabot-N), as fixrail run --alert takes it.`,
	Flags: func() *flag.FlagSet { fs, _ := budgetFlags(); return fs },
	Run:   runBudget,
}

type budgetOpts struct {
	repo, actor, finding string
	dir, forgeRepo       string
	issue, alert         int
	json                 bool
}

func budgetFlags() (*flag.FlagSet, *budgetOpts) {
	o := &budgetOpts{}
	fs := flag.NewFlagSet("budget", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "the repository whose fixrail.yaml and ledger to read")
	fs.StringVar(&o.actor, "actor", "", "the actor a run would be charged to (default local:<uid>)")
	fs.StringVar(&o.finding, "finding", "", "check: also require that this finding is not in flight")
	fs.IntVar(&o.issue, "issue", 0, "the GitHub issue `number` a run would take (then --repo is owner/name)")
	fs.IntVar(&o.alert, "alert", 0, "the Dependabot alert `number` a run would take (then --repo is owner/name)")
	fs.StringVar(&o.dir, "dir", ".", "with --issue or --alert: the clone whose fixrail.yaml and ledger to read")
	fs.BoolVar(&o.json, "json", false, "print as JSON")
	return fs, o
}

// budgetCheckFinding stands in for a finding when check is asked about
// none: a name no finding id can take (ids are safe file names).
const budgetCheckFinding = "budget check: any finding"

func runBudget(ctx context.Context, stdio Stdio, args []string) error {
	check := len(args) > 0 && args[0] == "check"
	if check {
		args = args[1:]
	}
	fs, o := budgetFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (budget takes only check)", fs.Arg(0))
	}
	if err := o.github(fs, os.LookupEnv); err != nil {
		return err
	}
	if o.actor == "" {
		o.actor = ledger.LocalActor()
	}
	finding := o.finding
	if finding == "" {
		finding = budgetCheckFinding
	}
	l, req, err := openBudget(ctx, o, finding)
	if check {
		if err == nil {
			err = l.Check(ctx, req)
			l.Close()
		}
		return printCheck(stdio.Stdout, o.json, err)
	}
	if err != nil {
		return err
	}
	defer l.Close()
	rep, err := l.Report(ctx, req)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(stdio.Stdout, rep)
	}
	printBudget(stdio.Stdout, rep)
	return nil
}

// github resolves --repo as fixrail run does: with --issue or --alert it
// is the GitHub repository (the scope the run charges) and the clone is
// --dir.
func (o *budgetOpts) github(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["issue"] && !set["alert"] {
		if set["dir"] {
			return usagef("--dir goes with --issue or --alert; without it the clone is --repo DIR")
		}
		o.dir = o.repo
		return nil
	}
	flag, n, id := "--issue", o.issue, findings.FindingID(o.issue)
	switch {
	case set["issue"] && set["alert"]:
		return usagef("--issue and --alert name two findings; pass one")
	case set["alert"]:
		flag, n, id = "--alert", o.alert, findings.AlertID(o.alert)
	}
	if n <= 0 {
		return usagef("%s must be a positive number, not %d", flag, n)
	}
	if _, _, err := github.ParseRepo(o.repo); err != nil {
		return usagef("with %s, --repo names the GitHub repository as owner/name (the clone is --dir): %v", flag, err)
	}
	if o.finding != "" {
		return usagef("%s names the finding (%s); drop --finding", flag, id)
	}
	o.forgeRepo = "github.com/" + strings.ToLower(o.repo)
	o.finding = id
	if v, _ := lookup("GITHUB_ACTIONS"); v == "true" && o.actor == "" {
		if a, _ := lookup("GITHUB_ACTOR"); findings.ValidLogin(a) {
			o.actor = "github:" + a
		}
	}
	return nil
}

// openBudget reads fixrail.yaml from the base branch and opens its ledger.
// Every failure is an unreadable budget: a budget that cannot be read is
// an exceeded one.
func openBudget(ctx context.Context, o *budgetOpts, finding string) (ledger.Ledger, ledger.Request, error) {
	setup, err := pipeline.Prepare(ctx, o.dir, "")
	if err != nil {
		return nil, ledger.Request{}, &ledger.UnreadableError{Store: "config", Err: err}
	}
	defer setup.Close()
	top := setup.Repo.Top()
	req := ledger.RequestFor(setup.Config, ledger.RepoKey(o.forgeRepo, top), finding, o.actor, time.Now())
	state, err := setup.StateDir("")
	if err != nil {
		return nil, req, &ledger.UnreadableError{Store: "state directory", Err: err}
	}
	l, err := ledger.OpenConfig(ctx, setup.Config, state)
	return l, req, err
}

type checkResult struct {
	Admitted bool      `json:"admitted"`
	Halt     string    `json:"halt,omitempty"`
	Scope    string    `json:"scope,omitempty"`
	Measure  string    `json:"measure,omitempty"`
	ResetsAt time.Time `json:"resets_at,omitzero"`
	Detail   string    `json:"detail"`
}

// printCheck reports the verdict; anything but an admission exits 3.
func printCheck(w io.Writer, asJSON bool, err error) error {
	res := checkResult{Admitted: err == nil, Detail: "a run would be admitted now"}
	var ee *ledger.ExhaustedError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Halt, res.Scope, res.Measure, res.ResetsAt, res.Detail = ledger.ReasonExhausted, ee.Scope, ee.Measure, ee.ResetsAt.UTC(), ee.Error()
	case errors.Is(err, ledger.ErrInFlight):
		res.Halt, res.Detail = pipeline.ReasonInFlight, err.Error()
	default:
		// Unreadable, or anything unforeseen: never an admission.
		res.Halt, res.Detail = ledger.ReasonUnreadable, err.Error()
	}
	if asJSON {
		if werr := writeJSON(w, res); werr != nil {
			return werr
		}
	} else if res.Admitted {
		fmt.Fprintln(w, "admitted: "+res.Detail)
	} else {
		fmt.Fprintf(w, "HALT %s: %s\n", res.Halt, res.Detail)
	}
	if !res.Admitted {
		return &terminalError{terminal: pipeline.Halt}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printBudget(w io.Writer, rep *ledger.Report) {
	fmt.Fprintf(w, "ledger %s, day %s (UTC; resets %s)\n\n", rep.Store, rep.Day, rep.ResetsAt.UTC().Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tCOST spent+reserved/cap\tRUNS\tTURNS spent+reserved/cap\tIN FLIGHT\tSTATE")
	for _, s := range rep.Scopes {
		state := "ok"
		if s.ExhaustedMeasure != "" {
			state = "exhausted: " + s.ExhaustedMeasure
		}
		if s.CapInFlight > 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%d/%d\t%s\n", s.Scope, s.InFlight, s.CapInFlight, state)
			continue
		}
		fmt.Fprintf(tw, "%s\t$%.2f+$%.2f/$%.2f\t%d/%d\t%d+%d/%d\t%d\t%s\n", s.Scope, s.SpentCostUSD, s.ReservedCostUSD, s.CapCostUSD,
			s.Runs, s.CapRuns, s.SpentTurns, s.ReservedTurns, s.CapTurns, s.InFlight, state)
	}
	tw.Flush()
	if len(rep.InFlight) == 0 {
		fmt.Fprintln(w, "\nno run in flight")
		return
	}
	fmt.Fprintln(w, "\nin flight:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tFINDING\tREPO\tACTOR\tSTARTED\tLEASE ENDS\tRESERVED")
	for _, r := range rep.InFlight {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t$%.2f\n", r.RunID, r.Finding, r.Repo, r.Actor, r.Started.Format(time.RFC3339), r.Expires.Format(time.RFC3339), r.ReservedUSD)
	}
	tw.Flush()
}
