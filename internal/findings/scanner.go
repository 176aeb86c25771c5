package findings

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// Scanner intake: a scanner's alert (a SARIF result, a GitHub code- or
// secret-scanning alert, an Orca alert) becomes a finding of the sast,
// secret or iac fix type, or is sorted out with the reason. Everything an
// alert says is untrusted — message, snippet, rule help, file path — and
// reaches an agent only through Untrusted (fenced, capped, redacted by the
// run). The fix type is decided from structured data only (the tool, the
// rule's tags, fixrail.yaml's scanners), never from free text.

// The groups a scan sorts alerts into.
const (
	GroupToFix        = "to-fix"
	GroupBranchExists = "branch-exists"
	GroupUnfixable    = "unfixable"
	GroupPosture      = "posture"
)

// The scanner fix types.
const (
	SASTFixType   = "sast"
	SecretFixType = "secret"
	IaCFixType    = "iac"
)

// Alert text limits: longer text is cut with a marker (the fence caps it
// again); a path or a rule id over its limit is refused.
const (
	maxAlertText = 16 << 10
	maxRuleBytes = 512
	maxPathBytes = 4096
	// maxRegionLines bounds the lines a region's content hash reads.
	maxRegionLines = 200
	// maxSourceBytes bounds a file read for a region's content.
	maxSourceBytes = 8 << 20
	// minSecretBytes: a shorter "credential" would match by hash in
	// places it is not (and is no credential).
	minSecretBytes = 8
)

// knownTools maps a scanner's name (SARIF tool.driver.name, GitHub's
// tool.name; lowercased, and its first word) to the fix type of its
// results. Trivy reports vulnerabilities, misconfigurations and secrets
// alike: its rule tags decide, and without one it is not guessed.
var knownTools = map[string]string{
	"gitleaks": SecretFixType, "trufflehog": SecretFixType, "detect-secrets": SecretFixType, "ggshield": SecretFixType,
	"tfsec": IaCFixType, "checkov": IaCFixType, "kics": IaCFixType, "terrascan": IaCFixType, "defsec": IaCFixType, "tflint": IaCFixType,
	"gosec": SASTFixType, "semgrep": SASTFixType, "codeql": SASTFixType, "eslint": SASTFixType, "bandit": SASTFixType,
	"brakeman": SASTFixType, "njsscan": SASTFixType, "bearer": SASTFixType, "spotbugs": SASTFixType, "psalm": SASTFixType,
	"osv-scanner": VulnFixType, "grype": VulnFixType,
}

// tagTypes maps a rule tag to a fix type (Trivy's class tags; secret and
// IaC tags other scanners use).
var tagTypes = map[string]string{
	"secret": SecretFixType, "secrets": SecretFixType, "secret-detection": SecretFixType,
	"misconfiguration": IaCFixType, "iac": IaCFixType,
	"vulnerability": VulnFixType,
}

// ScannerFixType decides an alert's fix type and says how: configured (the
// scanners: entry answering for tool, "" when none) wins; then the rule's
// tags; then the tool's name. "" when nothing structured says.
func ScannerFixType(tool string, tags []string, configured string) (typ, how string) {
	if configured != "" {
		return configured, "fixrail.yaml's scanners: entry for " + bound(tool, 60)
	}
	seen := ""
	for _, t := range tags {
		if ft, ok := tagTypes[strings.ToLower(strings.TrimSpace(t))]; ok {
			if seen != "" && seen != ft {
				seen = "conflict"
				break
			}
			seen = ft
		}
	}
	if seen != "" && seen != "conflict" {
		// A generic "vulnerability" tag is a dependency only from a tool
		// that reports dependencies; a SAST rule may be tagged so too.
		if seen != VulnFixType || toolType(tool) == "" || toolType(tool) == VulnFixType || strings.EqualFold(toolWord(tool), "trivy") {
			return seen, "the rule's tags"
		}
	}
	if ft := toolType(tool); ft != "" {
		return ft, "the tool " + bound(tool, 60)
	}
	return "", ""
}

