package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixrail/fixrail/internal/batch"
	ghforge "github.com/fixrail/fixrail/internal/forge/github"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// defaultReposParallel is how many repositories a batch clones and works
// at once (seed 001's three).
const defaultReposParallel = 3

// cloneTimeout bounds one clone.
const cloneTimeout = 10 * time.Minute

// serverURL is where repositories are cloned from: $GITHUB_SERVER_URL (as
// Actions sets it), else https://github.com. Only http(s), no credentials.
func serverURL(lookup func(string) (string, bool)) (string, error) {
	v, _ := lookup("GITHUB_SERVER_URL")
	if v == "" {
		v = "https://github.com"
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "", usagef("GITHUB_SERVER_URL=%q: want an http(s) URL without credentials", v)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// cloneRepo clones owner/name from server into dir. The token, when there
// is one, travels in a one-off header from the environment (never argv,
// never .git/config), to that server only (no redirect is followed with
// it); no hook, no submodule, no transport but the
// server's own scheme; nothing asks on a terminal.
func cloneRepo(ctx context.Context, server, repo, base, dir string, lookup func(string) (string, bool)) error {
	ctx, cancel := context.WithTimeout(ctx, cloneTimeout)
	defer cancel()
	scheme := strings.SplitN(server, ":", 2)[0]
	args := []string{"-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never", "-c", "protocol." + scheme + ".allow=always",
		"-c", "credential.helper=", "-c", "core.askPass=", "-c", "http.followRedirects=false",
		"clone", "--quiet", "--no-recurse-submodules"}
	if base != "" {
		// The base as a local branch, where a run reads it.
		args = append(args, "--branch", base)
	}
	cmd := exec.CommandContext(ctx, "git", append(args, "--", server+"/"+repo+".git", dir)...)
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	for _, name := range ghforge.TokenEnv {
		if tok, ok := lookup(name); ok && tok != "" {
			auth := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
			env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http."+server+"/.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "+auth)
			break
		}
	}
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("clone %s: %v: %s", repo, err, lastLine(stderr.String()))
	}
	return nil
}

// runBatchClones runs a many-repository batch: each repository is cloned
// into a directory of its own under one fresh 0700 workspace, at most
// reposParallel at once, and its findings run there as any batch's do
// (its own fixrail.yaml, ledger and state). After its runs a clone is
// pruned to what a user reads (pruneClone) unless --keep.
func runBatchClones(ctx context.Context, stdio Stdio, o *runOpts, items []batch.Item, pass []string) error {
	server, err := serverURL(os.LookupEnv)
	if err != nil {
		return err
	}
	reposPar := o.x.reposParallel
	if reposPar == 0 {
		reposPar = defaultReposParallel
	}
	if reposPar < 0 || o.x.parallel < 0 {
		return usagef("--parallel and --repos-parallel must be positive")
	}
	var repos []string
	byRepo := map[string][]batch.Item{}
	for _, it := range items {
		if it.Repo == "" {
			return usagef("--batch: %s names no repository; a many-repository batch takes a scan's listing only", it.ID)
		}
		if _, ok := byRepo[it.Repo]; !ok {
			repos = append(repos, it.Repo)
		}
		byRepo[it.Repo] = append(byRepo[it.Repo], it)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate the fixrail binary: %w", err)
	}
	work, err := os.MkdirTemp("", "fixrail-batch-")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stderr, "batch: %d finding(s) in %d repositories, %d repositories at a time; clones in %s\n", len(items), len(repos), reposPar, work)
	t0 := time.Now()
	results := map[string][]batch.Result{}
	var mu sync.Mutex
	sem := make(chan struct{}, reposPar)
	var wg sync.WaitGroup
	for i, repo := range repos {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := filepath.Join(work, strconv.Itoa(i)+"-"+strings.ReplaceAll(repo, "/", "+"))
			res := runOneRepo(ctx, stdio, o, exe, server, dir, repo, byRepo[repo], pass)
			if !o.x.keep {
				if err := pruneClone(dir); err != nil {
					fmt.Fprintf(stdio.Stderr, "batch: %s: warning: the clone was not pruned: %v\n", repo, err)
				}
			}
			mu.Lock()
			results[repo] = res
			mu.Unlock()
		})
	}
	wg.Wait()
	var all []batch.Result
	for _, repo := range repos {
		all = append(all, results[repo]...)
	}
	return finishBatch(stdio, o, all, nil, o.x.parallel, time.Since(t0))
}

// runOneRepo clones one repository and runs its findings; a clone or a
// setup that fails is every one of its findings' error (no terminal), so
// the batch's exit code cannot read it as clean.
func runOneRepo(ctx context.Context, stdio Stdio, o *runOpts, exe, server, dir, repo string, items []batch.Item, pass []string) []batch.Result {
	fail := func(err error) []batch.Result {
		fmt.Fprintf(stdio.Stderr, "batch: %s: %v\n", repo, err)
		var out []batch.Result
		for _, it := range items {
			out = append(out, batch.Result{Item: it, Exit: exitInternal, Error: err.Error()})
		}
		return out
	}
	base := o.base
	if base == "" {
		base = items[0].Base // the base the listing was scanned against
	}
	fmt.Fprintf(stdio.Stderr, "batch: clone %s\n", repo)
	if err := cloneRepo(ctx, server, repo, base, dir, os.LookupEnv); err != nil {
		return fail(err)
	}
	parallel, logs, limits, err := batchSetup(ctx, dir, base, o.x.parallel, o.x.runTimeout)
	if err != nil {
		return fail(err)
	}
	run := func(ctx context.Context, it batch.Item) batch.Result {
		return runChild(ctx, exe, logs, childArgs(it, dir, "", false, pass), limits)
	}
	return batch.Run(ctx, items, run, batch.Options{Parallel: parallel, Progress: stdio.Stderr})
}

// keptState are the parts of a clone's state directory a user reads after
// a batch: the run reports and event logs, the batch's per-run logs, and
// the local forge's outbox.
var keptState = []string{"runs", "batches", "outbox"}

// pruneClone removes a clone after its runs but for keptState, which stays
// where the summary's paths point (DIR/.fixrail/...). Renames only: a
// link the repository planted is moved as a link, never followed, and
// RemoveAll does not follow links either.
func pruneClone(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil // never cloned
	}
	keep := dir + ".kept"
	if err := os.Mkdir(keep, 0o700); err != nil {
		return err
	}
	state := filepath.Join(dir, pipeline.StateDirName)
	if fi, err := os.Lstat(state); err == nil && fi.IsDir() {
		for _, sub := range keptState {
			if err := os.Rename(filepath.Join(state, sub), filepath.Join(keep, sub)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return os.Rename(keep, state)
}
