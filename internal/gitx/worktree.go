package gitx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Worktree is a linked worktree made by [Repo.AddWorktree]. Dir is absolute
// and symlink-free. Every method runs git with cwd at Dir, so HEAD and the
// index are the worktree's own.
type Worktree struct {
	Dir  string
	repo *Repo
}

// Change is one path that differs from HEAD in a worktree.
type Change struct {
	Path string // slash-separated, relative to the worktree root
	// Status is the porcelain v1 XY code with spaces trimmed: "M", "A", "D",
	// "MM", "??" for untracked, "!!" for ignored.
	Status string
}

// Identity is the author and committer of a gate-owned commit.
type Identity struct {
	Name, Email string
}

// Changes lists every changed, untracked and (if includeIgnored) ignored
// path, sorted by path. Untracked directories are expanded to their files,
// because a gate that saw only "dir/" could not judge what is inside.
// Renames are not detected, so a rename shows as its old and its new path.
func (w *Worktree) Changes(ctx context.Context, includeIgnored bool) ([]Change, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"}
	if includeIgnored {
		args = append(args, "--ignored=matching")
	}
	out, err := w.repo.run(ctx, invocation{dir: w.Dir, args: args})
	if err != nil {
		return nil, fmt.Errorf("changes in %s: %w", w.Dir, err)
	}
	changes, err := parseStatus(out)
	if err != nil {
		return nil, fmt.Errorf("changes in %s: %w", w.Dir, err)
	}
	return changes, nil
}

// parseStatus reads `status --porcelain=v1 -z`: "XY path\0", with a second
// "orig\0" field after a rename or copy. Both paths of a rename or copy are
// reported with its code, in case rename detection is ever switched on.
func parseStatus(out []byte) ([]Change, error) {
	fields := strings.Split(string(out), "\x00")
	var changes []Change
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("unexpected status entry %q", f)
		}
		xy := f[:2]
		c := Change{Path: f[3:], Status: strings.TrimSpace(xy)}
		changes = append(changes, c)
		if strings.ContainsAny(xy, "RC") {
			i++
			if i >= len(fields) || fields[i] == "" {
				return nil, fmt.Errorf("status entry %q: missing original path", f)
			}
			changes = append(changes, Change{Path: fields[i], Status: c.Status})
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, nil
}

// Diff is the change a worktree makes to its HEAD.
type Diff struct {
	Patch   string   // git apply --binary input, a/ and b/ prefixes whatever the config says
	Added   int      // lines, from --numstat; binary files count 0
	Deleted int      // lines, from --numstat; binary files count 0
	Files   []string // changed paths, sorted
}

// Diff returns the working tree against HEAD, restricted to paths (all
// paths if none are given), with untracked files shown as new files and
// ignored files left out. It uses plumbing (diff-index), which reads none
// of the diff.* and color.* settings a repository could use to reshape the
// patch, and --no-ext-diff --no-textconv, so no configured driver runs.
//
// Untracked files are made visible with add --intent-to-add and taken out
// of the index again afterwards, so Diff leaves the index as it found it.
//
// Diff follows repository code, so it runs under the clone's exclusive
// gate, after a drift check if one is due.
func (w *Worktree) Diff(ctx context.Context, paths []string) (Diff, error) {
	if err := checkPaths(paths); err != nil {
		return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
	}
	var d Diff
	err := w.repo.guarded(ctx, false, func() (err error) {
		d, err = w.diff(ctx, paths)
		return err
	})
	return d, err
}

