// Package githubtest is a strict fake of the GitHub REST API for tests: an
// httptest server that answers only the requests a test told it to expect,
// fails the test on any other request and on any expected one never made,
// and records every call so a test can assert what never happened (no
// merge, no ready-for-review, no ref update, no force). Replies are built
// from the documented response formats (see the helpers in formats.go).
package githubtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Prefix is where the fake mounts the API, as GitHub Enterprise Server does:
// a client that drops the base URL's path is caught at once.
const Prefix = "/api/v3"

// Token is the token the fake requires on every request. Not a credential:
// a fixed test value with no real format.
const Token = "githubtest-token-not-a-secret"

// Server is the fake. Create it with New.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	mu    sync.Mutex
	exp   []*Expectation
	calls []Call
}

// Call is one request the fake received.
type Call struct {
	Method, Path string // Path without Prefix
	Query        url.Values
	Body         []byte
	Auth         string
	Expected     bool
}

func (c Call) String() string {
	s := c.Method + " " + c.Path
	if len(c.Query) > 0 {
		s += "?" + c.Query.Encode()
	}
	return s
}

// Expectation is one request the test expects and the reply to it.
type Expectation struct {
	method, path string
	query        url.Values
	status       int
	body         string
	header       http.Header
	times        int // -1: any number, including none
	check        func(t testing.TB, body []byte)
	made         int
	// srv guards the fields: a test may still be adding to an expectation
	// while the server answers another request.
	srv *Server
}

// New starts a fake for t; it stops and checks its expectations when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		s.verify()
	})
	return s
}

// URL is the API base URL to configure a client with (ends in "/").
func (s *Server) URL() string { return s.srv.URL + Prefix + "/" }

// On expects one request: method and path (without Prefix; the query is
// matched with Query). It replies 200 with "{}" until told otherwise.
// Expectations for the same request are used in the order they were made.
func (s *Server) On(method, path string) *Expectation {
	e := &Expectation{method: method, path: path, status: http.StatusOK, body: "{}", header: http.Header{}, times: 1, query: url.Values{}, srv: s}
	s.mu.Lock()
	s.exp = append(s.exp, e)
	s.mu.Unlock()
	return e
}

// Reply sets the status and JSON body.
func (e *Expectation) Reply(status int, body string) *Expectation {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	e.status, e.body = status, body
	return e
}

// Header adds a response header.
func (e *Expectation) Header(k, v string) *Expectation {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	e.header.Add(k, v)
	return e
}

// Query requires a query parameter to have this value.
func (e *Expectation) Query(k, v string) *Expectation {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	e.query.Set(k, v)
	return e
}

// Times expects the request n times (the default is once).
func (e *Expectation) Times(n int) *Expectation {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	e.times = n
	return e
}

// AnyTimes allows the request any number of times, none included.
func (e *Expectation) AnyTimes() *Expectation {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	e.times = -1
	return e
}

// Check runs fn on the request body when the request arrives.
func (e *Expectation) Check(fn func(t testing.TB, body []byte)) *Expectation {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	e.check = fn
	return e
}

func (e *Expectation) matches(method, path string, q url.Values) bool {
	if e.method != method || !pathMatches(e.path, path) || (e.times >= 0 && e.made >= e.times) {
		return false
	}
	for k := range e.query {
		if q.Get(k) != e.query.Get(k) {
			return false
		}
	}
	return true
}

// SHA in an expected path stands for any full commit id: a scenario through
// the real binary cannot know the commit fixrail will make.
const SHA = "{sha}"

var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

func pathMatches(want, got string) bool {
	if !strings.Contains(want, SHA) {
		return want == got
	}
	ws, gs := strings.Split(want, "/"), strings.Split(got, "/")
	if len(ws) != len(gs) {
		return false
	}
	for i := range ws {
		if ws[i] == SHA {
			if !shaRE.MatchString(gs[i]) {
				return false
			}
		} else if ws[i] != gs[i] {
			return false
		}
	}
	return true
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	path, inPrefix := strings.CutPrefix(r.URL.Path, Prefix)
	call := Call{Method: r.Method, Path: path, Query: r.URL.Query(), Body: body, Auth: r.Header.Get("Authorization")}
	s.mu.Lock()
	var e *Expectation
	if inPrefix {
		for _, x := range s.exp {
			if x.matches(r.Method, path, call.Query) {
				e = x
				break
			}
		}
	}
	// The reply is copied under the lock, so the test may go on adding
	// expectations while this request is answered.
	var reply struct {
		status int
		body   string
		header http.Header
		check  func(t testing.TB, body []byte)
	}
	if e != nil {
		e.made++
		call.Expected = true
		reply.status, reply.body, reply.header, reply.check = e.status, e.body, e.header.Clone(), e.check
	}
	s.calls = append(s.calls, call)
	s.mu.Unlock()

	if why := Forbidden(call); why != "" {
		s.t.Errorf("githubtest: forbidden request %s: %s", call, why)
	}
	if call.Auth != "Bearer "+Token {
		s.t.Errorf("githubtest: %s without the token (Authorization %q)", call, redactAuth(call.Auth))
	}
	if e == nil {
		s.t.Errorf("githubtest: unexpected request %s (body %q)", call, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(599)
		fmt.Fprint(w, `{"message":"githubtest: unexpected request"}`)
		return
	}
	if reply.check != nil {
		reply.check(s.t, body)
	}
	for k, vs := range reply.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(reply.status)
	io.WriteString(w, reply.body)
}

func redactAuth(a string) string {
	if a == "" {
		return ""
	}
	return "<set, not the test token>"
}

func (s *Server) verify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.exp {
		if e.times >= 0 && e.made < e.times {
			s.t.Errorf("githubtest: expected %s %s%s %d time(s), made %d", e.method, e.path, queryString(e.query), e.times, e.made)
		}
	}
}

