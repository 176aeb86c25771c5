package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/sandbox"
)

// modelCredentials are the only credentials the agent class may carry.
var modelCredentials = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY",
}

// forgeCredentials are the only credentials the credentialed class may carry.
var forgeCredentials = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "FIXRAIL_FORGE_TOKEN", "FIXRAIL_GITHUB_TOKEN",
}

var allClasses = []sandbox.Class{sandbox.Build, sandbox.Git, sandbox.Signing, sandbox.Agent, sandbox.Credentialed}

// TestClassesHoldNoStrayCredentials: every name in every class passes the
// extra_env check, except the credentials that class exists to carry. So the
// build, git and signing classes carry none, the agent class only the model's
// and the credentialed class only the forge's.
func TestClassesHoldNoStrayCredentials(t *testing.T) {
	allowed := map[sandbox.Class][]string{
		// The signing agent's socket and directory are what commit signs with.
		sandbox.Signing:      {"SSH_AUTH_SOCK", "GNUPGHOME"},
		sandbox.Agent:        modelCredentials,
		sandbox.Credentialed: append([]string{"SSH_AUTH_SOCK"}, forgeCredentials...),
	}
	for _, class := range allClasses {
		t.Run(string(class), func(t *testing.T) {
			names := sandbox.Names(class)
			if len(names) == 0 {
				t.Fatalf("Names(%s) is empty", class)
			}
			var refused []string
			for _, n := range names {
				if sandbox.CheckExtra(n) != nil {
					refused = append(refused, n)
				}
			}
			if diff := cmp.Diff(allowed[class], refused); diff != "" {
				t.Errorf("credential-shaped names in %s (-allowed +present):\n%s", class, diff)
			}
		})
	}
}

// TestEnvByClass: with every credential fixrail knows set in the parent, each
// class hands on exactly its allowlist's names.
func TestEnvByClass(t *testing.T) {
	parent := map[string]string{"PATH": "/bin", "HOME": "/home/op", "LANG": "C.UTF-8", "UNLISTED": "x", "MY_FLAG": "1"}
	for _, n := range redact.CredentialEnv {
		parent[n] = "canary-" + n
	}
	for _, n := range []string{"AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "SSH_AUTH_SOCK", "GNUPGHOME", "BASH_ENV", "LD_PRELOAD"} {
		parent[n] = "canary-" + n
	}
	lookup := func(k string) (string, bool) { v, ok := parent[k]; return v, ok }
	want := map[sandbox.Class][]string{
		sandbox.Build:        {"PATH", "HOME", "LANG"},
		sandbox.Git:          {"PATH", "HOME", "LANG"},
		sandbox.Signing:      {"PATH", "HOME", "LANG", "SSH_AUTH_SOCK", "GNUPGHOME"},
		sandbox.Agent:        append([]string{"PATH", "HOME", "LANG"}, modelCredentials...),
		sandbox.Credentialed: append([]string{"PATH", "HOME", "LANG", "SSH_AUTH_SOCK"}, forgeCredentials...),
	}
	for _, class := range allClasses {
		t.Run(string(class), func(t *testing.T) {
			env, err := sandbox.Env(class, lookup, []string{"MY_FLAG"})
			if err != nil {
				t.Fatalf("Env: %v", err)
			}
			got := names(env)
			w := append(slices.Clone(want[class]), "MY_FLAG")
			slices.Sort(w)
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("Env(%s) names (-want +got):\n%s", class, diff)
			}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				if parent[k] != v {
					t.Errorf("Env(%s): %s=%q, want the parent's %q", class, k, v, parent[k])
				}
			}
		})
	}
	if _, err := sandbox.Env("root", lookup, nil); err == nil {
		t.Errorf("Env(unknown class) = nil error")
	}
}

