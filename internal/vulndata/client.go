// Package vulndata owns what fixrail knows about a package's advisories and
// published versions: an OSV client (package-wide query, every page), a
// deps.dev client (published versions), the on-disk cache both sit behind,
// offline mode, and version order per ecosystem (deps.dev/util/semver behind
// an adapter that owns its measured traps). Everything the services return is
// untrusted data.
package vulndata

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Upstream endpoints.
const (
	DefaultOSVURL     = "https://api.osv.dev"
	DefaultDepsDevURL = "https://api.deps.dev"
)

// Limits on what a service may send: OSV's documented HTTP/1.1 cap is 32 MiB
// per response; a package-wide query longer than maxPages pages, or larger
// than maxTotal over all its pages, is refused rather than followed.
const (
	maxBody  = 32 << 20
	maxTotal = 64 << 20
	maxPages = 100
)

// ErrOfflineMiss means --offline was asked for and the cache holds no answer.
var ErrOfflineMiss = errors.New("not in the cache, and offline")

// ErrUnreachable means a service could not be asked or gave no usable answer.
var ErrUnreachable = errors.New("vulnerability service unreachable")

// ErrNotFound means deps.dev knows no such package (404).
var ErrNotFound = errors.New("package not found")

// MissError names what an offline run would have had to fetch.
type MissError struct{ Kind, Ecosystem, Name string }

func (e *MissError) Error() string {
	return fmt.Sprintf("%s data for %s %q is %v; run once online to fill the cache", e.Kind, e.Ecosystem, e.Name, ErrOfflineMiss)
}
func (e *MissError) Unwrap() error { return ErrOfflineMiss }

// Client asks OSV and deps.dev, through the cache.
type Client struct {
	OSVURL, DepsDevURL string
	HTTP               *http.Client
	Cache              *Cache // nil: no cache
	// Offline serves every answer from the cache, of any age, and never
	// calls out; a miss is a *MissError.
	Offline bool
	// Retries on 429, 5xx and transport errors; Backoff doubles each time.
	Retries int
	Backoff time.Duration
}

// NewClient is a client against the upstream services with a 20 s
// per-request timeout.
func NewClient(cache *Cache) *Client {
	return &Client{
		OSVURL: DefaultOSVURL, DepsDevURL: DefaultDepsDevURL,
		HTTP:  &http.Client{Timeout: 20 * time.Second},
		Cache: cache, Retries: 2, Backoff: 500 * time.Millisecond,
	}
}

// Meta says where an answer came from.
type Meta struct {
	FromCache bool      `json:"from_cache"`
	FetchedAt time.Time `json:"fetched_at"`
	// Stale: served offline past the cache's TTL. A clean answer is only
	// known-clean as of FetchedAt.
	Stale bool `json:"stale,omitempty"`
}

// CheckBaseURL refuses a base URL that is not plain http(s) with a host.
func CheckBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("base URL %q: want http(s)://host[:port][/path]", s)
	}
	return nil
}

// Vulns returns every non-withdrawn OSV record about eco/name: a
// package-wide query (no version), following next_page_token through every
// page, including a page that carries only a token.
func (c *Client) Vulns(ctx context.Context, eco Ecosystem, name string) ([]Vuln, Meta, error) {
	name = eco.NormalizeName(name)
	var out []Vuln
	meta, err := c.cached(ctx, "osv", eco, name, &out, func() (any, error) {
		return c.queryOSV(ctx, eco, name)
	})
	if err != nil {
		return nil, meta, err
	}
	return dropWithdrawn(out), meta, nil
}

// dropWithdrawn removes withdrawn records: POST queries exclude them, but a
// cache seeded from GET /v1/vulns or an export may not.
func dropWithdrawn(vs []Vuln) []Vuln {
	out := vs[:0]
	for _, v := range vs {
		if v.Withdrawn == "" {
			out = append(out, v)
		}
	}
	return out
}

func (c *Client) queryOSV(ctx context.Context, eco Ecosystem, name string) ([]Vuln, error) {
	type pkg struct {
		Name      string `json:"name"`
		Ecosystem string `json:"ecosystem"`
	}
	type query struct {
		Package   pkg    `json:"package"`
		PageToken string `json:"page_token,omitempty"`
	}
	var all []Vuln
	seen := map[string]bool{}
	q := query{Package: pkg{name, string(eco)}}
	total := 0
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("%w: OSV sent more than %d pages for %s %q", ErrUnreachable, maxPages, eco, name)
		}
		body, _ := json.Marshal(q)
		var resp struct {
			Vulns         []Vuln `json:"vulns"`
			NextPageToken string `json:"next_page_token"`
		}
		n, err := c.do(ctx, http.MethodPost, strings.TrimRight(c.OSVURL, "/")+"/v1/query", body, &resp)
		if err != nil {
			return nil, err
		}
		if total += n; total > maxTotal {
			return nil, fmt.Errorf("%w: OSV sent more than %d bytes for %s %q", ErrUnreachable, maxTotal, eco, name)
		}
		for _, v := range resp.Vulns {
			if v.ID == "" || seen[v.ID] {
				continue
			}
			seen[v.ID] = true
			all = append(all, v)
		}
		if resp.NextPageToken == "" {
			return all, nil
		}
		if resp.NextPageToken == q.PageToken {
			return nil, fmt.Errorf("%w: OSV repeated page token", ErrUnreachable)
		}
		q.PageToken = resp.NextPageToken
	}
}

