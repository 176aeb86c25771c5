package gitx

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Push sends one commit to one branch of the remote recorded at Baseline.
// refspec must be "<full sha>:refs/heads/<branch>": no "+", no wildcard, no
// other ref namespace, and Push never adds --force or -u, so a
// non-fast-forward is refused by git and no upstream is written into the
// shared config.
//
// It is the only call with credentials. It runs in the push class:
// credential.helper= first, which empties every helper any config file
// named, then only the operator's helpers, ssh command and askpass from the
// snapshot; only the recorded URL's transport is allowed, every other one
// refused by name. It names git-receive-pack itself, so a remote.<url>.receivepack
// the clone's config holds (which a file:// push would run here) is not run. It always checks for drift first — url.<x>.insteadOf and
// remote.<url>.* keys cannot be overridden from the command line, so a
// planted one is caught only here — and again afterwards, under the same
// exclusive hold: a change made during the push (say, by a credential
// helper) poisons the Repo and is reported even though the push happened.
func (r *Repo) Push(ctx context.Context, refspec string) error {
	return r.push(ctx, refspec, false)
}

// PushDryRun is Push with --dry-run: the same refspec rules, recorded URL,
// transport, credential path and drift checks, and git asks the remote for
// its receive-pack advertisement — over smart HTTP and ssh a forge gives it
// only to a credential that may push — but sends no objects and updates no
// ref. It proves the credential reaches the push; it cannot prove what a
// ruleset would do with the ref.
func (r *Repo) PushDryRun(ctx context.Context, refspec string) error {
	return r.push(ctx, refspec, true)
}

func (r *Repo) push(ctx context.Context, refspec string, dryRun bool) error {
	src, dst, ok := strings.Cut(refspec, ":")
	if !ok {
		return fmt.Errorf("push %q: want <sha>:refs/heads/<branch>", refspec)
	}
	if err := checkSHA(src); err != nil {
		return fmt.Errorf("push %q: %w", refspec, err)
	}
	branch, ok := strings.CutPrefix(dst, "refs/heads/")
	if !ok {
		return fmt.Errorf("push %q: destination must be refs/heads/<branch>", refspec)
	}
	if err := r.checkBranch(ctx, branch); err != nil {
		return fmt.Errorf("push %q: %w", refspec, err)
	}
	return r.guarded(ctx, true, func() error {
		r.mu.Lock()
		baselined, url := r.baselined, r.pushURL
		r.mu.Unlock()
		if !baselined {
			return fmt.Errorf("push %s: %w", refspec, ErrNoBaseline)
		}
		if url == "" {
			return fmt.Errorf("push %s: no push URL for origin was recorded at baseline", refspec)
		}
		transport, err := transportOf(url)
		if err != nil {
			return fmt.Errorf("push %s to %s: %w", refspec, redactURL(url), err)
		}
		args := []string{"push", "--no-verify", "--no-recurse-submodules", "--no-follow-tags", "--quiet", "--receive-pack=git-receive-pack"}
		if dryRun {
			args = append(args, "--dry-run")
		}
		if _, err := r.run(ctx, invocation{dir: r.top, class: classPush, transport: transport,
			args: append(args, "--", url, refspec)}); err != nil {
			return fmt.Errorf("push %s to %s: %w", refspec, redactURL(url), err)
		}
		if err := r.checkDrift(ctx, false); err != nil {
			return fmt.Errorf("push %s to %s: pushed, but: %w", refspec, redactURL(url), err)
		}
		return nil
	})
}

// transportOf names the protocol git will use for url, the way git decides
// it, and refuses any that is not a plain transport: "<helper>::<address>"
// (ext::, fd:: and every other remote helper) and unknown "<scheme>://".
func transportOf(url string) (string, error) {
	i := 0
	for i < len(url) && isSchemeChar(url[i], i == 0) {
		i++
	}
	rest := url[i:]
	switch {
	case i > 0 && strings.HasPrefix(rest, "::"):
		return "", fmt.Errorf("remote helper %q: refused", url[:i])
	case i > 0 && strings.HasPrefix(rest, "://"):
		switch scheme := url[:i]; scheme {
		case "ssh", "git+ssh", "ssh+git":
			return "ssh", nil
		case "https", "http", "git", "file":
			return scheme, nil
		default:
			return "", fmt.Errorf("URL scheme %q: refused", scheme)
		}
	}
	if url == "" {
		return "", errors.New("empty URL")
	}
	// No scheme: a local path, unless it is scp-like host:path (a colon
	// before any slash), which is ssh.
	colon, slash := strings.IndexByte(url, ':'), strings.IndexByte(url, '/')
	if colon < 0 || (slash >= 0 && slash < colon) {
		return "file", nil
	}
	return "ssh", nil
}

// isSchemeChar is git's is_urlschemechar.
func isSchemeChar(c byte, first bool) bool {
	alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	if first {
		return alpha
	}
	return alpha || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
