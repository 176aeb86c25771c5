package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Repo is a non-bare repository, addressed through its top-level directory.
// Every method runs git with cwd at that directory; the parent's GIT_DIR and
// friends never reach git, so a Repo cannot be redirected elsewhere.
//
// Its methods may be called from several goroutines; git's own lock files
// serialize writes, and a call that loses a lock race fails rather than
// waits. What a Repo remembers is the snapshot it uses (UseSnapshot), the
// baseline of the clone's config (Baseline), whether repository code has
// run since the last check (Shared, RepositoryCodeRan), and whether a check
// has failed, which poisons it: from then on every method fails with
// ErrPoisoned before running git.
type Repo struct {
	top string
	// gitDir and commonDir are recorded when the Repo is opened; every
	// later call names gitDir explicitly, so a rewritten .git file at Top
	// cannot redirect fixrail's git afterwards.
	gitDir, commonDir string

	// gate is the clone's reader/writer gate: repository code holds it
	// shared (Shared), a drift check and the git call it guards hold it
	// exclusively. A waiting writer blocks new readers.
	gate sync.RWMutex

	mu        sync.Mutex
	snap      *Snap
	baselined bool
	base      map[string][]configEntry // by directory: Top and each linked worktree added since Baseline
	pushURL   string                   // remote get-url --push origin at Baseline; "" if there was none
	needCheck bool                     // repository code may have run since the last check
	poisoned  error                    // why the Repo is unusable; nil while it is usable
	added     map[string]bool          // linked worktrees this Repo added, for DiscardWorktree
	state     map[string]string        // refs, HEAD, hooks/, info/ and the .git link at Baseline (state.go)
	pins      []Pin                    // the values program and include keys may hold (pin.go)
	pinned    bool                     // Pin was called: worktrees added later are checked against pins
}

// Open returns the repository whose work tree contains dir. It fails for a
// bare repository or a directory inside .git, since fixrail only ever works
// on checked-out trees. Symlinks in the top-level path are evaluated so that
// paths git reports can be compared with it.
//
// Until UseSnapshot is called the Repo reads no operator config at all
// (GIT_CONFIG_GLOBAL=/dev/null); Snap.Open uses a snapshot from the start.
func Open(ctx context.Context, dir string) (*Repo, error) {
	return open(ctx, dir, nil)
}

func open(ctx context.Context, dir string, snap *Snap) (*Repo, error) {
	r := &Repo{snap: snap}
	out, err := r.run(ctx, invocation{dir: dir, args: []string{"rev-parse", "--path-format=absolute", "--is-inside-work-tree", "--show-toplevel", "--git-dir", "--git-common-dir"}})
	if err != nil {
		return nil, fmt.Errorf("open repository at %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "true" || lines[1] == "" {
		return nil, fmt.Errorf("open repository at %s: not inside a work tree", dir)
	}
	for i, p := range lines[1:] {
		if lines[i+1], err = filepath.EvalSymlinks(p); err != nil {
			return nil, fmt.Errorf("open repository at %s: %w", dir, err)
		}
	}
	r.top, r.gitDir, r.commonDir = lines[1], lines[2], lines[3]
	// An earlier process found this clone changed under it: it stays
	// refused until the operator clears the record.
	if p, _ := PersistedPoison(r.commonDir); p != nil {
		r.poisoned = fmt.Errorf("%w: recorded %s: %s (inspect the clone, then clear it with fixrail unpoison)", ErrPoisoned, p.Time.Format(time.RFC3339), p.Cause)
	}
	return r, nil
}

// UseSnapshot makes every later git call of r read s as its global config
// and verify s's hash first. Call it before Baseline.
func (r *Repo) UseSnapshot(s *Snap) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap = s
}

func (r *Repo) snapshot() *Snap {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap
}

// Top returns the absolute, symlink-free top-level directory of the work tree.
func (r *Repo) Top() string { return r.top }

