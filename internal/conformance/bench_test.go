package conformance

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLintCorpus lints every corpus workflow once per iteration.
// scripts/bench-lint compares the whole command with actionlint.
func BenchmarkLintCorpus(b *testing.B) {
	dir := "testdata/corpus"
	if d := os.Getenv("FIXRAIL_BENCH_LINT_DIR"); d != "" {
		dir = d // e.g. the generated corpus of scripts/bench-lint
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
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
