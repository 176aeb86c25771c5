package findings

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// GitHub code-scanning and secret-scanning alerts, as the REST API returns
// them (GET /repos/{o}/{r}/code-scanning/alerts/{n},
// /secret-scanning/alerts/{n}), read by the GitHub forge. Everything in
// one is untrusted: the rule's help and the message come from the
// scanner's rules and the repository's code; the path from the
// repository. fixrail never changes an alert.

// ErrScanAlertNotOpen means a code- or secret-scanning alert is dismissed,
// fixed or resolved: someone decided it, and fixrail does not reopen that
// decision. The run is refused before it starts (exit 2).
var ErrScanAlertNotOpen = errors.New("the alert is not open")

// CodeScanningID is the finding id of code-scanning alert n: it names the
// branch fixrail/code-scanning-N.
func CodeScanningID(n int) string { return "code-scanning-" + strconv.Itoa(n) }

// SecretScanningID is the finding id of secret-scanning alert n.
func SecretScanningID(n int) string { return "secret-scanning-" + strconv.Itoa(n) }

// SecretScanningTool is the tool name a secret-scanning alert is filed
// under (its fix type, secret, is known by it).
const SecretScanningTool = "github-secret-scanning"

func init() { knownTools[SecretScanningTool] = SecretFixType }

// CodeScanningAlert is the part of a code-scanning alert fixrail reads.
type CodeScanningAlert struct {
	Number int
	// State is open, dismissed or fixed.
	State, DismissedReason string
	Tool                   string
	RuleID, RuleName       string
	RuleDescription        string
	RuleFullDescription    string
	RuleHelp               string
	Tags                   []string
	// RuleSeverity is error, warning or note; SecuritySeverity is
	// critical, high, medium or low ("" for a non-security rule).
	RuleSeverity, SecuritySeverity string
	// The most recent instance: its message and location.
	Message            string
	Path               string
	StartLine, EndLine int
	URL                string
}

// SecretScanningAlert is the part of a secret-scanning alert fixrail reads.
type SecretScanningAlert struct {
	Number int
	// State is open or resolved; Resolution says how.
	State, Resolution string
	SecretType        string
	SecretTypeName    string
	// Secret is the credential's value as GitHub detected it.
	Secret string
	// The first location detected (a commit's file; the alert may have
	// more, in history).
	Path               string
	StartLine, EndLine int
	HasMoreLocations   bool
	Validity           string
	URL                string
}

// ScanAlertSource reads GitHub's scanning alerts; the GitHub forge
// implements it.
type ScanAlertSource interface {
	CodeScanningAlert(ctx context.Context, number int) (CodeScanningAlert, error)
	SecretScanningAlert(ctx context.Context, number int) (SecretScanningAlert, error)
}

// codeScanningSeverity normalises GitHub's two severities.
func codeScanningSeverity(security, rule string) string {
	switch strings.ToLower(security) {
	case "critical", "high", "medium", "low":
		return strings.ToLower(security)
	}
	switch strings.ToLower(rule) {
	case "error":
		return "high"
	case "warning":
		return "medium"
	}
	return "note"
}

// Sort decides a code-scanning alert: to-fix with its finding, or why not.
// tree holds the alert's file (the base commit); configured is the
// scanners: mapping's fix type for its tool ("" for none).
func (a *CodeScanningAlert) Sort(tree Tree, configured, repo string) ScannerResult {
	sa := &ScannerAlert{
		Tool: a.Tool, Rule: a.RuleID, RuleName: a.RuleName, Tags: a.Tags,
		Severity: codeScanningSeverity(a.SecuritySeverity, a.RuleSeverity),
		Path:     a.Path, Line: a.StartLine, EndLine: a.EndLine,
		Message: a.Message, Description: a.RuleFullDescription, Help: a.RuleHelp,
		Source: fmt.Sprintf("code-scanning:github:%s#%d", repo, a.Number),
	}
	if sa.Description == "" {
		sa.Description = a.RuleDescription
	}
	if sa.RuleName == "" {
		sa.RuleName = a.RuleDescription
	}
	return SortAlert(sa, CodeScanningID(a.Number), a.State, a.DismissedReason, tree, configured, a.URL)
}

