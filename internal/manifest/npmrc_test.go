package manifest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// TestCheckNPMRC: a project .npmrc (at the regeneration's directory or any
// above it in the repository) may set what the regeneration's environment
// overrides (a scope's registry among them, whose scope is returned to be
// pinned), harmless settings and host credentials; a scope npm's
// environment key cannot name, a script shell, a prefix, a section, an
// unknown or expanded key, or a .npmrc that is a link is refused, naming
// the file and line.
func TestCheckNPMRC(t *testing.T) {
	for _, c := range []struct {
		name   string
		files  map[string]string
		dir    string
		want   []string // substrings of the error; none: no error
		scopes []string
	}{
		{"none", nil, ".", nil, nil},
		{"overridden and harmless", map[string]string{".npmrc": "cache=./x\nregistry=https://attacker.example/\nuserconfig=./u\nignore-scripts=false\nreplace-registry-host=always\nstrict-ssl=false\noffline=false\n; a comment\n# another\n\nsave-exact=true\nlegacy-peer-deps=true\nengine-strict = true\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"}, ".", nil, nil},
		{"scoped registry", map[string]string{".npmrc": "save-exact=true\n@corp:registry=https://attacker.example/\n@my-org.x:registry = https://npm.pkg.github.com\n@corp:registry=https://other.example/\n"}, ".", nil, []string{"@corp", "@my-org.x"}},
		{"a private scope as GitHub Packages documents it", map[string]string{".npmrc": "@octo-org:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken=${NODE_AUTH_TOKEN}\nalways-auth=true\n"}, ".", nil, []string{"@octo-org"}},
		{"scoped registries above and in the directory", map[string]string{".npmrc": "@b:registry=x\n", "web/.npmrc": "@a:registry=x\n"}, "web", nil, []string{"@a", "@b"}},
		{"scope in upper case", map[string]string{".npmrc": "@Corp:registry=https://attacker.example/\n"}, ".", []string{".npmrc:1: @Corp:registry names a registry for a scope fixrail cannot pin"}, nil},
		{"empty scope", map[string]string{".npmrc": "@:registry=https://attacker.example/\n"}, ".", []string{"cannot pin"}, nil},
		{"scope as a list", map[string]string{".npmrc": "@corp:registry[]=https://attacker.example/\n"}, ".", []string{"cannot pin"}, nil},
		{"scope with a colon", map[string]string{".npmrc": "@a:b:registry=https://attacker.example/\n"}, ".", []string{"cannot pin"}, nil},
		{"script shell", map[string]string{".npmrc": "script-shell=./evil.sh\n"}, ".", []string{".npmrc:1: script-shell is not a setting"}, nil},
		{"global config", map[string]string{".npmrc": "globalconfig=./g\n"}, ".", []string{".npmrc:1: globalconfig names the global config file"}, nil},
		{"prefix", map[string]string{".npmrc": "prefix=./p\n"}, ".", []string{".npmrc:1: prefix"}, nil},
		{"node options", map[string]string{".npmrc": "node-options=--require ./x.js\n"}, ".", []string{"node-options"}, nil},
		{"per-host other than credentials", map[string]string{".npmrc": "//registry.npmjs.org/:ca=x\n"}, ".", []string{"per-host setting"}, nil},
		{"section", map[string]string{".npmrc": "[registry]\nx=1\n"}, ".", []string{".npmrc:1: a [section] header", ".npmrc:2: x is not"}, nil},
		{"quoted key", map[string]string{".npmrc": "\"script-shell\"=./evil.sh\n"}, ".", []string{"quoted, escaped or expanded"}, nil},
		{"expanded key", map[string]string{".npmrc": "${K}=x\n"}, ".", []string{"quoted, escaped or expanded"}, nil},
		{"inline comment in key", map[string]string{".npmrc": "script-shell;c=./evil.sh\n"}, ".", []string{"quoted, escaped or expanded"}, nil},
		{"CR line ends", map[string]string{".npmrc": "save-exact=true\rscript-shell=./evil.sh\r\n"}, ".", []string{".npmrc:1: script-shell"}, nil},
		{"case differs", map[string]string{".npmrc": "Registry=x\n"}, ".", []string{"Registry is not"}, nil},
		{"above the regeneration's directory", map[string]string{".npmrc": "script-shell=./evil.sh\n", "web/.npmrc": "save-exact=true\n"}, "web", []string{".npmrc:1: script-shell"}, nil},
		{"in the regeneration's directory", map[string]string{"web/.npmrc": "node-options=x\n"}, "web", []string{"web/.npmrc:1: node-options"}, nil},
		{"beside it, not read", map[string]string{"api/.npmrc": "script-shell=x\n"}, "web", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, c.files)
			scopes, err := CheckNPMRC(root, c.dir)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !slices.Equal(scopes, c.scopes) {
					t.Errorf("scopes %q, want %q", scopes, c.scopes)
				}
				return
			}
			if !errors.Is(err, ErrNPMConfig) {
				t.Fatalf("err %v, want ErrNPMConfig", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("a link", func(t *testing.T) {
		root := writeTree(t, map[string]string{"elsewhere": "save-exact=true\n"})
		if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, ".npmrc")); err != nil {
			t.Fatal(err)
		}
		if _, err := CheckNPMRC(root, "."); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err %v", err)
		}
	})
}

