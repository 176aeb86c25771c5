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
	Usage: "--batch SOURCE [--parallel N] [--group manifest] [--repo DIR] | --report FILE [--repo DIR] | (--sarif FILE --result ID | --orca-alert ID) [--repo DIR | --repo OWNER/NAME --dir DIR] | --vuln FILE [--offline] [--cache-dir D] [--osv-url U] [--depsdev-url U] [--repo DIR] | --repo OWNER/NAME (--issue N | --alert N | --code-scanning-alert N | --secret-scanning-alert N | --event FILE) [--dir DIR]; [--base BRANCH] [--mode autonomous|interactive] [--dry-run] [--json]",
	Short: "take one finding, or a batch of them, through the five phases to a terminal state",
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

--sarif FILE --result ID takes one result of a scanner's SARIF 2.1.0 log
(any tool; scan --sarif FILE lists the results and their ids). Its file
must be in the clone; its fix type is fixrail.yaml's scanners: entry for
the tool, else the rule's tags, else the tool's name (gosec, Semgrep,
CodeQL, ESLint: sast; gitleaks: secret; tfsec, checkov, KICS, Trivy
misconfigurations: iac). A result scan sorts as unfixable or posture is
refused with its reason (exit 2); a secret whose value the log masks is
one. --orca-alert ID takes one open Orca alert of the repository orca:
in fixrail.yaml names (the token from ORCA_API_TOKEN), sorted as scan
--orca sorts it. Without --dir, --repo is the clone and the draft PR goes
to the outbox; with --dir CLONE, --repo is the GitHub repository
(owner/name) the draft PR is opened on, as for --issue.

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
or it is resolved, and fixrail does not reopen that decision.

With --code-scanning-alert N or --secret-scanning-alert N (or a
code_scanning_alert event: created, reopened, reopened_by_user,
appeared_in_branch; a secret_scanning_alert event: created, reopened)
the finding is that GitHub alert of --repo, read through the API (the
token needs "Code scanning alerts: read", in Actions security-events:
read; or "Secret scanning alerts: read") and sorted as scan sorts a
SARIF result: its file must be in the clone (--dir), its fix type comes
from its tool (a secret-scanning alert is a secret). The alert is never
changed; one not open is refused (exit 2).

With --batch SOURCE every finding of the source runs to its terminal state,
each in a fixrail run process of its own (its own lock, ledger admission,
containment and report). SOURCE is a file scan can read — fixrail scan
--json, a vulnerable-dependency list (fixrail's, osv-scanner's JSON or
SARIF), any other scanner's SARIF log (each to-fix result runs as --sarif
FILE --result ID; unfixable and posture results are listed, never run), a
report — or a directory of them. At most --parallel run at once
(default: the smaller of budget.concurrent.repo and .global); findings that
name the same file, manifest or package run one after another (S7). A line
per finding on stderr, a table (or --json) on stdout, logs under
.fixrail/batches/; the exit code is the most severe of the runs (ESCALATE
over HALT over NOT-REPRO over DRAFT-PR; a run with no terminal state above
all). Every other flag is passed to each run; a scan's listing also
passes the base it was scanned against (unless --base). A scan's listing
without --dir clones each repository it names from $GITHUB_SERVER_URL
into a directory of its own, --repos-parallel (default 3) at a time, and
after its runs prunes the clone to .fixrail/runs, batches and outbox
(--keep keeps it whole).

--dry-run plans and publishes nothing, three ways at once: the fix phase's
agent gets read tools only, the run stops after P3 (HALT dry-run, saying
what the fix would change) and the forge refuses every write.

FIXRAIL_WEBHOOK_URL (never fixrail.yaml) sends each run's terminal event —
with FIXRAIL_WEBHOOK_EVENTS=all every transition — as JSON signed with
HMAC-SHA256 under FIXRAIL_WEBHOOK_SECRET (header X-Fixrail-Signature-256),
after redaction; a receiver that is down never changes a run's outcome.

