package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// Claim is what a fixrail commit says of itself: the finding, the fix
// type, the base it was judged on, the reproducing test and its symptom,
// and every path the commit changes against that base. fixrail writes it
// as the commit's trailers and as the fenced JSON block of the PR body;
// Verify re-derives each part from the repository.
type Claim struct {
	Finding string `json:"finding"`
	FixType string `json:"fix_type"`
	// Base is the full id of the commit the fix was judged on: the
	// commit's one parent.
	Base string `json:"base"`
	// TestPath and TestName name the reproducing test (a bug); Symptom is
	// what its failure on the base printed, as the plan declared it, and
	// SymptomSHA256 its hash. Empty for a type with no test (cve).
	TestPath      string `json:"test_path,omitempty"`
	TestName      string `json:"test_name,omitempty"`
	Symptom       string `json:"symptom,omitempty"`
	SymptomSHA256 string `json:"symptom_sha256,omitempty"`
	// Ecosystem, Package and Manifest name the dependency a cve fix moved,
	// as the base's manifests declare it: verify asks the advisory data
	// about it again. Empty for every other type.
	Ecosystem string `json:"ecosystem,omitempty"`
	Package   string `json:"package,omitempty"`
	Manifest  string `json:"manifest,omitempty"`
	// Tool, Rule, Location (path:line-endline, path:line or path) and
	// Severity name the scanner result a scanned fix (sast, iac) was
	// judged by: verify runs the base's scanner for the tool again. Empty
	// for every other type.
	Tool     string `json:"tool,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Location string `json:"location,omitempty"`
	Severity string `json:"severity,omitempty"`
	// Evidence are the files the investigation wrote (the test first, then
	// its fixtures); Files the fix's own. The commit's tree is the base
	// plus exactly these paths.
	Evidence []string `json:"evidence,omitempty"`
	Files    []string `json:"files"`
	// Version is the fixrail that made the commit (BuildVersion).
	Version string `json:"fixrail_version"`
}

// The trailer keys, in the order fixrail writes them. Evidence and File
// repeat, one path each.
const (
	keyFinding  = "Fixrail-Finding"
	keyFixType  = "Fixrail-Fix-Type"
	keyBase     = "Fixrail-Base"
	keyTestPath = "Fixrail-Test-Path"
	keyTestName = "Fixrail-Test-Name"
	keySymptom  = "Fixrail-Symptom"
	keySymHash  = "Fixrail-Symptom-SHA256"
	keyEco      = "Fixrail-Ecosystem"
	keyPackage  = "Fixrail-Package"
	keyManifest = "Fixrail-Manifest"
	keyTool     = "Fixrail-Tool"
	keyRule     = "Fixrail-Rule"
	keyLocation = "Fixrail-Location"
	keySeverity = "Fixrail-Severity"
	keyEvidence = "Fixrail-Evidence"
	keyFile     = "Fixrail-File"
	keyVersion  = "Fixrail-Version"
)

// SymptomHash is the hex SHA-256 of a declared symptom.
func SymptomHash(symptom string) string {
	sum := sha256.Sum256([]byte(symptom))
	return hex.EncodeToString(sum[:])
}

// BuildVersion is the fixrail version a trailer records: the module
// version a release build knows, else "devel", with the VCS revision
// when the build stamped one. It never holds a space.
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				v += "-dirty"
			}
		}
	}
	return v
}

// Trailers renders c as a commit message's trailer block: one "Key:
// value" line each, a value quoted (Go syntax, ASCII only) when it is
// anything but plain printable ASCII, so the block is inert in any
// terminal and parses back exactly.
func (c Claim) Trailers() string {
	var b strings.Builder
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, trailerValue(v))
		}
	}
	add(keyFinding, c.Finding)
	add(keyFixType, c.FixType)
	add(keyBase, c.Base)
	add(keyTestPath, c.TestPath)
	add(keyTestName, c.TestName)
	if c.Symptom != "" {
		// Always quoted: it is the one value an agent chose in prose.
		fmt.Fprintf(&b, "%s: %s\n", keySymptom, strconv.QuoteToASCII(c.Symptom))
	}
	add(keySymHash, c.SymptomSHA256)
	add(keyEco, c.Ecosystem)
	add(keyPackage, c.Package)
	add(keyManifest, c.Manifest)
	add(keyTool, c.Tool)
	add(keyRule, c.Rule)
	add(keyLocation, c.Location)
	add(keySeverity, c.Severity)
	for _, p := range c.Evidence {
		add(keyEvidence, p)
	}
	for _, p := range c.Files {
		add(keyFile, p)
	}
	add(keyVersion, c.Version)
	return b.String()
}

func trailerValue(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e || v[i] == '"' {
			return strconv.QuoteToASCII(v)
		}
	}
	return v
}

// ErrNoClaim means a commit carries no fixrail trailers at all: it was not
// made by fixrail (or they were stripped).
var ErrNoClaim = errors.New("the commit carries no Fixrail-* trailers")

var trailerLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9-]+): (.*)$`) })

