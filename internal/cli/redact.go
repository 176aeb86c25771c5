package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fixrail/fixrail/internal/redact"
)

var cmdRedact = &command{
	Name:  "redact",
	Usage: "[--check] [--json] [--customer-ids FILE] [FILE|-]",
	Short: "scrub secrets and customer data from text (the engine behind the leak scan)",
	Long: `
Redact reads text (a file, or standard input for - or no argument) and writes
it with every secret and customer identifier replaced by [REDACTED:<rule>].
It uses the same engine as fixrail's leak scan: exact values of the
credentials in this process's environment (GITHUB_TOKEN, ANTHROPIC_API_KEY and
the like) in plain, base64, hex and URL-encoded forms, then shapes — provider
token formats, private keys, credentials in URLs, credential-named
assignments, random-looking tokens, card numbers.

With --check nothing is written but the findings: each rule, byte offsets
and tier, never the value; it exits 5 when anything would be redacted, 0
when not. Findings come in two tiers: most block a PR (the leak scan
escalates), some only send it for review (a documented example value, a
placeholder fill, randomness under an ambiguous name: labelled needs-review,
the reason in the PR body). --blocking makes --check exit 5 only for the
first tier.
--check and --json read the input as a stream and scan all of it, whatever
its size, in bounded memory. Writing redacted text holds 128 KiB: input past
that is withheld behind a marker, never passed on unscanned.`,
	Flags: func() *flag.FlagSet { fs, _ := redactFlags(); return fs },
	Run:   runRedact,
}

type redactOpts struct {
	check, json, blocking bool
	customerIDs           string
}

func redactFlags() (*flag.FlagSet, *redactOpts) {
	o := &redactOpts{}
	fs := flag.NewFlagSet("redact", flag.ContinueOnError)
	fs.BoolVar(&o.check, "check", false, "report findings (rule and offset) instead of writing the text; exit 5 if any")
	fs.BoolVar(&o.json, "json", false, "print findings as JSON")
	fs.BoolVar(&o.blocking, "blocking", false, "with --check: exit 5 only for findings that would block a PR (not those the leak scan only sends for review)")
	fs.StringVar(&o.customerIDs, "customer-ids", "", "a `file` of customer identifiers to redact, one per line")
	return fs, o
}

// errFound is --check's "something would be redacted".
type errFound struct{ n int }

func (e *errFound) Error() string { return fmt.Sprintf("%d finding(s)", e.n) }
func (*errFound) ExitCode() int   { return exitFound }

// Shown: the findings were printed (and counted on stderr where the command does).
func (*errFound) Shown() bool { return true }

func runRedact(_ context.Context, stdio Stdio, args []string) error {
	fs, o := redactFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("redact takes at most one file")
	}
	var in io.Reader = stdio.Stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return usagef("%v", err)
		}
		defer f.Close()
		in = f
	}
	eng, err := redact.FromEnvironment(os.LookupEnv, o.customerIDs)
	if err != nil {
		return usagef("%v", err)
	}
	if o.check || o.json {
		return reportFindings(stdio, eng, in, o)
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	out, _, err := eng.Redact(string(data))
	if err != nil {
		return fmt.Errorf("redaction failed; nothing was written: %w", err)
	}
	_, err = io.WriteString(stdio.Stdout, out)
	return err
}

// reportFindings is --check and --json: the leak scan's view of the whole
// input, read as a stream (redact.Engine.DetectReader), so an input of any
// size is scanned in bounded memory and nothing is withheld. Each finding is
// printed as it is settled: rule and offsets, never the value.
func reportFindings(stdio Stdio, eng *redact.Engine, in io.Reader, o *redactOpts) error {
	type row struct {
		Rule   string `json:"rule"`
		Start  int    `json:"start"`
		End    int    `json:"end"`
		Review string `json:"review,omitempty"`
	}
	w := bufio.NewWriter(stdio.Stdout)
	n, rows := 0, 0
	err := eng.DetectReader(in, func(f redact.Finding) error {
		if !o.blocking || f.Blocking() {
			n++
		}
		if !o.json {
			// A blocking finding's line is rule and offsets; a review-tier
			// one says why it only needs review.
			tier := ""
			if !f.Blocking() {
				tier = "\treview: " + f.Review
			}
			_, err := fmt.Fprintf(w, "%s\tbytes %d-%d%s\n", f.Rule, f.Start, f.End, tier)
			return err
		}
		b, err := json.MarshalIndent(row{f.Rule, f.Start, f.End, f.Review}, "  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n  "
		if rows == 0 {
			sep = "[\n  "
		}
		rows++
		_, err = fmt.Fprintf(w, "%s%s", sep, b)
		return err
	})
	if err != nil {
		// What was printed is not the whole story: say so, and fail
		// closed (a leak check that could not finish found something).
		w.Flush()
		return fmt.Errorf("the leak scan did not finish; treat the input as leaking: %w", err)
	}
	if o.json {
		if rows == 0 {
			fmt.Fprint(w, "[]\n")
		} else {
			fmt.Fprint(w, "\n]\n")
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if o.check && n > 0 {
		return &errFound{n}
	}
	return nil
}
