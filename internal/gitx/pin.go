package gitx

import (
	"fmt"
	"slices"
	"strings"
)

// The pins. A clone whose config names a program, or pulls another file in
// with include.path or includeIf.*.path, is accepted only when the operator
// pinned each such key to the exact value it holds (git.allow_config, as
// key=value). A key alone is not enough: the value is the command, and an
// include can take it from a tracked file that the next commit rewrites.
// The pins are checked at start (Pin) and for every linked worktree as it
// is added; after that, the drift check compares every value with the
// baseline, so a pinned value that changes is drift.
//
// Pinned or not, fixrail's own git calls never run a program the clone's
// config names: filters are emptied on every call (neutralArgs), diff
// drivers and textconv are refused by the builder, hooks, fsmonitor, ssh,
// askpass and credential helpers are overridden, no call opens an editor
// or a pager, signs, or merges, and a push names its receive-pack and
// empties any git:// proxy. The sandboxed agent and tests never see the
// clone's git directory. What runs a pinned program is the operator's own
// git in the clone.

// A Pin is one accepted config value: Key as `git config --list` prints it
// (section and variable name lower-case, subsection as written) and the one
// Value it may hold. A key listed with several values needs a pin for each.
type Pin struct {
	Key, Value string
}

// UnpinnedError is a clone whose config holds a program or include key
// with a value no pin accepts. It names keys only: a value may be a token.
type UnpinnedError struct {
	Dir  string   // where git listed the config
	Keys []string // sorted, each once
}

func (e *UnpinnedError) Error() string {
	return fmt.Sprintf("git config in %s names programs or includes no pin accepts: %s", e.Dir, strings.Join(e.Keys, ", "))
}

// needsPin reports a key whose value the operator must pin: one that names
// a program some git would run (an alias that starts with "!" is one), or
// one that makes git read another file.
func needsPin(e configEntry) bool {
	return IsProgramKey(e.Key) || isIncludeKey(e.Key) ||
		(strings.HasPrefix(e.Key, "alias.") && strings.HasPrefix(strings.TrimSpace(e.Value), "!"))
}

// unpinned returns the keys in entries that need a pin and hold a value no
// pin in pins accepts, redacted, sorted, each once. A key written without
// "=" (boolean true) has no value to pin and is never accepted.
func unpinned(entries []configEntry, pins []Pin) []string {
	var keys []string
	for _, e := range entries {
		if !needsPin(e) {
			continue
		}
		if e.HasValue && slices.Contains(pins, Pin{Key: e.Key, Value: e.Value}) {
			continue
		}
		keys = append(keys, redactKey(e.Key))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Pin records pins as the values r's clone may give the keys that need
// one, and checks the baseline against them: every program or include key
// seen from Top (and from any worktree already recorded) must hold a pinned
// value, else an *UnpinnedError. Call it once, after Baseline. Worktrees
// added later are checked as they are added.
func (r *Repo) Pin(pins []Pin) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.baselined {
		return ErrNoBaseline
	}
	r.pins = slices.Clone(pins)
	r.pinned = true
	dirs := make([]string, 0, len(r.base))
	for dir := range r.base {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		if keys := unpinned(r.base[dir], r.pins); keys != nil {
			return &UnpinnedError{Dir: dir, Keys: keys}
		}
	}
	return nil
}

// filterDrivers lists the filter drivers the clone's config names, in any
// listing recorded: the names whose programs every call empties.
func filterDrivers(base map[string][]configEntry) []string {
	var names []string
	for _, entries := range base {
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Key, "filter.")
			if !ok {
				continue
			}
			if i := strings.LastIndexByte(rest, '.'); i > 0 {
				names = append(names, rest[:i])
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// neutralArgs are the -c pairs that keep every filter driver the clone's
// config names from running in fixrail's own calls: an empty clean, smudge
// and process command is no filter at all (git passes the content
// through), and required=false keeps that from being an error. A driver
// name git could not take back from -c (it holds '=') fails the call.
func neutralArgs(drivers []string) ([]string, error) {
	var args []string
	for _, d := range drivers {
		if strings.ContainsAny(d, "=\n\x00") {
			return nil, fmt.Errorf("filter driver %q cannot be overridden on the command line", redactKey(d))
		}
		for _, kv := range []string{".clean=", ".smudge=", ".process=", ".required=false"} {
			args = append(args, "-c", "filter."+d+kv)
		}
	}
	return args, nil
}
