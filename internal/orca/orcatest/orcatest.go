// Package orcatest is a strict stand-in for Orca's serving-layer query,
// built from the shapes Orca's public harness uses: it answers only the
// queries a test expects (POST /api/serving-layer/query with the token),
// fails the test on any other request and on any expected one never made.
package orcatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Token is the token the stand-in requires. Not a credential.
const Token = "orcatest-token-not-a-secret"

// Server is the stand-in.
type Server struct {
	t   testing.TB
	srv *httptest.Server
	mu  sync.Mutex
	exp []*expect
}

type expect struct {
	repo   string
	id     string // "" for the list of open alerts
	start  int
	status int
	body   string
	made   bool
}

// New starts a stand-in for t; it checks its expectations when t ends.
func New(t testing.TB) *Server {
	s := &Server{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, e := range s.exp {
			if !e.made {
				t.Errorf("orcatest: expected the alerts query of %s (alert %q) from %d, never made", e.repo, e.id, e.start)
			}
		}
	})
	return s
}

// URL is the API base.
func (s *Server) URL() string { return s.srv.URL }

// OnAlerts expects one alerts query for repo starting at start, answered
// with status and body.
func (s *Server) OnAlerts(repo string, start, status int, body string) {
	s.mu.Lock()
	s.exp = append(s.exp, &expect{repo: repo, start: start, status: status, body: body})
	s.mu.Unlock()
}

// OnAlert expects one query for alert id of repo.
func (s *Server) OnAlert(repo, id string, status int, body string) {
	s.mu.Lock()
	s.exp = append(s.exp, &expect{repo: repo, id: id, status: status, body: body})
	s.mu.Unlock()
}

// query is the part of the request the stand-in checks.
type query struct {
	Query struct {
		Models []string `json:"models"`
		Type   string   `json:"type"`
		With   struct {
			Operator string            `json:"operator"`
			Values   []json.RawMessage `json:"values"`
		} `json:"with"`
	} `json:"query"`
	Select       []string `json:"select"`
	Limit        int      `json:"limit"`
	StartAtIndex *int     `json:"start_at_index"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	fail := func(format string, a ...any) {
		s.t.Errorf("orcatest: "+format, a...)
		w.WriteHeader(599)
		fmt.Fprint(w, `{"error":"orcatest: unexpected request"}`)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/api/serving-layer/query" {
		fail("unexpected request %s %s", r.Method, r.URL.Path)
		return
	}
	if r.Header.Get("Authorization") != "TOKEN "+Token {
		fail("a query without the token")
		return
	}
	var q query
	if err := json.Unmarshal(body, &q); err != nil || q.StartAtIndex == nil || len(q.Query.Models) != 1 || q.Query.Models[0] != "Alert" || q.Query.Type != "object_set" || q.Limit <= 0 || len(q.Select) == 0 {
		fail("not an alerts query: %s", body)
		return
	}
	// The repository filter, an Inventories has-clause naming it, and an
	// AlertId clause for one alert; open status either way.
	repo, id, open := "", "", false
	for _, v := range q.Query.With.Values {
		var c struct {
			Type   string   `json:"type"`
			Key    string   `json:"key"`
			Values []string `json:"values"`
			Keys   []string `json:"keys"`
			With   *struct {
				Key    string   `json:"key"`
				Values []string `json:"values"`
			} `json:"with"`
		}
		if json.Unmarshal(v, &c) != nil {
			continue
		}
		switch {
		case len(c.Keys) == 1 && c.Keys[0] == "Inventories" && c.With != nil && c.With.Key == "Name" && len(c.With.Values) == 1:
			repo = c.With.Values[0]
		case c.Key == "AlertId" && c.Type == "str" && len(c.Values) == 1:
			id = c.Values[0]
		case c.Key == "Status":
			open = true
		}
	}
	if q.Query.With.Operator != "and" || !open {
		fail("a query that is not for open alerts: %s", body)
		return
	}
	s.mu.Lock()
	var e *expect
	for _, x := range s.exp {
		if !x.made && x.repo == repo && x.id == id && x.start == *q.StartAtIndex {
			e = x
			break
		}
	}
	if e != nil {
		e.made = true
	}
	s.mu.Unlock()
	if e == nil {
		fail("unexpected alerts query of %q (alert %q) from %d", repo, id, *q.StartAtIndex)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	io.WriteString(w, e.body)
}

// A describes one alert for Alerts.
type A struct {
	ID, Type, Risk, Category, Source, Status string
	Description, Recommendation              string
	FeatureType                              string
	StartLine                                int
	Snippet                                  []string
	CVEs                                     []string
}

// Alerts is a serving-layer response: each field wrapped as {"value": …}.
func Alerts(as ...A) string {
	data := []map[string]any{}
	for _, a := range as {
		v := func(x any) map[string]any { return map[string]any{"value": x} }
		rf := map[string]any{"feature_type": a.FeatureType, "code_snippet": a.Snippet, "ai_triage": map[string]any{"verdict": "true_positive", "explanation": "synthetic"}}
		if a.StartLine > 0 {
			rf["position"] = map[string]any{"start_line": a.StartLine, "end_line": a.StartLine}
		}
		cves := a.CVEs
		if cves == nil {
			cves = []string{}
		}
		data = append(data, map[string]any{"name": a.ID, "type": "Alert", "data": map[string]any{
			"AlertId": v(a.ID), "AlertType": v(a.Type), "RiskLevel": v(a.Risk), "Category": v(a.Category), "Source": v(a.Source),
			"Status": v(a.Status), "Description": v(a.Description), "Recommendation": v(a.Recommendation), "RiskFindings": v(rf),
			"Labels": v([]string{}), "CveIds": v(cves), "OrcaScore": v(5.5),
		}})
	}
	b, _ := json.Marshal(map[string]any{"status": "success", "data": data})
	return string(b)
}

// UnknownField is the 400 Orca gives a malformed query.
const UnknownField = `{"status":"failure","error":"Unknown field 'CveIds'"}`
