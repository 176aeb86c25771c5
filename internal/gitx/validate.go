package gitx

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// checkPath accepts only a clean, relative, slash-separated path inside the
// work tree. Paths come from agents and bug reports, so anything that could
// escape the tree, name git's own directory, or be read as an option is
// refused before git sees it.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.ContainsAny(p, "\x00\\"):
		return fmt.Errorf("path %q: contains NUL or backslash", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q: must be relative", p)
	case path.Clean(p) != p || p == ".":
		return fmt.Errorf("path %q: must be clean, with no ., .., // or trailing slash", p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return fmt.Errorf("path %q: must not contain a .. element", p)
		}
		// Case-insensitive: on macOS and Windows ".GIT" is the same directory.
		if strings.EqualFold(elem, ".git") {
			return fmt.Errorf("path %q: must not name .git", p)
		}
	}
	return nil
}

// checkPaths applies checkPath to each of paths.
func checkPaths(paths []string) error {
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return err
		}
	}
	return nil
}

// checkSHA accepts a full object name in either hash format. update-ref would
// take any revision expression; a branch update must name the exact commit.
func checkSHA(s string) error {
	if len(s) != 40 && len(s) != 64 {
		return fmt.Errorf("object name %q: want 40 or 64 hex digits", s)
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("object name %q: want lowercase hex", s)
		}
	}
	return nil
}

// checkBranch asks git itself whether name is a valid branch name, so our
// rules can never drift from git's. check-ref-format --branch also expands
// shorthands such as @{-1}; anything it rewrites is refused, because the
// caller meant that literal name.
func (r *Repo) checkBranch(ctx context.Context, name string) error {
	if name == "" || strings.HasPrefix(name, "-") {
		return fmt.Errorf("invalid branch name %q", name)
	}
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"check-ref-format", "--branch", name}})
	if err != nil {
		return fmt.Errorf("invalid branch name %q: %w", name, err)
	}
	if got := strings.TrimSuffix(string(out), "\n"); got != name {
		return fmt.Errorf("invalid branch name %q: git reads it as %q", name, got)
	}
	return nil
}
