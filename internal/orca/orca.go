// Package orca reads Orca Security alerts for one code repository through
// Orca's serving-layer query (POST /api/serving-layer/query, Authorization:
// TOKEN <token>), and sorts each as fixrail sorts a scanner's alert. Orca
// publishes no reference for this API: the request and response shapes are
// those its own public harness (orcasecurity/orca-skills) uses, and a
// response that does not fit them is an error, never a guess. It only
// reads: no alert is changed.
package orca

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// TokenEnv is where the API token comes from; never argv or a file.
const TokenEnv = "ORCA_API_TOKEN"

// QueryPath is the serving-layer endpoint.
const QueryPath = "/api/serving-layer/query"

// Limits: a page of alerts, the pages read, a response's size.
const (
	PageSize     = 100
	maxPages     = 20
	maxRespBytes = 16 << 20
)

// Client queries one Orca tenant.
type Client struct {
	URL   string // the API base (config orca.url)
	Token string
	HTTP  *http.Client
}

// New builds a client for base with the token from lookup.
func New(base string, lookup func(string) (string, bool)) (*Client, error) {
	tok, _ := lookup(TokenEnv)
	if strings.TrimSpace(tok) == "" {
		return nil, fmt.Errorf("orca: no token: set %s (an API token with a read-only role)", TokenEnv)
	}
	return &Client{URL: strings.TrimSuffix(base, "/"), Token: tok, HTTP: &http.Client{Timeout: time.Minute}}, nil
}

// Query is the body the serving layer takes.
type Query struct {
	Query          QuerySet       `json:"query"`
	Select         []string       `json:"select"`
	Limit          int            `json:"limit"`
	StartAtIndex   int            `json:"start_at_index"`
	OrderBy        []string       `json:"order_by[]"`
	GetResults     bool           `json:"get_results_and_count"`
	FullGraphFetch map[string]any `json:"full_graph_fetch"`
	MaxTier        int            `json:"max_tier"`
}

// QuerySet is an object-set query.
type QuerySet struct {
	Models []string `json:"models"`
	Type   string   `json:"type"`
	With   Clause   `json:"with"`
}

// Clause is one filter of the DSL.
type Clause struct {
	Type     string   `json:"type"`
	Key      string   `json:"key,omitempty"`
	Keys     []string `json:"keys,omitempty"`
	Models   []string `json:"models,omitempty"`
	Operator string   `json:"operator"`
	Values   []any    `json:"values,omitempty"`
	With     *Clause  `json:"with,omitempty"`
}

// Fields are the alert fields fixrail selects.
var Fields = []string{"AlertId", "AlertType", "RiskLevel", "Category", "Source", "Status", "Description", "Recommendation", "RiskFindings", "Labels", "CveIds"}

// AlertsQuery is the query for repo's open alerts, one page; with id, for
// that alert only (still of repo, still open: an alert of another
// repository, or a closed one, is not found).
func AlertsQuery(repo, id string, start int) Query {
	clauses := []any{
		Clause{Type: "str", Key: "Status", Operator: "in", Values: []any{"open", "in_progress"}},
		Clause{Type: "object_set", Models: []string{"Inventory"}, Keys: []string{"Inventories"}, Operator: "has",
			With: &Clause{Type: "str", Key: "Name", Operator: "in", Values: []any{repo}}},
	}
	limit := PageSize
	if id != "" {
		clauses = append(clauses, Clause{Type: "str", Key: "AlertId", Operator: "in", Values: []any{id}})
		limit = 1
	}
	return Query{
		Query:  QuerySet{Models: []string{"Alert"}, Type: "object_set", With: Clause{Type: "operation", Operator: "and", Values: clauses}},
		Select: Fields, Limit: limit, StartAtIndex: start, OrderBy: []string{"-OrcaScore"},
		FullGraphFetch: map[string]any{"enabled": true}, MaxTier: 2,
	}
}

// ErrNotFound means the alert is not an open alert of the repository.
var ErrNotFound = errors.New("orca: no such open alert")

// Alert reads one open alert of repo by id (orca-<digits>).
func (c *Client) Alert(ctx context.Context, repo, id string) (Alert, error) {
	if !alertIDRE().MatchString(id) {
		return Alert{}, fmt.Errorf("orca: %q is not an alert id (orca-<digits>)", bound(id, 40))
	}
	data, err := c.post(ctx, AlertsQuery(repo, id, 0))
	if err != nil {
		return Alert{}, err
	}
	as, err := ParseAlerts(data)
	if err != nil {
		return Alert{}, err
	}
	switch {
	case len(as) == 0:
		return Alert{}, fmt.Errorf("%w: %s is not an open alert of %s (closed, another repository's, or unknown)", ErrNotFound, id, repo)
	case len(as) > 1 || as[0].ID != id:
		return Alert{}, fmt.Errorf("%w: asked for %s, Orca answered %d alert(s), the first %s", ErrResponse, id, len(as), bound(as[0].ID, 40))
	}
	return as[0], nil
}

