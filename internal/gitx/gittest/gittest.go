// Package gittest builds throwaway git repositories for tests.
//
// It runs the git binary directly, without gitx's safety prefix. That is the
// point: a test needs git that does what gitx refuses to (init a repository,
// plant hooks and helpers in its config) and an independent view to check
// gitx's results against. Only tests may use it; every function takes a
// testing.TB. Git here sees no global or system config, so the developer's
// ~/.gitconfig cannot change what a test observes.
package gittest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// NewRepo creates a repository in a fresh temporary directory, on branch
// main, with files (slash-separated path to content) committed as its only
// commit, and a local user identity so later commits in tests need no
// setup. It returns the symlink-free top-level directory.
func NewRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "repo")
	Git(t, "", "init", "--quiet", "--initial-branch=main", dir)
	Git(t, dir, "config", "user.name", "Gittest")
	Git(t, dir, "config", "user.email", "gittest@example.com")
	WriteFiles(t, dir, files)
	Git(t, dir, "add", "--all")
	Git(t, dir, "commit", "--quiet", "--allow-empty", "--message", "initial")
	return dir
}

// NewBare creates an empty bare repository in a fresh temporary directory,
// to push to, and returns its symlink-free path.
func NewBare(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "remote.git")
	Git(t, "", "init", "--quiet", "--bare", "--initial-branch=main", dir)
	return dir
}

// WriteFiles writes files (slash-separated path to content) under dir,
// creating parent directories as needed.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic failures
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Git runs git with args in dir ("" for the current directory) and returns
// its stdout with trailing newlines removed. A failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Run(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// Run is Git for commands that are expected to fail, such as a control
// showing that a planted hook really does block plain git.
func Run(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	return RunInput(t, dir, "", args...)
}

// RunInput is Run with stdin, for plumbing such as `git credential fill`.
func RunInput(t testing.TB, dir, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &runError{err: err, stderr: stderr.String()}
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

type runError struct {
	err    error
	stderr string
}

func (e *runError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }
func (e *runError) Unwrap() error { return e.err }

// env is the parent environment without any GIT_* variable, so a test that
// sets GIT_DIR to check gitx ignores it does not redirect its own setup,
// with global and system config switched off, and no automatic gc: a
// detached background gc would rewrite the repository while a test reads it.
func env() []string {
	var e []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			e = append(e, kv)
		}
	}
	return append(e,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
		"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false",
	)
}
