// Package forge is where a finished fix leaves the harness: a pushed branch
// and a draft pull request, a notice (comment and label) after ESCALATE or
// NOT-REPRO, the branch-protection assertion and the credential's access
// check P1 makes before anything runs, the open work S7 refuses to stack
// on, and the CI state of a PR once it exists. The local forge (this
// package) is the embedded default: it writes everything under
// .fixrail/outbox and pushes nothing; the GitHub forge lives in
// forge/github. Both speak the types below, so the pipeline holds small
// interfaces of its own and never names a backend.
//
// fixrail never merges, never marks a PR ready for review, never pushes to
// the base branch and never force-pushes; no backend has a method for any of
// it, and forge/github's tests scan its source and its traffic for them.
package forge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// PR is a pull request to open. Draft must be true: fixrail never opens a
// ready-for-review PR, so a caller that forgets is refused, not obeyed.
type PR struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	Base   string   `json:"base"`
	Head   string   `json:"head"`
	Labels []string `json:"labels"`
	Draft  bool     `json:"draft"`
	Commit string   `json:"commit"`
	// Issue is the tracker issue the finding came from, 0 for none. It is
	// recorded, never used to close anything.
	Issue int `json:"issue,omitempty"`
	// Files are the repository paths the commit changes: what a later
	// run's plan must not touch while this PR is open (S7).
	Files []string `json:"files"`
	Body  string   `json:"-"`
	Patch string   `json:"-"`
}

// BranchPrefix is the namespace of every branch fixrail pushes. A head
// outside it is refused, so no caller can point a push at the base.
const BranchPrefix = "fixrail/"

// Published is where a PR went: the local forge's bundle directory, or the
// pushed branch and the draft PR's number and address.
type Published struct {
	// Location is what a person opens: the bundle directory or the PR URL.
	Location string `json:"location"`
	Branch   string `json:"branch"`
	Commit   string `json:"commit"`
	Number   int    `json:"number,omitempty"`
	// Base is the branch the PR was opened against: a follow-up is pushed
	// only while the PR still targets it.
	Base string `json:"base,omitempty"`
	// Warnings are best-effort steps that failed after the PR existed
	// (a label); the body carries the same information.
	Warnings []string `json:"warnings,omitempty"`
}

// Protection is what AssertProtected found on the base branch.
type Protection struct {
	Branch string `json:"branch"`
	// Applicable is false for a forge that pushes nothing (local).
	Applicable bool `json:"applicable"`
	// RequiresPR: a pull request is required before merging (confirmed).
	RequiresPR bool `json:"requires_pr"`
	// Protected is the branch's own "protected" flag.
	Protected bool `json:"protected"`
	// Sources names where RequiresPR was read: "ruleset:<source>#<id>",
	// "classic".
	Sources []string `json:"sources,omitempty"`
	// RequiredChecks are the status checks the branch requires.
	RequiredChecks []string `json:"required_checks,omitempty"`
	// PinnedChecks are the required checks a ruleset (integration_id) or
	// classic protection (app_id) pins to one GitHub App: only that app's
	// check run satisfies them, on GitHub and in fixrail's CI gate.
	PinnedChecks []CheckRef `json:"pinned_checks,omitempty"`
	// Unread lists what could not be read, and why (for the note).
	Unread []string `json:"unread,omitempty"`
}

// AccessRequest names what CheckAccess probes: the push of BaseSHA to
// Branch (dry run), a pull request from a head that cannot exist into
// Base, and a comment on Issue (0: the finding has no issue, nothing to
// comment on).
type AccessRequest struct {
	Base    string
	BaseSHA string
	Branch  string
	Issue   int
}

// Access is what CheckAccess proved, one entry per right a run uses.
type Access struct {
	// Applicable is false for a forge that pushes nothing (local).
	Applicable bool          `json:"applicable"`
	Proofs     []AccessProof `json:"proofs,omitempty"`
}

// AccessProof is one permission and what its probe showed (or, in a
// PermissionError, why it is missing).
type AccessProof struct {
	// Permission is the Actions permission name, e.g. "contents: write".
	Permission string `json:"permission"`
	Detail     string `json:"detail"`
}

