// Package resolvecmd is `fixrail resolve-version` without the rest of
// fixrail: its flags, the advisory source they choose, the decision's
// rendering and its exit codes. It links the cve decision, the
// vulnerability-data clients and the finding-file readers, and nothing of the
// pipeline, the forge, the ledger, the hook or the model runners, so the slim
// cmd/fixrail-resolve binary — for a scanner that starts one process per
// package — does not pay for them at start-up. internal/cli wraps the same
// code as the resolve-version command.
package resolvecmd

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
	"github.com/fixrail/fixrail/internal/untrusted"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Usage, Short and Long are the command's help, shared by both binaries.
const (
	Usage = "(ECOSYSTEM PACKAGE VERSION | --vuln FILE) [--json] [--offline] [--osv-url U] [--depsdev-url U] [--cache-dir D]"
	Short = "the cve fix type's version decision, for one package or a whole scan"
	Long  = `
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

The same command is the slim binary cmd/fixrail-resolve ("fixrail-resolve
ECOSYSTEM PACKAGE VERSION", the same flags, output and exit codes), which
links only the decision and its clients, for a caller that starts one
process per package.

Every string from OSV or deps.dev is untrusted: --json escapes it, the text
output escapes every non-printable character (as \u001b).

Exit codes:
  0  decided: a target version, or no advisory affects VERSION
  5  no safe version: every published candidate is affected (found something,
     as lint's 5)
  2  usage: bad arguments, unknown ecosystem, unorderable VERSION, a
     finding file that does not parse
  1  no answer: --offline and not in the cache, a service unreachable, a
     package deps.dev does not know, or an internal error
With --vuln, 1 if any package got no answer (the list is incomplete), else
5 if any has no safe version, else 0.`
)

// Exit codes: the numbers fixrail's one table (internal/cli/exit.go) gives
// these outcomes; TestResolveExitCodes there holds the two together.
const (
	ExitDecided       = 0 // a target version, or no advisory affects VERSION
	ExitNoAnswer      = 1 // offline miss, a service unreachable, an unknown package, an internal error
	ExitUsage         = 2 // bad arguments, an unorderable version, a finding file that does not parse
	ExitNoSafeVersion = 5 // every published candidate is affected (lint's "found something")
)

// UsageError is a mistake in how the command was called.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }
func (*UsageError) ExitCode() int   { return ExitUsage }
func (*UsageError) Shown() bool     { return false }

func usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// NoSafeVersionError is "every candidate is affected"; the decision was
// already printed.
type NoSafeVersionError struct{}

func (NoSafeVersionError) Error() string { return "no safe version" }
func (NoSafeVersionError) ExitCode() int { return ExitNoSafeVersion }
func (NoSafeVersionError) Shown() bool   { return true }

// UnavailableError is "could not answer": offline with nothing cached, a
// service that could not be asked, or a package it does not know. It is
// exit 1, not 5: a CI job acting on 5 must never read "OSV was down" as
// "found something", and never as clean.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }
func (*UnavailableError) ExitCode() int   { return ExitNoAnswer }
func (*UnavailableError) Shown() bool     { return false }

// Source is the advisory source a command that decides versions asks
// (resolve-version, run with a cve finding): OSV and deps.dev behind the
// on-disk cache, or the cache alone.
type Source struct {
	offline                   bool
	osvURL, depsDevURL, cache string
}

// Flags adds the source's flags to fs.
func (s *Source) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&s.offline, "offline", false, "answer advisory and version queries from the cache only; never call out")
	fs.StringVar(&s.osvURL, "osv-url", vulndata.DefaultOSVURL, "OSV API base `URL`")
	fs.StringVar(&s.depsDevURL, "depsdev-url", vulndata.DefaultDepsDevURL, "deps.dev API base `URL`")
	fs.StringVar(&s.cache, "cache-dir", "", "advisory cache `directory` (default: the user cache dir's fixrail/vulndata)")
}

// Client builds the source; a bad URL is a *UsageError.
func (s *Source) Client() (*vulndata.Client, error) {
	for _, u := range []string{s.osvURL, s.depsDevURL} {
		if err := vulndata.CheckBaseURL(u); err != nil {
			return nil, usagef("%v", err)
		}
	}
	dir := s.cache
	if dir == "" {
		var err error
		if dir, err = vulndata.DefaultCacheDir(); err != nil {
			return nil, fmt.Errorf("no cache dir: %w (use --cache-dir)", err)
		}
	}
	c := vulndata.NewClient(vulndata.NewCache(dir))
	c.OSVURL, c.DepsDevURL, c.Offline = s.osvURL, s.depsDevURL, s.offline
	return c, nil
}

// Opts are the command's flags.
type Opts struct {
	JSON bool
	Vuln string
	Src  Source
}

