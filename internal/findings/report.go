// Package findings turns what someone reported into a Finding. Every field of
// a finding is attacker-controllable text; this package only parses and
// bounds it, and never interprets it.
package findings

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// MaxReportBytes bounds a report file; a larger one is refused rather than
// truncated, because a silently shortened report could change its meaning.
const MaxReportBytes = 1 << 20

// Finding is one thing to fix. Only ID is trusted, and only after it passed
// pathguard.SafeName, because it names a branch, a lock and a directory.
type Finding struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Body     string   `json:"body"`
	Labels   []string `json:"labels"`
	Comments []string `json:"comments"`
	// Source is where the finding came from (a file path), for the report.
	Source string `json:"source"`
	// FixType names the fix type that takes the finding (fixtype's
	// registry); empty is DefaultFixType. A source sets it: a report file
	// may say "fix_type", an alert is a cve.
	FixType string `json:"fix_type,omitempty"`
	// Evidence is what a machine source said about where and what: a
	// scanner's location and rule, an alert's package. It is as untrusted
	// as the text.
	Evidence *Evidence `json:"evidence,omitempty"`
	// Issue is the tracker issue the finding came from (a GitHub issue
	// number); 0 for a report file. A notice goes there.
	Issue int `json:"issue,omitempty"`
	// Secret is a secret finding's credential value, as the alert gave it.
	// It is never serialised, never in Untrusted (so no prompt or report
	// carries it by accident) and never mapped: the secret fix type alone
	// decides where it may appear. Evidence.SecretSHA256 is its digest.
	Secret string `json:"-"`
}

// DefaultFixType is the fix type of a finding that names none.
const DefaultFixType = "bug"

// Type is the finding's fix type.
func (f *Finding) Type() string {
	if f.FixType == "" {
		return DefaultFixType
	}
	return f.FixType
}

// Evidence is a finding's typed, machine-reported detail. Every field is
// untrusted: it reaches an agent only fenced, and a fix type re-derives
// what it acts on (a package's version from the manifest, say).
type Evidence struct {
	Path       string   `json:"path,omitempty"`
	Line       int      `json:"line,omitempty"`
	Rule       string   `json:"rule,omitempty"`
	Ecosystem  string   `json:"ecosystem,omitempty"`
	Package    string   `json:"package,omitempty"`
	Version    string   `json:"version,omitempty"`
	Manifest   string   `json:"manifest,omitempty"`
	Advisories []string `json:"advisories,omitempty"`
	// Tool is the scanner that reported the finding (a SARIF run's
	// tool.driver.name, "github-code-scanning", "orca").
	Tool string `json:"tool,omitempty"`
	// Severity is the scanner's severity, normalised to critical, high,
	// medium, low or note.
	Severity string `json:"severity,omitempty"`
	// EndLine is the last line of the reported region; 0 when it is Line.
	EndLine int `json:"end_line,omitempty"`
	// Snippet is the scanner's copy of the flagged region.
	Snippet string `json:"snippet,omitempty"`
	// SecretSHA256 is the hex SHA-256 of a secret finding's credential
	// value: what an oracle matches the tree against without printing it.
	SecretSHA256 string `json:"secret_sha256,omitempty"`
}

// Field is one untrusted value of a finding, by the name a prompt fences
// it under.
type Field struct {
	Name  string
	Value string
}

// Untrusted lists every value of the finding a reporter or a source chose,
// in a stable order, so a prompt fences whatever a source carries and
// nothing is left out by a new field. Empty values are left out.
func (f *Finding) Untrusted() []Field {
	out := []Field{{"title", f.Title}, {"body", f.Body}}
	if len(f.Labels) > 0 {
		out = append(out, Field{"labels", strings.Join(f.Labels, ", ")})
	}
	for i, c := range f.Comments {
		out = append(out, Field{fmt.Sprintf("comment.%d", i+1), c})
	}
	if e := f.Evidence; e != nil {
		var b strings.Builder
		for _, kv := range [][2]string{{"path", e.Path}, {"rule", e.Rule}, {"ecosystem", e.Ecosystem}, {"package", e.Package}, {"version", e.Version}, {"manifest", e.Manifest}, {"advisories", strings.Join(e.Advisories, ", ")}, {"tool", e.Tool}, {"severity", e.Severity}, {"snippet", e.Snippet}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
			}
		}
		if e.Line > 0 {
			fmt.Fprintf(&b, "line: %d\n", e.Line)
		}
		if e.EndLine > 0 {
			fmt.Fprintf(&b, "end_line: %d\n", e.EndLine)
		}
		if b.Len() > 0 {
			out = append(out, Field{"evidence", b.String()})
		}
	}
	return out
}

// Map returns a copy of f with fn applied to every untrusted string (P1
// redacts a finding with it); the first error stops it.
func (f *Finding) Map(fn func(string) (string, error)) (*Finding, error) {
	c := *f
	c.Labels, c.Comments = slices.Clone(f.Labels), slices.Clone(f.Comments)
	ptrs := []*string{&c.Title, &c.Body}
	for i := range c.Labels {
		ptrs = append(ptrs, &c.Labels[i])
	}
	for i := range c.Comments {
		ptrs = append(ptrs, &c.Comments[i])
	}
	if f.Evidence != nil {
		e := *f.Evidence
		e.Advisories = slices.Clone(e.Advisories)
		c.Evidence = &e
		ptrs = append(ptrs, &e.Path, &e.Rule, &e.Ecosystem, &e.Package, &e.Version, &e.Manifest, &e.Tool, &e.Severity, &e.Snippet)
		for i := range e.Advisories {
			ptrs = append(ptrs, &e.Advisories[i])
		}
	}
	for _, p := range ptrs {
		v, err := fn(*p)
		if err != nil {
			return nil, err
		}
		*p = v
	}
	return &c, nil
}

