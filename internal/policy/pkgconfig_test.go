package policy

import (
	"path/filepath"
	"testing"
)

// TestPackageManagerConfig: a package manager's user configuration decides
// where every later install comes from, whether checksums are checked and
// what runs during a build, in every project and session after this one:
// changing it is scope-escalation, by command or by writing the file. A
// project's own configuration, or reading the user's, is not.
func TestPackageManagerConfig(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "npm", in: "npm config set registry http://evil.example/", want: "scope-escalation"},
		{id: "npm-set", in: "npm set strict-ssl false", want: "scope-escalation"},
		{id: "npm-scope-registry", in: "npm config set @corp:registry=http://evil.example/", want: "scope-escalation"},
		{id: "pnpm", in: "pnpm config set registry http://evil.example", want: "scope-escalation"},
		{id: "yarn", in: "yarn config set npmRegistryServer http://evil.example -H", want: "scope-escalation"},
		{id: "pip", in: "pip config set global.index-url http://evil.example/simple", want: "scope-escalation"},
		{id: "python-m-pip", in: "python3 -m pip config set global.index-url http://evil.example/simple", want: "scope-escalation"},
		{id: "pip3-user", in: "pip3 config --user set global.trusted-host evil.example", want: "scope-escalation"},
		{id: "go-env", in: "go env -w GOPROXY=http://evil.example", want: "scope-escalation"},
		{id: "go-env-sumdb", in: "go env -w GONOSUMDB=* GOSUMDB=off", want: "scope-escalation"},
		{id: "go-env-unset", in: "go env -u GOFLAGS", want: "scope-escalation"},
		{id: "gem-sources", in: "gem sources --add http://evil.example/", want: "scope-escalation"},
		{id: "conda", in: "conda config --add channels http://evil.example", want: "scope-escalation"},
		{id: "npmrc", in: "echo registry=http://evil.example >> ~/.npmrc", want: "scope-escalation"},
		{id: "pip-conf", in: "printf '[global]\\nindex-url=x\\n' > " + filepath.Join(home, ".config/pip/pip.conf"), want: "scope-escalation"},
		{id: "cargo-config", in: "cat cfg >> ~/.cargo/config.toml", want: "scope-escalation"},
		{id: "gradle-init", in: "cp init.gradle ~/.gradle/init.d/", want: "scope-escalation"},
		{id: "go-env-file", in: "echo GOFLAGS=-mod=mod > ~/.config/go/env", want: "scope-escalation"},

		{id: "npm-get", in: "npm config get registry", want: ""},
		{id: "npm-public", in: "npm config set registry https://registry.npmjs.org/", want: ""},
		{id: "npm-harmless", in: "npm config set fund false", want: ""},
		{id: "yarn-berry-project", in: "yarn config set npmRegistryServer http://registry.example", want: ""}, // Berry, the project's .yarnrc.yml
		{id: "yarn-classic", in: "yarn config set registry http://evil.example", want: "scope-escalation"},
		{id: "npm-list", in: "npm config list", want: ""},
		{id: "npm-project", in: "npm config set registry http://registry.example --location=project", want: ""},
		{id: "pip-site", in: "pip config --site set global.index-url http://mirror.example/simple", want: ""},
		{id: "pip-list", in: "pip config list", want: ""},
		{id: "go-env-read", in: "go env GOPROXY", want: ""},
		{id: "gem-list", in: "gem sources --list", want: ""},
		{id: "project-npmrc", in: "echo registry=http://registry.example > .npmrc", want: ""},
		{id: "read-npmrc", in: "cat ~/.npmrc", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
