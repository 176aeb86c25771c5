package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/vulndata"
)

var cmdResolveVersion = &command{
	Name:  "resolve-version",
	Usage: "(ECOSYSTEM PACKAGE VERSION | --vuln FILE) [--json] [--offline] [--osv-url U] [--depsdev-url U] [--cache-dir D]",
	Short: "the cve fix type's version decision, for one package or a whole scan",
	Long: `
Resolve-version decides which version a vulnerable dependency should move to,
exactly as the cve fix type does, without a repository, an alert or a run: the
lowest published version above VERSION that no advisory for the package
affects — every advisory OSV holds for the package, not only the alerted one —
at any distance. The bump class (patch, minor, major) and the majors crossed
are measured, not refused. Pre-releases (unless VERSION is one), Go
pseudo-versions and deprecated versions are never candidates; the candidates
passed over are listed with the reason.

ECOSYSTEM is one of PyPI, npm, Go, Maven, crates.io (cargo), RubyGems (gem),
in any case. Advisories come from OSV's package-wide query (every page),
published versions from deps.dev. Answers are cached for 6 h in --cache-dir
(default: the user cache dir's fixrail/vulndata); --offline answers from the
cache only, whatever its age (marked stale past 6 h), and never calls out.

With --vuln FILE it decides for every package a finding file names, in one
process: fixrail's finding JSON (an object or an array), osv-scanner's JSON
or SARIF (what run --vuln reads), each distinct ecosystem, package and
version once, in the file's order. The text output prints one decision after
another; --json prints an array of {ecosystem, package, version, decision}
or {…, error} for a package that got no answer. A progress line per package
goes to stderr. A Dependabot alert names no installed version, so it has no
answer here: run --alert reads the version from the manifest.

Every string from OSV or deps.dev is untrusted: --json escapes it, the text
output replaces control characters.

Exit codes:
  0  decided: a target version, or no advisory affects VERSION
  5  no safe version: every published candidate is affected (found something,
     as lint's 5)
  2  usage: bad arguments, unknown ecosystem, unorderable VERSION, a
     finding file that does not parse
  1  no answer: --offline and not in the cache, a service unreachable, a
     package deps.dev does not know, or an internal error
With --vuln, 1 if any package got no answer (the list is incomplete), else
5 if any has no safe version, else 0.`,
	Flags: func() *flag.FlagSet { fs, _ := resolveFlags(); return fs },
	Run:   runResolveVersion,
}

type resolveOpts struct {
	json bool
	vuln string
	src  vulnSource
}

func resolveFlags() (*flag.FlagSet, *resolveOpts) {
	o := &resolveOpts{}
	fs := flag.NewFlagSet("resolve-version", flag.ContinueOnError)
	fs.BoolVar(&o.json, "json", false, "print the whole decision as JSON")
	fs.StringVar(&o.vuln, "vuln", "", "decide for every package the finding `file` names (fixrail JSON, osv-scanner JSON or SARIF)")
	o.src.flags(fs)
	return fs, o
}

// errNoSafeVersion is resolve-version's "every candidate is affected"; the
// decision was already printed.
type errNoSafeVersion struct{}

func (errNoSafeVersion) Error() string { return "no safe version" }
func (errNoSafeVersion) ExitCode() int { return exitFound }
func (errNoSafeVersion) Shown() bool   { return true }

// errServiceUnavailable is "could not answer": offline with nothing cached,
// a service that could not be asked, or a package it does not know. It is exit 1, not 5: a CI job
// acting on 5 must never read "OSV was down" as "found something", and
// never as clean.
type errServiceUnavailable struct{ err error }

func (e *errServiceUnavailable) Error() string { return e.err.Error() }
func (e *errServiceUnavailable) Unwrap() error { return e.err }
func (*errServiceUnavailable) ExitCode() int   { return exitInternal }
func (*errServiceUnavailable) Shown() bool     { return false }

