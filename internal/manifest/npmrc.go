package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// NPMPublicRegistry is npm's default registry: the one the regeneration
// resolves against unless the operator's environment names another
// (npm_config_registry through extra_env).
const NPMPublicRegistry = "https://registry.npmjs.org/"

// npmPinned are the settings the regeneration's environment fixes
// (npmRegenEnv, plus npm_config_registry from NPMRegistryEnv and
// npm_config_cache from the sandbox's toolchain environment, which is
// always set). npm ranks its environment above a project's .npmrc, so a
// project file that sets one of these is overridden, not obeyed: the
// repository cannot pick the cache the offline regeneration reads, the
// registry, the user config file read after it, or make a script run.
// globalconfig is not among them: npm (11.x) takes npm_config_globalconfig
// as the default only, below a project's (CheckNPMRC refuses that key).
var npmPinned = map[string]string{
	"cache":                 "", // sandbox.Toolchain.Env: a view of the operator's cache or an empty scratch one
	"registry":              "", // NPMRegistryEnv
	"logs-dir":              "", // sandbox.Toolchain.Env
	"userconfig":            "/dev/null",
	"offline":               "true",
	"prefer-online":         "false",
	"ignore-scripts":        "true",
	"replace-registry-host": "npmjs",
	"strict-ssl":            "true",
	"global":                "false",
	"location":              "user",
	"dry-run":               "false",
	"package-lock":          "true",
	"package-lock-only":     "true",
	"audit":                 "false",
	"fund":                  "false",
	"update-notifier":       "false",
}

// npmHarmless are the project .npmrc settings the regeneration obeys: how
// npm saves and reports, and peer and engine rules that decide among the
// versions the registry serves. None of them names a host, a file, a
// program or a script.
var npmHarmless = []string{
	"save-exact", "save-prefix", "engine-strict", "legacy-peer-deps", "strict-peer-deps",
	"lockfile-version", "prefer-dedupe", "install-strategy", "legacy-bundling", "global-style",
	"include", "omit", "progress", "loglevel", "color", "unicode",
	"git-tag-version", "sign-git-tag", "sign-git-commit", "tag-version-prefix", "message",
	"init-author-name", "init-author-email", "init-author-url", "init-license", "init-version",
	"access", "provenance",
	// Whether to send credentials to the registry (npm 11 no longer
	// knows it unscoped); the offline regeneration sends nothing.
	"always-auth",
}

// npmHostCredentials are the per-host settings (//host/path/:KEY) a
// project .npmrc often carries for publishing; the regeneration is
// offline and never uses them.
var npmHostCredentials = []string{"_authToken", "_auth", "username", "_password", "email", "certfile", "keyfile", "always-auth"}

// npmRegenEnv is the regeneration's environment: every pinned setting with
// a fixed value, as npm_config_NAME (npm reads NAME's '-' as '_').
func npmRegenEnv() []string {
	keys := make([]string, 0, len(npmPinned))
	for k, v := range npmPinned {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, "npm_config_"+strings.ReplaceAll(k, "-", "_")+"="+npmPinned[k])
	}
	return env
}

// NPMRegistryEnv is the regeneration's registry setting: registry, or the
// public one when it is "".
func NPMRegistryEnv(registry string) string {
	return "npm_config_registry=" + NPMRegistryURL(registry)
}

// NPMRegistryURL is registry as npm keys it (with its trailing slash), or
// the public registry when it is "".
func NPMRegistryURL(registry string) string {
	if registry == "" {
		return NPMPublicRegistry
	}
	if !strings.HasSuffix(registry, "/") {
		registry += "/"
	}
	return registry
}

// NPMScopeEnv is the regeneration's registry setting for scope (@corp),
// the key npm reads @corp:registry from in its environment: a project
// .npmrc that routes a scope to its own registry is overridden, as its
// registry line is.
func NPMScopeEnv(scope, registry string) string {
	return "npm_config_" + scope + ":registry=" + NPMRegistryURL(registry)
}

