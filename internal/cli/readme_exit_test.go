package cli

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/pipeline"
)

// TestREADMEExitTable holds README's "Terminal states and exit codes" to the
// code: the table's exits are this package's constants with the row's
// meaning, every terminal has the row its exit code says, every reason the
// table lists is one the code defines (and the reverse), in the row of the
// terminal the code ends it in; and every exit the command list under the
// table promises is one a scenario pins, and every non-usage exit a
// scenario pins is promised.
func TestREADMEExitTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseExitSection(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range readmeLies(doc, terminalConsts(t), collectReasons(t, existing(reasonDirs)...), pinnedExits(t)) {
		t.Error(p)
	}
}

// readmeLies lists every way the section disagrees with the code.
func readmeLies(doc *exitSection, terminals []string, reasons map[string]*reasonInfo, pinned []pinnedExit) []string {
	var p problems
	checkExitRows(&p, doc.rows, terminals)
	checkReasons(&p, doc.rows, reasons)
	checkCommandList(&p, doc.commands, pinned)
	return p
}

type problems []string

func (p *problems) Errorf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// reasonDirs are the packages whose constants end a run, relative to
// internal/cli.
// Those missing are skipped (verdict holds the reasons once they move).
var reasonDirs = []string{"../pipeline", "../verdict", "../gates", "../runner", "../ledger", "../risk", "../fixtype"}

// neverTerminal are reason-shaped constants no run ends with, and why.
var neverTerminal = map[string]string{
	"runner-canceled": "the runner says it only when the run's context is done, and the pipeline asks stopped() first, which ends the run interrupted or wall-clock",
}

type exitRow struct {
	exit    int
	state   string // a Terminal, or "—"
	when    string
	reasons []string
}

type commandExits struct {
	key   []string // "receipts verify" → [receipts verify]
	codes []int
	line  string
}

type exitSection struct {
	rows     []exitRow
	commands []commandExits
}

var backticked = regexp.MustCompile("`([^`]+)`")

// parseExitSection reads the section's `| exit | state | when | reasons |`
// table and the "- `command`: N meaning, N meaning" list under it.
func parseExitSection(readme string) (*exitSection, error) {
	const heading = "## Terminal states and exit codes"
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		return nil, fmt.Errorf("README has no %q section", heading)
	}
	sec := readme[i+len(heading)+2:]
	if j := strings.Index(sec, "\n## "); j >= 0 {
		sec = sec[:j]
	}
	out := &exitSection{}
	inTable := false
	for _, line := range strings.Split(sec, "\n") {
		switch {
		case strings.HasPrefix(line, "| exit | state | when | reasons |"):
			inTable = true
		case inTable && strings.HasPrefix(line, "|---"):
		case inTable && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != 4 {
				return nil, fmt.Errorf("table row %q has %d cells, want 4", line, len(cells))
			}
			n, err := strconv.Atoi(strings.TrimSpace(cells[0]))
			if err != nil {
				return nil, fmt.Errorf("table row %q: exit %v", line, err)
			}
			row := exitRow{exit: n, state: strings.TrimSpace(cells[1]), when: strings.TrimSpace(cells[2])}
			for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
				row.reasons = append(row.reasons, m[1])
			}
			out.rows = append(out.rows, row)
		case strings.HasPrefix(line, "- `"):
			inTable = false
			m := regexp.MustCompile("^- `([^`]+)`: (.*)$").FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("command line %q is not \"- `command`: N meaning, …\"", line)
			}
			c := commandExits{key: strings.Fields(m[1]), line: line}
			for _, part := range regexp.MustCompile(`[,;] `).Split(m[2], -1) {
				if f := strings.Fields(part); len(f) > 0 {
					if n, err := strconv.Atoi(f[0]); err == nil {
						c.codes = append(c.codes, n)
					}
				}
			}
			if len(c.codes) == 0 {
				return nil, fmt.Errorf("command line %q names no exit code", line)
			}
			out.commands = append(out.commands, c)
		default:
			inTable = false
		}
	}
	if len(out.rows) == 0 {
		return nil, fmt.Errorf("no `| exit | state | when | reasons |` table under %q", heading)
	}
	return out, nil
}

