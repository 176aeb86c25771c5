package policy

import "strings"

// Database clients' own commands, beside the SQL they send: psql's \! and
// \o |cmd, mysql's system and \!, sqlite3's .shell, .system and
// .output |cmd run a shell command on this machine; their output commands
// (\o FILE, tee FILE, .output FILE, .save FILE) and output options (psql
// -o, -L; mysql --tee) write files.

// sqlClientEffects reads one text a client executes (an argument, or its
// standard input) for the commands it runs and the files it writes.
func sqlClientEffects(client, text string) (runs, writes []string) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		switch client {
		case "psql":
			for _, tok := range []string{`\!`, `\o |`, `\out |`, `\g |`, `\gx |`, `\w |`} {
				if i := strings.Index(line, tok); i >= 0 {
					runs = append(runs, strings.TrimSpace(line[i+len(tok):]))
				}
			}
			for _, tok := range []string{`\o `, `\out `, `\w `, `\write `, `\g `, `\gx `} {
				if i := strings.Index(line, tok); i >= 0 {
					if f := strings.TrimSpace(line[i+len(tok):]); f != "" && !strings.HasPrefix(f, "|") {
						writes = append(writes, strings.Fields(f)[0])
					}
				}
			}
		case "mysql", "mariadb":
			if i := strings.Index(line, `\!`); i >= 0 {
				runs = append(runs, strings.TrimSpace(line[i+2:]))
			} else if rest, ok := cutWordCI(line, "system"); ok {
				runs = append(runs, strings.TrimSuffix(rest, ";"))
			}
			if rest, ok := cutWordCI(line, "pager"); ok && rest != "" {
				runs = append(runs, strings.TrimSuffix(rest, ";"))
			}
			if rest, ok := cutWordCI(line, "tee"); ok && rest != "" {
				writes = append(writes, strings.TrimSuffix(strings.Fields(rest)[0], ";"))
			}
		case "sqlite3":
			if !strings.HasPrefix(line, ".") {
				continue
			}
			f := strings.Fields(line)
			cmd, rest := f[0], strings.TrimSpace(strings.TrimPrefix(line, f[0]))
			switch {
			case cmd == ".shell" || cmd == ".system":
				runs = append(runs, rest)
			case (cmd == ".output" || cmd == ".once" || cmd == ".read" || cmd == ".excel") && strings.HasPrefix(rest, "|"):
				runs = append(runs, strings.TrimSpace(rest[1:]))
			case cmd == ".output" || cmd == ".once" || cmd == ".save" || cmd == ".log":
				if len(f) > 1 && !strings.HasPrefix(f[len(f)-1], "-") {
					writes = append(writes, unquoteSimple(f[len(f)-1]))
				}
			case cmd == ".backup":
				if len(f) > 1 {
					writes = append(writes, unquoteSimple(f[len(f)-1]))
				}
			}
		}
	}
	return runs, writes
}

