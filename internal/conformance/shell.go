package conformance

import (
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// script is a run: block parsed as bash, with each ${{ }} replaced by a
// same-length parameter expansion ${____} so that offsets (and so columns)
// are kept and the shell sees a run-time value, which is what it is.
type script struct {
	src    string
	file   *syntax.File
	phExpr map[uint]*expr // offset of a placeholder's "$" → its expression
	vars   map[string]string
	uses   []use // attacker-controllable values the script reads
	calls  []*syntax.CallExpr
	// outTaint is why $GITHUB_OUTPUT receives attacker text; exports the
	// same for names written to $GITHUB_ENV ("*" when the name is computed).
	outTaint string
	outKeys  map[string]string
	exports  map[string]string
}

// use is one read of an attacker-controllable value in a script.
type use struct {
	off    uint
	reason string
	expr   bool // a ${{ }} (template injection), not a shell variable or fetch
}

func placeholder(v string, exprs []*expr) (string, map[uint]*expr) {
	b := []byte(v)
	m := map[uint]*expr{}
	for _, e := range exprs {
		if e.end-e.off < 5 {
			continue
		}
		b[e.off], b[e.off+1], b[e.end-1] = '$', '{', '}'
		for i := e.off + 2; i < e.end-1; i++ {
			if b[i] != '\n' {
				b[i] = '_'
			}
		}
		m[uint(e.off)] = e
	}
	return string(b), m
}

func isPlaceholder(name string) bool {
	return len(name) >= 2 && strings.Trim(name, "_") == ""
}

// parseScript parses a bash run: block. taintOf resolves environment
// variables the step sees.
func parseScript(value string, exprs []*expr, taintOf func(string) string) (*script, error) {
	src, m := placeholder(value, exprs)
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	s := &script{src: src, file: f, phExpr: m, vars: map[string]string{}, exports: map[string]string{}, outKeys: map[string]string{}}
	s.analyse(taintOf)
	return s, nil
}

func (s *script) varTaint(name string, taintOf func(string) string) string {
	if t, ok := s.vars[name]; ok {
		return t
	}
	return taintOf(name)
}

// wordTaint says why the text of node n (a word or a command) carries
// attacker text, with the offset of the first such read.
func (s *script) nodeTaint(n syntax.Node, taintOf func(string) string) (reason string, off uint, isExpr bool) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if reason != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param == nil {
				return true
			}
			if isPlaceholder(n.Param.Value) {
				if e := s.phExpr[n.Dollar.Offset()]; e != nil && e.taint != "" {
					reason, off, isExpr = e.taint, n.Dollar.Offset(), true
				}
				return false
			}
			if t := s.varTaint(n.Param.Value, taintOf); t != "" {
				reason, off = t, n.Dollar.Offset()
			}
		case *syntax.CallExpr:
			if t := fetchTaint(n); t != "" {
				reason, off = t, n.Pos().Offset()
			}
		}
		return true
	})
	return
}

// analyse walks the script in source order, following assignments, reads
// and writes to $GITHUB_OUTPUT and $GITHUB_ENV.
func (s *script) analyse(taintOf func(string) string) {
	seen := map[uint]bool{}
	syntax.Walk(s.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil {
				if t, _, _ := s.nodeTaint(n.Value, taintOf); t != "" {
					s.vars[n.Name.Value] = t
				} else if _, ok := s.vars[n.Name.Value]; !ok {
					s.vars[n.Name.Value] = "" // a clean local shadows the environment
				}
			}
		case *syntax.CallExpr:
			s.calls = append(s.calls, n)
			if t := fetchTaint(n); t != "" && !seen[n.Pos().Offset()] {
				seen[n.Pos().Offset()] = true
				s.uses = append(s.uses, use{off: n.Pos().Offset(), reason: t})
			}
		case *syntax.ParamExp:
			if n.Param == nil || seen[n.Dollar.Offset()] {
				return true
			}
			seen[n.Dollar.Offset()] = true
			if isPlaceholder(n.Param.Value) {
				if e := s.phExpr[n.Dollar.Offset()]; e != nil && e.taint != "" {
					s.uses = append(s.uses, use{off: n.Dollar.Offset(), reason: e.taint, expr: true})
				}
			} else if t := s.varTaint(n.Param.Value, taintOf); t != "" {
				s.uses = append(s.uses, use{off: n.Dollar.Offset(), reason: t})
			}
		}
		return true
	})
	for _, top := range s.file.Stmts {
		out, env := redirectsTo(top)
		if !out && !env {
			continue
		}
		t, _, _ := s.nodeTaint(top, taintOf)
		if t == "" {
			continue
		}
		if out {
			s.outTaint = t
			names := exportNames(top)
			if len(names) == 0 {
				names = []string{"*"}
			}
			for _, n := range names {
				s.outKeys[strings.ToLower(n)] = t
			}
		}
		if env {
			names := exportNames(top)
			if len(names) == 0 {
				names = []string{"*"}
			}
			for _, n := range names {
				s.exports[strings.ToLower(n)] = t
			}
		}
	}
}

