package cve

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fixrail/fixrail/internal/vulndata"
)

// BenchmarkDecideWarmCache is the library call resolve-version makes, from
// a warm cache (the example's: two entries read, decoded and decided).
// The command end to end, beside a no-op, is scripts/bench-resolve-version.
func BenchmarkDecideWarmCache(b *testing.B) {
	c := vulndata.NewClient(vulndata.NewCache(filepath.Join(exampleDir, "cache")))
	c.Offline = true
	ctx := context.Background()
	for b.Loop() {
		d, err := Decide(ctx, c, vulndata.Go, "example.com/fakelib", "v1.0.0")
		if err != nil || d.Target != "v1.0.2" {
			b.Fatal(err, d)
		}
	}
}
