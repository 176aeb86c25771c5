package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var cmdRun = &command{
	Name:  "run",
	Usage: "--report FILE [--repo DIR] | --vuln FILE [--offline] [--cache-dir D] [--osv-url U] [--depsdev-url U] [--repo DIR] | --repo OWNER/NAME (--issue N | --alert N | --event FILE) [--dir DIR]; [--base BRANCH] [--mode autonomous|interactive] [--json]",
	Short: "take one finding through the five phases to a terminal state",
	Long: `
Run takes one finding (a bug report, or with --vuln a vulnerable dependency)
through intake, investigate, reproduce, fix and terminal, and ends it in
exactly one state:

  DRAFT-PR   reproduced red, fixed green, every gate passed     exit 0
  HALT       a budget, lock or precondition stopped the run      exit 3
  NOT-REPRO  no plan, or the test is green or wrong on the base  exit 4
  ESCALATE   a sensitive path, a bad fix or a failed check       exit 5

The report is a JSON file {"id","title","body","labels","comments"} or a
Markdown file whose first heading is the title (the id is the file name).
Every field of it is untrusted. fixrail.yaml is read from the base branch's
commit, never from the working tree. The run report is written to
.fixrail/runs/<run-id>.json and its events to .fixrail/runs/<run-id>.ndjson;
the local forge writes the draft PR to .fixrail/outbox/<id>/.

--vuln takes a vulnerable-dependency finding instead (fix type cve): fixrail's
finding JSON {"id","ecosystem","package","version","advisories","manifest"},
osv-scanner's --format json or sarif, holding exactly one vulnerable package,
or one Dependabot alert as GitHub's REST API returns it (it names no
version: the manifest says which is installed). The
harness finds the package in the repository's manifests (the alert is a hint:
absent, it ends NOT-REPRO package-not-in-manifest), decides the lowest
published version that clears every advisory (none: ESCALATE no-safe-version),
bumps it itself where it can (go.mod, requirements.txt pins, package.json) and
asks the agent only for the rest. Advisories come from OSV and versions from
deps.dev through the cache in --cache-dir; --offline reads the cache only.

Whatever the finding, a fix that adds a package to a manifest or lockfile
has every added package checked against the same advisory data (malware
records included) before its code runs: an advisory or no data is
ESCALATE. The advisory flags choose that data for every run.

With --issue N (or an Actions event: --event FILE, by default
$GITHUB_EVENT_PATH when GITHUB_ACTIONS=true) the finding is GitHub issue N,
--repo names the GitHub repository (owner/name) and --dir the clone
(default "."). The branch is pushed to the clone's pinned remote and the
draft PR opened on GitHub; the token comes from FIXRAIL_GITHUB_TOKEN or
GITHUB_TOKEN (never argv), the API from FIXRAIL_GITHUB_API_URL or
GITHUB_API_URL (default https://api.github.com/).

With --alert N (or a dependabot_alert event: created, reopened,
auto_reopened, reintroduced) the finding is Dependabot alert N of --repo,
read through the API (the token needs "Dependabot alerts: read"; in
Actions, vulnerability-alerts: read) and worked as --vuln works one. An
alert that is not open (dismissed, fixed, auto_dismissed) is refused
before any run starts, exit 2, as a closed issue is: someone decided it,
or it is resolved, and fixrail does not reopen that decision.`,
	Flags: func() *flag.FlagSet { fs, _ := runFlags(); return fs },
	Run:   runRun,
}

type runOpts struct {
	repo, report, vuln, base, mode string
	dir, event                     string
	issue, alert                   int
	json                           bool
	vulns                          resolvecmd.Source
}

