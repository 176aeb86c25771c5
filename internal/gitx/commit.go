package gitx

import (
	"context"
	"fmt"
	"strings"
)

// Commit is a commit object as git stores it: its tree, its parents and
// its message, byte for byte (no encoding conversion, no mailmap).
type Commit struct {
	SHA     string
	Tree    string
	Parents []string
	Message string
}

// maxCommitBytes bounds a commit object read: a message is text a person
// reads, and one a branch could make arbitrarily large is refused.
const maxCommitBytes = 1 << 20

// ReadCommit reads the commit rev names, by its raw object (replace refs
// ignored, as on every call): what `fixrail verify` judges is the object,
// never a log format git could render differently.
func (r *Repo) ReadCommit(ctx context.Context, rev string) (Commit, error) {
	sha, err := r.RevParse(ctx, rev)
	if err != nil {
		return Commit{}, err
	}
	out, err := r.run(ctx, invocation{dir: r.gitDir, gitDir: r.gitDir, args: []string{"cat-file", "commit", sha}, limit: maxCommitBytes})
	if err != nil {
		return Commit{}, fmt.Errorf("read commit %s: %w", short(sha), err)
	}
	c, err := parseCommit(string(out))
	if err != nil {
		return Commit{}, fmt.Errorf("read commit %s: %w", short(sha), err)
	}
	c.SHA = sha
	return c, nil
}

// parseCommit splits a raw commit object into its headers and message.
func parseCommit(raw string) (Commit, error) {
	head, msg, ok := strings.Cut(raw, "\n\n")
	if !ok {
		head, msg = strings.TrimSuffix(raw, "\n"), ""
	}
	var c Commit
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree":
			if c.Tree != "" {
				return Commit{}, fmt.Errorf("two tree headers")
			}
			c.Tree = v
		case "parent":
			c.Parents = append(c.Parents, v)
		}
	}
	if checkSHA(c.Tree) != nil {
		return Commit{}, fmt.Errorf("no tree header")
	}
	for _, p := range c.Parents {
		if err := checkSHA(p); err != nil {
			return Commit{}, fmt.Errorf("parent: %w", err)
		}
	}
	c.Message = msg
	return c, nil
}

// IsAncestor reports whether commit a is b or one of b's ancestors.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	if err := checkSHA(a); err != nil {
		return false, err
	}
	if err := checkSHA(b); err != nil {
		return false, err
	}
	_, err := r.run(ctx, invocation{dir: r.gitDir, gitDir: r.gitDir, args: []string{"merge-base", "--is-ancestor", a, b}})
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, fmt.Errorf("merge-base %s %s: %w", short(a), short(b), err)
}
