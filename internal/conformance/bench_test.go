package conformance

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLintCorpus lints every corpus workflow once per iteration.
// scripts/bench-lint compares the whole command with actionlint.
func BenchmarkLintCorpus(b *testing.B) {
	files, _ := filepath.Glob("testdata/corpus/*.yml")
	var srcs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, data)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, s := range srcs {
			Lint("w.yml", s, Options{})
		}
	}
}