func runFlags() (*flag.FlagSet, *runOpts) {
	o := &runOpts{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "the repository to fix (a git work tree)")
	fs.StringVar(&o.report, "report", "", "the finding: a JSON or Markdown report `file` (required)")
	fs.StringVar(&o.vuln, "vuln", "", "the finding: a vulnerable-dependency `file` (fixrail's finding JSON, osv-scanner JSON or SARIF), instead of --report")
	o.vulns.Flags(fs)
	fs.StringVar(&o.base, "base", "", "base `branch` (default: the repository's current branch)")
	fs.StringVar(&o.mode, "mode", "", "autonomous or interactive (default: fixrail.yaml's mode)")
	fs.IntVar(&o.issue, "issue", 0, "the finding: GitHub issue `number` (then --repo is owner/name)")
	fs.IntVar(&o.alert, "alert", 0, "the finding: Dependabot alert `number` of the GitHub repository --repo names")
	fs.StringVar(&o.event, "event", "", "the finding: the issue or Dependabot alert an Actions event payload `file` names (default $GITHUB_EVENT_PATH under Actions)")
	fs.StringVar(&o.dir, "dir", ".", "with --issue, --alert or --event: the clone to fix (a git work tree)")
	fs.BoolVar(&o.json, "json", false, "print the run report as JSON on stdout")
	return fs, o
}

func runRun(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := runFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	in, err := o.intake(fs, os.LookupEnv)
	if err != nil {
		return err
	}
	mode := config.Mode(o.mode)
	if mode != "" && mode != config.Autonomous && mode != config.Interactive {
		return usagef("--mode must be autonomous or interactive, not %q", o.mode)
	}
	var fin *findings.Finding
	var vulns cve.Source
	if in.github == "" {
		if fin, vulns, err = readRunFinding(o); err != nil {
			return refuseClosedAlert(err)
		}
	} else if in.alert > 0 {
		if vulns, err = o.vulns.Client(); err != nil {
			return resolveUsage(err)
		}
	}
	advisories, err := runAdvisories(o, vulns)
	if err != nil {
		return err
	}
	if err := hideEnvironment(); err != nil {
		return fmt.Errorf("make fixrail non-dumpable: %w", err)
	}
	guardRuntime()
	setup, err := pipeline.Prepare(ctx, in.dir, o.base)
	if err != nil {
		return err
	}
	defer setup.Close()
	console, done, err := liveConsole(stdio)
	if err != nil {
		return err
	}
	defer done()
	sm, err := compose(setup, in.github, vulns)
	if err != nil {
		return err
	}
	params := pipeline.Params{
		Finding: fin,
		Types:   sm.types,
		Mode:    mode,
		Runner:  sm.runner,
		Forge:   sm.forge,
		Model:   sm.model,
		// Every fix's added packages are checked against it.
		Advisories: advisories,
		Confirm:    confirmer(Stdio{Stdin: stdio.Stdin, Stdout: stdio.Stdout, Stderr: console}),
		Console:    console,
	}
	switch {
	case in.alert > 0:
		if err := in.readAlert(ctx, sm.alerts, &params); err != nil {
			return err
		}
	case in.github != "":
		if err := in.readIssue(ctx, sm.issues, &params); err != nil {
			return err
		}
	}
	rep, err := pipeline.Run(ctx, setup, params)
	done()
	if err != nil {
		return err
	}
	if err := printReport(stdio.Stdout, rep, o.json); err != nil {
		return err
	}
	return &terminalError{rep.Terminal}
}

// liveTick is how often a terminal's status line is redrawn.
const liveTick = 250 * time.Millisecond

// liveConsole is where a run's progress goes: on a terminal, a live console
// (the event lines, and under them a status line with the phase's elapsed
// time); elsewhere, or with TERM=dumb, plain lines on stderr and, while a
// step runs long, a heartbeat line every $FIXRAIL_HEARTBEAT (default 30s).
// done removes the status line; call it before printing anything else (it
// may be called again).
func liveConsole(stdio Stdio) (console io.Writer, done func(), err error) {
	term := stdio.Stderr
	if u, ok := term.(interface{ Unwrap() io.Writer }); ok {
		term = u.Unwrap() // Live escapes what it is given, and writes its own controls raw
	}
	if os.Getenv("TERM") == "dumb" || !isTerminal(term) {
		every, err := heartbeat(os.LookupEnv)
		if err != nil {
			return nil, nil, err
		}
		return events.NewPlain(stdio.Stderr, every), func() {}, nil
	}
	l := events.NewLive(term, liveTick)
	return l, func() { l.Close() }, nil
}