// Summary is the proofs on one line.
func (a Access) Summary() string {
	var parts []string
	for _, p := range a.Proofs {
		parts = append(parts, p.Permission+": "+p.Detail)
	}
	return strings.Join(parts, "; ")
}

// PermissionError is CheckAccess's refusal: the permissions the token
// lacks, each with what the forge answered. HALT token-lacks-permission.
type PermissionError struct {
	Missing []AccessProof
	// Errs are the forge's answers, kept with their types.
	Errs []error
}

func (e *PermissionError) Error() string {
	var parts []string
	for _, m := range e.Missing {
		parts = append(parts, m.Permission+" ("+m.Detail+")")
	}
	return "the token lacks " + strings.Join(parts, "; ")
}

func (e *PermissionError) Is(target error) bool { return target == ErrTokenLacksPermission }

func (e *PermissionError) Unwrap() []error { return e.Errs }

// Terminal names the terminal state a notice reports.
type Terminal string

const (
	Escalate Terminal = "ESCALATE"
	NotRepro Terminal = "NOT-REPRO"
)

// Labels fixrail puts on an issue or PR after a terminal state.
const (
	LabelEscalated = "fixrail:escalated"
	LabelNotRepro  = "fixrail:not-repro"
	LabelCIFailed  = "ci-failed"
	// LabelNeedsReview marks a PR whose checks could not confirm it.
	LabelNeedsReview = "needs-review"
)

// NoticeLabel is the label a notice for t carries.
func NoticeLabel(t Terminal) string {
	if t == NotRepro {
		return LabelNotRepro
	}
	return LabelEscalated
}

// Notice is a best-effort comment and label after ESCALATE or NOT-REPRO.
// Body must already be redacted and leak-scanned by the caller.
type Notice struct {
	ID       string   `json:"id"`
	Terminal Terminal `json:"terminal"`
	Reason   string   `json:"reason"`
	// Number is the issue or PR the notice goes on; 0 means the finding has
	// no tracker item (the local forge still records it).
	Number int      `json:"number,omitempty"`
	Body   string   `json:"-"`
	Labels []string `json:"labels"`
}

// Subject names the finding a lookup is about.
type Subject struct {
	ID    string
	Issue int // 0: not from a tracker
}

// Work is what is open that a new run must not stack on (S7).
type Work struct {
	// Fixes are fixrail's open PRs on the repository (every finding's).
	Fixes []OpenFix `json:"fixes"`
	// Escalation is set when the subject's issue already carries an open
	// escalation: the run is a no-op with a comment.
	Escalation *OpenEscalation `json:"escalation,omitempty"`
	// LeftBranch is the subject's fixrail/<id> on the remote when no open
	// PR has it as head (an earlier run's, its PR closed or never opened):
	// a push would be refused as non-fast-forward, so the run HALTs
	// in-flight and asks for the branch to be reviewed or deleted. Empty
	// for the local forge, whose branch the pipeline checks itself.
	LeftBranch string `json:"left_branch,omitempty"`
}

// OpenFix is one open fixrail PR (or, locally, an outbox bundle).
type OpenFix struct {
	ID       string  `json:"id"` // the finding id, from the branch name
	Branch   string  `json:"branch"`
	Number   int     `json:"number,omitempty"`
	Location string  `json:"location"`
	HeadSHA  string  `json:"head_sha,omitempty"`
	Checks   CIState `json:"checks"`
	// Files are the paths the fix changes (old and new names of a rename);
	// filled by FixFiles only.
	Files []string `json:"files,omitempty"`
}

// Broken reports whether a fix's checks are not green (S7: stacking on it
// would build on an unproven base). No CI at all is not broken.
func (f OpenFix) Broken() bool { return f.Checks == CIRed || f.Checks == CIPending }

// OpenEscalation is an escalation already open on an issue.
type OpenEscalation struct {
	Number   int    `json:"number"`
	Label    string `json:"label"`
	Location string `json:"location"`
}

// CIState is a PR head's checks, summed up.
type CIState string

const (
	CIGreen   CIState = "green"   // every check run and status finished and passed
	CIRed     CIState = "red"     // at least one failed
	CIPending CIState = "pending" // some still running (at the deadline, for WaitChecks)
	// CINone: nothing reported at all and none required — no CI configured.
	CINone CIState = "none"
	// CINeverAppeared: checks the branch requires never reported.
	CINeverAppeared CIState = "never-appeared"
)

