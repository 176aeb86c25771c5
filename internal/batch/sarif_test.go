package batch

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
)

// mapTree is the base commit's files, as findings.Tree.
type mapTree map[string]string

func (m mapTree) ReadFile(p string) ([]byte, error) {
	if s, ok := m[p]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

const testSARIF = `{"version": "2.1.0", "runs": [
 {"tool": {"driver": {"name": "gosec", "rules": [{"id": "G201"}, {"id": "G304"}]}},
  "invocations": [{"executionSuccessful": false}],
  "results": [
   {"ruleId": "G201", "level": "error", "message": {"text": "SQL string formatting"},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "db/users.go"}, "region": {"startLine": 3}}}]},
   {"ruleId": "G201", "level": "error", "message": {"text": "SQL string formatting"},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "db/orders.go"}, "region": {"startLine": 2}}}]},
   {"ruleId": "G304", "level": "error", "message": {"text": "file inclusion"},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "db/gone.go"}, "region": {"startLine": 1}}}]},
   {"ruleId": "G201", "level": "error", "message": {"text": "SQL string formatting"},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "db/users.go"}, "region": {"startLine": 5}}}]}]}]}`

// sorter sorts as run --sarif does, against a tree of files.
func sorter(tree mapTree) SARIFSorter {
	return func(name string, data []byte) (*findings.SARIFScan, error) {
		return findings.ParseSARIF(data, findings.SARIFOptions{Root: "/repo", Tree: tree, Source: "sarif:" + name})
	}
}

func TestReadSARIF(t *testing.T) {
	dir := t.TempDir()
	log := write(t, dir, "gosec.sarif", testSARIF)
	tree := mapTree{"db/users.go": "package db\n\nvar a = 1\n\nvar b = 2\n", "db/orders.go": "package db\nvar c = 3\n"}
	items, err := ReadSource(log, Intake{Split: splitter(t), SARIF: sorter(tree)})
	if err != nil {
		t.Fatal(err)
	}
	run, listed := Runnable(items)
	want, _ := sorter(tree)(log, []byte(testSARIF))
	var toFix []string
	for _, r := range want.Results {
		if r.Group == findings.GroupToFix {
			toFix = append(toFix, r.ID)
		}
	}
	var ids, files []string
	for _, it := range run {
		ids = append(ids, it.ID)
		files = append(files, strings.Join(it.Keys[:1], ""))
		if it.Kind != "sarif" || it.File != log {
			t.Errorf("item %+v: want kind sarif from %s", it, log)
		}
	}
	if len(toFix) != 3 || !slices.Equal(ids, toFix) {
		t.Fatalf("runs %v, want the sorter's to-fix results %v", ids, toFix)
	}
	// Two results in one file run in sequence; the other file's alone.
	if !slices.Equal(files, []string{"file:db/users.go", "file:db/orders.go", "file:db/users.go"}) || len(Chains(run)) != 2 {
		t.Fatalf("keys %v, chains %v", files, Chains(run))
	}
	groups := map[string]int{}
	for _, it := range listed {
		groups[it.Listed]++
		if it.Why == "" {
			t.Errorf("listed %+v gives no reason", it)
		}
	}
	if groups["unfixable"] != 1 || groups["posture"] != 1 {
		t.Fatalf("listed %+v: want one unfixable (the file the base lacks) and one posture (the failed run)", listed)
	}
	if _, err := ReadSource(log, Intake{Split: splitter(t)}); err == nil || !strings.Contains(err.Error(), "sorted against the repository") {
		t.Fatalf("no sorter: %v", err)
	}
	// A scan --sarif listing of the same log: its to-fix items run from
	// the log it names, its unfixable ones are listed.
	scan := write(t, dir, "scan.json", `{"dir": "proj", "base": "main", "sarif": "`+log+`", "items": [
	  {"group": "to-fix", "finding": "`+toFix[0]+`", "kind": "sarif", "path": "db/users.go", "title": "t"},
	  {"group": "branch-exists", "finding": "`+toFix[1]+`", "kind": "sarif", "path": "db/orders.go"},
	  {"group": "unfixable", "finding": "gosec-x", "kind": "sarif", "why": "the base has no db/gone.go"},
	  {"group": "posture", "kind": "sarif", "why": "run 0 did not complete"}]}`)
	items, err = ReadSource(scan, Intake{Split: splitter(t)})
	if err != nil {
		t.Fatal(err)
	}
	run, listed = Runnable(items)
	if len(run) != 1 || run[0].ID != toFix[0] || run[0].File != log || run[0].Kind != "sarif" || !slices.Contains(run[0].Keys, "file:db/users.go") {
		t.Fatalf("runs %+v", run)
	}
	if len(listed) != 2 || listed[0].Listed != "unfixable" || listed[0].Why == "" || listed[1].Listed != "posture" {
		t.Fatalf("listed %+v", listed)
	}
	for name, body := range map[string]string{
		"no log named":   `{"base": "main", "sarif": "", "repo": "o/r", "items": [{"group": "to-fix", "finding": "gosec-1", "kind": "sarif"}]}`,
		"unsafe id":      `{"base": "main", "sarif": "/x.sarif", "items": [{"group": "to-fix", "finding": "../x", "kind": "sarif"}]}`,
		"issue, no repo": `{"base": "main", "sarif": "/x.sarif", "items": [{"group": "to-fix", "finding": "gh-1", "kind": "issue", "number": 1}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := write(t, t.TempDir(), "src.json", body)
			if _, err := ReadSource(p, Intake{Split: splitter(t)}); err == nil {
				t.Fatal("read, want an error")
			}
		})
	}
}