// CurrentBranch returns the short name of the branch checked out at Top. A
// detached HEAD is an error: callers use the answer as the base to branch
// from, and a bare commit is not one.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"symbolic-ref", "--quiet", "--short", "HEAD"}})
	if exitCode(err) == 1 {
		return "", fmt.Errorf("current branch of %s: HEAD is detached", r.top)
	}
	if err != nil {
		return "", fmt.Errorf("current branch of %s: %w", r.top, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// RevParse resolves rev to the full SHA of a commit. A rev that names no
// commit (a tree, a blob, nothing) is an error.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	return r.revParse(ctx, r.top, rev)
}

// revParse is RevParse run from dir, so a worktree's HEAD is its own.
func (r *Repo) revParse(ctx context.Context, dir, rev string) (string, error) {
	if rev == "" {
		return "", errors.New("rev-parse: empty revision")
	}
	out, err := r.run(ctx, invocation{dir: dir, args: []string{"rev-parse", "--verify", "--end-of-options", rev + "^{commit}"}})
	if err != nil {
		return "", fmt.Errorf("rev-parse %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// BranchExists reports whether refs/heads/<name> exists. An invalid branch
// name is an error rather than false, so a typo cannot pass for "absent".
func (r *Repo) BranchExists(ctx context.Context, name string) (bool, error) {
	if err := r.checkBranch(ctx, name); err != nil {
		return false, err
	}
	_, err := r.run(ctx, invocation{dir: r.top, args: []string{"show-ref", "--verify", "--quiet", "--", "refs/heads/" + name}})
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	default:
		return false, fmt.Errorf("branch %q exists: %w", name, err)
	}
}

// CommitsAhead counts the commits reachable from branch but not from base
// (rev-list --count base..branch). Both are resolved to commits first, so a
// revision can never be read as an option.
func (r *Repo) CommitsAhead(ctx context.Context, branch, base string) (int, error) {
	b, err := r.RevParse(ctx, branch)
	if err != nil {
		return 0, err
	}
	o, err := r.RevParse(ctx, base)
	if err != nil {
		return 0, err
	}
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"rev-list", "--count", o + ".." + b, "--"}})
	if err != nil {
		return 0, fmt.Errorf("count commits %s..%s: %w", base, branch, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("count commits %s..%s: %w", base, branch, err)
	}
	return n, nil
}

// ShowFile returns the blob at path in rev, byte for byte: no textconv, no
// filters, no replace objects. A path that is missing, or is a directory or
// submodule, yields an error wrapping ErrNotExist; a bad rev is a different
// error, so a typo in a base branch is never mistaken for "file absent".
func (r *Repo) ShowFile(ctx context.Context, rev, path string) ([]byte, error) {
	if err := checkPath(path); err != nil {
		return nil, fmt.Errorf("show %s:%s: %w", rev, path, err)
	}
	commit, err := r.RevParse(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("show %s:%s: %w", rev, path, err)
	}
	// With a commit that exists, exit 1 from a quiet --verify can only mean
	// the path is not in its tree.
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", commit + ":" + path}})
	if exitCode(err) == 1 {
		return nil, fmt.Errorf("show %s:%s: %w", rev, path, ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("show %s:%s: %w", rev, path, err)
	}
	oid := strings.TrimSpace(string(out))
	typ, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "-t", oid}})
	if err != nil {
		return nil, fmt.Errorf("show %s:%s: %w", rev, path, err)
	}
	if t := strings.TrimSpace(string(typ)); t != "blob" {
		return nil, fmt.Errorf("show %s:%s: is a %s: %w", rev, path, t, ErrNotExist)
	}
	data, err := r.run(ctx, invocation{dir: r.top, args: []string{"cat-file", "blob", oid}})
	if err != nil {
		return nil, fmt.Errorf("show %s:%s: %w", rev, path, err)
	}
	return data, nil
}

// UpdateBranch points refs/heads/<name> at newSHA, but only if it currently
// points at oldSHA; oldSHA "" means the branch must not exist yet. The
// compare-and-swap is git's, done under the ref lock, so two runs racing for
// one branch cannot both win. The ref itself is updated even if it is a
// symbolic ref, so a planted symref cannot make us move another branch.
func (r *Repo) UpdateBranch(ctx context.Context, name, newSHA, oldSHA string) error {
	if err := r.checkBranch(ctx, name); err != nil {
		return err
	}
	if err := checkSHA(newSHA); err != nil {
		return fmt.Errorf("update branch %s: %w", name, err)
	}
	if oldSHA == "" {
		oldSHA = strings.Repeat("0", len(newSHA)) // git's "must not exist"
	} else if err := checkSHA(oldSHA); err != nil {
		return fmt.Errorf("update branch %s: %w", name, err)
	}
	ref := "refs/heads/" + name
	return r.guarded(ctx, false, func() error {
		_, err := r.run(ctx, invocation{dir: r.top, args: []string{"update-ref", "--no-deref", "-m", "fixrail: update " + name, ref, newSHA, oldSHA}})
		if err != nil {
			return fmt.Errorf("update branch %s: %w", name, err)
		}
		r.expectRef(ref, newSHA)
		return nil
	})
}