func queryString(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Calls returns every request received so far, expected or not.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Count is how many requests had this method and path.
func (s *Server) Count(method, path string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Method == method && c.Path == path {
			n++
		}
	}
	return n
}

// forbidden are the requests fixrail must never make, whatever a test
// expects: merging, marking ready, moving or deleting refs, changing
// protection or repository settings, deciding a Dependabot, code-scanning
// or secret-scanning alert (a human's call), and GraphQL (where
// markPullRequestReadyForReview and mergePullRequest live).
var forbidden = []struct {
	method string
	re     *regexp.Regexp
	why    string
}{
	{"PUT", regexp.MustCompile(`^/repos/[^/]+/[^/]+/pulls/\d+/merge$`), "merges a pull request"},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/merges$`), "merges a branch"},
	{"PUT", regexp.MustCompile(`^/repos/[^/]+/[^/]+/pulls/\d+/update-branch$`), "updates a PR branch"},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/pulls/\d+/reviews`), "reviews (approves) a pull request"},
	{"", regexp.MustCompile(`^/repos/[^/]+/[^/]+/git/refs`), "writes a ref"},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/git/`), "writes git objects"},
	{"", regexp.MustCompile(`^/repos/[^/]+/[^/]+/contents/`), "writes a file through the API"},
	{"", regexp.MustCompile(`^/repos/[^/]+/[^/]+/branches/.+/(protection|rename)`), "changes a branch"},
	{"", regexp.MustCompile(`^/repos/[^/]+/[^/]+/rulesets`), "changes a ruleset"},
	{"PATCH", regexp.MustCompile(`^/repos/[^/]+/[^/]+$`), "changes the repository"},
	{"", regexp.MustCompile(`^/repos/[^/]+/[^/]+/actions/permissions`), "changes Actions settings"},
	{"POST", regexp.MustCompile(`^/graphql$`), "GraphQL (ready-for-review and merge mutations)"},
	{"PATCH", regexp.MustCompile(`^/repos/[^/]+/[^/]+/dependabot/alerts/\d+$`), "dismisses or reopens a Dependabot alert"},
	{"PATCH", regexp.MustCompile(`^/repos/[^/]+/[^/]+/code-scanning/alerts/\d+$`), "dismisses or reopens a code-scanning alert"},
	{"", regexp.MustCompile(`^/repos/[^/]+/[^/]+/code-scanning/alerts/\d+/autofix`), "asks GitHub to autofix a code-scanning alert"},
	{"PATCH", regexp.MustCompile(`^/repos/[^/]+/[^/]+/secret-scanning/alerts/\d+$`), "resolves or reopens a secret-scanning alert"},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/secret-scanning/push-protection-bypasses$`), "bypasses push protection"},
}

// Forbidden says why a call is one fixrail must never make, or "". A PATCH of
// a pull request is forbidden when it sets draft (only false is possible
// over REST), state, base or head.
func Forbidden(c Call) string {
	for _, f := range forbidden {
		if (f.method == "" && c.Method != "GET") || f.method == c.Method {
			if f.re.MatchString(c.Path) {
				return f.why
			}
		}
	}
	if c.Method == "PATCH" && regexp.MustCompile(`^/repos/[^/]+/[^/]+/pulls/\d+$`).MatchString(c.Path) {
		for _, k := range []string{`"draft"`, `"state"`, `"base"`, `"head"`} {
			if bytes.Contains(c.Body, []byte(k)) {
				return "edits a pull request's " + strings.Trim(k, `"`)
			}
		}
	}
	if c.Method == "DELETE" {
		return "deletes something"
	}
	return ""
}
