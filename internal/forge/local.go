// Package forge is where a finished fix leaves the harness: a pull request
// and, later, comments and labels. The local forge is the embedded default:
// it writes the PR as files under .fixrail/outbox and pushes nothing.
package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	Body   string   `json:"-"`
	Patch  string   `json:"-"`
}

// ErrNotDraft refuses a PR that is not a draft.
var ErrNotDraft = errors.New("forge: refusing to open a PR that is not a draft")

// Local writes PR bundles under Dir/<id>/.
type Local struct {
	Dir string
}

// OpenDraft writes pr.json, body.md and fix.patch into Dir/<pr.ID>/ and
// returns that directory. The bundle is built in a sibling temp directory and
// renamed into place, so a reader never sees half a bundle.
func (l *Local) OpenDraft(_ context.Context, pr PR) (string, error) {
	if !pr.Draft {
		return "", ErrNotDraft
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	tmp, err := os.MkdirTemp(l.Dir, ".tmp-"+pr.ID+"-")
	if err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	defer os.RemoveAll(tmp)
	meta, err := json.MarshalIndent(struct {
		PR
		CreatedAt time.Time `json:"created_at"`
	}{pr, time.Now().UTC()}, "", "  ")
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{
		"pr.json":   append(meta, '\n'),
		"body.md":   []byte(pr.Body),
		"fix.patch": []byte(pr.Patch),
	} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", fmt.Errorf("outbox: %w", err)
		}
	}
	dst := filepath.Join(l.Dir, pr.ID)
	// A bundle from an earlier run of the same finding is replaced whole.
	if _, err := os.Lstat(dst); err == nil {
		old := dst + ".old-" + filepath.Base(tmp)
		if err := os.Rename(dst, old); err != nil {
			return "", fmt.Errorf("outbox: %w", err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	return dst, nil
}
