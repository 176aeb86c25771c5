package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Environ returns KEY=VALUE pairs for exactly the named variables that are set
// in lookup (os.LookupEnv in production), in the order given; a name given
// twice appears once. Names are never patterns: an empty name or one
// containing '*' or '=' is a programming error and panics, so that a glob
// cannot silently widen the allowlist.
func Environ(lookup func(string) (string, bool), names ...string) []string {
	env := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		checkName(name)
		if seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// With returns a copy of env with key set to value: the first existing entry
// for key is replaced in place and any later ones are dropped; otherwise the
// entry is appended. env itself is not modified. key is checked as in Environ.
func With(env []string, key, value string) []string {
	checkName(key)
	out := make([]string, 0, len(env)+1)
	set := false
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
			continue
		}
		if !set {
			out = append(out, key+"="+value)
			set = true
		}
	}
	if !set {
		out = append(out, key+"="+value)
	}
	return out
}

func checkName(name string) {
	if name == "" || strings.ContainsAny(name, "*=") {
		panic("sandbox: invalid environment variable name " + strconv.Quote(name))
	}
}

// A Class is one of the environments fixrail hands a child. Each is an
// allowlist of names (never patterns): a variable not named is not passed,
// whatever the parent holds.
type Class string

// The environment classes, from least to most privileged.
const (
	// Build is for the reproducing test, the suite and build checks: code
	// the repository wrote. No GitHub, model or webhook credential.
	Build Class = "build"
	// Git is for fixrail's local git calls (add, diff, status, worktree,
	// branch, reset): the build names plus the commit identity.
	Git Class = "git"
	// Signing is for commit: the git names plus the signing agent's socket.
	Signing Class = "signing"
	// Agent is for the runner: the build names plus what an agent CLI needs
	// to reach its model (the model credentials and proxies), and nothing
	// for GitHub or webhooks.
	Agent Class = "agent"
	// Credentialed is for push and the forge API only.
	Credentialed Class = "credentialed"
)

// baseEnv is in every class: locale, identity and where things are. None of
// it is a credential.
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME",
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
}

// BuildEnv names what tests, the suite and build checks see: the base names
// and the toolchains' own settings (paths and switches, no registry
// credentials; GOPROXY and similar URLs are left out because a URL can carry
// a password — add them through extra_env if a build needs one).
var BuildEnv = slices.Concat(baseEnv, []string{
	"GOROOT", "GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOOS", "GOARCH",
	"GOPRIVATE", "GONOSUMDB", "GONOPROXY", "GOSUMDB", "CGO_ENABLED", "CC", "CXX",
	"JAVA_HOME", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
	"VIRTUAL_ENV", "PYENV_ROOT", "NVM_DIR", "CI",
})

// GitEnv names what fixrail's local git calls see: the base names and the
// commit identity. gitx adds its own GIT_CONFIG_* settings with With.
var GitEnv = slices.Concat(baseEnv, []string{
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
})

// SigningEnv names what commit sees: GitEnv plus the sockets and directory
// that reach the operator's signing agent (ssh-agent or gpg-agent).
var SigningEnv = slices.Concat(GitEnv, []string{"SSH_AUTH_SOCK", "GNUPGHOME", "GPG_TTY"})

// proxyEnv reaches the network through the operator's proxy. A proxy URL may
// hold a password, so these are only in the classes that talk to a remote.
var proxyEnv = []string{
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
	"NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "NODE_EXTRA_CA_CERTS",
}

// AgentEnv names what the runner sees: BuildEnv, the terminal, the proxies
// and the model credentials an agent CLI needs for its own API calls. An
// adapter that can should also have the CLI scrub these from the
// subprocesses it starts (Claude Code: CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1).
var AgentEnv = slices.Concat(BuildEnv, []string{"TERM", "NO_COLOR"}, proxyEnv, []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "GEMINI_API_KEY",
})

// CredentialedEnv names what push and the forge API see: GitEnv, the
// proxies, and the forge credentials. Never used for code the repository
// wrote.
var CredentialedEnv = slices.Concat(GitEnv, proxyEnv, []string{
	"SSH_AUTH_SOCK",
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST",
	"FIXRAIL_FORGE_TOKEN", "FIXRAIL_GITHUB_TOKEN",
})

