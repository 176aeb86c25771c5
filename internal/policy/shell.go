package policy

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/fsname"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds nesting: each wrapper unwrapped (sudo, env, timeout, ...)
// and each re-parse of shell text (bash -c, eval, heredoc into a shell, ssh
// payload, git alias) costs one level. Deeper input is unresolvable.
const maxDepth = 8

// maxSteps bounds the statements and commands analysed for one call.
const maxSteps = 50000

// dynMark stands in for text only known at run time. It is a private-use
// rune rather than NUL because command substitution output drops NUL bytes.
const dynMark = "\uE000"

// field is one word of a command after shell expansion.
type field struct {
	s   string // the value; run-time parts are replaced by dynMark
	dyn bool   // some part of the word is only known at run time
	src string // for a run-time word, its source text, for reasons
	// out: part of the word is what a command printed — a command or
	// process substitution, or a variable assigned from one.
	out bool
}

func word(s string) field { return field{s: s} }

// optLike reports whether the field is, or could be at run time, an option.
func (f field) optLike() bool {
	return (strings.HasPrefix(f.s, "-") && f.s != "-") || (f.dyn && strings.HasPrefix(f.s, dynMark))
}

func (f field) String() string {
	if f.src != "" {
		return f.src
	}
	return strings.ReplaceAll(f.s, dynMark, "$…")
}

// printers holds syntax printers for reuse: a printer is a 4 KB buffer
// and a tab writer, and source runs for every run-time word. Print resets
// a printer's state, so a reused one prints as a new one does.
var printers = sync.Pool{New: func() any { return syntax.NewPrinter() }}

// source prints a word as written, for reasons.
func source(w *syntax.Word) string {
	var sb strings.Builder
	p := printers.Get().(*syntax.Printer)
	err := p.Print(&sb, w)
	printers.Put(p)
	if err != nil || sb.Len() > 200 {
		return ""
	}
	return sb.String()
}

// rawStrings returns the values of fields with their run-time parts still
// marked, for re-parsing as shell text through dynText.
func rawStrings(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.s
	}
	return out
}

// state is what the analyser knows while walking one shell script.
type state struct {
	cwd    string            // working directory; "" when unknown
	vars   map[string]string // variables whose value is known
	remote bool              // the commands run on another host (ssh payload)
	// outVars are variables that may hold what a command printed
	// (X=$(cat f)): a word that expands one carries that output.
	outVars map[string]bool
	// exported are the variables this script put in the environment of
	// the commands after it (export X=…, declare -x, any assignment after
	// set -a): a program reads them as it reads a VAR=x prefix.
	exported  map[string]bool
	allexport bool
	// dirs is pushd's directory stack below the working directory, top
	// first; dirsUnknown when a branch or an edit left it unknown.
	dirs        []string
	dirsUnknown bool
}

func (s *state) clone() *state {
	c := *s
	c.vars = maps.Clone(s.vars)
	c.outVars = maps.Clone(s.outVars)
	c.exported = maps.Clone(s.exported)
	c.dirs = slices.Clone(s.dirs)
	return &c
}

func (s *state) export(name string) {
	if s.exported == nil {
		s.exported = map[string]bool{}
	}
	s.exported[name] = true
}

// environ is what a command's environment holds beyond the analyser's
// starting point: the variables exported before it, then its own VAR=x
// prefixes over them. An exported variable whose value is not known here
// is in it as a value only known at run time.
func (s *state) environ(prefix map[string]field) map[string]field {
	if len(s.exported) == 0 {
		return prefix
	}
	env := maps.Clone(prefix)
	if env == nil {
		env = map[string]field{}
	}
	for k := range s.exported {
		if _, ok := env[k]; ok {
			continue
		}
		v, known := s.vars[k]
		if !known || s.outVars[k] {
			env[k] = field{s: dynMark, dyn: true}
			continue
		}
		env[k] = word(v)
	}
	return env
}

// merge folds a branch that may or may not have run (the right side of &&
// or ||, a loop or if body, a function body) back into s: whatever the
// branch changed becomes unknown.
func (s *state) merge(b *state) {
	for k, v := range s.vars {
		if bv, ok := b.vars[k]; !ok || bv != v {
			delete(s.vars, k)
		}
	}
	if b.cwd != s.cwd {
		s.setCwd("")
	}
	// What may hold a command's output in either branch may after it;
	// what either exported may be in the environment after it.
	for k := range b.outVars {
		s.setOut(k, true)
	}
	for k := range b.exported {
		s.export(k)
	}
	s.allexport = s.allexport || b.allexport
	if b.dirsUnknown || !slices.Equal(s.dirs, b.dirs) {
		s.dirs, s.dirsUnknown = nil, true
	}
}

