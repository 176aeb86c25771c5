// Package risk owns the routing score of a finding: a level that inputs can
// only raise. At intake (P1) it reads the report's labels, keywords in its
// title and body, the paths it names and the reporter's access; after the
// root cause (P3) it is re-scored from the planned files and their imports,
// and the later score, which keeps every earlier input, wins. A High score
// routes the run to ESCALATE high-risk: the read-only investigation may
// still run, the fix never does. The score and its inputs are data for the
// run report.
//
// Everything scored here is attacker-controlled text. Scanning is bounded
// and linear, and nothing a reporter writes can lower a score: stuffing
// "sev1 payments" into a report only forces an escalation, and escalations
// spend the reporter's per-actor budget (internal/ledger).
package risk

import (
	"fmt"
	"github.com/fixrail/fixrail/internal/untrusted"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/sensitive"
	"github.com/fixrail/fixrail/internal/verdict"
)

// Reason is the ESCALATE reason of a High score.
const Reason = verdict.ReasonHighRisk

// Level orders risk. Only High changes the route.
type Level int

// The levels.
const (
	Low Level = iota
	Elevated
	High
)

func (l Level) String() string {
	switch l {
	case Low:
		return "low"
	case Elevated:
		return "elevated"
	case High:
		return "high"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's name back (the run report is scrubbed
// through its JSON form); an unknown name is an error, never Low.
func (l *Level) UnmarshalText(b []byte) error {
	for _, v := range []Level{Low, Elevated, High} {
		if v.String() == string(b) {
			*l = v
			return nil
		}
	}
	return fmt.Errorf("risk level %q: want low, elevated or high", b)
}

// The stages a score is taken at.
const (
	StageIntake    = "intake"
	StageRootCause = "root-cause"
)

// Input is one reason the score is what it is.
type Input struct {
	Stage string `json:"stage"`
	// Kind is label, keyword, path, access, planned-file or import.
	Kind  string `json:"kind"`
	Value string `json:"value"`
	Level Level  `json:"level"`
	Why   string `json:"why"`
}

// Score is a level and every input that set it.
type Score struct {
	Level  Level   `json:"level"`
	Stage  string  `json:"stage"`
	Inputs []Input `json:"inputs"`
}

// High reports whether the run must escalate as high-risk.
func (s Score) High() bool { return s.Level >= High }

// Reason is a one-line account of the High inputs, for the escalation.
func (s Score) Reason() string {
	var parts []string
	for _, in := range s.Inputs {
		if in.Level >= s.Level && len(parts) < 5 {
			parts = append(parts, in.Kind+" "+untrusted.Quote(in.Value)+": "+in.Why)
		}
	}
	if len(parts) == 0 {
		return "risk " + s.Level.String()
	}
	return "risk " + s.Level.String() + " (" + strings.Join(parts, "; ") + ")"
}

func (s *Score) add(in Input) {
	if len(s.Inputs) >= maxInputs {
		// Keep the level honest even when the list is cut.
		s.Level = max(s.Level, in.Level)
		return
	}
	s.Inputs = append(s.Inputs, in)
	s.Level = max(s.Level, in.Level)
}

// maxInputs bounds the inputs kept: a report naming ten thousand paths
// must not make a ten-thousand-line run report.
const maxInputs = 64

// Access is what the reporter may do in the repository.
type Access string

// The access levels. Write covers write, maintain and admin (GitHub's
// permission names map onto it with [ParseAccess]).
const (
	AccessWrite Access = "write"
	AccessRead  Access = "read"
	AccessNone  Access = "none"
	// AccessOperator is a local run: the operator gave fixrail the report.
	AccessOperator Access = "operator"
	// AccessUnknown is treated as no write access.
	AccessUnknown Access = ""
)

// ParseAccess maps a forge permission name (GitHub's admin, maintain,
// write, triage, read, none) to an Access; anything else is unknown.
func ParseAccess(p string) Access {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "admin", "maintain", "write":
		return AccessWrite
	case "triage", "read":
		return AccessRead
	case "none":
		return AccessNone
	}
	return AccessUnknown
}

// DefaultLabels are the high-risk labels; risk.labels adds to them.
var DefaultLabels = []string{"security", "sev0", "sev1", "sev-0", "sev-1", "p0", "critical", "data-loss", "dataloss",
	"payments", "billing", "auth", "vulnerability", "incident", "privacy"}

// DefaultKeywords are the high-risk words and phrases in a title or body;
// risk.keywords adds to them. A phrase matches consecutive words; a word
// matches itself and its plural.
var DefaultKeywords = []string{
	"payment", "billing", "checkout", "refund", "invoice", "charge card",
	"auth", "authentication", "authorization", "authn", "authz", "oauth", "sso", "saml", "login", "password", "credential", "2fa", "mfa",
	"sev0", "sev1", "data loss", "data leak", "corruption", "corrupted",
	"security", "vulnerability", "cve", "exploit", "rce", "remote code execution", "injection", "xss", "csrf", "ssrf",
	"privilege escalation", "gdpr", "pii", "hipaa", "encryption", "decrypt", "secret",
}

// Rules score findings under one configuration.
type Rules struct {
	labels          map[string]bool
	keywords        [][]string // each a phrase of lower-case words
	fixWithoutWrite bool
	policy          *sensitive.Policy
}

// NewRules builds the rules: the built-in sets plus cfg's, never fewer.
// policy classifies paths (paths.fixable, paths.sensitive, the test glob);
// nil classifies with the built-in deny list only.
func NewRules(cfg config.Risk, policy *sensitive.Policy) *Rules {
	r := &Rules{labels: map[string]bool{}, fixWithoutWrite: cfg.FixWithoutWrite, policy: policy}
	for _, l := range append(slices.Clone(DefaultLabels), cfg.Labels...) {
		r.labels[strings.ToLower(strings.TrimSpace(l))] = true
	}
	seen := map[string]bool{}
	for _, k := range append(slices.Clone(DefaultKeywords), cfg.Keywords...) {
		words := tokens(k, 8)
		key := strings.Join(words, " ")
		if len(words) > 0 && !seen[key] {
			seen[key] = true
			r.keywords = append(r.keywords, words)
		}
	}
	return r
}

// Report is what intake scores.
type Report struct {
	Title, Body string
	Labels      []string
	Access      Access
	// Implied are keywords the finding's fix type names by definition
	// (fixtype.Type.Implied); a match on one is not scored.
	Implied []string
	// Names are what the finding's machine source declared a package's
	// name to be (findings.Evidence.Package): a Go module path such as
	// golang.org/x/text looks like a path but is not one, so a word equal
	// to one is not scored as a path outside paths.fixable. A sensitive
	// path is scored whatever it is declared to be: risk only rises.
	Names []string
}

// isImplied reports whether kw is one of the fix type's implied keywords,
// compared as keywords are (tokenised, so "CVE" and "cve" are one).
func isImplied(list []string, kw string) bool {
	for _, k := range list {
		if strings.Join(tokens(k, 8), " ") == kw {
			return true
		}
	}
	return false
}

// scanCap bounds how much of a title or body is scanned.
const scanCap = 64 << 10

// Intake is the P1 score.
func (r *Rules) Intake(rep Report) Score {
	s := Score{Stage: StageIntake}
	for _, l := range rep.Labels {
		if r.labels[strings.ToLower(strings.TrimSpace(l))] {
			s.add(Input{Stage: StageIntake, Kind: "label", Value: l, Level: High, Why: "a high-risk label"})
		}
	}
	for _, f := range []struct{ name, text string }{{"title", rep.Title}, {"body", rep.Body}} {
		for _, kw := range r.matches(f.text) {
			if isImplied(rep.Implied, kw) {
				continue
			}
			s.add(Input{Stage: StageIntake, Kind: "keyword", Value: kw, Level: High, Why: "a high-risk keyword in the " + f.name})
		}
	}
	for _, p := range namedPaths(rep.Title + "\n" + rep.Body) {
		v := r.policy.Classify(p)
		switch v.Class {
		case sensitive.Denied:
			s.add(Input{Stage: StageIntake, Kind: "path", Value: p, Level: High, Why: "the report names a sensitive path (" + v.Rule + ")"})
		case sensitive.Unknown:
			if slices.Contains(rep.Names, p) {
				continue
			}
			s.add(Input{Stage: StageIntake, Kind: "path", Value: p, Level: Elevated, Why: "the report names a path outside paths.fixable"})
		}
	}
	switch rep.Access {
	case AccessWrite, AccessOperator:
	default:
		what := "the reporter has no write access"
		if rep.Access == AccessUnknown {
			what = "the reporter's access is unknown"
		}
		if r.fixWithoutWrite {
			s.add(Input{Stage: StageIntake, Kind: "access", Value: string(rep.Access), Level: Elevated, Why: what + "; risk.fix_without_write allows a fix"})
		} else {
			s.add(Input{Stage: StageIntake, Kind: "access", Value: string(rep.Access), Level: High, Why: what + ": investigate only (risk.fix_without_write is off)"})
		}
	}
	return s
}

// Planned is one file the plan will change, with its current content (nil
// for a file the plan creates).
type Planned struct {
	Path    string
	Content []byte
}

// RootCause is the P3 re-score from the root cause the investigation wrote
// and the files it plans to change. It starts from prev and only adds: the
// later score wins, and it never drops an earlier input. A planned file
// that is sensitive or unknown, or imports a sensitive module, is High;
// so is one whose path names a high-risk keyword (src/payments/refund.py,
// lib/auth/token.go): a low-looking report whose fix lands in payment or
// auth code is a payment or auth change, whatever paths.sensitive says.
// implied are the fix type's implied keywords (Report.Implied): as at
// intake, the root cause naming one is no signal — a scanned finding's
// root cause is the harness's words around the scanner's rule id, and
// ESLint's security/… or CodeQL's go/sql-injection names its class of
// weakness by being one. A planned file's path is scored whatever it says.
func (r *Rules) RootCause(prev Score, rootCause string, implied []string, files []Planned) Score {
	s := Score{Level: prev.Level, Stage: StageRootCause, Inputs: slices.Clone(prev.Inputs)}
	for _, kw := range r.matches(rootCause) {
		if isImplied(implied, kw) {
			continue
		}
		s.add(Input{Stage: StageRootCause, Kind: "keyword", Value: kw, Level: High, Why: "a high-risk keyword in the root cause"})
	}
	for _, f := range files {
		if kws := r.matches(f.Path); len(kws) > 0 {
			s.add(Input{Stage: StageRootCause, Kind: "planned-file", Value: f.Path, Level: High, Why: "the fix would change a file whose path names " + strings.Join(kws, ", ")})
		}
		v := r.policy.Classify(f.Path)
		switch v.Class {
		case sensitive.Denied:
			s.add(Input{Stage: StageRootCause, Kind: "planned-file", Value: f.Path, Level: High, Why: "the fix would change a sensitive path (" + v.Rule + ")"})
		case sensitive.Unknown:
			s.add(Input{Stage: StageRootCause, Kind: "planned-file", Value: f.Path, Level: High, Why: "the fix would change a path outside paths.fixable"})
		}
		for _, iv := range r.policy.CheckImports(f.Path, f.Content) {
			s.add(Input{Stage: StageRootCause, Kind: "import", Value: f.Path + ": " + iv.Path, Level: High, Why: "a planned file imports a sensitive module (" + iv.Rule + ")"})
		}
	}
	return s
}

// matches returns the keywords found in text, each once, in keyword order.
func (r *Rules) matches(text string) []string {
	words := tokens(text, scanCap/2)
	if len(words) == 0 {
		return nil
	}
	index := map[string][]int{}
	for i, w := range words {
		index[w] = append(index[w], i)
		if s, ok := singular(w); ok {
			index[s] = append(index[s], i)
		}
	}
	var out []string
	for _, kw := range r.keywords {
		if phraseAt(words, index, kw) {
			out = append(out, strings.Join(kw, " "))
		}
	}
	return out
}

// phraseAt reports whether the words of kw occur consecutively; the last
// word may be plural.
func phraseAt(words []string, index map[string][]int, kw []string) bool {
	for _, i := range index[kw[0]] {
		if len(kw) == 1 {
			return true
		}
		if i+len(kw) > len(words) {
			continue
		}
		ok := true
		for j := 1; j < len(kw) && ok; j++ {
			w := words[i+j]
			s, _ := singular(w)
			ok = w == kw[j] || s == kw[j]
		}
		if ok {
			return true
		}
	}
	return false
}

func singular(w string) (string, bool) {
	switch {
	case len(w) > 3 && strings.HasSuffix(w, "es") && strings.HasSuffix(w[:len(w)-2], "s"):
		return w[:len(w)-2], true
	case len(w) > 2 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1], true
	}
	return "", false
}

