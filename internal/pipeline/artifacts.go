package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// The harness's own test run (P3) leaves build artefacts in the worktree —
// __pycache__, target/, .pytest_cache — that are nobody's change. They are
// recorded with their content right after that run, and the fix phase's
// changes are everything else: an artefact the agent created, altered or
// replaced counts as a change like any other file, ignored or not.

// snapshotArtifacts records every path that differs from the base after the
// harness's test run, except the reproducing test, with a hash of its content.
func (r *run) snapshotArtifacts(ctx context.Context) (map[string]string, error) {
	changes, err := r.wt.Changes(ctx, true)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range changes {
		if c.Path == r.plan.Test.Path {
			continue
		}
		h, err := hashPath(filepath.Join(r.wt.Dir, filepath.FromSlash(c.Path)))
		if err != nil {
			return nil, err
		}
		out[c.Path] = h
	}
	return out, nil
}

// fixChanges lists the paths the fix phase changed: every path that differs
// from the base, ignored files included, minus artefacts left exactly as
// the harness's test run wrote them.
func (r *run) fixChanges(ctx context.Context) ([]string, error) {
	changes, err := r.wt.Changes(ctx, true)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range changes {
		if seen[c.Path] {
			continue
		}
		seen[c.Path] = true
		if want, ok := r.artifacts[c.Path]; ok {
			h, err := hashPath(filepath.Join(r.wt.Dir, filepath.FromSlash(c.Path)))
			if err != nil {
				return nil, err
			}
			if h == want {
				continue
			}
		}
		out = append(out, c.Path)
	}
	return out, nil
}

// hashPath hashes a file's bytes, a symlink's target, or notes absence.
func hashPath(p string) (string, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	h := sha256.New()
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		io.WriteString(h, "link:"+t)
	case fi.Mode().IsRegular():
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		io.WriteString(h, "file:")
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
	default:
		io.WriteString(h, "other:"+fi.Mode().String())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
