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
	return &Finding{ID: id, Title: raw.Title, Body: raw.Body, Labels: raw.Labels, Comments: raw.Comments}, nil
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
