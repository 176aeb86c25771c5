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
	"slices"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
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

// bundleFiles are the only files a bundle holds; replacing a bundle deletes
// exactly these, never recursively.
var bundleFiles = []string{"pr.json", "body.md", "fix.patch"}

// OpenDraft writes pr.json, body.md and fix.patch into Dir/<pr.ID>/ and
// returns that directory. The bundle is built in a marked disposable
// directory and renamed into place, so a reader never sees half a bundle.
func (l *Local) OpenDraft(_ context.Context, pr PR) (string, error) {
	if !pr.Draft {
		return "", ErrNotDraft
	}
	if !pathguard.SafeName(pr.ID) {
		return "", fmt.Errorf("outbox: %q is not a safe directory name", pr.ID)
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	tmp, err := pathguard.NewDisposable(l.Dir, "outbox bundle "+pr.ID)
	if err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	defer pathguard.RemoveDisposable(tmp) // a no-op once renamed into place
	meta, err := json.MarshalIndent(struct {
		PR
		CreatedAt time.Time `json:"created_at"`
	}{pr, time.Now().UTC()}, "", "  ")
	if err != nil {
		return "", err
	}
	contents := map[string][]byte{
		"pr.json":   append(meta, '\n'),
		"body.md":   []byte(pr.Body),
		"fix.patch": []byte(pr.Patch),
	}
	for _, name := range bundleFiles {
		if err := os.WriteFile(filepath.Join(tmp, name), contents[name], 0o644); err != nil {
			return "", fmt.Errorf("outbox: %w", err)
		}
	}
	dst := filepath.Join(l.Dir, pr.ID)
	if err := removeBundle(dst); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	// The marker goes only once the bundle is in place: until then the
	// deferred cleanup can still recognise tmp as ours.
	if err := pathguard.Keep(dst); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	return dst, nil
}

// removeBundle deletes an earlier bundle file by file. A directory holding
// anything else is not fixrail's to delete, and the error says so.
func removeBundle(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("outbox: %s is not a directory fixrail wrote; move it away to let it write this bundle", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	// Look before deleting anything: a directory holding a file fixrail did not
	// write keeps its whole earlier bundle.
	for _, e := range entries {
		if !slices.Contains(bundleFiles, e.Name()) || !e.Type().IsRegular() {
			return fmt.Errorf("outbox: %s holds %s, which fixrail did not write; move it away to let it write this bundle", dir, e.Name())
		}
	}
	for _, name := range bundleFiles {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("outbox: replace %s: %w", dir, err)
		}
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("outbox: replace %s: %w", dir, err)
	}
	return nil
}

// Withdraw removes the bundle OpenDraft wrote for id: the run could not set
// its branch after all, and a bundle must never describe a branch that
// does not hold its commit.
func (l *Local) Withdraw(_ context.Context, id string) error {
	if !pathguard.SafeName(id) {
		return fmt.Errorf("outbox: %q is not a safe directory name", id)
	}
	return removeBundle(filepath.Join(l.Dir, id))
}