// setOut records whether variable name may hold a command's output.
func (s *state) setOut(name string, out bool) {
	switch {
	case out && s.outVars == nil:
		s.outVars = map[string]bool{name: true}
	case out:
		s.outVars[name] = true
	default:
		delete(s.outVars, name)
	}
}

func (s *state) setCwd(dir string) {
	s.cwd = dir
	if dir == "" {
		delete(s.vars, "PWD")
	} else {
		s.vars["PWD"] = dir
	}
}

// input is what a command reads on standard input.
type input struct {
	kind int    // inNone, inText, inFile or inUnknown
	text string // inText: the data
	dyn  bool   // inText: the data is partly computed at run time
	file field  // inFile: the file
}

const (
	inNone    = iota
	inText    // a heredoc, here-string or literal echo piped in
	inFile    // < file
	inUnknown // the output of another command
)

// analyzer collects the matches of one call.
type analyzer struct {
	env       Env
	home      string
	fxHome    string
	keys      string
	secrets   []zone // what no call may read: the keyring directory, the signing keys
	branches  []string
	scratch   []string // resolved on first use: most calls delete nothing
	scratchOK bool
	resolved  map[string]string // resolve's answers within this call
	cwd0      string
	zones     []zone // see zoneList
	zonesOK   bool
	secretsOK bool // a.secrets holds each secret's resolved path too
	names     []nameRule
	inodes    map[fileID]string
	heads     map[string]string
	dirs      map[string][]string        // directory listings read for globs
	linkedIn  map[string]map[string]bool // per directory listed, its entries that are links (dirLinks)

	ms    []Match
	seen  map[Match]bool
	steps int
	texts int // textSubsts in progress, nested
	// bash's dotglob (also set by GLOBIGNORE) lets * match a leading dot;
	// globstar makes ** any number of directories. Once a command turns
	// either on, every glob analysed after it is read so.
	dotglob, globstar bool
	unrolling         int      // for loops being unrolled
	files             []string // script files being analysed, innermost last

	written  map[string]bool // absolute paths written earlier in this call
	madeDirs map[string]bool // of those, the ones mkdir made (nil until one)
	links    []string        // links created earlier in this call
	symlinks []linkPair      // symbolic links made earlier in this call, with their targets
	tags     []string        // git tags created earlier in this call
	remotes  []string        // git remotes pointed at an address earlier in this call
}

func newAnalyzer(env Env, cwd string) *analyzer {
	a := &analyzer{env: env, seen: map[Match]bool{}, written: map[string]bool{}, heads: map[string]string{}, resolved: map[string]string{}}
	if env.Home != "" {
		a.home = filepath.Clean(env.Home)
	}
	if cwd != "" && filepath.IsAbs(cwd) {
		a.cwd0 = filepath.Clean(cwd)
	}
	switch {
	case env.FixrailHome != "":
		a.fxHome = filepath.Clean(env.FixrailHome)
	case a.home != "":
		a.fxHome = filepath.Join(a.home, ".config", "fixrail")
	}
	if a.fxHome != "" {
		a.keys = filepath.Join(a.fxHome, "keys")
		a.secrets = append(a.secrets, zone{rule: SelfMod, what: "fixrail approval keys", comps: splitPath(a.keys), path: a.keys})
	}
	for _, k := range env.SigningKeys {
		if filepath.IsAbs(k) {
			a.secrets = append(a.secrets, zone{rule: SelfMod, what: "a fixrail signing key", comps: splitPath(filepath.Clean(k)), path: filepath.Clean(k), file: true})
		}
	}
	a.branches = env.ProtectedBranches
	if a.branches == nil {
		a.branches = []string{"main", "master"}
	}
	return a
}

// top returns the state a call starts in.
func (a *analyzer) top() *state {
	st := &state{vars: map[string]string{}}
	if a.home != "" {
		st.vars["HOME"] = a.home
	}
	if a.env.TmpDir != "" {
		st.vars["TMPDIR"] = a.env.TmpDir
	}
	st.setCwd(a.cwd0)
	return st
}

func (a *analyzer) add(r Rule, unresolvable bool, format string, args ...any) {
	reason := fmt.Sprintf(format, args...)
	if n := len(a.files); n > 0 {
		// Inside a script read from disk only what it visibly does
		// counts: its own run-time indirection is code outside the
		// call, like a Makefile's, and judging it would make every
		// wrapper script (gradlew, mvnw) unresolvable.
		if unresolvable {
			return
		}
		reason = "in " + a.files[n-1] + ": " + reason
	}
	m := Match{Rule: r, Reason: cleanReason(reason), Unresolvable: unresolvable}
	if a.seen[m] {
		return
	}
	a.seen[m] = true
	a.ms = append(a.ms, m)
}