func toolType(tool string) string {
	t := strings.ToLower(strings.TrimSpace(tool))
	if ft, ok := knownTools[t]; ok {
		return ft
	}
	return knownTools[toolWord(tool)]
}

// toolWord is a tool name's first word, lowercased ("Semgrep OSS",
// "CodeQL command-line toolchain").
func toolWord(tool string) string {
	w, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tool)), " ")
	return w
}

// toolSlug is the tool part of a finding id: letters and digits of its
// first word, at most 16.
func toolSlug(tool string) string {
	var b strings.Builder
	for _, r := range toolWord(tool) {
		if ('a' <= r && r <= 'z' || '0' <= r && r <= '9') && b.Len() < 16 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "scan"
	}
	return b.String()
}

// ScannerFindingID is the finding id of a scanner's result: the tool, then
// 16 hex digits of a SHA-256 over the tool, the rule, the path, the
// flagged lines' content with whitespace removed (not their line numbers,
// so an edit above the finding does not change it; empty for a secret,
// whose line holds the credential) and the occurrence of that content
// among the tool's results for the same rule and file. Rerunning the
// scanner on the same tree gives the same ids.
func ScannerFindingID(tool, rule, path, content string, occurrence int) string {
	h := sha256.New()
	for _, s := range []string{tool, rule, path, content, fmt.Sprint(occurrence)} {
		fmt.Fprintf(h, "%d:%s\x00", len(s), s)
	}
	return toolSlug(tool) + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Tree is where an alert's file is read: the base commit a run works (the
// CLI reads it through git), or a directory (DirTree). ReadFile returns a
// regular file's bytes, at most MaxSourceBytes; an error wrapping
// fs.ErrNotExist when the tree has no file at path; another error (a
// symbolic link, a directory, a submodule, too large) says why it is no
// file to edit.
type Tree interface {
	ReadFile(path string) ([]byte, error)
}

// MaxSourceBytes bounds a file an alert names.
const MaxSourceBytes = maxSourceBytes

// DirTree reads files of a directory: inside it (symlinks resolved, and a
// path through any symbolic link refused: an alert names the file itself)
// and regular.
type DirTree string

// ReadFile implements Tree.
func (d DirTree) ReadFile(p string) ([]byte, error) {
	full, err := pathguard.ResolveWithin(string(d), p)
	if err != nil {
		return nil, err
	}
	if full != filepath.Join(evalOr(string(d)), filepath.FromSlash(p)) {
		return nil, errors.New("it runs through a symbolic link (name the file it resolves to)")
	}
	return pathguard.ReadRegular(full, maxSourceBytes)
}

// alertPath validates a path an alert names: relative, clean, printable,
// and a regular file of tree. It returns the clean path and the file's
// bytes, or why not; with no tree only the path's form is checked.
func alertPath(tree Tree, p string) (string, []byte, error) {
	if len(p) > maxPathBytes {
		return "", nil, fmt.Errorf("its path is %d bytes (limit %d)", len(p), maxPathBytes)
	}
	c, err := pathguard.CleanRel(p)
	if err != nil {
		return "", nil, fmt.Errorf("its path is not a repository path: %s", bound(err.Error(), 200))
	}
	if tree == nil {
		return c, nil, nil
	}
	data, err := tree.ReadFile(c)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, fmt.Errorf("%s is not in the repository's tree (the alert is of another tree, or names an image or a package)", bound(c, 200))
	case errors.Is(err, pathguard.ErrEscape):
		return "", nil, fmt.Errorf("%s is not inside the repository: %s", bound(c, 200), bound(err.Error(), 200))
	case err != nil:
		return "", nil, fmt.Errorf("%s is no file to edit: %s", bound(c, 200), bound(err.Error(), 200))
	}
	return c, data, nil
}

