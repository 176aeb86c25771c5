package gitx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// The state check. Besides its config (drift.go), what repository code
// could change in a clone to act on fixrail's later git calls, or on the
// operator's, is its refs (the base branch, HEAD), its hooks/ and info/
// directories (hooks that the operator's git would run, attributes and
// excludes every git call reads) and the .git link of its work tree. All of
// it is recorded at Baseline and compared at every drift check; any
// difference poisons the Repo, and the poison is written into the git
// directory so that later processes refuse the clone too, until the
// operator clears it (ClearPoison).

// StateError is a clone whose refs, HEAD, hooks, info files or work-tree
// link differ from the baseline. It names what changed, never contents. It
// is also ErrPoisoned (errors.Is).
type StateError struct {
	Changed []string
}

func (e *StateError) Error() string {
	return "repository state changed after repository code ran: " + strings.Join(e.Changed, ", ")
}

// Is makes a StateError match ErrPoisoned.
func (e *StateError) Is(target error) bool { return target == ErrPoisoned }

// PoisonFile is where the poison is persisted, inside the common git
// directory: repository code confined to a work tree cannot reach it, and
// it goes wherever the clone goes.
const PoisonFile = "fixrail-poisoned.json"

// Poison is what a persisted poison records.
type Poison struct {
	Time  time.Time `json:"time"`
	Cause string    `json:"cause"`
}

// maxStateEntries bounds the hooks/ and info/ walk: a directory planted
// with a million names is itself a change.
const maxStateEntries = 4096

// stateIgnoredRefs are refs fixrail's own concurrent runs move: each run's
// branch is guarded by its compare-and-swap in UpdateBranch, not here.
const stateIgnoredRefs = "refs/heads/fixrail/"

// readState lists what the state check compares, as name → fingerprint.
func (r *Repo) readState(ctx context.Context) (map[string]string, error) {
	st := map[string]string{}
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)"}})
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		name, rest, _ := strings.Cut(line, "\x00")
		if strings.HasPrefix(name, stateIgnoredRefs) {
			continue
		}
		st["ref "+name] = rest
	}
	dirs := []string{r.gitDir}
	if r.commonDir != r.gitDir {
		dirs = append(dirs, r.commonDir)
	}
	for _, d := range dirs {
		for _, name := range []string{"HEAD", "commondir", "gitdir"} {
			if fp, err := fingerprint(filepath.Join(d, name)); err != nil {
				return nil, err
			} else if fp != "" {
				st["file "+filepath.Join(d, name)] = fp
			}
		}
	}
	for _, sub := range []string{"hooks", "info"} {
		if err := walkState(filepath.Join(r.commonDir, sub), st); err != nil {
			return nil, err
		}
	}
	// The main work tree's .git: a file there could point git elsewhere.
	fp, err := fingerprint(filepath.Join(r.top, ".git"))
	if err != nil {
		return nil, err
	}
	st["file "+filepath.Join(r.top, ".git")] = fp
	return st, nil
}

// fingerprint describes one path without following a symlink and without
// blocking: type, and for a regular file its size and hash. "" is absent.
func fingerprint(p string) (string, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		return "link:" + t, nil
	case fi.IsDir():
		return "dir:" + fi.Mode().Perm().String(), nil
	case !fi.Mode().IsRegular():
		return "other:" + fi.Mode().String(), nil
	}
	data, err := pathguard.ReadRegular(p, 16<<20)
	if err != nil {
		return "file:unreadable:" + fi.Mode().String(), nil
	}
	h := sha256.Sum256(data)
	return "file:" + fi.Mode().String() + ":" + hex.EncodeToString(h[:]), nil
}

// regenerated are the files in info/ that git's own maintenance rewrites
// (repack and gc, run by the operator's git or in the background, update
// the dumb-transport indexes): caches of what the refs and packs already
// say, read by no local command.
var regenerated = []string{"info/refs", "info/packs"}

