package cli

import (
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/runner/model"
)

// credentialChecks says whether the keys the configured runner and model
// need are in fixrail's environment, the only place either reads them
// from: names only, never values. A missing one fails, because the run
// would stop on it only after intake, or — for the model — ship every fix
// unconfirmed.
func credentialChecks(cfg *config.Config, lookup func(string) (string, bool)) []check {
	var out []check
	set := func(name string) bool { v, ok := lookup(name); return ok && strings.TrimSpace(v) != "" }
	either := strings.Join(runner.CredentialEnvNames, " or ")
	if cfg.Runner.Kind == "claude" {
		if runner.HasCredential(lookup) {
			out = append(out, check{"credentials", "ok", "runner claude: the agent gets " + either + " from fixrail's environment"})
		} else {
			out = append(out, check{"credentials", "fail", "runner claude: the agent needs " + either + " in fixrail's environment, and neither is set (its HOME is private per run: a /login session or a settings file never reaches it; runs would HALT runner-unavailable)"})
		}
	}
	var need []string
	switch cfg.Model.Kind {
	case model.KindAnthropic:
		need = []string{model.AnthropicKeyEnv}
	case model.KindOpenAI:
		need = []string{model.OpenAIKeyEnv}
	case model.KindClaude:
		need = runner.CredentialEnvNames
	}
	if len(need) > 0 {
		ok := false
		for _, n := range need {
			ok = ok || set(n)
		}
		if ok {
			out = append(out, check{"credentials", "ok", "model " + cfg.Model.Kind + ": " + strings.Join(need, " or ") + " is set"})
		} else {
			out = append(out, check{"credentials", "fail", "model " + cfg.Model.Kind + " needs " + strings.Join(need, " or ") + " in fixrail's environment, and it is not set (the LLM gates could not run)"})
		}
	}
	return out
}
