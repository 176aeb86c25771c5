package conformance

import (
	"regexp"
	"testing"
)

// TestPatternsCompile: lazy patterns are not compiled at init, so every one
// is compiled here.
func TestPatternsCompile(t *testing.T) {
	if len(patterns) == 0 {
		t.Fatal("no lazy patterns registered")
	}
	for _, p := range patterns {
		if _, err := regexp.Compile(p); err != nil {
			t.Errorf("pattern %q: %v", p, err)
		}
	}
}
