package fixtype

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/scanner"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Secret is the secret fix type: a credential committed to the tree. The
// harness recovers the value from the base at the finding's location by
// its SHA-256 (a report need carry no plaintext), plans every tracked file
// holding it, and judges: red, the value is in the base's tree; green, it
// is in no tracked file of the candidate, raw or base64/hex encoded. The
// value is withheld from every record and publication of the run; only
// the fix prompt shows it. The PR body says first that rotation comes
// before merge and that history still holds the value.
var Secret = &Type{
	Name:    "secret",
	Doc:     "a committed credential: its value (matched by SHA-256, never printed) is in the base's tree and in no tracked file of the candidate; rotation stays the reviewer's first step",
	Subject: "committed-secret alert",
	Budget:  Budget{MaxDiffLines: 50},
	Implied: []string{"secret", "credential", "leak"},
	Check:   func(*config.Config) error { return nil },
	Scope:   func(*config.Config) []string { return nil },
	Plan:    secretPlan,
	Fix:     secretFix,
	Red:     secretRed,
	Gates:   secretGates,
	CommitNote: func(*Env, *Plan) string {
		return "Removes a committed credential from the tree; it stays in history and must be rotated.\n"
	},
	Warning: func(*Env, *Plan) string { return RotationWarning },
	Section: secretSection,
	Replay:  secretReplay,
}

// RotationWarning opens a secret fix's PR body.
const RotationWarning = "> **Rotate the credential before merging this.** This change removes it from the tree, but it is still in the repository's git history and still valid until it is revoked at its provider: merging remediates nothing by itself. Rotate it first, then merge, then consider rewriting history.\n"

// maxSecretFiles bounds the files a plan may list as holding the value.
const maxSecretFiles = 20

// minSecretLen is the shortest value the type takes: shorter ones cannot
// be redacted reliably (redact's floor), nor told apart from code.
const minSecretLen = 8

// secretPlanDetail is the secret type's Plan.Detail. The value lives here
// and in Plan.Values and Withhold only.
type secretPlanDetail struct {
	// scanner is the configured scanner for the finding's tool, if any:
	// it must find no new secret in the changed files (a key swapped for
	// another hard-coded key is still a committed key).
	scanner *config.Scanner
	scanRed *scanner.Report
	value   string
	digest  string // the first 12 hex digits, for what is published
	path    string
	line    int
	files   []string
	builds  []BuildCheck
}

// SecretPlanRef is what the run report keeps: never the value, and only a
// prefix of its digest.
type SecretPlanRef struct {
	Path   string   `json:"path"`
	Line   int      `json:"line,omitempty"`
	SHA256 string   `json:"sha256_prefix"`
	Files  []string `json:"files"`
}

func secretOf(p *Plan) *secretPlanDetail { return p.Detail.(*secretPlanDetail) }

var hexDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