// absUnder turns an absolute file path a scanner wrote into one relative
// to root, when it lies beneath it (as GitHub strips the checkout path).
func absUnder(root, p string) (string, bool) {
	if root == "" {
		return "", false
	}
	for _, r := range []string{root, evalOr(root)} {
		r = filepath.Clean(r)
		if rel, ok := strings.CutPrefix(filepath.Clean(p), r+string(filepath.Separator)); ok {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// regionContent is the text of lines start..end (1-based, end 0 = start)
// of data with spaces, tabs and carriage returns removed; ok is false when
// the region lies past the end of the file.
func regionContent(data []byte, start, end int) (string, bool) {
	if start <= 0 {
		return "", true
	}
	if end < start {
		end = start
	}
	end = min(end, start+maxRegionLines-1)
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if start > len(lines) {
		return "", false
	}
	end = min(end, len(lines))
	return stripSpace(strings.Join(lines[start-1:end], "\n")), true
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// maskedSecret reports whether a scanner's copy of a credential is masked
// or redacted (gitleaks --redact: REDACTED or a prefix and "..."; Trivy:
// *****; others: xxxx, ####, <hidden>): no hash of it matches the tree.
func maskedSecret(v string) bool {
	t := strings.TrimSpace(v)
	switch {
	case t == "", strings.EqualFold(t, "REDACTED"), strings.Contains(strings.ToUpper(t), "[REDACTED]"),
		strings.Contains(t, "..."), strings.Contains(t, "…"), strings.Contains(t, "***"),
		strings.Contains(t, "####"), strings.Contains(strings.ToLower(t), "xxxx"),
		strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">"):
		return true
	}
	return false
}

// SecretDigest is the hex SHA-256 of a credential's value.
func SecretDigest(v string) string {
	s := sha256.Sum256([]byte(v))
	return hex.EncodeToString(s[:])
}

// scrubSecret removes a credential's value from text an alert carries,
// so that no field but Finding.Secret holds it.
func scrubSecret(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[secret removed by fixrail]")
}

// alertText bounds one untrusted text of an alert.
func alertText(s string) string {
	return untrusted.Cap(strings.ToValidUTF8(s, "\uFFFD"), maxAlertText)
}

// joinText joins the non-empty parts of an alert's text, each headed.
func joinText(parts ...[2]string) string {
	var b strings.Builder
	for _, p := range parts {
		if strings.TrimSpace(p[1]) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if p[0] != "" {
			b.WriteString(p[0] + ":\n")
		}
		b.WriteString(alertText(p[1]))
	}
	return b.String()
}

// ScannerAlert is an alert reduced to what every scanner source gives:
// the common input of scannerFinding.
type ScannerAlert struct {
	Tool, Rule, RuleName string
	Tags                 []string
	Level, Severity      string
	// Path and the region (1-based; EndLine 0 = Line) as the alert says.
	Path          string
	Line, EndLine int
	// PathProblem, when set, is why Path is no repository path (the
	// source could tell before any check: a URI scheme, say).
	PathProblem string
	Message     string
	Description string
	Help        string
	Snippet     string
	// Secret is a secret alert's value as the source gave it ("" or
	// masked when it did not).
	Secret string
	Source string
}

// classify is the one judgement every scanner source shares: the fix
// type, the path (validated and read from tree), the secret's value, and
// the finding id. It returns the finding and, when it cannot be worked,
// the group (unfixable or posture) and why. occ counts the content keys
// seen so far in one log, for the id's occurrence; nil means 0.
func (a *ScannerAlert) classify(tree Tree, configured string, occ map[string]int) (f *Finding, group, why string) {
	typ, how := ScannerFixType(a.Tool, a.Tags, configured)
	if len(a.Rule) > maxRuleBytes {
		return nil, GroupUnfixable, fmt.Sprintf("its rule id is %d bytes (limit %d)", len(a.Rule), maxRuleBytes)
	}
	ev := &Evidence{Rule: a.Rule, Tool: a.Tool, Severity: a.Severity, Line: max(a.Line, 0)}
	if a.EndLine > a.Line {
		ev.EndLine = a.EndLine
	}
	f = &Finding{FixType: typ, Source: a.Source, Evidence: ev}
	var data []byte
	var perr error
	switch {
	case a.PathProblem != "":
		perr = errors.New(a.PathProblem)
	case a.Path != "":
		ev.Path, data, perr = alertPath(tree, a.Path)
		if perr != nil {
			ev.Path = "" // an unvalidated path reaches no finding
		}
	}
	// Only a secret alert's value is a credential (a SARIF snippet is the
	// flagged code for any other).
	raw, secret := "", ""
	if typ == SecretFixType {
		raw = a.Secret
		if !maskedSecret(raw) {
			secret = raw
		}
	}
	content := ""
	if data != nil {
		c, ok := regionContent(data, a.Line, a.EndLine)
		if !ok {
			perr = fmt.Errorf("line %d is past the end of %s (the log is of another tree)", a.Line, ev.Path)
		}
		// The id carries no function of a credential: a secret alert's
		// line holds one (masked in the log or not), so only its tool,
		// rule, file and occurrence name it.
		if typ != SecretFixType {
			content = c
		}
	} else if a.Snippet != "" && typ != SecretFixType {
		content = stripSpace(a.Snippet)
	}
	key := strings.Join([]string{a.Tool, a.Rule, ev.Path, content}, "\x00")
	n := 0
	if occ != nil {
		n = occ[key]
		occ[key]++
	}
	f.ID = ScannerFindingID(a.Tool, a.Rule, ev.Path, content, n)

	title := a.RuleName
	if title == "" {
		title = a.Rule
	}
	if ev.Path != "" {
		title += " in " + ev.Path
	}
	f.Title = bound(scrubSecret(title, raw), 300)
	f.Body = scrubSecret(joinText([2]string{"", a.Message}, [2]string{"Rule", a.Description}, [2]string{"Help", a.Help}), raw)
	if typ != SecretFixType {
		ev.Snippet = alertText(a.Snippet)
	}
	ev.Rule, ev.Tool = scrubSecret(ev.Rule, raw), scrubSecret(ev.Tool, raw)

	switch {
	case typ == "":
		return f, GroupUnfixable, fmt.Sprintf("no fix type for the tool %q: nothing structured (a rule tag, a known tool) says sast, secret or iac; add a scanners: entry answering for it to fixrail.yaml", bound(a.Tool, 60))
	case slices.Contains(a.Tags, "scm_posture") || slices.Contains(a.Tags, "posture"):
		return f, GroupPosture, "a fact about the repository's settings, not its files: a person changes it"
	case typ == VulnFixType:
		return f, GroupUnfixable, "a vulnerable dependency (by " + how + "): fixrail works one as run --vuln FILE (osv-scanner's JSON or SARIF) or --alert N (Dependabot), which name its package and version"
	case typ != SASTFixType && typ != SecretFixType && typ != IaCFixType && configured == "":
		return f, GroupUnfixable, fmt.Sprintf("fix type %q is not a scanner fix type", typ)
	case a.Path == "":
		return f, GroupUnfixable, "it names no file: there is nothing in the tree to edit"
	case perr != nil:
		return f, GroupUnfixable, perr.Error()
	}
	if typ == SecretFixType {
		switch {
		case maskedSecret(raw):
			return f, GroupUnfixable, "the credential's value is masked or redacted in the alert (gitleaks --redact, say): fixrail matches the tree by the value's hash and needs it; rescan without redaction, or remove it by hand — and rotate it first either way"
		case len(secret) < minSecretBytes:
			return f, GroupUnfixable, fmt.Sprintf("the credential's value is %d bytes: too short to match by hash without false matches", len(secret))
		case data != nil && !strings.Contains(string(data), secret):
			return f, GroupUnfixable, fmt.Sprintf("the credential is not in %s any more (only in history): no edit of the tree removes it; rotate it", ev.Path)
		}
		f.Secret = secret
		ev.SecretSHA256 = SecretDigest(secret)
	}
	return f, GroupToFix, "fix type " + typ + " (by " + how + ")"
}

// readLimited reads a regular file of at most limit bytes for intake.
func readLimited(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadReport, path)
	}
	data, err := pathguard.ReadRegular(path, limit)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	return data, nil
}
