package cve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/vulndata"
	"github.com/fixrail/fixrail/internal/vulndata/vulntest"
)

type decideCase struct {
	scenario  string
	eco       vulndata.Ecosystem
	name      string
	installed string
	outcome   string
	target    string
	class     string
	affecting []string
	stillOpen []string
	noRange   []string
	passed    []Passed
}

var decideCases = []decideCase{
	{
		// F1: 2.7.3 clears the alerted PYSEC-2014-82 but not PYSEC-2019-220.
		scenario: "pypi_jinja2", eco: vulndata.PyPI, name: "Jinja2", installed: "2.7.2",
		outcome: Upgrade, target: "2.8.1", class: "minor",
		affecting: []string{"PYSEC-2014-82", "PYSEC-2019-220"},
		passed: []Passed{
			{Version: "2.7.3", Reason: "affected", By: []string{"PYSEC-2019-220"}},
			{Version: "2.8", Reason: "affected", By: []string{"PYSEC-2019-220"}},
			{Version: "2.8.1rc1", Reason: "pre-release"},
		},
	},
	{
		// 1.2.0 clears the alerted advisory but is inside the second one's
		// range; 1.2.1 is deprecated; the withdrawn record is ignored.
		scenario: "npm_scoped", eco: vulndata.NPM, name: "@fixrail-demo/left-pad", installed: "1.1.0",
		outcome: Upgrade, target: "1.2.3", class: "minor",
		affecting: []string{"GHSA-fxr1-0000-0001"},
		passed: []Passed{
			{Version: "1.2.0", Reason: "affected", By: []string{"GHSA-fxr1-0000-0002"}},
			{Version: "1.2.1", Reason: "deprecated"},
			{Version: "1.2.2", Reason: "affected", By: []string{"GHSA-fxr1-0000-0002"}},
		},
	},
	{
		// OSV's Go range has no "v"; deps.dev's versions do; a pseudo-version
		// is listed and never chosen.
		scenario: "go_text", eco: vulndata.Go, name: "golang.org/x/text", installed: "v0.3.7",
		outcome: Upgrade, target: "v0.3.8", class: "patch",
		affecting: []string{"GO-2022-1059"},
		passed:    []Passed{{Version: "v0.3.8-0.20220509174342-b4bca84b0361", Reason: "pseudo-version"}},
	},
	{
		// F4: two branches; the fix on the installed line, not the max fix.
		scenario: "maven_jackson", eco: vulndata.Maven, name: "com.fasterxml.jackson.core:jackson-databind", installed: "2.12.3",
		outcome: Upgrade, target: "2.12.6.1", class: "patch",
		affecting: []string{"GHSA-57j2-w4cx-62h2"},
		passed:    []Passed{{Version: "2.12.6", Reason: "affected", By: []string{"GHSA-57j2-w4cx-62h2"}}},
	},
	{
		scenario: "cargo_unfixed", eco: vulndata.Cargo, name: "fixrail-demo-unfixed", installed: "0.1.0",
		outcome:   NoSafeVersion,
		affecting: []string{"RUSTSEC-2099-0002"},
		stillOpen: []string{"RUSTSEC-2099-0001"},
		passed: []Passed{
			{Version: "0.2.0", Reason: "affected", By: []string{"RUSTSEC-2099-0001"}},
			{Version: "0.3.0", Reason: "affected", By: []string{"RUSTSEC-2099-0001"}},
			{Version: "1.0.0", Reason: "affected", By: []string{"RUSTSEC-2099-0001"}},
		},
	},
	{
		// A Gemfile.lock platform suffix on the installed version;
		// last_affected is inclusive; a GIT-only record is reported.
		scenario: "rubygems_nokogiri", eco: vulndata.RubyGems, name: "nokogiri", installed: "1.16.0-x86_64-linux",
		outcome: Upgrade, target: "1.16.5", class: "patch",
		affecting: []string{"GHSA-fxr3-0000-0001"},
		noRange:   []string{"GHSA-fxr3-0000-0003"},
		passed: []Passed{
			{Version: "1.16.2", Reason: "affected", By: []string{"GHSA-fxr3-0000-0002"}},
			{Version: "1.16.4", Reason: "affected", By: []string{"GHSA-fxr3-0000-0002"}},
		},
	},
}