// tokens splits text into lower-case words of letters and digits, at most
// limit of them, reading at most scanCap bytes.
func tokens(text string, limit int) []string {
	if len(text) > scanCap {
		text = text[:scanCap]
	}
	var out []string
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(out) >= limit {
			break
		}
		if len(w) <= 64 {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// codeExt are extensions that make a slash-less word a path.
var codeExt = []string{".go", ".py", ".js", ".jsx", ".ts", ".tsx", ".rb", ".java", ".kt", ".rs", ".c", ".h", ".cc", ".cpp", ".php", ".cs",
	".swift", ".scala", ".sql", ".tf", ".sh", ".yaml", ".yml", ".json", ".toml", ".pem", ".key", ".env"}

// maxPaths bounds the paths taken from one report.
const maxPaths = 200

// namedPaths returns repository-relative paths the text names: words with
// a slash or a code extension, trimmed of quotes, brackets and a :line
// suffix. URLs and absolute or ".." paths are not repository paths.
func namedPaths(text string) []string {
	if len(text) > 2*scanCap {
		text = text[:2*scanCap]
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(text) {
		if len(out) >= maxPaths {
			break
		}
		w = strings.Trim(w, "`'\"()[]{}<>,;!?*")
		w = strings.TrimSuffix(w, ".")
		w = trimLineSuffix(w)
		w = strings.TrimPrefix(w, "./")
		if w == "" || len(w) > 512 || strings.Contains(w, "://") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") ||
			slices.Contains(strings.Split(w, "/"), "..") || strings.ContainsFunc(w, unicode.IsControl) {
			continue
		}
		if !strings.Contains(w, "/") && !hasCodeExt(w) {
			continue
		}
		if !pathLike(w) {
			continue // an expression or an operator (`n/2`, `x/=2`, `len(s)/2`), not a file
		}
		if npmScoped.MatchString(w) {
			// @scope/name is a package (every scoped npm alert names one),
			// not a repository path; the files a plan touches are scored
			// again at P3 whatever the report said.
			continue
		}
		if strings.Trim(w, "/.") == "" || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// pathLike reports whether w could be a file a report names: only the
// characters paths are written with (letters, digits, . _ - @ + ~ and /),
// and, when it has a slash, some segment is a word of two or more
// characters with a letter in it — so code in backticks (`n/2`, `a<=b`,
// `len(s)/2`) is read as code, not as a path outside paths.fixable.
func pathLike(w string) bool {
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-@+~/", r)) {
			return false
		}
	}
	if !strings.Contains(w, "/") {
		return true
	}
	for _, seg := range strings.Split(w, "/") {
		if len(seg) >= 2 && strings.ContainsFunc(seg, unicode.IsLetter) {
			return true
		}
	}
	return false
}

// npmScoped is an npm scoped package name: @scope/name in npm's lower-case
// alphabet with no further slash and no dot in the name, so nothing that
// could be a file (@x/server.pem) is taken for a package.
var npmScoped = regexp.MustCompile(`^@[a-z0-9~-][a-z0-9._~-]*/[a-z0-9~-][a-z0-9_~-]*$`)

func hasCodeExt(w string) bool {
	lw := strings.ToLower(w)
	for _, e := range codeExt {
		if strings.HasSuffix(lw, e) && len(lw) > len(e) {
			return true
		}
	}
	return false
}

// trimLineSuffix drops ":12" or ":12:3" from "file.go:12:3".
func trimLineSuffix(w string) string {
	for range 2 {
		i := strings.LastIndexByte(w, ':')
		if i <= 0 || i == len(w)-1 || strings.TrimFunc(w[i+1:], unicode.IsDigit) != "" {
			break
		}
		w = w[:i]
	}
	return w
}