// checkExitRows: each terminal has exactly one row, whose exit is the code's;
// the "—" rows are usage and internal; the exit numbers are the constants.
func checkExitRows(t *problems, rows []exitRow, terminals []string) {
	seen := map[string]int{}
	var exits []int
	for _, r := range rows {
		exits = append(exits, r.exit)
		switch {
		case r.state == "—" && strings.HasPrefix(r.when, "usage error"):
			if r.exit != exitUsage {
				t.Errorf("README: usage error exits %d, the code %d", r.exit, exitUsage)
			}
		case r.state == "—" && strings.HasPrefix(r.when, "internal error"):
			if r.exit != exitInternal {
				t.Errorf("README: internal error exits %d, the code %d", r.exit, exitInternal)
			}
		case r.state == "—":
			t.Errorf("README: row %d %q is neither a terminal nor usage/internal error", r.exit, r.when)
		default:
			seen[r.state]++
			if !slices.Contains(terminals, r.state) {
				t.Errorf("README: state %s is not a pipeline.Terminal (%v)", r.state, terminals)
			}
			if got := exitCode(&terminalError{pipeline.Terminal(r.state)}); got != r.exit {
				t.Errorf("README: %s exits %d, the code %d", r.state, r.exit, got)
			}
		}
	}
	for _, term := range terminals {
		if seen[term] != 1 {
			t.Errorf("README: terminal %s has %d rows, want 1", term, seen[term])
		}
	}
	want := []int{exitOK, exitInternal, exitUsage, exitHalt, exitNotRepro, exitEscalate, exitBlock, exitFound}
	sort.Ints(want)
	want = slices.Compact(want)
	sort.Ints(exits)
	if !slices.Equal(exits, want) {
		t.Errorf("README table exits %v, the code's constants %v", exits, want)
	}
}

// checkReasons compares the table's reasons with the code's: the same set,
// and a reason the code ends in fixed terminals sits in exactly those rows.
func checkReasons(t *problems, rows []exitRow, code map[string]*reasonInfo) {
	readme := map[string][]string{} // reason → README terminals
	for _, r := range rows {
		for _, reason := range r.reasons {
			if r.state == "—" {
				t.Errorf("README: reason %s in the %d row, which ends no run", reason, r.exit)
			}
			readme[reason] = append(readme[reason], r.state)
		}
	}
	for _, reason := range sortedKeys(readme) {
		if code[reason] == nil {
			t.Errorf("README lists reason %s, which no constant in %v defines", reason, reasonDirs)
		}
	}
	for reason, why := range neverTerminal {
		if code[reason] == nil {
			t.Errorf("neverTerminal lists %s, which the code no longer defines", reason)
		}
		if readme[reason] != nil {
			t.Errorf("README lists reason %s, which never ends a run: %s", reason, why)
		}
	}
	for _, reason := range sortedKeys(code) {
		info := code[reason]
		got := readme[reason]
		if _, ok := neverTerminal[reason]; ok {
			continue
		}
		if got == nil {
			t.Errorf("%s = %q ends a run, but README's table does not list it", info.name, reason)
			continue
		}
		if len(info.terminals) == 0 {
			continue // the code decides the terminal at run time
		}
		want := sortedKeys(info.terminals)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q ends a run in %v (%s), README's table lists it under %v", info.name, reason, want, strings.Join(info.where(), ", "), got)
		}
	}
}

