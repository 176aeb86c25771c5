package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCorpus lints every workflow in testdata/corpus. The header says what
// must be found: "# want: rule rule" (exactly these rules, "none" for a
// clean file) and "# at: rule line:col" (a finding of rule exactly there).
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("corpus has %d workflows, want at least 60", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, at := corpusHeader(string(src))
			if want == nil {
				t.Fatal("no # want: header")
			}
			fs := Lint(filepath.Base(f), src, Options{})
			var got []string
			for _, x := range fs {
				if !slices.Contains(got, x.Rule) {
					got = append(got, x.Rule)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("rules = %v, want %v; findings:\n%s", got, want, dump(fs))
			}
			for _, a := range at {
				if !slices.ContainsFunc(fs, func(x Finding) bool { return fmt.Sprintf("%s %d:%d", x.Rule, x.Line, x.Column) == a }) {
					t.Errorf("no finding at %s; findings:\n%s", a, dump(fs))
				}
			}
		})
	}
}

func corpusHeader(src string) (want, at []string) {
	for _, l := range strings.Split(src, "\n") {
		switch {
		case strings.HasPrefix(l, "# want:"):
			want = []string{}
			for _, r := range strings.Fields(strings.TrimPrefix(l, "# want:")) {
				if r != "none" {
					want = append(want, r)
				}
			}
			slices.Sort(want)
		case strings.HasPrefix(l, "# at:"):
			at = append(at, strings.TrimSpace(strings.TrimPrefix(l, "# at:")))
		}
	}
	return want, at
}
