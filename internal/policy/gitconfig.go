package policy

import (
	"bytes"
	"fmt"
	"strings"
)

// A git configuration file named on the command line (GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM, -c include.path=FILE) is configuration git applies
// to this call: a core.fsmonitor or filter.*.smudge in it runs as surely
// as one given with -c. The file is read, line by line, for a variable
// that names a command, a destination or more configuration. The reading
// is deliberately narrower than git's: any line it does not recognise
// (a continuation, a key on a section's line, a quoted section it cannot
// close) makes the file unresolvable, so a line git reads one way cannot be
// read here another to hide a key.

// gitConfigFile judges a configuration file git reads for this call.
func (a *analyzer) gitConfigFile(f field, c *cmd, how string) {
	if f.dyn {
		a.all(fmt.Sprintf("%s names a git configuration file only known at run time (%s)", how, f))
		return
	}
	if f.s == "" || f.s == "/dev/null" {
		return
	}
	p, ok := a.fileOnDisk(a.expandTilde(f.s), c.st, how, "reads")
	if !ok {
		return
	}
	b, ok := readSmall(p, maxScript)
	if !ok {
		a.all(fmt.Sprintf("%s reads %s, which cannot be read to check it", how, p))
		return
	}
	if key, ok := gitConfigRisk(b); ok {
		a.all(fmt.Sprintf("%s reads %s, which sets %s (git may run a command, go elsewhere or read more configuration)", how, p, key))
	}
}

// gitConfigRisk returns the first variable in a git configuration file
// that names a command, a destination or more configuration, or the first
// line it cannot read; ok is false when the file sets none.
func gitConfigRisk(b []byte) (key string, ok bool) {
	if bytes.IndexByte(b, 0) >= 0 {
		return "binary content", true
	}
	section := ""
	for n, line := range strings.Split(string(b), "\n") {
		s := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if strings.HasSuffix(s, `\`) {
			return fmt.Sprintf("a continued line (line %d)", n+1), true
		}
		if s[0] == '[' {
			end := strings.IndexByte(s, ']')
			if end < 0 || (strings.TrimSpace(s[end+1:]) != "" && !commentStart(strings.TrimSpace(s[end+1:]))) {
				return fmt.Sprintf("a section line it cannot read (line %d)", n+1), true
			}
			head := strings.TrimSpace(s[1:end])
			name, _, _ := strings.Cut(head, " ")
			name, _, _ = strings.Cut(name, "\t")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(name)
			continue
		}
		name, _, _ := strings.Cut(s, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !gitVarName(name) {
			return fmt.Sprintf("a line it cannot read (line %d)", n+1), true
		}
		if section == "" {
			return fmt.Sprintf("a variable outside a section (line %d)", n+1), true
		}
		if gitRiskyVar(section, name) {
			return section + "." + name, true
		}
	}
	return "", false
}

func commentStart(s string) bool { return s[0] == '#' || s[0] == ';' }

// gitVarName reports whether s is a variable name as git accepts one:
// a letter, then letters, digits and hyphens.
func gitVarName(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

// gitRiskyVar reports whether a variable, by its section and its name
// whatever the subsection, names a command git runs, a destination it
// pushes or fetches through, or more configuration: the keys gitExecKey
// and gitConfigExec judge on a command line.
func gitRiskyVar(section, name string) bool {
	switch section {
	case "alias", "include", "includeif", "filter", "url", "pager":
		return true
	}
	switch name {
	case "fsmonitor", "sshcommand", "pager", "editor", "askpass", "gitproxy", "hookspath", "worktree",
		"external", "textconv", "command", "driver", "helper", "program", "packobjectshook", "templatedir",
		"uploadpack", "receivepack", "push", "pushurl", "proxy", "insteadof", "pushinsteadof":
		return true
	}
	return false
}

// gitConfigValue returns the value of section.name in a git configuration
// file, the last one set, read as narrowly as gitConfigRisk reads: a plain
// "name = value" under a plain [section], quotes around the whole value
// removed.
func gitConfigValue(b []byte, section, name string) (string, bool) {
	cur, val, found := "", "", false
	for _, line := range strings.Split(string(b), "\n") {
		s := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			end := strings.IndexByte(s, ']')
			if end < 0 {
				cur = ""
				continue
			}
			cur = strings.ToLower(strings.TrimSpace(s[1:end]))
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok || cur != section || strings.ToLower(strings.TrimSpace(k)) != name {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		val, found = v, true
	}
	return val, found
}