// Check is one check run or commit status.
type Check struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "check-run" or "status"
	// State is the finished conclusion, or the status while running.
	State string `json:"state"`
	URL   string `json:"url,omitempty"`
	// App and AppID name the GitHub App that reported a check run (any
	// app with checks:write can post a run of any name; a workflow's
	// token reports as github-actions). A commit status has none.
	App   string `json:"app,omitempty"`
	AppID int64  `json:"app_id,omitempty"`
}

// Annotation is one place a check run flagged on a PR's head. Path,
// Title and Message are the check's text — a scanner's message can quote
// the code under test — so they are untrusted: fenced before any prompt,
// escaped before any reader.
type Annotation struct {
	Check     string `json:"check"`
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	// Level is GitHub's annotation_level: notice, warning or failure.
	Level   string `json:"level"`
	Title   string `json:"title,omitempty"`
	Message string `json:"message"`
}

// RecheckResult is what the watched checks said of one head: green when
// every one finished clean, red when one reported findings (its
// Annotations), pending when one was still running at the deadline,
// never-appeared when one never reported.
type RecheckResult struct {
	State       CIState      `json:"state"`
	HeadSHA     string       `json:"head_sha"`
	Checks      []Check      `json:"checks,omitempty"`
	Annotations []Annotation `json:"annotations,omitempty"`
	// Truncated: more annotations were reported than were read.
	Truncated bool     `json:"truncated,omitempty"`
	Missing   []string `json:"missing,omitempty"`
	// Ambiguous are watched checks named without an app that more than
	// one app reported green: not counted as passed.
	Ambiguous []string `json:"ambiguous,omitempty"`
	Detail    string   `json:"detail"`
}

// SectionStart and SectionEnd mark the part of a PR body fixrail edits
// after the PR exists; nothing outside them is changed. SectionStart is the
// start marker as earlier versions wrote it, with nothing to tell it from a
// copy; fixrail now writes sectionStart with the SHA-256 of what the pair
// holds (SectionMarked), so a rewrite finds the one section whose bytes are
// still exactly what fixrail wrote.
const (
	SectionStart = "<!-- fixrail:after-pr:start -->"
	SectionEnd   = "<!-- fixrail:after-pr:end -->"
	// sectionStart and markEnd are the prefix of every start marker, old
	// and new, and what closes it; a new one holds "sha256:<hex>" between.
	sectionStart = "<!-- fixrail:after-pr:start"
	markEnd      = " -->"
)

// PRNow is a published PR as read back from the forge: its body, and
// Drift, how it is no longer the PR fixrail opened and last pushed (merged,
// closed, retargeted at another base, or a head someone else moved), empty
// when it still is. Closed is true for a merged or closed PR: nothing of
// fixrail's goes on it as if it were open.
type PRNow struct {
	Body   string
	Drift  string
	Closed bool
	// Unread: the PR could not be read back (Closed is set with it, so
	// nothing is written on a PR whose state and body are unknown).
	Unread bool
}

// Unmark escapes every copy of a start marker (either form) and SectionEnd
// in text fixrail is about to publish: ReplaceSection finds the markers by
// text in the body the forge returns, so a copy quoted from the agent or
// the finding (a symptom, a summary, a gate's detail) would otherwise be
// taken for one. The copy keeps showing, its '<' written as the visible
// escape \u003c (as untrusted.Printable writes its escapes). Call it on the
// body as opened and on the section's text; ReplaceSection adds the one
// real pair itself.
func Unmark(text string) string {
	for _, m := range []string{sectionStart, SectionEnd} {
		text = strings.ReplaceAll(text, m, `\u003c`+m[1:])
	}
	return text
}

// SectionMarked is section between the markers fixrail writes: the start
// one carries the SHA-256 of everything up to the end one.
func SectionMarked(section string) string {
	inner := "\n" + section + "\n"
	return sectionStart + " sha256:" + sectionDigest(inner) + markEnd + inner + SectionEnd
}

