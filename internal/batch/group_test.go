package batch

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/verdict"
)

var updateGroup = flag.Bool("update-group", false, "rewrite the grouped-PR body golden under testdata/")

func TestParseGroup(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{{"", "", true}, {"manifest", "manifest", true}, {"package", "", false}, {"Manifest", "", false}, {"manifest ", "", false}} {
		got, err := ParseGroup(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseGroup(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func vuln(id, manifest string) Item {
	return Item{ID: id, Kind: "vuln", Keys: []string{"package:PyPI/" + id, "manifest:" + manifest}}
}

// TestGrouperGroups: only cve findings sharing a manifest group; a lone
// one, a report on the same file, and one naming two manifests do not.
func TestGrouperGroups(t *testing.T) {
	two := Item{ID: "two", Kind: "vuln", Keys: []string{"manifest:a.txt", "manifest:b.txt"}}
	items := []Item{
		vuln("a1", "a.txt"), {ID: "r", Kind: "report", Keys: []string{"manifest:a.txt"}}, vuln("b1", "b.txt"),
		vuln("a2", "a.txt"), two, vuln("c1", "c.txt"), {ID: "o1", Kind: "vuln", Repo: "o/x", Keys: []string{"manifest:a.txt"}},
		vuln("a3", "a.txt"), vuln("b2", "b.txt"),
	}
	g := NewGrouper(items, "base", nil, nil)
	var got []string
	for _, grp := range g.Groups() {
		var ids []string
		for id, of := range g.of {
			if of == grp {
				ids = append(ids, id)
			}
		}
		got = append(got, grp.Manifest+":"+strings.Join(sorted(ids), ","))
	}
	want := []string{"a.txt:a1,a2,a3", "b.txt:b1,b2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("groups = %v, want %v", got, want)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestGrouperStacks: through Run, at full width, each member is judged
// on the last included commit of its group: the base first, then the
// previous member's; a member that ends in anything but DRAFT-PR is left
// out and the next is judged on the same tip; a DRAFT-PR that held no
// commit is a broken run, never included. Other findings run plain.
func TestGrouperStacks(t *testing.T) {
	items := []Item{vuln("a1", "a.txt"), vuln("a2", "a.txt"), {ID: "rep", Kind: "report", Keys: []string{"file:x"}},
		vuln("a3", "a.txt"), vuln("a4", "a.txt"), vuln("a5", "a.txt")}
	var mu sync.Mutex
	on := map[string]string{}
	var plain []string
	stacked := func(_ context.Context, it Item, base string) (Result, string) {
		mu.Lock()
		on[it.ID] = base
		mu.Unlock()
		switch it.ID {
		case "a2":
			return Result{Terminal: verdict.Escalate, Reason: "no-safe-version", Exit: 5}, "ignored"
		case "a4":
			return Result{Terminal: verdict.DraftPR, Reason: "fixed"}, ""
		}
		return Result{Terminal: verdict.DraftPR, Reason: "fixed"}, "c-" + it.ID
	}
	exec := func(_ context.Context, it Item) Result {
		mu.Lock()
		plain = append(plain, it.ID)
		mu.Unlock()
		return Result{Terminal: verdict.DraftPR}
	}
	g := NewGrouper(items, "B", stacked, exec)
	res := Run(context.Background(), items, g.Exec, Options{Parallel: 4})
	want := map[string]string{"a1": "B", "a2": "c-a1", "a3": "c-a1", "a4": "c-a3", "a5": "c-a3"}
	for id, w := range want {
		if on[id] != w {
			t.Errorf("%s judged on %q, want %q", id, on[id], w)
		}
	}
	if len(plain) != 1 || plain[0] != "rep" {
		t.Errorf("plain runs = %v, want [rep]", plain)
	}
	grp := g.Groups()[0]
	var in []string
	for _, m := range grp.Included() {
		in = append(in, m.Item.ID+"@"+m.Parent)
	}
	if got := strings.Join(in, " "); got != "a1@B a3@c-a1 a5@c-a3" {
		t.Errorf("included = %s", got)
	}
	if grp.Tip() != "c-a5" {
		t.Errorf("tip = %s", grp.Tip())
	}
	if r := res[4]; r.Terminal != "" || r.Exit != exitInternal || !strings.Contains(r.Error, "held no commit") {
		t.Errorf("a4 (DRAFT-PR, no commit) = %+v, want a broken run", r)
	}
	if res[1].Terminal != verdict.Escalate {
		t.Errorf("a2 = %+v, want its own ESCALATE kept", res[1])
	}
}

func TestGroupID(t *testing.T) {
	seen := map[string]string{}
	for _, m := range []string{"requirements.txt", "requirements-txt", "web/package-lock.json", "go.mod", "../../etc/passwd",
		"a/" + strings.Repeat("x", 200) + "/go.mod", "é/ü.lock", ".lock", "---"} {
		id := (&Group{Manifest: m}).ID()
		if !pathguard.SafeName(id) {
			t.Errorf("ID(%q) = %q: not a safe name", m, id)
		}
		if prev, ok := seen[id]; ok {
			t.Errorf("ID(%q) = ID(%q) = %q", m, prev, id)
		}
		seen[id] = m
	}
}

// TestGroupBodyGolden: the grouped draft's body, one member left out,
// with hostile text in what runs reported. Regenerate with
// go test ./internal/batch -run TestGroupBodyGolden -update-group.
func TestGroupBodyGolden(t *testing.T) {
	base := strings.Repeat("b", 40)
	c1, c3 := strings.Repeat("1", 40), strings.Repeat("3", 40)
	g := &Group{Manifest: "requirements.txt", Base: base, Members: []Member{
		{Item: Item{ID: "cve-flask"}, Parent: base, Commit: c1,
			Result: Result{Terminal: verdict.DraftPR, Reason: "fixed", Detail: "reproduced red on main, green after the fix; every gate passed"},
			Body:   "## Draft fix for finding cve-flask\n\n### Version decision\n\nflask 3.0.0 → 3.0.1\n"},
		{Item: Item{ID: "cve-requests"}, Parent: c1,
			Result: Result{Terminal: verdict.Escalate, Reason: "no-safe-version", Exit: 5, Detail: "every version | is `affected` <b>x</b>\n[link](http://x)"}},
		{Item: Item{ID: "cve-urllib3"}, Parent: c1,
			Result: Result{Exit: 1, Error: "the run printed no report"}},
		{Item: Item{ID: "cve-idna"}, Parent: c1, Commit: c3,
			Result: Result{Terminal: verdict.DraftPR, Reason: "fixed", Detail: "reproduced red on 111111111111 (stacked on main), green after the fix; every gate passed"},
			Body:   "## Draft fix for finding cve-idna\n\n### Version decision\n\nidna 1.0 → 1.1\n"},
	}}
	if g.Title() != "fixrail: 2 dependency fixes in requirements.txt" {
		t.Errorf("title = %q", g.Title())
	}
	got := g.Body("main")
	golden := filepath.Join("testdata", "group_body.md")
	if *updateGroup {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-group to write it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs; got:\n%s", golden, got)
	}
}
