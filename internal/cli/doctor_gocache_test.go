package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// TestGoBuildCacheCheck: the line doctor prints for each state of the
// standard library's cache. The built state is laid out by hand under the
// key the lookup computes (building it is TestEnsureGoStdCache's).
func TestGoBuildCacheCheck(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	env, err := sandbox.Env(sandbox.Build, os.LookupEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	gc, err := sandbox.LookupGoStdCache(t.Context(), root, env)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := goBuildCacheCheck(t.Context(), root, "auto", true, env)
	if !ok || c.Status != "ok" || !strings.HasPrefix(c.Detail, "not built yet: the first run on a Go module builds it in "+filepath.Join(root, gc.Key)) {
		t.Fatalf("empty root: %+v", c)
	}
	entry := filepath.Join(root, gc.Key, "ab", "abcd-d")
	if err := os.MkdirAll(filepath.Dir(entry), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, []byte("object"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode   string
		usable bool
		want   string
	}{
		{"auto", true, filepath.Join(root, gc.Key) + " (the standard library, 1 files, 0 MB): linked read-only into each sandboxed Go command's own GOCACHE; remove the directory to rebuild it"},
		{"required", true, filepath.Join(root, gc.Key) + " (the standard library, 1 files"},
		{"off", true, "not used: test and suite commands do not run sandboxed here"},
		{"auto", false, "not used: test and suite commands do not run sandboxed here"},
	} {
		c, ok := goBuildCacheCheck(t.Context(), root, tc.mode, tc.usable, env)
		if !ok || c.Name != "go-build-cache" || c.Status != "ok" || !strings.HasPrefix(c.Detail, tc.want) {
			t.Errorf("sandbox %s, usable %v: %+v, want a detail starting %q", tc.mode, tc.usable, c, tc.want)
		}
	}
}