func checkDecision(t *testing.T, c decideCase, d *Decision, err error) {
	t.Helper()
	if c.outcome == NoSafeVersion {
		var ns *NoSafeError
		if !errors.As(err, &ns) || !errors.Is(err, ErrNoSafeVersion) {
			t.Fatalf("err = %v, want *NoSafeError", err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != c.outcome || d.Target != c.target {
		t.Errorf("outcome %s target %q, want %s %q (%s)", d.Outcome, d.Target, c.outcome, c.target, d.Rationale)
	}
	if c.class != "" && (d.Bump == nil || d.Bump.Class != c.class) {
		t.Errorf("bump %+v, want class %s", d.Bump, c.class)
	}
	if diff := cmp.Diff(c.affecting, IDs(d.Affecting)); diff != "" {
		t.Errorf("affecting (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(c.stillOpen, IDs(d.StillOpen), cmpEmpty); diff != "" {
		t.Errorf("still open (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(c.noRange, IDs(d.WithoutRanges), cmpEmpty); diff != "" {
		t.Errorf("without ranges (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(c.passed, d.PassedOver, cmpEmpty); diff != "" {
		t.Errorf("passed over (-want +got):\n%s", diff)
	}
}

var cmpEmpty = cmp.FilterValues(func(a, b any) bool {
	return isEmpty(a) && isEmpty(b)
}, cmp.Ignore())

func isEmpty(v any) bool {
	switch x := v.(type) {
	case []string:
		return len(x) == 0
	case []Passed:
		return len(x) == 0
	}
	return false
}

func client(url, cacheDir string) *vulndata.Client {
	c := vulndata.NewClient(vulndata.NewCache(cacheDir))
	c.OSVURL, c.DepsDevURL = url, url
	c.HTTP = &http.Client{Timeout: 5 * time.Second}
	c.Retries = 0
	return c
}

// TestDecideOnlineThenOffline asks the stand-in once per package (every
// page, exactly once), then makes the same decisions offline from the cache
// with a stand-in that expects nothing.
func TestDecideOnlineThenOffline(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	var scs []*vulntest.Scenario
	for _, c := range decideCases {
		sc, err := vulntest.Load(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	srv := vulntest.New(scs...)
	online := client(srv.URL, cache)
	for _, c := range decideCases {
		t.Run("online/"+c.scenario, func(t *testing.T) {
			d, err := Decide(ctx, online, c.eco, c.name, c.installed)
			checkDecision(t, c, d, err)
			if d.Data.FromCache {
				t.Error("first answer came from the cache")
			}
		})
	}
	srv.Stop()
	srv.Check(t)

	// A second online pass is answered by the fresh cache: no request.
	idle := vulntest.New()
	defer idle.Stop()
	again := client(idle.URL, cache)
	offline := client(idle.URL, cache)
	offline.Offline = true
	for _, c := range decideCases {
		t.Run("cached/"+c.scenario, func(t *testing.T) {
			d, err := Decide(ctx, again, c.eco, c.name, c.installed)
			checkDecision(t, c, d, err)
			if !d.Data.FromCache || !d.Versions.FromCache {
				t.Error("not served from the cache")
			}
		})
		t.Run("offline/"+c.scenario, func(t *testing.T) {
			d, err := Decide(ctx, offline, c.eco, c.name, c.installed)
			checkDecision(t, c, d, err)
		})
	}
	idle.Check(t)
}

// TestOfflineStaleAndMiss: offline serves an entry past its TTL (marked
// stale) and a miss is a *MissError naming what to fetch; online, a stale
// entry is fetched again.
func TestOfflineStaleAndMiss(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sc, _ := vulntest.Load("go_text")
	srv := vulntest.New(sc)
	c := client(srv.URL, dir)
	if _, err := Decide(ctx, c, vulndata.Go, "golang.org/x/text", "v0.3.7"); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	srv.Check(t)

	idle := vulntest.New()
	defer idle.Stop()
	off := client(idle.URL, dir)
	off.Offline = true
	off.Cache.Now = func() time.Time { return time.Now().Add(7 * time.Hour) }
	d, err := Decide(ctx, off, vulndata.Go, "golang.org/x/text", "v0.3.7")
	if err != nil || !d.Data.Stale || !d.Versions.Stale {
		t.Fatalf("stale offline: %v, stale=%v/%v", err, d.Data.Stale, d.Versions.Stale)
	}
	_, err = Decide(ctx, off, vulndata.NPM, "left-pad", "1.0.0")
	var miss *vulndata.MissError
	if !errors.As(err, &miss) || !errors.Is(err, vulndata.ErrOfflineMiss) || miss.Name != "left-pad" {
		t.Fatalf("offline miss: %v", err)
	}
	idle.Check(t)

	// Online past the TTL: asked again (the stand-in expects it once more).
	srv2 := vulntest.New(sc)
	defer srv2.Stop()
	on := client(srv2.URL, dir)
	on.Cache.Now = off.Cache.Now
	if _, err := Decide(ctx, on, vulndata.Go, "golang.org/x/text", "v0.3.7"); err != nil {
		t.Fatal(err)
	}
	srv2.Check(t)
}

func TestUnreachable(t *testing.T) {
	srv := vulntest.New()
	url := srv.URL
	srv.Stop()
	c := client(url, t.TempDir())
	_, err := Decide(context.Background(), c, vulndata.PyPI, "jinja2", "2.7.2")
	if !errors.Is(err, vulndata.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	// A stand-in refusing (418 on an unexpected request) is not a decision either.
	srv2 := vulntest.New()
	defer srv2.Stop()
	c2 := client(srv2.URL, t.TempDir())
	if _, err := Decide(context.Background(), c2, vulndata.PyPI, "jinja2", "2.7.2"); !errors.Is(err, vulndata.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if p := srv2.Problems(); len(p) != 1 || !strings.HasPrefix(p[0], "unexpected: POST /v1/query") {
		t.Fatalf("problems = %q", p)
	}
}

func TestAlreadySafe(t *testing.T) {
	sc, _ := vulntest.Load("maven_jackson")
	srv := vulntest.New(sc)
	defer srv.Stop()
	d, err := Decide(context.Background(), client(srv.URL, t.TempDir()), vulndata.Maven, "com.fasterxml.jackson.core:jackson-databind", "2.12.6.1")
	if err != nil || d.Outcome != AlreadySafe || d.Target != "" {
		t.Fatalf("%v %+v", err, d)
	}
	srv.Check(t)
}

// Next is where a retry goes after the target was refused on the PR: the
// safe candidates above the target, in order, skipping every one an
// advisory affects or the policy passes over (a pre-release, a deprecated
// release).
func TestDecideNext(t *testing.T) {
	for _, tc := range []struct {
		scenario, name, installed string
		eco                       vulndata.Ecosystem
		target                    string
		next                      []string
	}{
		{scenario: "pypi_jinja2", eco: vulndata.PyPI, name: "Jinja2", installed: "2.7.2", target: "2.8.1", next: []string{"2.9"}},
		{scenario: "npm_scoped", eco: vulndata.NPM, name: "@fixrail-demo/left-pad", installed: "1.1.0", target: "1.2.3", next: []string{"2.0.0"}},
	} {
		d := scenarioDecision(t, tc.scenario, tc.eco, tc.name, tc.installed)
		if d.Target != tc.target {
			t.Fatalf("%s %s: target %q, want %q", tc.name, tc.installed, d.Target, tc.target)
		}
		for i, v := range d.Next {
			pv, _ := tc.eco.Parse(v)
			tv, _ := tc.eco.Parse(d.Target)
			if pv.Compare(tv) <= 0 || (i > 0 && v == d.Next[i-1]) {
				t.Errorf("%s: next %v is not above the target %s in order", tc.name, d.Next, d.Target)
			}
			again := scenarioDecision(t, tc.scenario, tc.eco, tc.name, v)
			if again.Outcome != AlreadySafe {
				t.Errorf("%s: next candidate %s is not safe: %s", tc.name, v, again.Rationale)
			}
			for _, p := range d.PassedOver {
				if p.Version == v {
					t.Errorf("%s: next candidate %s was passed over (%s)", tc.name, v, p.Reason)
				}
			}
		}
		if !cmp.Equal(d.Next, tc.next) {
			t.Errorf("%s %s: next %v, want %v", tc.name, tc.installed, d.Next, tc.next)
		}
	}
}