func (w *Worktree) diff(ctx context.Context, paths []string) (d Diff, err error) {
	r := w.repo
	lsArgs := append([]string{"ls-files", "-z", "--others", "--exclude-standard", "--"}, paths...)
	out, err := r.run(ctx, invocation{dir: w.Dir, args: lsArgs})
	if err != nil {
		return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
	}
	if len(out) > 0 {
		// Pathspecs go on stdin, NUL-terminated as ls-files wrote them: an
		// agent can leave more untracked files than fit on a command line.
		spec := out
		if _, err := r.run(ctx, invocation{dir: w.Dir, stdin: spec,
			args: []string{"add", "--intent-to-add", "--pathspec-from-file=-", "--pathspec-file-nul"}}); err != nil {
			return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
		}
		defer func() {
			_, rerr := r.run(ctx, invocation{dir: w.Dir, stdin: spec,
				args: []string{"reset", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul"}})
			if rerr != nil {
				d, err = Diff{}, errors.Join(err, fmt.Errorf("diff in %s: restore index: %w", w.Dir, rerr))
			}
		}()
	}
	// diff-index trusts the index's stat data; refresh it so a file that was
	// touched but not changed is not reported.
	if _, err := r.run(ctx, invocation{dir: w.Dir, args: []string{"update-index", "-q", "--refresh"}}); err != nil {
		return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
	}
	base := []string{"diff-index", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color"}
	patchArgs := append(append(slices.Clone(base), "--patch", "--binary", "HEAD", "--"), paths...)
	patch, err := r.run(ctx, invocation{dir: w.Dir, args: patchArgs})
	if err != nil {
		return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
	}
	statArgs := append(append(slices.Clone(base), "--numstat", "-z", "HEAD", "--"), paths...)
	stat, err := r.run(ctx, invocation{dir: w.Dir, args: statArgs})
	if err != nil {
		return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
	}
	d = Diff{Patch: string(patch)}
	if err := parseNumstat(stat, &d); err != nil {
		return Diff{}, fmt.Errorf("diff in %s: %w", w.Dir, err)
	}
	return d, nil
}

// parseNumstat reads `--numstat -z` without renames: "added\tdeleted\tpath\0",
// with "-\t-" for a binary file.
func parseNumstat(out []byte, d *Diff) error {
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		added, rest, ok1 := strings.Cut(rec, "\t")
		deleted, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || path == "" {
			return fmt.Errorf("unexpected numstat record %q", rec)
		}
		if added != "-" || deleted != "-" {
			a, err := strconv.Atoi(added)
			if err != nil {
				return fmt.Errorf("numstat record %q: %w", rec, err)
			}
			del, err := strconv.Atoi(deleted)
			if err != nil {
				return fmt.Errorf("numstat record %q: %w", rec, err)
			}
			d.Added += a
			d.Deleted += del
		}
		d.Files = append(d.Files, path)
	}
	slices.Sort(d.Files)
	return nil
}

// Commit makes the gate-owned commit: exactly paths, as they are in the
// working tree (deletions included), on top of the worktree's HEAD, and
// returns the new HEAD. Whatever else the agent staged or changed is left
// out, and if the staged set comes out as anything but paths (a path that
// did not change, a directory, a submodule) nothing is committed. Hooks do
// not run, and the message is taken verbatim apart from whitespace cleanup,
// so a repository's commit.cleanup cannot eat lines such as "#123".
//
// The commit itself runs in the commit class (the signing agent's socket,
// no other credential); the rest is safe. All of it runs under the clone's
// exclusive gate, after a drift check if one is due.
func (w *Worktree) Commit(ctx context.Context, paths []string, msg string, author Identity) (string, error) {
	if len(paths) == 0 {
		return "", fmt.Errorf("commit in %s: no paths", w.Dir)
	}
	if err := checkPaths(paths); err != nil {
		return "", fmt.Errorf("commit in %s: %w", w.Dir, err)
	}
	if strings.TrimSpace(msg) == "" {
		return "", fmt.Errorf("commit in %s: empty message", w.Dir)
	}
	if err := checkIdentity(author); err != nil {
		return "", fmt.Errorf("commit in %s: %w", w.Dir, err)
	}
	var sha string
	err := w.repo.guarded(ctx, false, func() (err error) {
		sha, err = w.commit(ctx, paths, msg, author)
		return err
	})
	return sha, err
}

func (w *Worktree) commit(ctx context.Context, paths []string, msg string, author Identity) (string, error) {
	r := w.repo
	if _, err := r.run(ctx, invocation{dir: w.Dir, args: []string{"reset", "--quiet"}}); err != nil {
		return "", fmt.Errorf("commit in %s: reset index: %w", w.Dir, err)
	}
	addArgs := append([]string{"add", "--all", "--"}, paths...)
	if _, err := r.run(ctx, invocation{dir: w.Dir, args: addArgs}); err != nil {
		return "", fmt.Errorf("commit in %s: %w", w.Dir, err)
	}
	out, err := r.run(ctx, invocation{dir: w.Dir, args: []string{"diff-index", "--cached", "--no-ext-diff", "--no-textconv", "--no-renames", "--name-only", "-z", "HEAD", "--"}})
	if err != nil {
		return "", fmt.Errorf("commit in %s: %w", w.Dir, err)
	}
	staged := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(out) == 0 {
		staged = nil
	}
	want := slices.Clone(paths)
	slices.Sort(want)
	want = slices.Compact(want)
	slices.Sort(staged)
	if !slices.Equal(staged, want) {
		return "", fmt.Errorf("commit in %s: staged %q, want exactly %q", w.Dir, staged, want)
	}
	env := author.env()
	if _, err := r.run(ctx, invocation{dir: w.Dir, env: env, stdin: []byte(msg), class: classCommit,
		args: []string{"commit", "--no-verify", "--quiet", "--cleanup=whitespace", "-F", "-"}}); err != nil {
		return "", fmt.Errorf("commit in %s: %w", w.Dir, err)
	}
	sha, err := r.revParse(ctx, w.Dir, "HEAD")
	if err != nil {
		return "", fmt.Errorf("commit in %s: %w", w.Dir, err)
	}
	return sha, nil
}

// env makes the identity the commit's author and committer.
func (id Identity) env() []string {
	return []string{
		"GIT_AUTHOR_NAME=" + id.Name, "GIT_AUTHOR_EMAIL=" + id.Email,
		"GIT_COMMITTER_NAME=" + id.Name, "GIT_COMMITTER_EMAIL=" + id.Email,
	}
}

// checkIdentity refuses names git would silently mangle: it strips angle
// brackets and newlines, so the commit would not carry what we were given.
func checkIdentity(id Identity) error {
	if id.Name == "" || id.Email == "" {
		return errors.New("identity needs a name and an email")
	}
	if strings.ContainsAny(id.Name+id.Email, "<>\n\x00") {
		return fmt.Errorf("identity %q <%s>: contains <, >, newline or NUL", id.Name, id.Email)
	}
	return nil
}