func walkState(root string, st map[string]string) error {
	n := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return nil
		}
		if err != nil {
			return err
		}
		for _, r := range regenerated {
			if strings.HasSuffix(p, string(filepath.Separator)+filepath.FromSlash(r)) && filepath.Dir(filepath.Dir(p)) == filepath.Dir(root) {
				return nil
			}
		}
		if n++; n > maxStateEntries {
			st["file "+root] = "too many entries"
			return filepath.SkipAll
		}
		fp, err := fingerprint(p)
		if err != nil {
			return err
		}
		st["file "+p] = fp
		return nil
	})
}

// diffState names every key whose fingerprint differs.
func diffState(want, got map[string]string) *StateError {
	var changed []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			changed = append(changed, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return &StateError{Changed: changed}
}

// expectRef records a ref fixrail itself moved to oid (a plain ref, as
// update-ref --no-deref leaves it; "" for one it deleted), so the next
// state check expects it.
func (r *Repo) expectRef(ref, oid string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil || strings.HasPrefix(ref, stateIgnoredRefs) {
		return
	}
	if oid == "" {
		delete(r.state, "ref "+ref)
		return
	}
	r.state["ref "+ref] = oid + "\x00"
}

// persistPoison writes cause into the common git directory, once.
func (r *Repo) persistPoison(cause error) {
	if r.commonDir == "" {
		return
	}
	p := filepath.Join(r.commonDir, PoisonFile)
	data, _ := json.MarshalIndent(Poison{Time: time.Now().UTC(), Cause: cause.Error()}, "", "  ")
	_ = pathguard.WriteNew(p, append(data, '\n'), 0o644) // an existing record stands
}

// PersistedPoison reads the poison an earlier process recorded in the
// repository whose work tree contains dir, if any. It never runs git: the
// clone may be hostile by now.
func PersistedPoison(commonDir string) (*Poison, error) {
	data, err := pathguard.ReadRegular(filepath.Join(commonDir, PoisonFile), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return &Poison{Cause: "unreadable poison record: " + err.Error()}, nil
	}
	var p Poison
	if err := json.Unmarshal(data, &p); err != nil {
		return &Poison{Cause: "unparseable poison record"}, nil
	}
	return &p, nil
}

// CommonDir is the clone's common git directory, recorded at Open.
func (r *Repo) CommonDir() string { return r.commonDir }

// ClearPoison removes the persisted poison of the clone at commonDir and
// returns what it said; nil if there was none.
func ClearPoison(commonDir string) (*Poison, error) {
	p, err := PersistedPoison(commonDir)
	if err != nil || p == nil {
		return p, err
	}
	if err := os.Remove(filepath.Join(commonDir, PoisonFile)); err != nil {
		return p, err
	}
	return p, nil
}

// programKeyPatterns are config keys whose value names a program that some
// git call would run. fixrail's own calls run none of them (pin.go), but a
// clone whose local config names programs is one a hostile build may have
// prepared, and the operator's own git would run them: such a key needs a
// pin. * is one subsection.
var programKeyPatterns = []string{
	"filter.*.clean", "filter.*.smudge", "filter.*.process",
	"diff.*.command", "diff.*.textconv", "merge.*.driver",
	"core.sshcommand", "core.gitproxy", "core.fsmonitor", "core.hookspath",
	"core.askpass", "core.editor", "core.pager", "sequence.editor",
	"gpg.program", "gpg.*.program", "credential.helper", "credential.*.helper",
	"uploadpack.packobjectshook", "remote.*.receivepack", "remote.*.uploadpack",
	"core.alternaterefscommand", "pager.*",
}

// IsProgramKey reports whether key (lower-case section and name, as git
// config --list prints them) matches programKeyPatterns.
func IsProgramKey(key string) bool {
	for _, p := range programKeyPatterns {
		if matchKey(p, key) {
			return true
		}
	}
	return false
}

// matchKey matches section.*.name against a key whose subsection may hold
// dots; a pattern with no * must be equal.
func matchKey(pattern, key string) bool {
	pre, post, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == key
	}
	if !strings.HasPrefix(key, pre) || !strings.HasSuffix(key, post) {
		return false
	}
	return len(key) > len(pre)+len(post)
}