// checkCommandList: each promised (command, exit) is pinned by a scenario
// (`fixrail-exit N command …`, or `exec fixrail command …` for 0), and each
// exit other than 0, 1 and 2 (which every command has) that a scenario pins
// for a command outside run and demo (the table covers those) is promised
// in the most specific line that matches it.
func checkCommandList(t *problems, list []commandExits, pinned []pinnedExit) {
	for _, c := range list {
		if lookup(c.key[0]) == nil {
			t.Errorf("README: %q names no command", c.line)
		}
		for _, code := range c.codes {
			if !slices.Contains([]int{exitOK, exitInternal, exitUsage, exitHalt, exitNotRepro, exitEscalate}, code) {
				t.Errorf("README: %q: exit %d is not in the table", c.line, code)
			}
			if !slices.ContainsFunc(pinned, func(p pinnedExit) bool { return p.code == code && p.matches(c.key) }) {
				t.Errorf("README: %q promises exit %d, which no scenario pins", c.line, code)
			}
		}
	}
	for _, p := range pinned {
		if p.code <= exitUsage || p.args[0] == "run" || p.args[0] == "demo" || lookup(p.args[0]) == nil {
			continue
		}
		var best *commandExits
		for i := range list {
			if p.matches(list[i].key) && (best == nil || len(list[i].key) > len(best.key)) {
				best = &list[i]
			}
		}
		switch {
		case best == nil:
			t.Errorf("%s pins `fixrail %s` exit %d; README's command list has no line for it", p.where, strings.Join(p.args, " "), p.code)
		case !slices.Contains(best.codes, p.code):
			t.Errorf("%s pins `fixrail %s` exit %d; README's %q does not promise it", p.where, strings.Join(p.args, " "), p.code, best.line)
		}
	}
}

type pinnedExit struct {
	code  int
	args  []string
	where string
}

// matches: the first word is the command and the rest of key occurs in the
// arguments.
func (p pinnedExit) matches(key []string) bool {
	if len(p.args) == 0 || p.args[0] != key[0] {
		return false
	}
	for _, k := range key[1:] {
		if !slices.Contains(p.args[1:], k) {
			return false
		}
	}
	return true
}

func pinnedExits(t *testing.T) []pinnedExit {
	t.Helper()
	var out []pinnedExit
	for _, dir := range []string{"testdata/script", "testdata/cve"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no scenarios in %s: %v", dir, err)
		}
		for _, name := range files {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			for n := 1; sc.Scan(); n++ {
				line := sc.Text()
				if strings.HasPrefix(line, "-- ") {
					break // the archive's files begin
				}
				fs := strings.Fields(line)
				where := name + ":" + strconv.Itoa(n)
				switch {
				case len(fs) >= 3 && fs[0] == "fixrail-exit":
					code, err := strconv.Atoi(fs[1])
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					out = append(out, pinnedExit{code, fs[2:], where})
				case len(fs) >= 3 && fs[0] == "exec" && fs[1] == "fixrail":
					out = append(out, pinnedExit{0, fs[2:], where})
				}
			}
			f.Close()
		}
	}
	return out
}

// reasonInfo is one reason code the code defines.
type reasonInfo struct {
	name      string              // pkg.Const, or the gate that carries it
	terminals map[string][]string // terminal → file:line where the code fixes it
}

func (r *reasonInfo) where() []string {
	var out []string
	for _, term := range sortedKeys(r.terminals) {
		out = append(out, term+" at "+strings.Join(r.terminals[term], " "))
	}
	return out
}

type goFile struct {
	pkg  string
	file *ast.File
	fset *token.FileSet
}

// pos is n's file:line, for messages that point at the stop.
func (gf goFile) pos(n ast.Node) string {
	p := gf.fset.Position(n.Pos())
	return filepath.Base(p.Filename) + ":" + strconv.Itoa(p.Line)
}

func parseDirs(t *testing.T, dirs ...string) []goFile {
	t.Helper()
	fset := token.NewFileSet()
	var out []goFile
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, goFile{pkg: f.Name.Name, file: f, fset: fset})
		}
	}
	return out
}

// terminalConsts are pipeline's constants of type Terminal, by value.
func terminalConsts(t *testing.T) []string {
	var out []string
	for _, v := range terminalIdents(parseDirs(t, existing(reasonDirs)...)) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("no Terminal constants in %v", reasonDirs)
	}
	return out
}