// maxReason bounds the length of a reason in bytes.
const maxReason = 400

// cleanReason makes a reason safe to print and to put in a receipt: valid
// UTF-8, one line, no control characters, bounded length.
func cleanReason(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// all marks every rule a command can trigger as unresolvable.
func (a *analyzer) all(reason string) {
	for _, r := range Rules {
		if r != Spend {
			a.add(r, true, "%s", reason)
		}
	}
}

// step counts work and reports whether the budget allows more.
func (a *analyzer) step() bool {
	a.steps++
	if a.steps == maxSteps {
		files := a.files
		a.files = nil
		a.all("command too large to analyse completely")
		a.files = files
	}
	return a.steps < maxSteps
}

// scriptFromFile analyses the contents of a script file; see add.
func (a *analyzer) scriptFromFile(src, name string, st *state, depth int, via string) {
	a.files = append(a.files, name)
	defer func() { a.files = a.files[:len(a.files)-1] }()
	a.script(src, st, depth, via)
}

// script parses src as bash and analyses every command in it. via names
// where the text came from (bash -c, eval, heredoc) for the reasons.
func (a *analyzer) script(src string, st *state, depth int, via string) {
	if depth > maxDepth {
		a.all(fmt.Sprintf("commands nested more than %d levels deep", maxDepth))
		return
	}
	if len(src) > maxInput {
		a.all("command text too long to analyse")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if via != "" {
			a.all(fmt.Sprintf("%s text does not parse as shell: %v", via, err))
		} else {
			a.all(fmt.Sprintf("command does not parse as shell: %v", err))
		}
		return
	}
	w := &walker{a: a, src: src, depth: depth}
	w.stmts(f.Stmts, st, input{})
}

// walker walks one parsed script.
type walker struct {
	a     *analyzer
	src   string
	depth int
}

func (w *walker) stmts(list []*syntax.Stmt, st *state, in input) {
	for _, s := range list {
		w.stmt(s, st, in)
	}
}

func (w *walker) stmt(s *syntax.Stmt, st *state, in input) {
	if s == nil || !w.a.step() {
		return
	}
	in = w.redirects(s.Redirs, st, in)
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c, st, in)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			// Each side of a pipe runs in a subshell.
			w.stmt(c.X, st.clone(), in)
			w.stmt(c.Y, st.clone(), w.pipeInput(c.X, st))
		case syntax.AndStmt:
			// a && b && c: each part runs only if the ones before it
			// succeeded, so it sees their effects; after the chain,
			// whatever b and c changed is uncertain.
			chain := andChain(c)
			w.stmt(chain[0], st, in)
			b := st.clone()
			for _, s := range chain[1:] {
				w.stmt(s, b, in)
			}
			st.merge(b)
		default: // ||: the right side may not run.
			w.stmt(c.X, st, in)
			b := st.clone()
			w.stmt(c.Y, b, in)
			st.merge(b)
		}
	case *syntax.Subshell:
		w.stmts(c.Stmts, st.clone(), in)
	case *syntax.Block:
		w.stmts(c.Stmts, st, in)
	case *syntax.IfClause:
		b := st.clone()
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, b, in)
			w.stmts(ic.Then, b, in)
		}
		st.merge(b)
	case *syntax.WhileClause:
		b := st.clone()
		w.stmts(c.Cond, b, in)
		w.stmts(c.Do, b, in)
		st.merge(b)
	case *syntax.ForClause:
		w.forClause(c, st, in)
	case *syntax.CaseClause:
		w.substs(c.Word, st)
		b := st.clone()
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.substs(p, st)
			}
			w.stmts(it.Stmts, b, in)
		}
		st.merge(b)
	case *syntax.FuncDecl:
		// The body runs whenever the function is called; analyse it where
		// it is declared, and forget whatever it may change.
		b := st.clone()
		w.stmt(c.Body, b, input{})
		st.merge(b)
	case *syntax.DeclClause:
		w.decl(c, st)
	case *syntax.TimeClause:
		w.stmt(c.Stmt, st, in)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, st.clone(), input{})
	case *syntax.TestDecl:
		w.stmt(c.Body, st.clone(), in)
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		w.substs(c, st)
		w.clauseSubsts(c, st)
	}
}

// andChain flattens a && b && c (parsed as (a && b) && c) into its parts.
func andChain(c *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	if x, ok := c.X.Cmd.(*syntax.BinaryCmd); ok && x.Op == syntax.AndStmt && len(c.X.Redirs) == 0 && !c.X.Negated {
		out = andChain(x)
	} else {
		out = []*syntax.Stmt{c.X}
	}
	return append(out, c.Y)
}

