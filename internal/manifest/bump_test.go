package manifest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/fixrail/fixrail/internal/vulndata"
)

func TestBumpRequirementsAndRefusals(t *testing.T) {
	root := writeTree(t, repo)
	deps, _ := Find(root, vulndata.PyPI, "jinja2", "")
	e, err := Bump(root, deps[0], "2.8.1")
	if err != nil || e.Regen != nil || len(e.Files) != 1 {
		t.Fatalf("%v %+v", err, e)
	}
	b, _ := os.ReadFile(filepath.Join(root, "requirements.txt"))
	if !strings.Contains(string(b), "Jinja2==2.8.1 ; python_version >= \"3\"  # templating\n") || strings.Count(string(b), "2.7.2") != 0 {
		t.Fatalf("requirements after bump:\n%s", b)
	}
	after, _ := Find(root, vulndata.PyPI, "jinja2", "")
	if after[0].Version != "2.8.1" {
		t.Fatalf("re-read: %+v", after[0])
	}
	for _, c := range []struct {
		eco  vulndata.Ecosystem
		name string
	}{
		{vulndata.PyPI, "hashed"},             // --hash pinned
		{vulndata.PyPI, "requests"},           // a range
		{vulndata.Go, "example.com/replaced"}, // a replace overrides it
		{vulndata.Maven, "junit:junit"},       // not a built-in ecosystem
		{vulndata.NPM, "typescript"},          // ~ is fine, but see below
		{vulndata.RubyGems, "rails"},
	} {
		deps, err := Find(root, c.eco, c.name, "")
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "typescript" {
			deps[0].Spec = ">=5 <6"
		}
		if _, err := Bump(root, deps[0], "9.9.9"); !errors.Is(err, ErrNoBuiltIn) {
			t.Errorf("%s: err = %v, want ErrNoBuiltIn", c.name, err)
		}
	}
	// A target that is not a plain version never reaches a file.
	if _, err := Bump(root, after[0], "1.0; rm -rf /"); !errors.Is(err, ErrNoBuiltIn) {
		t.Fatalf("hostile target: %v", err)
	}
}

func TestBumpPackageJSONKeepsBytes(t *testing.T) {
	root := writeTree(t, repo)
	before, _ := os.ReadFile(filepath.Join(root, "web/package.json"))
	deps, _ := Find(root, vulndata.NPM, "@fixrail-demo/left-pad", "")
	e, err := Bump(root, deps[0], "1.2.3")
	if err != nil || e.Regen == nil || e.Regen.Argv[0] != "npm" || !strings.Contains(strings.Join(e.Regen.Argv, " "), "--ignore-scripts") {
		t.Fatalf("%v %+v", err, e)
	}
	after, _ := os.ReadFile(filepath.Join(root, "web/package.json"))
	want := strings.Replace(string(before), `"@fixrail-demo/left-pad": "^1.1.0"`, `"@fixrail-demo/left-pad": "^1.2.3"`, 1)
	if string(after) != want {
		t.Fatalf("package.json:\n%s\nwant:\n%s", after, want)
	}
	// The "name": "dependencies" and "description": "lodash" values are not
	// keys: an exact lodash bump edits only the dependency.
	deps, _ = Find(root, vulndata.NPM, "lodash", "")
	if _, err := Bump(root, deps[0], "4.17.21"); err != nil {
		t.Fatal(err)
	}
	after2, _ := os.ReadFile(filepath.Join(root, "web/package.json"))
	if !strings.Contains(string(after2), `"lodash": "4.17.21"`) || !strings.Contains(string(after2), `"description": "lodash"`) {
		t.Fatalf("package.json:\n%s", after2)
	}
}

