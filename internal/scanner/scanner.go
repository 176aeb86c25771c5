// Package scanner owns running a configured scanner as an oracle: the
// expansion of its argv ({paths}, {dirs}, {sarif}), the read-only binding
// of the rule packs its argv names, the bounded read of the SARIF log it
// writes, and the reduction of that log to what an oracle compares (rule,
// repository path, lines, severity). It never trusts the log's text: a
// message or snippet is not kept, and a path that leaves the checkout is
// refused. How the command is sandboxed is the caller's (Exec).
package scanner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sarif"
)

// Exec runs argv (built from the checkout's directory and a fresh, empty,
// writable output directory outside it) in a fresh checkout, in the
// sandbox, with ro bound read-only; read is called with both directories
// once the command has ended, before they are discarded.
type Exec func(ctx context.Context, argv func(dir, out string) []string, ro []string, timeout time.Duration, read func(dir, out string) error) (sandbox.Result, error)

// Result is one scanner result as an oracle reads it.
type Result struct {
	Rule     string `json:"rule"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	EndLine  int    `json:"end_line,omitempty"`
	Severity string `json:"severity"`
	// text is a digest of the flagged line as the checkout held it
	// (blanks trimmed): what New tells a moved result from a new one by.
	text string
}

// String is "rule at path:line (severity)".
func (r Result) String() string {
	loc := r.Path
	if r.Line > 0 {
		loc += ":" + strconv.Itoa(r.Line)
	}
	return fmt.Sprintf("%s at %s (%s)", r.Rule, loc, r.Severity)
}

// Report is one run of a scanner.
type Report struct {
	Scanner string   `json:"scanner"`
	Argv    []string `json:"argv"`
	Paths   []string `json:"paths"`
	Results []Result `json:"results"`
	// Took is the scanner's wall time.
	Took time.Duration `json:"took"`
	// Exit is the command's result (a scanner exits non-zero when it
	// finds something: that is not a failure; no log is).
	Exit sandbox.Result `json:"-"`
}

// ErrNoLog is a run that left no readable SARIF log: the oracle cannot
// decide, and fails closed.
var ErrNoLog = errors.New("the scanner wrote no SARIF log")

// MaxLog bounds the log read back from a scanner.
const MaxLog = 16 << 20

// sarifName is the log's name in the output directory.
const sarifName = "result.sarif"

// Argv expands sc's command: {paths} to the files to scan, one argument
// each; {dirs} to their directories as ./dir, each once (for scanners
// that take packages, as gosec does); {sarif} to the log's path. paths
// are repository-relative and clean; one that reads as a flag, or that
// is not clean, is refused.
func Argv(command []string, paths []string, sarifPath string) ([]string, error) {
	for _, p := range paths {
		if c, err := pathguard.CleanRel(p); err != nil || c != p || strings.HasPrefix(p, "-") {
			return nil, fmt.Errorf("scanner: %q is not a clean repository path", p)
		}
	}
	var dirs []string
	for _, p := range paths {
		d := "./" + path.Dir(p)
		if d == "./." {
			d = "."
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	var out []string
	for _, a := range command {
		switch a {
		case "{paths}":
			out = append(out, paths...)
		case "{dirs}":
			out = append(out, dirs...)
		default:
			out = append(out, strings.ReplaceAll(a, "{sarif}", sarifPath))
		}
	}
	return out, nil
}

// RulePacks are the absolute paths sc's argv names that exist outside
// the checkout (a rules directory, a config file): bound read-only, so
// the scanner reads them and nothing it runs can change them.
func RulePacks(command []string) []string {
	var ro []string
	for _, a := range command {
		for _, part := range strings.Split(a, "=") {
			if filepath.IsAbs(part) && !strings.Contains(part, "{") {
				if _, err := os.Stat(part); err == nil && !slices.Contains(ro, part) {
					ro = append(ro, filepath.Clean(part))
				}
			}
		}
	}
	return ro
}

// Run runs sc on paths through exec and reduces its log.
func Run(ctx context.Context, sc *config.Scanner, paths []string, exec Exec) (*Report, error) {
	rep := &Report{Scanner: sc.Name, Paths: slices.Clone(paths)}
	var argvErr, readErr error
	t0 := time.Now()
	res, err := exec(ctx, func(dir, out string) []string {
		argv, err := Argv(sc.Command, paths, filepath.Join(out, sarifName))
		if err != nil {
			argvErr = err
			return []string{"false"}
		}
		rep.Argv, _ = Argv(sc.Command, paths, "{sarif}")
		return argv
	}, RulePacks(sc.Command), sc.Timeout, func(dir, out string) error {
		rep.Results, readErr = readLog(filepath.Join(out, sarifName), dir, dirsOf(paths))
		return nil
	})
	rep.Took = time.Since(t0)
	rep.Exit = res
	switch {
	case argvErr != nil:
		return nil, argvErr
	case err != nil:
		return nil, fmt.Errorf("scanner %s: %w", sc.Name, err)
	case res.TimedOut:
		return nil, fmt.Errorf("scanner %s: timed out after %s", sc.Name, sc.Timeout)
	case readErr != nil:
		// The scanner's last words say why: it is the base's or the
		// candidate's code it read, and the pipeline redacts what it records.
		return nil, fmt.Errorf("scanner %s (%s): %w; its output ends: %s", sc.Name, res.Describe(), readErr, strings.TrimSpace(res.Tail(8)))
	}
	return rep, nil
}

// readLog reads the log at p (a regular file, bounded) and reduces it.
func readLog(p, dir string, bases []string) ([]Result, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLog, errors.Unwrap(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: it is not a regular file", ErrNoLog)
	}
	l, err := sarif.Decode(io.LimitReader(f, MaxLog))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLog, err)
	}
	return Reduce(l, dir, bases...)
}

// dirsOf lists the directories of paths, each once.
func dirsOf(paths []string) []string {
	var out []string
	for _, p := range paths {
		if d := path.Dir(p); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Reduce turns a log into results: passing, informational and
// not-applicable results dropped; a suppressed one kept (a suppression
// hides a result, it does not fix it, so it still counts); paths made
// relative to dir (the checkout the scanner ran in),
// severity normalised. A relative URI names a file of the checkout, or —
// as gosec writes them, relative to the one directory it was given — of
// one of bases; one that names no file in either is an error, as is a
// file outside dir: a result the oracle cannot place must not read as
// absent. So is a run the log itself says did not complete (ESLint writes
// no result for a file it could not parse, only an error notification):
// its missing results are not absent ones.
func Reduce(l *sarif.Log, dir string, bases ...string) ([]Result, error) {
	roots := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != roots[0] {
		roots = append(roots, real)
	}
	out := []Result{}
	for ri := range l.Runs {
		run := &l.Runs[ri]
		// The tool's message is not kept (it quotes the scanned code):
		// the scanner's output tail, which Run adds, says the rest.
		if why, _ := run.Incomplete(); why != "" {
			return nil, fmt.Errorf("scanner: the log says its run did not complete (%s): a result it missed would read as absent", why)
		}
		for i := range run.Results {
			r := &run.Results[i]
			switch r.Kind {
			case "", "fail", "open", "review":
			default:
				continue
			}
			res := Result{Rule: run.RuleID(r), Severity: sarif.Severity(r, run.Rule(r))}
			if len(r.Locations) > 0 && r.Locations[0].PhysicalLocation != nil {
				pl := r.Locations[0].PhysicalLocation
				if pl.ArtifactLocation != nil {
					p, err := repoPath(pl.ArtifactLocation.URI, roots)
					if err != nil {
						return nil, err
					}
					if res.Path, err = place(dir, p, bases); err != nil {
						return nil, err
					}
				}
				if pl.Region != nil {
					res.Line, res.EndLine = pl.Region.StartLine, pl.Region.EndLine
					if res.EndLine < res.Line {
						res.EndLine = res.Line
					}
				}
			}
			out = append(out, res)
		}
	}
	lineTexts(out, dir)
	return out, nil
}

// maxSourceFile bounds a file read for its flagged lines.
const maxSourceFile = 8 << 20

// lineTexts fills each result's line digest from the checkout.
func lineTexts(rs []Result, dir string) {
	files := map[string][]string{}
	for i := range rs {
		r := &rs[i]
		if r.Path == "" || r.Line <= 0 {
			continue
		}
		lines, ok := files[r.Path]
		if !ok {
			if f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(r.Path)), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err == nil {
				if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
					data, _ := io.ReadAll(io.LimitReader(f, maxSourceFile))
					lines = strings.Split(string(data), "\n")
				}
				f.Close()
			}
			files[r.Path] = lines
		}
		if r.Line <= len(lines) {
			sum := sha256.Sum256([]byte(strings.TrimSpace(lines[r.Line-1])))
			r.text = hex.EncodeToString(sum[:8])
		}
	}
}

// repoPath makes a result's URI repository-relative.
func repoPath(uri string, roots []string) (string, error) {
	p := uri
	if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("scanner: result uri %q: %v", uri, err)
		}
		p = u.Path
	} else if strings.Contains(p, "://") {
		return "", fmt.Errorf("scanner: result uri %q is not a file", uri)
	} else if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	if filepath.IsAbs(p) {
		rel := ""
		for _, root := range roots {
			if r, err := filepath.Rel(root, filepath.Clean(p)); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
				rel = r
				break
			}
		}
		if rel == "" {
			return "", fmt.Errorf("scanner: a result names a file outside the checkout")
		}
		p = filepath.ToSlash(rel)
	}
	c, err := pathguard.CleanRel(strings.TrimPrefix(p, "./"))
	if err != nil {
		return "", fmt.Errorf("scanner: result path: %v", err)
	}
	return c, nil
}

// place finds the file a result names: p in the checkout, else p under
// exactly one of bases.
func place(dir, p string, bases []string) (string, error) {
	exists := func(rel string) bool {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		return err == nil && fi.Mode().IsRegular()
	}
	if exists(p) {
		return p, nil
	}
	var found []string
	for _, b := range bases {
		if q := path.Join(b, p); b != "." && exists(q) && !slices.Contains(found, q) {
			found = append(found, q)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", fmt.Errorf("scanner: a result names %q, which is no single file of the checkout", p)
}

// Of filters results to those of rule in path.
func Of(rs []Result, rule, path string) []Result {
	var out []Result
	for _, r := range rs {
		if r.Rule == rule && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// At reports whether r covers a line of [line, end] (line 0: anywhere in
// the file).
func (r Result) At(line, end int) bool {
	if line <= 0 || r.Line <= 0 {
		return true
	}
	if end < line {
		end = line
	}
	rEnd := max(r.EndLine, r.Line)
	return r.Line <= end && rEnd >= line
}

// New lists the results of cand that base does not have, at or above
// floor. Lines shift with any edit, so a result is matched by its rule,
// its file and the text of its line (blanks trimmed), counted: the same
// finding moved down by an added import is not new; the same rule on a
// line the fix wrote is.
func New(base, cand []Result, floor string) []Result {
	type key struct{ rule, path, text string }
	seen := map[key]int{}
	for _, r := range base {
		seen[key{r.Rule, r.Path, r.text}]++
	}
	var out []Result
	for _, r := range cand {
		k := key{r.Rule, r.Path, r.text}
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		if sarif.Rank(r.Severity) >= sarif.Rank(floor) {
			out = append(out, r)
		}
	}
	return out
}

// Describe lists results for a gate's detail, at most n.
func Describe(rs []Result, n int) string {
	if len(rs) == 0 {
		return "no results"
	}
	var parts []string
	for i, r := range rs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(rs)-n))
			break
		}
		parts = append(parts, r.String())
	}
	return strings.Join(parts, "; ")
}