// maxUnroll bounds the items of a for loop whose body is analysed once per
// item with the loop variable known; longer or computed lists leave the
// variable unknown.
const maxUnroll = 8

func (w *walker) forClause(c *syntax.ForClause, st *state, in input) {
	l, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.substs(c.Loop, st)
		b := st.clone()
		w.stmts(c.Do, b, in)
		st.merge(b)
		return
	}
	for _, it := range l.Items {
		w.substs(it, st)
	}
	name := l.Name.Value
	items := w.a.fields(l.Items, st)
	b := st.clone()
	if l.InPos.IsValid() && len(items) <= maxUnroll && !anyDyn(items) && w.a.unrolling < 2 {
		w.a.unrolling++
		for _, it := range items {
			b.vars[name] = it.s
			b.setOut(name, it.out)
			w.stmts(c.Do, b, in)
		}
		w.a.unrolling--
	} else {
		delete(b.vars, name)
		b.setOut(name, slices.ContainsFunc(items, func(f field) bool { return f.out }))
		w.stmts(c.Do, b, in)
	}
	st.merge(b)
	delete(st.vars, name)
}

// isNilNode reports a nil node, including a typed nil pointer in the
// interface (an absent *Word or *ArrayExpr field).
func isNilNode(n syntax.Node) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *syntax.Word:
		return n == nil
	case *syntax.ArrayExpr:
		return n == nil
	case *syntax.CStyleLoop:
		return n == nil
	case *syntax.WordIter:
		return n == nil
	}
	return false
}

// substs analyses the command and process substitutions inside node; they
// run in subshells before the command that holds them.
func (w *walker) substs(node syntax.Node, st *state) {
	if isNilNode(node) {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, st.clone(), input{})
			return false
		case *syntax.ProcSubst:
			w.stmts(n.Stmts, st.clone(), input{kind: inUnknown})
			return false
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && n.Exp.Word.Lit() == "P" && n.Param != nil {
				// ${x@P} expands x's value as a prompt, running the
				// command substitutions in it.
				v, known := st.vars[n.Param.Value]
				if !known || strings.Contains(v, dynMark) {
					w.a.all("${" + n.Param.Value + "@P} expands, as a prompt, a value only known at run time")
				} else {
					w.textSubsts(v, st)
				}
			}
		}
		return true
	})
}

// globOptions notes the glob options a command turns on: shopt -s
// dotglob/globstar (or an option named at run time), a GLOBIGNORE set to
// anything (bash then matches a leading dot), a BASHOPTS naming them (a
// shell started with it in its environment sets them).
func (a *analyzer) globOptions(argv []field, env map[string]field) {
	if len(argv) > 2 && argv[0].s == "shopt" {
		on := false
		for _, f := range argv[1:] {
			switch {
			case f.s == "-s":
				on = true
			case f.s == "-u":
				on = false
			case on && (f.dyn || f.s == "dotglob"):
				a.dotglob = true
			case on && f.s == "globstar":
				a.globstar = true
			}
			if on && f.dyn {
				a.globstar = true
			}
		}
	}
	if v, ok := env["GLOBIGNORE"]; ok && (v.dyn || v.s != "") {
		a.dotglob = true
	}
	if v, ok := env["BASHOPTS"]; ok {
		a.dotglob = a.dotglob || v.dyn || strings.Contains(v.s, "dotglob")
		a.globstar = a.globstar || v.dyn || strings.Contains(v.s, "globstar")
	}
}

// quotedSubsts: bash evaluates an array subscript in a string it takes as a
// variable's name or as arithmetic — printf -v, read, mapfile, declare and
// export operands, declare -n, let, test and [[ ]]'s -eq, $((x)), ${!x} —
// and runs the command substitutions in it, though the string was quoted
// where it was written: x='a[$(cmd)]'; echo $((x)). So a word whose value
// holds a subscript with a substitution is read as running it, wherever it
// stands.
func (w *walker) quotedSubsts(word *syntax.Word, st *state) {
	if word == nil {
		return
	}
	f := w.a.literal(word, st)
	i := strings.IndexByte(f.s, '[')
	if i < 0 {
		return
	}
	// A subscript's backslashes do not stop it there: bash 5.2 runs
	// a[\$(cmd)], a[$\(cmd)] and a[\`cmd\`] alike.
	rest := f.s[i:]
	bare := strings.ReplaceAll(rest, `\`, "")
	if strings.Contains(bare, "$(") || strings.Contains(bare, "`") {
		w.textSubsts(bare, st)
		if bare != rest {
			w.textSubsts(rest, st)
		}
	}
}

// clauseSubsts runs quotedSubsts on the words of an arithmetic or test
// clause: (( 'a[$(cmd)]' )), let 'a[$(cmd)]', [[ 'a[$(cmd)]' -eq 1 ]].
func (w *walker) clauseSubsts(node syntax.Node, st *state) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.Word:
			w.quotedSubsts(n, st)
			return false
		}
		return true
	})
}