func secretPlan(_ context.Context, e *Env, dir string, f *findings.Finding) (*Plan, error) {
	ev := f.Evidence
	if ev == nil || ev.Path == "" {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: errors.New("the finding names no file holding the credential")}
	}
	sum := strings.ToLower(ev.SecretSHA256)
	if f.Secret == "" && !hexDigest().MatchString(sum) {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: errors.New("the finding carries neither the credential nor its SHA-256 (64 hex digits)")}
	}
	p, err := evidenceFile(dir, ev)
	if err != nil {
		return nil, err
	}
	value := f.Secret
	switch {
	case value != "" && sum != "" && digestOf(value) != sum:
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: errors.New("the alert's value and its SHA-256 disagree")}
	case value == "":
		data, err := readBounded(filepath.Join(dir, filepath.FromSlash(p)), maxEvidenceFile)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		v, ok := RecoverSecret(data, ev.Line, ev.EndLine, sum)
		if !ok {
			return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonGreenOnBase, Err: fmt.Errorf("no value with the finding's SHA-256 is at %s:%d of the base: it may be only in history, which no tree edit changes — rotate it", p, ev.Line)}
		}
		value = v
	}
	if len(strings.TrimSpace(value)) < minSecretLen || strings.ContainsAny(value, "\n\r") {
		return nil, &StopError{Terminal: verdict.Escalate, Reason: verdict.ReasonLeak, Err: fmt.Errorf("the credential is shorter than %d bytes or spans lines: too short to withhold reliably from what the run publishes", minSecretLen)}
	}
	if f.Secret != "" {
		// The body and the commit's location claim say the value was
		// recovered from the alerted lines by its SHA-256, and verify
		// replays those lines: an alert carrying the value is held to the
		// same search as one carrying only its digest (a location from
		// history, where GitHub first saw it, may be stale).
		data, err := readBounded(filepath.Join(dir, filepath.FromSlash(p)), maxEvidenceFile)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if _, ok := RecoverSecret(data, ev.Line, ev.EndLine, digestOf(value)); !ok {
			return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonNoLocation, Err: fmt.Errorf("the alert's value is not at %s:%d of the base (a span between delimiters, as a digest is matched): the location may be stale, where the value was first seen", p, ev.Line)}
		}
	}
	files, err := filesHolding(dir, [][]byte{[]byte(value)})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(files, p) {
		return nil, &StopError{Terminal: verdict.NotRepro, Reason: verdict.ReasonGreenOnBase, Err: fmt.Errorf("the credential is not in %s on the base: rotate it; history still holds it", p)}
	}
	if len(files) > maxSecretFiles {
		return nil, &StopError{Terminal: verdict.Halt, Reason: verdict.ReasonDiffBudget, Err: fmt.Errorf("the credential is in %d tracked files, over %d: too many for one fix", len(files), maxSecretFiles)}
	}
	// The commit's trailers record where the alert points (never the
	// value, nor its hash): verify re-derives what it can from there. An
	// alert with no rule, or values that would not parse back, is
	// recorded without it, and verify says it cannot replay.
	var alert *Alert
	if a := (Alert{Tool: ev.Tool, Rule: ev.Rule, Path: p, Line: ev.Line, EndLine: ev.EndLine}); ValidAlert(a) == nil {
		alert = &a
	}
	d := &secretPlanDetail{scanner: e.Config.ScannerFor(ev.Tool), value: value, digest: digestOf(value)[:12], path: p, line: ev.Line, files: files, builds: BuildChecks(dir, files)}
	return &Plan{
		Summary:  fmt.Sprintf("the alerted value (sha256 %s…) is in %d tracked file(s) of the base: %s", d.digest, len(files), strings.Join(files, ", ")),
		Files:    files,
		Values:   fmt.Sprintf("files holding the credential: %s\nalerted at: %s:%d\nthe credential's value (remove it; never write it, any part or any encoding of it, anywhere): %s", strings.Join(files, ", "), p, ev.Line, value),
		Report:   &SecretPlanRef{Path: p, Line: ev.Line, SHA256: d.digest, Files: files},
		Detail:   d,
		Withhold: []string{value},
		Alert:    alert,
	}, nil
}

// secretReplayed is the plan verify replays from a secret commit's claim:
// the tokens the claimed lines of the base hold, in memory only. The
// value itself is known only from the alert (its plaintext or SHA-256),
// which the repository does not hold, so verify cannot name it; what it
// can prove is that whatever the fix removed from those lines went
// nowhere else.
type secretReplayed struct {
	alert  Alert
	tokens []string
	builds []BuildCheck
}