// ErrNPMConfig is a project .npmrc that sets what the regeneration cannot
// override: a script shell, a prefix, a section, a setting fixrail does
// not know to be harmless.
var ErrNPMConfig = errors.New("the repository's npm configuration")

// maxNPMRC bounds a .npmrc fixrail reads.
const maxNPMRC = 256 << 10

// CheckNPMRC reads every .npmrc npm may take as the project's when it runs
// in dir (repo-relative, under root): dir's and each directory's above it
// up to root (npm reads the one at the project root it finds walking up,
// which may be a workspace root above dir). A setting the regeneration pins
// is allowed (the environment overrides it), as are npmHarmless ones and
// host credentials; anything else is an error wrapping ErrNPMConfig naming
// the file, the line and the setting. A .npmrc that is not a regular file
// is refused too. scopes are the scopes the files route to a registry of
// their own (@corp of @corp:registry=URL), sorted: the caller pins each
// (NPMScopeEnv), as it pins the registry, so no URL the repository wrote
// is used.
func CheckNPMRC(root, dir string) (scopes []string, err error) {
	dir = path.Clean(dir)
	var errs []error
	for d := dir; ; d = path.Dir(d) {
		rel := path.Join(d, ".npmrc")
		full := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrNPMConfig, rel, err))
		case !fi.Mode().IsRegular():
			errs = append(errs, fmt.Errorf("%w: %s is not a regular file (npm would read what it points at)", ErrNPMConfig, rel))
		default:
			data, err := pathguard.ReadRegular(full, maxNPMRC)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: %v", ErrNPMConfig, rel, err))
				break
			}
			problems, named := npmrcProblems(string(data))
			for _, p := range problems {
				errs = append(errs, fmt.Errorf("%w: %s:%s", ErrNPMConfig, rel, p))
			}
			scopes = append(scopes, named...)
		}
		if d == "." || d == "/" || d == "" {
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.Sort(scopes)
	return slices.Compact(scopes), nil
}

// npmrcProblems reads a .npmrc as npm's ini parser does (lines split at
// CR and LF; ';' and '#' start a comment line; [section] headers; KEY,
// KEY=VALUE, KEY[]=VALUE) and names each line whose setting the
// regeneration neither pins nor obeys as harmless: "LINE: why". scopes are
// those its @scope:registry lines name.
func npmrcProblems(text string) (problems, scopes []string) {
	for i, physical := range strings.Split(text, "\n") {
		for _, line := range strings.Split(physical, "\r") {
			why, scope := npmrcLine(line)
			if why != "" {
				problems = append(problems, fmt.Sprintf("%d: %s", i+1, why))
			}
			if scope != "" {
				scopes = append(scopes, scope)
			}
		}
	}
	return problems, scopes
}

// npmrcLine says why the regeneration cannot take one line, or "", and
// the scope it routes to a registry, if it does.
func npmrcLine(line string) (why, scope string) {
	t := strings.TrimSpace(line)
	switch {
	case t == "" || t[0] == ';' || t[0] == '#':
		return "", ""
	case t[0] == '[':
		return "a [section] header (npm would read the settings under it by another name)", ""
	}
	key, _, _ := strings.Cut(t, "=")
	if key = strings.TrimSpace(key); key == "" {
		return "", "" // ini ignores a line that starts with '='
	}
	if why := npmrcKey(key); why != "" {
		return safeText(key) + " " + why, ""
	}
	if s, ok := strings.CutSuffix(key, ":registry"); ok && strings.HasPrefix(s, "@") {
		return "", s
	}
	return "", ""
}

