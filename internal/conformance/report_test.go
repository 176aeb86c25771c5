package conformance

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/fixrail/fixrail/internal/sarif"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"x: y, z", "x: y, z", "x%3A y%2C z"},
		{"%0A", "%250A", "%250A"}, // an escape in the input is not decoded by the runner
	} {
		if got := EscapeData(tc.in); got != tc.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeProperty(tc.in); got != tc.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
}

// TestGoldenOutputs renders the findings of one corpus file in every
// format and compares them with testdata/golden (go test -update rewrites).
func TestGoldenOutputs(t *testing.T) {
	src, err := os.ReadFile("testdata/corpus/bb_all_five_holes.yml")
	if err != nil {
		t.Fatal(err)
	}
	fs := Lint(".github/workflows/bb.yml", src, Options{})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"bb.txt":   func(b *bytes.Buffer) error { return WriteText(b, fs) },
		"bb.json":  func(b *bytes.Buffer) error { return WriteJSON(b, fs) },
		"bb.gha":   func(b *bytes.Buffer) error { return WriteGitHub(b, fs) },
		"bb.sarif": func(b *bytes.Buffer) error { return sarif.Encode(b, SARIF(fs, "1.2.3")) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		path := "testdata/golden/" + name
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", name, b.String())
		}
	}
	// The SARIF log is one the shared package reads back, with a rule for
	// every result.
	var b bytes.Buffer
	if err := sarif.Encode(&b, SARIF(fs, "1.2.3")); err != nil {
		t.Fatal(err)
	}
	l, err := sarif.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	run := l.Runs[0]
	if len(run.Results) != len(fs) || len(run.Tool.Driver.Rules) != len(Rules()) {
		t.Fatalf("results %d (want %d), rules %d", len(run.Results), len(fs), len(run.Tool.Driver.Rules))
	}
	for _, r := range run.Results {
		rule := run.Tool.Driver.Rules[*r.RuleIndex]
		if rule.ID != r.RuleID || rule.Properties.SecuritySeverity == "" || rule.Properties.Precision == "" || r.PartialFingerprints["primaryLocationLineHash"] == "" {
			t.Errorf("result %+v does not point at a described rule", r)
		}
	}
}
