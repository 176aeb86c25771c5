// Package github is the GitHub forge: it pushes fixrail/<id> through the
// containment layer's push (gitx), opens draft pull requests, asserts the
// base branch's protection, posts escalation notices, lists open work and
// waits for CI, all over the REST API (google/go-github), never by shelling
// out to gh, which would inspect the repository in its working directory
// with fixrail's credentials.
//
// Every call names its repository, has a deadline, and returns errors typed
// by package forge: a rate limit is *forge.RateLimitError, a refusal is
// *forge.APIError of kind forge.ErrForge, an outage (5xx, connection) is
// forge.ErrUnavailable once the bounded retries are spent. The token is
// held here only, attached by go-github to requests to the configured API
// origin and no other.
//
// There is no method to merge, to mark a PR ready for review, to move a
// ref or to force anything: the tests scan this package's source for those
// calls and assert the strict fake never saw them.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v93/github"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx"
)

// TokenEnv are the variables the token is read from, in order. Both must be
// known to the redaction engine and absent from every child environment
// but the credentialed class.
var TokenEnv = []string{"FIXRAIL_GITHUB_TOKEN", "GITHUB_TOKEN"}

// APIURLEnv are the variables naming the API base URL, in order
// (GITHUB_API_URL is set by Actions, also on GitHub Enterprise Server).
var APIURLEnv = []string{"FIXRAIL_GITHUB_API_URL", "GITHUB_API_URL"}

// ErrNoToken means neither token variable is set.
var ErrNoToken = errors.New("github: no token (set FIXRAIL_GITHUB_TOKEN or GITHUB_TOKEN)")

// TokenFromEnv returns the token and the name of the variable it came from.
func TokenFromEnv(lookup func(string) (string, bool)) (token, from string, err error) {
	for _, name := range TokenEnv {
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), name, nil
		}
	}
	return "", "", ErrNoToken
}

