package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkNPMCacheView is the per-command cost of npm's private index copy
// over a cache of 10,000 entries (a developer's cache after a few dozen
// projects).
func BenchmarkNPMCacheView(b *testing.B) {
	src := filepath.Join(b.TempDir(), "_cacache")
	line := strings.Repeat("x", 700)
	for i := range 10_000 {
		p := filepath.Join(src, "index-v5", fmt.Sprintf("%02x", i%256), fmt.Sprintf("%02x", (i/256)%256), fmt.Sprintf("%060x", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(src, "content-v2"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if err := npmCacheView(src, filepath.Join(b.TempDir(), fmt.Sprint(i), "_cacache")); err != nil {
			b.Fatal(err)
		}
	}
}
