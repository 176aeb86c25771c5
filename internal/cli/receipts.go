package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/approval/sshkey"
	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/receipt"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var cmdReceipts = &command{
	Name:  "receipts",
	Usage: "show [--json] [--tail N] [--flat] | verify [--json] | checkpoint [--key FILE] | repair [--force] [--json]   (each takes --log FILE)",
	Short: "show, verify or checkpoint the hook's hash-chained receipt log",
	Long: `
Receipts reads the log the hook appends to ($FIXRAIL_HOME/receipts.ndjson, or
--log FILE): one JSON line per decision, outcome, engine error and
checkpoint, each holding the hash of the line before.

  show        the receipts, one per line, grouped by agent session (each
              group headed by the session's id, span and how it started
              and ended; receipts of no session last); --flat: in chain
              order; --tail N: the last N; --json: as JSON, in chain
              order, inputs included
  verify      walk the chain: every line numbered in order and linked to the
              one before, every checkpoint signed by a key in
              $FIXRAIL_HOME/keys. A break exits 5 and names the line.
  checkpoint  sign the current head with the approval key (--key or
              $FIXRAIL_APPROVAL_KEY) and append the checkpoint. Keep a copy
              of the printed line somewhere the agent cannot write: the
              chain alone cannot show a truncated tail or a rewritten log,
              a checkpoint kept elsewhere can.
  repair      after a crash: a write cut short or a last line the disk
              lost stops every later receipt (the hook cannot extend a
              chain whose end it cannot read). Repair moves the broken
              tail, byte for byte, to receipts.ndjson.damaged-<time>,
              truncates the log there and appends a repair receipt with
              the moved bytes' hash. A break before the last line is more
              than a crash does; it is refused (exit 5) unless --force.`,
	Run: runReceipts,
}

// errChainBroken is a receipt chain that does not verify.
type errChainBroken struct{ brk *receipt.Break }

func (e *errChainBroken) Error() string { return "receipt chain broken at " + e.brk.String() }
func (*errChainBroken) ExitCode() int   { return exitFound }
func (*errChainBroken) Shown() bool     { return false }

func receiptsLogPath(flagValue string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	home, err := hook.HomeDir(os.LookupEnv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, hook.ReceiptsFile), nil
}

// receiptsFlags starts a receipts subcommand's flag set with --log; parse
// parses args (refusing operands, with the usage line) and returns the log's
// path.
func receiptsFlags(name, usage string) (*flag.FlagSet, func(Stdio, []string) (string, error)) {
	flags := flag.NewFlagSet("receipts "+name, flag.ContinueOnError)
	logPath := flags.String("log", "", "the receipt log `file`")
	return flags, func(stdio Stdio, args []string) (string, error) {
		if err := parseFlags(flags, stdio, args); err != nil {
			return "", err
		}
		if flags.NArg() > 0 {
			return "", usagef("usage: fixrail receipts %s %s", name, usage)
		}
		return receiptsLogPath(*logPath)
	}
}

func runReceipts(_ context.Context, stdio Stdio, args []string) error {
	if len(args) == 0 {
		return usagef("receipts needs a subcommand: show, verify, checkpoint or repair")
	}
	switch args[0] {
	case "show":
		return receiptsShow(stdio, args[1:])
	case "verify":
		return receiptsVerify(stdio, args[1:])
	case "checkpoint":
		return receiptsCheckpoint(stdio, args[1:])
	case "repair":
		return receiptsRepair(stdio, args[1:])
	}
	return usagef("unknown receipts subcommand %q (want show, verify, checkpoint or repair)", args[0])
}

func receiptsShow(stdio Stdio, args []string) error {
	flags, parse := receiptsFlags("show", "[--json] [--tail N] [--log FILE]")
	asJSON := flags.Bool("json", false, "print the receipts as a JSON array")
	tail := flags.Int("tail", 0, "show only the last `n` receipts")
	flat := flags.Bool("flat", false, "print in chain order, not grouped by session")
	path, err := parse(stdio, args)
	if err != nil {
		return err
	}
	if *tail < 0 {
		return usagef("--tail must not be negative")
	}
	rs, err := (&receipt.Log{Path: path}).Read()
	if errors.Is(err, fs.ErrNotExist) {
		rs, err = nil, nil
	}
	if err != nil {
		return err
	}
	if *tail > 0 && len(rs) > *tail {
		rs = rs[len(rs)-*tail:]
	}
	if *asJSON {
		if rs == nil {
			rs = []receipt.Receipt{}
		}
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rs)
	}
	if len(rs) == 0 {
		fmt.Fprintf(stdio.Stderr, "no receipts in %s\n", path)
		return nil
	}
	if *flat {
		for _, r := range rs {
			fmt.Fprintln(stdio.Stdout, receiptLine(r))
		}
		return nil
	}
	for i, g := range bySession(rs) {
		if i > 0 {
			fmt.Fprintln(stdio.Stdout)
		}
		fmt.Fprintln(stdio.Stdout, sessionHeader(g))
		for _, r := range g {
			fmt.Fprintln(stdio.Stdout, receiptLine(r))
		}
	}
	return nil
}