// sectionDigest is the digest a start marker carries of inner. GitHub's web
// editor sends a body back with CRLF line ends, so they count as LF: a
// reviewer's edit elsewhere in the body does not make fixrail's section
// look foreign.
func sectionDigest(inner string) string {
	sum := sha256.Sum256([]byte(strings.ReplaceAll(inner, "\r\n", "\n")))
	return hex.EncodeToString(sum[:])
}

// ReplaceSection puts section in body as fixrail's marked section. It
// replaces an earlier one only when that one is certainly fixrail's and
// unchanged: exactly one start marker whose digest matches the bytes up to
// the next SectionEnd (no other start marker between); or, in a body an
// earlier version wrote, the body's only start marker in the old form and
// its only SectionEnd after it. Anything else — a start marker planted
// before fixrail's, a copy of its section, a section someone edited, a
// marker with no end — is left as it is, and the section is appended at the
// end: fixrail never deletes or rewrites text it cannot show it wrote.
// Everything outside the replaced pair is kept byte for byte.
func ReplaceSection(body, section string) string {
	marked := SectionMarked(section)
	if i, j, ok := ownSection(body); ok {
		return body[:i] + marked + body[j:]
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + "\n" + marked + "\n"
}

// ownSection finds fixrail's one section in body (see ReplaceSection): its
// start marker at i, the end of its SectionEnd at j.
func ownSection(body string) (i, j int, ok bool) {
	var starts []int
	for k := 0; ; {
		n := strings.Index(body[k:], sectionStart)
		if n < 0 {
			break
		}
		starts = append(starts, k+n)
		k += n + len(sectionStart)
	}
	found := 0
	for _, s := range starts {
		rest := body[s+len(sectionStart):]
		digest, ok := strings.CutPrefix(rest, " sha256:")
		if !ok || len(digest) < 64+len(markEnd) || !strings.HasPrefix(digest[64:], markEnd) {
			continue
		}
		open := s + len(sectionStart) + len(" sha256:") + 64 + len(markEnd)
		e := strings.Index(body[open:], SectionEnd)
		if e < 0 {
			continue
		}
		inner := body[open : open+e]
		if strings.Contains(inner, sectionStart) || sectionDigest(inner) != digest[:64] {
			continue
		}
		i, j = s, open+e+len(SectionEnd)
		found++
	}
	if found == 1 {
		return i, j, true
	}
	if found > 1 {
		// Two sections that each hold what their marker says: a copy of
		// fixrail's, and nothing tells which one it wrote.
		return 0, 0, false
	}
	// A body an earlier version wrote: its old pair, the only one there.
	if len(starts) == 1 && strings.HasPrefix(body[starts[0]:], SectionStart) && strings.Count(body, SectionEnd) == 1 {
		if e := strings.Index(body[starts[0]:], SectionEnd); e >= 0 {
			return starts[0], starts[0] + e + len(SectionEnd), true
		}
	}
	return 0, 0, false
}

// CIResult is what WaitChecks saw last.
type CIResult struct {
	State   CIState `json:"state"`
	HeadSHA string  `json:"head_sha"`
	Checks  []Check `json:"checks,omitempty"`
	// Missing are required checks that never reported (from the app
	// they are pinned to, when one is).
	Missing []string `json:"missing,omitempty"`
	// Ambiguous are required checks named without an app that more than
	// one source reported green: not counted as passed.
	Ambiguous []string `json:"ambiguous,omitempty"`
	Detail    string   `json:"detail"`
}

// The errors every backend returns, typed so the pipeline's classifier can
// map them to a terminal without reading a message.
var (
	// ErrNotDraft: a PR that is not a draft was asked for, or came back.
	ErrNotDraft = errors.New("forge: refusing to open a PR that is not a draft")
	// ErrDraftUnsupported: the repository cannot have draft PRs (GitHub's
	// 422 on private repositories of Free/Pro plans). ESCALATE
	// draft-unsupported; fixrail never falls back to a ready PR.
	ErrDraftUnsupported = errors.New("forge: the repository does not support draft pull requests")
	// ErrBadHead: the head branch is outside fixrail/ or is the base.
	ErrBadHead = errors.New("forge: refusing a head branch fixrail does not own")
	// ErrNoProtection: the base branch does not require a pull request.
	ErrNoProtection = errors.New("forge: the base branch does not require a pull request before merging")
	// ErrProtectionUnreadable: the token cannot read enough to confirm it.
	ErrProtectionUnreadable = errors.New("forge: the base branch's protection cannot be read")
	// ErrRateLimited: a primary or secondary rate limit; *RateLimitError
	// carries the reset time. HALT forge-rate-limited.
	ErrRateLimited = errors.New("forge: rate limited")
	// ErrForge: any other refusal by the forge (a 4xx). ESCALATE forge-error.
	ErrForge = errors.New("forge: request refused")
	// ErrUnavailable: 5xx or connection errors that outlasted the retries.
	ErrUnavailable = errors.New("forge: unavailable")
	// ErrTokenLacksPermission: a P1 probe showed the token cannot push,
	// open a pull request or comment (*PermissionError). HALT
	// token-lacks-permission, before any agent runs.
	ErrTokenLacksPermission = errors.New("forge: the token lacks a permission the run needs")
	// ErrActionsCannotOpenPRs: the repository or organisation setting
	// "Allow GitHub Actions to create and approve pull requests" is off.
	ErrActionsCannotOpenPRs = errors.New("forge: GitHub Actions is not permitted to create pull requests in this repository")
)

// ProtectionError says why the base branch failed the assertion. It is
// ErrNoProtection or ErrProtectionUnreadable (both HALT no-branch-protection;
// the note says which).
type ProtectionError struct {
	Found      Protection
	Unreadable bool
	// MissingChecks are configured required checks the branch does not require.
	MissingChecks []string
	Detail        string
}

func (e *ProtectionError) Error() string {
	what := "does not require a pull request before merging"
	if e.Unreadable {
		what = "protection cannot be confirmed with this token"
	} else if len(e.MissingChecks) > 0 && e.Found.RequiresPR {
		what = "does not require the configured status checks " + strings.Join(e.MissingChecks, ", ")
	}
	s := fmt.Sprintf("base branch %s %s", e.Found.Branch, what)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *ProtectionError) Is(target error) bool {
	if e.Unreadable {
		return target == ErrProtectionUnreadable
	}
	return target == ErrNoProtection
}

// RateLimitError is a rate limit with the time it lifts.
type RateLimitError struct {
	Op        string
	Secondary bool
	Reset     time.Time // zero when the forge did not say
	Message   string
}

func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	s := fmt.Sprintf("%s: %s rate limit", e.Op, kind)
	if !e.Reset.IsZero() {
		s += ", resets at " + e.Reset.UTC().Format(time.RFC3339)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// APIError is a forge refusal: the operation, the HTTP status and the
// forge's message (untrusted text from the server, bounded).
type APIError struct {
	Op      string
	Status  int // 0 for a connection error
	Message string
	// Kind is ErrForge, ErrUnavailable, ErrDraftUnsupported or
	// ErrActionsCannotOpenPRs.
	Kind error
	Err  error
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Op, e.Status, e.Message)
}

func (e *APIError) Is(target error) bool {
	if target == e.Kind {
		return true
	}
	// The specific refusals are refusals too.
	return target == ErrForge && (e.Kind == ErrDraftUnsupported || e.Kind == ErrActionsCannotOpenPRs)
}

func (e *APIError) Unwrap() error { return e.Err }

// CheckHead refuses a PR whose head is not a fixrail/ branch, is the base,
// or whose commit is not a full object name: the push can then only ever
// touch fixrail's own namespace.
func CheckHead(pr PR) error {
	if !pr.Draft {
		return ErrNotDraft
	}
	name, ok := strings.CutPrefix(pr.Head, BranchPrefix)
	if !ok || name == "" || pr.Head == pr.Base || strings.ContainsAny(pr.Head, " ~^:?*[\\") || strings.Contains(pr.Head, "..") {
		return fmt.Errorf("%w: head %q (base %q)", ErrBadHead, pr.Head, pr.Base)
	}
	if len(pr.Commit) != 40 || strings.Trim(pr.Commit, "0123456789abcdef") != "" {
		return fmt.Errorf("%w: commit %q is not a full object name", ErrBadHead, pr.Commit)
	}
	return nil
}
