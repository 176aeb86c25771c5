package githubtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps failures instead of reporting them,
// so the fake's own strictness can be tested.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) finish() []string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r.errs
}

func get(t *testing.T, url, token string) int {
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestStrict(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *Server)
		want []string // substrings of the failures, in order
	}{
		{name: "expected and made", run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r").Reply(200, Repository("o", "r", false, true, false))
			if got := get(t, s.URL()+"repos/o/r", Token); got != 200 {
				t.Errorf("status %d", got)
			}
		}},
		{name: "unexpected", want: []string{"unexpected request GET /repos/o/r/pulls"}, run: func(t *testing.T, s *Server) {
			if got := get(t, s.URL()+"repos/o/r/pulls", Token); got != 599 {
				t.Errorf("status %d, want 599", got)
			}
		}},
		{name: "unexpected alert", want: []string{"unexpected request GET /repos/o/r/dependabot/alerts/4"}, run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r/dependabot/alerts/3").Reply(200, DependabotAlert("o", "r", Alert{Number: 3, State: "open", Ecosystem: "pip", Package: "requests", GHSA: "GHSA-2222-3333-4444"})).AnyTimes()
			if got := get(t, s.URL()+"repos/o/r/dependabot/alerts/4", Token); got != 599 {
				t.Errorf("status %d, want 599", got)
			}
		}},
		{name: "expected, never made", want: []string{"expected GET /repos/o/r 1 time(s), made 0"}, run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r")
		}},
		{name: "made too often", want: []string{"unexpected request GET /repos/o/r"}, run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r")
			get(t, s.URL()+"repos/o/r", Token)
			get(t, s.URL()+"repos/o/r", Token)
		}},
		{name: "outside the prefix", want: []string{"unexpected request GET /repos/o/r", "expected GET /repos/o/r"}, run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r")
			get(t, strings.TrimSuffix(s.URL(), Prefix+"/")+"/repos/o/r", Token)
		}},
		{name: "no token", want: []string{"without the token"}, run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r")
			get(t, s.URL()+"repos/o/r", "")
		}},
		{name: "query must match", want: []string{"unexpected request GET /repos/o/r/pulls?state=closed", "expected GET /repos/o/r/pulls?state=open"}, run: func(t *testing.T, s *Server) {
			s.On("GET", "/repos/o/r/pulls").Query("state", "open")
			get(t, s.URL()+"repos/o/r/pulls?state=closed", Token)
		}},
		{name: "forbidden even when expected", want: []string{"forbidden request PUT /repos/o/r/pulls/1/merge"}, run: func(t *testing.T, s *Server) {
			s.On("PUT", "/repos/o/r/pulls/1/merge")
			req, _ := http.NewRequest("PUT", s.URL()+"repos/o/r/pulls/1/merge", nil)
			req.Header.Set("Authorization", "Bearer "+Token)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			s := New(rec)
			tc.run(t, s)
			errs := rec.finish()
			if len(errs) != len(tc.want) {
				t.Fatalf("failures = %q, want %d like %q", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i], w) {
					t.Errorf("failure %d = %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestForbidden(t *testing.T) {
	for _, tc := range []struct {
		method, path, body string
		forbidden          bool
	}{
		{"PUT", "/repos/o/r/pulls/7/merge", "", true},
		{"POST", "/repos/o/r/merges", "", true},
		{"POST", "/graphql", `{"query":"mutation{markPullRequestReadyForReview}"}`, true},
		{"PATCH", "/repos/o/r/pulls/7", `{"draft":false}`, true},
		{"PATCH", "/repos/o/r/pulls/7", `{"base":"release"}`, true},
		{"PATCH", "/repos/o/r/git/refs/heads/main", `{"sha":"x","force":true}`, true},
		{"POST", "/repos/o/r/git/refs", `{"ref":"refs/heads/main"}`, true},
		{"DELETE", "/repos/o/r/git/refs/heads/fixrail/gh-1", "", true},
		{"PUT", "/repos/o/r/branches/main/protection", "", true},
		{"DELETE", "/repos/o/r/branches/main/protection", "", true},
		{"POST", "/repos/o/r/pulls/7/reviews", `{"event":"APPROVE"}`, true},
		{"PUT", "/repos/o/r/contents/README.md", "", true},
		{"PATCH", "/repos/o/r", `{"allow_auto_merge":true}`, true},
		{"PUT", "/repos/o/r/actions/permissions/workflow", "", true},
		{"DELETE", "/repos/o/r/issues/1/labels/x", "", true},
		{"PATCH", "/repos/o/r/dependabot/alerts/3", `{"state":"dismissed","dismissed_reason":"tolerable_risk"}`, true},
		{"GET", "/repos/o/r/dependabot/alerts/3", "", false},
		{"PATCH", "/repos/o/r/code-scanning/alerts/12", `{"state":"dismissed","dismissed_reason":"false positive"}`, true},
		{"POST", "/repos/o/r/code-scanning/alerts/12/autofix", "", true},
		{"POST", "/repos/o/r/code-scanning/alerts/12/autofix/commits", `{"target_ref":"refs/heads/x"}`, true},
		{"GET", "/repos/o/r/code-scanning/alerts/12", "", false},
		{"PATCH", "/repos/o/r/secret-scanning/alerts/3", `{"state":"resolved","resolution":"revoked"}`, true},
		{"POST", "/repos/o/r/secret-scanning/push-protection-bypasses", `{"reason":"used_in_tests"}`, true},
		{"GET", "/repos/o/r/secret-scanning/alerts/3", "", false},
		{"POST", "/repos/o/r/pulls", `{"draft":true}`, false},
		{"PATCH", "/repos/o/r/pulls/7", `{"body":"x"}`, false},
		{"GET", "/repos/o/r/branches/main/protection", "", false},
		{"GET", "/repos/o/r/rulesets", "", false},
		{"GET", "/repos/o/r/actions/permissions/workflow", "", false},
		{"POST", "/repos/o/r/issues/1/comments", `{"body":"x"}`, false},
		{"POST", "/repos/o/r/labels", `{"name":"x"}`, false},
	} {
		got := Forbidden(Call{Method: tc.method, Path: tc.path, Body: []byte(tc.body)}) != ""
		if got != tc.forbidden {
			t.Errorf("Forbidden(%s %s %s) = %v, want %v", tc.method, tc.path, tc.body, got, tc.forbidden)
		}
	}
}

func TestPathMatchesSHA(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"/repos/o/r/commits/{sha}/status", "/repos/o/r/commits/" + sha + "/status", true},
		{"/repos/o/r/commits/{sha}/status", "/repos/o/r/commits/main/status", false},
		{"/repos/o/r/commits/{sha}/status", "/repos/o/r/commits/" + sha[:39] + "/status", false},
		{"/repos/o/r/commits/{sha}/status", "/repos/o/r/commits/" + sha + "/x/status", false},
		{"/repos/o/r/commits/{sha}/status", "/repos/o/x/commits/" + sha + "/status", false},
		{"/repos/o/r/pulls", "/repos/o/r/pulls", true},
		{"/repos/o/r/pulls", "/repos/o/r/pulls/1", false},
	} {
		if got := pathMatches(tc.want, tc.got); got != tc.ok {
			t.Errorf("pathMatches(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
