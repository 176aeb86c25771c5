package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// npmregistry CACHE PKG=V1,V2,... [PKG=...]: fill the npm cache CACHE
// (npm_config_cache) the way a user does before going offline — real
// `npm cache add PKG@V` for every listed version — from a strict local
// stand-in for the npm registry that publishes exactly those versions, then
// stop the stand-in: a later request from npm can only fail. The registry's
// URL goes in $NPM_REGISTRY (npm keys its cache by URL, so an offline npm
// must be pointed at the same registry to find what was cached).
//
// The stand-in serves the registry's documented formats: a packument at
// /@scope%2fname (name, dist-tags, versions with dist.tarball, dist.shasum
// and dist.integrity, time) and each tarball at
// /@scope/name/-/name-V.tgz (package/package.json inside). Any other
// request, or any method but GET, fails the scenario.
func cmdNPMRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: npmregistry CACHE PKG=V1,V2,... [PKG=...]")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		ts.Fatalf("npmregistry: npm is not on PATH (scripts/test installs it)")
	}
	reg := &npmRegistry{packuments: map[string][]byte{}, tarballs: map[string][]byte{}}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	base := srv.URL + "/"
	var specs []string
	for _, a := range args[1:] {
		name, vs, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(name, "@") || strings.Count(name, "/") != 1 || vs == "" {
			ts.Fatalf("npmregistry: %q is not @scope/name=V1,V2", a)
		}
		reg.publish(srv.URL, name, strings.Split(vs, ","))
		for _, v := range strings.Split(vs, ",") {
			specs = append(specs, name+"@"+v)
		}
	}
	cache := ts.MkAbs(args[0])
	for _, spec := range specs {
		cmd := exec.Command("npm", "cache", "add", spec)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = append(os.Environ(),
			"HOME="+ts.Getenv("HOME"), "npm_config_cache="+cache, "npm_config_registry="+base,
			"npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			ts.Fatalf("npm cache add %s: %v\n%s", spec, err, out)
		}
	}
	srv.Close()
	if err := reg.unexpected(); err != "" {
		ts.Fatalf("npmregistry: %s", err)
	}
	ts.Setenv("NPM_REGISTRY", base)
}

type npmRegistry struct {
	mu         sync.Mutex
	packuments map[string][]byte // escaped path → JSON
	tarballs   map[string][]byte // path → .tgz
	bad        []string
}

func (r *npmRegistry) unexpected() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.bad, "; ")
}

// publish lays out name's packument and tarballs for versions, the last
// being dist-tags.latest.
func (r *npmRegistry) publish(srvURL, name string, versions []string) {
	// The server is already listening: its handler reads what this writes.
	r.mu.Lock()
	defer r.mu.Unlock()
	short := path.Base(name)
	vs := map[string]any{}
	times := map[string]string{"created": "2026-01-01T00:00:00.000Z", "modified": "2026-01-01T00:00:00.000Z"}
	for i, v := range versions {
		tgz := npmTarball(name, v)
		tpath := "/" + name + "/-/" + short + "-" + v + ".tgz"
		r.tarballs[tpath] = tgz
		s1, s512 := sha1.Sum(tgz), sha512.Sum512(tgz)
		vs[v] = map[string]any{
			"name": name, "version": v,
			"dist": map[string]any{
				"tarball":   srvURL + tpath,
				"shasum":    hex.EncodeToString(s1[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
			},
		}
		times[v] = time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")
	}
	doc, _ := json.Marshal(map[string]any{
		"name":      name,
		"dist-tags": map[string]string{"latest": versions[len(versions)-1]},
		"versions":  vs,
		"time":      times,
	})
	r.packuments[strings.ToLower("/"+url.PathEscape(name))] = doc
}

func (r *npmRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method == http.MethodGet {
		// npm escapes a scoped name's slash; the lookup is by the exact
		// escaped path it sent.
		if doc, ok := r.packuments[strings.ToLower(req.URL.EscapedPath())]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write(doc)
			return
		}
		if tgz, ok := r.tarballs[req.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(tgz)
			return
		}
	}
	r.bad = append(r.bad, fmt.Sprintf("unexpected %s %s", req.Method, req.URL.RequestURI()))
	http.Error(w, "not served by the stand-in", http.StatusNotFound)
}

// npmTarball is a package tarball as npm packs one: package/package.json.
// The bytes are deterministic (no timestamps), so integrity is stable.
func npmTarball(name, version string) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	pj := fmt.Sprintf("{\"name\": %q, \"version\": %q}\n", name, version)
	tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(pj)), Typeflag: tar.TypeReg})
	tw.Write([]byte(pj))
	tw.Close()
	gz.Close()
	return b.Bytes()
}
