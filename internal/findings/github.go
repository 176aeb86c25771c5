package findings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// GitHub intake: an issue by number, or the issue an Actions event names.
// What GitHub returns is as untrusted as a report file: title, body,
// labels, comments and logins are all attacker-writable. Only comments by
// people with write access reach the finding — decided by the
// collaborator-permission endpoint, never by author_association, which says
// nothing about write access (MEMBER ≠ write; CONTRIBUTOR is anyone with a
// merged commit).

// IssueData is an issue as the source read it.
type IssueData struct {
	Number    int
	Title     string
	Body      string
	Labels    []string
	Author    string
	State     string // open, closed
	IsPR      bool   // GitHub's issues endpoint also serves pull requests
	UpdatedAt time.Time
}

// CommentData is one issue comment.
type CommentData struct {
	ID     int64
	Author string
	Body   string
}

// IssueSource reads issues; the GitHub forge implements it (forge/github).
type IssueSource interface {
	Issue(ctx context.Context, number int) (IssueData, error)
	// IssueComments returns every comment, oldest first, and an error when
	// there are more than max (a cut thread is refused, not shortened).
	IssueComments(ctx context.Context, number, max int) ([]CommentData, error)
	// Permission is the login's legacy permission on the repository:
	// admin, write, read or none. An error means it could not be read.
	Permission(ctx context.Context, login string) (string, error)
}

// Limits on what an issue may carry; over any of them the intake refuses
// (like MaxReportBytes), because a silently shortened thread can change
// what it says.
const (
	MaxComments     = 300
	maxTitleBytes   = 1024
	maxCommentBytes = 64 << 10
)

var (
	// ErrBadEvent wraps every reason an event payload cannot be used.
	ErrBadEvent = errors.New("bad event payload")
	// ErrNoDispatchInput is a workflow_dispatch that names no issue (a
	// sweep dispatched by hand): an ErrBadEvent.
	ErrNoDispatchInput = fmt.Errorf("%w", ErrBadEvent)
	// ErrNotAuthorized: the run's actor lacks write access, so the run
	// must not start (anyone can open an issue or comment).
	ErrNotAuthorized = errors.New("the run's actor has no write access to the repository")
	// ErrNotIssue: the number names a pull request, or a closed issue.
	ErrNotIssue = errors.New("not an open issue")
)

// GitHubIssue is a finding from a GitHub issue and what the run report
// needs beyond it.
type GitHubIssue struct {
	Finding *Finding
	Repo    string // owner/name
	Number  int
	// Author opened the issue (untrusted text); AuthorPermission is theirs
	// by the collaborator-permission endpoint, "" when it could not be read.
	Author, AuthorPermission string
	// Trigger is how the run started: "cli", "issues.labeled",
	// "issues.opened", "issue_comment.created", "workflow_dispatch".
	Trigger string
	// Actor is who started the run (for a labeled issue, who added the
	// label); "" when an operator ran it by hand. Untrusted text.
	Actor           string
	ActorPermission string
	Label           string // the label added, for issues.labeled
	// Shown and Hidden count the comments that reached the finding and
	// the ones that did not (author without write access, or unreadable).
	Shown, Hidden int
	// FromSnapshot: title and body are the event payload's, the issue as
	// it was when the event fired, not as it may have been edited since.
	FromSnapshot bool
}

// FindingID is the finding id of issue n: it names the branch fixrail/gh-n.
func FindingID(n int) string { return "gh-" + strconv.Itoa(n) }

// FromGitHubIssue reads issue number from src. actor is who asked for the
// run ("" for an operator on the command line, who needs no check).
func FromGitHubIssue(ctx context.Context, src IssueSource, repo string, number int, actor string) (*GitHubIssue, error) {
	if number <= 0 {
		return nil, fmt.Errorf("issue number %d: must be positive", number)
	}
	gi := &GitHubIssue{Repo: repo, Number: number, Trigger: "cli", Actor: actor}
	return gi, gi.read(ctx, src, nil)
}