// Flags returns the command's flag set and the options it fills.
func Flags() (*flag.FlagSet, *Opts) {
	o := &Opts{}
	fs := flag.NewFlagSet("resolve-version", flag.ContinueOnError)
	fs.BoolVar(&o.JSON, "json", false, "print the whole decision as JSON")
	fs.StringVar(&o.Vuln, "vuln", "", "decide for every package the finding `file` names (fixrail JSON, osv-scanner JSON or SARIF)")
	o.Src.Flags(fs)
	return fs, o
}

// Parse parses flags that may come before, between or after the positional
// arguments (resolve-version go mod v1 --json) and returns the positional
// ones. -h returns flag.ErrHelp; any other mistake is a *UsageError.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &UsageError{err.Error()}
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

// Run decides for the positional ECOSYSTEM PACKAGE VERSION, or for every
// package of o.Vuln, and prints the answer on stdout. Its error says its
// exit code (ExitCode); nil is ExitDecided.
func Run(ctx context.Context, o *Opts, pos []string, stdout, stderr io.Writer) error {
	if o.Vuln != "" {
		if len(pos) != 0 {
			return usagef("resolve-version takes ECOSYSTEM PACKAGE VERSION or --vuln FILE, not both")
		}
		return batch(ctx, o, stdout, stderr)
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
	client, err := o.Src.Client()
	if err != nil {
		return err
	}
	d, err := decide(ctx, client, eco, name, version)
	if err != nil {
		return err
	}
	if o.JSON {
		b, err := d.JSON()
		if err != nil {
			return err
		}
		if _, err := stdout.Write(b); err != nil {
			return err
		}
	} else {
		PrintDecision(stdout, d)
	}
	if d.Outcome == cve.NoSafeVersion {
		return NoSafeVersionError{}
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
		return nil, &UnavailableError{err}
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

// batch decides for every distinct package of a finding file, in one
// process and through one cache.
func batch(ctx context.Context, o *Opts, stdout, stderr io.Writer) error {
	vs, err := findings.ReadVulnFile(o.Vuln)
	if err != nil {
		return usagef("%v", err)
	}
	client, err := o.Src.Client()
	if err != nil {
		return err
	}
	type key struct{ eco, name, version string }
	seen := map[key]bool{}
	var entries []batchEntry
	unanswered, unsafe := 0, 0
	oneLine := untrusted.OneLine
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
		fmt.Fprintf(stderr, "resolve-version: [%d] %s %s %s\n", len(entries)+1, oneLine(v.Ecosystem), oneLine(v.Package), oneLine(v.Version))
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
		if !o.JSON {
			if len(entries) > 1 {
				fmt.Fprintln(stdout)
			}
			if d != nil {
				PrintDecision(stdout, d)
			} else {
				fmt.Fprintf(stdout, "%s (%s) %s: NO ANSWER: %s\n", oneLine(v.Package), oneLine(v.Ecosystem), oneLine(v.Version), oneLine(e.Error))
			}
		}
	}
	if o.JSON {
		b, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			return err
		}
		if _, err := stdout.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	switch {
	case unanswered > 0:
		return &UnavailableError{fmt.Errorf("%d of %d package(s) got no answer", unanswered, len(entries))}
	case unsafe > 0:
		return NoSafeVersionError{}
	}
	return nil
}

// PrintDecision writes d for a terminal, every registry string on one
// line with its non-printable runes escaped.
func PrintDecision(w io.Writer, d *cve.Decision) {
	p := untrusted.OneLine
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

// Help writes the command's whole help as prog (the program and, for
// fixrail, the command name) would print it.
func Help(w io.Writer, prog string) {
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n", prog, Usage, strings.TrimSpace(Long))
	fs, _ := Flags()
	fmt.Fprintln(w, "\nFlags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// codedError is an error that knows its exit code, as internal/cli's are.
type codedError interface {
	error
	ExitCode() int
	Shown() bool
}

// Main is the slim binary's whole program: `fixrail-resolve [resolve-version]
// ARGS` (the same arguments as `fixrail resolve-version`, output and exit
// codes alike).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// An error quotes a registry's or a manifest's text: escaped, as the
	// fixrail binary's own stderr is.
	errw := untrusted.NewWriter(stderr)
	defer errw.Flush()
	stderr = errw
	if len(args) > 0 && args[0] == "resolve-version" {
		args = args[1:]
	}
	fs, o := Flags()
	pos, err := Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		Help(stdout, "fixrail-resolve")
		return ExitDecided
	}
	if err == nil {
		err = Run(ctx, o, pos, stdout, stderr)
	}
	code, shown := ExitDecided, false
	if err != nil {
		code = ExitNoAnswer
		if c, ok := errors.AsType[codedError](err); ok {
			code, shown = c.ExitCode(), c.Shown()
		}
	}
	if err != nil && !shown {
		fmt.Fprintf(stderr, "fixrail-resolve: %s\n", err)
		if code == ExitUsage {
			fmt.Fprintln(stderr, "run 'fixrail-resolve -h' for usage")
		}
	}
	return code
}
