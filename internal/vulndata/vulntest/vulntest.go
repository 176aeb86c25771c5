// Package vulntest is a strict local stand-in for OSV and deps.dev, built
// from their documented wire formats: it answers only the requests a
// scenario expects (each exactly once), and its Check fails on any other
// request and on any expected one never made.
package vulntest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/vulndata"
)

//go:embed testdata/*.json
var fixtures embed.FS

// Scenario is one package's answers: OSV's package-wide query pages, in
// order, and deps.dev's GetPackage body.
type Scenario struct {
	Ecosystem string            `json:"ecosystem"`
	Name      string            `json:"name"`
	System    string            `json:"system"`
	OSVPages  []json.RawMessage `json:"osv_pages"`
	DepsDev   json.RawMessage   `json:"depsdev"`
}

// Load reads the named scenario (testdata/<name>.json).
func Load(name string) (*Scenario, error) {
	b, err := fixtures.ReadFile("testdata/" + name + ".json")
	if err != nil {
		return nil, err
	}
	var s Scenario
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// Names lists every scenario.
func Names() []string {
	ents, _ := fixtures.ReadDir("testdata")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	return out
}

type route struct {
	body []byte // the answer
	hits int
}

// Server is the stand-in.
type Server struct {
	*httptest.Server
	mu         sync.Mutex
	routes     map[string]*route // key: METHOD + " " + escaped path + " " + canonical body
	unexpected []string
}

// New starts a stand-in that expects every request of the scenarios.
func New(scenarios ...*Scenario) *Server {
	s := &Server{routes: map[string]*route{}}
	for _, sc := range scenarios {
		s.Expect(sc)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Expect adds a scenario's requests.
func (s *Server) Expect(sc *Scenario) {
	s.mu.Lock()
	defer s.mu.Unlock()
	token := ""
	for _, page := range sc.OSVPages {
		q := map[string]any{"package": map[string]string{"name": sc.Name, "ecosystem": sc.Ecosystem}}
		if token != "" {
			q["page_token"] = token
		}
		body, _ := json.Marshal(q)
		s.routes[key("POST", "/v1/query", body)] = &route{body: page}
		var p struct {
			Next string `json:"next_page_token"`
		}
		json.Unmarshal(page, &p)
		token = p.Next
	}
	if sc.DepsDev != nil {
		path := "/v3/systems/" + sc.System + "/packages/" + strings.ReplaceAll(url.QueryEscape(sc.Name), "+", "%20")
		s.routes[key("GET", path, nil)] = &route{body: sc.DepsDev}
	}
}

// key is a request's identity: its method, its path as sent (so %2F stays
// %2F) and its JSON body in canonical form.
func key(method, path string, body []byte) string {
	canon := ""
	if len(bytes.TrimSpace(body)) > 0 {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			canon = "!" + string(body)
		} else {
			b, _ := json.Marshal(v) // map keys sorted
			canon = string(b)
		}
	}
	return method + " " + path + " " + canon
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	k := key(r.Method, r.URL.EscapedPath(), body)
	s.mu.Lock()
	rt := s.routes[k]
	if rt == nil || rt.hits > 0 {
		what := "unexpected"
		if rt != nil {
			what = "repeated"
		}
		s.unexpected = append(s.unexpected, what+": "+k)
		s.mu.Unlock()
		http.Error(w, `{"code":5,"message":"not expected by the stand-in"}`, http.StatusTeapot)
		return
	}
	rt.hits++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(rt.body)
}

// Problems lists unexpected or repeated requests and expected ones never made.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.unexpected...)
	var missing []string
	for k, r := range s.routes {
		if r.hits == 0 {
			missing = append(missing, "never made: "+k)
		}
	}
	sort.Strings(missing)
	return append(out, missing...)
}

// TB is the part of testing.TB Check needs.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Check fails t for every problem.
func (s *Server) Check(t TB) {
	t.Helper()
	for _, p := range s.Problems() {
		t.Errorf("vulnerability stand-in: %s", p)
	}
}

// Stop closes the server; its routes are kept for Problems.
func (s *Server) Stop() { s.Server.Close() }

// Records decodes the scenario's answers as fixrail's client would return
// them: every page's records, and deps.dev's versions.
func (s *Scenario) Records() ([]vulndata.Vuln, []vulndata.Published, error) {
	var vulns []vulndata.Vuln
	for i, p := range s.OSVPages {
		var page struct{ Vulns []vulndata.Vuln }
		if err := json.Unmarshal(p, &page); err != nil {
			return nil, nil, fmt.Errorf("osv page %d: %w", i, err)
		}
		vulns = append(vulns, page.Vulns...)
	}
	var dd struct {
		Versions []struct {
			VersionKey   struct{ Version string } `json:"versionKey"`
			IsDeprecated bool                     `json:"isDeprecated"`
		}
	}
	if err := json.Unmarshal(s.DepsDev, &dd); err != nil {
		return nil, nil, fmt.Errorf("depsdev: %w", err)
	}
	var pub []vulndata.Published
	for _, v := range dd.Versions {
		pub = append(pub, vulndata.Published{Version: v.VersionKey.Version, Deprecated: v.IsDeprecated})
	}
	return vulns, pub, nil
}