// bySession groups receipts by session, in the order each session first
// appears in the chain; receipts of no session (requests, checkpoints,
// repairs) form the last group.
func bySession(rs []receipt.Receipt) [][]receipt.Receipt {
	var order []string
	groups := map[string][]receipt.Receipt{}
	var none []receipt.Receipt
	for _, r := range rs {
		if r.Session == "" {
			none = append(none, r)
			continue
		}
		if _, ok := groups[r.Session]; !ok {
			order = append(order, r.Session)
		}
		groups[r.Session] = append(groups[r.Session], r)
	}
	out := make([][]receipt.Receipt, 0, len(order)+1)
	for _, s := range order {
		out = append(out, groups[s])
	}
	if len(none) > 0 {
		out = append(out, none)
	}
	return out
}

// sessionHeader names a group: the session, its span, how many receipts of
// each verdict, and how it started and ended when those were receipted.
func sessionHeader(g []receipt.Receipt) string {
	first, last := g[0], g[len(g)-1]
	name := "no session"
	if first.Session != "" {
		name = "session " + first.Session
	}
	h := fmt.Sprintf("== %s: %d receipts, %s .. %s", name, len(g),
		first.Time.UTC().Format(time.RFC3339), last.Time.UTC().Format(time.RFC3339))
	counts := map[string]int{}
	var verdicts []string
	var start, end string
	for _, r := range g {
		switch r.Kind {
		case receipt.KindSessionStart:
			start = r.Verdict
		case receipt.KindSessionEnd:
			var o struct {
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(r.Outcome, &o)
			end = orDash(o.Reason)
		case receipt.KindDecision:
			if counts[r.Verdict] == 0 {
				verdicts = append(verdicts, r.Verdict)
			}
			counts[r.Verdict]++
		}
	}
	var parts []string
	for _, v := range verdicts {
		parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
	}
	if len(parts) > 0 {
		h += " (" + strings.Join(parts, ", ") + ")"
	}
	if start != "" {
		h += "; snapshot " + start
	}
	if end != "" {
		h += "; ended " + end
	}
	return untrusted.Printable(strings.ReplaceAll(h, "\n", " "))
}

// receiptLine renders one receipt on one line. Everything in it may come
// from the agent, so it is made printable.
func receiptLine(r receipt.Receipt) string {
	cols := []string{
		fmt.Sprintf("%4d", r.Seq),
		r.Time.UTC().Format(time.RFC3339),
		fmt.Sprintf("%-12s", r.Kind),
		fmt.Sprintf("%-8s", orDash(r.Verdict)),
		fmt.Sprintf("%-14s", orDash(r.Rule)),
		fmt.Sprintf("%-10s", orDash(r.Tool)),
		orDash(r.ToolUseID),
	}
	detail := r.Reason
	if c := r.Checkpoint; c != nil {
		detail = fmt.Sprintf("checkpoint of seq %d head %.16s… (%s)", c.Seq, c.Head, c.Kind)
	}
	if r.Kind == receipt.KindOutcome && len(r.Outcome) > 0 {
		detail = string(r.Outcome)
	}
	line := strings.Join(cols, " ")
	if detail != "" {
		line += "  " + detail
	}
	return untrusted.Printable(strings.ReplaceAll(line, "\n", " "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type verifyReport struct {
	Log         string           `json:"log"`
	OK          bool             `json:"ok"`
	Lines       int64            `json:"lines"`
	Kinds       map[string]int64 `json:"kinds"`
	Checkpoints int64            `json:"checkpoints_verified"`
	Head        string           `json:"head"`
	BreakLine   int64            `json:"break_line,omitempty"`
	BreakReason string           `json:"break_reason,omitempty"`
}

func receiptsVerify(stdio Stdio, args []string) error {
	flags, parse := receiptsFlags("verify", "[--json] [--log FILE]")
	asJSON := flags.Bool("json", false, "print the verification report as JSON")
	path, err := parse(stdio, args)
	if err != nil {
		return err
	}
	home, err := hook.HomeDir(os.LookupEnv)
	if err != nil {
		return err
	}
	kr, err := loadKeyring(home)
	if err != nil {
		return err
	}
	rep, err := (&receipt.Log{Path: path}).Verify(kr)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return err
	}
	out := verifyReport{Log: path, OK: rep.Break == nil, Lines: rep.Lines, Kinds: rep.Kinds, Checkpoints: rep.Checkpoints, Head: rep.Head}
	if rep.Break != nil {
		out.BreakLine, out.BreakReason = rep.Break.Line, rep.Break.Reason
	}
	if out.Kinds == nil {
		out.Kinds = map[string]int64{}
	}
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printVerify(stdio.Stdout, out, missing)
	}
	if rep.Break != nil {
		return &errChainBroken{rep.Break}
	}
	return nil
}

func printVerify(w io.Writer, r verifyReport, missing bool) {
	if missing {
		fmt.Fprintf(w, "no receipt log at %s: nothing to verify\n", r.Log)
		return
	}
	var kinds []string
	for k, n := range r.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	status := "ok"
	if !r.OK {
		status = "BROKEN"
	}
	fmt.Fprintf(w, "%s: %d lines verified (%s), %d checkpoints verified\n", status, r.Lines, strings.Join(kinds, ", "), r.Checkpoints)
	if r.Head != "" {
		fmt.Fprintf(w, "head %s (line %d)\n", r.Head, r.Lines)
	}
	if !r.OK {
		fmt.Fprintf(w, "break at line %d: %s\n", r.BreakLine, r.BreakReason)
	}
}

func receiptsCheckpoint(stdio Stdio, args []string) error {
	flags, parse := receiptsFlags("checkpoint", "[--key FILE] [--log FILE]")
	keyFlag := flags.String("key", "", "the approval private key `file` (default $FIXRAIL_APPROVAL_KEY)")
	path, err := parse(stdio, args)
	if err != nil {
		return err
	}
	home, err := hook.HomeDir(os.LookupEnv)
	if err != nil {
		return err
	}
	keyPath, err := approvalKeyPath(*keyFlag, home)
	if err != nil {
		return err
	}
	key, err := sshkey.Load(keyPath)
	if err != nil {
		return err
	}
	kr, err := loadKeyring(home)
	if err != nil {
		return err
	}
	// A checkpoint verify would reject is worse than none: it breaks the
	// chain. Check the key against the keyring before appending.
	l := &receipt.Log{Path: path}
	rep, err := l.Verify(kr)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no receipt log at %s: nothing to checkpoint", path)
	}
	if err != nil {
		return err
	}
	if rep.Break != nil {
		return fmt.Errorf("refusing to checkpoint a broken chain: %w", &errChainBroken{rep.Break})
	}
	probe := receipt.Checkpoint{Seq: 1, Head: rep.Head}
	sig, kind, err := key.SignCheckpoint(probe.Message())
	if err != nil {
		return err
	}
	if err := kr.VerifyCheckpoint(probe.Message(), sig, kind); err != nil {
		return fmt.Errorf("receipts verify would reject this key's checkpoint (%w); add its public half to %s", err, filepath.Join(home, hook.KeysDir))
	}
	r, err := l.Checkpoint(key)
	if err != nil {
		return err
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stderr, "checkpoint of line %d appended as line %d; keep a copy of it where the agent cannot write:\n", r.Checkpoint.Seq, r.Seq)
	fmt.Fprintf(stdio.Stdout, "%s\n", line)
	return nil
}

// loadKeyring reads the approvers' public keys from $FIXRAIL_HOME/keys.
func loadKeyring(home string) (*keys.Keyring, error) {
	return keys.LoadKeyring(filepath.Join(home, hook.KeysDir))
}

func receiptsRepair(stdio Stdio, args []string) error {
	flags, parse := receiptsFlags("repair", "[--force] [--json] [--log FILE]")
	force := flags.Bool("force", false, "also move aside a break before the last line (more than a crash does: inspect it first)")
	asJSON := flags.Bool("json", false, "print what was done as JSON")
	path, err := parse(stdio, args)
	if err != nil {
		return err
	}
	rep, err := (&receipt.Log{Path: path}).Repair(*force, time.Now())
	if errors.Is(err, receipt.ErrDamageSpans) {
		return fmt.Errorf("%w: %v", &errChainBroken{&receipt.Break{Line: rep.Line, Reason: rep.Reason}}, err)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if rep.Line == 0 {
		fmt.Fprintf(stdio.Stdout, "%s: the chain is whole; nothing to repair\n", path)
		return nil
	}
	fmt.Fprintf(stdio.Stdout, "%s: line %d broke the chain (%s)\n", path, rep.Line, untrusted.Printable(rep.Reason))
	fmt.Fprintf(stdio.Stdout, "moved %d line(s), %d bytes (sha256 %s), to %s\n", rep.Lines, rep.Bytes, rep.SHA256, rep.Aside)
	fmt.Fprintf(stdio.Stdout, "appended repair receipt %d; appends resume\n", rep.Receipt.Seq)
	return nil
}
