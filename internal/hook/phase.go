package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Phase restricts a pipeline phase's agent to the tools and paths the phase
// needs. It is checked before the policy rules, which still apply (a write
// an --allow glob admits can still be self-mod), but a phase hook has no
// approvals: a gate-mode match denies.
type Phase struct {
	// Name is "investigate" or "fix"; see ParsePhase.
	Name string
	// Worktree is the directory the agent works in. Every path a call
	// names must resolve inside it, symbolic links followed.
	Worktree string
	// Allow are the doublestar globs, relative to Worktree and
	// slash-separated, of the files the phase may write. Empty allows no
	// write.
	Allow []string
}

// The phases.
const (
	PhaseInvestigate = "investigate" // read the tree, write the reproducing test (the --allow paths)
	PhaseFix         = "fix"         // read the tree, edit the planned files (the --allow paths)
)

// NewPhase checks a phase's flags and returns it. The worktree must exist;
// globs must be relative doublestar patterns without "..".
func NewPhase(name, worktree string, allow []string) (*Phase, error) {
	if name != PhaseInvestigate && name != PhaseFix {
		return nil, fmt.Errorf("unknown phase %q (want %s or %s)", name, PhaseInvestigate, PhaseFix)
	}
	if worktree == "" {
		return nil, errors.New("--phase needs --worktree")
	}
	wt, err := filepath.Abs(worktree)
	if err != nil {
		return nil, err
	}
	if _, err := filepath.EvalSymlinks(wt); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	for _, g := range allow {
		if g == "" || strings.HasPrefix(g, "/") || strings.Contains(g, "\\") || !doublestar.ValidatePattern(g) {
			return nil, fmt.Errorf("--allow %q: want a relative, slash-separated doublestar glob", g)
		}
		for _, seg := range strings.Split(g, "/") {
			if seg == ".." {
				return nil, fmt.Errorf("--allow %q: \"..\" is not allowed", g)
			}
		}
	}
	return &Phase{Name: name, Worktree: wt, Allow: allow}, nil
}

// Tool classes for the phase check. Claude Code's names first, then Gemini
// CLI's.
var phaseTools = map[string]string{
	"Read": "read", "read_file": "read", "read_many_files": "read",
	"Grep": "search", "search_file_content": "search",
	"Glob": "search", "glob": "search", "list_directory": "search", "LS": "search",
	"Write": "write", "Edit": "write", "MultiEdit": "write", "write_file": "write", "replace": "write",
}

// check returns why the call is outside the phase, or "" when the phase
// admits it. Anything it cannot establish (an odd input, a path that does
// not resolve) is a reason to block.
func (p *Phase) check(c *Call) string {
	class, ok := phaseTools[c.Tool]
	if !ok {
		return fmt.Sprintf("tool %s is not available in this phase (allowed: Read, Grep, Glob; Write, Edit, MultiEdit to %s)", c.Tool, p.allowText())
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(c.Input, &in); err != nil || in == nil {
		return "tool input is not a JSON object"
	}
	str := func(keys ...string) (string, bool, error) {
		for _, k := range keys {
			raw, ok := in[k]
			if !ok || string(raw) == "null" {
				continue
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", false, fmt.Errorf("%s is not a string", k)
			}
			return s, true, nil
		}
		return "", false, nil
	}
	switch class {
	case "read":
		if c.Tool == "read_many_files" {
			return "read_many_files is not supported in a phase; read files one by one"
		}
		path, ok, err := str("file_path", "absolute_path", "path")
		if err != nil {
			return err.Error()
		}
		if !ok {
			return "no file_path"
		}
		if _, _, err := p.resolve(path, c.Cwd); err != nil {
			return "read outside the worktree: " + err.Error()
		}
	case "search":
		path, ok, err := str("path", "dir_path")
		if err != nil {
			return err.Error()
		}
		if !ok || path == "" {
			path = c.Cwd // the tool searches its working directory
		}
		if path == "" {
			return "no path and no cwd: cannot tell what this searches"
		}
		if _, _, err := p.resolve(path, c.Cwd); err != nil {
			return "search outside the worktree: " + err.Error()
		}
	case "write":
		path, ok, err := str("file_path", "absolute_path", "path")
		if err != nil {
			return err.Error()
		}
		if !ok {
			return "no file_path"
		}
		_, rel, err := p.resolve(path, c.Cwd)
		if err != nil {
			return "write outside the worktree: " + err.Error()
		}
		if rel == "." || !p.allowed(rel) {
			return fmt.Sprintf("write to %s: this phase may write only %s", rel, p.allowText())
		}
	}
	return ""
}

func (p *Phase) allowText() string {
	if len(p.Allow) == 0 {
		return "nothing"
	}
	return strings.Join(p.Allow, ", ")
}

func (p *Phase) allowed(rel string) bool {
	for _, g := range p.Allow {
		if ok, err := doublestar.Match(g, rel); err == nil && ok {
			return true
		}
	}
	return false
}

// resolve maps a path from a tool input to its real location and returns it
// with its slash-separated path relative to the real worktree ("." for the
// worktree itself). A relative path is taken from cwd (the worktree when
// cwd is empty). Symbolic links are followed, through the deepest existing
// parent for a path that does not exist yet, and the result must stay in
// the worktree.
func (p *Phase) resolve(path, cwd string) (real, rel string, err error) {
	if path == "" {
		return "", "", errors.New("empty path")
	}
	if strings.ContainsRune(path, 0) {
		return "", "", errors.New("path holds a NUL byte")
	}
	if !filepath.IsAbs(path) {
		base := cwd
		if base == "" {
			base = p.Worktree
		}
		path = filepath.Join(base, path)
	}
	path = filepath.Clean(path)
	realRoot, err := filepath.EvalSymlinks(p.Worktree)
	if err != nil {
		return "", "", fmt.Errorf("worktree: %w", err)
	}
	// The path may name the worktree by the path it was given or by its
	// resolved one; either way it must be beneath it lexically first.
	var r string
	for _, root := range []string{p.Worktree, realRoot} {
		if pathguard.Within(root, path) {
			r, _ = filepath.Rel(root, path) // cannot fail: path is within root
			break
		}
	}
	if r == "" {
		return "", "", fmt.Errorf("%s is not inside %s", path, p.Worktree)
	}
	if r == "." {
		return realRoot, ".", nil
	}
	real, err = pathguard.ResolveWithin(realRoot, filepath.ToSlash(r))
	if err != nil {
		return "", "", err
	}
	rel, err = filepath.Rel(realRoot, real)
	if err != nil {
		return "", "", err
	}
	return real, filepath.ToSlash(rel), nil
}