// Names returns a copy of the allowlist for class, or nil for an unknown
// class.
func Names(class Class) []string {
	var names []string
	switch class {
	case Build:
		names = BuildEnv
	case Git:
		names = GitEnv
	case Signing:
		names = SigningEnv
	case Agent:
		names = AgentEnv
	case Credentialed:
		names = CredentialedEnv
	default:
		return nil
	}
	return slices.Clone(names)
}

// Env returns the environment for class: the allowlisted names plus extra
// (config extra_env) that are set in lookup (os.LookupEnv in production), as
// KEY=VALUE pairs. Every extra name is checked by CheckExtra first; any
// refusal fails the whole call, so a bad config cannot half-apply.
func Env(class Class, lookup func(string) (string, bool), extra []string) ([]string, error) {
	names := Names(class)
	if names == nil {
		return nil, fmt.Errorf("environment: unknown class %q", class)
	}
	if err := CheckExtra(extra...); err != nil {
		return nil, err
	}
	return Environ(lookup, append(names, extra...)...), nil
}

// CheckExtra validates names meant for extra_env; config should call it at
// load time so a refusal stops fixrail before anything runs. A name is
// refused when it is not a plain variable name (a pattern, '=', an empty
// name); when it is a known credential (GITHUB_TOKEN, AWS_ACCESS_KEY_ID,
// SSH_AUTH_SOCK …); when it is credential-shaped: one of its '_'-separated
// words is KEY, TOKEN, SECRET, PASSWORD, AUTH, PAT, SESSION, COOKIE and the
// like or ends in TOKEN, or it contains PASSWORD, SECRET, APIKEY, CREDENTIAL
// and the like anywhere; when it makes a shell, the loader or an interpreter
// run code (LD_PRELOAD, BASH_ENV, NODE_OPTIONS, PYTHONPATH …); and when
// fixrail sets it itself (TMPDIR, TMP, TEMP). Case is ignored. The error
// names every refused variable and why.
func CheckExtra(names ...string) error {
	var errs []error
	for _, name := range names {
		if why := refuseExtra(name); why != "" {
			errs = append(errs, fmt.Errorf("extra_env %s: %s", strconv.Quote(name), why))
		}
	}
	return errors.Join(errs...)
}

func refuseExtra(name string) string {
	if name == "" {
		return "empty name"
	}
	if strings.ContainsAny(name, "*?[=") {
		return "a pattern or assignment, not a variable name (extra_env takes exact names)"
	}
	for i := 0; i < len(name) && !npmScopeRegistry(name); i++ {
		c := name[i]
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return "not a variable name (letters, digits and '_', not starting with a digit; or npm_config_@SCOPE:registry)"
		}
	}
	up := strings.ToUpper(name)
	if slices.Contains(tmpEnv, up) {
		return "set by fixrail to a throwaway directory, never taken from the parent"
	}
	if slices.Contains(knownCredentials, up) {
		return "a credential; it is never passed to code fixrail runs"
	}
	if slices.Contains(injectionEnv, up) || strings.HasPrefix(up, "BASH_FUNC_") || strings.HasPrefix(up, "LD_") {
		return "makes a shell, loader or interpreter run code; it is never passed through"
	}
	for _, word := range strings.Split(up, "_") {
		if slices.Contains(credentialWords, word) {
			return fmt.Sprintf("credential-shaped (the word %s); credentials are never passed through extra_env", word)
		}
		// GITHUBTOKEN, NPMTOKENS; TOKENIZERS stays.
		if strings.HasSuffix(word, "TOKEN") || strings.HasSuffix(word, "TOKENS") {
			return fmt.Sprintf("credential-shaped (%s ends in TOKEN); credentials are never passed through extra_env", word)
		}
	}
	for _, frag := range credentialFragments {
		if strings.Contains(up, frag) {
			return fmt.Sprintf("credential-shaped (contains %s); credentials are never passed through extra_env", frag)
		}
	}
	return ""
}