// Published is one version deps.dev lists for a package.
type Published struct {
	Version     string    `json:"version"`
	PublishedAt time.Time `json:"published_at,omitzero"`
	Default     bool      `json:"default,omitempty"`
	// Deprecated is deps.dev's isDeprecated: npm deprecation, and the
	// closest v3 has to a yank (it has no yanked flag).
	Deprecated bool `json:"deprecated,omitempty"`
}

// Versions returns every version deps.dev lists for eco/name, in the order
// it sent them (not an order to trust: sort with the ecosystem).
func (c *Client) Versions(ctx context.Context, eco Ecosystem, name string) ([]Published, Meta, error) {
	name = eco.NormalizeName(name)
	var out []Published
	meta, err := c.cached(ctx, "depsdev", eco, name, &out, func() (any, error) {
		return c.queryDepsDev(ctx, eco, name)
	})
	return out, meta, err
}

func (c *Client) queryDepsDev(ctx context.Context, eco Ecosystem, name string) ([]Published, error) {
	_, sys := eco.system()
	if sys == "" {
		return nil, fmt.Errorf("%w %q", ErrUnknownEcosystem, string(eco))
	}
	var resp struct {
		Versions []struct {
			VersionKey struct {
				Version string `json:"version"`
			} `json:"versionKey"`
			PublishedAt  string `json:"publishedAt"`
			IsDefault    bool   `json:"isDefault"`
			IsDeprecated bool   `json:"isDeprecated"`
		} `json:"versions"`
	}
	u := strings.TrimRight(c.DepsDevURL, "/") + "/v3/systems/" + sys + "/packages/" + pathComponent(name)
	if _, err := c.do(ctx, http.MethodGet, u, nil, &resp); err != nil {
		return nil, err
	}
	out := make([]Published, 0, len(resp.Versions))
	for _, v := range resp.Versions {
		if v.VersionKey.Version == "" {
			continue
		}
		p := Published{Version: v.VersionKey.Version, Default: v.IsDefault, Deprecated: v.IsDeprecated}
		if t, err := time.Parse(time.RFC3339, v.PublishedAt); err == nil {
			p.PublishedAt = t.UTC()
		}
		out = append(out, p)
	}
	return out, nil
}

// pathComponent escapes name as encodeURIComponent does, the form deps.dev's
// docs use: @colors/colors → %40colors%2Fcolors, g:a → g%3Aa.
func pathComponent(name string) string {
	return strings.ReplaceAll(url.QueryEscape(name), "+", "%20")
}

// statusError is a non-2xx answer.
type statusError struct {
	code int
	url  string
}

func (e *statusError) Error() string { return fmt.Sprintf("%s answered HTTP %d", e.url, e.code) }

// do makes one request (with retries on 429, 5xx and transport errors) and
// decodes a bounded JSON answer into out; n is the answer's size.
func (c *Client) do(ctx context.Context, method, u string, body []byte, out any) (n int, err error) {
	if c.Offline {
		// cached() never gets here offline; this keeps a direct caller
		// (queryOSV, queryDepsDev) from calling out (TestOfflineNeverCallsOut).
		return 0, fmt.Errorf("%w: refusing to call %s offline", ErrOfflineMiss, u)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	backoff := c.Backoff
	var last error
	for attempt := 0; attempt <= c.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return 0, fmt.Errorf("%w: %v", ErrUnreachable, ctx.Err())
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrUnreachable, err)
		}
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			continue
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return 0, fmt.Errorf("%w: %s", ErrNotFound, u)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			last = &statusError{resp.StatusCode, u}
			continue
		case resp.StatusCode/100 != 2:
			return 0, fmt.Errorf("%w: %v", ErrUnreachable, &statusError{resp.StatusCode, u})
		case rerr != nil:
			last = rerr
			continue
		case len(data) > maxBody:
			return 0, fmt.Errorf("%w: %s sent more than %d bytes", ErrUnreachable, u, maxBody)
		}
		if err := json.Unmarshal(data, out); err != nil {
			return 0, fmt.Errorf("%w: %s: bad JSON: %v", ErrUnreachable, u, err)
		}
		return len(data), nil
	}
	return 0, fmt.Errorf("%w: %v", ErrUnreachable, last)
}