// terminalIdents maps "pipeline.Halt" to "HALT" for every constant of a
// type named Terminal, and for every constant that names one
// (pipeline's Halt = verdict.Halt).
func terminalIdents(files []goFile) map[string]string {
	out := map[string]string{}
	alias := map[string]string{} // "pipeline.Halt" → "verdict.Halt"
	for _, gf := range files {
		eachConst(gf, func(name string, typ, val ast.Expr) {
			key := gf.pkg + "." + name
			if id, ok := typ.(*ast.Ident); ok && id.Name == "Terminal" {
				if s, ok := stringLit(val); ok {
					out[key] = s
					return
				}
			}
			switch v := val.(type) {
			case *ast.Ident:
				alias[key] = gf.pkg + "." + v.Name
			case *ast.SelectorExpr:
				if x, ok := v.X.(*ast.Ident); ok {
					alias[key] = x.Name + "." + v.Sel.Name
				}
			}
		})
	}
	for changed := true; changed; {
		changed = false
		for k, target := range alias {
			if v, ok := out[target]; ok && out[k] == "" {
				out[k], changed = v, true
			}
		}
	}
	return out
}

// existing is the dirs that exist: a package may be split or merged (the
// reasons moving to a package of their own) without this test lying.
func existing(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// collectReasons finds every reason code in dirs: string constants named
// Reason*, runner's Kind constants, and the Reason of each Gate literal;
// then, where the code fixes it, the terminal each ends in: a call with a
// Terminal and a reason among its arguments (stop(Halt, ReasonX, …)), such
// a call with a run-time reason inside `if … == ReasonX`, and a gate
// (HALT when it is marked Halt, else ESCALATE, as the gate runner does).
func collectReasons(t *testing.T, dirs ...string) map[string]*reasonInfo {
	t.Helper()
	files := parseDirs(t, dirs...)
	terms := terminalIdents(files)
	consts := map[string]ast.Expr{} // "pkg.Name" → value
	isReason := map[string]bool{}
	for _, gf := range files {
		eachConst(gf, func(name string, typ, val ast.Expr) {
			key := gf.pkg + "." + name
			consts[key] = val
			kind := false
			switch typ := typ.(type) {
			case *ast.Ident: // runner.Kind; a Reason type, should reasons get one
				kind = typ.Name == "Kind" && gf.pkg == "runner" || typ.Name == "Reason"
			case *ast.SelectorExpr:
				kind = typ.Sel.Name == "Reason"
			}
			if strings.HasPrefix(name, "Reason") || kind {
				isReason[key] = true
			}
		})
	}
	// resolve follows a constant to its string; ok is false for anything
	// decided at run time.
	var resolve func(pkg string, e ast.Expr, depth int) (key, val string, ok bool)
	resolve = func(pkg string, e ast.Expr, depth int) (string, string, bool) {
		if depth > 8 {
			return "", "", false
		}
		switch e := e.(type) {
		case *ast.BasicLit:
			s, ok := stringLit(e)
			return "", s, ok
		case *ast.Ident:
			key := pkg + "." + e.Name
			if v, ok := consts[key]; ok {
				_, s, ok := resolve(pkg, v, depth+1)
				return key, s, ok
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				key := x.Name + "." + e.Sel.Name
				if v, ok := consts[key]; ok {
					_, s, ok := resolve(x.Name, v, depth+1)
					return key, s, ok
				}
			}
		case *ast.CallExpr: // string(runner.Unavailable)
			if id, ok := e.Fun.(*ast.Ident); ok && id.Name == "string" && len(e.Args) == 1 {
				return resolve(pkg, e.Args[0], depth+1)
			}
		}
		return "", "", false
	}
	out := map[string]*reasonInfo{}
	add := func(val, name string) *reasonInfo {
		if out[val] == nil {
			out[val] = &reasonInfo{name: name, terminals: map[string][]string{}}
		}
		return out[val]
	}
	for key := range isReason {
		pkg, _, _ := strings.Cut(key, ".")
		if _, val, ok := resolve(pkg, consts[key], 0); ok {
			add(val, key)
		}
	}
	terminalOf := func(gf goFile, e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.Ident:
			v, ok := terms[gf.pkg+"."+e.Name]
			return v, ok
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				v, ok := terms[x.Name+"."+e.Sel.Name]
				return v, ok
			}
		}
		return "", false
	}
	// reasonOf resolves e to a reason the code defines.
	reasonOf := func(gf goFile, e ast.Expr) (string, bool) {
		key, val, ok := resolve(gf.pkg, e, 0)
		if !ok || (!isReason[key] && out[val] == nil) {
			return "", false // a detail string, or a constant that is no reason
		}
		return val, true
	}
	// termAndReason finds a terminal and a reason among args: a reason fixed
	// there, or one chosen at run time under `if … == ReasonX` (guard).
	termAndReason := func(gf goFile, args []ast.Expr, guard string) (term, reason string) {
		dynamic := false
		for _, a := range args {
			if v, ok := terminalOf(gf, a); ok {
				term = v
			} else if r, ok := reasonOf(gf, a); ok && reason == "" {
				reason = r
			} else if isRunTimeReason(a) {
				dynamic = true
			}
		}
		if reason == "" && (dynamic || term != "") {
			reason = guard // if re.Kind == runner.Unconfined { o.Terminal = Escalate }
		}
		if out[reason] == nil {
			return "", ""
		}
		return term, reason
	}
	for _, gf := range files {
		pos := func(n ast.Node) string { return gf.pos(n) }
		// Gate literals first: they define reasons as well as fix them.
		ast.Inspect(gf.file, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || !isGateType(cl.Type) {
				return true
			}
			var reason, term string
			halt := false
			for _, el := range cl.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				k, _ := kv.Key.(*ast.Ident)
				switch {
				case k == nil:
				case k.Name == "Reason":
					if _, v, ok := resolve(gf.pkg, kv.Value, 0); ok {
						reason = v
					}
				case k.Name == "Halt":
					id, _ := kv.Value.(*ast.Ident)
					halt = id != nil && id.Name == "true"
				default:
					if v, ok := terminalOf(gf, kv.Value); ok {
						term = v
					}
				}
			}
			if reason == "" {
				return true
			}
			if term == "" {
				term = string(pipeline.Escalate)
				if halt {
					term = string(pipeline.Halt)
				}
			}
			ri := add(reason, gf.pkg+" gate "+pos(cl))
			ri.terminals[term] = append(ri.terminals[term], pos(cl))
			// A reason its run returns without a terminal of its own
			// (fail(ReasonX, …), Verdict{Reason: ReasonX}) ends in the gate's.
			ast.Inspect(cl, func(n ast.Node) bool {
				var args []ast.Expr
				switch n := n.(type) {
				case *ast.CallExpr:
					args = n.Args
				case *ast.CompositeLit:
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							args = append(args, kv.Value)
						}
					}
				}
				if t, r := termAndReason(gf, args, ""); r != "" && t == "" {
					out[r].terminals[term] = append(out[r].terminals[term], pos(n))
				}
				return true
			})
			return true
		})
	}
	for _, gf := range files {
		pos := func(n ast.Node) string { return gf.pos(n) }
		var visit func(n ast.Node, guard string) bool
		visit = func(n ast.Node, guard string) bool {
			switch n := n.(type) {
			case *ast.IfStmt:
				g := guard
				if be, ok := n.Cond.(*ast.BinaryExpr); ok && be.Op == token.EQL {
					for _, side := range []ast.Expr{be.X, be.Y} {
						if r, ok := reasonOf(gf, side); ok {
							g = r
						}
					}
				}
				if n.Init != nil {
					ast.Inspect(n.Init, func(m ast.Node) bool { return visit(m, guard) })
				}
				ast.Inspect(n.Body, func(m ast.Node) bool { return visit(m, g) })
				if n.Else != nil {
					ast.Inspect(n.Else, func(m ast.Node) bool { return visit(m, guard) })
				}
				return false
			case *ast.CompositeLit:
				if isGateType(n.Type) {
					return true // read above
				}
				// A table from reason to terminal ({runner.X: Halt}), a
				// struct with both (Outcome{Terminal: Halt, Reason: …}), or
				// a row of one ({ReasonX, Halt}).
				var keyed, row []ast.Expr
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						row = append(row, el)
						continue
					}
					if r, ok := reasonOf(gf, kv.Key); ok {
						if term, ok := terminalOf(gf, kv.Value); ok {
							out[r].terminals[term] = append(out[r].terminals[term], pos(kv))
						}
						continue
					}
					keyed = append(keyed, kv.Value)
				}
				for _, args := range [][]ast.Expr{keyed, row} {
					if term, reason := termAndReason(gf, args, guard); term != "" && reason != "" {
						out[reason].terminals[term] = append(out[reason].terminals[term], pos(n))
					}
				}
			case *ast.AssignStmt: // o.Terminal, o.Reason = Halt, ReasonX
				if term, reason := termAndReason(gf, n.Rhs, guard); term != "" && reason != "" {
					out[reason].terminals[term] = append(out[reason].terminals[term], pos(n))
				}
			case *ast.CallExpr:
				if term, reason := termAndReason(gf, n.Args, guard); term != "" && reason != "" {
					out[reason].terminals[term] = append(out[reason].terminals[term], pos(n))
				}
			}
			return true
		}
		ast.Inspect(gf.file, func(n ast.Node) bool { return visit(n, "") })
	}
	return out
}