// parseInterleaved parses flags that may come before, between or after the
// positional arguments (resolve-version go mod v1 --json).
func parseInterleaved(fs *flag.FlagSet, stdio Stdio, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, stdio, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runResolveVersion(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := resolveFlags()
	pos, err := parseInterleaved(fs, stdio, args)
	if err != nil {
		return err
	}
	if o.vuln != "" {
		if len(pos) != 0 {
			return usagef("resolve-version takes ECOSYSTEM PACKAGE VERSION or --vuln FILE, not both")
		}
		return resolveBatch(ctx, stdio, o)
	}
	if len(pos) != 3 {
		return usagef("resolve-version takes ECOSYSTEM PACKAGE VERSION (%d given)", len(pos))
	}
	eco, err := vulndata.ParseEcosystem(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	name, version := pos[1], pos[2]
	if err := checkPackage(eco, name, version); err != nil {
		return usagef("%v", err)
	}
	client, err := o.src.client()
	if err != nil {
		return err
	}
	d, err := decide(ctx, client, eco, name, version)
	if err != nil {
		return err
	}
	if o.json {
		b, err := d.JSON()
		if err != nil {
			return err
		}
		if _, err := stdio.Stdout.Write(b); err != nil {
			return err
		}
	} else {
		printDecision(stdio.Stdout, d)
	}
	if d.Outcome == cve.NoSafeVersion {
		return errNoSafeVersion{}
	}
	return nil
}

// checkPackage refuses a name no registry uses and a version the
// ecosystem cannot order.
func checkPackage(eco vulndata.Ecosystem, name, version string) error {
	if name == "" || len(name) > 512 || strings.ContainsFunc(name, unicode.IsControl) {
		return errors.New("package name must be 1 to 512 printable bytes")
	}
	_, err := eco.Parse(version)
	return err
}

// decide is cve.Decide with "could not look" told apart from a failure.
func decide(ctx context.Context, client *vulndata.Client, eco vulndata.Ecosystem, name, version string) (*cve.Decision, error) {
	d, err := cve.Decide(ctx, client, eco, name, version)
	switch {
	case errors.Is(err, vulndata.ErrOfflineMiss), errors.Is(err, vulndata.ErrUnreachable), errors.Is(err, vulndata.ErrNotFound):
		return nil, &errServiceUnavailable{err}
	case err != nil && !errors.Is(err, cve.ErrNoSafeVersion):
		return nil, err
	}
	return d, nil
}

// batchEntry is one package of resolve-version --vuln: its decision, or
// why it has none.
type batchEntry struct {
	Ecosystem string          `json:"ecosystem"`
	Package   string          `json:"package"`
	Version   string          `json:"version"`
	Decision  json.RawMessage `json:"decision,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// resolveBatch decides for every distinct package of a finding file, in one
// process and through one cache.
func resolveBatch(ctx context.Context, stdio Stdio, o *resolveOpts) error {
	vs, err := findings.ReadVulnFile(o.vuln)
	if err != nil {
		return usagef("%v", err)
	}
	client, err := o.src.client()
	if err != nil {
		return err
	}
	type key struct{ eco, name, version string }
	seen := map[key]bool{}
	var entries []batchEntry
	unanswered, unsafe := 0, 0
	for _, v := range vs {
		k := key{strings.ToLower(v.Ecosystem), v.Package, v.Version}
		if seen[k] {
			continue
		}
		seen[k] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		e := batchEntry{Ecosystem: v.Ecosystem, Package: v.Package, Version: v.Version}
		fmt.Fprintf(stdio.Stderr, "resolve-version: [%d] %s %s %s\n", len(entries)+1, oneLine(v.Ecosystem), oneLine(v.Package), oneLine(v.Version))
		var d *cve.Decision
		eco, err := vulndata.ParseEcosystem(v.Ecosystem)
		switch {
		case err != nil:
		case v.Version == "":
			err = errors.New("the finding names no installed version (a Dependabot alert: run --alert reads it from the manifest)")
		default:
			if err = checkPackage(eco, v.Package, v.Version); err == nil {
				d, err = decide(ctx, client, eco, v.Package, v.Version)
			}
		}
		if err != nil {
			unanswered++
			e.Error = err.Error()
		} else {
			if d.Outcome == cve.NoSafeVersion {
				unsafe++
			}
			if e.Decision, err = d.JSON(); err != nil {
				return err
			}
		}
		entries = append(entries, e)
		if !o.json {
			if len(entries) > 1 {
				fmt.Fprintln(stdio.Stdout)
			}
			if d != nil {
				printDecision(stdio.Stdout, d)
			} else {
				fmt.Fprintf(stdio.Stdout, "%s (%s) %s: NO ANSWER: %s\n", oneLine(v.Package), oneLine(v.Ecosystem), oneLine(v.Version), oneLine(e.Error))
			}
		}
	}
	if o.json {
		if err := writeJSON(stdio.Stdout, entries); err != nil {
			return err
		}
	}
	switch {
	case unanswered > 0:
		return &errServiceUnavailable{fmt.Errorf("%d of %d package(s) got no answer", unanswered, len(entries))}
	case unsafe > 0:
		return errNoSafeVersion{}
	}
	return nil
}

// oneLine is approve's printable (every non-printable rune escaped) with
// newlines escaped too, so a registry string cannot forge an output line.
func oneLine(s string) string { return printable(strings.ReplaceAll(s, "\n", `\u000a`)) }

func printDecision(w io.Writer, d *cve.Decision) {
	p := oneLine
	head := fmt.Sprintf("%s (%s) %s", p(d.Package), d.Ecosystem, p(d.Installed))
	switch d.Outcome {
	case cve.Upgrade:
		fmt.Fprintf(w, "%s → %s: %s bump, %d major(s) crossed", head, p(d.Target), d.Bump.Class, d.Bump.MajorsCrossed)
		if d.Bump.Breaking {
			fmt.Fprint(w, ", breaking by version number")
		}
		fmt.Fprintln(w)
	case cve.AlreadySafe:
		fmt.Fprintf(w, "%s: already safe (no known advisory affects it)\n", head)
	default:
		fmt.Fprintf(w, "%s: NO SAFE VERSION\n", head)
	}
	fmt.Fprintf(w, "why: %s\n", p(d.Rationale))
	ids := func(label string, as []cve.Advisory) {
		if len(as) > 0 {
			fmt.Fprintf(w, "%s: %s\n", label, p(strings.Join(cve.IDs(as), ", ")))
		}
	}
	if d.Outcome == cve.Upgrade {
		ids("clears", d.Cleared)
	} else {
		ids("affecting", d.Affecting)
	}
	ids("still open", d.StillOpen)
	ids("without ranges", d.WithoutRanges)
	for _, c := range d.PassedOver {
		by := ""
		if len(c.By) > 0 {
			by = " by " + strings.Join(c.By, ", ")
		}
		fmt.Fprintf(w, "passed over: %s (%s%s)\n", p(c.Version), c.Reason, p(by))
	}
	if d.PassedOverOmitted > 0 {
		fmt.Fprintf(w, "passed over: … and %d more\n", d.PassedOverOmitted)
	}
	if d.Data.Stale || d.Versions.Stale {
		fmt.Fprintf(w, "warning: served offline from a cache older than 6 h (fetched %s)\n", d.Data.FetchedAt.Format("2006-01-02 15:04 UTC"))
	}
}