// APIURLFromEnv returns the configured API base URL, or "" for api.github.com.
func APIURLFromEnv(lookup func(string) (string, bool)) string {
	for _, name := range APIURLEnv {
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ParseRepo splits "owner/name", refusing anything that is not a plain
// GitHub owner and repository name (it goes into every URL path).
func ParseRepo(s string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || !findings.ValidLogin(owner) || !validRepoName(name) {
		return "", "", fmt.Errorf("github: %q is not owner/name", s)
	}
	return owner, name, nil
}

func validRepoName(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." || strings.HasSuffix(s, ".git") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Pusher is the containment layer's push (*gitx.Repo): the pinned push URL
// recorded at baseline, credentials only there, an explicit refspec, never
// force. PushDryRun is the same push with --dry-run (CheckAccess).
type Pusher interface {
	Push(ctx context.Context, refspec string) error
	PushDryRun(ctx context.Context, refspec string) error
	PushURL() string
}

var _ Pusher = (*gitx.Repo)(nil)

// Config configures a Forge. Zero durations take the defaults.
type Config struct {
	Owner, Repo string
	Token       string
	// APIURL is the REST base ("" for https://api.github.com/; GitHub
	// Enterprise Server: https://HOST/api/v3/).
	APIURL    string
	UserAgent string
	// Remote pushes the branch; needed by Publish only.
	Remote Pusher
	// PushTo is "owner/name" of the fork the branch is pushed to and the
	// draft opened from (forge.push_to); empty is the repository itself.
	PushTo string
	// RequestTimeout bounds each attempt of each request.
	RequestTimeout time.Duration
	// Retries is how many times a 5xx or connection error is retried.
	Retries int
	// Backoff is the first retry's wait; it doubles each time.
	Backoff time.Duration
	// PollEvery is WaitChecks' interval.
	PollEvery time.Duration
	// AppearWithin is how long WaitChecks waits for a first check when
	// none is required: nothing by then is "no CI configured".
	AppearWithin time.Duration
}

const (
	defaultTimeout = 30 * time.Second
	defaultRetries = 3
	defaultBackoff = 2 * time.Second
	defaultPoll    = 20 * time.Second
	defaultAppear  = 3 * time.Minute
	// maxPages bounds every paginated listing (100 per page).
	maxPages = 10
)

// Forge is the GitHub forge for one repository.
type Forge struct {
	cfg Config
	c   *gh.Client
}

// New builds a Forge. The token is required: fixrail never runs against
// GitHub unauthenticated (the collaborator check needs push access).
func New(cfg Config) (*Forge, error) {
	if cfg.Token == "" {
		return nil, ErrNoToken
	}
	if !findings.ValidLogin(cfg.Owner) || !validRepoName(cfg.Repo) {
		return nil, fmt.Errorf("github: %q/%q is not owner/name", cfg.Owner, cfg.Repo)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = defaultTimeout
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	} else if cfg.Retries == 0 {
		cfg.Retries = defaultRetries
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = defaultBackoff
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = defaultPoll
	}
	if cfg.AppearWithin <= 0 {
		cfg.AppearWithin = defaultAppear
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "fixrail"
	}
	opts := []gh.ClientOptionsFunc{
		gh.WithAuthToken(cfg.Token),
		gh.WithUserAgent(cfg.UserAgent),
		gh.WithEnvProxy(),
		// A secondary limit blocks the client for at most this long; fixrail
		// never sleeps on it (it HALTs with the reset time instead).
		gh.WithMaxSecondaryRateLimitRetryAfterDuration(time.Hour),
	}
	if cfg.APIURL != "" {
		u, err := url.Parse(cfg.APIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("github: API URL %q: want https://host[/path]", redactURL(cfg.APIURL))
		}
		base := strings.TrimSuffix(cfg.APIURL, "/") + "/"
		opts = append(opts, gh.WithURLs(&base, &base))
	}
	c, err := gh.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return &Forge{cfg: cfg, c: c}, nil
}

// Repo is "owner/name".
func (f *Forge) Repo() string { return f.cfg.Owner + "/" + f.cfg.Repo }

// SetPushTo makes the forge push to the fork repo ("owner/name") and open
// its drafts from there; "" pushes to the repository itself.
func (f *Forge) SetPushTo(repo string) error {
	if repo == "" {
		f.cfg.PushTo = ""
		return nil
	}
	owner, name, err := ParseRepo(repo)
	if err != nil {
		return fmt.Errorf("forge.push_to: %w", err)
	}
	if strings.EqualFold(owner+"/"+name, f.Repo()) {
		return fmt.Errorf("forge.push_to: %s is the repository itself, not a fork", repo)
	}
	f.cfg.PushTo = owner + "/" + name
	return nil
}

// headRepo is the repository fixrail's branches live in: the fork, or
// this one.
func (f *Forge) headRepo() (owner, name string) {
	if f.cfg.PushTo != "" {
		o, n, _ := strings.Cut(f.cfg.PushTo, "/")
		return o, n
	}
	return f.cfg.Owner, f.cfg.Repo
}

// HeadRepo is "owner/name" of the repository fixrail pushes to.
func (f *Forge) HeadRepo() string {
	o, n := f.headRepo()
	return o + "/" + n
}

// call runs one request with a deadline per attempt. Requests that are safe
// to repeat (retry) are retried on 5xx and connection errors with doubling
// backoff, within the caller's deadline; rate limits are never retried.
func (f *Forge) call(ctx context.Context, op string, retry bool, fn func(ctx context.Context) (*gh.Response, error)) error {
	op = f.Repo() + ": " + op
	wait := f.cfg.Backoff
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, f.cfg.RequestTimeout)
		resp, err := fn(actx)
		cancel()
		if err == nil {
			return nil
		}
		e := classify(ctx, op, resp, err)
		if !retry || attempt >= f.cfg.Retries || !errors.Is(e, forge.ErrUnavailable) || ctx.Err() != nil {
			return e
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return e
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return e
		case <-t.C:
		}
		wait *= 2
	}
}

// classify turns go-github's errors into forge's.
func classify(ctx context.Context, op string, resp *gh.Response, err error) error {
	var rl *gh.RateLimitError
	var ab *gh.AbuseRateLimitError
	var er *gh.ErrorResponse
	var acc *gh.AcceptedError
	switch {
	case errors.As(err, &rl):
		return &forge.RateLimitError{Op: op, Reset: rl.Rate.Reset.Time, Message: bound(rl.Message)}
	case errors.As(err, &ab):
		e := &forge.RateLimitError{Op: op, Secondary: true, Message: bound(ab.Message)}
		if ab.RetryAfter != nil {
			e.Reset = time.Now().Add(*ab.RetryAfter).Truncate(time.Second)
		}
		return e
	case errors.Is(err, gh.ErrBranchNotProtected):
		return &forge.APIError{Op: op, Status: 404, Message: "Branch not protected", Kind: forge.ErrForge, Err: err}
	case errors.As(err, &acc):
		return &forge.APIError{Op: op, Status: 202, Message: "accepted, not ready yet", Kind: forge.ErrUnavailable, Err: err}
	case errors.As(err, &er):
		status := 0
		if er.Response != nil {
			status = er.Response.StatusCode
		}
		msg := bound(er.Message)
		for _, d := range er.Errors {
			if d.Message != "" {
				msg += "; " + bound(d.Message)
			} else if d.Code != "" {
				msg += "; " + bound(d.Resource+" "+d.Field+" "+d.Code)
			}
		}
		kind := forge.ErrForge
		switch {
		case status >= 500:
			kind = forge.ErrUnavailable
		case status == 422 && strings.Contains(er.Message, "Draft pull requests are not supported"):
			kind = forge.ErrDraftUnsupported
		case strings.Contains(er.Message, "GitHub Actions is not permitted to create"):
			kind = forge.ErrActionsCannotOpenPRs
		}
		return &forge.APIError{Op: op, Status: status, Message: msg, Kind: kind, Err: err}
	}
	// Connection errors and per-attempt timeouts; the caller's own
	// cancellation is not an outage but is not retried either.
	if ctx.Err() != nil {
		return &forge.APIError{Op: op, Kind: forge.ErrUnavailable, Err: ctx.Err()}
	}
	return &forge.APIError{Op: op, Kind: forge.ErrUnavailable, Err: err}
}

// status is an error's HTTP status, 0 for none.
func status(err error) int {
	var ae *forge.APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// bound makes server text safe to put in a note: no control characters,
// at most 300 bytes. It is still untrusted text.
func bound(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	u.RawQuery = ""
	return u.String()
}

// Halting marks intake errors that must stop the run (rate limits and
// outages) rather than hide one comment; see findings.isHalting.
type haltingError struct{ error }

func (haltingError) Halting() bool   { return true }
func (h haltingError) Unwrap() error { return h.error }

func halting(err error) error {
	if errors.Is(err, forge.ErrRateLimited) || errors.Is(err, forge.ErrUnavailable) {
		return haltingError{err}
	}
	return err
}

// FromEnv builds the Forge for repo ("owner/name") the way the CLI does:
// the token from TokenEnv, the API URL from APIURLEnv, remote for pushes
// (the run's *gitx.Repo; nil for a forge that only reads, like doctor's).
func FromEnv(lookup func(string) (string, bool), repo string, remote Pusher) (*Forge, error) {
	owner, name, err := ParseRepo(repo)
	if err != nil {
		return nil, err
	}
	tok, _, err := TokenFromEnv(lookup)
	if err != nil {
		return nil, err
	}
	return New(Config{Owner: owner, Repo: name, Token: tok, APIURL: APIURLFromEnv(lookup), Remote: remote})
}
