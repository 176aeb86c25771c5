package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fixrail/fixrail/internal/sarif"
)

// WriteText writes path:line:col: message [rule], actionlint's format, so
// existing problem matchers and reviewdog read it.
func WriteText(w io.Writer, fs []Finding) error {
	for _, f := range fs {
		if _, err := fmt.Fprintf(w, "%s:%d:%d: %s [%s]\n", f.Path, f.Line, f.Column, oneLine(f.Message), f.Rule); err != nil {
			return err
		}
	}
	return nil
}

func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }

// WriteJSON writes the findings as one JSON array.
func WriteJSON(w io.Writer, fs []Finding) error {
	if fs == nil {
		fs = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(fs)
}

// WriteGitHub writes workflow-command annotations, escaped as @actions/core
// escapes them: data %, CR, LF; property values also : and ,.
func WriteGitHub(w io.Writer, fs []Finding) error {
	for _, f := range fs {
		if _, err := fmt.Fprintf(w, "::error file=%s,line=%d,col=%d,title=%s::%s\n",
			EscapeProperty(f.Path), f.Line, f.Column, EscapeProperty(f.Rule), EscapeData(f.Message)); err != nil {
			return err
		}
	}
	return nil
}

// EscapeData escapes a workflow command's message.
func EscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// EscapeProperty escapes a workflow command's property value.
func EscapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// SARIF builds a SARIF 2.1.0 log for GitHub code scanning. version is the
// tool's version string.
func SARIF(fs []Finding, version string) *sarif.Log {
	drv := sarif.Driver{Name: "fixrail-lint", SemanticVersion: version, InformationURI: "https://github.com/fixrail/fixrail#conformance-lint"}
	index := map[string]int{}
	for i, r := range Rules() {
		index[r.ID] = i
		drv.Rules = append(drv.Rules, sarif.ReportingDescriptor{
			ID: r.ID, Name: r.ID,
			ShortDescription:     &sarif.Message{Text: r.Title},
			FullDescription:      &sarif.Message{Text: oneLine(r.Doc)},
			Help:                 &sarif.Message{Text: r.Doc, Markdown: r.Doc},
			HelpURI:              "https://github.com/fixrail/fixrail#rule-" + r.ID,
			DefaultConfiguration: &sarif.Configuration{Level: sarif.LevelError},
			Properties:           &sarif.PropertyBag{Tags: []string{"security", "ci", "ai-agent"}, Precision: r.Precision, SecuritySeverity: r.SecuritySeverity},
		})
	}
	run := sarif.Run{Tool: sarif.Tool{Driver: drv}, AutomationDetails: &sarif.AutomationDetails{ID: "fixrail-lint/"}}
	seen := map[string]int{}
	for _, f := range fs {
		i := index[f.Rule]
		h := sha256.Sum256([]byte(f.Rule + "\x00" + f.Path + "\x00" + strings.Join(strings.Fields(f.Snippet), " ")))
		key := hex.EncodeToString(h[:8])
		seen[key]++
		region := &sarif.Region{StartLine: f.Line, StartColumn: f.Column}
		if f.Snippet != "" {
			region.Snippet = &sarif.ArtifactContent{Text: f.Snippet}
		}
		run.Results = append(run.Results, sarif.Result{
			RuleID: f.Rule, RuleIndex: &i, Level: sarif.LevelError,
			Message: sarif.Message{Text: f.Message},
			Locations: []sarif.Location{{PhysicalLocation: &sarif.PhysicalLocation{
				ArtifactLocation: &sarif.ArtifactLocation{URI: f.Path, URIBaseID: "%SRCROOT%"},
				Region:           region,
			}}},
			// Line text, not line number: the alert survives edits above it.
			PartialFingerprints: map[string]string{"primaryLocationLineHash": fmt.Sprintf("%s:%d", key, seen[key])},
		})
	}
	return &sarif.Log{Runs: []sarif.Run{run}}
}
