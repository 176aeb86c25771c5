package gates_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/verdict"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// strictSource answers exactly the packages it was given, each at most
// once; any other query, or a repeat, fails the test.
type strictSource struct {
	t       *testing.T
	mu      sync.Mutex
	answers map[string]answer // "eco name"
	asked   map[string]int
}

type answer struct {
	vulns []vulndata.Vuln
	err   error
}

func newSource(t *testing.T, answers map[string]answer) *strictSource {
	s := &strictSource{t: t, answers: answers, asked: map[string]int{}}
	t.Cleanup(func() {
		for k := range s.answers {
			if s.asked[k] == 0 {
				t.Errorf("the advisory source was never asked about %s", k)
			}
		}
	})
	return s
}

func (s *strictSource) Vulns(_ context.Context, eco vulndata.Ecosystem, name string) ([]vulndata.Vuln, vulndata.Meta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := string(eco) + " " + name
	s.asked[k]++
	a, ok := s.answers[k]
	if !ok || s.asked[k] > 1 {
		s.t.Errorf("unexpected advisory query %s (asked %d time(s))", k, s.asked[k])
		return nil, vulndata.Meta{}, errors.New("unexpected query")
	}
	return a.vulns, vulndata.Meta{FetchedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, a.err
}

func osv(id, eco, name string, events ...vulndata.Event) vulndata.Vuln {
	a := vulndata.Affected{Package: vulndata.Package{Ecosystem: eco, Name: name}}
	if len(events) > 0 {
		a.Ranges = []vulndata.Range{{Type: "ECOSYSTEM", Events: events}}
	}
	return vulndata.Vuln{ID: id, Affected: []vulndata.Affected{a}}
}

func since(v string) vulndata.Event { return vulndata.Event{Introduced: v} }
func fixed(v string) vulndata.Event { return vulndata.Event{Fixed: v} }

// depChange is a Change whose base holds base and whose candidate holds
// cand (a "" candidate is a deletion); Changed is every path of either.
func depChange(base, cand map[string]string) *gates.Change {
	c := &gates.Change{Files: map[string]gitx.Entry{}}
	paths := map[string]bool{}
	for p, s := range cand {
		e := gitx.Entry{Path: p}
		if s != "" {
			e.Mode, e.Data = "100644", []byte(s)
		}
		c.Files[p] = e
		paths[p] = true
	}
	for p := range paths {
		c.Changed = append(c.Changed, p)
	}
	sort.Strings(c.Changed)
	c.Base = func(_ context.Context, p string) (gitx.Entry, error) {
		if p == "unreadable/package.json" {
			return gitx.Entry{}, errors.New("blob over the limit")
		}
		s, ok := base[p]
		if !ok {
			return gitx.Entry{Path: p}, nil
		}
		return gitx.Entry{Path: p, Mode: "100644", Data: []byte(s)}, nil
	}
	return c
}

const reqs = "flask==3.0.0\nrequests==2.31.0\n"

// TestAddedPackages: the gate's verdicts, each against a strict source.
func TestAddedPackages(t *testing.T) {
	mal := osv("MAL-2026-0001", "PyPI", "reqeusts", since("0"))
	malNpm := osv("MAL-2026-0002", "npm", "crossenv")
	malAlias := osv("GHSA-fxrl-mal0-0001", "npm", "crossenv", since("0"))
	malAlias.Aliases = []string{"MAL-2026-0003"}
	for _, tc := range []struct {
		name       string
		base, cand map[string]string
		answers    map[string]answer
		nilSource  bool
		pass       bool
		reason     string
		unconf     bool
		want       []string // substrings of the detail
		notWant    []string
	}{
		{name: "no dependency file changed",
			base: map[string]string{"src/a.py": "x\n"}, cand: map[string]string{"src/a.py": "y\n"},
			pass: true, want: []string{"no manifest or lockfile changed"}},
		{name: "a manifest changed but adds nothing",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": "# web\n" + reqs},
			pass: true, want: []string{"1 manifest(s) or lockfile(s) changed, adding no package"}},
		{name: "a removal adds nothing",
			base: map[string]string{"requirements.txt": reqs, "yarn.lock": "x"}, cand: map[string]string{"requirements.txt": "flask==3.0.0\n", "yarn.lock": ""},
			pass: true, want: []string{"adding no package"}},
		{name: "no advisory source with nothing added needs none",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "\n"},
			nilSource: true, pass: true},
		{name: "a clean added package passes, named",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "idna==3.7\n"},
			answers: map[string]answer{"PyPI idna": {vulns: []vulndata.Vuln{osv("PYSEC-1", "PyPI", "idna", since("0"), fixed("3.7"))}}},
			pass:    true, want: []string{"1 added package(s) checked against the advisory data (fetched 2026-12-01)", "no advisory affects PyPI idna@3.7"}},
		{name: "a typosquat with a malware record",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "reqeusts==2.31.0\n"},
			answers: map[string]answer{"PyPI reqeusts": {vulns: []vulndata.Vuln{mal}}},
			reason:  verdict.ReasonAddedAdvisory, want: []string{"PyPI reqeusts@2.31.0: MAL-2026-0001 (malware)"}},
		{name: "a version bump onto an affected version",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": "flask==3.0.0\nrequests==2.19.0\n"},
			answers: map[string]answer{"PyPI requests": {vulns: []vulndata.Vuln{osv("PYSEC-2018-28", "PyPI", "requests", since("0"), fixed("2.20.0"))}}},
			reason:  verdict.ReasonAddedAdvisory, want: []string{"PyPI requests@2.19.0: PYSEC-2018-28"}},
		{name: "a range with a malware record: malicious in every version",
			base: map[string]string{"package.json": `{"dependencies": {"a": "^1.0.0"}}`}, cand: map[string]string{"package.json": `{"dependencies": {"a": "^1.0.0", "crossenv": "^7.0.0"}}`},
			answers: map[string]answer{"npm crossenv": {vulns: []vulndata.Vuln{malNpm}}},
			reason:  verdict.ReasonAddedAdvisory, want: []string{"npm crossenv ^7.0.0: MAL-2026-0002 (malware)"}},
		{name: "a malware alias on a GHSA record",
			base: map[string]string{}, cand: map[string]string{"web/package-lock.json": `{"packages": {"node_modules/x/node_modules/crossenv": {"version": "7.0.0"}}}`},
			answers: map[string]answer{"npm crossenv": {vulns: []vulndata.Vuln{malAlias}}},
			reason:  verdict.ReasonAddedAdvisory, want: []string{"npm crossenv@7.0.0: GHSA-fxrl-mal0-0001 (malware)"}},
		{name: "a range with ordinary advisories passes for review",
			base: map[string]string{"package.json": `{}`}, cand: map[string]string{"package.json": `{"dependencies": {"lodash": "^4.17.0"}}`},
			answers: map[string]answer{"npm lodash": {vulns: []vulndata.Vuln{osv("GHSA-lodash-0001", "npm", "lodash", since("4.17.0"), fixed("4.17.21"))}}},
			pass:    true, unconf: true, want: []string{"with no exact version added", "npm lodash ^4.17.0: GHSA-lodash-0001"}},
		{name: "the lockfile's exact version decides for the manifest's range",
			base:    map[string]string{"package.json": `{}`, "package-lock.json": `{"packages": {}}`},
			cand:    map[string]string{"package.json": `{"dependencies": {"lodash": "^4.17.0"}}`, "package-lock.json": `{"packages": {"node_modules/lodash": {"version": "4.17.21"}}}`},
			answers: map[string]answer{"npm lodash": {vulns: []vulndata.Vuln{osv("GHSA-lodash-0001", "npm", "lodash", since("4.17.0"), fixed("4.17.21"))}}},
			pass:    true, want: []string{"no advisory affects npm lodash@4.17.21"}, notWant: []string{"review"}},
		{name: "no data offline: could not be checked",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "idna==3.7\n"},
			answers: map[string]answer{"PyPI idna": {err: &vulndata.MissError{Kind: "osv", Ecosystem: "PyPI", Name: "idna"}}},
			reason:  verdict.ReasonAddedUnchecked, want: []string{"could not be checked: PyPI idna: could not be checked", "not in the cache, and offline"}},
		{name: "the service unreachable: could not be checked",
			base: map[string]string{}, cand: map[string]string{"go.mod": "module m\n\nrequire example.com/x v1.0.0\n"},
			answers: map[string]answer{"Go example.com/x": {err: vulndata.ErrUnreachable}},
			reason:  verdict.ReasonAddedUnchecked, want: []string{"Go example.com/x: could not be checked: vulnerability service unreachable"}},
		{name: "no advisory source: could not be checked",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "idna==3.7\n"},
			nilSource: true, reason: verdict.ReasonAddedUnchecked, want: []string{"PyPI idna: could not be checked: no advisory source"}},
		{name: "a hit outranks what could not be checked, and both are named",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "reqeusts==2.31.0\nidna==3.7\n", "yarn.lock": "x"},
			answers: map[string]answer{"PyPI reqeusts": {vulns: []vulndata.Vuln{mal}}, "PyPI idna": {err: vulndata.ErrUnreachable}},
			reason:  verdict.ReasonAddedAdvisory, want: []string{"named by an advisory: PyPI reqeusts@2.31.0", "could not be checked: yarn.lock: a dependency file fixrail does not read", "PyPI idna: could not be checked"}},
		{name: "a dependency file fixrail does not read",
			base: map[string]string{}, cand: map[string]string{"pnpm-lock.yaml": "lockfileVersion: 9\n"},
			reason: verdict.ReasonAddedUnchecked, want: []string{"pnpm-lock.yaml: a dependency file fixrail does not read"}},
		{name: "a manifest that does not parse",
			base: map[string]string{"package.json": `{}`}, cand: map[string]string{"package.json": `{"dependencies": `},
			reason: verdict.ReasonAddedUnchecked, want: []string{"package.json: does not parse"}},
		{name: "an unreadable base",
			base: map[string]string{}, cand: map[string]string{"unreadable/package.json": `{}`},
			reason: verdict.ReasonAddedUnchecked, want: []string{"the base's copy could not be read: blob over the limit"}},
		{name: "a URL requirement names no registry version",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "--extra-index-url https://pypi.example/simple\n"},
			reason: verdict.ReasonAddedUnchecked, want: []string{`requirements.txt: requirement-file option "--extra-index-url https://pypi.example/simple"`}},
		{name: "an unparseable version",
			base: map[string]string{}, cand: map[string]string{"Gemfile.lock": "GEM\n  specs:\n    rack (not!a!version)\n\n"},
			answers: map[string]answer{"RubyGems rack": {}},
			reason:  verdict.ReasonAddedUnchecked, want: []string{`RubyGems rack@not!a!version: could not be checked: not a RubyGems version`}},
		{name: "a record with no range is reported, not blocking",
			base: map[string]string{"requirements.txt": reqs}, cand: map[string]string{"requirements.txt": reqs + "idna==3.7\n"},
			answers: map[string]answer{"PyPI idna": {vulns: []vulndata.Vuln{osv("PYSEC-GIT-1", "PyPI", "idna")}}},
			pass:    true, want: []string{"named with no range fixrail can evaluate (not blocking): PyPI idna@3.7: PYSEC-GIT-1"}},
		{name: "a hostile name is quoted",
			base: map[string]string{"package.json": `{}`}, cand: map[string]string{"package.json": `{"dependencies": {"evil\u001b]0;pwned\u0007": "1.0.0"}}`},
			answers: map[string]answer{"npm evil\x1b]0;pwned\x07": {vulns: []vulndata.Vuln{osv("MAL-2026-0004", "npm", "evil\x1b]0;pwned\x07")}}},
			reason:  verdict.ReasonAddedAdvisory, want: []string{`npm "evil\x1b]0;pwned\a"@1.0.0: MAL-2026-0004 (malware)`}, notWant: []string{"\x1b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var src gates.Advisories
			if !tc.nilSource {
				src = newSource(t, tc.answers)
			}
			g := gates.AddedPackages(src)
			v, err := g.Run(t.Context(), depChange(tc.base, tc.cand))
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass || v.Unconfirmed != tc.unconf || (!tc.pass && v.Reason != tc.reason) {
				t.Fatalf("pass=%v unconfirmed=%v reason=%q (%s), want pass=%v unconfirmed=%v reason=%q", v.Pass, v.Unconfirmed, v.Reason, v.Detail, tc.pass, tc.unconf, tc.reason)
			}
			if tc.unconf && v.Label != gates.LabelNeedsReview {
				t.Errorf("label %q", v.Label)
			}
			for _, w := range tc.want {
				if !strings.Contains(v.Detail, w) {
					t.Errorf("detail %q lacks %q", v.Detail, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(v.Detail, w) {
					t.Errorf("detail %q has %q", v.Detail, w)
				}
			}
		})
	}
}

// TestAddedPackagesBounded: past maxAddedPackages distinct packages the
// fix fails closed without a single query.
func TestAddedPackagesBounded(t *testing.T) {
	var b strings.Builder
	for i := range 201 {
		fmt.Fprintf(&b, "pkg%d==1.0.0\n", i)
	}
	v, err := gates.AddedPackages(newSource(t, nil)).Run(t.Context(), depChange(nil, map[string]string{"requirements.txt": b.String()}))
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Reason != verdict.ReasonAddedUnchecked || !strings.Contains(v.Detail, "201 packages added: more than 200 are not checked one by one") {
		t.Fatalf("%+v", v)
	}
}

// TestAddedPackagesNoBase: a Change without a base reader is the
// pipeline's bug, an error (the run fails closed), never a pass.
func TestAddedPackagesNoBase(t *testing.T) {
	c := depChange(nil, map[string]string{"requirements.txt": reqs})
	c.Base = nil
	if r := run(t, gates.AddedPackages(nil), c); !r.Err {
		t.Fatalf("%+v", r)
	}
}
