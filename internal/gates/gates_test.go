package gates_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/verdict"
)

const testPath = "tests/test_format.py"

// result is what a gate returned, with the error reduced to whether there
// was one, so one table column covers pass, fail and error.
type result struct {
	Pass   bool
	Detail string
	Err    bool
}

func run(t *testing.T, g *gates.Gate, c *gates.Change) result {
	t.Helper()
	v, err := g.Run(t.Context(), c)
	if err != nil {
		if v != (gates.Verdict{}) {
			t.Errorf("%s returned result %+v with error %v; want the zero result", g.Name, v, err)
		}
		if !strings.HasPrefix(err.Error(), g.Name+": ") {
			t.Errorf("%s error %q does not start with the gate's name", g.Name, err)
		}
		return result{Err: true}
	}
	return result{Pass: v.Pass, Detail: v.Detail}
}

func policy(t *testing.T) *sensitive.Policy {
	t.Helper()
	p, err := sensitive.New([]string{"src/**"}, []string{"src/billing/**"}, "tests/**")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// change is a Change whose plan fixes src/textfmt/format.py, with testPath
// as its evidence.
func change(t *testing.T) *gates.Change {
	t.Helper()
	return &gates.Change{
		Planned:      []string{"src/textfmt/format.py", "src/textfmt/util.py"},
		Declared:     []string{"src/textfmt/format.py"},
		Evidence:     []gitx.Entry{{Path: testPath, Mode: "100644"}},
		Files:        map[string]gitx.Entry{},
		Policy:       policy(t),
		MaxDiffLines: 10,
	}
}

// write puts files into the candidate, as the pipeline read them.
func write(c *gates.Change, files map[string]string) {
	for name, content := range files {
		c.Files[name] = gitx.Entry{Path: name, Mode: "100644", Data: []byte(content)}
	}
}

func TestFixOrder(t *testing.T) {
	// The documented order: cheap structural checks before any code runs.
	want := []*gates.Gate{
		gates.DiffNonEmpty, gates.DiffWithinPlan, gates.DeclaredOnly, gates.StageB, gates.DiffBudget,
	}
	names := func(gs []*gates.Gate) []string {
		var out []string
		for _, g := range gs {
			out = append(out, g.Name)
		}
		return out
	}
	if diff := cmp.Diff(names(want), names(gates.Fix)); diff != "" {
		t.Fatalf("Fix order (-want +got):\n%s", diff)
	}
	for i := range want {
		if gates.Fix[i] != want[i] {
			t.Errorf("Fix[%d] is a copy of %s, not the exported gate", i, want[i].Name)
		}
	}
}

func TestCatalogue(t *testing.T) {
	type entry struct {
		Name, Reason string
		Halt         bool
	}
	// Reasons are terminal reason codes from the README's table; only the
	// budget gate HALTs, every other failure is evidence and ESCALATEs.
	want := []entry{
		{"diff-nonempty", "empty-diff", false},
		{"diff-within-plan", "diff-outside-plan", false},
		{"declared-only", "undeclared-changes", false},
		{"stage-b", "sensitive-path", false},
		{"diff-budget", "diff-budget", true},
		{"suite-green", "suite-red", false},
		{"suite-with-evidence", "evidence-breaks-suite", false},
	}
	var got []entry
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, g := range slices.Concat(gates.Fix, gates.Last) {
		got = append(got, entry{g.Name, g.Reason, g.Terminal() == verdict.Halt})
		if !kebab.MatchString(g.Name) {
			t.Errorf("name %q is not kebab-case", g.Name)
		}
		if seen[g.Name] {
			t.Errorf("name %q is used twice", g.Name)
		}
		seen[g.Name] = true
		if strings.TrimSpace(g.Doc) == "" || strings.Contains(g.Doc, "\n") {
			t.Errorf("%s: Doc %q must be one non-empty line", g.Name, g.Doc)
		}
		if !kebab.MatchString(g.Reason) {
			t.Errorf("%s: Reason %q is not a kebab-case reason code", g.Name, g.Reason)
		}
		if g.Run == nil {
			t.Errorf("%s: Run is nil", g.Name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalogue (-want +got):\n%s", diff)
	}
}

func TestDiffNonEmpty(t *testing.T) {
	const src = "def shout(text):\n    return text.upper() + '!'\n"
	fixed := "def shout(text):\n    return (text or '').upper() + '!'\n"
	marked := "def shout(text):\n    # FIXRAIL-MARKER\n    return text.upper() + '!'  # fixed\n"
	type file struct{ was, now string } // "" is absent
	tests := []struct {
		name       string
		files      map[string]file
		evidence   bool // the test changed too
		want       result
		noEvidence bool // a type whose oracle is the harness's (cve)
	}{
		{"nothing changed", nil, false, result{Detail: "nothing changed besides the evidence"}, false},
		{"only the test changed", nil, true, result{Detail: "nothing changed besides the evidence"}, false},
		{"one source file", map[string]file{"src/textfmt/format.py": {src, fixed}}, false, result{Pass: true, Detail: "1 file(s) changed besides the evidence"}, false},
		{"source and test", map[string]file{"src/textfmt/format.py": {src, fixed}, "src/textfmt/util.py": {"x = 1\n", "x = 2\n"}}, true,
			result{Pass: true, Detail: "2 file(s) changed besides the evidence"}, false},
		{"only a marker comment", map[string]file{"src/textfmt/format.py": {src, marked}}, true,
			result{Detail: "only comments or whitespace changed besides the evidence: src/textfmt/format.py"}, false},
		{"only whitespace", map[string]file{"src/textfmt/format.py": {src, strings.ReplaceAll(src, "\n", "   \n\n")}}, false,
			result{Detail: "only comments or whitespace changed besides the evidence: src/textfmt/format.py"}, false},
		{"a comment beside a real change", map[string]file{"src/textfmt/format.py": {src, fixed}, "src/textfmt/util.py": {"x = 1\n", "x = 1  # why\n"}}, false,
			result{Pass: true, Detail: "2 file(s) changed besides the evidence, 1 only in comments or whitespace: src/textfmt/util.py"}, false},
		{"a new file of comments only is a file", map[string]file{"src/textfmt/__init__.py": {"", "# package\n"}}, false,
			result{Pass: true, Detail: "1 file(s) changed besides the evidence"}, false},
		{"a deletion is a change", map[string]file{"src/textfmt/util.py": {"# only a comment\n", ""}}, false,
			result{Pass: true, Detail: "1 file(s) changed besides the evidence"}, false},
		{"a docstring is code", map[string]file{"src/textfmt/format.py": {"def f():\n    \"\"\"a\"\"\"\n", "def f():\n    \"\"\"b\"\"\"\n"}}, false,
			result{Pass: true, Detail: "1 file(s) changed besides the evidence"}, false},
		{"no evidence, nothing changed", nil, false, result{Detail: "nothing changed"}, true},
		{"no evidence, the manifest changed", map[string]file{"requirements.txt": {"a==1.0\n", "a==1.1\n"}}, false, result{Pass: true, Detail: "1 file(s) changed"}, true},
		{"no evidence, only a comment in the manifest", map[string]file{"requirements.txt": {"a==1.0\n", "a==1.0\n\n"}}, false, result{Detail: "only comments or whitespace changed: requirements.txt"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := change(t)
			c.BaseFiles = map[string]gitx.Entry{}
			if tc.noEvidence {
				c.Evidence = nil
			}
			for p, f := range tc.files {
				c.Changed = append(c.Changed, p)
				c.Files[p], c.BaseFiles[p] = entry(p, f.now), entry(p, f.was)
			}
			if tc.evidence {
				c.Changed = append(c.Changed, testPath)
			}
			slices.Sort(c.Changed)
			if diff := cmp.Diff(tc.want, run(t, gates.DiffNonEmpty, c)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
	// A changed path without its two versions cannot be judged: an error,
	// so the pipeline fails closed.
	c := change(t)
	c.Changed = []string{"src/textfmt/format.py"}
	if got := run(t, gates.DiffNonEmpty, c); !got.Err {
		t.Errorf("no versions: %+v, want an error", got)
	}
}

// entry is a regular file with content, or a deletion for "".
func entry(p, content string) gitx.Entry {
	if content == "" {
		return gitx.Entry{Path: p}
	}
	return gitx.Entry{Path: p, Mode: "100644", Data: []byte(content)}
}

func TestDiffWithinPlan(t *testing.T) {
	tests := []struct {
		name     string
		changed  []string
		declared []string
		want     result // diff-within-plan
		decl     result // declared-only
	}{
		{
			name:     "planned and declared",
			changed:  []string{"src/textfmt/format.py", testPath},
			declared: []string{"src/textfmt/format.py"},
			want:     result{Pass: true, Detail: "2 path(s), all planned"},
			decl:     result{Pass: true, Detail: "2 path(s), all declared"},
		},
		{
			name:     "declared but unchanged is fine",
			changed:  []string{"src/textfmt/format.py"},
			declared: []string{"src/textfmt/format.py", "src/textfmt/util.py"},
			want:     result{Pass: true, Detail: "1 path(s), all planned"},
			decl:     result{Pass: true, Detail: "1 path(s), all declared"},
		},
		{
			name:     "the test needs no declaration",
			changed:  []string{testPath},
			declared: nil,
			want:     result{Pass: true, Detail: "1 path(s), all planned"},
			decl:     result{Pass: true, Detail: "1 path(s), all declared"},
		},
		{
			name:     "unplanned path",
			changed:  []string{"src/textfmt/format.py", "src/textfmt/other.py"},
			declared: []string{"src/textfmt/format.py", "src/textfmt/other.py"},
			want:     result{Detail: "not in PLAN.json: src/textfmt/other.py"},
			decl:     result{Pass: true, Detail: "2 path(s), all declared"},
		},
		{
			name:     "build artefact left behind",
			changed:  []string{"src/textfmt/__pycache__/format.cpython-312.pyc", "src/textfmt/format.py"},
			declared: []string{"src/textfmt/format.py"},
			want:     result{Detail: "not in PLAN.json: src/textfmt/__pycache__/format.cpython-312.pyc"},
			decl:     result{Detail: "not declared in files_changed: src/textfmt/__pycache__/format.cpython-312.pyc"},
		},
		{
			name:     "planned but undeclared",
			changed:  []string{"src/textfmt/format.py", "src/textfmt/util.py"},
			declared: []string{"src/textfmt/format.py"},
			want:     result{Pass: true, Detail: "2 path(s), all planned"},
			decl:     result{Detail: "not declared in files_changed: src/textfmt/util.py"},
		},
		{
			name:     "both",
			changed:  []string{"README.md", "src/textfmt/format.py", "src/textfmt/util.py"},
			declared: nil,
			want:     result{Detail: "not in PLAN.json: README.md"},
			decl:     result{Detail: "not declared in files_changed: README.md, src/textfmt/format.py, src/textfmt/util.py"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := change(t)
			c.Changed = tc.changed
			c.Declared = tc.declared
			if diff := cmp.Diff(tc.want, run(t, gates.DiffWithinPlan, c)); diff != "" {
				t.Errorf("diff-within-plan result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.decl, run(t, gates.DeclaredOnly, c)); diff != "" {
				t.Errorf("declared-only result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStageB(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // the candidate's files
		missing []string          // changed paths the candidate has no entry for
		changed []string
		want    result
	}{
		{
			name:    "fixable source and test",
			files:   map[string]string{"src/textfmt/format.py": "import os\n", testPath: "from textfmt import format_name\n"},
			changed: []string{"src/textfmt/format.py", testPath},
			want:    result{Pass: true, Detail: "2 path(s) clear"},
		},
		{
			name:    "nothing changed",
			want:    result{Pass: true, Detail: "0 path(s) clear"},
			changed: nil,
		},
		{
			name:    "import of an auth module",
			files:   map[string]string{"src/textfmt/format.py": "import os\nfrom app.auth.session import x\n"},
			changed: []string{"src/textfmt/format.py"},
			want:    result{Detail: `src/textfmt/format.py imports ` + "`from app.auth.session import x`" + ` (import:auth)`},
		},
		{
			name:    "test that imports an auth module",
			files:   map[string]string{testPath: "from app.auth.session import x\n"},
			changed: []string{testPath},
			want:    result{Detail: `tests/test_format.py imports ` + "`from app.auth.session import x`" + ` (import:auth)`},
		},
		{
			name:    "deleted file has no imports to read",
			changed: []string{"src/textfmt/gone.py"},
			want:    result{Pass: true, Detail: "1 path(s) clear"},
		},
		{
			name:    "denied path",
			files:   map[string]string{"src/auth/session.py": "x = 1\n"},
			changed: []string{"src/auth/session.py"},
			want:    result{Detail: "src/auth/session.py (denied word:auth)"},
		},
		{
			name: "denied path is not read",
			// A path with no entry would be an error; a denied path is
			// refused before any read.
			missing: []string{"src/secrets/x"},
			changed: []string{"src/secrets/x"},
			want:    result{Detail: "src/secrets/x (denied word:secret)"},
		},
		{
			name:    "project sensitive glob",
			files:   map[string]string{"src/billing/invoice.py": "x = 1\n"},
			changed: []string{"src/billing/invoice.py"},
			want:    result{Detail: "src/billing/invoice.py (denied config:paths.sensitive[0] src/billing/**)"},
		},
		{
			name:    "unknown path is sensitive",
			files:   map[string]string{"docs/readme.md": "hi\n"},
			changed: []string{"docs/readme.md"},
			want:    result{Detail: `docs/readme.md (unknown: not under paths.fixable). To let a fix write there, the owners change paths.fixable in fixrail.yaml on the base branch to: fixable: ["src/**", "docs/**"]`},
		},
		{
			name:    "unknown even when deleted",
			changed: []string{"setup.py"},
			want:    result{Detail: `setup.py (unknown: not under paths.fixable). To let a fix write there, the owners change paths.fixable in fixrail.yaml on the base branch to: fixable: ["src/**", "setup.py"]`},
		},
		{
			// One line to change, whatever the number of paths; a path's
			// glob metacharacters are escaped, so the suggestion matches
			// that path and no other.
			name:    "unknown paths share one hint",
			changed: []string{"docs/a.md", "docs/b.md", "fixrail.yaml", "we[1]/*x.txt"},
			want:    result{Detail: `docs/a.md (unknown: not under paths.fixable); docs/b.md (unknown: not under paths.fixable); fixrail.yaml (denied glob:fixrail.yaml); we[1]/*x.txt (unknown: not under paths.fixable). To let a fix write there, the owners change paths.fixable in fixrail.yaml on the base branch to: fixable: ["src/**", "docs/**", "we\\[1\\]/**"]`},
		},
		{
			name:  "every hit is listed",
			files: map[string]string{"src/textfmt/format.py": "import app.crypto\n", "fixrail.yaml": "mode: x\n"},
			changed: []string{
				"fixrail.yaml", "src/textfmt/format.py",
			},
			want: result{Detail: `fixrail.yaml (denied glob:fixrail.yaml); src/textfmt/format.py imports ` + "`import app.crypto`" + ` (import:crypt)`},
		},
		{
			// The candidate is built before any gate: a changed path it has
			// no bytes for means the evidence is incomplete.
			name:    "changed path without an entry",
			missing: []string{"src/textfmt/pkg"},
			changed: []string{"src/textfmt/pkg"},
			want:    result{Err: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := change(t)
			write(c, tc.files)
			for _, p := range tc.changed {
				if _, ok := c.Files[p]; !ok && !slices.Contains(tc.missing, p) {
					c.Files[p] = gitx.Entry{Path: p} // a deletion
				}
			}
			c.Changed = tc.changed
			if diff := cmp.Diff(tc.want, run(t, gates.StageB, c)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiffBudget(t *testing.T) {
	tests := []struct {
		name           string
		added, deleted int
		bytes, longest int
		want           result
	}{
		{"well within", 3, 2, 100, 40, result{Pass: true, Detail: "5 of 10 lines, 100 of 1000 bytes, longest added line 40 of 80 bytes"}},
		{"exactly at every bound", 6, 4, 1000, 80, result{Pass: true, Detail: "10 of 10 lines, 1000 of 1000 bytes, longest added line 80 of 80 bytes"}},
		{"one line over", 6, 5, 100, 40, result{Detail: "11 of 10 lines, 100 of 1000 bytes, longest added line 40 of 80 bytes; over the budget in lines"}},
		{"deletions count", 0, 11, 100, 0, result{Detail: "11 of 10 lines, 100 of 1000 bytes, longest added line 0 of 80 bytes; over the budget in lines"}},
		{"additions count", 11, 0, 100, 40, result{Detail: "11 of 10 lines, 100 of 1000 bytes, longest added line 40 of 80 bytes; over the budget in lines"}},
		{"one byte over", 3, 2, 1001, 40, result{Detail: "5 of 10 lines, 1001 of 1000 bytes, longest added line 40 of 80 bytes; over the budget in bytes"}},
		{"one line byte over", 3, 2, 100, 81, result{Detail: "5 of 10 lines, 100 of 1000 bytes, longest added line 81 of 80 bytes; over the budget in line length"}},
		// The reported attack: ten lines, one padded with 3000 spaces
		// and followed by ~90 KB of code, was "10 of 10 lines".
		{"padded line at the line budget", 10, 0, 93000, 92000, result{Detail: "10 of 10 lines, 93000 of 1000 bytes, longest added line 92000 of 80 bytes; over the budget in bytes, line length"}},
		{"everything over", 11, 0, 1001, 81, result{Detail: "11 of 10 lines, 1001 of 1000 bytes, longest added line 81 of 80 bytes; over the budget in lines, bytes, line length"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := change(t)
			c.MaxDiffLines, c.MaxDiffBytes, c.MaxLineBytes = 10, 1000, 80
			c.Diff = gitx.TreeDiff{Diff: gitx.Diff{Added: tc.added, Deleted: tc.deleted}, Bytes: tc.bytes, Longest: tc.longest}
			if diff := cmp.Diff(tc.want, run(t, gates.DiffBudget, c)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTestUnchanged(t *testing.T) {
	const red = "def test_none():\n    assert format_name(None) == ''\n"
	tests := []struct {
		name     string
		files    map[string]string // the candidate's files
		fixtures map[string]string // evidence besides the test
		deleted  bool              // evidence paths without a file are deleted
		exec     bool              // the test's mode turned executable
		want     result
	}{
		{
			name:  "byte for byte the same",
			files: map[string]string{testPath: red},
			want:  result{Pass: true, Detail: testPath},
		},
		{
			name:  "weakened",
			files: map[string]string{testPath: "def test_none():\n    pass\n"},
			want:  result{Detail: "the fix phase edited " + testPath},
		},
		{
			name:  "trailing newline added",
			files: map[string]string{testPath: red + "\n"},
			want:  result{Detail: "the fix phase edited " + testPath},
		},
		{
			name:  "emptied",
			files: map[string]string{testPath: ""},
			want:  result{Detail: "the fix phase edited " + testPath},
		},
		{
			name:    "deleted",
			deleted: true,
			want:    result{Detail: "the reproducing test was deleted"},
		},
		{
			name:  "made executable",
			files: map[string]string{testPath: red},
			exec:  true,
			want:  result{Detail: "the fix phase edited " + testPath},
		},
		{
			name: "missing from the candidate",
			want: result{Err: true},
		},
		{
			name:     "a fixture edited",
			files:    map[string]string{testPath: red, "tests/conftest.py": "x = 2\n"},
			fixtures: map[string]string{"tests/conftest.py": "x = 1\n"},
			want:     result{Detail: "the fix phase edited tests/conftest.py"},
		},
		{
			name:     "a fixture deleted",
			files:    map[string]string{testPath: red},
			fixtures: map[string]string{"tests/conftest.py": "x = 1\n"},
			deleted:  true,
			want:     result{Detail: "the fix phase deleted tests/conftest.py"},
		},
		{
			name:     "test and fixture unchanged",
			files:    map[string]string{testPath: red, "tests/conftest.py": "x = 1\n"},
			fixtures: map[string]string{"tests/conftest.py": "x = 1\n"},
			want:     result{Pass: true, Detail: testPath + " and 1 fixture(s)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := change(t)
			c.Evidence = []gitx.Entry{{Path: testPath, Mode: "100644", Data: []byte(red)}}
			for name, content := range tc.fixtures {
				c.Evidence = append(c.Evidence, gitx.Entry{Path: name, Mode: "100644", Data: []byte(content)})
			}
			write(c, tc.files)
			if tc.deleted {
				for _, e := range c.Evidence {
					if _, ok := c.Files[e.Path]; !ok {
						c.Files[e.Path] = gitx.Entry{Path: e.Path}
					}
				}
			}
			if tc.exec {
				e := c.Files[testPath]
				e.Mode = "100755"
				c.Files[testPath] = e
			}
			if diff := cmp.Diff(tc.want, run(t, bugGate(t, "test-unchanged", nil), c)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

type ctxKey struct{}

// TestOracleAndSuite covers the gates that run code: each takes a fake
// runner returning a sandbox.Result, and each passes only on a clean exit
// 0. The suite runs twice: on the base plus the fix alone (FixOnly), then
// on the whole candidate (Commit); each gate asks for its own tree.
func TestOracleAndSuite(t *testing.T) {
	errStart := errors.New("start python3: executable file not found")
	const withEv = "suite passes on the base plus the fix and fails with the evidence added (%s): the evidence changes what the suite says"
	tests := []struct {
		name      string
		res       sandbox.Result
		err       error
		oracle    result
		suite     result
		evidence  result
		wantCause error
	}{
		{
			name:     "exit 0",
			res:      sandbox.Result{ExitCode: 0, Stdout: "1 passed"},
			oracle:   result{Pass: true, Detail: "test passes"},
			suite:    result{Pass: true, Detail: "suite passes on the base plus the fix, without the evidence"},
			evidence: result{Pass: true, Detail: "suite passes on the whole candidate too"},
		},
		{
			name:     "exit 1",
			res:      sandbox.Result{ExitCode: 1, Stdout: "1 failed"},
			oracle:   result{Detail: "test still fails: exit 1"},
			suite:    result{Detail: "suite fails on the base plus the fix: exit 1"},
			evidence: result{Detail: fmt.Sprintf(withEv, "exit 1")},
		},
		{
			name:     "timed out",
			res:      sandbox.Result{ExitCode: -1, TimedOut: true, Signal: "killed"},
			oracle:   result{Detail: "test still fails: timed out"},
			suite:    result{Detail: "suite fails on the base plus the fix: timed out"},
			evidence: result{Detail: fmt.Sprintf(withEv, "timed out")},
		},
		{
			name:     "killed by a signal",
			res:      sandbox.Result{ExitCode: -1, Signal: "segmentation fault"},
			oracle:   result{Detail: "test still fails: ended by signal (segmentation fault)"},
			suite:    result{Detail: "suite fails on the base plus the fix: ended by signal (segmentation fault)"},
			evidence: result{Detail: fmt.Sprintf(withEv, "ended by signal (segmentation fault)")},
		},
		{
			name:     "exit 0 but canceled is not green",
			res:      sandbox.Result{ExitCode: 0, Canceled: true},
			oracle:   result{Detail: "test still fails: canceled"},
			suite:    result{Detail: "suite fails on the base plus the fix: canceled"},
			evidence: result{Detail: fmt.Sprintf(withEv, "canceled")},
		},
		{
			name:      "could not start",
			err:       errStart,
			oracle:    result{Err: true},
			suite:     result{Err: true},
			evidence:  result{Err: true},
			wantCause: errStart,
		},
	}
	var exec func(context.Context, string, string, []string, time.Duration) (sandbox.Result, error)
	oracleGreen := bugGate(t, "oracle-green", func(ctx context.Context, label, rev string, argv []string, d time.Duration) (sandbox.Result, error) {
		return exec(ctx, label, rev, argv, d)
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, g := range []struct {
				gate *gates.Gate
				want result
				own  string // the runner and the tree it must ask for
			}{{oracleGreen, tc.oracle, "oracle candidate"}, {gates.SuiteGreen, tc.suite, "suite fix-only"}, {gates.SuiteWithEvidence, tc.evidence, "suite candidate"}} {
				c := change(t)
				c.Commit, c.FixOnly = "candidate", "fix-only"
				calls := map[string]int{}
				fake := func(which, rev string) (sandbox.Result, error) {
					calls[which+" "+rev]++
					return tc.res, tc.err
				}
				c.Suite = func(ctx context.Context, rev string) (sandbox.Result, error) {
					if ctx.Value(ctxKey{}) != "run" {
						t.Errorf("%s: the suite runner did not get the gate's context", g.gate.Name)
					}
					return fake("suite", rev)
				}
				exec = func(ctx context.Context, _, rev string, _ []string, _ time.Duration) (sandbox.Result, error) {
					if ctx.Value(ctxKey{}) != "run" {
						t.Errorf("%s: the oracle runner did not get the gate's context", g.gate.Name)
					}
					return fake("oracle", rev)
				}
				ctx := context.WithValue(t.Context(), ctxKey{}, "run")
				v, err := g.gate.Run(ctx, c)
				got := result{Pass: v.Pass, Detail: v.Detail, Err: err != nil}
				if diff := cmp.Diff(g.want, got); diff != "" {
					t.Errorf("%s result (-want +got):\n%s", g.gate.Name, diff)
				}
				if tc.wantCause != nil && !errors.Is(err, tc.wantCause) {
					t.Errorf("%s error %v does not wrap %v", g.gate.Name, err, tc.wantCause)
				}
				// Each gate runs its own command, once, on its own tree,
				// and never the other's.
				if diff := cmp.Diff(map[string]int{g.own: 1}, calls); diff != "" {
					t.Errorf("%s runner calls (-want +got):\n%s", g.gate.Name, diff)
				}
			}
		})
	}
}

// TestSuiteWithoutEvidence: a candidate with no evidence (FixOnly is the
// candidate) runs the suite once, in suite-green; suite-with-evidence says
// so and runs nothing.
func TestSuiteWithoutEvidence(t *testing.T) {
	c := change(t)
	c.Commit, c.FixOnly = "candidate", "candidate"
	var runs []string
	c.Suite = func(_ context.Context, rev string) (sandbox.Result, error) {
		runs = append(runs, rev)
		return sandbox.Result{ExitCode: 0}, nil
	}
	for _, tc := range []struct {
		gate *gates.Gate
		want result
	}{
		{gates.SuiteGreen, result{Pass: true, Detail: "suite passes on the base plus the fix (there is no evidence)"}},
		{gates.SuiteWithEvidence, result{Pass: true, Detail: "no evidence: suite-green ran on this very tree"}},
	} {
		v, err := tc.gate.Run(t.Context(), c)
		if diff := cmp.Diff(tc.want, result{Pass: v.Pass, Detail: v.Detail, Err: err != nil}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.gate.Name, diff)
		}
	}
	if !slices.Equal(runs, []string{"candidate"}) {
		t.Errorf("suite runs = %q, want one, on the candidate", runs)
	}
}

// TestAddedTests: a file the fix adds under the test globs is the
// agent's test code; a base test file it changes, a source file it adds
// and a test file it deletes are not.
func TestAddedTests(t *testing.T) {
	base := map[string]gitx.Entry{
		"tests/test_format.py": {Path: "tests/test_format.py", Mode: "100644", Data: []byte("x\n")},
		"tests/gone.py":        {Path: "tests/gone.py", Mode: "100644", Data: []byte("y\n")},
	}
	fixes := []gitx.Entry{
		{Path: "src/app/format.py", Mode: "100644", Data: []byte("a\n")},
		{Path: "src/app/new.py", Mode: "100644", Data: []byte("b\n")},
		{Path: "tests/test_format.py", Mode: "100644", Data: []byte("x\nz\n")},
		{Path: "tests/conftest.py", Mode: "100644", Data: []byte("c\n")},
		{Path: "tests/sub/helpers.py", Mode: "100755", Data: []byte("d\n")},
		{Path: "tests/gone.py"},
	}
	read := func(p string) (gitx.Entry, error) { return base[p], nil }
	got, err := gates.AddedTests([]string{"tests/**"}, fixes, read)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tests/conftest.py", "tests/sub/helpers.py"}; !slices.Equal(got, want) {
		t.Errorf("AddedTests = %q, want %q", got, want)
	}
	if got, _ := gates.AddedTests(nil, fixes, read); len(got) != 0 {
		t.Errorf("AddedTests with no globs = %q, want none", got)
	}
	boom := errors.New("base unreadable")
	if _, err := gates.AddedTests([]string{"tests/**"}, fixes, func(string) (gitx.Entry, error) { return gitx.Entry{}, boom }); !errors.Is(err, boom) {
		t.Errorf("AddedTests with an unreadable base = %v, want %v", err, boom)
	}
}

// TestOracleGreenWithoutFixTests: when the fix writes where the tests
// live, the reproducing test must pass on the candidate without those
// files too; with none, it runs once, on the candidate.
func TestOracleGreenWithoutFixTests(t *testing.T) {
	var runs []string
	green := map[string]bool{}
	oracle := bugGate(t, "oracle-green", func(_ context.Context, label, rev string, _ []string, _ time.Duration) (sandbox.Result, error) {
		runs = append(runs, label+" "+rev)
		if green[rev] {
			return sandbox.Result{ExitCode: 0}, nil
		}
		return sandbox.Result{ExitCode: 1}, nil
	})
	for _, tc := range []struct {
		name     string
		tests    []string
		green    []string
		want     result
		wantRuns []string
	}{
		{"no test files", nil, []string{"candidate"}, result{Pass: true, Detail: "test passes"}, []string{"green candidate"}},
		{"green without them", []string{"tests/conftest.py"}, []string{"candidate", "alone"},
			result{Pass: true, Detail: "test passes, also without the 1 test file(s) the fix adds, changes or deletes"},
			[]string{"green candidate", "green-fix-alone alone"}},
		{"green only with them", []string{"tests/__init__.py", "tests/conftest.py"}, []string{"candidate"},
			result{Detail: "test passes on the candidate but fails (exit 1) without the test files the fix adds, changes or deletes (tests/__init__.py, tests/conftest.py): they, not the fix, turn it green"},
			[]string{"green candidate", "green-fix-alone alone"}},
		{"red on the candidate", []string{"tests/conftest.py"}, nil, result{Detail: "test still fails: exit 1"}, []string{"green candidate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs = nil
			clear(green)
			for _, g := range tc.green {
				green[g] = true
			}
			c := change(t)
			c.Commit, c.FixAlone, c.FixTests = "candidate", "candidate", tc.tests
			if len(tc.tests) > 0 {
				c.FixAlone = "alone"
			}
			v, err := oracle.Run(t.Context(), c)
			if diff := cmp.Diff(tc.want, result{Pass: v.Pass, Detail: v.Detail, Err: err != nil}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !slices.Equal(runs, tc.wantRuns) {
				t.Errorf("runs = %q, want %q", runs, tc.wantRuns)
			}
		})
	}
	tests, rest := gates.SplitTests([]string{"tests/**"}, []gitx.Entry{{Path: "src/a.py"}, {Path: "tests/conftest.py"}, {Path: "tests/gone.py"}})
	if !slices.Equal(tests, []string{"tests/conftest.py", "tests/gone.py"}) || len(rest) != 1 || rest[0].Path != "src/a.py" {
		t.Errorf("SplitTests = %q, %v", tests, rest)
	}
}

// bugGate is one of the bug fix type's own gates (the reproducing test's):
// they live with the type and judge the same neutral Change.
func bugGate(t *testing.T, name string, exec func(context.Context, string, string, []string, time.Duration) (sandbox.Result, error)) *gates.Gate {
	t.Helper()
	cfg := &config.Config{Test: config.Test{Command: []string{"pytest", "{test_path}"}, PathGlob: "tests/**", Timeout: time.Minute}}
	env := &fixtype.Env{Config: cfg, Base: "main", BaseSHA: "0123456789abcdef", Exec: exec}
	plan := &fixtype.Plan{Files: []string{"src/textfmt/format.py"}, Evidence: []string{testPath},
		Detail: &fixtype.BugPlan{Summary: "guard None", Files: []string{"src/textfmt/format.py"}, Test: fixtype.TestSpec{Path: testPath, Name: "test_none", Symptom: "AttributeError"}}}
	for _, g := range fixtype.Bug.Gates(env, plan) {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("the bug type has no gate %s", name)
	return nil
}

// TestSuggestFixableMakesFixable: the line the unknown-path escalation
// suggests does what it says — each unknown path is fixable under it —
// and widens no further than the paths' own directories.
func TestSuggestFixableMakesFixable(t *testing.T) {
	pol, err := sensitive.New([]string{"src/**"}, nil, "tests/**")
	if err != nil {
		t.Fatal(err)
	}
	unknown := []string{"main.go", "docs/a.md", "we[1]/*x.txt", "a{b,c}/d.py"}
	got := gates.SuggestFixable(pol, unknown)
	widened, err := sensitive.New(got, nil, "tests/**")
	if err != nil {
		t.Fatalf("the suggested globs %q are refused: %v", got, err)
	}
	for _, p := range unknown {
		if v := widened.Classify(p); v.Class != sensitive.Fixable {
			t.Errorf("%s under %q: %v, want fixable", p, got, v)
		}
	}
	for _, p := range []string{"other.go", "docs2/a.md", "we1/x.txt", "ab/d.py", "web/x.go"} {
		if v := widened.Classify(p); v.Class == sensitive.Fixable {
			t.Errorf("%s is fixable under %q: the hint widens past the unknown paths", p, got)
		}
	}
}