// ParseTrailers reads the claim from a commit message's last paragraph.
// Other trailers there (Signed-off-by) are left alone; a Fixrail-* key
// fixrail does not write, one given twice, a value that does not parse,
// a part missing: each is an error naming it.
func ParseTrailers(msg string) (Claim, error) {
	msg = strings.TrimRight(msg, "\n")
	block := msg
	if i := strings.LastIndex(msg, "\n\n"); i >= 0 {
		block = msg[i+2:]
	}
	var c Claim
	fields := map[string]*string{keyFinding: &c.Finding, keyFixType: &c.FixType, keyBase: &c.Base, keyTestPath: &c.TestPath,
		keyTestName: &c.TestName, keySymptom: &c.Symptom, keySymHash: &c.SymptomSHA256, keyVersion: &c.Version,
		keyEco: &c.Ecosystem, keyPackage: &c.Package, keyManifest: &c.Manifest,
		keyTool: &c.Tool, keyRule: &c.Rule, keyLocation: &c.Location, keySeverity: &c.Severity}
	lists := map[string]*[]string{keyEvidence: &c.Evidence, keyFile: &c.Files}
	seen := map[string]bool{}
	any := false
	for _, line := range strings.Split(block, "\n") {
		m := trailerLine().FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(strings.ToLower(m[1]), "fixrail-") {
			if strings.HasPrefix(strings.ToLower(line), "fixrail-") {
				return Claim{}, fmt.Errorf("trailer line %q does not parse", line)
			}
			continue
		}
		any = true
		k, raw := m[1], m[2]
		v := raw
		if strings.HasPrefix(raw, `"`) {
			u, err := strconv.Unquote(raw)
			if err != nil {
				return Claim{}, fmt.Errorf("trailer %s: value %s does not unquote", k, raw)
			}
			v = u
		}
		if list, ok := lists[k]; ok {
			*list = append(*list, v)
			continue
		}
		field, ok := fields[k]
		switch {
		case !ok:
			return Claim{}, fmt.Errorf("trailer %s is not one fixrail writes", k)
		case seen[k]:
			return Claim{}, fmt.Errorf("trailer %s is given twice", k)
		}
		seen[k], *field = true, v
	}
	if !any {
		return Claim{}, ErrNoClaim
	}
	return c, c.Validate()
}

var fullSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })

// Validate holds a claim to what fixrail writes: every part present, the
// base a full commit id, paths clean and relative and each named once,
// the test among the evidence, and the symptom's hash its own.
func (c Claim) Validate() error {
	switch {
	case c.Finding == "":
		return fmt.Errorf("no %s trailer", keyFinding)
	case c.FixType == "":
		return fmt.Errorf("no %s trailer", keyFixType)
	case !fullSHA().MatchString(c.Base):
		return fmt.Errorf("%s %q is not a full commit id", keyBase, c.Base)
	case c.Version == "":
		return fmt.Errorf("no %s trailer", keyVersion)
	case len(c.Files) == 0:
		return fmt.Errorf("no %s trailer: the claim names no file the fix changed", keyFile)
	}
	seen := map[string]bool{}
	for _, p := range slices.Concat(c.Evidence, c.Files) {
		cl, err := pathguard.CleanRel(p)
		if err != nil || cl != p {
			return fmt.Errorf("path %q is not a clean relative path", p)
		}
		if seen[p] {
			return fmt.Errorf("path %s is named twice", p)
		}
		seen[p] = true
	}
	if c.Ecosystem != "" || c.Package != "" || c.Manifest != "" {
		if c.Ecosystem == "" || c.Package == "" || c.Manifest == "" {
			return fmt.Errorf("%s, %s and %s go together", keyEco, keyPackage, keyManifest)
		}
		if cl, err := pathguard.CleanRel(c.Manifest); err != nil || cl != c.Manifest {
			return fmt.Errorf("%s %q is not a clean relative path", keyManifest, c.Manifest)
		}
	}
	if c.Tool != "" || c.Rule != "" || c.Location != "" || c.Severity != "" {
		if c.Rule == "" || c.Location == "" {
			return fmt.Errorf("%s and %s go together, with %s and %s", keyRule, keyLocation, keyTool, keySeverity)
		}
		if _, err := c.Alert(); err != nil {
			return err
		}
	}
	if c.TestPath == "" {
		if c.TestName != "" || c.Symptom != "" || c.SymptomSHA256 != "" {
			return fmt.Errorf("a test name or symptom with no %s", keyTestPath)
		}
		return nil
	}
	switch {
	case len(c.Evidence) == 0 || c.Evidence[0] != c.TestPath:
		return fmt.Errorf("%s %s is not the first %s", keyTestPath, c.TestPath, keyEvidence)
	case c.Symptom == "":
		return fmt.Errorf("no %s trailer for the test", keySymptom)
	case c.SymptomSHA256 != SymptomHash(c.Symptom):
		return fmt.Errorf("%s does not match %s: the symptom was changed after fixrail wrote it", keySymHash, keySymptom)
	}
	return nil
}