// Alert is one alert as the serving layer returns it, unwrapped.
type Alert struct {
	ID, Type, RiskLevel, Category, Source, Status string
	Description, Recommendation                   string
	FeatureType                                   string
	StartLine, EndLine                            int
	Snippet                                       string
	Labels, CVEs                                  []string
}

// ErrResponse means Orca answered something fixrail does not read.
var ErrResponse = errors.New("orca: unexpected response")

// Alerts reads repo's open alerts, every page (at most maxPages).
func (c *Client) Alerts(ctx context.Context, repo string) ([]Alert, error) {
	var out []Alert
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("orca: more than %d open alerts for %s", maxPages*PageSize, repo)
		}
		data, err := c.post(ctx, AlertsQuery(repo, "", page*PageSize))
		if err != nil {
			return nil, err
		}
		as, err := ParseAlerts(data)
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
		if len(as) < PageSize {
			return out, nil
		}
	}
}

func (c *Client) post(ctx context.Context, q Query) ([]byte, error) {
	body, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+QueryPath, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "TOKEN "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// url.Error carries the URL, never the token (a header).
		return nil, fmt.Errorf("orca: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRespBytes+1))
	if err != nil {
		return nil, fmt.Errorf("orca: %w", err)
	}
	if len(data) > maxRespBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrResponse, maxRespBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &e)
		msg := e.Error + e.Message
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		hint := ""
		if resp.StatusCode == 401 || resp.StatusCode == 403 {
			hint = " (check " + TokenEnv + " and the token's role)"
		}
		return nil, fmt.Errorf("orca: HTTP %d: %s%s", resp.StatusCode, bound(msg, 200), hint)
	}
	return data, nil
}

// ParseAlerts reads a serving-layer response: {"data":[{"data":{Field:
// {"value": …}}}]}. A field of the wrong shape is an error.
func ParseAlerts(data []byte) ([]Alert, error) {
	var resp struct {
		Data *[]struct {
			Data map[string]json.RawMessage `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrResponse, err)
	}
	if resp.Data == nil {
		return nil, fmt.Errorf("%w: no data", ErrResponse)
	}
	out := make([]Alert, 0, len(*resp.Data))
	for i, item := range *resp.Data {
		a, err := parseAlert(item.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: alert %d: %v", ErrResponse, i, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseAlert(m map[string]json.RawMessage) (Alert, error) {
	var a Alert
	str := func(k string, dst *string) error {
		raw, ok := m[k]
		if !ok {
			return nil
		}
		var w struct{ Value *string }
		if err := json.Unmarshal(raw, &w); err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		if w.Value != nil {
			*dst = *w.Value
		}
		return nil
	}
	list := func(k string, dst *[]string) error {
		raw, ok := m[k]
		if !ok {
			return nil
		}
		var w struct{ Value []string }
		if err := json.Unmarshal(raw, &w); err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		*dst = w.Value
		return nil
	}
	for k, dst := range map[string]*string{"AlertId": &a.ID, "AlertType": &a.Type, "RiskLevel": &a.RiskLevel, "Category": &a.Category,
		"Source": &a.Source, "Status": &a.Status, "Description": &a.Description, "Recommendation": &a.Recommendation} {
		if err := str(k, dst); err != nil {
			return a, err
		}
	}
	if err := list("Labels", &a.Labels); err != nil {
		return a, err
	}
	if err := list("CveIds", &a.CVEs); err != nil {
		return a, err
	}
	if raw, ok := m["RiskFindings"]; ok {
		var w struct {
			Value *struct {
				FeatureType string `json:"feature_type"`
				Position    *struct {
					StartLine int `json:"start_line"`
					EndLine   int `json:"end_line"`
				} `json:"position"`
				CodeSnippet json.RawMessage `json:"code_snippet"`
			}
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return a, fmt.Errorf("RiskFindings: %v", err)
		}
		if v := w.Value; v != nil {
			a.FeatureType = v.FeatureType
			if v.Position != nil {
				a.StartLine, a.EndLine = v.Position.StartLine, v.Position.EndLine
			}
			s, err := snippet(v.CodeSnippet)
			if err != nil {
				return a, fmt.Errorf("RiskFindings.code_snippet: %v", err)
			}
			a.Snippet = s
		}
	}
	if a.ID == "" {
		return a, errors.New("no AlertId")
	}
	return a, nil
}

// snippet reads code_snippet: a list of lines, or of {line, position}.
func snippet(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var lines []string
	if json.Unmarshal(raw, &lines) == nil {
		return strings.Join(lines, "\n"), nil
	}
	var objs []struct {
		Line string `json:"line"`
	}
	if err := json.Unmarshal(raw, &objs); err != nil {
		return "", err
	}
	for _, o := range objs {
		lines = append(lines, o.Line)
	}
	return strings.Join(lines, "\n"), nil
}

var alertIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^orca-[0-9]{1,18}$`) })