// fakeModule writes example.com/fakelib at version v into a file:// GOPROXY
// directory: a tiny module made here, not third-party code.
func fakeModule(t *testing.T, proxy, v string) {
	t.Helper()
	src := writeTree(t, map[string]string{
		"go.mod": "module example.com/fakelib\n\ngo 1.21\n",
		"lib.go": "package fakelib\n\n// V is the version.\nfunc V() string { return \"" + v + "\" }\n",
	})
	dir := filepath.Join(proxy, "example.com", "fakelib", "@v")
	os.MkdirAll(dir, 0o755)
	var zb bytes.Buffer
	if err := modzip.CreateFromDir(&zb, module.Version{Path: "example.com/fakelib", Version: v}, src); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, v+".zip"), zb.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, v+".mod"), []byte("module example.com/fakelib\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, v+".info"), []byte(`{"Version":"`+v+`","Time":"2026-01-01T00:00:00Z"}`), 0o644)
	f, _ := os.OpenFile(filepath.Join(dir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	f.WriteString(v + "\n")
	f.Close()
}

func goEnv(t *testing.T, modcache string, extra ...string) []string {
	// The build cache is shared (a fresh one would rebuild the standard
	// library); the module cache is the test's own.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GOMODCACHE=" + modcache, "GOCACHE=" + strings.TrimSpace(string(gocache))}
	return append(env, extra...)
}

func run(t *testing.T, dir string, env []string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// TestBumpGoModRegenOffline bumps go.mod and runs the regeneration command
// Bump returns, for real: go mod tidy with no proxy, from a module cache
// filled beforehand from a file:// proxy of a tiny module made here.
func TestBumpGoModRegenOffline(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go not on PATH")
	}
	proxy, modcache := t.TempDir(), t.TempDir()
	t.Cleanup(func() { makeWritable(modcache) })
	fakeModule(t, proxy, "v1.0.0")
	fakeModule(t, proxy, "v1.0.2")
	root := writeTree(t, map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.21\n\nrequire example.com/fakelib v1.0.0\n",
		"main.go": "package main\n\nimport \"example.com/fakelib\"\n\nfunc main() { println(fakelib.V()) }\n",
	})
	fill := goEnv(t, modcache, "GOPROXY=file://"+filepath.ToSlash(proxy), "GONOSUMDB=example.com", "GOFLAGS=-mod=mod -modcacherw", "GOTOOLCHAIN=local")
	run(t, root, fill, "go", "mod", "tidy")
	run(t, root, fill, "go", "mod", "download", "example.com/fakelib@v1.0.2")

	deps, err := Find(root, vulndata.Go, "example.com/fakelib", "go.mod")
	if err != nil || deps[0].Current() != "v1.0.0" {
		t.Fatalf("%v %+v", err, deps)
	}
	e, err := Bump(root, deps[0], "v1.0.2")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOWORK=off"}
	if strings.Join(e.Regen.Env, " ") != strings.Join(want, " ") || strings.Join(e.Regen.Argv, " ") != "go mod tidy" || e.Regen.Dir != "." {
		t.Fatalf("regen = %+v", e.Regen)
	}
	// The harness's run: the regen env over a bare environment (no proxy
	// reachable: GOPROXY=off is in Env itself).
	env := append(goEnv(t, modcache), e.Regen.Env...)
	env = append(env, "GOFLAGS=-mod=mod -modcacherw")
	run(t, filepath.Join(root, e.Regen.Dir), env, e.Regen.Argv...)
	after, err := Read(root, "go.mod")
	if err != nil || after[0].Version != "v1.0.2" || len(after[0].Locked) != 1 || after[0].Locked[0] != "v1.0.2" {
		t.Fatalf("after regen: %v %+v", err, after)
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	if strings.Contains(string(sum), "v1.0.0") {
		t.Fatalf("go.sum keeps the old version:\n%s", sum)
	}
	run(t, root, append(goEnv(t, modcache), "GOPROXY=off", "GOFLAGS=-mod=readonly -modcacherw"), "go", "build", "./...")
}

func makeWritable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// npmRegistry is a strict local npm registry for one scoped package: it
// serves the packument and the tarballs, and records anything else.
type npmRegistry struct {
	*httptest.Server
	mu         sync.Mutex
	unexpected []string
}

func tarball(t *testing.T, name, v string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	pj := []byte(`{"name":"` + name + `","version":"` + v + `"}`)
	tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(pj))})
	tw.Write(pj)
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func newNPMRegistry(t *testing.T, name string, versions ...string) *npmRegistry {
	r := &npmRegistry{}
	tarballs := map[string][]byte{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.EscapedPath()
		switch {
		case p == "/"+strings.Replace(name, "/", "%2f", 1) || p == "/"+strings.Replace(name, "/", "%2F", 1) || p == "/"+name:
			vs := map[string]any{}
			for _, v := range versions {
				tb := tarballs[v]
				s512 := sha512.Sum512(tb)
				s1 := sha1.Sum(tb)
				vs[v] = map[string]any{"name": name, "version": v, "dist": map[string]any{
					"tarball":   r.URL + "/tarballs/" + v + ".tgz",
					"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
					"shasum":    hex.EncodeToString(s1[:]),
				}}
			}
			json.NewEncoder(w).Encode(map[string]any{"name": name, "dist-tags": map[string]string{"latest": versions[len(versions)-1]}, "versions": vs})
		case strings.HasPrefix(p, "/tarballs/"):
			w.Write(tarballs[strings.TrimSuffix(strings.TrimPrefix(p, "/tarballs/"), ".tgz")])
		default:
			r.mu.Lock()
			r.unexpected = append(r.unexpected, req.Method+" "+p)
			r.mu.Unlock()
			http.NotFound(w, req)
		}
	}))
	for _, v := range versions {
		tarballs[v] = tarball(t, name, v)
	}
	t.Cleanup(r.Close)
	return r
}