// npmrcKey says why the regeneration cannot take a project .npmrc's key,
// or "".
func npmrcKey(key string) string {
	// ini strips quotes and reads escapes and inline comments in a key;
	// npm expands ${VAR} in it. A key written any such way is not read.
	if strings.ContainsAny(key, "\"'\\;#$") {
		return "is quoted, escaped or expanded: fixrail does not read it the way npm would"
	}
	k := strings.TrimSuffix(key, "[]")
	if _, ok := npmPinned[k]; ok {
		return ""
	}
	if slices.Contains(npmHarmless, k) {
		return ""
	}
	if strings.HasPrefix(k, "//") {
		if i := strings.LastIndex(k, ":"); i > 2 && slices.Contains(npmHostCredentials, k[i+1:]) {
			return ""
		}
		return "is a per-host setting other than a credential"
	}
	if k == "globalconfig" {
		return "names the global config file, which npm reads above its environment's setting"
	}
	if s, ok := strings.CutSuffix(k, ":registry"); ok && strings.HasPrefix(s, "@") {
		if k != key || !npmScopeName(s[1:]) {
			return "names a registry for a scope fixrail cannot pin by name (a scope is lower-case letters, digits, '-', '.', '_' and '~')"
		}
		return ""
	}
	return "is not a setting fixrail overrides or knows to leave what npm resolves alone"
}

// npmScopeName reports whether s (a scope without its @) is one npm
// takes: lower case, URL-safe, not starting with '.' or '_'. The
// environment key npm reads is lower-cased, so only such a scope is
// pinned by NPMScopeEnv; the refusal of any other keeps a scope npm
// might match some other way from escaping the pin.
func npmScopeName(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '_' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// NPMResolvedOff names each "resolved" URL in the lockfile after that was
// not in it before and does not lie under one of registries (as
// NPMRegistryURL writes them; none is the public one): what a
// regeneration added from anywhere but the registries fixrail meant,
// whatever told npm to (a cache entry's tarball field, a configuration
// fixrail missed). Each is "URL (at JSON path)".
func NPMResolvedOff(before, after []byte, registries ...string) ([]string, error) {
	if len(registries) == 0 {
		registries = []string{""}
	}
	regs := make([]string, len(registries))
	for i, r := range registries {
		regs[i] = NPMRegistryURL(r)
	}
	old := map[string]bool{}
	if len(before) > 0 {
		var doc any
		if err := json.Unmarshal(before, &doc); err != nil {
			return nil, fmt.Errorf("%w: the lockfile before: %v", ErrParse, err)
		}
		walkResolved(doc, "", func(_, v string) { old[v] = true })
	}
	var doc any
	if err := json.Unmarshal(after, &doc); err != nil {
		return nil, fmt.Errorf("%w: the lockfile after: %v", ErrParse, err)
	}
	var out []string
	walkResolved(doc, "", func(at, v string) {
		if old[v] || slices.ContainsFunc(regs, func(reg string) bool { return underRegistry(v, reg) }) {
			return
		}
		out = append(out, fmt.Sprintf("%s (at %s)", safeText(v), safeText(at)))
	})
	sort.Strings(out)
	return out, nil
}

// underRegistry reports whether u is a URL under reg: the same scheme,
// host and port, and a path that begins with reg's.
func underRegistry(u, reg string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.User != nil {
		return false
	}
	pr, err := url.Parse(reg)
	if err != nil {
		return false
	}
	return strings.EqualFold(pu.Scheme, pr.Scheme) && strings.EqualFold(pu.Host, pr.Host) &&
		strings.HasPrefix(pu.EscapedPath(), pr.EscapedPath()) && pu.RawQuery == "" && pu.Fragment == ""
}

// walkResolved calls f with every string value of a "resolved" key in v,
// at any depth (v1 lockfiles nest dependencies), and its JSON path.
func walkResolved(v any, at string, f func(at, value string)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := at + "/" + k
			if s, ok := x[k].(string); ok && k == "resolved" {
				f(at, s)
				continue
			}
			walkResolved(x[k], p, f)
		}
	case []any:
		for i, e := range x {
			walkResolved(e, fmt.Sprintf("%s/%d", at, i), f)
		}
	}
}