// textSubsts analyses the command substitutions in text bash expands (a
// prompt, a subscript): read as a here-document's body, where $(…) and
// `…` are code and the rest is text. Text that does not parse runs nothing
// here either: bash fails on it too.
func (w *walker) textSubsts(text string, st *state) {
	// A value can name itself (x='${x@P}'; echo "${x@P}"): bash loops
	// there, the analysis stops.
	if w.a.texts >= 4 {
		w.a.all("text expanded as a prompt or a subscript nests too deeply to follow")
		return
	}
	w.a.texts++
	defer func() { w.a.texts-- }()
	doc, err := syntax.NewParser().Document(strings.NewReader(text))
	if err != nil {
		return
	}
	w.substs(doc, st)
}

func (w *walker) call(c *syntax.CallExpr, st *state, in input) {
	for _, as := range c.Assigns {
		w.substs(as.Index, st) // a[$(cmd)]=x runs cmd
		w.substs(as.Value, st)
		w.substs(as.Array, st)
		w.quotedSubsts(as.Value, st)
	}
	for _, arg := range c.Args {
		w.substs(arg, st)
		w.quotedSubsts(arg, st)
	}
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			w.assign(as, st)
		}
		return
	}
	var env map[string]field
	for _, as := range c.Assigns {
		if as.Name == nil {
			continue
		}
		if env == nil {
			env = map[string]field{}
		}
		env[as.Name.Value] = w.a.literal(as.Value, st)
	}
	argv := w.a.fields(c.Args, st)
	w.a.globOptions(argv, env)
	if len(argv) > 1 && argv[0].s == "set" {
		// set -a (-o allexport): every assignment after it is exported.
		for i, f := range argv[1:] {
			if f.dyn || strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.Contains(f.s, "a") ||
				f.s == "allexport" && i > 0 && argv[i].s == "-o" {
				st.allexport = true
			}
		}
	}
	w.a.command(argv, env, st, in, w.depth)
}

// assign records a shell variable assignment.
func (w *walker) assign(as *syntax.Assign, st *state) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	if st.allexport {
		st.export(name)
	}
	if name == "GLOBIGNORE" || name == "BASHOPTS" {
		w.a.globOptions(nil, map[string]field{name: w.a.literal(as.Value, st)})
	}
	if !as.Append {
		st.setOut(name, false)
	}
	if as.Value != nil && !mktempWord(as.Value) && w.a.wordOutput(as.Value, st) {
		st.setOut(name, true)
	}
	switch {
	case as.Array != nil || as.Index != nil || name == "IFS":
		delete(st.vars, name)
	case as.Value == nil:
		st.vars[name] = ""
	case mktempWord(as.Value):
		// VAR=$(mktemp) names a new file in the temporary directory.
		dir := w.a.env.TmpDir
		if dir == "" {
			dir = "/tmp"
		}
		st.vars[name] = filepath.Join(dir, "tmp.XXXXXXXXXX")
	default:
		v := w.a.literal(as.Value, st)
		old, known := st.vars[name]
		switch {
		case v.dyn || (as.Append && !known):
			delete(st.vars, name)
		case as.Append:
			st.vars[name] = old + v.s
		default:
			st.vars[name] = v.s
		}
	}
}

// mktempWord reports whether w is exactly $(mktemp [-d] [-t] [-q] [-u]): a
// fresh name under the temporary directory.
func mktempWord(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	var cs *syntax.CmdSubst
	switch p := w.Parts[0].(type) {
	case *syntax.CmdSubst:
		cs = p
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			cs, _ = p.Parts[0].(*syntax.CmdSubst)
		}
	}
	if cs == nil || len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 {
		return false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || call.Args[0].Lit() != "mktemp" {
		return false
	}
	for _, a := range call.Args[1:] {
		switch a.Lit() {
		case "-d", "-t", "-q", "-u", "-dt", "-td", "--directory", "--quiet", "--dry-run":
		default:
			return false
		}
	}
	return true
}

func (w *walker) decl(c *syntax.DeclClause, st *state) {
	nameref, export := false, c.Variant != nil && c.Variant.Value == "export"
	for _, as := range c.Args {
		if as.Naked && as.Value != nil {
			if f := as.Value.Lit(); strings.HasPrefix(f, "-") && strings.Contains(f, "n") {
				nameref = true
			}
			if f := as.Value.Lit(); strings.HasPrefix(f, "-") && strings.Contains(f, "x") {
				export = true
			}
		}
	}
	if export {
		for _, as := range c.Args {
			if as.Name != nil {
				st.export(as.Name.Value)
			}
		}
	}
	for _, as := range c.Args {
		w.substs(as.Index, st)
		w.substs(as.Value, st)
		w.substs(as.Array, st)
		w.quotedSubsts(as.Value, st)
		if as.Naked {
			if nameref && as.Name != nil {
				delete(st.vars, as.Name.Value)
			}
			continue
		}
		w.assign(as, st)
		if nameref && as.Name != nil {
			// declare -n makes the name stand for another variable,
			// whose value is not this one's: unknown here.
			delete(st.vars, as.Name.Value)
		}
	}
}

