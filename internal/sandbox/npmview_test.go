package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNPMCacheView: npm's view of a read-only cache links the content and
// copies the index, so the write every npm lookup makes (compacting the
// entry's bucket) lands in the command's scratch and never in the
// operator's cache; an index past the bounds is not copied, and Env then
// names the read-only cache itself.
func TestNPMCacheView(t *testing.T) {
	const bucket = "index-v5/1b/81/0e95d63dfa"
	for _, tc := range []struct {
		name     string
		files    int // maxNPMIndexFiles for the case
		content  bool
		wantView bool
	}{
		{"index and content", 100, true, true},
		{"no content yet", 100, false, true},
		{"index too large to copy", 1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := maxNPMIndexFiles
			maxNPMIndexFiles = tc.files
			t.Cleanup(func() { maxNPMIndexFiles = old })
			root := t.TempDir()
			cache := filepath.Join(root, "npm")
			src := filepath.Join(cache, "_cacache")
			write := func(rel, data string) {
				p := filepath.Join(src, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(bucket, "hash\t{\"key\":\"make-fetch-happen:request-cache:http://r/@s%2fp\"}")
			write("index-v5/00/01/other", "other")
			if tc.content {
				write("content-v2/sha512/ab/cd/ef", "packument")
			}
			if err := os.Symlink("/etc/passwd", filepath.Join(src, "index-v5", "00", "link")); err != nil {
				t.Fatal(err)
			}
			tcn := Toolchain{npmCache: cache}
			scratch := filepath.Join(root, "scratch")
			env, err := tcn.Env(nil, scratch)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "npm_config_cache="); ok {
					got = v
				}
			}
			if !tc.wantView {
				if got != cache {
					t.Fatalf("npm_config_cache = %q, want the read-only cache %q", got, cache)
				}
				return
			}
			view := filepath.Join(scratch, "npm-cache")
			if got != view {
				t.Fatalf("npm_config_cache = %q, want the view %q", got, view)
			}
			data, err := os.ReadFile(filepath.Join(view, "_cacache", bucket))
			if err != nil || !strings.Contains(string(data), "request-cache") {
				t.Fatalf("the view's bucket: %q, %v", data, err)
			}
			if fi, err := os.Lstat(filepath.Join(view, "_cacache", bucket)); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("the view's bucket is not its own regular file: %v %v", fi, err)
			}
			if _, err := os.Lstat(filepath.Join(view, "_cacache", "index-v5", "00", "link")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a link in the index was copied: %v", err)
			}
			link, err := os.Readlink(filepath.Join(view, "_cacache", "content-v2"))
			switch {
			case tc.content && (err != nil || link != filepath.Join(src, "content-v2")):
				t.Errorf("content-v2 links to %q (%v), want %q", link, err, filepath.Join(src, "content-v2"))
			case !tc.content && err == nil:
				t.Errorf("content-v2 links to %q though the cache has none", link)
			}
			// What npm does on a lookup: rewrite the bucket.
			if err := os.WriteFile(filepath.Join(view, "_cacache", bucket), []byte("poison"), 0o600); err != nil {
				t.Fatal(err)
			}
			if orig, _ := os.ReadFile(filepath.Join(src, bucket)); string(orig) == "poison" {
				t.Fatal("a write to the view reached the operator's cache")
			}
		})
	}
}

// TestEnvNPMCacheAlwaysFixrails: npm always gets a cache fixrail chose in
// the command's scratch, with its logs there too, whether or not the
// operator has a cache: without one it is an empty directory, so a
// project .npmrc's cache= (ranked below npm's environment) is never read.
// Offline is set only with the operator's cache, as before.
func TestEnvNPMCacheAlwaysFixrails(t *testing.T) {
	for _, tc := range []struct {
		name        string
		withCache   bool
		wantOffline bool
	}{
		{"no operator cache", false, false},
		{"operator cache", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var tcn Toolchain
			if tc.withCache {
				tcn.npmCache = filepath.Join(root, "npm")
				if err := os.MkdirAll(filepath.Join(tcn.npmCache, "_cacache", "index-v5"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			scratch := filepath.Join(root, "scratch")
			env, err := tcn.Env([]string{"npm_config_cache=/repo/x"}, scratch)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				if _, dup := got[k]; dup {
					t.Errorf("%s set twice", k)
				}
				got[k] = v
			}
			if want := filepath.Join(scratch, "npm-cache"); got["npm_config_cache"] != want {
				t.Errorf("npm_config_cache = %q, want %q", got["npm_config_cache"], want)
			}
			if fi, err := os.Stat(got["npm_config_cache"]); err != nil || !fi.IsDir() {
				t.Errorf("the cache directory: %v", err)
			}
			if want := filepath.Join(scratch, "npm-logs"); got["npm_config_logs_dir"] != want {
				t.Errorf("npm_config_logs_dir = %q, want %q", got["npm_config_logs_dir"], want)
			}
			if off := got["npm_config_offline"] == "true"; off != tc.wantOffline {
				t.Errorf("npm_config_offline = %q", got["npm_config_offline"])
			}
		})
	}
}
