package conformance

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// TestShellCacheSameFindings: linting with one cache shared by every file,
// concurrently, finds exactly what linting each file without a cache
// finds, and the cache is used (the corpus and the generated set repeat
// scripts, so a cache that answered wrongly on a hit would show here).
func TestShellCacheSameFindings(t *testing.T) {
	srcs := readWorkflows(t, "testdata/corpus/*.yml")
	srcs = append(srcs, genWorkflows(8)...)
	srcs = append(srcs, genWorkflows(8)...) // every script again: all hits
	want := make([][]Finding, len(srcs))
	for i, s := range srcs {
		want[i] = Lint(fmt.Sprintf("w%d.yml", i), s, Options{})
	}
	cache := NewShellCache()
	got := make([][]Finding, len(srcs))
	var wg sync.WaitGroup
	for i, s := range srcs {
		wg.Go(func() { got[i] = Lint(fmt.Sprintf("w%d.yml", i), s, Options{Shell: cache}) })
	}
	wg.Wait()
	for i := range srcs {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("workflow %d: with the cache\n%v\nwithout\n%v", i, got[i], want[i])
		}
	}
	if len(cache.m) == 0 {
		t.Fatal("no script reached the cache")
	}
}