// minHeartbeat is the shortest heartbeat interval accepted: a CI log needs
// a line now and then, not a flood.
const minHeartbeat = time.Second

// heartbeat reads FIXRAIL_HEARTBEAT: a Go duration of at least a second,
// or 0 for no heartbeat; unset is events.DefaultHeartbeat.
func heartbeat(lookup func(string) (string, bool)) (time.Duration, error) {
	v, ok := lookup("FIXRAIL_HEARTBEAT")
	if !ok || v == "" {
		return events.DefaultHeartbeat, nil
	}
	d, err := time.ParseDuration(v)
	if err == nil && d == 0 {
		return 0, nil
	}
	if err != nil || d < minHeartbeat {
		return 0, usagef("FIXRAIL_HEARTBEAT=%q: want a duration of at least %s (such as 30s), or 0 for none", v, minHeartbeat)
	}
	return d, nil
}

// confirmer asks on the terminal in interactive mode. Anything but an
// explicit yes — including end of input — is a no.
func confirmer(stdio Stdio) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, q string) (bool, error) {
		// The question quotes the agent's diff and gate details: escaped
		// here too, at the terminal.
		fmt.Fprintf(stdio.Stderr, "%s [y/N] ", untrusted.Printable(q))
		line, err := bufio.NewReader(stdio.Stdin).ReadString('\n')
		if err != nil && err != io.EOF {
			return false, err
		}
		a := strings.ToLower(strings.TrimSpace(line))
		return a == "y" || a == "yes", nil
	}
}

func printReport(w io.Writer, rep *pipeline.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "%s (%s)\n", rep.Terminal, rep.Reason)
	if rep.Detail != "" {
		fmt.Fprintf(w, "  %s\n", rep.Detail)
	}
	if c := rep.Conclusion; c != nil {
		// Redacted and escaped by the run; each line marked as the agent's.
		fmt.Fprintf(w, "the agent's reason (unverified):\n  | %s\n", strings.ReplaceAll(c.Reason, "\n", "\n  | "))
	}
	fmt.Fprintf(w, "finding  %s\n", rep.Finding.ID)
	if rep.Branch != "" {
		fmt.Fprintf(w, "branch   %s @ %.12s\n", rep.Branch, rep.Commit)
	}
	if rep.PR != "" {
		fmt.Fprintf(w, "outbox   %s\n", rep.PR)
	}
	if e := rep.Egress; e != nil {
		// Hosts the agent chose are escaped by the run already.
		allow := strings.Join(e.Allow, ", ")
		if allow == "" {
			allow = "nothing"
		}
		fmt.Fprintf(w, "egress   %d request(s): %d allowed, %d refused, %d capped, %d failed; %d bytes up, %d down (allowed: %s)\n",
			e.Requests, e.Allowed, e.Refused, e.Capped, e.Failed, e.BytesUp, e.BytesDown, allow)
		for _, r := range e.Refusals {
			fmt.Fprintf(w, "  refused %s\n", r)
		}
	}
	fmt.Fprintln(w, "gates")
	width := 0 // the names' column is as wide as the longest name
	for _, g := range rep.Gates {
		width = max(width, len(g.Name))
	}
	for _, g := range rep.Gates {
		fmt.Fprintf(w, "  %-11s %-3s %-*s %s\n", g.Verdict, g.Phase, width, g.Name, g.Detail)
	}
	path := ".fixrail/runs/" + rep.RunID + ".json"
	if rep.Log != "" {
		path = strings.TrimSuffix(rep.Log, ".ndjson") + ".json"
	}
	fmt.Fprintf(w, "report   %s (%s)\n", path, rep.Duration)
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning  %s\n", warn)
	}
	return nil
}