// npmScopeRegistry reports whether name is npm_config_@SCOPE:registry, the
// variable npm reads a scope's registry from (npm lower-cases what follows
// npm_config_): a name the shell cannot export, which env(1) can, and the
// one way to name a scope's registry for npm through its environment.
func npmScopeRegistry(name string) bool {
	const pre, suf = "npm_config_@", ":registry"
	if len(name) <= len(pre)+len(suf) || !strings.EqualFold(name[:len(pre)], pre) || !strings.EqualFold(name[len(name)-len(suf):], suf) {
		return false
	}
	scope := name[len(pre) : len(name)-len(suf)]
	if scope[0] == '.' || scope[0] == '_' {
		return false
	}
	for _, r := range scope {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// credentialWords refuse a name when one of its '_'-separated words is one of
// them: GITHUB_TOKEN and MY_API_KEY go, KEYBOARD_LAYOUT and
// TOKENIZERS_PARALLELISM stay.
var credentialWords = []string{
	"KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS",
	"PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE", "PWD",
	"CREDENTIAL", "CREDENTIALS", "CRED", "CREDS", "AUTH", "OAUTH", "BEARER", "JWT",
	"PAT", "SESSION", "COOKIE", "COOKIES", "DSN", "WEBHOOK",
}

// credentialFragments refuse a name that contains them anywhere, for names
// written without separators (GITHUBTOKEN would pass the word test; these
// are long enough not to hit ordinary names).
var credentialFragments = []string{
	"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "CREDENTIAL", "APIKEY", "ACCESSKEY",
	"AUTHTOKEN", "ACCESSTOKEN", "PRIVATEKEY", "WEBHOOK",
}

// knownCredentials are refused by name even when their shape is innocent.
var knownCredentials = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"FIXRAIL_WEBHOOK_SECRET", "FIXRAIL_WEBHOOK_URL", "FIXRAIL_FORGE_TOKEN",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
	"GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "AZURE_CLIENT_SECRET",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE",
	"NPM_TOKEN", "NODE_AUTH_TOKEN", "NPM_CONFIG_USERCONFIG", "YARN_NPM_AUTH_TOKEN",
	"PYPI_TOKEN", "TWINE_USERNAME", "TWINE_PASSWORD", "UV_PUBLISH_TOKEN",
	"CARGO_REGISTRY_TOKEN", "GEM_HOST_API_KEY", "NUGET_API_KEY",
	"DOCKER_AUTH_CONFIG", "DOCKER_CONFIG", "KUBECONFIG", "VAULT_TOKEN", "VAULT_ADDR",
	"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "GNUPGHOME", "NETRC", "DATABASE_URL",
	"GITLAB_TOKEN", "CI_JOB_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
	"SLACK_WEBHOOK_URL", "SENTRY_AUTH_TOKEN", "CODECOV_TOKEN",
	"GH_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS",
}

// injectionEnv makes a shell, the dynamic loader, git or an interpreter load
// or run code named by the value. (LD_* and BASH_FUNC_* are refused by
// prefix too: refusing by pattern is safe, allowing by one is not.)
var injectionEnv = []string{
	"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "MALLOC_CONF",
	"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "IFS", "CDPATH", "ZDOTDIR",
	"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE",
	"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "MAVEN_OPTS", "GRADLE_OPTS",
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR",
	"GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_PROXY_COMMAND", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
	"GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_DIR", "GIT_WORK_TREE", "GIT_TEMPLATE_DIR", "EDITOR", "VISUAL", "PAGER",
	"RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "GOENV", "GOEXPERIMENT",
}

// TempDir creates a throwaway, private (0700) directory for a child's TMPDIR
// under parent (the system temp dir when empty). cleanup deletes it through
// pathguard's guard; it may be called more than once. The directory returned
// lies inside a marked disposable directory, so the child does not find
// fixrail's marker in its own TMPDIR.
func TempDir(parent string) (dir string, cleanup func() error, err error) {
	outer, err := pathguard.NewDisposable(parent, "TMPDIR for a child process\n")
	if err != nil {
		return "", nil, fmt.Errorf("create TMPDIR: %w", err)
	}
	cleanup = func() error {
		if err := pathguard.RemoveDisposable(outer); err != nil {
			return fmt.Errorf("remove TMPDIR %s: %w", outer, err)
		}
		return nil
	}
	dir = filepath.Join(outer, "tmp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		_ = cleanup()
		return "", nil, fmt.Errorf("create TMPDIR: %w", err)
	}
	// MkdirTemp already uses 0700, but a umask cannot widen what Chmod sets.
	for _, d := range []string{outer, dir} {
		if err := os.Chmod(d, 0o700); err != nil {
			_ = cleanup()
			return "", nil, fmt.Errorf("create TMPDIR: %w", err)
		}
	}
	return dir, cleanup, nil
}

// WithTempDir returns a copy of env with TMPDIR, TMP and TEMP set to dir.
func WithTempDir(env []string, dir string) []string {
	for _, k := range tmpEnv {
		env = With(env, k, dir)
	}
	return env
}

var tmpEnv = []string{"TMPDIR", "TMP", "TEMP"}
