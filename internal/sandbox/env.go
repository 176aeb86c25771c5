package sandbox

import (
	"strconv"
	"strings"
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
