package gitx

import (
	"context"
	"fmt"
	"strings"
)

// Init makes dir a new repository on branch holding everything in dir as one
// commit by author, and opens it. It exists for `fixrail demo`, which builds
// its example repository from bundled files.
func Init(ctx context.Context, dir, branch string, author Identity, msg string) (*Repo, error) {
	if err := checkIdentity(author); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	if strings.TrimSpace(msg) == "" {
		return nil, fmt.Errorf("init %s: empty message", dir)
	}
	boot := &Repo{top: dir}
	if _, err := boot.run(ctx, invocation{dir: dir, args: []string{"init", "--quiet", "--initial-branch=" + branch}}); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	r, err := Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := r.checkBranch(ctx, branch); err != nil {
		return nil, err
	}
	if _, err := r.run(ctx, invocation{dir: r.top, args: []string{"add", "--all"}}); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	env := author.env()
	if _, err := r.run(ctx, invocation{dir: r.top, env: env, stdin: []byte(msg), class: classCommit,
		args: []string{"commit", "--no-verify", "--quiet", "--cleanup=whitespace", "-F", "-"}}); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	return r, nil
}