// DeleteBranch removes refs/heads/<name>, but only if it currently points
// at oldSHA: git's compare-and-swap under the ref lock, so a commit someone
// added to the branch meanwhile is never deleted with it. The ref itself
// is deleted even if it is a symbolic ref, never the branch it names.
func (r *Repo) DeleteBranch(ctx context.Context, name, oldSHA string) error {
	if err := r.checkBranch(ctx, name); err != nil {
		return err
	}
	if err := checkSHA(oldSHA); err != nil {
		return fmt.Errorf("delete branch %s: %w", name, err)
	}
	ref := "refs/heads/" + name
	return r.guarded(ctx, false, func() error {
		_, err := r.run(ctx, invocation{dir: r.top, args: []string{"update-ref", "--no-deref", "-m", "fixrail: close " + name, "-d", ref, oldSHA}})
		if err != nil {
			return fmt.Errorf("delete branch %s: %w", name, err)
		}
		r.expectRef(ref, "")
		return nil
	})
}

// AddWorktree checks commit out, detached, into a new linked worktree at
// path. Detached, so no branch is locked by the worktree and no upstream is
// written to the shared config. path must not exist or must be an empty
// directory, so we never check out over files we did not put there.
func (r *Repo) AddWorktree(ctx context.Context, path, commit string) (*Worktree, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("add worktree %s: %w", path, err)
	}
	switch fi, err := os.Lstat(abs); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("add worktree %s: %w", path, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("add worktree %s: exists and is not a directory", path)
	default:
		ents, err := os.ReadDir(abs)
		if err != nil {
			return nil, fmt.Errorf("add worktree %s: %w", path, err)
		}
		if len(ents) > 0 {
			return nil, fmt.Errorf("add worktree %s: directory is not empty", path)
		}
	}
	sha, err := r.RevParse(ctx, commit)
	if err != nil {
		return nil, fmt.Errorf("add worktree %s: %w", path, err)
	}
	var wt *Worktree
	err = r.guarded(ctx, false, func() error {
		if _, err := r.run(ctx, invocation{dir: r.top, args: []string{"worktree", "add", "--quiet", "--detach", "--", abs, sha}}); err != nil {
			return fmt.Errorf("add worktree %s: %w", path, err)
		}
		dir, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return fmt.Errorf("add worktree %s: %w", path, err)
		}
		if err := r.recordWorktree(ctx, dir); err != nil {
			return fmt.Errorf("add worktree %s: %w", path, err)
		}
		wt = &Worktree{Dir: dir, repo: r}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return wt, nil
}

// RemoveWorktree deletes the linked worktree at path, with its uncommitted
// and ignored files, even if it is locked, then prunes stale registrations.
// Teardown must happen in all cases, so a worktree that is already gone is
// not an error. A directory that is not one of this repository's linked
// worktrees is refused rather than deleted. Like AddWorktree, Prune and
// UpdateBranch, it runs under the clone's exclusive gate, after a drift
// check if one is due; on a poisoned Repo use DiscardWorktree.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return r.guarded(ctx, false, func() error {
		if err := r.removeWorktree(ctx, path, abs); err != nil {
			return err
		}
		r.forgetWorktree(abs)
		return nil
	})
}

func (r *Repo) removeWorktree(ctx context.Context, path, abs string) error {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	registered := false
	for _, wt := range list {
		if filepath.Clean(wt) == abs {
			registered = true
			break
		}
	}
	_, statErr := os.Lstat(abs)
	gone := errors.Is(statErr, fs.ErrNotExist)
	switch {
	case registered && !gone:
		if _, err := r.run(ctx, invocation{dir: r.top, args: []string{"worktree", "remove", "--force", "--force", "--", abs}}); err != nil {
			return fmt.Errorf("remove worktree %s: %w", path, err)
		}
	case !registered && !gone:
		return fmt.Errorf("remove worktree %s: not a linked worktree of %s", path, r.top)
	}
	if err := r.prune(ctx); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	return nil
}

// Worktrees lists the paths of the linked worktrees, as git recorded them,
// leaving out the main one. Worktrees whose directory has vanished are
// still listed until Prune runs.
func (r *Repo) Worktrees(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	var paths []string
	first := true
	for _, field := range strings.Split(string(out), "\x00") {
		p, ok := strings.CutPrefix(field, "worktree ")
		if !ok {
			continue
		}
		if first { // git always lists the main worktree first
			first = false
			continue
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Prune forgets linked worktrees whose directories no longer exist.
func (r *Repo) Prune(ctx context.Context) error {
	return r.guarded(ctx, false, func() error { return r.prune(ctx) })
}

func (r *Repo) prune(ctx context.Context) error {
	if _, err := r.run(ctx, invocation{dir: r.top, args: []string{"worktree", "prune"}}); err != nil {
		return fmt.Errorf("prune worktrees: %w", err)
	}
	return nil
}
