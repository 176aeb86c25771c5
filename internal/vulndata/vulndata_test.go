package vulndata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPrerelease(t *testing.T) {
	for _, c := range []struct {
		eco  Ecosystem
		v    string
		want bool
	}{
		{NPM, "1.3.0-beta.1", true}, {NPM, "1.3.0", false}, {NPM, "1.3.0+build.5", false},
		{Cargo, "0.3.0-alpha", true}, {Go, "v0.3.8-0.20220509174342-b4bca84b0361", true}, {Go, "v1.2.3", false},
		{PyPI, "2.8.1rc1", true}, {PyPI, "1.0.dev1", true}, {PyPI, "1.0a2", true}, {PyPI, "1.0.post1", false}, {PyPI, "2.8", false},
		{PyPI, "1.0+local.dev", false},
		{Maven, "32.0.0-jre", false}, {Maven, "9.4.56.v20240826", false}, {Maven, "1.0-sp1", false}, {Maven, "5.13.3.202401111512-r", false},
		{Maven, "2.13.0-rc1", true}, {Maven, "3.0.0-M1", true}, {Maven, "1.0-SNAPSHOT", true}, {Maven, "2.0.Beta2", true}, {Maven, "5.0.0.Final", false},
		{RubyGems, "1.17.0.rc1", true}, {RubyGems, "1.16.0-x86_64-linux", false}, {RubyGems, "1.16.5", false},
	} {
		if got := c.eco.IsPrerelease(c.v); got != c.want {
			t.Errorf("%s IsPrerelease(%q) = %v, want %v", c.eco, c.v, got, c.want)
		}
	}
}

