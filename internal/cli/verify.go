package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/verify"
)

var cmdVerify = &command{
	Name:  "verify",
	Usage: "[--dir CLONE] [--base BRANCH] [--offline] [--cache-dir D] [--osv-url U] [--depsdev-url U] [--json] REF | --repo OWNER/NAME --pr N | --attestation FILE --key PUBKEY [REF]",
	Short: "re-prove a fixrail commit from the repository alone; check a signed attestation",
	Long: `
Verify re-derives what a fixrail commit claims, from the clone alone: no
.fixrail state directory, no ledger, no token for a local REF (a branch or
a commit). The claim is the commit's Fixrail-* trailers; each check below
runs in order and the first that fails is named:

  trailers    the Fixrail-* trailers parse, every part is there, and the
              symptom's hash is the symptom's
  parent      the commit's one parent is the base the trailers name, or
              its first-parent chain to that base holds only commits
              carrying the same finding's trailers (a recheck's
              follow-ups): no merge, no other commit
  pr-body     (--pr) the PR body's evidence block is the same claim
  base        that base is on --base (default: the current branch,
              refused when it holds REF), the branch the reviewer
              trusts: the judged branch never picks the fixrail.yaml it
              is judged by
  config      fixrail.yaml read from that base commit: the test and suite
              commands, the sandbox, the budgets, the sensitive paths
  tree        the commit's tree is the base plus exactly the declared
              files (the evidence and the fix's own), nothing else
  diff-nonempty, stage-b, diff-budget, leak-scan
              the run's model-free gates, on the commit
  oracle-red  the reproducing test, on a fresh checkout of the base plus
              the evidence, fails with the declared symptom
  test-unchanged, oracle-green
              the same test passes on a fresh checkout of the commit
  cve-red, cve-green
              (cve) the version the base's build resolves (go list -m in
              the sandbox, the lockfile, the pin) is affected by an
              advisory; the commit's is outside every affected range —
              the run's own oracle, asking OSV and deps.dev through the
              cache as run --vuln does (--offline, --cache-dir,
              --osv-url, --depsdev-url). No advisory data: exit 1
  scanner-red, no-suppression, scanner-green, build-check
              (sast, iac) the scanner the base's fixrail.yaml configures
              for the claimed tool (Fixrail-Tool) reports the claimed
              rule (Fixrail-Rule) at the claimed place (Fixrail-Location)
              on the base; the commit adds no suppression marker; on the
              commit the rule is gone from that file and nothing as
              severe (Fixrail-Severity) is new in a changed file; the
              file's build check passes. No scanner for the tool, or a
              build check that cannot run: skipped, not confirmed
  suite-green, suite-with-evidence
              the suite passes on the base plus the fix alone, then with
              the evidence added

Every command runs as a run's do: a fresh checkout of the exact tree,
the build environment, no credentials, and bubblewrap as the base's
sandbox setting says. For secret, the credential is known only from
the alert, so verify checks what needs no value: the claimed lines of
the base hold a token a credential can be (secret-red), and every token
the fix removed from them is in no tracked file of the commit, raw or
encoded (secret-absent).
Trailers say what fixrail claimed; verify proves the claim holds, not who
made it: that is what a signed attestation adds.

With --attestation FILE --key PUBKEY, verify checks a DSSE envelope
fixrail run wrote (README, Attestations): the signature against the
public key (an OpenSSH .pub line or a native fixrail public key), the
in-toto statement inside it, and, with REF, that its subject is REF's
commit and its claim REF's trailers. One changed byte fails.

Exit codes:
  0  re-proven: every check passed (skipped ones say why)
  5  a difference: the first check that failed is named
  1  could not look: the commit, the repository or the sandbox could not
     be read or run; never 0, never 5
  2  usage`,
	Flags: func() *flag.FlagSet { fs, _ := verifyFlags(); return fs },
	Run:   runVerify,
}

type verifyOpts struct {
	dir, base, attestation, key, repo string
	pr                                int
	json                              bool
	vulns                             resolvecmd.Source
}

func verifyFlags() (*flag.FlagSet, *verifyOpts) {
	o := &verifyOpts{}
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".", "the clone that holds REF (a git work tree)")
	fs.StringVar(&o.base, "base", "", "the trusted base `branch` the claimed base must be on (default: the current branch, unless it holds REF; with --pr, the PR's base)")
	fs.StringVar(&o.repo, "repo", "", "with --pr: the GitHub repository, `owner/name`")
	fs.IntVar(&o.pr, "pr", 0, "verify the head of this pull request `number` of --repo (its commit must be in --dir)")
	fs.StringVar(&o.attestation, "attestation", "", "check this DSSE attestation `file` (with --key)")
	fs.StringVar(&o.key, "key", "", "the public key `file` the attestation must be signed with")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	o.vulns.Flags(fs)
	return fs, o
}

// errDiffers is a commit that did not re-prove: exit 5, the report said
// which check failed.
var errDiffers error = &codedError{msg: "a difference", code: exitFound, shown: true}

