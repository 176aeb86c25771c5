package cve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/vulndata"
)

const exampleDir = "../../examples/cve-go"

var fakelibVersions = []string{"v1.0.0", "v1.0.1", "v1.0.2", "v1.1.0-rc.1", "v1.1.0"}

const fakelibMod = "module example.com/fakelib\n\ngo 1.21\n"

func fakelibSource(v string) string {
	return "// Package fakelib is a tiny module made for fixrail's CVE demo.\npackage fakelib\n\n// Greet greets name (version " + v + ").\nfunc Greet(name string) string { return \"hello, \" + name + \" from fakelib " + v + "\" }\n"
}

// exampleFiles is every generated file of the example: the file:// proxy,
// the cache and go.sum, path → content.
func exampleFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var list strings.Builder
	for _, v := range fakelibVersions {
		var zb bytes.Buffer
		files := []modzip.File{memFile{"go.mod", fakelibMod}, memFile{"lib.go", fakelibSource(v)}}
		if err := modzip.Create(&zb, module.Version{Path: "example.com/fakelib", Version: v}, files); err != nil {
			t.Fatal(err)
		}
		dir := "goproxy/example.com/fakelib/@v/"
		out[dir+v+".zip"] = zb.Bytes()
		out[dir+v+".mod"] = []byte(fakelibMod)
		out[dir+v+".info"] = []byte(`{"Version":"` + v + `","Time":"2026-01-01T00:00:00Z"}` + "\n")
		list.WriteString(v + "\n")
	}
	out["goproxy/example.com/fakelib/@v/list"] = []byte(list.String())
	zipHash := hashZip(t, out["goproxy/example.com/fakelib/@v/v1.0.0.zip"])
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(fakelibMod)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The repository archive, with the go.sum its go.mod needs.
	ar, err := txtar.ParseFile(filepath.Join(exampleDir, "repo.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ar.Files {
		if ar.Files[i].Name == "go.sum" {
			ar.Files[i].Data = []byte("example.com/fakelib v1.0.0 " + zipHash + "\nexample.com/fakelib v1.0.0/go.mod " + modHash + "\n")
		}
	}
	out["repo.txtar"] = txtar.Format(ar)

	// The cache, as vulndata writes it, fetched at a fixed time.
	var vulns []vulndata.Vuln
	var pub []vulndata.Published
	readJSON(t, filepath.Join(exampleDir, "data/osv.json"), &vulns)
	readJSON(t, filepath.Join(exampleDir, "data/depsdev.json"), &pub)
	tmp := t.TempDir()
	c := vulndata.NewCache(tmp)
	c.Now = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	if err := c.Put("osv", vulndata.Go, "example.com/fakelib", vulns); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("depsdev", vulndata.Go, "example.com/fakelib", pub); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(tmp, e.Name()))
		out["cache/"+e.Name()] = b
	}
	return out
}

func hashZip(t *testing.T, data []byte) string {
	p := filepath.Join(t.TempDir(), "m.zip")
	os.WriteFile(p, data, 0o644)
	h, err := dirhash.HashZip(p, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type memFile struct{ path, data string }

func (f memFile) Path() string                 { return f.path }
func (f memFile) Lstat() (os.FileInfo, error)  { return memInfo{f}, nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(f.data)), nil }

type memInfo struct{ f memFile }

func (i memInfo) Name() string       { return filepath.Base(i.f.path) }
func (i memInfo) Size() int64        { return int64(len(i.f.data)) }
func (i memInfo) Mode() os.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

func readJSON(t *testing.T, p string, v any) {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// TestExampleCVEGo keeps examples/cve-go in step with its sources (-update
// rewrites it) and runs the demo's whole cve path with no network: prepare
// from the offline cache, the built-in bump, go mod tidy with GOPROXY=off
// from a module cache filled from the example's file:// proxy, verify green,
// go build.
func TestExampleCVEGo(t *testing.T) {
	want := exampleFiles(t)
	var names []string
	for p := range want {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		full := filepath.Join(exampleDir, p)
		if *update {
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, want[p], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(full)
		if err != nil || !bytes.Equal(got, want[p]) {
			t.Errorf("%s is out of date (go test ./internal/cve -run TestExampleCVEGo -update): %v", p, err)
		}
	}
	if t.Failed() {
		return
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go not on PATH")
	}
	ctx := context.Background()
	abs, _ := filepath.Abs(exampleDir)
	root := t.TempDir()
	ar, err := txtar.ParseFile(filepath.Join(abs, "repo.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		os.WriteFile(filepath.Join(root, f.Name), f.Data, 0o644)
	}
	fs, err := findings.ReadVulnFile(filepath.Join(abs, "finding.json"))
	if err != nil {
		t.Fatal(err)
	}
	client := vulndata.NewClient(vulndata.NewCache(filepath.Join(abs, "cache")))
	client.Offline = true
	client.OSVURL, client.DepsDevURL = "http://127.0.0.1:1", "http://127.0.0.1:1" // never called
	ty := &Type{Source: client}
	p, err := ty.Prepare(ctx, root, fs[0])
	if err != nil {
		t.Fatal(err)
	}
	d := p.Decision
	if d.Target != "v1.0.2" || !d.Data.Stale || len(d.PassedOver) != 2 || d.PassedOver[0].Version != "v1.0.1" || d.PassedOver[1].Reason != "pseudo-version" {
		t.Fatalf("decision: %+v", d)
	}
	e, err := ty.Edit(root, p)
	if err != nil {
		t.Fatal(err)
	}
	modcache := t.TempDir()
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", modcache).Run() })
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GOMODCACHE=" + modcache, "GOCACHE=" + strings.TrimSpace(string(gocache))}
	fill := exec.Command("go", "mod", "download", "example.com/fakelib@v1.0.2")
	fill.Dir = root
	fill.Env = append(base, "GOPROXY=file://"+filepath.ToSlash(filepath.Join(abs, "goproxy")), "GONOSUMDB=example.com", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := fill.CombinedOutput(); err != nil {
		t.Fatalf("fill the module cache: %v\n%s", err, out)
	}
	regen := exec.Command(e.Regen.Argv[0], e.Regen.Argv[1:]...)
	regen.Dir = filepath.Join(root, e.Regen.Dir)
	regen.Env = append(base, e.Regen.Env...)
	if out, err := regen.CombinedOutput(); err != nil {
		t.Fatalf("regen: %v\n%s", err, out)
	}
	g := ty.Verify(ctx, root, p)
	if g.Verdict != Green {
		t.Fatalf("verify: %+v", g)
	}
	build := exec.Command("go", "run", ".")
	build.Dir = root
	build.Env = append(base, "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
	out, err := build.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fakelib v1.0.2") {
		t.Fatalf("go run after the fix: %v\n%s", err, out)
	}
	md := p.PRSection(&g)
	if !strings.Contains(md, "stale") || !strings.Contains(md, "`v1.0.1`: affected by `GO-2099-0002`") {
		t.Fatalf("PR section:\n%s", md)
	}
	golden(t, "example_cve_go_pr.md", []byte(md))
}