// ErrBadReport wraps every reason a report file cannot be read as a finding.
var ErrBadReport = errors.New("bad report")

// ReadFile reads a report: JSON {"id","title","body","labels","comments"} when
// the file starts with '{', otherwise Markdown whose first heading is the
// title. A Markdown report's id is the file name without its extension.
func ReadFile(path string) (*Finding, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadReport, path)
	}
	if fi.Size() > MaxReportBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrBadReport, path, fi.Size(), MaxReportBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	f, err := Parse(filepath.Base(path), data)
	if err != nil {
		return nil, err
	}
	f.Source = path
	return f, nil
}

// Parse reads a report from memory; name is the file name (for the Markdown
// id and for errors).
func Parse(name string, data []byte) (*Finding, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: %s is not UTF-8 text", ErrBadReport, name)
	}
	var f *Finding
	var err error
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		f, err = parseJSON(name, data)
	} else {
		f, err = parseMarkdown(name, data)
	}
	if err != nil {
		return nil, err
	}
	if !pathguard.SafeName(f.ID) {
		return nil, fmt.Errorf("%w: %s: id %q is not a safe name (letters, digits, '.', '_', '-'; at most 64; not starting with '.' or '-')", ErrBadReport, name, f.ID)
	}
	if strings.TrimSpace(f.Title) == "" {
		return nil, fmt.Errorf("%w: %s: the report has no title", ErrBadReport, name)
	}
	return f, nil
}

func parseJSON(name string, data []byte) (*Finding, error) {
	var raw struct {
		ID       json.RawMessage `json:"id"`
		Title    string          `json:"title"`
		Body     string          `json:"body"`
		Labels   []string        `json:"labels"`
		Comments []string        `json:"comments"`
		FixType  string          `json:"fix_type"`
		Evidence *Evidence       `json:"evidence"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadReport, name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: trailing data after the JSON object", ErrBadReport, name)
	}
	// Trackers number their issues; accept 42 as well as "42".
	id := strings.TrimSpace(string(raw.ID))
	if s := ""; json.Unmarshal(raw.ID, &s) == nil {
		id = s
	}
	if len(raw.ID) == 0 {
		return nil, fmt.Errorf("%w: %s: the report has no id", ErrBadReport, name)
	}
	if raw.FixType != "" && !pathguard.SafeName(raw.FixType) {
		return nil, fmt.Errorf("%w: %s: fix_type %q is not a fix type's name", ErrBadReport, name, raw.FixType)
	}
	if raw.Evidence != nil {
		if err := checkEvidence(raw.Evidence); err != nil {
			return nil, fmt.Errorf("%w: %s: evidence: %v", ErrBadReport, name, err)
		}
	}
	return &Finding{ID: id, Title: raw.Title, Body: raw.Body, Labels: raw.Labels, Comments: raw.Comments, FixType: raw.FixType, Evidence: raw.Evidence}, nil
}

// Severities are Evidence.Severity's values.
var Severities = []string{"critical", "high", "medium", "low", "note"}

// checkEvidence holds a report's evidence to what a fix type can check:
// a clean repository path, sane lines, a known severity, a digest of 64
// hex digits. A secret is named by its digest only; a snippet beside one
// is dropped, since a scanner's snippet of a secret is the secret.
func checkEvidence(e *Evidence) error {
	if e.Path != "" {
		c, err := pathguard.CleanRel(e.Path)
		if err != nil {
			return fmt.Errorf("path: %v", err)
		}
		e.Path = c
	}
	switch {
	case e.Line < 0 || e.EndLine < 0:
		return errors.New("line and end_line must not be negative")
	case e.EndLine > 0 && e.EndLine < e.Line:
		return errors.New("end_line is before line")
	case e.Severity != "" && !slices.Contains(Severities, e.Severity):
		return fmt.Errorf("severity %q is none of %s", e.Severity, strings.Join(Severities, ", "))
	}
	if e.SecretSHA256 != "" {
		if len(e.SecretSHA256) != 64 || strings.Trim(strings.ToLower(e.SecretSHA256), "0123456789abcdef") != "" {
			return errors.New("secret_sha256 is not a SHA-256 in hex (64 digits)")
		}
		e.SecretSHA256 = strings.ToLower(e.SecretSHA256)
		e.Snippet = ""
	}
	return nil
}

func parseMarkdown(name string, data []byte) (*Finding, error) {
	id := strings.TrimSuffix(name, filepath.Ext(name))
	var title string
	var body strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), MaxReportBytes)
	for sc.Scan() {
		line := sc.Text()
		if title == "" && strings.HasPrefix(line, "#") {
			t := strings.TrimSpace(strings.TrimLeft(line, "#"))
			if t != "" {
				title = t
				continue
			}
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadReport, name, err)
	}
	return &Finding{ID: id, Title: title, Body: strings.TrimSpace(body.String())}, nil
}