// redirects applies the redirections of one statement and returns its
// standard input.
func (w *walker) redirects(rs []*syntax.Redirect, st *state, in input) input {
	a := w.a
	for _, r := range rs {
		w.substs(r.Word, st)
		w.substs(r.Hdoc, st)
		if r.Op == syntax.WordHdoc {
			w.quotedSubsts(r.Word, st) // read 'x' <<< 'a[$(cmd)]'; echo $((x))
		}
		stdin := r.N == nil || r.N.Value == "0"
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
			syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			if procSubstOnly(r.Word) {
				continue // > >(cmd) writes to a pipe
			}
			a.redirectWrite(a.literal(r.Word, st), st)
		case syntax.RdrInOut:
			t := a.literal(r.Word, st)
			a.redirectWrite(t, st)
			if stdin {
				in = input{kind: inFile, file: t}
			}
		case syntax.DplOut, syntax.DplIn:
			t := a.literal(r.Word, st)
			if t.dyn || t.s == "-" || isDigits(t.s) {
				continue // an fd duplication or close
			}
			if r.Op == syntax.DplOut {
				a.redirectWrite(t, st) // >&file is &>file
			}
		case syntax.RdrIn:
			t := a.literal(r.Word, st)
			a.readPath(t, st, "<", false)
			a.deviceRead(t)
			if stdin {
				in = input{kind: inFile, file: t}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if stdin {
				in = w.heredoc(r, st)
			}
		case syntax.WordHdoc:
			if stdin {
				t := a.literal(r.Word, st)
				in = input{kind: inText, text: t.s, dyn: t.dyn}
			}
		}
	}
	return in
}