// FromEvent reads the issue an Actions event names. A labeled or opened
// issue is taken from the payload's snapshot; the comments are read from
// the API. The event's sender must have write access.
func FromEvent(ctx context.Context, src IssueSource, ev *Event) (*GitHubIssue, error) {
	// A payload from another repository must not pick an issue number here.
	if r, ok := src.(interface{ Repo() string }); ok && !strings.EqualFold(r.Repo(), ev.Repo) {
		return nil, fmt.Errorf("%w: the event is for %s, not %s", ErrBadEvent, ev.Repo, r.Repo())
	}
	gi := &GitHubIssue{Repo: ev.Repo, Number: ev.Number, Trigger: ev.Trigger(), Actor: ev.Sender, Label: ev.Label}
	return gi, gi.read(ctx, src, ev.Snapshot)
}

func (gi *GitHubIssue) read(ctx context.Context, src IssueSource, snap *IssueData) error {
	perms := map[string]string{}
	if gi.Actor != "" {
		p, err := permission(ctx, src, perms, gi.Actor)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotAuthorized, gi.Actor, err)
		}
		gi.ActorPermission = p
		if !canWrite(p) {
			return fmt.Errorf("%w: %s has %q", ErrNotAuthorized, gi.Actor, p)
		}
	}
	is := snap
	if is == nil {
		got, err := src.Issue(ctx, gi.Number)
		if err != nil {
			return fmt.Errorf("issue #%d: %w", gi.Number, err)
		}
		is = &got
	} else {
		gi.FromSnapshot = true
	}
	if is.IsPR {
		return fmt.Errorf("%w: #%d is a pull request", ErrNotIssue, gi.Number)
	}
	if is.State != "" && is.State != "open" {
		return fmt.Errorf("%w: #%d is %s", ErrNotIssue, gi.Number, is.State)
	}
	if len(is.Title) > maxTitleBytes || len(is.Body) > MaxReportBytes {
		return fmt.Errorf("%w: issue #%d: title %d bytes, body %d bytes (limits %d, %d)", ErrBadReport, gi.Number, len(is.Title), len(is.Body), maxTitleBytes, MaxReportBytes)
	}
	cs, err := src.IssueComments(ctx, gi.Number, MaxComments)
	if err != nil {
		return fmt.Errorf("issue #%d comments: %w", gi.Number, err)
	}
	f := &Finding{
		ID:     FindingID(gi.Number),
		Title:  is.Title,
		Body:   is.Body,
		Labels: append([]string(nil), is.Labels...),
		Source: fmt.Sprintf("github:%s#%d", gi.Repo, gi.Number),
		Issue:  gi.Number,
	}
	gi.Author = is.Author
	// The reporter's access routes the risk: read once, cached for their
	// comments; unreadable is no access, but a rate limit stops the intake.
	if p, err := permission(ctx, src, perms, is.Author); err == nil {
		gi.AuthorPermission = p
	} else if isHalting(err) {
		return fmt.Errorf("issue #%d author: %w", gi.Number, err)
	}
	total := len(f.Body)
	for _, c := range cs {
		p, err := permission(ctx, src, perms, c.Author)
		if err != nil && isHalting(err) {
			return fmt.Errorf("comment %d: %w", c.ID, err)
		}
		if err != nil || !canWrite(p) {
			gi.Hidden++
			continue
		}
		if len(c.Body) > maxCommentBytes {
			return fmt.Errorf("%w: issue #%d: comment %d is %d bytes, over %d", ErrBadReport, gi.Number, c.ID, len(c.Body), maxCommentBytes)
		}
		text := "@" + c.Author + ": " + c.Body
		if total += len(text); total > MaxReportBytes {
			return fmt.Errorf("%w: issue #%d: body and comments exceed %d bytes", ErrBadReport, gi.Number, MaxReportBytes)
		}
		f.Comments = append(f.Comments, text)
		gi.Shown++
	}
	if strings.TrimSpace(f.Title) == "" {
		return fmt.Errorf("%w: issue #%d has no title", ErrBadReport, gi.Number)
	}
	gi.Finding = f
	return nil
}

// isHalting reports whether an error reading a permission must stop the
// intake instead of hiding one comment: a rate limit or an outage would
// otherwise silently drop every maintainer's comment. The source's errors
// say so by implementing Halting.
func isHalting(err error) bool {
	var h interface{ Halting() bool }
	return errors.As(err, &h) && h.Halting()
}

