package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/verdict"
)

func TestChains(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []Item
		want  [][]int
	}{
		{"independent", []Item{{ID: "a", Keys: []string{"file:x"}}, {ID: "b", Keys: []string{"file:y"}}, {ID: "c"}}, [][]int{{0}, {1}, {2}}},
		{"shared file", []Item{{ID: "a", Keys: []string{"file:x"}}, {ID: "b", Keys: []string{"file:y"}}, {ID: "c", Keys: []string{"file:x"}}}, [][]int{{0, 2}, {1}}},
		{"transitive", []Item{{ID: "a", Keys: []string{"manifest:go.mod"}}, {ID: "b", Keys: []string{"package:Go/x", "manifest:sub/go.mod"}}, {ID: "c", Keys: []string{"manifest:go.mod", "package:Go/x"}}}, [][]int{{0, 1, 2}}},
		{"same path, other repository", []Item{{ID: "a", Repo: "o/a", Keys: []string{"file:x"}}, {ID: "b", Repo: "o/b", Keys: []string{"file:x"}}}, [][]int{{0}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Chains(tc.items); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("Chains = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRunParallelAndS7: never more than Parallel runs at once, and two
// findings sharing a key are never in flight together — whatever the
// timing, checked by the exec itself on every call.
func TestRunParallelAndS7(t *testing.T) {
	var items []Item
	for i := range 24 {
		it := Item{ID: fmt.Sprintf("f%02d", i)}
		if i%3 == 0 {
			it.Keys = []string{"manifest:package.json"} // eight on one manifest
		} else {
			it.Keys = []string{fmt.Sprintf("file:src/%d.go", i)}
		}
		items = append(items, it)
	}
	var mu sync.Mutex
	inFlight, peak := 0, 0
	held := map[string]string{}
	var clash atomic.Value
	exec := func(ctx context.Context, it Item) Result {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		for _, k := range it.Keys {
			if other, ok := held[k]; ok {
				clash.Store(it.ID + " ran with " + other + " on " + k)
			}
			held[k] = it.ID
		}
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		inFlight--
		for _, k := range it.Keys {
			delete(held, k)
		}
		mu.Unlock()
		return Result{Terminal: verdict.DraftPR, Reason: "fixed"}
	}
	var progress bytes.Buffer
	res := Run(t.Context(), items, exec, Options{Parallel: 4, Progress: &progress})
	if c := clash.Load(); c != nil {
		t.Fatalf("S7 broken: %s", c)
	}
	if peak > 4 || peak < 2 {
		t.Fatalf("peak concurrency %d, want 2..4", peak)
	}
	for i, r := range res {
		if r.Item.ID != items[i].ID || r.Terminal != verdict.DraftPR {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	// The manifest's chain ran in source order, each after the last.
	if got := res[6].After; !slices.Equal(got, []string{"f00", "f03"}) {
		t.Fatalf("f06 ran after %v, want [f00 f03]", got)
	}
	if n := strings.Count(progress.String(), "batch: ["); n != len(items) {
		t.Fatalf("%d progress lines for %d findings:\n%s", n, len(items), progress.String())
	}
	if !strings.Contains(progress.String(), "batch: start f03 (after f00: same file or manifest)") {
		t.Fatalf("progress does not say why f03 waited:\n%s", progress.String())
	}
}

// TestRunStopped: a cancelled batch still has a result per finding, and
// the ones never started are errors, not clean runs.
func TestRunStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	items := []Item{{ID: "a", Keys: []string{"file:x"}}, {ID: "b", Keys: []string{"file:x"}}}
	res := Run(ctx, items, func(context.Context, Item) Result {
		cancel()
		return Result{Terminal: verdict.Halt, Reason: "interrupted", Exit: 3}
	}, Options{Parallel: 2})
	if res[1].Terminal != "" || res[1].Error == "" {
		t.Fatalf("b = %+v, want not started", res[1])
	}
	if ExitCode(res) != 1 {
		t.Fatalf("exit %d, want 1", ExitCode(res))
	}
}

func TestExitCode(t *testing.T) {
	r := func(t verdict.Terminal, exit int) Result { return Result{Terminal: t, Exit: exit} }
	for _, tc := range []struct {
		name string
		in   []Result
		want int
	}{
		{"empty", nil, 0},
		{"all drafts", []Result{r(verdict.DraftPR, 0), r(verdict.DraftPR, 0)}, 0},
		{"not-repro", []Result{r(verdict.DraftPR, 0), r(verdict.NotRepro, 4)}, 4},
		{"halt over not-repro", []Result{r(verdict.NotRepro, 4), r(verdict.Halt, 3)}, 3},
		{"escalate over halt", []Result{r(verdict.Halt, 3), r(verdict.Escalate, 5), r(verdict.DraftPR, 0)}, 5},
		{"no terminal over all", []Result{r(verdict.Escalate, 5), {Exit: 2, Error: "bad file"}}, 2},
		{"no terminal, clean exit", []Result{r(verdict.DraftPR, 0), {Exit: 0, Error: "no report"}}, 1},
		// A run that printed its report and was then killed (exit 1 for
		// a signal): the batch's code cannot depend on which came first.
		{"killed after its report, last", []Result{r(verdict.DraftPR, 0), r(verdict.DraftPR, 1)}, 1},
		{"killed after its report, first", []Result{r(verdict.DraftPR, 1), r(verdict.DraftPR, 0)}, 1},
		{"usage after internal", []Result{{Exit: 1, Error: "x"}, {Exit: 2, Error: "y"}}, 2},
		{"usage before internal", []Result{{Exit: 2, Error: "y"}, {Exit: 1, Error: "x"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExitCode(tc.in); got != tc.want {
				t.Fatalf("ExitCode = %d, want %d", got, tc.want)
			}
		})
	}
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func splitter(t *testing.T) Splitter {
	dir := t.TempDir()
	return func(id string, data []byte) (string, error) {
		p := filepath.Join(dir, id+".json")
		return p, os.WriteFile(p, data, 0o600)
	}
}

func TestReadSource(t *testing.T) {
	dir := t.TempDir()
	reports := filepath.Join(dir, "reports")
	os.Mkdir(reports, 0o700)
	write(t, reports, "b-crash.md", "# crash on empty input\n\nit panics\n")
	write(t, reports, "a.json", `{"id": "a-1", "title": "wrong total", "body": "x"}`)
	write(t, reports, ".hidden.md", "# not read\n")
	os.Symlink("/etc/passwd", filepath.Join(reports, "link.md"))
	vulns := write(t, dir, "vulns.json", `[
	  {"id": "cve-a", "ecosystem": "npm", "package": "lodash", "version": "4.17.20", "advisories": ["GHSA-aaaa"], "manifest": "package.json"},
	  {"id": "cve-b", "ecosystem": "npm", "package": "minimist", "version": "1.2.0", "advisories": ["GHSA-bbbb"], "manifest": "package.json"}]`)
	scan := write(t, dir, "scan.json", `{"repo": "octo/app", "base": "main", "label": "fixrail", "items": [
	  {"group": "to-fix", "finding": "gh-7", "kind": "issue", "number": 7, "title": "broken"},
	  {"group": "branch-exists", "finding": "gh-8", "kind": "issue", "number": 8},
	  {"group": "to-fix", "finding": "dependabot-3", "kind": "alert", "number": 3, "title": "lodash (npm)"},
	  {"group": "posture", "kind": "repository", "why": "x"}]}`)

	t.Run("directory", func(t *testing.T) {
		items, err := ReadSource(reports, Intake{Split: splitter(t)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID+":"+it.Kind)
		}
		if !slices.Equal(ids, []string{"a-1:report", "b-crash:report"}) {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("vulns split, one manifest", func(t *testing.T) {
		items, err := ReadSource(vulns, Intake{Split: splitter(t)})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 || !slices.Contains(items[0].Keys, "manifest:package.json") || len(Chains(items)) != 1 {
			t.Fatalf("items %+v", items)
		}
		data, err := os.ReadFile(items[1].File)
		if err != nil || !strings.Contains(string(data), `"minimist"`) || strings.Contains(string(data), "lodash") {
			t.Fatalf("split file %s: %s %v", items[1].File, data, err)
		}
	})
	t.Run("scan", func(t *testing.T) {
		items, err := ReadSource(scan, Intake{Split: splitter(t)})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 || items[0].ID != "gh-7" || items[0].Repo != "octo/app" || items[1].ID != "dependabot-3" || items[1].File != "3" || items[0].Base != "main" {
			t.Fatalf("items %+v", items)
		}
	})
	for name, body := range map[string]string{
		"scan with a hostile repo": `{"repo": "--upload-pack=x/y", "items": []}`,
		"scan with a hostile base": `{"repo": "o/r", "base": "--upload-pack=x", "items": [{"group": "to-fix", "finding": "gh-1", "kind": "issue", "number": 1}]}`,
		"scan with a bad base":     `{"repo": "o/r", "base": "main..dev", "items": [{"group": "to-fix", "finding": "gh-1", "kind": "issue", "number": 1}]}`,
		"scan number mismatch":     `{"repo": "o/r", "items": [{"group": "to-fix", "finding": "gh-1", "kind": "issue", "number": 2}]}`,
		"empty list":               `{"repo": "o/r", "items": []}`,
		"binary":                   "\xff\xfe",
	} {
		t.Run(name, func(t *testing.T) {
			p := write(t, t.TempDir(), "src.json", body)
			if _, err := ReadSource(p, Intake{Split: splitter(t)}); err == nil {
				t.Fatal("read, want an error")
			}
		})
	}
}

// TestStepSummaryInert: untrusted text cannot break out of its cell.
func TestStepSummaryInert(t *testing.T) {
	s := Summarise("src", true, 2, time.Second, []Result{{Item: Item{ID: "gh-1"}, Terminal: verdict.Halt, Reason: "dry-run",
		Detail: "would change a|b `x` <img src=x> [link](http://evil)\n| fake | row |"}})
	var b bytes.Buffer
	if err := s.StepSummary(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var rows int
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") {
			rows++
			if strings.Count(l, "|") != 5 {
				t.Fatalf("a cell broke the table: %q", l)
			}
		}
	}
	if rows != 2 { // the header and the one run
		t.Fatalf("%d table rows:\n%s", rows, b.String())
	}
	if !strings.Contains(b.String(), "dry run: nothing published") {
		t.Fatalf("no dry-run note:\n%s", b.String())
	}
}

// TestPackageKeyCanonical: one package spelled two ways (an ecosystem's
// alias, PyPI's case and separators) is one package key, so its two
// findings never run at once: a cve run edits whichever manifests declare
// the package, the hinted one or not.
func TestPackageKeyCanonical(t *testing.T) {
	src := write(t, t.TempDir(), "vulns.json", `[
	  {"id": "cve-a", "ecosystem": "PyPI", "package": "Django", "version": "3.2.0", "manifest": "a/requirements.txt"},
	  {"id": "cve-b", "ecosystem": "pypi", "package": "django", "version": "3.2.0", "manifest": "b/requirements.txt"},
	  {"id": "cve-c", "ecosystem": "pip", "package": "Zope.Interface", "version": "5.0"},
	  {"id": "cve-d", "ecosystem": "PyPI", "package": "zope_interface", "version": "5.0"},
	  {"id": "cve-e", "ecosystem": "PyPI", "package": "requests", "version": "2.0.0", "manifest": "c/requirements.txt"}]`)
	items, err := ReadSource(src, Intake{Split: splitter(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Chains(items), [][]int{{0, 1}, {2, 3}, {4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chains %v, want %v (keys %v %v %v %v %v)", got, want, items[0].Keys, items[1].Keys, items[2].Keys, items[3].Keys, items[4].Keys)
	}
}

// TestCappedCutsOnARune: a long detail is cut for the table on a rune
// boundary, never through a character.
func TestCappedCutsOnARune(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 100), "a" + strings.Repeat("日本", 60), strings.Repeat("x", 200)} {
		got := capped(s)
		if !utf8.ValidString(got) || len(got) > 160 || !strings.HasSuffix(got, "...") {
			t.Errorf("capped(%.20q…) = %q: want valid UTF-8 of at most 160 bytes ending in ...", s, got)
		}
	}
}

// TestRowShowsDisagreement: a run whose exit disagrees with its report
// shows why in its row, in place of its PR or detail.
func TestRowShowsDisagreement(t *testing.T) {
	r := Result{Item: Item{ID: "gh-1"}, Terminal: verdict.DraftPR, Reason: "fixed", PR: "https://forge.invalid/pull/1", Exit: 1,
		Error: "the run reported DRAFT-PR but exited 1 (DRAFT-PR exits 0)"}
	var b strings.Builder
	Summarise("src", false, 1, time.Second, []Result{r}).Print(&b)
	if !strings.Contains(b.String(), "the run reported DRAFT-PR but exited 1") || !strings.Contains(b.String(), "exit 1") {
		t.Fatalf("summary:\n%s", b.String())
	}
	if p := progressLine(r); !strings.Contains(p, "DRAFT-PR (fixed): the run reported DRAFT-PR but exited 1") {
		t.Fatalf("progress line %q", p)
	}
}