// Sort decides a secret-scanning alert. A value only in history (the
// file no longer holds it) is unfixable: no edit of the tree removes it.
func (a *SecretScanningAlert) Sort(tree Tree, configured, repo string) ScannerResult {
	sa := &ScannerAlert{
		Tool: SecretScanningTool, Rule: a.SecretType, RuleName: a.SecretTypeName,
		Severity: "high",
		Path:     a.Path, Line: a.StartLine, EndLine: a.EndLine,
		Secret:  a.Secret,
		Message: fmt.Sprintf("GitHub secret scanning detected a %s (validity: %s).", orUnknown(a.SecretTypeName), orUnknown(a.Validity)),
		Source:  fmt.Sprintf("secret-scanning:github:%s#%d", repo, a.Number),
	}
	if a.HasMoreLocations {
		sa.Message += " It was found in more places than this one (GitHub lists them): the fix removes it from every tracked file, and history still holds it."
	}
	if configured == "" {
		configured = SecretFixType
	}
	return SortAlert(sa, SecretScanningID(a.Number), a.State, a.Resolution, tree, configured, a.URL)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return bound(s, 80)
}

// SortAlert sorts an alert a service keeps (GitHub, Orca) under its own
// id: one not open is unfixable (and refused by a run), the rest sorted as
// any scanner's alert; url, the alert's page, is added to the body.
func SortAlert(sa *ScannerAlert, id, state, why string, tree Tree, configured, url string) ScannerResult {
	f, group, reason := sa.classify(tree, configured, nil)
	f.ID = id
	f.Source = sa.Source
	if url != "" {
		f.Body = strings.TrimSpace(f.Body + "\n\nAlert: " + bound(url, 300))
	}
	if state != "open" {
		reason = fmt.Sprintf("the alert is %s", orUnknown(state))
		if why != "" {
			reason += " (" + bound(why, 40) + ")"
		}
		group = GroupUnfixable
	}
	return ScannerResult{ID: id, Group: group, Why: reason, Finding: f}
}

// Kinds of GitHub scanning alert.
const (
	CodeScanningKind   = "code-scanning"
	SecretScanningKind = "secret-scanning"
)

// FromScanAlert reads code-scanning or secret-scanning (kind) alert
// number through src and sorts it against tree; configured
// is the scanners: mapping (tool → fix type, "" for none). An alert that
// is not open is ErrScanAlertNotOpen; one scan would not list as to-fix
// is ErrBadReport with the reason.
func FromScanAlert(ctx context.Context, src ScanAlertSource, kind, repo string, number int, tree Tree, configured func(string) string) (*Finding, error) {
	if number <= 0 || number > 1<<31-1 {
		return nil, fmt.Errorf("%w: %s alert number %d: must be positive", ErrBadReport, kind, number)
	}
	var r ScannerResult
	var state string
	switch kind {
	case CodeScanningKind:
		a, err := src.CodeScanningAlert(ctx, number)
		if err != nil {
			return nil, err
		}
		if a.Number != number {
			return nil, fmt.Errorf("%w: asked for code-scanning alert #%d, GitHub answered #%d", ErrBadReport, number, a.Number)
		}
		r, state = a.Sort(tree, configured(a.Tool), repo), a.State
	case SecretScanningKind:
		a, err := src.SecretScanningAlert(ctx, number)
		if err != nil {
			return nil, err
		}
		if a.Number != number {
			return nil, fmt.Errorf("%w: asked for secret-scanning alert #%d, GitHub answered #%d", ErrBadReport, number, a.Number)
		}
		r, state = a.Sort(tree, configured(SecretScanningTool), repo), a.State
	default:
		return nil, fmt.Errorf("%w: no alert kind %q", ErrBadReport, kind)
	}
	switch {
	case state != "open":
		return nil, fmt.Errorf("%w: %s alert #%d: %s; fixrail works open alerts only", ErrScanAlertNotOpen, kind, number, r.Why)
	case r.Group != GroupToFix:
		return nil, fmt.Errorf("%w: %s alert #%d is %s: %s", ErrBadReport, kind, number, r.Group, r.Why)
	}
	return r.Finding, nil
}
