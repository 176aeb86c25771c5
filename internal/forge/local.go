package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/untrusted"
)

// Local writes PR bundles under Dir/<id>/ and pushes nothing: the branch
// is the repository's own, set by the pipeline.
type Local struct {
	Dir string
}

// bundleFiles are the only files a bundle holds; replacing a bundle deletes
// exactly these, never recursively. notice.* is the latest ESCALATE or
// NOT-REPRO notice for the finding.
var bundleFiles = []string{"pr.json", "body.md", "fix.patch", "notice.json", "notice.md"}

// prFiles are what a PR writes (a notice is written alone).
var prFiles = []string{"pr.json", "body.md", "fix.patch"}

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
		// Escaped as the rest of what a person opens: the same JSON value,
		// no raw control in the file (encoding/json leaves C1 and bidi raw).
		"pr.json":   []byte(untrusted.Printable(string(meta)) + "\n"),
		"body.md":   []byte(pr.Body),
		"fix.patch": []byte(pr.Patch),
	}
	for _, name := range prFiles {
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

// Bundle reads the draft written for id, if there is one: its branch, its
// commit and the files it changes, as its pr.json records them.
func (l *Local) Bundle(id string) (OpenFix, bool, error) {
	if !pathguard.SafeName(id) {
		return OpenFix{}, false, fmt.Errorf("outbox: %q is not a safe directory name", id)
	}
	bundles, err := l.bundles()
	if err != nil {
		return OpenFix{}, false, err
	}
	for _, b := range bundles {
		if b.ID == id {
			return b, true, nil
		}
	}
	return OpenFix{}, false, nil
}

// CloseHint is how a person withdraws the local draft of finding id: the
// in-flight and path-lock HALTs name it.
func (l *Local) CloseHint(id string) string { return "fixrail close " + id }

// Publish writes the PR bundle (OpenDraft); the local forge pushes nothing,
// so the branch the pipeline set in the repository is the published one.
func (l *Local) Publish(ctx context.Context, pr PR) (Published, error) {
	if err := CheckHead(pr); err != nil {
		return Published{}, err
	}
	dir, err := l.OpenDraft(ctx, pr)
	if err != nil {
		return Published{}, err
	}
	return Published{Location: dir, Branch: pr.Head, Commit: pr.Commit}, nil
}

// AssertProtected is not applicable locally: nothing leaves the machine, so
// there is no remote base for an agent to push to.
func (l *Local) AssertProtected(_ context.Context, base string, _ []string) (Protection, error) {
	return Protection{Branch: base, Applicable: false}, nil
}

// CheckAccess is not applicable locally: the outbox needs no credential.
func (l *Local) CheckAccess(context.Context, AccessRequest) (Access, error) {
	return Access{Applicable: false}, nil
}

// noticeFile is notice.json: the notice without its body (in notice.md).
type noticeFile struct {
	Notice
	CreatedAt time.Time `json:"created_at"`
}

// Notify writes notice.json and notice.md into Dir/<id>/, replacing an
// earlier notice. A person clears an escalation by deleting them.
func (l *Local) Notify(_ context.Context, n Notice) error {
	if !pathguard.SafeName(n.ID) {
		return fmt.Errorf("outbox: %q is not a safe directory name", n.ID)
	}
	dir := filepath.Join(l.Dir, n.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("outbox: %s is not a directory fixrail wrote", dir)
	}
	meta, err := json.MarshalIndent(noticeFile{n, time.Now().UTC()}, "", "  ")
	if err != nil {
		return err
	}
	// notice.md first: a notice.json is only ever beside its body.
	for _, f := range []struct {
		name string
		data []byte
	}{{"notice.md", []byte(n.Body)}, {"notice.json", []byte(untrusted.Printable(string(meta)) + "\n")}} {
		if err := replaceFile(l.Dir, filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
	}
	return nil
}

// replaceFile writes data to a temporary file in tmpDir and renames it onto
// dst, so a reader sees the old file or the new one, never half of one.
func replaceFile(tmpDir, dst string, data []byte) error {
	f, err := os.CreateTemp(tmpDir, ".notice-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// FixFiles lists the outbox's bundles with the files each one's commit
// changes, as recorded in its pr.json. A bundle that records none (written
// before files were recorded, or edited by hand) is an error: the caller
// cannot tell what it touches.
func (l *Local) FixFiles(context.Context) ([]OpenFix, error) {
	bundles, err := l.bundles()
	if err != nil {
		return nil, err
	}
	for _, f := range bundles {
		if f.Files == nil {
			return nil, fmt.Errorf("outbox: %s/pr.json records no files; review that bundle and remove it, or write it again with this fixrail", f.ID)
		}
	}
	return bundles, nil
}

// bundles reads every bundle's pr.json, sorted by finding id.
func (l *Local) bundles() ([]OpenFix, error) {
	entries, err := os.ReadDir(l.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	var out []OpenFix
	for _, e := range entries {
		if !e.IsDir() || !pathguard.SafeName(e.Name()) {
			continue
		}
		data, err := pathguard.ReadRegular(filepath.Join(l.Dir, e.Name(), "pr.json"), maxMetaBytes)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("outbox: %w", err)
		}
		var pr PR
		if err := json.Unmarshal(data, &pr); err != nil {
			return nil, fmt.Errorf("outbox: %s/pr.json: %w", e.Name(), err)
		}
		out = append(out, OpenFix{ID: e.Name(), Branch: pr.Head, Location: filepath.Join(l.Dir, e.Name()), HeadSHA: pr.Commit, Checks: CINone, Files: pr.Files})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// maxMetaBytes bounds pr.json and notice.json when read back.
const maxMetaBytes = 1 << 20

// OpenWork lists the outbox's bundles as open fixes (no CI runs locally, so
// their checks are "none") and reports an escalation when the subject's
// notice is an ESCALATE.
func (l *Local) OpenWork(_ context.Context, s Subject) (Work, error) {
	var w Work
	bundles, err := l.bundles()
	if err != nil {
		return w, err
	}
	for _, f := range bundles {
		f.Files = nil
		w.Fixes = append(w.Fixes, f)
	}
	if !pathguard.SafeName(s.ID) {
		return w, nil
	}
	p := filepath.Join(l.Dir, s.ID, "notice.json")
	data, err := pathguard.ReadRegular(p, maxMetaBytes)
	if errors.Is(err, os.ErrNotExist) {
		return w, nil
	}
	if err != nil {
		return w, fmt.Errorf("outbox: %w", err)
	}
	var n noticeFile
	if err := json.Unmarshal(data, &n); err != nil {
		return w, fmt.Errorf("outbox: %s: %w", p, err)
	}
	if n.Terminal == Escalate {
		w.Escalation = &OpenEscalation{Number: s.Issue, Label: LabelEscalated, Location: p}
	}
	return w, nil
}

// WaitChecks has nothing to wait for: no CI runs on a local bundle.
func (l *Local) WaitChecks(_ context.Context, pub Published, _ time.Time, required []CheckRef) (CIResult, error) {
	res := CIResult{State: CINone, HeadSHA: pub.Commit, Detail: "the local forge runs no CI"}
	if len(required) > 0 {
		for _, r := range required {
			res.Missing = append(res.Missing, r.String())
		}
		res.State = CINeverAppeared
		res.Detail = "the local forge runs no CI; required checks " + JoinChecks(required) + " cannot report"
	}
	return res, nil
}
