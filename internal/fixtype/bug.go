// Package fixtype holds what differs between kinds of fix: what the agent
// must hand back, and the oracle that must be red before the fix and green
// after it. Only the bug fix type exists so far; its oracle is the
// reproducing test the agent wrote, run by the harness.
package fixtype

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// maxHandoffBytes bounds PLAN.json and the result file: they are agent
// output, read by the harness, and have no reason to be large.
const maxHandoffBytes = 256 << 10

// Plan is PLAN.json, written by the agent in the investigate phase.
type Plan struct {
	Summary string   `json:"summary"`
	Files   []string `json:"files"`
	Test    TestSpec `json:"test"`
}

// TestSpec names the reproducing test and the symptom its failure must show.
type TestSpec struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Symptom string `json:"symptom"`
	// Fixtures are the other files the investigate phase wrote for the test
	// to run — a conftest, an __init__.py, a table test's testdata files.
	// They are evidence like the test: recorded, run red, committed, and
	// never changed by the fix. Anything else the phase writes escalates.
	Fixtures []string `json:"fixtures,omitempty"`
}

// Result is what the agent writes after the fix phase.
type Result struct {
	Summary      string   `json:"summary"`
	FilesChanged []string `json:"files_changed"`
}

// ErrInvalid marks agent output that is missing or malformed.
var ErrInvalid = errors.New("invalid agent output")

// ErrUnsafePath marks agent output naming a path outside the repository.
var ErrUnsafePath = errors.New("unsafe path in agent output")

// plainTestID reports whether s may stand in for {test_name}: a test id in
// the usual runner syntaxes (letters, digits, _ . / : [ ] -, at most 200),
// never something that reads as a flag.
func plainTestID(s string) bool {
	if len(s) == 0 || len(s) > 200 || s[0] == '-' || s[0] == '.' || s[0] == '/' || s[0] == ':' || s[0] == '[' || s[0] == ']' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_./:[]-", c) >= 0) {
			return false
		}
	}
	return true
}

// ReadPlan reads and validates PLAN.json.
func ReadPlan(path string) (*Plan, error) {
	var p Plan
	if err := readStrict(path, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Summary) == "" {
		return nil, fmt.Errorf("%w: PLAN.json has no summary", ErrInvalid)
	}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("%w: PLAN.json plans no source files", ErrInvalid)
	}
	if len(p.Files) > 100 {
		return nil, fmt.Errorf("%w: PLAN.json plans %d files", ErrInvalid, len(p.Files))
	}
	seen := map[string]bool{}
	for i, f := range p.Files {
		c, err := pathguard.CleanRel(f)
		if err != nil {
			return nil, fmt.Errorf("%w: files[%d]: %v", ErrUnsafePath, i, err)
		}
		if seen[c] {
			return nil, fmt.Errorf("%w: files lists %s twice", ErrInvalid, c)
		}
		seen[c] = true
		p.Files[i] = c
	}
	c, err := pathguard.CleanRel(p.Test.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: test.path: %v", ErrUnsafePath, err)
	}
	p.Test.Path = c
	if seen[c] {
		return nil, fmt.Errorf("%w: the test file %s is also planned as a source file", ErrInvalid, c)
	}
	if len(p.Test.Fixtures) > 100 {
		return nil, fmt.Errorf("%w: PLAN.json declares %d fixtures", ErrInvalid, len(p.Test.Fixtures))
	}
	seen[c] = true
	for i, f := range p.Test.Fixtures {
		fc, err := pathguard.CleanRel(f)
		if err != nil {
			return nil, fmt.Errorf("%w: test.fixtures[%d]: %v", ErrUnsafePath, i, err)
		}
		if seen[fc] {
			return nil, fmt.Errorf("%w: test.fixtures lists %s, which is already the test, a fixture or a planned file", ErrInvalid, fc)
		}
		seen[fc] = true
		p.Test.Fixtures[i] = fc
	}
	if p.Test.Name != "" && !plainTestID(p.Test.Name) {
		return nil, fmt.Errorf("%w: test.name %q is not a plain test id", ErrInvalid, p.Test.Name)
	}
	if s := strings.TrimSpace(p.Test.Symptom); s == "" || len(s) > 500 || strings.ContainsAny(s, "\n\r") {
		return nil, fmt.Errorf("%w: test.symptom must be one line of 1 to 500 bytes", ErrInvalid)
	}
	p.Test.Symptom = strings.TrimSpace(p.Test.Symptom)
	return &p, nil
}

// ReadResult reads and validates the fix phase's result file.
func ReadResult(path string) (*Result, error) {
	var r Result
	if err := readStrict(path, &r); err != nil {
		return nil, err
	}
	for i, f := range r.FilesChanged {
		c, err := pathguard.CleanRel(f)
		if err != nil {
			return nil, fmt.Errorf("%w: files_changed[%d]: %v", ErrUnsafePath, i, err)
		}
		r.FilesChanged[i] = c
	}
	return &r, nil
}

func readStrict(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxHandoffBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(buf) > maxHandoffBytes {
		return fmt.Errorf("%w: %s is over %d bytes", ErrInvalid, path, maxHandoffBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// OracleArgv fills the test command's placeholders from the plan. The
// command itself comes from the base branch's fixrail.yaml; only the two
// validated values come from the agent, and never through a shell.
func OracleArgv(command []string, p *Plan) []string {
	r := strings.NewReplacer("{test_path}", p.Test.Path, "{test_name}", p.Test.Name)
	out := make([]string, len(command))
	for i, a := range command {
		out[i] = r.Replace(a)
	}
	return out
}