// redirectsTo reports whether any statement inside st redirects to
// $GITHUB_OUTPUT or $GITHUB_ENV.
func redirectsTo(st *syntax.Stmt) (out, env bool) {
	syntax.Walk(st, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || r.Word == nil {
			return true
		}
		syntax.Walk(r.Word, func(n syntax.Node) bool {
			if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
				switch pe.Param.Value {
				case "GITHUB_OUTPUT":
					out = true
				case "GITHUB_ENV":
					env = true
				}
			}
			return true
		})
		return true
	})
	return
}

// exportNames reads NAME from echo "NAME=..." and echo "NAME<<EOF".
func exportNames(st *syntax.Stmt) []string {
	var names []string
	syntax.Walk(st, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) < 2 {
			return true
		}
		if name := litPrefix(c.Args[0]); name != "echo" && name != "printf" {
			return true
		}
		for _, a := range c.Args[1:] {
			t := litPrefix(a)
			if strings.HasPrefix(t, "-") {
				continue
			}
			if i := strings.IndexAny(t, "=<"); i > 0 {
				names = append(names, t[:i])
			}
			break
		}
		return true
	})
	return names
}

// litPrefix is the literal text a word starts with (quotes removed), up to
// its first expansion.
func litPrefix(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				b.WriteString(l.Value)
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

// unescapeLit removes the backslashes of an unquoted literal ('\” joins).
func unescapeLit(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// args returns the literal prefixes of a call's words.
func args(c *syntax.CallExpr) []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		out[i] = litPrefix(a)
	}
	return out
}

// fetchTaint recognises commands that read issue or PR text at run time
// (CodeQL's untrusted_gh_command sources) or the event payload file.
func fetchTaint(c *syntax.CallExpr) string {
	a := args(c)
	for _, w := range c.Args {
		if readsEventPath(w) {
			return "the event payload file ($GITHUB_EVENT_PATH)"
		}
	}
	if len(a) < 3 || path.Base(a[0]) != "gh" {
		return ""
	}
	switch {
	case (a[1] == "issue" || a[1] == "pr") && slices.Contains([]string{"view", "list", "status", "diff"}, a[2]):
		return "gh " + a[1] + " " + a[2] + " output (issue or PR text fetched at run time)"
	case a[1] == "search" || a[1] == "api" && slices.ContainsFunc(a[2:], func(s string) bool {
		return strings.Contains(s, "issues") || strings.Contains(s, "pulls") || strings.Contains(s, "comments") || strings.Contains(s, "discussions") || s == "graphql"
	}):
		return "gh " + a[1] + " output (issue or PR text fetched at run time)"
	}
	return ""
}

func readsEventPath(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && pe.Param.Value == "GITHUB_EVENT_PATH" {
			found = true
		}
		return !found
	})
	return found
}

// printers holds syntax printers for reuse: printNode runs per word and
// per node the rules quote, and a new printer is a 4 KB buffer and a tab
// writer. Print resets a printer's state, so a reused one prints as a new
// one does.
var printers = sync.Pool{New: func() any { return syntax.NewPrinter() }}

func printNode(n syntax.Node) string {
	var b strings.Builder
	p := printers.Get().(*syntax.Printer)
	p.Print(&b, n)
	printers.Put(p)
	return b.String()
}

// cmdName resolves the program a call runs, skipping assignments-only
// calls and a few wrappers and package runners (npx, bunx, pnpm dlx, uvx).
// rest are the program's arguments.
func cmdName(c *syntax.CallExpr) (name string, rest []*syntax.Word) {
	ws := c.Args
	for len(ws) > 0 {
		n := path.Base(litPrefix(ws[0]))
		switch n {
		case "env", "sudo", "nohup", "time", "command", "exec", "stdbuf", "srt", "firejail", "unbuffer":
			ws = ws[1:]
			for len(ws) > 0 && (strings.HasPrefix(litPrefix(ws[0]), "-") || strings.Contains(litPrefix(ws[0]), "=")) {
				ws = ws[1:]
			}
			continue
		case "timeout":
			ws = ws[1:]
			for len(ws) > 0 && strings.HasPrefix(litPrefix(ws[0]), "-") {
				ws = ws[1:]
			}
			if len(ws) > 0 {
				ws = ws[1:] // the duration
			}
			continue
		case "npx", "bunx", "pnpx", "uvx":
			ws = ws[1:]
			for len(ws) > 0 && strings.HasPrefix(litPrefix(ws[0]), "-") {
				ws = ws[1:]
			}
			if len(ws) == 0 {
				return "", nil
			}
			return pkgName(litPrefix(ws[0])), ws[1:]
		case "pnpm", "yarn", "bun", "pipx":
			if len(ws) > 1 && (litPrefix(ws[1]) == "dlx" || litPrefix(ws[1]) == "x" || litPrefix(ws[1]) == "run") && len(ws) > 2 {
				return pkgName(litPrefix(ws[2])), ws[3:]
			}
		}
		return n, ws[1:]
	}
	return "", nil
}

// pkgName strips a version from a package spec: @scope/name@1 → @scope/name.
func pkgName(s string) string {
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i]
	}
	return s
}
