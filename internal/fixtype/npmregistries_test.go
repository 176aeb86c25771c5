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
	fakeEnv(t, env)
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

// TestPythonIndexes: the indexes a uv.lock may name are PyPI's, or the
// default index the operator names through extra_env, with the others it
// names (UV_INDEX's NAME=URL read as its URL).
func TestPythonIndexes(t *testing.T) {
	env := map[string]string{
		"UV_DEFAULT_INDEX":    "https://pypi.corp.example/simple",
		"PIP_INDEX_URL":       "https://pip.corp.example/simple",
		"UV_INDEX":            "internal=https://idx.corp.example/simple https://other.corp.example/simple",
		"PIP_EXTRA_INDEX_URL": "https://extra.corp.example/simple",
	}
	fakeEnv(t, env)
	for _, c := range []struct {
		extra []string
		want  []string
	}{
		{nil, []string{"https://pypi.org/simple"}},
		{[]string{"PIP_INDEX_URL"}, []string{"https://pip.corp.example/simple"}},
		{[]string{"PIP_INDEX_URL", "UV_DEFAULT_INDEX"}, []string{"https://pypi.corp.example/simple"}},
		{[]string{"UV_INDEX", "PIP_EXTRA_INDEX_URL"}, []string{"https://extra.corp.example/simple", "https://idx.corp.example/simple", "https://other.corp.example/simple", "https://pypi.org/simple"}},
	} {
		if got := PythonIndexes(&config.Config{ExtraEnv: c.extra}); !slices.Equal(got, c.want) {
			t.Errorf("extra_env %q: %q, want %q", c.extra, got, c.want)
		}
	}
}

// fakeEnv makes env the operator's environment for the rest of the test.
func fakeEnv(t *testing.T, env map[string]string) {
	old := lookupEnv
	t.Cleanup(func() { lookupEnv = old })
	lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}