func isGateType(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "Gate"
	case *ast.SelectorExpr:
		return e.Sel.Name == "Gate"
	}
	return false
}

// isRunTimeReason is string(x), x.Reason or x.Kind: a reason chosen at run
// time, which an enclosing `if … == ReasonX` may fix.
func isRunTimeReason(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		id, ok := e.Fun.(*ast.Ident)
		return ok && id.Name == "string"
	case *ast.SelectorExpr:
		return e.Sel.Name == "Reason" || e.Sel.Name == "Kind"
	}
	return false
}

func eachConst(gf goFile, fn func(name string, typ, val ast.Expr)) {
	for _, d := range gf.file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					fn(n.Name, vs.Type, vs.Values[i])
				}
			}
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestREADMEExitTableCatchesLies edits a copy of the README the ways it
// could drift from the code and requires each edit to be caught.
func TestREADMEExitTableCatchesLies(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	terminals, reasons, pinned := terminalConsts(t), collectReasons(t, existing(reasonDirs)...), pinnedExits(t)
	rowOf := func(prefix string) string {
		for _, l := range strings.Split(readme, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("README has no row %q", prefix)
		return ""
	}
	// drop takes reason out of the row starting with from.
	drop := func(reason, from string) func(string) string {
		return func(s string) string {
			f := rowOf(from)
			nf := strings.Replace(f, "`"+reason+"`, ", "", 1)
			if nf == f {
				nf = strings.Replace(f, ", `"+reason+"`", "", 1)
			}
			if nf == f {
				nf = strings.Replace(f, "`"+reason+"`", "", 1)
			}
			if nf == f {
				t.Fatalf("row %q does not list %s", from, reason)
			}
			return strings.Replace(s, f, nf, 1)
		}
	}
	// addTo appends reason to the row starting with to.
	addTo := func(reason, to string) func(string) string {
		return func(s string) string {
			tr := rowOf(to)
			return strings.Replace(s, tr, strings.TrimSuffix(tr, " |")+", `"+reason+"` |", 1)
		}
	}
	move := func(reason, from, to string) func(string) string {
		return func(s string) string { return addTo(reason, to)(drop(reason, from)(s)) }
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("README has no %q", old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"a terminal's exit", replace("| 4 | NOT-REPRO |", "| 3 | NOT-REPRO |"), "NOT-REPRO exits 3, the code 4"},
		{"usage's exit", replace("| 2 | — | usage error", "| 1 | — | usage error"), "usage error exits 1"},
		{"a fifth state", replace("| 2 | — | usage error", "| 2 | BLOCKED | usage error"), "BLOCKED is not a pipeline.Terminal"},
		{"an invented reason", addTo("fixed-probably", "| 0 | DRAFT-PR |"), "README lists reason fixed-probably, which no constant"},
		{"a missing reason", drop("leak", "| 5 | ESCALATE |"), `"leak" ends a run, but README's table does not list it`},
		{"a reason in the wrong row", move("green-on-base", "| 4 | NOT-REPRO |", "| 5 | ESCALATE |"), `"green-on-base" ends a run in [NOT-REPRO]`},
		{"the fixed reason as HALT", move("fixed", "| 0 | DRAFT-PR |", "| 3 | HALT |"), `"fixed" ends a run in [DRAFT-PR]`},
		{"a two-terminal reason in one row", drop("check-error", "| 3 | HALT |"), `"check-error" ends a run in [ESCALATE HALT]`},
		{"a gate's HALT as ESCALATE", move("diff-budget", "| 3 | HALT |", "| 5 | ESCALATE |"), `"diff-budget" ends a run in [HALT]`},
		{"runner-unconfined as HALT", move("runner-unconfined", "| 5 | ESCALATE |", "| 3 | HALT |"), `"runner-unconfined" ends a run in [ESCALATE]`},
		{"a ledger reason in the wrong row", move("budget-unreadable", "| 3 | HALT |", "| 5 | ESCALATE |"), `"budget-unreadable" ends a run in [HALT]`},
		{"a reason no run ends with", addTo("runner-canceled", "| 3 | HALT |"), "runner-canceled, which never ends a run"},
		{"a command's exit", replace("- `doctor`: 0 a run would start, 3 it would not", "- `doctor`: 0 a run would start, 4 it would not"), "promises exit 4, which no scenario pins"},
		{"a pinned exit left out", replace("- `doctor`: 0 a run would start, 3 it would not\n", ""), "pins `fixrail doctor --repo repo` exit 3; README's command list has no line for it"},
		{"a command that does not exist", replace("- `doctor`:", "- `doktor`:"), "names no command"},
		{"an exit outside the table", replace("`approve`: 0 signed, 3 the owner said no", "`approve`: 0 signed, 3 the owner said no, 7 sometimes"), "exit 7 is not in the table"},
	} {
		doc, err := parseExitSection(tc.edit(readme))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		lies := readmeLies(doc, terminals, reasons, pinned)
		if !slices.ContainsFunc(lies, func(l string) bool { return strings.Contains(l, tc.want) }) {
			t.Errorf("%s: not caught; want a problem containing %q, got %q", tc.name, tc.want, lies)
		}
	}
}

// TestCollectReasons runs the collector over source written here, so a
// change in how the pipeline spells a stop that it no longer sees fails.
func TestCollectReasons(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"pipeline/terminal.go": `package pipeline
type Terminal string
const (
	Halt     Terminal = "HALT"
	Escalate Terminal = "ESCALATE"
)
const (
	ReasonA = "a"
	ReasonB = "b"
	ReasonAlias = ledger.ReasonL
	notAReason = "x"
)
func stop(t Terminal, r, d string) {}
func f(k runner.Kind, g *gates.Gate) {
	stop(Halt, ReasonA, "")
	stop(Escalate, ReasonA, "")
	stop(Halt, string(runner.Gone), "")
	if k == runner.Out {
		stop(Escalate, string(k), "")
	}
	stop(Halt, string(k), "")
	stop(Halt, ReasonAlias, "")
	stop(Halt, notAReason, "")
	stop(Escalate, g.Reason, "")
	_ = &Outcome{Terminal: NotRepro, Reason: ReasonC, Detail: ""}
	_ = map[runner.Kind]Terminal{runner.Mapped: Escalate}
	_ = []struct{ r string; t Terminal }{{ReasonD, Halt}}
	o := stop(Halt, string(k), "")
	if k == runner.Late {
		o.Terminal = Escalate
	}
	o.Terminal, o.Reason = Halt, verdict.ReasonV
	_ = &gates.Gate{Name: "budget", Reason: ReasonA, Fails: NotRepro, Run: func() { fail(ReasonE, "") }}
}
`,
		"verdict/verdict.go": `package verdict
type Terminal string
const (
	Halt Terminal = "HALT"
	Escalate Terminal = "ESCALATE"
	NotRepro Terminal = "NOT-REPRO"
)
const ReasonV = "v"
`,
		"pipeline/reasons.go": `package pipeline
type Reason string
const (
	Typed Reason = "typed"
	ReasonC = "c"
	ReasonD = "d"
	ReasonE = "e"
)
const NotRepro = verdict.NotRepro
`,
		"ledger/config.go": `package ledger
const ReasonL = "l"
`,
		"runner/runner.go": `package runner
type Kind string
const (
	Gone Kind = "gone"
	Out  Kind = "out"
	Idle Kind = "idle"
	Mapped Kind = "mapped"
	Late Kind = "late"
)
`,
		"gates/g.go": `package gates
var G1 = &Gate{Name: "g1", Reason: "g-esc"}
var G2 = &Gate{Name: "g2", Reason: "g-halt", Halt: true}
`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var dirs []string
	for _, d := range []string{"pipeline", "verdict", "ledger", "runner", "gates"} {
		dirs = append(dirs, filepath.Join(dir, d))
	}
	got := map[string][]string{}
	for r, info := range collectReasons(t, dirs...) {
		got[r] = sortedKeys(info.terminals)
	}
	want := map[string][]string{
		"a":      {"ESCALATE", "HALT", "NOT-REPRO"}, // NOT-REPRO: the budget gate's
		"e":      {"NOT-REPRO"},                     // returned by the gate's run
		"v":      {"HALT"},
		"late":   {"ESCALATE"},
		"b":      {}, // defined, never fixed: presence only
		"l":      {"HALT"},
		"gone":   {"HALT"},
		"out":    {"ESCALATE"},
		"idle":   {}, // chosen at run time
		"g-esc":  {"ESCALATE"},
		"g-halt": {"HALT"},
		"typed":  {},
		"c":      {"NOT-REPRO"},
		"d":      {"HALT"},
		"mapped": {"ESCALATE"},
	}
	if len(got) != len(want) {
		t.Errorf("reasons %v, want %v", got, want)
	}
	for r, w := range want {
		if g, ok := got[r]; !ok || !slices.Equal(g, w) {
			t.Errorf("reason %s: terminals %v (found %v), want %v", r, g, ok, w)
		}
	}
}

// TestUsageExitCodes holds `fixrail --help`'s exit-code lines to the table.
func TestUsageExitCodes(t *testing.T) {
	var b strings.Builder
	usage(&b)
	_, text, ok := strings.Cut(b.String(), "Exit codes:\n")
	if !ok {
		t.Fatal("usage has no Exit codes: section")
	}
	want := map[int]func(string) bool{
		exitOK:       func(s string) bool { return strings.Contains(s, string(pipeline.DraftPR)) },
		exitInternal: func(s string) bool { return strings.HasPrefix(s, "internal") },
		exitUsage:    func(s string) bool { return strings.HasPrefix(s, "usage") },
		exitHalt:     func(s string) bool { return strings.Contains(s, string(pipeline.Halt)) },
		exitNotRepro: func(s string) bool { return strings.Contains(s, string(pipeline.NotRepro)) },
		exitEscalate: func(s string) bool { return strings.Contains(s, string(pipeline.Escalate)) },
	}
	seen := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)(?:^|\s{2,})(\d)  (\S+(?: \S+)*)`).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		check, ok := want[n]
		switch {
		case !ok:
			t.Errorf("usage lists exit %d, which is no constant", n)
		case !check(m[2]):
			t.Errorf("usage says exit %d is %q", n, m[2])
		}
		seen[n] = true
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("usage does not list exit %d", n)
		}
	}
}
