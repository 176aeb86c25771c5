package sandbox_test

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// TestCheckExtraListsPinned spells out every entry of extra_env's refusal
// lists, each with a name that only that entry refuses, so a word dropped
// from a list in the code turns this red (a test that iterates over the
// list it tests would stay green). Adding an entry means adding its row.
func TestCheckExtraListsPinned(t *testing.T) {
	for _, word := range []string{
		"KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS",
		"PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE", "PWD",
		"CREDENTIAL", "CREDENTIALS", "CRED", "CREDS", "AUTH", "OAUTH", "BEARER", "JWT",
		"PAT", "SESSION", "COOKIE", "COOKIES", "DSN", "WEBHOOK",
	} {
		refusedFor(t, "MY_"+word+"_VAR", "(the word "+word+")")
	}
	for _, frag := range []string{
		"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "CREDENTIAL", "APIKEY", "ACCESSKEY",
		"AUTHTOKEN", "ACCESSTOKEN", "PRIVATEKEY", "WEBHOOK",
	} {
		refusedFor(t, "X"+frag+"Y", "(contains "+frag+")")
	}
	// Words that end in TOKEN, written without a separator.
	refusedFor(t, "GITHUBTOKEN", "(GITHUBTOKEN ends in TOKEN)")
	refusedFor(t, "NPMTOKENS", "(NPMTOKENS ends in TOKEN)")
	for _, name := range []string{
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
	} {
		refusedFor(t, name, "a credential; it is never passed")
	}
	for _, name := range []string{
		"GCONV_PATH", "MALLOC_CONF",
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
		// By prefix (LD_PRELOAD and the rest of LD_* too).
		"LD_PRELOAD", "LD_ANYTHING", "BASH_FUNC_f",
	} {
		refusedFor(t, name, "makes a shell, loader or interpreter run code")
	}
	for _, name := range []string{"TMPDIR", "TMP", "TEMP"} {
		refusedFor(t, name, "set by fixrail to a throwaway directory")
	}
}

func refusedFor(t *testing.T, name, why string) {
	t.Helper()
	err := sandbox.CheckExtra(name)
	if err == nil || !strings.Contains(err.Error(), why) {
		t.Errorf("CheckExtra(%q) = %v, want refused %s", name, err, why)
	}
}