func TestCheckExtra(t *testing.T) {
	accepted := []string{"MY_FLAG", "KEYBOARD_LAYOUT", "TOKENIZERS_PARALLELISM", "MONKEY", "GIT_AUTHOR_NAME",
		"PASSTHROUGH", "AUTHOR", "SESSIONS_DIR", "GOPROXY", "NODE_ENV", "JAVA_HOME", "_underscore", "lower_case",
		// the variable npm reads a scope's registry from
		"npm_config_@corp:registry", "NPM_CONFIG_@my-org.x:REGISTRY"}
	for _, n := range accepted {
		if err := sandbox.CheckExtra(n); err != nil {
			t.Errorf("CheckExtra(%q) = %v, want accepted", n, err)
		}
	}
	refused := map[string]string{
		// known credentials, including every one fixrail redacts
		"AWS_ACCESS_KEY_ID": "credential", "AWS_PROFILE": "credential", "DATABASE_URL": "credential",
		"KUBECONFIG": "credential", "SSH_AUTH_SOCK": "credential", "GOOGLE_APPLICATION_CREDENTIALS": "credential",
		// credential-shaped, by word or fragment, any case
		"NPM_TOKEN": "TOKEN", "MY_API_KEY": "KEY", "DB_PASSWORD": "PASSWORD", "SMTP_PASS": "PASS",
		"SECRET": "SECRET", "AUTHTOKEN": "AUTHTOKEN", "GITHUBTOKEN_X": "", "MYSECRETVALUE": "SECRET",
		"github_pat": "PAT", "session_cookie": "", "SENTRY_DSN": "DSN", "X_AUTH": "AUTH",
		"APIKEY": "APIKEY", "ROOT_PASSWD": "PASSWD", "OAUTH_CLIENT": "OAUTH", "MY_CREDENTIALS": "CREDENTIAL",
		// patterns and non-names
		"": "empty", "AWS_*": "pattern", "A=B": "pattern", "GH_?": "pattern", "1ABC": "variable name",
		"A-B": "variable name", "A B": "variable name",
		"npm_config_@corp:_authToken": "variable name", "npm_config_@:registry": "variable name",
		"npm_config_@Corp:registry": "variable name", "npm_config_@a:b:registry": "variable name",
		"npm_config_@_x:registry": "variable name", "x_npm_config_@corp:registry": "variable name",
		// code injection
		"LD_PRELOAD": "run code", "LD_LIBRARY_PATH": "run code", "LD_AUDIT": "run code", "BASH_ENV": "run code",
		"ENV": "run code", "PROMPT_COMMAND": "run code", "PYTHONSTARTUP": "run code", "PYTHONPATH": "run code",
		"NODE_OPTIONS": "run code", "PERL5OPT": "run code", "RUBYOPT": "run code", "JAVA_TOOL_OPTIONS": "run code",
		"GIT_SSH_COMMAND": "run code", "GIT_CONFIG_PARAMETERS": "run code", "BASH_FUNC_x": "run code",
		"ld_preload": "run code",
		// fixrail's own
		"TMPDIR": "throwaway", "TEMP": "throwaway",
	}
	for _, n := range redact.CredentialEnv {
		refused[n] = ""
	}
	for n, why := range refused {
		err := sandbox.CheckExtra(n)
		if err == nil {
			t.Errorf("CheckExtra(%q) = nil, want refused", n)
			continue
		}
		if !strings.Contains(err.Error(), "extra_env") || !strings.Contains(err.Error(), why) {
			t.Errorf("CheckExtra(%q) = %q, want it to name extra_env and say %q", n, err, why)
		}
	}

	// Env refuses the whole list when one name is refused, and names each.
	_, err := sandbox.Env(sandbox.Build, os.LookupEnv, []string{"MY_FLAG", "NPM_TOKEN", "LD_PRELOAD"})
	if err == nil || !strings.Contains(err.Error(), `"NPM_TOKEN"`) || !strings.Contains(err.Error(), `"LD_PRELOAD"`) {
		t.Errorf("Env with refused extras: err = %v, want both names", err)
	}
}

func TestTempDir(t *testing.T) {
	parent := t.TempDir()
	dir, cleanup, err := sandbox.TempDir(parent)
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 directory", d, fi.Mode(), err)
		}
	}
	if filepath.Dir(filepath.Dir(dir)) != parent {
		t.Errorf("TempDir(%s) = %s, not under it", parent, dir)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("TMPDIR starts with %v, want empty (fixrail's marker lies outside it)", entries)
	}

	// A child uses it as TMPDIR and leaves a read-only tree behind.
	env := sandbox.WithTempDir([]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/elsewhere"}, dir)
	res, err := sandbox.Run(t.Context(), sandbox.Cmd{
		Args: sh(`test "$TMPDIR" = "$TMP" && test "$TMP" = "$TEMP" || exit 9
			f=$(mktemp) && echo data > "$f" && mkdir -p "$TMPDIR/ro/sub" && touch "$TMPDIR/ro/sub/f" &&
			chmod 0500 "$TMPDIR/ro/sub" "$TMPDIR/ro" && echo "$f"`),
		Env: env,
	})
	if err != nil || !res.Success() {
		t.Fatalf("child using TMPDIR: %+v, %v", res, err)
	}
	if got := strings.TrimSpace(res.Stdout); filepath.Dir(got) != dir {
		t.Errorf("mktemp made %s, want it in %s", got, dir)
	}
	if err := cleanup(); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	if _, err := os.Lstat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after cleanup, stat %s: %v; want it gone", filepath.Dir(dir), err)
	}
	if err := cleanup(); err != nil {
		t.Errorf("second cleanup: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("parent holds %v after cleanup", entries)
	}
}

// TestTempDirCleanupIsGuarded: a TMPDIR whose disposable parent was swapped
// for something else is not deleted.
func TestTempDirCleanupIsGuarded(t *testing.T) {
	parent := t.TempDir()
	dir, cleanup, err := sandbox.TempDir(parent)
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	outer := filepath.Dir(dir)
	victim := t.TempDir()
	canary := filepath.Join(victim, "canary")
	if err := os.WriteFile(canary, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(outer); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, outer); err != nil {
		t.Fatal(err)
	}
	if err := cleanup(); err == nil {
		t.Errorf("cleanup through a planted symlink = nil error")
	}
	if b, err := os.ReadFile(canary); err != nil || string(b) != "keep" {
		t.Errorf("canary behind the symlink: %q, %v", b, err)
	}
}

func names(env []string) []string {
	var ns []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		ns = append(ns, k)
	}
	slices.Sort(ns)
	return ns
}
