package sarif

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A log in the shape GitHub's code-scanning documentation shows, with a
// numeric security-severity (as some scanners write it) and a key this
// package does not model.
const scannerLog = `{
  "version": "2.1.0",
  "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
  "runs": [{
    "tool": {"driver": {"name": "Scanner", "semanticVersion": "2.0.0",
      "rules": [{"id": "R01", "shortDescription": {"text": "short"},
        "help": {"text": "help", "markdown": "**help**"},
        "properties": {"tags": ["security", "external/cwe/cwe-79"], "precision": "high",
          "security-severity": 8.5, "problem.severity": "error"}}]}},
    "results": [{"ruleId": "R01", "ruleIndex": 0, "level": "error",
      "message": {"text": "bad"},
      "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.js", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 5, "endColumn": 9}}}],
      "partialFingerprints": {"primaryLocationLineHash": "39fa2ee980eb94b0:1"},
      "unmodelled": {"x": 1}}]
  }]
}`

func TestDecodeScannerLog(t *testing.T) {
	l, err := Decode(strings.NewReader(scannerLog))
	if err != nil {
		t.Fatal(err)
	}
	rule := l.Runs[0].Tool.Driver.Rules[0]
	if got := rule.Properties.SecuritySeverity; got != "8.5" {
		t.Errorf("security-severity = %q, want 8.5", got)
	}
	if diff := cmp.Diff([]string{"security", "external/cwe/cwe-79"}, rule.Properties.Tags); diff != "" {
		t.Errorf("tags: %s", diff)
	}
	if got := rule.Properties.ExtraKeys(); !cmp.Equal(got, []string{"problem.severity"}) {
		t.Errorf("extra keys = %v", got)
	}
	res := l.Runs[0].Results[0]
	loc := res.Locations[0].PhysicalLocation
	if loc.ArtifactLocation.URI != "src/a.js" || loc.Region.StartLine != 3 || loc.Region.StartColumn != 5 {
		t.Errorf("location = %+v %+v", loc.ArtifactLocation, loc.Region)
	}
	if res.PartialFingerprints["primaryLocationLineHash"] != "39fa2ee980eb94b0:1" || *res.RuleIndex != 0 {
		t.Errorf("result = %+v", res)
	}
}

func TestRoundTrip(t *testing.T) {
	idx := 0
	in := &Log{Runs: []Run{{
		Tool: Tool{Driver: Driver{Name: "fixrail", Rules: []ReportingDescriptor{{
			ID: "no-merge", ShortDescription: &Message{Text: "s"},
			DefaultConfiguration: &Configuration{Level: LevelError},
			Properties:           &PropertyBag{Tags: []string{"security"}, Precision: "very-high", SecuritySeverity: "9.0"},
		}}}},
		Results: []Result{{
			RuleID: "no-merge", RuleIndex: &idx, Level: LevelError, Message: Message{Text: "m"},
			Locations: []Location{{PhysicalLocation: &PhysicalLocation{
				ArtifactLocation: &ArtifactLocation{URI: ".github/workflows/a.yml", URIBaseID: "%SRCROOT%"},
				Region:           &Region{StartLine: 1, StartColumn: 2, EndLine: 1, EndColumn: 7, Snippet: &ArtifactContent{Text: "x"}},
			}}},
			PartialFingerprints: map[string]string{"primaryLocationLineHash": "abc"},
		}},
	}}}
	var buf bytes.Buffer
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"security-severity": "9.0"`) || !strings.Contains(buf.String(), `"$schema"`) {
		t.Fatalf("encoded log lacks security-severity or $schema:\n%s", buf.String())
	}
	out, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip changed the log (-in +out):\n%s", diff)
	}
}

func TestEncodeEmptyResults(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, &Log{Runs: []Run{{Tool: Tool{Driver: Driver{Name: "t"}}}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"results": []`) {
		t.Errorf("a run with no results must say so with an empty array:\n%s", buf.String())
	}
}

func TestDecodeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     error
	}{
		{"version", `{"version":"2.0.0","runs":[]}`, ErrVersion},
		{"no version", `{"runs":[]}`, ErrVersion},
		{"trailing", `{"version":"2.1.0","runs":[]} {}`, nil},
		{"bad tags", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{},"properties":{"tags":"security"}}]}]}`, nil},
		{"not json", `<xml/>`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("accepted")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	big := strings.NewReader(`{"version":"2.1.0","runs":[],"x":"` + strings.Repeat("a", MaxLogSize) + `"}`)
	if _, err := Decode(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized log: err = %v, want ErrTooLarge", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(scannerLog)
	f.Add(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"properties":{"security-severity":"x"}}]}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Decode(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whatever decodes must encode and decode to the same value.
		var buf bytes.Buffer
		if err := Encode(&buf, l); err != nil {
			t.Fatalf("encode: %v", err)
		}
		first := buf.String()
		l2, err := Decode(&buf)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, first)
		}
		var buf2 bytes.Buffer
		if err := Encode(&buf2, l2); err != nil {
			t.Fatal(err)
		}
		if first != buf2.String() {
			t.Fatalf("not stable:\n%s\n%s", first, buf2.String())
		}
	})
}