With --attest-key FILE (or $FIXRAIL_ATTEST_KEY) a DRAFT-PR is signed: an
in-toto statement in a DSSE envelope whose subject is the commit and whose
predicate is its trailers' claim and every gate's verdict, written to
.fixrail/outbox/<id>/attestation.dsse.json or commented on the GitHub PR;
a --group manifest draft holds one per commit, attestation-<finding>.dsse.json.
` + "`fixrail verify --attestation FILE --key KEY.pub`" + ` checks it.`,
	Flags: func() *flag.FlagSet { fs, _ := runFlags(); return fs },
	Run:   runRun,
}

type runOpts struct {
	repo, report, vuln, base, mode string
	sarif, result, orcaAlert       string
	dir, event, attestKey          string
	issue, alert                   int
	csAlert, ssAlert               int
	json                           bool
	vulns                          resolvecmd.Source
	x                              runMoreOpts // --batch, --parallel, --dry-run (batch.go)
	g                              groupOpts   // --group, --stack-on, --hold-pr (batch_group.go)
}

func runFlags() (*flag.FlagSet, *runOpts) {
	o := &runOpts{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "the repository to fix (a git work tree)")
	fs.StringVar(&o.report, "report", "", "the finding: a JSON or Markdown report `file` (required)")
	fs.StringVar(&o.vuln, "vuln", "", "the finding: a vulnerable-dependency `file` (fixrail's finding JSON, osv-scanner JSON or SARIF), instead of --report")
	fs.StringVar(&o.sarif, "sarif", "", "the finding: a result of a scanner's SARIF 2.1.0 log `file` (with --result), instead of --report")
	fs.StringVar(&o.orcaAlert, "orca-alert", "", "the finding: the Orca alert `id` (orca-<digits>) of the repository orca: in fixrail.yaml names; the token from ORCA_API_TOKEN")
	fs.StringVar(&o.result, "result", "", "with --sarif: the finding `id` of the result to work (scan --sarif FILE lists them)")
	o.vulns.Flags(fs)
	fs.StringVar(&o.base, "base", "", "base `branch` (default: the repository's current branch)")
	fs.StringVar(&o.mode, "mode", "", "autonomous or interactive (default: fixrail.yaml's mode)")
	fs.IntVar(&o.issue, "issue", 0, "the finding: GitHub issue `number` (then --repo is owner/name)")
	fs.IntVar(&o.alert, "alert", 0, "the finding: Dependabot alert `number` of the GitHub repository --repo names")
	fs.IntVar(&o.csAlert, "code-scanning-alert", 0, "the finding: GitHub code-scanning alert `number` of the repository --repo names")
	fs.IntVar(&o.ssAlert, "secret-scanning-alert", 0, "the finding: GitHub secret-scanning alert `number` of the repository --repo names")
	fs.StringVar(&o.event, "event", "", "the finding: the issue or Dependabot alert an Actions event payload `file` names (default $GITHUB_EVENT_PATH under Actions)")
	fs.StringVar(&o.dir, "dir", ".", "with --issue, --alert or --event: the clone to fix (a git work tree)")
	fs.BoolVar(&o.json, "json", false, "print the run report as JSON on stdout")
	o.x.flags(fs)
	o.g.flags(fs)
	fs.StringVar(&o.attestKey, "attest-key", "", "sign a DRAFT-PR's attestation with this private key `file` (SSH or native ed25519; default $FIXRAIL_ATTEST_KEY): beside the bundle, or as a PR comment on GitHub")
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
	if err := o.g.check(o.x.batch != ""); err != nil {
		return err
	}
	if o.x.batch != "" {
		return runBatch(ctx, stdio, fs, o)
	}
	if fs.Lookup("parallel").Value.String() != "0" || fs.Lookup("repos-parallel").Value.String() != "0" {
		return usagef("--parallel and --repos-parallel go with --batch")
	}
	if o.x.runTimeout != 0 {
		// A single run's limit is budget.wall_clock; a batch's is the
		// backstop for its runs.
		return usagef("--run-timeout goes with --batch (a single run is bounded by budget.wall_clock)")
	}
	in, err := o.intake(fs, os.LookupEnv)
	if err != nil {
		return err
	}
	key, err := attestKey(o.attestKey, os.LookupEnv)
	if err != nil {
		return err
	}
	mode := config.Mode(o.mode)
	if mode != "" && mode != config.Autonomous && mode != config.Interactive {
		return usagef("--mode must be autonomous or interactive, not %q", o.mode)
	}
	var fin *findings.Finding
	var vulns cve.Source
	scanner := o.sarif != "" || o.orcaAlert != ""
	if in.github == "" && !scanner {
		if fin, vulns, err = readRunFinding(o); err != nil {
			return refuseClosedAlert(err)
		}
	} else if in.alert > 0 && in.kind == findings.DependabotKind {
		if vulns, err = o.vulns.Client(); err != nil {
			return resolveUsage(err)
		}
	}
	advisories, err := runAdvisories(o, vulns)
	if err != nil {
		return err
	}
	sink, err := o.x.webhook()
	if err != nil {
		return err
	}
	defer sink.close(stdio.Stderr)
	if err := hideEnvironment(); err != nil {
		return fmt.Errorf("make fixrail non-dumpable: %w", err)
	}
	guardRuntime()
	setup, err := pipeline.Prepare(ctx, in.dir, o.base)
	if err != nil {
		return err
	}
	defer setup.Close()
	if err := o.g.stack(ctx, setup); err != nil {
		return err
	}
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
	o.wrap(&params, sink)
	switch {
	case scanner:
		if err := in.readScanner(ctx, setup, o, &params); err != nil {
			return err
		}
	case in.alert > 0 && in.kind != findings.DependabotKind:
		if err := in.readScanAlert(ctx, sm.scanAlerts, setup, &params); err != nil {
			return err
		}
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
	sink.close(stdio.Stderr)
	if err != nil {
		return err
	}
	if o.g.holdPR == "" {
		attest(ctx, key, setup, sm.forge, rep, stdio.Stderr)
	} else {
		attestHeld(ctx, key, setup, rep, o.g.holdPR, stdio.Stderr)
	}
	if err := printReport(stdio.Stdout, rep, o.json); err != nil {
		return err
	}
	runStepSummary(stdio.Stderr, rep)
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
	// One reader for every question of the run (the draft, then each
	// recheck follow-up): a reader per question would swallow the next
	// answer in its buffer.
	in := bufio.NewReader(stdio.Stdin)
	return func(ctx context.Context, q string) (bool, error) {
		// The question quotes the agent's diff and gate details: escaped
		// here too, at the terminal.
		fmt.Fprintf(stdio.Stderr, "%s [y/N] ", untrusted.Printable(q))
		line, err := in.ReadString('\n')
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