// secretReplay reads the claimed lines (the whole file when the claim
// names no line) of a fresh checkout of the base and keeps every token of
// at least minSecretLen bytes between two delimiters (secretDelims): the
// spans a credential stands in, as RecoverSecret walks them.
func secretReplay(ctx context.Context, e *Env, c Claimed) (*Plan, error) {
	a := c.Alert
	if a == nil {
		return nil, fmt.Errorf("%w: a secret fix's claim names no alert location (no Fixrail-Rule trailer)", ErrClaimDiffers)
	}
	if err := ValidAlert(*a); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrClaimDiffers, err)
	}
	r := &secretReplayed{alert: *a}
	if err := e.Read(ctx, "secret-plan", e.BaseSHA, func(dir string) error {
		p, err := evidenceFile(dir, &findings.Evidence{Path: a.Path})
		if err != nil {
			return fmt.Errorf("%w: %v", ErrClaimDiffers, err)
		}
		data, err := readBounded(filepath.Join(dir, filepath.FromSlash(p)), maxEvidenceFile)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		r.tokens = lineTokens(data, a.Line, a.EndLine)
		r.builds = BuildChecks(dir, c.Files)
		// A run changes only the tracked files of the base that hold the
		// credential (its plan; diff-within-plan). The credential is one
		// of the tokens: a claimed file that holds none of them on the base
		// is no secret fix of a run's.
		if len(r.tokens) == 0 {
			return nil // secret-red names it
		}
		needles := make([][]byte, len(r.tokens))
		for i, t := range r.tokens {
			needles[i] = []byte(t)
		}
		holding, err := filesHolding(dir, needles)
		if err != nil {
			return err
		}
		for _, f := range c.Files {
			if !slices.Contains(holding, f) {
				return fmt.Errorf("%w: the claim's file %s holds, on the base, none of the tokens of the claimed lines: a secret fix changes only the files that hold the credential", ErrClaimDiffers, f)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &Plan{Files: c.Files, Detail: r, Alert: a}, nil
}

// lineTokens are the distinct delimiter-bounded tokens of minSecretLen to
// 1024 bytes on lines line..end of data (every line when line is 0).
func lineTokens(data []byte, line, end int) []string {
	end = max(end, line)
	var out []string
	for i, l := range strings.Split(string(data), "\n") {
		if n := i + 1; line > 0 && (n < line || n > end) {
			continue
		}
		for _, t := range strings.FieldsFunc(strings.TrimSuffix(l, "\r"), func(r rune) bool { return strings.ContainsRune(secretDelims, r) }) {
			if len(t) >= minSecretLen && len(t) <= 1024 {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func replayedRed(e *Env, r *secretReplayed) *gates.Gate {
	return &gates.Gate{
		Name:   "secret-red",
		Doc:    "the alert's lines on the base hold a token a credential can be (the value itself is known only from the alert)",
		Reason: verdict.ReasonGreenOnBase,
		Fails:  verdict.NotRepro,
		Run: func(context.Context, *gates.Change) (gates.Verdict, error) {
			if len(r.tokens) == 0 {
				return gates.Verdict{Detail: fmt.Sprintf("%s holds no token of %d bytes or more on the base: no credential is there", markdown.Code(r.alert.Location()), minSecretLen)}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("%s holds %d token(s) of %d bytes or more on the base (never printed); which one is the credential only the alert knows", markdown.Code(r.alert.Location()), len(r.tokens), minSecretLen)}, nil
		},
	}
}

// replayedAbsent is verify's secret green: of the tokens the alert's lines
// held on the base, those the commit's copy of the file no longer holds
// (what the fix removed) are in no tracked file of the commit, raw,
// base64 or hex encoded; and the fix removed at least one.
func replayedAbsent(e *Env, r *secretReplayed) *gates.Gate {
	return &gates.Gate{
		Name:   "secret-absent",
		Doc:    "every token the fix removed from the alert's lines is in no tracked file of the commit, raw, base64 or hex encoded",
		Reason: verdict.ReasonOracleStillRed,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			var files []string
			removed := 0
			if err := e.Read(ctx, "secret-green", c.Commit, func(dir string) error {
				data, err := readBounded(filepath.Join(dir, filepath.FromSlash(r.alert.Path)), maxEvidenceFile)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				var needles [][]byte
				for _, t := range r.tokens {
					if !bytes.Contains(data, []byte(t)) {
						removed++
						needles = append(needles, encodings(t)...)
					}
				}
				if removed > 0 {
					files, err = filesHolding(dir, needles)
				}
				return err
			}); err != nil {
				return gates.Verdict{}, fmt.Errorf("secret-absent: %w", err)
			}
			switch {
			case removed == 0:
				return gates.Verdict{Detail: fmt.Sprintf("the commit's %s still holds each of the %d token(s) the alert's lines held on the base: whichever is the credential is still there", markdown.Code(r.alert.Path), len(r.tokens))}, nil
			case len(files) > 0:
				return gates.Verdict{Detail: fmt.Sprintf("a token the fix removed from %s is still in %d tracked file(s) of the commit: %s", markdown.Code(r.alert.Location()), len(files), markdown.Code(strings.Join(files, ", ")))}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("the %d token(s) the fix removed from %s are in no tracked file of the commit, raw, base64 or hex encoded", removed, markdown.Code(r.alert.Location()))}, nil
		},
	}
}

func digestOf(v string) string {
	s := sha256.Sum256([]byte(v))
	return hex.EncodeToString(s[:])
}

// maxEvidenceFile bounds the alerted file the value is recovered from.
const maxEvidenceFile = 4 << 20

func readBounded(p string, n int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > n {
		return nil, fmt.Errorf("over %d bytes", n)
	}
	return data, nil
}

// secretDelims split a line into the places a credential can start or end.
const secretDelims = " \t\"'`=:,;()[]{}<>@/?&#"

// RecoverSecret finds, in lines line..end of data (every line when line
// is 0), the substring whose SHA-256 is sum: every span between two
// delimiter boundaries (quotes, spaces, = : , ; brackets) of 8 to 1024
// bytes is tried, so a quoted value, an unquoted KEY=value, a token in a
// URL and a whole line are all found. Lines over 4096 bytes are skipped.
func RecoverSecret(data []byte, line, end int, sum string) (string, bool) {
	if end < line {
		end = line
	}
	for i, l := range strings.Split(string(data), "\n") {
		n := i + 1
		if line > 0 && (n < line || n > end) {
			continue
		}
		l = strings.TrimSuffix(l, "\r")
		if len(l) > 4096 {
			continue
		}
		bounds := []int{0}
		for j := 0; j < len(l); j++ {
			if strings.IndexByte(secretDelims, l[j]) >= 0 {
				bounds = append(bounds, j, j+1)
			}
		}
		bounds = append(bounds, len(l))
		slices.Sort(bounds)
		bounds = slices.Compact(bounds)
		if len(bounds) > 400 {
			continue
		}
		for a := 0; a < len(bounds); a++ {
			for b := a + 1; b < len(bounds); b++ {
				s := l[bounds[a]:bounds[b]]
				if len(s) < minSecretLen {
					continue
				}
				if len(s) > 1024 {
					break
				}
				if digestOf(s) == sum {
					return s, true
				}
			}
		}
	}
	return "", false
}

// encodings are the forms of the value green looks for besides the raw
// bytes: a fix that base64- or hex-encodes the credential still ships it.
func encodings(v string) [][]byte {
	b := []byte(v)
	forms := []string{v, base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b))}
	slices.Sort(forms)
	var out [][]byte
	for _, f := range slices.Compact(forms) {
		out = append(out, []byte(f))
	}
	return out
}

// filesHolding lists the regular files and symlinks under dir (a
// checkout: every file in it is tracked; .git is skipped) that contain
// any of needles — a symlink by its target, a file streamed so one of any
// size is searched whole.
func filesHolding(dir string, needles [][]byte) ([]string, error) {
	longest := 0
	for _, n := range needles {
		longest = max(longest, len(n))
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != dir {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// git stores a symlink as a blob holding its target: that is
			// what the commit holds at this path, so it is searched too.
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(needles, func(n []byte) bool { return strings.Contains(target, string(n)) }) {
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if d.Name() == ".gitattributes" {
			if err := plainCheckout(dir, p); err != nil {
				return err
			}
		}
		hit, err := holds(p, needles, longest)
		if err != nil {
			return err
		}
		if hit {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// errReencoded is a checkout whose bytes are not the commit's: what is
// searched there is not what ships.
var errReencoded = errors.New("git re-encodes the files it names on checkout (the commit holds them as UTF-8), so a search of the checkout is not a search of what the commit holds")

// plainCheckout fails when the attributes file p of the checkout dir can
// set working-tree-encoding, directly or through a macro: the one
// attribute by which a checkout holds other bytes than the blob for more
// than line endings. The search reads checkouts, so it cannot vouch for
// such a tree either way.
func plainCheckout(dir, p string) error {
	data, err := readBounded(p, maxEvidenceFile)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte("working-tree-encoding")) {
		return nil
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return err
	}
	return fmt.Errorf("%s sets working-tree-encoding: %w", filepath.ToSlash(rel), errReencoded)
}

func countFiles(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != dir {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			n++
		}
		return nil
	})
	return n, err
}

func holds(p string, needles [][]byte, longest int) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 0, 2<<20)
	chunk := make([]byte, 1<<20)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for _, nd := range needles {
			if bytes.Contains(buf, nd) {
				return true, nil
			}
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		// Keep the tail a needle could straddle.
		if keep := longest - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
	}
}

func secretFix(b Brief, _ *Plan) string {
	var s strings.Builder
	s.WriteString("The harness found a committed credential in the tracked files the plan below lists. Its value is in the plan, shown to you here and nowhere else, so you can find it; a human rotates it — your change only stops the code from carrying it. Now:\n")
	s.WriteString("- in every planned file, replace the literal value with a read from the environment or the project's existing configuration (os.Getenv(\"NAME\"), process.env.NAME, os.environ[\"NAME\"], …), keeping the surrounding names and behaviour; in an example or fixture, use an obvious placeholder;\n")
	s.WriteString("- never write the value, any part of it, or any encoding of it (base64, hex, a string split in pieces) anywhere, and never repeat it in your summary: the harness searches every tracked file of your result for it;\n")
	s.WriteString("- add no marker that makes a scanner ignore the line (gitleaks:allow, nosec, …);\n")
	s.WriteString("- change only the planned files: you can read and edit files, and you have no shell;\n")
	fmt.Fprintf(&s, "- write the result to %s (also in $FIXRAIL_RESULT): {\"summary\": \"…\", \"files_changed\": [every file you changed]}.\n", b.ResultPath)
	return s.String()
}

func secretRed(e *Env, p *Plan) *gates.Gate {
	if r, ok := p.Detail.(*secretReplayed); ok {
		return replayedRed(e, r)
	}
	d := secretOf(p)
	return &gates.Gate{
		Name:   "secret-red",
		Doc:    "the credential's value is in the base's tree (matched by its bytes; never printed)",
		Reason: verdict.ReasonGreenOnBase,
		Fails:  verdict.NotRepro,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			var files []string
			if err := e.Read(ctx, "secret-red", c.Commit, func(dir string) (err error) {
				files, err = filesHolding(dir, [][]byte{[]byte(d.value)})
				return err
			}); err != nil {
				return gates.Verdict{}, fmt.Errorf("secret-red: %w", err)
			}
			if len(files) == 0 {
				return gates.Verdict{Detail: "the credential is in no tracked file of the base: only history may hold it — rotate it"}, nil
			}
			detail := fmt.Sprintf("the credential (sha256 %s…) is in %d tracked file(s) of the base: %s", d.digest, len(files), markdown.Code(strings.Join(files, ", ")))
			if d.scanner == nil {
				return gates.Verdict{Pass: true, Detail: detail}, nil
			}
			// What the scanner says of these files on the base, for green
			// to compare with.
			rep, err := scan(ctx, e, "secret-scan-red", c.Commit, d.scanner, p.Files)
			if err != nil {
				return gates.Verdict{}, err
			}
			d.scanRed = rep
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("%s; %s reports %d result(s) in them", detail, d.scanner.Name, len(rep.Results)), Output: scannerOutput(rep, "the base")}, nil
		},
	}
}

func secretGates(e *Env, p *Plan) []*gates.Gate {
	if r, ok := p.Detail.(*secretReplayed); ok {
		return []*gates.Gate{noSuppression(), replayedAbsent(e, r), buildCheckGate(e, func() []BuildCheck { return r.builds })}
	}
	d := secretOf(p)
	gs := []*gates.Gate{noSuppression(), secretAbsent(e, d)}
	if d.scanner != nil {
		gs = append(gs, secretScanGreen(e, p, d))
	}
	return append(gs, buildCheckGate(e, func() []BuildCheck { return d.builds }))
}

// secretScanGreen runs the finding's secret scanner on the changed files
// of the candidate: a result it did not report on the base (another key
// put in the removed one's place) fails the fix.
func secretScanGreen(e *Env, p *Plan, d *secretPlanDetail) *gates.Gate {
	return &gates.Gate{
		Name:   "secret-scan-green",
		Doc:    "the configured secret scanner reports nothing new in the files the fix changed",
		Reason: verdict.ReasonNewScannerResult,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			var paths []string
			for _, f := range c.Changed {
				if en, ok := c.Files[f]; ok && !en.Deleted() {
					paths = append(paths, f)
				}
			}
			if len(paths) == 0 {
				return gates.Verdict{Pass: true, Detail: "the fix only deletes files"}, nil
			}
			rep, err := scan(ctx, e, "secret-scan-green", c.Commit, d.scanner, paths)
			if err != nil {
				return gates.Verdict{}, err
			}
			var base []scanner.Result
			if d.scanRed != nil {
				base = d.scanRed.Results
			}
			out := scannerOutput(rep, "the candidate")
			if n := scanner.New(base, rep.Results, "note"); len(n) > 0 {
				return gates.Verdict{Detail: fmt.Sprintf("%s reports a secret the base did not have: %s", d.scanner.Name, markdown.Code(scanner.Describe(n, 5))), Output: out}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("%s reports nothing new in %d changed file(s)", d.scanner.Name, len(paths)), Output: out}, nil
		},
	}
}

// secretAbsent is the secret type's green: the value in no tracked file
// of the candidate, raw or encoded; and no binary file that held it is
// changed (its patch would carry the value encoded where the published
// patch's redaction cannot see it).
func secretAbsent(e *Env, d *secretPlanDetail) *gates.Gate {
	return &gates.Gate{
		Name:   "secret-absent",
		Doc:    "the credential is in no tracked file of the candidate, raw, base64 or hex encoded",
		Reason: verdict.ReasonOracleStillRed,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			for _, path := range c.Changed {
				b, err := c.Base(ctx, path)
				if err != nil {
					return gates.Verdict{}, err
				}
				if !b.Deleted() && bytes.IndexByte(b.Data, 0) >= 0 && bytes.Contains(b.Data, []byte(d.value)) {
					return gates.Verdict{Detail: fmt.Sprintf("the fix changes %s, a binary file holding the credential: its patch would carry the value encoded", markdown.Code(path))}, nil
				}
			}
			var files []string
			n := 0
			if err := e.Read(ctx, "secret-green", c.Commit, func(dir string) (err error) {
				if n, err = countFiles(dir); err != nil {
					return err
				}
				files, err = filesHolding(dir, encodings(d.value))
				return err
			}); err != nil {
				return gates.Verdict{}, fmt.Errorf("secret-absent: %w", err)
			}
			if len(files) > 0 {
				return gates.Verdict{Detail: fmt.Sprintf("the credential is still in %d tracked file(s) of the candidate: %s", len(files), markdown.Code(strings.Join(files, ", ")))}, nil
			}
			return gates.Verdict{Pass: true, Detail: fmt.Sprintf("the credential is in none of the candidate's %d tracked files, raw, base64 or hex encoded", n)}, nil
		},
	}
}

func secretSection(e *Env, p *Plan, commit string) string {
	d := secretOf(p)
	var b strings.Builder
	b.WriteString("### What was reproduced\n\n")
	fmt.Fprintf(&b, "The harness recovered the alerted credential from %s of a fresh checkout of %s (%s) by its SHA-256 (it starts %s; the value is never printed) and found it in %d tracked file(s): %s. ",
		markdown.Code(fmt.Sprintf("%s:%d", d.path, d.line)), markdown.Code(e.Base), short(e.BaseSHA), markdown.Code(d.digest), len(d.files), markdown.Code(strings.Join(d.files, ", ")))
	fmt.Fprintf(&b, "On a fresh checkout of commit %s it is in no tracked file, raw, base64 or hex encoded.\n\n", short(commit))
	b.WriteString("### What this does not do\n\n")
	b.WriteString("- It does not revoke the credential: whoever can read this repository's history, forks and clones can still use it until it is rotated.\n")
	b.WriteString("- The deleted lines in the published patch are redacted; the branch's own diff on the forge shows them, as the history already does.\n")
	b.WriteString("- The new code reads the value from configuration the deployment must now provide.\n")
	return b.String()
}
