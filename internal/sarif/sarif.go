// Package sarif owns the SARIF 2.1.0 subset fixrail writes and reads: one
// log of runs, each with a tool driver and its rules, and results with
// locations, fingerprints and property bags (security-severity, precision,
// tags) as GitHub code scanning reads them. The conformance lint writes it;
// alert intake reads scanners' logs with the same types, so Decode is
// bounded and tolerant of fields it does not model (they are ignored), but
// strict about the version and the shape of what it does model.
package sarif

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Version and Schema are the only SARIF version this package speaks.
const (
	Version = "2.1.0"
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// MaxLogSize bounds what Decode reads: a SARIF upload to GitHub is capped
// well below this, so a larger input is refused rather than buffered.
const MaxLogSize = 64 << 20

// ErrTooLarge and ErrVersion are Decode's refusals.
var (
	ErrTooLarge = errors.New("sarif: log exceeds the size limit")
	ErrVersion  = errors.New("sarif: unsupported version")
)

// Log is a SARIF log file.
type Log struct {
	Schema  string `json:"$schema,omitempty"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one invocation of one tool.
type Run struct {
	Tool               Tool                        `json:"tool"`
	Results            []Result                    `json:"results"`
	AutomationDetails  *AutomationDetails          `json:"automationDetails,omitempty"`
	OriginalURIBaseIDs map[string]ArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Properties         *PropertyBag                `json:"properties,omitempty"`
	// Artifacts are the files a run names; a result may point at one by
	// index (CodeQL does).
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// Invocations say whether the tool ran to completion.
	Invocations []Invocation `json:"invocations,omitempty"`
}

// Artifact is one file of a run.
type Artifact struct {
	Location *ArtifactLocation `json:"location,omitempty"`
}

// Invocation is one execution of the tool: whether it succeeded, and the
// errors it noted.
type Invocation struct {
	ExecutionSuccessful        *bool          `json:"executionSuccessful,omitempty"`
	ToolExecutionNotifications []Notification `json:"toolExecutionNotifications,omitempty"`
	// ToolConfigurationNotifications are where ESLint's SARIF formatter
	// puts a file it could not parse (a fatal "Parsing error").
	ToolConfigurationNotifications []Notification `json:"toolConfigurationNotifications,omitempty"`
}

// Incomplete says why run did not complete, or "": an invocation that
// reports failure, or an error among the tool's own notifications
// (Semgrep reports success with rule errors; ESLint reports a file it
// could not parse as a configuration notification, with no result for
// it). Such a run's results are partial: a result it missed is not
// absent. text is the first error notification's message, the tool's
// own words (a caller that keeps them bounds them).
func (run *Run) Incomplete() (why, text string) {
	for _, inv := range run.Invocations {
		for _, n := range slices.Concat(inv.ToolExecutionNotifications, inv.ToolConfigurationNotifications) {
			if n.Level == LevelError {
				text = n.Message.Text
				break
			}
		}
		switch {
		case inv.ExecutionSuccessful != nil && !*inv.ExecutionSuccessful:
			return "executionSuccessful is false", text
		case text != "":
			return "the tool noted an error", text
		}
	}
	return "", ""
}

// Notification is a message the tool gave about its own run.
type Notification struct {
	Level   string  `json:"level,omitempty"`
	Message Message `json:"message"`
}

// AutomationDetails keeps one tool's alerts apart from another's (its ID is
// GitHub's upload category).
type AutomationDetails struct {
	ID string `json:"id,omitempty"`
}

// Tool wraps the driver and its extensions (CodeQL keeps its rules in
// the query packs it lists as extensions).
type Tool struct {
	Driver     Driver   `json:"driver"`
	Extensions []Driver `json:"extensions,omitempty"`
}

// Driver is the tool component that produced the results.
type Driver struct {
	Name            string                `json:"name"`
	Version         string                `json:"version,omitempty"`
	SemanticVersion string                `json:"semanticVersion,omitempty"`
	InformationURI  string                `json:"informationUri,omitempty"`
	Rules           []ReportingDescriptor `json:"rules,omitempty"`
}

// ReportingDescriptor describes one rule.
type ReportingDescriptor struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name,omitempty"`
	ShortDescription     *Message       `json:"shortDescription,omitempty"`
	FullDescription      *Message       `json:"fullDescription,omitempty"`
	Help                 *Message       `json:"help,omitempty"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration *Configuration `json:"defaultConfiguration,omitempty"`
	Properties           *PropertyBag   `json:"properties,omitempty"`
}

// Configuration is a rule's default level.
type Configuration struct {
	Level string `json:"level,omitempty"`
}

// Message is plain text with an optional markdown rendering.
type Message struct {
	Text     string `json:"text,omitempty"`
	Markdown string `json:"markdown,omitempty"`
}

// Levels of a result.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
	LevelNone    = "none"
)

// Result is one finding.
type Result struct {
	RuleID              string            `json:"ruleId,omitempty"`
	RuleIndex           *int              `json:"ruleIndex,omitempty"`
	Rule                *RuleReference    `json:"rule,omitempty"`
	Level               string            `json:"level,omitempty"`
	Kind                string            `json:"kind,omitempty"`
	Message             Message           `json:"message"`
	Locations           []Location        `json:"locations,omitempty"`
	RelatedLocations    []Location        `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Fingerprints        map[string]string `json:"fingerprints,omitempty"`
	Properties          *PropertyBag      `json:"properties,omitempty"`
	Suppressions        []Suppression     `json:"suppressions,omitempty"`
	BaselineState       string            `json:"baselineState,omitempty"`
}

// RuleReference names a result's rule and the tool component holding it.
type RuleReference struct {
	ID            string                  `json:"id,omitempty"`
	Index         *int                    `json:"index,omitempty"`
	ToolComponent *ToolComponentReference `json:"toolComponent,omitempty"`
}

// ToolComponentReference is the driver (no index) or an extension.
type ToolComponentReference struct {
	Name  string `json:"name,omitempty"`
	Index *int   `json:"index,omitempty"`
}

// Suppression says a result was silenced (in source, or by a reviewer).
type Suppression struct {
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status,omitempty"`
}

// Location is where a result is.
type Location struct {
	ID               *int              `json:"id,omitempty"`
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []LogicalLocation `json:"logicalLocations,omitempty"`
	Message          *Message          `json:"message,omitempty"`
}

// LogicalLocation names a location without a file (a package, a function).
type LogicalLocation struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

// PhysicalLocation is a region of an artifact.
type PhysicalLocation struct {
	ArtifactLocation *ArtifactLocation `json:"artifactLocation,omitempty"`
	Region           *Region           `json:"region,omitempty"`
}

// ArtifactLocation is a file, relative to a base such as %SRCROOT%.
type ArtifactLocation struct {
	URI       string `json:"uri,omitempty"`
	URIBaseID string `json:"uriBaseId,omitempty"`
	Index     *int   `json:"index,omitempty"`
}

// Region is a 1-based text range.
type Region struct {
	StartLine   int              `json:"startLine,omitempty"`
	StartColumn int              `json:"startColumn,omitempty"`
	EndLine     int              `json:"endLine,omitempty"`
	EndColumn   int              `json:"endColumn,omitempty"`
	Snippet     *ArtifactContent `json:"snippet,omitempty"`
}

// ArtifactContent is a piece of an artifact's text.
type ArtifactContent struct {
	Text string `json:"text,omitempty"`
}

// PropertyBag is SARIF's open-ended properties object. The keys GitHub code
// scanning reads have fields; every other key is kept in Extra so that a
// log read and written again loses nothing.
type PropertyBag struct {
	Tags []string
	// Precision is very-high, high, medium or low.
	Precision string
	// SecuritySeverity is a score from 0.0 to 10.0, as a string (GitHub
	// maps >= 9.0 to critical, 7.0 to high, 4.0 to medium, 0.1 to low).
	SecuritySeverity string
	Extra            map[string]json.RawMessage
}

// MarshalJSON writes the named keys and Extra in one sorted object.
func (p PropertyBag) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(p.Extra)+3)
	for k, v := range p.Extra {
		m[k] = v
	}
	if len(p.Tags) > 0 {
		m["tags"] = p.Tags
	}
	if p.Precision != "" {
		m["precision"] = p.Precision
	}
	if p.SecuritySeverity != "" {
		m["security-severity"] = p.SecuritySeverity
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the named keys into their fields and keeps the rest.
// security-severity is accepted as a number too (some scanners write one).
func (p *PropertyBag) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("sarif: properties: %w", err)
	}
	*p = PropertyBag{}
	if raw, ok := m["tags"]; ok {
		if err := json.Unmarshal(raw, &p.Tags); err != nil {
			return fmt.Errorf("sarif: properties.tags: %w", err)
		}
		delete(m, "tags")
	}
	if raw, ok := m["precision"]; ok {
		if err := json.Unmarshal(raw, &p.Precision); err != nil {
			return fmt.Errorf("sarif: properties.precision: %w", err)
		}
		delete(m, "precision")
	}
	if raw, ok := m["security-severity"]; ok {
		var n json.Number
		if err := json.Unmarshal(raw, &p.SecuritySeverity); err != nil {
			if err2 := json.Unmarshal(raw, &n); err2 != nil {
				return fmt.Errorf("sarif: properties.security-severity: %w", err)
			}
			p.SecuritySeverity = n.String()
		}
		delete(m, "security-severity")
	}
	if len(m) > 0 {
		p.Extra = m
	}
	return nil
}

// ExtraKeys lists the keys kept in Extra, sorted.
func (p *PropertyBag) ExtraKeys() []string {
	if p == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(p.Extra))
}

// Encode writes l as indented JSON, filling in the schema and version.
func Encode(w io.Writer, l *Log) error {
	if l.Version == "" {
		l.Version = Version
	}
	if l.Schema == "" {
		l.Schema = Schema
	}
	for i := range l.Runs {
		if l.Runs[i].Results == nil {
			l.Runs[i].Results = []Result{} // "results": [] says "ran, found nothing"
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(l)
}

// Decode reads one SARIF 2.1.0 log of at most MaxLogSize bytes.
func Decode(r io.Reader) (*Log, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxLogSize+1))
	if err != nil {
		return nil, fmt.Errorf("sarif: %w", err)
	}
	if len(data) > MaxLogSize {
		return nil, ErrTooLarge
	}
	var l Log
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("sarif: %w", err)
	}
	if dec.More() {
		return nil, errors.New("sarif: trailing data after the log")
	}
	if l.Version != Version {
		return nil, fmt.Errorf("%w %q (want %s)", ErrVersion, l.Version, Version)
	}
	return &l, nil
}