func TestOrderAndTraps(t *testing.T) {
	for _, c := range []struct {
		eco  Ecosystem
		a, b string
		want int
	}{
		{Go, "0.3.8", "v0.3.8", 0}, // OSV Go ranges have no v
		{Go, "v0.3.7", "0.3.8", -1},
		{RubyGems, "1.16.0-x86_64-linux", "1.16.0", 0},
		{RubyGems, "1.16.0-arm64-darwin", "1.16.2", -1},
		{PyPI, "2.0", "2.0.0", 0}, {PyPI, "2.8.1rc1", "2.8.1", -1}, {PyPI, "1!0.1", "2.0", 1},
		{Maven, "2.12.6.1", "2.13.0", -1}, {Maven, "2.12.6", "2.12.6.1", -1}, {Maven, "1.0-SNAPSHOT", "1.0", -1},
		{NPM, "1.2.3-beta.1", "1.2.3", -1}, {Cargo, "0.10.0", "0.9.9", 1},
	} {
		a, err := c.eco.Parse(c.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.eco.Parse(c.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Compare(b); got != c.want {
			t.Errorf("%s %s vs %s = %d, want %d", c.eco, c.a, c.b, got, c.want)
		}
	}
	if _, err := Ecosystem("Packagist").Parse("1.0"); err == nil {
		t.Error("unknown ecosystem parsed")
	}
	if _, err := PyPI.Parse(strings.Repeat("1.", 200)); err == nil {
		t.Error("oversized version parsed")
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		eco      Ecosystem
		from, to string
		want     Bump
	}{
		{PyPI, "2.7.2", "2.8.1", Bump{Class: "minor"}},
		{Maven, "2.12.3", "2.12.6.1", Bump{Class: "patch"}},
		{Maven, "2.12.7", "2.12.7.1", Bump{Class: "patch"}},
		{PyPI, "1.0", "1.0.post1", Bump{Class: "other"}},
		{NPM, "0.1.20", "0.2.0", Bump{Class: "minor", Breaking: true}},
		{Go, "v1.4.0", "v1.5.0", Bump{Class: "minor"}},
		{NPM, "1.9.0", "4.0.1", Bump{Class: "major", MajorsCrossed: 3, Breaking: true}},
		{PyPI, "2.0", "1!1.0", Bump{Class: "major", MajorsCrossed: 1, Breaking: true}},
	} {
		if got := c.eco.Distance(c.from, c.to); got != c.want {
			t.Errorf("%s %s→%s = %+v, want %+v", c.eco, c.from, c.to, got, c.want)
		}
	}
}

func mustV(t *testing.T, e Ecosystem, s string) Version {
	t.Helper()
	v, err := e.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEvaluate(t *testing.T) {
	rec := func(eco Ecosystem, name string, a ...Affected) *Vuln { return &Vuln{ID: "X", Affected: a} }
	pkg := func(eco Ecosystem, name string) Package { return Package{Ecosystem: string(eco), Name: name} }
	// F6: last_affected is inclusive.
	h2 := rec(Maven, "h2", Affected{Package: pkg(Maven, "com.h2database:h2"), Ranges: []Range{{Type: "ECOSYSTEM", Events: []Event{{Introduced: "0"}, {LastAffected: "2.1.214"}}}}})
	// Unsorted events, two intervals, and a limit.
	multi := rec(NPM, "m", Affected{Package: pkg(NPM, "m"), Ranges: []Range{{Type: "SEMVER", Events: []Event{{Fixed: "2.0.0"}, {Introduced: "3.0.0"}, {Introduced: "1.0.0"}, {Limit: "3.5.0"}}}}})
	// Ecosystem with a ":suffix", PyPI name normalisation, versions[] only.
	listed := rec(PyPI, "Foo_Bar", Affected{Package: Package{Ecosystem: "PyPI:extra", Name: "foo.bar"}, Versions: []string{"1.0"}})
	gitOnly := rec(PyPI, "p", Affected{Package: pkg(PyPI, "p"), Ranges: []Range{{Type: "GIT", Events: []Event{{Introduced: "0"}, {Fixed: "abc"}}}}})
	badBound := rec(PyPI, "p", Affected{Package: pkg(PyPI, "p"), Ranges: []Range{{Type: "ECOSYSTEM", Events: []Event{{Introduced: "not a version!"}}}}})
	for _, c := range []struct {
		r    *Vuln
		eco  Ecosystem
		name string
		v    string
		want Verdict
	}{
		{h2, Maven, "com.h2database:h2", "2.1.214", IsAffected},
		{h2, Maven, "com.h2database:h2", "2.1.210", IsAffected},
		{h2, Maven, "com.h2database:h2", "2.2.220", Unaffected},
		{h2, Maven, "com.h2database:other", "2.1.210", NoRange},
		{multi, NPM, "m", "0.9.0", Unaffected},
		{multi, NPM, "m", "1.5.0", IsAffected},
		{multi, NPM, "m", "2.0.0", Unaffected},
		{multi, NPM, "m", "3.1.0", IsAffected},
		{multi, NPM, "m", "3.5.0", Unaffected}, // limit is exclusive
		{listed, PyPI, "Foo_Bar", "1.0.0", IsAffected},
		{listed, PyPI, "foo-bar", "1.1", Unaffected},
		{gitOnly, PyPI, "p", "1.0", NoRange},
		{badBound, PyPI, "p", "1.0", NoRange},
	} {
		if got := c.r.Evaluate(c.eco, c.name, mustV(t, c.eco, c.v)); got != c.want {
			t.Errorf("%s %s %s: %v, want %v", c.eco, c.name, c.v, got, c.want)
		}
	}
}

func TestCacheAtomicAndKeyed(t *testing.T) {
	dir := t.TempDir()
	c := NewCache(dir)
	c.Now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	if err := c.Put("osv", PyPI, "Jinja2", []Vuln{{ID: "A"}}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || strings.HasPrefix(ents[0].Name(), ".tmp") {
		t.Fatalf("cache dir holds %v", ents)
	}
	if _, ok := c.get("osv", PyPI, "jinja2"); !ok {
		t.Fatal("normalised name missed")
	}
	// An entry copied into another key's place is not served.
	b, _ := os.ReadFile(c.File("osv", PyPI, "jinja2"))
	os.WriteFile(c.File("osv", PyPI, "other"), b, 0o644)
	if _, ok := c.get("osv", PyPI, "other"); ok {
		t.Fatal("entry for another key served")
	}
	// A FIFO in an entry's place is a miss, never a stall.
	if err := mkfifo(c.File("osv", NPM, "x")); err == nil {
		if _, ok := c.get("osv", NPM, "x"); ok {
			t.Fatal("FIFO served")
		}
	}
	var e entry
	json.Unmarshal(b, &e)
	if e.FetchedAt != c.Now() || filepath.Dir(c.File("osv", PyPI, "../../x")) != dir {
		t.Fatal("entry metadata or key path wrong")
	}
}

func TestCheckBaseURL(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080", "https://api.osv.dev", "https://proxy.example/osv/"} {
		if CheckBaseURL(ok) != nil {
			t.Errorf("%s refused", ok)
		}
	}
	for _, bad := range []string{"", "file:///etc", "api.osv.dev", "https://u:p@h", "https://h/?q=1", "ftp://h"} {
		if CheckBaseURL(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPathComponent(t *testing.T) {
	for in, want := range map[string]string{
		"@colors/colors":                   "%40colors%2Fcolors",
		"org.apache.commons:commons-lang3": "org.apache.commons%3Acommons-lang3",
		"github.com/gin-gonic/gin":         "github.com%2Fgin-gonic%2Fgin",
		"a b":                              "a%20b",
	} {
		if got := pathComponent(in); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}

// TestOfflineNeverCallsOut: even a direct query (bypassing the cache
// lookup) refuses to make a request offline.
func TestOfflineNeverCallsOut(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	c := NewClient(nil)
	c.OSVURL, c.DepsDevURL, c.Offline = srv.URL, srv.URL, true
	if _, err := c.queryOSV(context.Background(), NPM, "x"); !errors.Is(err, ErrOfflineMiss) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := c.Versions(context.Background(), NPM, "x"); !errors.Is(err, ErrOfflineMiss) {
		t.Fatalf("err = %v", err)
	}
	if hits != 0 {
		t.Fatalf("%d requests made offline", hits)
	}
}

// TestPagesBounded: a service that keeps sending tokens is cut off.
func TestPagesBounded(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		fmt.Fprintf(w, `{"next_page_token": "t%d"}`, n)
	}))
	defer srv.Close()
	c := NewClient(nil)
	c.OSVURL = srv.URL
	if _, err := c.queryOSV(context.Background(), NPM, "x"); !errors.Is(err, ErrUnreachable) || n != maxPages {
		t.Fatalf("err = %v after %d pages", err, n)
	}
}

// TestCacheKeepsTheAnswersTime: the time an online answer reports is the
// time its cache entry keeps, so the offline replay of a decision names
// the same fetched_at (the clock here moves on every reading).
func TestCacheKeepsTheAnswersTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/query" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		fmt.Fprint(w, `{"vulns": [{"id": "GHSA-aaaa-bbbb-cccc", "modified": "2026-01-01T00:00:00Z"}]}`)
	}))
	defer srv.Close()
	tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cache := NewCache(t.TempDir())
	cache.Now = func() time.Time { tick = tick.Add(time.Microsecond); return tick }
	c := NewClient(cache)
	c.OSVURL = srv.URL
	_, online, err := c.Vulns(context.Background(), NPM, "x")
	if err != nil || online.FromCache {
		t.Fatalf("online: %+v, %v", online, err)
	}
	c.Offline = true
	_, offline, err := c.Vulns(context.Background(), NPM, "x")
	if err != nil || !offline.FromCache {
		t.Fatalf("offline: %+v, %v", offline, err)
	}
	if !offline.FetchedAt.Equal(online.FetchedAt) {
		t.Errorf("online answer fetched at %s, its cache entry says %s", online.FetchedAt, offline.FetchedAt)
	}
}