// ValidID reports whether id has Orca's alert id form, orca-<digits>.
func ValidID(id string) bool { return alertIDRE().MatchString(id) }

// featureTypes maps RiskFindings.feature_type to the fix type's tag.
var featureTypes = map[string]string{"sast": findings.SASTFixType, "iac": findings.IaCFixType, "secret": findings.SecretFixType, "secret_detection": findings.SecretFixType}

// Sort decides an Orca alert against tree (the base commit): to-fix, posture
// (scm_posture), unfixable (a cloud asset, a package CVE, no file, an id
// that is not Orca's). The finding id is the alert id (orca-<digits>).
func (a *Alert) Sort(tree findings.Tree, repo string) findings.ScannerResult {
	if !alertIDRE().MatchString(a.ID) || !pathguard.SafeName(a.ID) {
		return findings.ScannerResult{Group: findings.GroupUnfixable, Why: fmt.Sprintf("AlertId %q is not Orca's orca-<digits>", bound(a.ID, 40))}
	}
	path, line := sourcePath(a.Source, repo)
	if a.StartLine > 0 {
		line = a.StartLine
	}
	sa := &findings.ScannerAlert{
		Tool: "orca", Rule: a.Type, Severity: severity(a.RiskLevel),
		Path: path, Line: line, EndLine: a.EndLine,
		Message: a.Description, Help: a.Recommendation, Snippet: a.Snippet, Secret: a.Snippet,
		Source: "orca:" + a.ID,
	}
	configured := featureTypes[strings.ToLower(a.FeatureType)]
	switch ft := strings.ToLower(a.FeatureType); {
	case ft == "scm_posture":
		r := findings.SortAlert(sa, a.ID, "open", "", nil, findings.SASTFixType, "")
		r.Group, r.Why = findings.GroupPosture, "scm_posture: the repository's settings, not its files; a person changes them"
		return r
	case configured == "" && (ft == "" && strings.EqualFold(a.Category, "Vulnerabilities") || len(a.CVEs) > 0):
		r := findings.SortAlert(sa, a.ID, "open", "", nil, findings.VulnFixType, "")
		r.Why = "a package CVE: fixrail works one as run --vuln FILE or --alert N (Dependabot), which name its package and version"
		return r
	case configured == "":
		r := findings.SortAlert(sa, a.ID, "open", "", nil, findings.SASTFixType, "")
		r.Group, r.Why = findings.GroupUnfixable, fmt.Sprintf("feature_type %q (category %q) is no code fix fixrail makes: a cloud asset or a kind it has no fix type for", bound(a.FeatureType, 40), bound(a.Category, 60))
		r.Finding.FixType = ""
		return r
	}
	return findings.SortAlert(sa, a.ID, "open", "", tree, configured, "")
}

var blobRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^https://[^/]+/([^/]+/[^/]+)/blob/[^/]+/([^#?]+)(?:#L([0-9]+))?$`)
})

// sourcePath reads Source: a blob URL of repo (another repository's is no
// path here), path:line, or a path.
func sourcePath(src, repo string) (string, int) {
	if m := blobRE().FindStringSubmatch(src); m != nil {
		if !strings.EqualFold(m[1], repo) {
			return "", 0
		}
		p, err := url.PathUnescape(m[2])
		if err != nil {
			return "", 0
		}
		n, _ := strconv.Atoi(m[3])
		return p, n
	}
	if strings.Contains(src, "://") {
		return "", 0
	}
	if i := strings.LastIndexByte(src, ':'); i > 0 {
		if n, err := strconv.Atoi(src[i+1:]); err == nil {
			return src[:i], n
		}
	}
	return src, 0
}

func severity(risk string) string {
	switch r := strings.ToLower(risk); r {
	case "critical", "high", "medium", "low":
		return r
	}
	return "note"
}

func bound(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
