// Package claudetest runs the real Claude Code CLI in tests, against a
// [fakemodel.Server] on loopback instead of the Anthropic API.
//
// The CLI is pinned: [Binary] accepts only version [Version], installed into
// <repo>/.tools by scripts/install-claude. A missing CLI fails the test
// rather than skipping it, because a skipped end-to-end test proves nothing.
package claudetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/runner/fakemodel"
)

// Version is the pinned Claude Code version the tests run.
const Version = "2.1.328"

// APIKey is the key the CLI presents to the fake. It must never look like a
// real key, so a leak of it in a log means nothing.
const APIKey = "fake-key-for-loopback-tests"

// InstallHint is the command that installs the pinned CLI where Binary looks.
const InstallHint = "scripts/install-claude (from the repository root; runs npm install --prefix .tools @anthropic-ai/claude-code@" + Version + ")"

const module = "github.com/fixrail/fixrail"

var versions sync.Map // binary path → version string, or error

// Binary returns the path of the pinned claude CLI: $FIXRAIL_CLAUDE_BIN if
// set (used whatever its version, which is logged when it is not Version),
// else <repo>/.tools/node_modules/.bin/claude or claude on PATH, the first of
// the two whose `--version` reports Version. When none is found the test
// fails, naming the install command; it never skips.
func Binary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("FIXRAIL_CLAUDE_BIN"); p != "" {
		v, err := version(p)
		if err != nil {
			tb.Fatalf("FIXRAIL_CLAUDE_BIN=%s: %v", p, err)
		}
		if v != Version {
			tb.Logf("FIXRAIL_CLAUDE_BIN=%s is claude %s, not the pinned %s", p, v, Version)
		}
		return p
	}
	var candidates, tried []string
	if root, err := repoRoot(); err == nil {
		candidates = append(candidates, filepath.Join(root, ".tools", "node_modules", ".bin", "claude"))
	} else {
		tried = append(tried, err.Error())
	}
	if p, err := exec.LookPath("claude"); err == nil {
		candidates = append(candidates, p)
	} else {
		tried = append(tried, "claude: not on PATH")
	}
	for _, p := range candidates {
		v, err := version(p)
		if err == nil && v == Version {
			return p
		}
		tried = append(tried, describe(p, v, err))
	}
	tb.Fatalf("claude CLI %s not found (%s); install it with %s, or set FIXRAIL_CLAUDE_BIN",
		Version, strings.Join(tried, "; "), InstallHint)
	return ""
}

func describe(path, v string, err error) string {
	if err != nil {
		return fmt.Sprintf("%s: %v", path, err)
	}
	return fmt.Sprintf("%s: version %s", path, v)
}

// version runs `path --version` once per path and returns its first word.
func version(path string) (string, error) {
	if v, ok := versions.Load(path); ok {
		if err, ok := v.(error); ok {
			return "", err
		}
		return v.(string), nil
	}
	v, err := runVersion(path)
	if err != nil {
		versions.Store(path, err)
		return "", err
	}
	versions.Store(path, v)
	return v, nil
}

func runVersion(path string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", errors.Unwrap(err) // "no such file or directory"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("--version: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", errors.New("--version printed nothing")
	}
	return f[0], nil
}

// repoRoot walks up from the working directory (a test's package directory)
// to the go.mod of this module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+module+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of " + module + ") not found above the working directory")
		}
		dir = parent
	}
}

// Env returns the complete environment for running the CLI against srv: the
// fake's URL and a dummy key, HOME, TMPDIR and the XDG directories in fresh
// temporary directories (the CLI writes ~/.claude.json, transcripts and its
// messaging socket there), nonessential traffic (telemetry, update checks, feature
// flags) off, and PATH from the parent. Nothing else of the parent's
// environment passes. Append to the result to add or override variables:
// os/exec uses the last value of a duplicated name.
func Env(tb testing.TB, srv *fakemodel.Server) []string {
	tb.Helper()
	home := tb.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TERM=dumb",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"ANTHROPIC_API_KEY=" + APIKey,
		// With this set the CLI made no DNS lookup and no connection other
		// than to the base URL (notes/claude-code-cli.md §3.2).
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		// The default is 10 retries with backoff: a scripted API error
		// would keep the CLI busy for minutes instead of failing at once.
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
	// The CLI binds a Unix socket for cross-session messaging under
	// $XDG_RUNTIME_DIR/cc-socks (else $TMPDIR), falling back to the shared
	// /tmp/cc-socks-<uid> when that path exceeds 103 bytes, as it does under
	// a long test name. A short private directory keeps it per run.
	run, err := os.MkdirTemp("", "cc")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(run) })
	env = append(env, "XDG_RUNTIME_DIR="+run)
	for _, d := range []struct{ name, dir string }{
		{"TMPDIR", "tmp"},
		{"XDG_CONFIG_HOME", ".config"},
		{"XDG_CACHE_HOME", ".cache"},
		{"XDG_DATA_HOME", ".local/share"},
		{"XDG_STATE_HOME", ".local/state"},
	} {
		p := filepath.Join(home, d.dir)
		if err := os.MkdirAll(p, 0o700); err != nil {
			tb.Fatal(err)
		}
		env = append(env, d.name+"="+p)
	}
	return env
}

// Events decodes the CLI's --output-format stream-json output, one JSON
// object per line.
func Events(tb testing.TB, stdout []byte) []map[string]any {
	tb.Helper()
	var events []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			tb.Fatalf("stream-json: bad line %q: %v", line, err)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("stream-json: %v", err)
	}
	return events
}

// Result returns the last "result" event of a stream.
func Result(tb testing.TB, events []map[string]any) map[string]any {
	tb.Helper()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i]["type"] == "result" {
			return events[i]
		}
	}
	tb.Fatalf("stream-json: no result event among %d events", len(events))
	return nil
}

// BuildFixrail builds the fixrail binary, and beside it the slim
// fixrail-hook (HookBinary), into dir and returns fixrail's path: the
// end-to-end tests register them as the agent's hook, so they must be the
// real commands, not the test binary.
func BuildFixrail(dir string) (string, error) {
	bin := filepath.Join(dir, "fixrail")
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"github.com/fixrail/fixrail/cmd/fixrail", "github.com/fixrail/fixrail/cmd/fixrail-hook")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build fixrail: %v\n%s", err, out)
	}
	return bin, nil
}

// HookBinary is the fixrail-hook that BuildFixrail built beside fixrail.
func HookBinary(fixrail string) string { return filepath.Join(filepath.Dir(fixrail), "fixrail-hook") }

// RunWithFixrail is a TestMain body for packages whose end-to-end tests need
// the fixrail binary: it builds it into a temporary directory, stores the
// path (or why there is none) through bin and buildErr, runs the tests and
// removes the directory. It returns the exit code for os.Exit.
func RunWithFixrail(m *testing.M, bin *string, buildErr *error) int {
	dir, err := os.MkdirTemp("", "fixrail-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin, *buildErr = BuildFixrail(dir)
	return m.Run()
}
