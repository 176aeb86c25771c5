package fixtype

import (
	"slices"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
)

// TestNPMRegistries: the registries a lockfile may resolve from are the
// ones the operator's environment names through extra_env — the registry
// (else the public one) and each scope's — and nothing the environment
// holds without extra_env passing it.
func TestNPMRegistries(t *testing.T) {
	env := map[string]string{
		"npm_config_registry":          "http://127.0.0.1:4873",
		"npm_config_@corp:registry":    "https://npm.corp.example/r",
		"NPM_CONFIG_@other:registry":   "https://npm.other.example/",
		"npm_config_@unnamed:registry": "https://npm.unnamed.example/",
		"npm_config_@empty:registry":   "",
	}
	old := lookupEnv
	t.Cleanup(func() { lookupEnv = old })
	lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, c := range []struct {
		extra []string
		want  []string
	}{
		{nil, []string{"https://registry.npmjs.org/"}},
		{[]string{"npm_config_registry"}, []string{"http://127.0.0.1:4873/"}},
		{[]string{"npm_config_@corp:registry", "NPM_CONFIG_@other:registry", "npm_config_@empty:registry"},
			[]string{"https://npm.corp.example/r/", "https://npm.other.example/", "https://registry.npmjs.org/"}},
	} {
		if got := NPMRegistries(&config.Config{ExtraEnv: c.extra}); !slices.Equal(got, c.want) {
			t.Errorf("extra_env %q: %q, want %q", c.extra, got, c.want)
		}
	}
}