// maxLocation bounds a Fixrail-Location value.
const maxLocation = 4096

// Alert is the scanner result the claim names (Rule and Location set),
// its values validated as the pipeline validated them before planning.
func (c Claim) Alert() (fixtype.Alert, error) {
	if len(c.Location) > maxLocation {
		return fixtype.Alert{}, fmt.Errorf("%s is over %d bytes", keyLocation, maxLocation)
	}
	a := fixtype.Alert{Tool: c.Tool, Rule: c.Rule, Severity: c.Severity, Path: c.Location}
	// path, path:line or path:line-end; a path holding a colon is written
	// with its lines, so the last colon is the separator.
	if i := strings.LastIndexByte(c.Location, ':'); i >= 0 {
		lines := c.Location[i+1:]
		from, to, span := strings.Cut(lines, "-")
		l, err := strconv.Atoi(from)
		if err != nil || l <= 0 || strconv.Itoa(l) != from {
			return fixtype.Alert{}, fmt.Errorf("%s %q: %q is not a line number", keyLocation, c.Location, from)
		}
		a.Path, a.Line = c.Location[:i], l
		if span {
			e, err := strconv.Atoi(to)
			if err != nil || e <= l || strconv.Itoa(e) != to {
				return fixtype.Alert{}, fmt.Errorf("%s %q: %q is not an end line after %d", keyLocation, c.Location, to, l)
			}
			a.EndLine = e
		}
	}
	if err := fixtype.ValidAlert(a); err != nil {
		return fixtype.Alert{}, fmt.Errorf("%s/%s: %v", keyRule, keyLocation, err)
	}
	return a, nil
}

// bodyMarker opens the PR body's evidence block, so a reader (and
// ParseBody) finds it by a fixed line.
const bodyMarker = "### Evidence for `fixrail verify`"

// BodySection renders c as the PR body's evidence section: a heading, one
// line of what it is, and the claim as a fenced JSON block. No backtick
// can close the fence (each is escaped as \u0060, which JSON reads back).
func (c Claim) BodySection() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		panic(err) // strings and slices of strings always encode
	}
	js := strings.ReplaceAll(strings.TrimRight(buf.String(), "\n"), "`", `\u0060`)
	return "\n" + bodyMarker + "\n\nThe commit's `Fixrail-*` trailers, as data. `fixrail verify` re-proves them from the repository alone.\n\n```json\n" + js + "\n```\n"
}

// ParseBody finds the evidence block of a PR body and decodes it.
func ParseBody(body string) (Claim, error) {
	body = strings.ReplaceAll(body, "\r\n", "\n") // a body edited on the web comes back with CRLF
	// The last such line: fixrail writes its block after every text it
	// quotes (the agent's own words are a text block above it, and may
	// hold this very line), and nothing after it but the run's line and
	// its after-PR section, whose lines never are this one.
	i := strings.LastIndex(body, "\n"+bodyMarker+"\n")
	if i < 0 {
		return Claim{}, errors.New("the PR body has no evidence block")
	}
	_, rest, ok := strings.Cut(body[i+len(bodyMarker)+2:], "```json\n")
	if !ok {
		return Claim{}, errors.New("the PR body's evidence block has no JSON fence")
	}
	js, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		return Claim{}, errors.New("the PR body's evidence block is not closed")
	}
	var c Claim
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Claim{}, fmt.Errorf("the PR body's evidence block: %w", err)
	}
	return c, nil
}

// Diff names the first field in which two claims differ, or "".
func (c Claim) Diff(o Claim) string {
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(o)
	if bytes.Equal(a, b) {
		return ""
	}
	var ma, mb map[string]any
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	keys := []string{"finding", "fix_type", "base", "test_path", "test_name", "symptom", "symptom_sha256", "ecosystem", "package", "manifest", "tool", "rule", "location", "severity", "evidence", "files", "fixrail_version"}
	for _, k := range keys {
		x, _ := json.Marshal(ma[k])
		y, _ := json.Marshal(mb[k])
		if !bytes.Equal(x, y) {
			return k
		}
	}
	return "?"
}
