package gittest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// HTTPRemote serves a bare repository over git's smart-HTTP backend
// (git http-backend), as a forge serves a private repository: a request
// without Basic x-access-token:<token> gets 401, and with readOnly the
// token may fetch but every receive-pack request — the push's ref
// advertisement included — gets 403, as GitHub answers a credential that
// cannot write.
type HTTPRemote struct {
	// URL is the repository's address (serverURL/owner/name).
	URL string
	mu  sync.Mutex
	log []string
}

// ServeHTTP starts an HTTPRemote for bare (a path ending in owner/name, as
// GIT_PROJECT_ROOT is its grandparent) and stops it when t ends.
func ServeHTTP(t testing.TB, bare, token string, readOnly bool) *HTTPRemote {
	t.Helper()
	root := filepath.Dir(filepath.Dir(bare))
	rel, err := filepath.Rel(root, bare)
	if err != nil {
		t.Fatalf("gittest: %v", err)
	}
	Git(t, bare, "config", "http.receivepack", "true")
	backend := filepath.Join(Git(t, "", "--exec-path"), "git-http-backend")
	h := &cgi.Handler{Path: backend, Env: append(env(), "GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=x-access-token")}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	r := &HTTPRemote{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		write := req.URL.Query().Get("service") == "git-receive-pack" || strings.HasSuffix(req.URL.Path, "/git-receive-pack")
		status := 0
		switch {
		case req.Header.Get("Authorization") != want:
			status = http.StatusUnauthorized
			w.Header().Set("WWW-Authenticate", `Basic realm="gittest"`)
		case readOnly && write:
			status = http.StatusForbidden
		}
		r.mu.Lock()
		r.log = append(r.log, fmt.Sprintf("%d %s %s", max(status, 200), req.Method, req.URL.RequestURI()))
		r.mu.Unlock()
		if status != 0 {
			http.Error(w, "gittest: "+http.StatusText(status), status)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/" + filepath.ToSlash(rel)
	return r
}

// Log is every request so far: "status METHOD URI", 200 for one passed to
// the backend.
func (r *HTTPRemote) Log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}
