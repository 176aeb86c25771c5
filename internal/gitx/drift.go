package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrPoisoned reports a Repo whose config changed under it, or could not be
// listed to tell. Every call on it fails with this error, before any git
// runs; the Repo cannot be healed. Returned wrapped, with the cause.
var ErrPoisoned = errors.New("gitx: repository poisoned by a config change")

// ErrNoBaseline reports a drift check or a push on a Repo whose config was
// never recorded with Baseline.
var ErrNoBaseline = errors.New("gitx: no config baseline recorded")

// listTimeout bounds one config listing. An include.path can name a FIFO;
// a listing that does not finish is a listing that failed.
const listTimeout = 30 * time.Second

// DriftError is a clone config that differs from its baseline. It names
// keys only, never values: a value may be a token. Userinfo in a URL-shaped
// subsection is redacted for the same reason. A DriftError is also
// ErrPoisoned (errors.Is).
type DriftError struct {
	Dir     string   // where git listed the config: Top, or a linked worktree
	Added   []string // keys absent from the baseline
	Changed []string // keys whose values, their order or their scope differ
	Removed []string // keys the baseline had
}

func (e *DriftError) Error() string {
	var parts []string
	for _, p := range []struct {
		what string
		keys []string
	}{{"added", e.Added}, {"changed", e.Changed}, {"removed", e.Removed}} {
		if len(p.keys) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.keys, ", "))
		}
	}
	return fmt.Sprintf("git config drift in %s: %s", e.Dir, strings.Join(parts, "; "))
}

// Is makes a DriftError match ErrPoisoned: finding one poisons the Repo.
func (e *DriftError) Is(target error) bool { return target == ErrPoisoned }

// Shared takes the clone's gate shared, for running repository code: a
// runner, a test, the suite, a build check. Many may hold it at once; a
// drift check and the git call it guards wait until all are released, and
// once one waits, new Shared calls wait behind it. Taking the gate also
// marks the clone as needing a check, so the next guarded call checks
// whether or not RepositoryCodeRan is called; release marks it again.
// Call release when the code's process group is gone (a second call is a
// no-op). Do not call a guarded method (Diff, Commit, Push, AddWorktree,
// RemoveWorktree, Prune, UpdateBranch, CheckDrift) from the goroutine
// holding it: it would wait for itself until its context ends.
func (r *Repo) Shared() (release func()) {
	r.gate.RLock()
	r.RepositoryCodeRan()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.RepositoryCodeRan()
			r.gate.RUnlock()
		})
	}
}

// RepositoryCodeRan records that code from the repository has run (a
// runner, a test or build command), so the next guarded git call — diff,
// commit, push, worktree add or remove, prune, branch update — first runs
// CheckDrift. Without a Baseline it has no effect.
func (r *Repo) RepositoryCodeRan() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.needCheck = true
}

// Poisoned returns nil while r is usable, else an error wrapping
// ErrPoisoned and its cause (a *DriftError, or why the config could not be
// listed).
func (r *Repo) Poisoned() error { return r.poisonErr() }

func (r *Repo) poisonErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.poisoned == nil {
		return nil
	}
	if _, ok := r.poisoned.(*DriftError); ok {
		return fmt.Errorf("%w: %w", ErrPoisoned, r.poisoned)
	}
	return r.poisoned
}

// poison makes r unusable for good, and returns the error to report now:
// the *DriftError itself, or cause wrapped in ErrPoisoned.
func (r *Repo) poison(cause error) error {
	if _, ok := cause.(*DriftError); !ok {
		cause = fmt.Errorf("%w: %w", ErrPoisoned, cause)
	}
	r.mu.Lock()
	first := r.poisoned == nil
	if first {
		r.poisoned = cause
	}
	r.mu.Unlock()
	if first {
		r.persistPoison(cause)
	}
	return cause
}

// lockExclusive takes the gate exclusively, or gives up when ctx ends. A
// lock that arrives after the caller gave up is released at once.
func (r *Repo) lockExclusive(ctx context.Context) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	got := make(chan struct{})
	go func() {
		r.gate.Lock()
		close(got)
	}()
	select {
	case <-got:
		return r.gate.Unlock, nil
	case <-ctx.Done():
		go func() {
			<-got
			r.gate.Unlock()
		}()
		return nil, fmt.Errorf("wait for the clone's gate: %w", ctx.Err())
	}
}

