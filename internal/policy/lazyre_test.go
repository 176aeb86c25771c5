package policy

import (
	"regexp"
	"testing"
)

// TestPatternsCompile: lazy patterns are no longer checked at init, so every
// one is compiled here.
func TestPatternsCompile(t *testing.T) {
	if len(patterns) == 0 {
		t.Fatal("no lazy patterns registered")
	}
	for _, l := range patterns {
		if _, err := regexp.Compile(l.pat); err != nil {
			t.Errorf("pattern %q: %v", l.pat, err)
		}
	}
}