func procSubstOnly(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	_, ok := w.Parts[0].(*syntax.ProcSubst)
	return ok
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// heredoc returns the body of a here-document as the input it feeds.
func (w *walker) heredoc(r *syntax.Redirect, st *state) input {
	if r.Hdoc == nil {
		return input{kind: inText}
	}
	quoted := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.Contains(p.Value, `\`)
		}
	}
	if quoted {
		var sb strings.Builder
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				sb.WriteString(l.Value)
			}
		}
		return input{kind: inText, text: sb.String()}
	}
	if w.a.wordDynamic(r.Hdoc, st) {
		// The outer shell expands the body before the reader sees it. Hand
		// the reader the unexpanded text so its own analysis sees $x and
		// $(...) as run-time values.
		start, end := r.Hdoc.Pos().Offset(), r.Hdoc.End().Offset()
		if start <= end && int(end) <= len(w.src) {
			return input{kind: inText, text: w.src[start:end], dyn: true}
		}
		return input{kind: inUnknown}
	}
	s, err := expand.Document(w.a.expandConfig(st), r.Hdoc)
	if err != nil {
		return input{kind: inUnknown}
	}
	return input{kind: inText, text: s}
}

// pipeInput describes what the left side of a pipe writes: literal text for
// cat of a heredoc and echo or printf of literal words, unknown otherwise.
func (w *walker) pipeInput(x *syntax.Stmt, st *state) input {
	c, ok := x.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return input{kind: inUnknown}
	}
	argv := w.a.fields(c.Args, st)
	if argv[0].dyn {
		return input{kind: inUnknown}
	}
	switch progName(argv[0].s) {
	case "cat":
		if len(argv) == 1 || (len(argv) == 2 && argv[1].s == "-") {
			return w.redirects(x.Redirs, st.clone(), input{kind: inUnknown})
		}
		if len(argv) == 2 && !argv[1].optLike() {
			return input{kind: inFile, file: argv[1]}
		}
	case "echo":
		args := argv[1:]
		for len(args) > 0 && (args[0].s == "-n" || args[0].s == "-e" || args[0].s == "-E") {
			args = args[1:]
		}
		return joinedText(args, " ")
	case "printf":
		if len(argv) == 2 && !strings.Contains(argv[1].s, "%") {
			t := joinedText(argv[1:], "")
			t.text = strings.ReplaceAll(t.text, `\n`, "\n")
			return t
		}
		if len(argv) > 2 {
			return joinedText(argv[2:], "\n")
		}
	}
	return input{kind: inUnknown}
}

func joinedText(fs []field, sep string) input {
	in := input{kind: inText}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.s
		in.dyn = in.dyn || f.dyn
	}
	in.text = strings.Join(parts, sep)
	return in
}

// shellEnv is the environment expansion sees: known variables have their
// value, IFS is unset (so the default applies), anything else is dynMark.
type shellEnv struct{ vars map[string]string }

func (e shellEnv) Get(name string) expand.Variable {
	if name == "IFS" {
		return expand.Variable{}
	}
	// The expander asks for "HOME <user>" for ~user; bash's ~- and ~+
	// are $OLDPWD and $PWD.
	switch name {
	case "HOME -":
		name = "OLDPWD"
	case "HOME +":
		name = "PWD"
	}
	if v, ok := e.vars[name]; ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: dynMark}
}

func (e shellEnv) Each(f func(string, expand.Variable) bool) {
	for k, v := range e.vars {
		if !f(k, expand.Variable{Set: true, Kind: expand.String, Str: v}) {
			return
		}
	}
}

func (a *analyzer) expandConfig(st *state) *expand.Config {
	return &expand.Config{
		Env: shellEnv{vars: st.vars},
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			if d, ok := a.pwdSubst(cs, st); ok {
				_, err := io.WriteString(w, d)
				return err
			}
			_, err := io.WriteString(w, dynMark)
			return err
		},
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return dynMark, nil },
	}
}

// pwdSubst returns what $(pwd) prints — the working directory, when it is
// known here; pwd -P's with its links resolved — so that the commonest
// substitution of all (docker run -v "$(pwd)":/app, rm -rf "$(pwd)/build")
// is judged at the path it names. Any other substitution is unknown.
func (a *analyzer) pwdSubst(cs *syntax.CmdSubst, st *state) (string, bool) {
	if st.cwd == "" || len(cs.Stmts) != 1 {
		return "", false
	}
	s := cs.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 || call.Args[0].Lit() != "pwd" {
		return "", false
	}
	physical := false
	for _, w := range call.Args[1:] {
		switch w.Lit() {
		case "-L":
			physical = false
		case "-P":
			physical = true
		default:
			return "", false
		}
	}
	if physical {
		return a.resolve(st.cwd), true
	}
	return st.cwd, true
}

// wordDynamic reports whether expanding w needs anything only known at run
// time: an unknown variable (IFS included), a command, process or arithmetic
// substitution, or another user's home directory.
func (a *analyzer) wordDynamic(w *syntax.Word, st *state) bool {
	if w == nil {
		return false
	}
	dyn := false
	if len(w.Parts) > 0 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~") {
			name, _, _ := strings.Cut(l.Value[1:], "/")
			switch name {
			case "-", "+":
				v := "PWD"
				if name == "-" {
					v = "OLDPWD"
				}
				_, known := st.vars[v]
				dyn = !known
			case "":
				dyn = a.home == ""
			default:
				dyn = true
			}
		}
	}
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param == nil || n.Excl || n.Index != nil || n.Names != 0 {
				dyn = true
			} else if _, ok := st.vars[n.Param.Value]; !ok {
				dyn = true
			}
		case *syntax.CmdSubst:
			if _, ok := a.pwdSubst(n, st); ok {
				return false // its output is the working directory, known here
			}
			dyn = true
		case *syntax.ProcSubst, *syntax.ArithmExp:
			dyn = true
		case *syntax.ExtGlob:
			dyn = true // @(x|y), +(x): matched here by no expansion
		}
		return !dyn
	})
	return dyn
}

// literalSubst reports whether a command substitution prints only text
// written in the command itself: cat of a here-document whose body expands
// nothing (gh pr create --body "$(cat <<'EOF' … EOF)", the way agent CLIs
// write a pull request's description), or echo/printf of literal words.
// Such output carries nothing the command read.
func literalSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	s := cs.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || s.Negated || s.Background || s.Coprocess || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	for _, w := range call.Args {
		if w.Lit() == "" && !quotedLiteral(w) {
			return false
		}
	}
	switch call.Args[0].Lit() {
	case "cat":
		if len(call.Args) != 1 || len(s.Redirs) != 1 {
			return false
		}
		r := s.Redirs[0]
		if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
			return false
		}
		return r.Hdoc == nil || literalWord(r.Hdoc)
	case "echo", "printf":
		return len(s.Redirs) == 0
	}
	return false
}

// quotedLiteral reports whether w is quoted text with nothing to expand.
func quotedLiteral(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		case *syntax.Lit:
		default:
			return false
		}
	}
	return true
}

// literalWord reports whether a here-document's body expands nothing: a
// quoted delimiter leaves it as it is, and an unquoted one expands only
// what its parts hold.
func literalWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			return false
		}
	}
	return true
}

// wordOutput reports whether w carries what a command printed: a command
// or process substitution (not one that prints only literal text), or a
// variable that may hold one's output.
func (a *analyzer) wordOutput(w *syntax.Word, st *state) bool {
	if w == nil || w.Lit() != "" {
		return false // nil, or plain text (most words)
	}
	out := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			if !literalSubst(n) {
				out = true
			}
		case *syntax.ProcSubst:
			out = true
		case *syntax.ParamExp:
			if n.Param != nil && st.outVars[n.Param.Value] {
				out = true
			}
		}
		return !out
	})
	return out
}

// fields expands command words the way bash would with the known
// variables: quote removal, ANSI-C quoting, escapes, brace and tilde
// expansion. Globs are left as patterns.
func (a *analyzer) fields(words []*syntax.Word, st *state) []field {
	var out []field
	for _, w := range words {
		dyn := a.wordDynamic(w, st)
		carries := a.wordOutput(w, st)
		fs, err := expand.Fields(a.expandConfig(st), w)
		if err != nil {
			out = append(out, field{s: dynMark, dyn: true, src: source(w), out: carries})
			continue
		}
		braces := hasBraces(w)
		for _, f := range fs {
			if braces && a.home != "" && (f == "~" || strings.HasPrefix(f, "~/")) {
				// Bash expands a tilde that brace expansion put first.
				f = a.home + f[1:]
			}
			fd := field{s: f, dyn: dyn || strings.Contains(f, dynMark), out: carries}
			if fd.dyn && len(fs) == 1 {
				fd.src = source(w)
			}
			out = append(out, fd)
		}
	}
	return out
}

func hasBraces(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			return true
		}
	}
	return false
}

// literal expands one word without field splitting, as in an assignment or a
// redirection target.
func (a *analyzer) literal(w *syntax.Word, st *state) field {
	if w == nil {
		return field{}
	}
	dyn := a.wordDynamic(w, st)
	carries := a.wordOutput(w, st)
	s, err := expand.Literal(a.expandConfig(st), unescaped(w))
	if err != nil {
		return field{s: dynMark, dyn: true, src: source(w), out: carries}
	}
	f := field{s: s, dyn: dyn || strings.Contains(s, dynMark), out: carries}
	if f.dyn {
		f.src = source(w)
	}
	return f
}

// unescaped returns w with bash's quote removal applied to its unquoted
// literal parts: expand.Literal (which the hook uses for a redirection's
// target and an assignment's value) keeps a backslash outside quotes, so
// `> .claude/settings.js\on` read as "settings.js\on" where bash writes
// settings.json. A leading \~ stays a literal ~, as bash leaves it.
func unescaped(w *syntax.Word) *syntax.Word {
	var parts []syntax.WordPart
	for i, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || !strings.Contains(l.Value, `\`) {
			if parts != nil {
				parts = append(parts, p)
			}
			continue
		}
		if parts == nil {
			parts = append(make([]syntax.WordPart, 0, len(w.Parts)+1), w.Parts[:i]...)
		}
		v := l.Value
		if i == 0 && strings.HasPrefix(v, `\~`) {
			parts = append(parts, &syntax.SglQuoted{Value: "~"})
			v = v[2:]
		}
		var sb strings.Builder
		for j := 0; j < len(v); j++ {
			if v[j] == '\\' && j+1 < len(v) {
				j++
				if v[j] == '\n' {
					continue // a line continuation
				}
			}
			sb.WriteByte(v[j])
		}
		parts = append(parts, &syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: sb.String()})
	}
	if parts == nil {
		return w
	}
	return &syntax.Word{Parts: parts}
}

// progName reduces a command word to the program's name: the base name,
// folded as a Mac's file system compares names (fsname.Fold: there
// "ſudo", "GIT" and "su\u200cdo" on HFS+ are found on $PATH as sudo
// and git), without a Windows .exe suffix.
func progName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = fsname.Fold(s)
	return strings.TrimSuffix(s, ".exe")
}

// quoteJoin renders fields as shell words, for re-parsing argument lists
// that a wrapper hands to a shell (watch, ssh, git ! aliases).
func quoteJoin(fs []field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		if f.dyn {
			parts[i] = strings.ReplaceAll(f.s, dynMark, "${__fixrail_runtime__}")
			continue
		}
		q, err := syntax.Quote(f.s, syntax.LangBash)
		if err != nil {
			q = "${__fixrail_runtime__}"
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}

// dynText replaces run-time parts of text that is about to be re-parsed
// with a variable the analysis does not know.
func dynText(s string) string { return strings.ReplaceAll(s, dynMark, "${__fixrail_runtime__}") }