// TestBumpPackageJSONRegen runs Bump's npm regeneration for real against a
// local registry that serves only the one scoped package.
func TestBumpPackageJSONRegen(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm not on PATH (scripts/test installs it)")
	}
	const name = "@fixrail-demo/left-pad"
	reg := newNPMRegistry(t, name, "1.1.0", "1.2.3")
	root := writeTree(t, map[string]string{
		"package.json": `{"name": "app", "version": "1.0.0", "dependencies": {"` + name + `": "1.1.0"}}` + "\n",
	})
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "npm_config_cache=" + filepath.Join(home, "npm-cache"),
		"npm_config_registry=" + reg.URL + "/", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false"}
	run(t, root, env, "npm", "install", "--package-lock-only", "--ignore-scripts")
	deps, err := Find(root, vulndata.NPM, name, "")
	if err != nil || deps[0].Current() != "1.1.0" || deps[0].Lockfile != "package-lock.json" {
		t.Fatalf("%v %+v", err, deps)
	}
	e, err := Bump(root, deps[0], "1.2.3")
	if err != nil || e.Regen == nil {
		t.Fatalf("%v %+v", err, e)
	}
	if got := strings.Join(e.Regen.Fill, " "); got != "npm cache add "+name+"@1.2.3" {
		t.Errorf("fill %q", got)
	}
	// The regeneration is offline: the registry is gone, and the packument
	// the first install cached (it lists 1.2.3) is all npm may read.
	reg.Close()
	run(t, filepath.Join(root, e.Regen.Dir), append(env, e.Regen.Env...), e.Regen.Argv...)
	after, err := Find(root, vulndata.NPM, name, "")
	if err != nil || after[0].Version != "1.2.3" || strings.Join(after[0].Locked, ",") != "1.2.3" {
		t.Fatalf("after regen: %v %+v", err, after)
	}
	if len(reg.unexpected) > 0 {
		t.Fatalf("unexpected registry requests: %v", reg.unexpected)
	}
}

func TestAgentRegen(t *testing.T) {
	root := writeTree(t, repo)
	for _, c := range []struct {
		eco    vulndata.Ecosystem
		name   string
		target string
		argv   string
	}{
		{vulndata.Cargo, "smallvec", "1.6.1", "cargo update --offline --package smallvec --precise 1.6.1"},
		{vulndata.RubyGems, "nokogiri", "1.16.5", "bundle lock --local --update nokogiri"},
		{vulndata.PyPI, "django", "3.0.14", "poetry lock --no-update"},
		{vulndata.Maven, "junit:junit", "4.13.2", ""},
		{vulndata.NPM, "typescript", "5.4.6", "npm install --package-lock-only --ignore-scripts --no-audit --no-fund --offline"},
	} {
		deps, err := Find(root, c.eco, c.name, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := AgentRegen(deps[0], c.target)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if r != nil {
			got = strings.Join(r.Argv, " ")
			if r.Writes[0] != deps[0].Manifest {
				t.Errorf("%s: writes %v", c.name, r.Writes)
			}
		}
		if got != c.argv {
			t.Errorf("%s: argv %q, want %q", c.name, got, c.argv)
		}
	}
	deps, _ := Find(root, vulndata.Cargo, "smallvec", "")
	for _, bad := range []string{"--config=x", "1.0;id", "$(id)", "1 2"} {
		if _, err := AgentRegen(deps[0], bad); !errors.Is(err, ErrNoBuiltIn) {
			t.Errorf("target %q accepted", bad)
		}
	}
}