func canWrite(p string) bool { return p == "admin" || p == "write" }

// permission asks src once per login. A login that is not a plain GitHub
// user name (bots, anything odd from a payload) is never asked: it goes
// into a URL path, and bots have no collaborator permission.
func permission(ctx context.Context, src IssueSource, cache map[string]string, login string) (string, error) {
	if p, ok := cache[login]; ok {
		return p, nil
	}
	if !ValidLogin(login) {
		return "", fmt.Errorf("login %q is not a user name", login)
	}
	p, err := src.Permission(ctx, login)
	if err != nil {
		return "", err
	}
	cache[login] = p
	return p, nil
}

// ValidLogin is GitHub's user-name rule: 1 to 39 letters, digits and
// single hyphens, not starting or ending with a hyphen.
func ValidLogin(s string) bool {
	if len(s) == 0 || len(s) > 39 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// MaxEventBytes bounds an event payload file.
const MaxEventBytes = 4 << 20

// Event is the part of an Actions event payload fixrail uses.
type Event struct {
	Name   string // GITHUB_EVENT_NAME: issues, issue_comment, workflow_dispatch, dependabot_alert
	Action string // labeled, opened, created; "" for workflow_dispatch
	Repo   string
	Number int
	Sender string
	Label  string
	// Snapshot is the issue as the payload carries it (issues events).
	Snapshot *IssueData
	// Alert is the alert number of a dependabot_alert,
	// code_scanning_alert or secret_scanning_alert event (Number is then
	// 0), and AlertKind which ("dependabot", CodeScanningKind,
	// SecretScanningKind): the run reads the alert through the API, which
	// says its state now, not when the event fired.
	Alert     int
	AlertKind string
}

// DependabotKind is the AlertKind of a dependabot_alert event.
const DependabotKind = "dependabot"

// ScanAlertActions are the code_scanning_alert and secret_scanning_alert
// actions that start a run: the ones after which the alert is open.
var ScanAlertActions = map[string][]string{
	"code_scanning_alert":   {"created", "reopened", "reopened_by_user", "appeared_in_branch"},
	"secret_scanning_alert": {"created", "reopened"},
}

// Trigger names the event for the run report.
func (e *Event) Trigger() string {
	if e.Action == "" {
		return e.Name
	}
	return e.Name + "." + e.Action
}

// DispatchInputs are the workflow_dispatch input names read as the issue
// number, in this order.
var DispatchInputs = []string{"issue-number", "issue_number", "issue"}

// ReadEvent reads $GITHUB_EVENT_PATH (a regular file, bounded, opened
// without blocking) for the event name in $GITHUB_EVENT_NAME.
func ReadEvent(path, name string) (*Event, error) {
	data, err := pathguard.ReadRegular(path, MaxEventBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	return ParseEvent(name, data)
}

type payloadIssue struct {
	Number      int                     `json:"number"`
	Title       string                  `json:"title"`
	Body        *string                 `json:"body"`
	State       string                  `json:"state"`
	Labels      []struct{ Name string } `json:"labels"`
	User        struct{ Login string }  `json:"user"`
	PullRequest json.RawMessage         `json:"pull_request"`
	UpdatedAt   time.Time               `json:"updated_at"`
}

type payload struct {
	Action     string                 `json:"action"`
	Issue      *payloadIssue          `json:"issue"`
	Label      *struct{ Name string } `json:"label"`
	Sender     struct{ Login string } `json:"sender"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Inputs map[string]json.RawMessage `json:"inputs"`
	Alert  *struct {
		Number int `json:"number"`
	} `json:"alert"`
}

// AlertActions are the dependabot_alert actions that start a run: the ones
// after which the alert is open.
var AlertActions = []string{"created", "reopened", "auto_reopened", "reintroduced"}

// ParseEvent reads an event payload from memory.
func ParseEvent(name string, data []byte) (*Event, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrBadEvent)
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrBadEvent)
	}
	ev := &Event{Name: name, Action: p.Action, Repo: p.Repository.FullName, Sender: p.Sender.Login}
	if ev.Repo == "" {
		return nil, fmt.Errorf("%w: no repository.full_name", ErrBadEvent)
	}
	switch name {
	case "issues":
		if p.Action != "labeled" && p.Action != "opened" {
			return nil, fmt.Errorf("%w: issues.%s does not start a run (labeled, opened do)", ErrBadEvent, p.Action)
		}
		if p.Issue == nil {
			return nil, fmt.Errorf("%w: issues event without an issue", ErrBadEvent)
		}
		if p.Action == "labeled" {
			if p.Label == nil || p.Label.Name == "" {
				return nil, fmt.Errorf("%w: issues.labeled without a label", ErrBadEvent)
			}
			ev.Label = p.Label.Name
		}
		ev.Snapshot = p.Issue.data()
	case "issue_comment":
		if p.Action != "created" {
			return nil, fmt.Errorf("%w: issue_comment.%s does not start a run (created does)", ErrBadEvent, p.Action)
		}
		if p.Issue == nil {
			return nil, fmt.Errorf("%w: issue_comment event without an issue", ErrBadEvent)
		}
		if len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null" {
			return nil, fmt.Errorf("%w: the comment is on a pull request, not an issue", ErrBadEvent)
		}
	case "dependabot_alert":
		if !slices.Contains(AlertActions, p.Action) {
			return nil, fmt.Errorf("%w: dependabot_alert.%s does not start a run (%s do)", ErrBadEvent, p.Action, strings.Join(AlertActions, ", "))
		}
		if p.Alert == nil || p.Alert.Number <= 0 || p.Alert.Number > 1<<31-1 {
			return nil, fmt.Errorf("%w: dependabot_alert event without an alert number", ErrBadEvent)
		}
		ev.Alert, ev.AlertKind = p.Alert.Number, DependabotKind
		return ev, nil
	case "code_scanning_alert", "secret_scanning_alert":
		if !slices.Contains(ScanAlertActions[name], p.Action) {
			return nil, fmt.Errorf("%w: %s.%s does not start a run (%s do)", ErrBadEvent, name, p.Action, strings.Join(ScanAlertActions[name], ", "))
		}
		if p.Alert == nil || p.Alert.Number <= 0 || p.Alert.Number > 1<<31-1 {
			return nil, fmt.Errorf("%w: %s event without an alert number", ErrBadEvent, name)
		}
		ev.Alert, ev.AlertKind = p.Alert.Number, CodeScanningKind
		if name == "secret_scanning_alert" {
			ev.AlertKind = SecretScanningKind
		}
		return ev, nil
	case "workflow_dispatch":
		n, err := dispatchNumber(p.Inputs)
		if err != nil {
			return nil, err
		}
		ev.Number = n
	default:
		return nil, fmt.Errorf("%w: event %q does not start a run (issues, issue_comment, workflow_dispatch, dependabot_alert, code_scanning_alert, secret_scanning_alert do)", ErrBadEvent, name)
	}
	if p.Issue != nil {
		ev.Number = p.Issue.Number
	}
	if ev.Number <= 0 {
		return nil, fmt.Errorf("%w: no issue number", ErrBadEvent)
	}
	return ev, nil
}

func (pi *payloadIssue) data() *IssueData {
	d := &IssueData{Number: pi.Number, Title: pi.Title, State: pi.State, Author: pi.User.Login, UpdatedAt: pi.UpdatedAt,
		IsPR: len(pi.PullRequest) > 0 && string(pi.PullRequest) != "null"}
	if pi.Body != nil {
		d.Body = *pi.Body
	}
	for _, l := range pi.Labels {
		d.Labels = append(d.Labels, l.Name)
	}
	return d
}

// dispatchNumber reads the issue number input; payload inputs are strings,
// but a number is accepted too.
func dispatchNumber(inputs map[string]json.RawMessage) (int, error) {
	for _, k := range DispatchInputs {
		raw, ok := inputs[k]
		if !ok {
			continue
		}
		s := strings.TrimSpace(string(raw))
		if v := ""; json.Unmarshal(raw, &v) == nil {
			s = strings.TrimSpace(v)
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > 1<<31-1 {
			return 0, fmt.Errorf("%w: workflow_dispatch input %s = %q is not an issue number", ErrBadEvent, k, s)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: workflow_dispatch has none of the inputs %s", ErrNoDispatchInput, strings.Join(DispatchInputs, ", "))
}