// guarded runs fn, a git operation that can follow repository code, under
// the exclusive gate, after a drift check if one is due (always, or since
// repository code ran). Without a baseline there is nothing to check
// against and fn just runs under the gate.
func (r *Repo) guarded(ctx context.Context, always bool, fn func() error) error {
	if err := r.poisonErr(); err != nil {
		return err
	}
	unlock, err := r.lockExclusive(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	r.mu.Lock()
	codeRan := r.needCheck
	due := r.baselined && (always || codeRan)
	r.mu.Unlock()
	if due {
		if err := r.checkDrift(ctx, codeRan); err != nil {
			return err
		}
	}
	return fn()
}

// Baseline records the clone's effective config as seen from Top — local
// and worktree scope, includes followed — and the URL `git remote get-url
// --push origin` gives now, which is where Push will push. Call it once,
// after UseSnapshot and before any repository code runs; linked worktrees
// added later are recorded as they are added. A config that cannot be
// listed poisons the Repo.
func (r *Repo) Baseline(ctx context.Context) error {
	if err := r.poisonErr(); err != nil {
		return err
	}
	unlock, err := r.lockExclusive(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	r.mu.Lock()
	done := r.baselined
	r.mu.Unlock()
	if done {
		return errors.New("baseline: already recorded; it stays fixed")
	}
	entries, err := r.listConfig(ctx, r.top)
	if err != nil {
		return r.failedListing(ctx, "baseline", err)
	}
	url := ""
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"remote", "get-url", "--push", "origin"}})
	switch {
	case err == nil:
		url = strings.TrimSuffix(string(out), "\n")
	case exitCode(err) == 2: // no remote named origin: nothing to push to
	default:
		return r.failedListing(ctx, "baseline: push URL", err)
	}
	state, err := r.readState(ctx)
	if err != nil {
		return r.failedListing(ctx, "baseline: repository state", err)
	}
	base := map[string][]configEntry{r.top: entries}
	r.mu.Lock()
	var early []string
	for dir := range r.added {
		early = append(early, dir)
	}
	r.mu.Unlock()
	for _, dir := range early { // worktrees added before the baseline are recorded too
		if _, err := os.Lstat(dir); err != nil {
			continue
		}
		if base[dir], err = r.listConfig(ctx, dir); err != nil {
			return r.failedListing(ctx, "baseline", err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.base = base
	r.state = state
	r.pushURL = url
	r.baselined = true
	r.needCheck = false
	return nil
}

// PushURL is the URL recorded at Baseline, with any userinfo redacted; ""
// before Baseline or if there was no origin.
func (r *Repo) PushURL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return redactURL(r.pushURL)
}

// CheckDrift lists the clone's config again — from Top and from each live
// linked worktree added since Baseline — and compares it with the baseline.
// Any added, changed or removed key is a *DriftError, and the Repo is
// poisoned. So is a config that cannot be listed. The only difference
// accepted is the one git-lfs makes on its own: an added lfs.<url>.access or
// lfs.<url>.locksverify. It holds the gate exclusively while it runs.
func (r *Repo) CheckDrift(ctx context.Context) error {
	if err := r.poisonErr(); err != nil {
		return err
	}
	unlock, err := r.lockExclusive(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return r.checkDrift(ctx, true)
}

// checkDrift is CheckDrift with the gate already held. The state check
// (refs, HEAD, hooks, info, the .git link) runs when withState is set:
// after repository code ran, when nothing but that code could have
// changed them on fixrail's watch. The config check always runs.
func (r *Repo) checkDrift(ctx context.Context, withState bool) error {
	if err := r.poisonErr(); err != nil {
		return err
	}
	r.mu.Lock()
	if !r.baselined {
		r.mu.Unlock()
		return ErrNoBaseline
	}
	dirs := make([]string, 0, len(r.base))
	for dir := range r.base {
		dirs = append(dirs, dir)
	}
	r.mu.Unlock()
	slices.Sort(dirs)
	for _, dir := range dirs {
		if dir != r.top {
			if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
				r.forgetWorktree(dir) // deleted: nothing of it left for git to read
				continue
			}
		}
		got, err := r.listConfig(ctx, dir)
		if err != nil {
			return r.failedListing(ctx, "drift check", err)
		}
		r.mu.Lock()
		want := r.base[dir]
		r.mu.Unlock()
		if d := diffConfig(want, got); d != nil {
			d.Dir = dir
			return r.poison(d)
		}
	}
	r.mu.Lock()
	want := r.state
	r.mu.Unlock()
	if withState && want != nil {
		got, err := r.readState(ctx)
		if err != nil {
			return r.failedListing(ctx, "state check", err)
		}
		if d := diffState(want, got); d != nil {
			return r.poison(d)
		}
	}
	r.mu.Lock()
	r.needCheck = false
	r.mu.Unlock()
	return nil
}

// failedListing poisons r for a config it could not list, unless the
// caller's own context ended, which says nothing about the config: then the
// call fails and the check stays due.
func (r *Repo) failedListing(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return r.poison(fmt.Errorf("%s: cannot list git config: %w", what, err))
}

// listConfig lists the config git sees from dir in local and worktree
// scope, includes followed. Global scope is the snapshot, which has its own
// check; command scope is fixrail's own -c.
func (r *Repo) listConfig(ctx context.Context, dir string) ([]configEntry, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	out, err := r.run(lctx, invocation{dir: dir, args: []string{"config", "--list", "--includes", "--show-scope", "-z"}})
	if err != nil {
		return nil, err
	}
	all, err := parseConfigList(out, true, false)
	if err != nil {
		return nil, err
	}
	var entries []configEntry
	for _, e := range all {
		switch e.Scope {
		case "local", "worktree":
			entries = append(entries, e)
		case "system", "global", "command":
		default:
			return nil, fmt.Errorf("config listing: unknown scope %q for %s", e.Scope, redactKey(e.Key))
		}
	}
	return entries, nil
}

// recordWorktree records the config as seen from a linked worktree just
// added, if r has a baseline, so later checks cover what only a worktree
// reads (its config.worktree, an includeIf gitdir: that matches only it).
func (r *Repo) recordWorktree(ctx context.Context, dir string) error {
	r.mu.Lock()
	if r.added == nil {
		r.added = map[string]bool{}
	}
	r.added[dir] = true
	baselined := r.baselined
	r.mu.Unlock()
	if !baselined {
		return nil
	}
	entries, err := r.listConfig(ctx, dir)
	if err != nil {
		return r.failedListing(ctx, "record worktree config", err)
	}
	r.mu.Lock()
	pinned, pins := r.pinned, r.pins
	r.mu.Unlock()
	// A worktree can read config Top does not (an includeIf gitdir: that
	// matches only it, its config.worktree): held to the same pins.
	if keys := unpinned(entries, pins); pinned && keys != nil {
		return r.poison(&UnpinnedError{Dir: dir, Keys: keys})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.base[dir] = entries
	return nil
}

// forgetWorktree drops a removed worktree from the checks.
func (r *Repo) forgetWorktree(dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.added, dir)
	if dir != r.top {
		delete(r.base, dir)
	}
}

// DiscardWorktree deletes a linked worktree this Repo added, without
// running git: the teardown for a poisoned Repo, whose RemoveWorktree
// refuses. Only a directory this Repo's AddWorktree made is deleted, and
// only if it is still a real directory holding a .git file; its
// registration under .git/worktrees is left behind. A worktree already gone
// is not an error.
func (r *Repo) DiscardWorktree(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("discard worktree %s: %w", path, err)
	}
	abs = filepath.Clean(abs)
	unlock, err := r.lockExclusive(ctx)
	if err != nil {
		return fmt.Errorf("discard worktree %s: %w", path, err)
	}
	defer unlock()
	r.mu.Lock()
	ours := r.added[abs]
	r.mu.Unlock()
	if !ours {
		return fmt.Errorf("discard worktree %s: not a worktree this repository handle added", path)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.forgetWorktree(abs)
		return nil
	case err != nil:
		return fmt.Errorf("discard worktree %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("discard worktree %s: no longer a directory", path)
	}
	if gi, err := os.Lstat(filepath.Join(abs, ".git")); err != nil || !gi.Mode().IsRegular() {
		return fmt.Errorf("discard worktree %s: no .git file; not a linked worktree any more", path)
	}
	if err := os.RemoveAll(abs); err != nil {
		return fmt.Errorf("discard worktree %s: %w", path, err)
	}
	r.forgetWorktree(abs)
	return nil
}

// diffConfig compares two listings key by key. A key's identity is its
// name; its content is the ordered list of its values with their scopes. A
// nil result means no difference that matters.
func diffConfig(want, got []configEntry) *DriftError {
	group := func(entries []configEntry) (map[string][]string, []string) {
		m := map[string][]string{}
		var order []string
		for _, e := range entries {
			if _, ok := m[e.Key]; !ok {
				order = append(order, e.Key)
			}
			v := e.Scope + "\x00"
			if e.HasValue {
				v += "=" + e.Value
			}
			m[e.Key] = append(m[e.Key], v)
		}
		return m, order
	}
	w, wOrder := group(want)
	g, gOrder := group(got)
	d := &DriftError{}
	for _, k := range gOrder {
		wv, ok := w[k]
		switch {
		case !ok && isLFSKey(k):
		case !ok:
			d.Added = append(d.Added, redactKey(k))
		case !slices.Equal(wv, g[k]):
			d.Changed = append(d.Changed, redactKey(k))
		}
	}
	for _, k := range wOrder {
		if _, ok := g[k]; !ok {
			d.Removed = append(d.Removed, redactKey(k))
		}
	}
	if d.Added == nil && d.Changed == nil && d.Removed == nil {
		return nil
	}
	return d
}

// isLFSKey reports the two keys git-lfs writes into a clone's config by
// itself, the first time it talks to an LFS endpoint: lfs.<url>.access and
// lfs.<url>.locksverify. They are accepted when added, and nothing else
// is: not filter.lfs.*, which names the commands filters run.
func isLFSKey(key string) bool {
	rest, ok := strings.CutPrefix(key, "lfs.")
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return false // lfs.<name> with no URL
	}
	switch rest[i+1:] {
	case "access", "locksverify":
		return true
	}
	return false
}

// redactKey hides userinfo in a URL-shaped subsection, such as
// url.https://user:token@host/.insteadof, so a key name cannot carry a
// secret into a report.
func redactKey(key string) string {
	i := strings.Index(key, "://")
	if i < 0 {
		return key
	}
	rest := key[i+3:]
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return key
	}
	return key[:i+3] + "REDACTED" + rest[at:]
}

// redactURL is redactKey for a URL.
func redactURL(u string) string { return redactKey(u) }