// TestNPMRegenEnv: the regeneration's environment pins each setting a
// project .npmrc must not choose, with a value npm reads (it skips an
// empty npm_config_ variable, which would leave the project's in force).
func TestNPMRegenEnv(t *testing.T) {
	env := npmRegenEnv()
	for _, want := range []string{
		"npm_config_userconfig=/dev/null", "npm_config_offline=true",
		"npm_config_ignore_scripts=true", "npm_config_replace_registry_host=npmjs", "npm_config_strict_ssl=true",
		"npm_config_global=false", "npm_config_dry_run=false",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("env %q lacks %s", env, want)
		}
	}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); v == "" || strings.Contains(k, "-") {
			t.Errorf("%q: npm would not read it", kv)
		}
	}
	r := npmRegen(Dep{Name: "w", Manifest: "package.json", Lockfile: "package-lock.json"}, "1.0.2")
	if !slices.Equal(r.Env, env) {
		t.Errorf("npmRegen env %q", r.Env)
	}
	for _, c := range []struct{ in, want string }{
		{"", "npm_config_registry=https://registry.npmjs.org/"},
		{"http://127.0.0.1:4873", "npm_config_registry=http://127.0.0.1:4873/"},
		{"https://npm.corp/r/", "npm_config_registry=https://npm.corp/r/"},
	} {
		if got := NPMRegistryEnv(c.in); got != c.want {
			t.Errorf("NPMRegistryEnv(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNPMRegenEnvBeatsProjectNPMRC asks the real npm, in a project whose
// .npmrc names its own cache, registry, a scope's registry and user
// config and turns scripts on, what it would use under the regeneration's
// environment: the pinned values, not the repository's.
func TestNPMRegenEnvBeatsProjectNPMRC(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm not on PATH (scripts/test installs it)")
	}
	root := writeTree(t, map[string]string{
		"package.json": `{"name": "app", "version": "1.0.0"}` + "\n",
		".npmrc":       "cache=./evil-cache\nregistry=https://attacker.example/\n@corp:registry=https://attacker.example/corp/\nuserconfig=./u\nignore-scripts=false\noffline=false\nreplace-registry-host=always\n",
		"u":            "registry=https://attacker.example/u/\n",
	})
	home, cache := t.TempDir(), t.TempDir()
	scopes, err := CheckNPMRC(root, ".")
	if err != nil || !slices.Equal(scopes, []string{"@corp"}) {
		t.Fatalf("CheckNPMRC: %q, %v", scopes, err)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "npm_config_cache=" + cache, NPMRegistryEnv(""), NPMScopeEnv("@corp", "https://npm.corp.example")}, npmRegenEnv()...)
	for key, want := range map[string]string{
		"cache": cache, "registry": NPMPublicRegistry, "@corp:registry": "https://npm.corp.example/", "userconfig": "/dev/null",
		"ignore-scripts": "true", "offline": "true", "replace-registry-host": "npmjs",
	} {
		cmd := exec.Command("npm", "config", "get", key)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("npm config get %s: %v", key, err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("npm config get %s = %q, want %q", key, got, want)
		}
	}
}

// TestNPMResolvedOff: a resolved URL the regeneration added off the
// registry meant is named (another host, scheme or port, a path outside
// the registry's, userinfo, git or file sources, v1's nested entries); one
// the lockfile already had, or under the registry, is not.
func TestNPMResolvedOff(t *testing.T) {
	const reg = "https://registry.npmjs.org/"
	before := `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/old": {"version": "1.0.0", "resolved": "https://mirror.example/old/-/old-1.0.0.tgz"}}}`
	for _, c := range []struct {
		name, registry, after string
		want                  []string
	}{
		{"same registry", "", `{"packages": {"node_modules/old": {"resolved": "https://mirror.example/old/-/old-1.0.0.tgz"}, "node_modules/w": {"resolved": "https://registry.npmjs.org/w/-/w-1.0.2.tgz"}}}`, nil},
		{"another host", "", `{"packages": {"node_modules/w": {"resolved": "https://attacker.example/w/-/w-1.0.2.tgz"}}}`, []string{"https://attacker.example/w/-/w-1.0.2.tgz (at /packages/node_modules/w)"}},
		{"http", "", `{"packages": {"node_modules/w": {"resolved": "http://registry.npmjs.org/w/-/w-1.0.2.tgz"}}}`, []string{"http://registry.npmjs.org/w/-/w-1.0.2.tgz (at /packages/node_modules/w)"}},
		{"userinfo", "", `{"packages": {"node_modules/w": {"resolved": "https://x@registry.npmjs.org/w/-/w-1.0.2.tgz"}}}`, []string{"https://x@registry.npmjs.org/w/-/w-1.0.2.tgz (at /packages/node_modules/w)"}},
		{"host prefix", "", `{"packages": {"node_modules/w": {"resolved": "https://registry.npmjs.org.attacker.example/w/-/w-1.0.2.tgz"}}}`, []string{"https://registry.npmjs.org.attacker.example/w/-/w-1.0.2.tgz (at /packages/node_modules/w)"}},
		{"git", "", `{"packages": {"node_modules/w": {"resolved": "git+ssh://git@github.com/a/w.git#abc"}}}`, []string{"git+ssh://git@github.com/a/w.git#abc (at /packages/node_modules/w)"}},
		{"v1 nested", "", `{"dependencies": {"a": {"resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz", "dependencies": {"w": {"resolved": "https://attacker.example/w/-/w-1.0.2.tgz"}}}}}`, []string{"https://attacker.example/w/-/w-1.0.2.tgz (at /dependencies/a/dependencies/w)"}},
		{"operator registry path", "http://127.0.0.1:4873/npm", `{"packages": {"node_modules/w": {"resolved": "http://127.0.0.1:4873/npm/w/-/w-1.0.2.tgz"}, "node_modules/x": {"resolved": "http://127.0.0.1:4873/other/x/-/x-1.0.0.tgz"}, "node_modules/y": {"resolved": "http://127.0.0.1:4874/npm/y/-/y-1.0.0.tgz"}}}`,
			[]string{"http://127.0.0.1:4873/other/x/-/x-1.0.0.tgz (at /packages/node_modules/x)", "http://127.0.0.1:4874/npm/y/-/y-1.0.0.tgz (at /packages/node_modules/y)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := NPMResolvedOff([]byte(before), []byte(c.after), c.registry)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
	// A scope's registry the operator named is a registry meant too.
	got, err := NPMResolvedOff([]byte(before), []byte(`{"packages": {"node_modules/w": {"resolved": "https://registry.npmjs.org/w/-/w-1.0.2.tgz"}, "node_modules/@corp/x": {"resolved": "https://npm.corp.example/@corp/x/-/x-1.0.0.tgz"}, "node_modules/@corp/y": {"resolved": "https://attacker.example/@corp/y/-/y-1.0.0.tgz"}}}`), "", "https://npm.corp.example")
	if err != nil || !slices.Equal(got, []string{"https://attacker.example/@corp/y/-/y-1.0.0.tgz (at /packages/node_modules/@corp/y)"}) {
		t.Errorf("two registries: %q, %v", got, err)
	}
	if _, err := NPMResolvedOff(nil, []byte("{"), reg); !errors.Is(err, ErrParse) {
		t.Errorf("unreadable lockfile: %v", err)
	}
}

// FuzzNPMRC: whatever a .npmrc holds, each scope npmrcProblems returns is
// one the regeneration can pin: its environment key is npm's spelling of
// the file's key (npm lower-cases what follows npm_config_), carries no
// '=' or NUL, and is a name extra_env accepts for the operator to pass.
func FuzzNPMRC(f *testing.F) {
	for _, s := range []string{
		"@corp:registry=https://x/\n", "@Corp:registry=x", "@:registry=x", "@a:b:registry=x",
		"@corp:registry[]=x", " @my-org.x:registry = y\r\n", "[s]\n@a:registry=x", "\"@a:registry\"=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, scopes := npmrcProblems(text)
		for _, sc := range scopes {
			kv := NPMScopeEnv(sc, "")
			key, _, _ := strings.Cut(kv, "=")
			if key != "npm_config_"+sc+":registry" || strings.ContainsRune(key, 0) || strings.ToLower(key) != key {
				t.Fatalf("scope %q pins as %q", sc, kv)
			}
			if err := sandbox.CheckExtra(key); err != nil {
				t.Fatalf("scope %q: extra_env refuses %q: %v", sc, key, err)
			}
		}
	})
}