func runVerify(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := verifyFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("verify takes one REF, got %d", fs.NArg())
	}
	ref := fs.Arg(0)
	if (o.attestation == "") != (o.key == "") {
		return usagef("--attestation and --key go together")
	}
	if o.attestation != "" {
		return verifyAttestation(ctx, stdio, o, ref)
	}
	// The cve oracle asks advisory data: a source that cannot be built
	// answers with why, and verify of a cve commit exits 1 naming it.
	var vulns cve.Source
	client, err := o.vulns.Client()
	switch {
	case errors.As(err, new(*resolvecmd.UsageError)):
		return resolveUsage(err)
	case err != nil:
		vulns = unavailable{err}
	default:
		vulns = client
	}
	var body *string
	switch {
	case o.pr != 0 && ref != "":
		return usagef("give REF or --pr, not both")
	case o.pr != 0:
		pr, err := prToVerify(ctx, stdio, o)
		if err != nil {
			return err
		}
		ref, body = pr.Head, &pr.Body
		if o.base == "" {
			o.base = pr.Base
		}
	case o.repo != "":
		return usagef("--repo goes with --pr")
	case ref == "":
		return usagef("verify needs a REF (a branch or a commit), --pr N or --attestation FILE")
	}
	repo, done, err := openClone(ctx, o.dir)
	if err != nil {
		return err
	}
	defer done()
	defaulted := o.base == ""
	trusted, baseName, err := trustedBase(ctx, repo, o.base)
	if err != nil {
		return err
	}
	if defaulted {
		if err := notOnCurrent(ctx, repo, ref, trusted, baseName); err != nil {
			return err
		}
	}
	rep, err := verify.Verify(ctx, verify.Input{
		Repo: repo, Rev: ref, Trusted: trusted, BaseName: baseName, Body: body,
		Lookup: os.LookupEnv, Progress: stdio.Stderr, Types: []*fixtype.Type{fixtype.NewCVE(vulns)},
	})
	if err != nil {
		return &errServiceUnavailable{err}
	}
	if o.json {
		if err := writeJSON(stdio.Stdout, rep); err != nil {
			return err
		}
	} else {
		printVerifyReport(stdio.Stdout, rep)
	}
	if !rep.Reproven {
		return errDiffers
	}
	return nil
}

// openClone opens dir as pipeline.Prepare does: the operator's git config
// frozen first, the clone's own recorded before any of its code runs.
func openClone(ctx context.Context, dir string) (*gitx.Repo, func(), error) {
	snap, err := gitx.Snapshot(ctx)
	if err != nil {
		return nil, nil, &errServiceUnavailable{fmt.Errorf("git: %w", err)}
	}
	repo, err := snap.Open(ctx, dir)
	if err != nil {
		snap.Close()
		return nil, nil, usagef("%s is not a git work tree: %v", dir, err)
	}
	if err := repo.Baseline(ctx); err != nil {
		snap.Close()
		return nil, nil, &errServiceUnavailable{fmt.Errorf("record the clone's git config: %w", err)}
	}
	return repo, func() { snap.Close() }, nil
}

// trustedBase resolves the branch the claimed base must be on: --base as
// a local branch, else as a remote-tracking one (a CI checkout has
// origin/main, not main), else the current branch.
func trustedBase(ctx context.Context, repo *gitx.Repo, base string) (string, string, error) {
	if base == "" {
		b, err := repo.CurrentBranch(ctx)
		if err != nil {
			return "", "", usagef("no current branch to trust as the base (pass --base): %v", err)
		}
		base = b
	}
	for _, ref := range []string{"refs/heads/" + base, "refs/remotes/origin/" + base, "refs/remotes/" + base} {
		if sha, err := repo.RevParse(ctx, ref); err == nil {
			return sha, base, nil
		}
	}
	return "", "", usagef("--base %q names no branch of the clone", base)
}

// notOnCurrent refuses the current branch as the trusted base when it
// holds the commit under judgment (a reviewer who checked the branch out):
// the base check would then accept any commit of that branch as the base,
// and its fixrail.yaml — the sandbox setting, the commands — would be the
// judged branch's own. A commit that does not resolve is Verify's to name.
func notOnCurrent(ctx context.Context, repo *gitx.Repo, ref, trusted, name string) error {
	sha, err := repo.RevParse(ctx, ref)
	if err != nil {
		return nil
	}
	on, err := repo.IsAncestor(ctx, sha, trusted)
	if err != nil {
		return &errServiceUnavailable{err}
	}
	if on {
		return usagef("the current branch %s holds %s, the commit under judgment: a branch cannot be the trusted base it is judged against; pass --base with the branch you trust", name, ref)
	}
	return nil
}

func printVerifyReport(w io.Writer, rep *verify.Report) {
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "%-8s %-20s %s\n", c.Status, c.Name, untrusted.OneLine(c.Detail))
	}
	if rep.Unsandboxed {
		fmt.Fprintln(w, "note: a command ran outside the sandbox (sandbox: auto, bubblewrap unusable)")
	}
	if rep.Reproven {
		// A skipped check (an oracle the base cannot run) proved nothing:
		// the last line, the one a reader takes away, says which.
		var skipped []string
		for _, c := range rep.Checks {
			if c.Status == verify.Skipped {
				skipped = append(skipped, c.Name)
			}
		}
		if len(skipped) > 0 {
			fmt.Fprintf(w, "re-proven except what was not re-run (%s): commit %s holds its trailers' claim in every check that ran\n", strings.Join(skipped, ", "), rep.Commit)
			return
		}
		fmt.Fprintf(w, "re-proven: commit %s is what its trailers claim\n", rep.Commit)
		return
	}
	fmt.Fprintf(w, "DIFFERS: commit %s: %s\n", rep.Commit, untrusted.OneLine(rep.Difference))
	if f := rep.Failed(); f != nil && f.Output != "" {
		// The output is the branch's code talking: every line indented, as
		// the run's console indents a detail, so none passes for a verdict.
		out := untrusted.Printable(strings.TrimRight(f.Output, "\n"))
		fmt.Fprintf(w, "output:\n    %s\n", strings.ReplaceAll(out, "\n", "\n    "))
	}
}