// cutWordCI cuts a leading word, case-insensitively, when a blank or the
// end follows it.
func cutWordCI(line, word string) (string, bool) {
	if len(line) < len(word) || !strings.EqualFold(line[:len(word)], word) {
		return "", false
	}
	rest := line[len(word):]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

func unquoteSimple(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// sqlClient judges what a database client runs and writes on this machine
// (see sqlClientEffects), from its arguments and its standard input.
func (a *analyzer) sqlClient(c *cmd) {
	client := c.name
	texts := []field{}
	var files []field // statements read from files
	switch client {
	case "psql":
		p := parseOpts(c.args, optSpec{short: "cdfhLopPUTvF", long: []string{"command", "dbname", "file", "host", "log-file", "output",
			"port", "pset", "username", "table-attr", "set", "variable", "field-separator", "record-separator"}})
		texts = append(texts, p.values("-c", "--command")...)
		files = append(files, p.values("-f", "--file")...)
		for _, o := range p.values("-o", "--output", "-L", "--log-file") {
			if strings.HasPrefix(o.s, "|") {
				texts = append(texts, field{s: `\o ` + o.s, dyn: o.dyn})
				continue
			}
			a.writePath(o, c.st, "psql "+o.String())
		}
	case "mysql", "mariadb":
		p := parseOpts(c.args, optSpec{short: "eDhuPpS", long: []string{"execute", "database", "host", "user", "port", "socket", "tee", "pager"}})
		texts = append(texts, p.values("-e", "--execute")...)
		for _, t := range p.values("--tee") {
			a.writePath(t, c.st, "mysql --tee")
		}
		for _, pg := range p.values("--pager") {
			a.runsText(pg, c, "mysql --pager")
		}
	case "sqlite3":
		// sqlite3 [OPTION...] DB [SQL...]: its options take one dash.
		valued := set("-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs", "-maxsize", "-mmap", "-pagecache", "-lookaside", "-heap")
		var ops []field
		for i := 0; i < len(c.args); i++ {
			f := c.args[i]
			switch {
			case valued[f.s] && i+1 < len(c.args):
				i++
				if f.s == "-cmd" {
					texts = append(texts, c.args[i])
				}
				if f.s == "-init" {
					files = append(files, c.args[i])
				}
			case strings.HasPrefix(f.s, "-") && len(ops) == 0:
			default:
				ops = append(ops, f)
			}
		}
		if len(ops) > 1 {
			texts = append(texts, ops[1:]...) // after the database: SQL and dot-commands
		}
	default:
		return
	}
	if c.in.kind == inText {
		texts = append(texts, field{s: c.in.text, dyn: c.in.dyn})
	}
	if c.in.kind == inFile {
		files = append(files, c.in.file)
	}
	for _, t := range texts {
		files = append(files, sqlIncludes(client, t.s)...)
	}
	for _, f := range files {
		if b, ok := a.sqlFile(f, c.st, client); ok {
			if destructiveSQL.MatchString(b) {
				a.add(Destructive, false, "%s reads a destructive statement from %s", client, f)
			}
			texts = append(texts, word(b))
		}
	}
	for _, t := range texts {
		runs, writes := sqlClientEffects(client, t.s)
		for _, r := range runs {
			a.runsText(field{s: r, dyn: strings.Contains(r, dynMark)}, c, client+" runs a shell command")
		}
		for _, w := range writes {
			a.writePath(field{s: w, dyn: strings.Contains(w, dynMark)}, c.st, client+" writes its output")
		}
	}
}

// sqlIncludes returns the files a client's own commands read statements
// from: sqlite3's .read, mysql's source and \. (psql's \i and \ir too).
func sqlIncludes(client, text string) []field {
	var out []field
	for _, line := range strings.Split(text, "\n") {
		for _, stmt := range strings.Split(line, ";") {
			fs := strings.Fields(stmt)
			if len(fs) < 2 {
				continue
			}
			switch cmd := strings.ToLower(fs[0]); {
			case client == "sqlite3" && cmd == ".read",
				(client == "mysql" || client == "mariadb") && (cmd == "source" || cmd == `\.`),
				client == "psql" && (cmd == `\i` || cmd == `\ir` || cmd == `\include`):
				out = append(out, field{s: fs[1], dyn: strings.Contains(fs[1], dynMark)})
			}
		}
	}
	return out
}

// sqlFile reads a file of statements a client runs, as the hook reads a
// small script: a file this command writes first is unresolvable for
// destructive (what is on the disk now is not what will run); one that
// cannot be read is not judged (the client fails on it too).
func (a *analyzer) sqlFile(f field, st *state, client string) (string, bool) {
	if f.dyn {
		a.add(Destructive, true, "%s reads statements from a file named at run time (%s)", client, f)
		return "", false
	}
	p, ok := cleanAbs(st.cwd, a.expandTilde(f.s))
	if !ok {
		return "", false
	}
	if a.written[p] {
		a.add(Destructive, true, "%s reads statements from %s, which this command writes first", client, p)
		return "", false
	}
	b, ok := readSmall(p, 4*maxScript)
	if !ok || strings.IndexByte(string(b), 0) >= 0 {
		return "", false
	}
	return string(b), true
}
