package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rhysd/actionlint"
	"mvdan.cc/sh/v3/syntax"
)

// Workflow is one parsed workflow file with its attacker-controlled data
// flows resolved. Rules read it; they do not change it.
type Workflow struct {
	Path  string
	src   []byte
	lines []string
	wf    *actionlint.Workflow

	jobs       []*job
	jobByID    map[string]*job
	scalars    map[*actionlint.String]*scalar
	inputTypes map[string]string
	// callInputs are the inputs workflow_call declares; hasCall is whether
	// the workflow can be called at all. Only a caller's inputs can carry
	// another workflow's attacker text: a workflow_dispatch input is sent
	// by someone with write access (see dispatchInput).
	callInputs map[string]bool
	hasCall    bool
	envTaint0  map[string]string // workflow-level env

	findings []Finding
	rule     string // the rule reporting; set by Lint

	nonceCache  map[[4]any]string // judgeStepOutput by (job, asking step, step id, key)
	shellCache  *ShellCache       // Options.Shell
	localAction LocalActionReader // Options.LocalAction
}

type job struct {
	id       string
	al       *actionlint.Job
	steps    []*step
	envTaint map[string]string
	outTaint map[string]string // job outputs
}

type step struct {
	al   *actionlint.Step
	job  *job
	idx  int
	id   string // lower-cased, "" if none
	run  *actionlint.ExecRun
	act  *actionlint.ExecAction
	uses string // lower-cased action reference without @ref
	sh   *script
	// envTaint is the step's own env: block; exportTaint what it writes to
	// $GITHUB_ENV; outTaint why its outputs carry attacker text.
	envTaint    map[string]string
	exportTaint map[string]string
	outTaint    string
	outKeys     map[string]string // run: steps: per output key ("*": unknown key)
	agents      []*agent
	fixrailRun  bool
	budget      bool
}

func (s *step) name() string {
	if s.al.Name != nil && s.al.Name.Value != "" {
		return s.al.Name.Value
	}
	if s.id != "" {
		return s.id
	}
	if s.uses != "" {
		return s.uses
	}
	return fmt.Sprintf("step %d", s.idx+1)
}

// hiddenEscape matches YAML escapes that decode to "$" or "{" in a
// double-quoted scalar: they can assemble a ${{ }} the source does not show.
var hiddenEscape = lazyRE(`\\(u0024|x24|U00000024|u007[bB]|x7[bB]|U0000007[bB])`)

// readsPayload reports whether github-script code reads attacker text
// from the event: it holds "context.payload" or "head.ref", or one of
// .title .body .head_ref .head_branch not followed by a word character.
// It is the expression payloadReadRE (kept in the tests, which hold the
// two equal), as a byte scan: gh-aw lock files inline github-script
// bodies of thousands of lines, and the expression over them was a
// fifth of building the model.
func readsPayload(s string) bool {
	if strings.Contains(s, "context.payload") || strings.Contains(s, "head.ref") {
		return true
	}
	for i := strings.IndexByte(s, '.'); i >= 0; {
		rest := s[i+1:]
		for _, f := range [...]string{"title", "body", "head_ref", "head_branch"} {
			if strings.HasPrefix(rest, f) && (len(rest) == len(f) || !isWordByte(rest[len(f)])) {
				return true
			}
		}
		j := strings.IndexByte(rest, '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// isWordByte is regexp's \w: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// parse builds the model. Whatever cannot be analysed becomes an
// unparseable finding; the rest is still built so other rules run.
func parse(path string, src []byte) *Workflow {
	w := &Workflow{
		Path: path, src: src,
		lines:      strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n"),
		jobByID:    map[string]*job{},
		scalars:    map[*actionlint.String]*scalar{},
		inputTypes: map[string]string{},
		callInputs: map[string]bool{},
		envTaint0:  map[string]string{},
		rule:       Unparseable,
		nonceCache: map[[4]any]string{},
	}
	wf, errs := actionlint.Parse(src)
	errs = githubAccepted(src, errs)
	for _, e := range errs {
		w.reportAt(e.Line, e.Column, "does not parse: "+e.Message)
	}
	if wf == nil {
		if len(errs) == 0 {
			w.reportAt(1, 1, "does not parse as a workflow")
		}
		return w
	}
	w.wf = wf
	for i, l := range w.lines {
		if !strings.Contains(l, "\\") {
			continue
		}
		if loc := hiddenEscape().FindStringIndex(l); loc != nil {
			w.reportAt(i+1, loc[0]+1, "escape "+l[loc[0]:loc[1]]+" decodes to part of ${{ and hides an expression from review")
		}
	}
	for _, ev := range wf.On {
		switch ev := ev.(type) {
		case *actionlint.WorkflowDispatchEvent:
			for name, in := range ev.Inputs {
				t := "string"
				switch in.Type {
				case actionlint.WorkflowDispatchEventInputTypeBoolean:
					t = "boolean"
				case actionlint.WorkflowDispatchEventInputTypeNumber:
					t = "number"
				case actionlint.WorkflowDispatchEventInputTypeChoice:
					t = "choice"
				case actionlint.WorkflowDispatchEventInputTypeEnvironment:
					t = "environment"
				}
				w.inputTypes[strings.ToLower(name)] = t
			}
		case *actionlint.WorkflowCallEvent:
			w.hasCall = true
			for _, in := range ev.Inputs {
				t := "string"
				switch in.Type {
				case actionlint.WorkflowCallEventInputTypeBoolean:
					t = "boolean"
				case actionlint.WorkflowCallEventInputTypeNumber:
					t = "number"
				}
				if in.Name != nil {
					w.inputTypes[strings.ToLower(in.Name.Value)] = t
					w.callInputs[strings.ToLower(in.Name.Value)] = true
				}
			}
		}
	}
	w.envTaint0 = w.envBlock(wf.Env, scope{})
	for _, j := range wf.Jobs {
		w.jobs = append(w.jobs, &job{id: j.ID.Value, al: j})
	}
	slices.SortFunc(w.jobs, func(a, b *job) int { return comparePos(a.al.Pos, b.al.Pos) })
	for _, j := range w.jobs {
		w.jobByID[strings.ToLower(j.id)] = j
	}
	for _, j := range w.jobOrder() {
		w.buildJob(j)
	}
	return w
}

func comparePos(a, b *actionlint.Pos) int {
	if a == nil || b == nil {
		return 0
	}
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
}

// jobOrder lists jobs so that each comes after the jobs it needs (their
// outputs must be resolved first); a cycle keeps file order.
func (w *Workflow) jobOrder() []*job {
	var out []*job
	done := map[*job]bool{}
	var visit func(j *job, depth int)
	visit = func(j *job, depth int) {
		if done[j] || depth > len(w.jobs) {
			return
		}
		for _, n := range j.al.Needs {
			if d := w.jobByID[strings.ToLower(n.Value)]; d != nil {
				visit(d, depth+1)
			}
		}
		if !done[j] {
			done[j] = true
			out = append(out, j)
		}
	}
	for _, j := range w.jobs {
		visit(j, 0)
	}
	return out
}

// envBlock evaluates an env: block in sc.
func (w *Workflow) envBlock(env *actionlint.Env, sc scope) map[string]string {
	m := map[string]string{}
	if env == nil {
		return m
	}
	if env.Expression != nil {
		if t := w.scalarTaint(w.exprsOf(env.Expression), sc); t != "" {
			m["*"] = t
		}
	}
	for name, v := range env.Vars {
		m[strings.ToLower(name)] = w.scalarTaint(w.exprsOf(v.Value), sc)
	}
	return m
}

func (w *Workflow) buildJob(j *job) {
	sc := scope{job: j}
	j.envTaint = w.envBlock(j.al.Env, sc)
	if t := j.envTaint["*"]; t != "" {
		j.envTaint = map[string]string{"*": t}
	}
	w.scalarTaint(w.exprsOf(j.al.If), sc)
	for i, as := range j.al.Steps {
		st := &step{al: as, job: j, idx: i}
		if as.ID != nil {
			st.id = strings.ToLower(as.ID.Value)
		}
		j.steps = append(j.steps, st)
		ssc := scope{job: j, step: st}
		st.envTaint = w.envBlock(as.Env, ssc)
		w.scalarTaint(w.exprsOf(as.If), ssc)
		switch ex := as.Exec.(type) {
		case nil:
			w.reportPos(as.Pos, "step has no run: or uses: this linter understands (new syntax such as parallel: is not analysed)")
		case *actionlint.ExecRun:
			st.run = ex
			w.buildRun(st, ssc)
		case *actionlint.ExecAction:
			st.act = ex
			if ex.Uses != nil {
				st.uses = strings.ToLower(ex.Uses.Value)
				if i := strings.Index(st.uses, "@"); i >= 0 {
					st.uses = st.uses[:i]
				}
			}
			for _, in := range sortedInputs(ex) {
				// An action handed event text (an issue-form parser, say)
				// returns it; caller inputs are not followed through actions.
				if t := w.scalarTaint(w.exprsOf(in.Value), ssc); t != "" && st.outTaint == "" && strings.HasPrefix(t, "github.") {
					st.outTaint = "derived from " + t
				}
			}
			if st.uses == "actions/github-script" && st.outTaint == "" {
				if s := ex.Inputs["script"]; s != nil && readsPayload(s.Value.Value) {
					st.outTaint = "set by a script that reads the event payload"
				}
			}
		}
		st.agents = w.detectAgents(st)
		for _, a := range st.agents {
			if st.outTaint == "" || !strings.HasPrefix(st.outTaint, "output of") {
				st.outTaint = "output of " + a.kind + ", which read attacker-controlled input"
			}
		}
		st.budget = isBudgetStep(st)
	}
	j.outTaint = map[string]string{}
	for name, o := range j.al.Outputs {
		j.outTaint[strings.ToLower(name)] = w.scalarTaint(w.exprsOf(o.Value), sc)
	}
}

// shellOf is the shell a run: step uses ("" means the runner default, bash).
func (w *Workflow) shellOf(st *step) string {
	if st.run.Shell != nil {
		return st.run.Shell.Value
	}
	if d := st.job.al.Defaults; d != nil && d.Run != nil && d.Run.Shell != nil {
		return d.Run.Shell.Value
	}
	if d := w.wf.Defaults; d != nil && d.Run != nil && d.Run.Shell != nil {
		return d.Run.Shell.Value
	}
	return ""
}

func (w *Workflow) buildRun(st *step, sc scope) {
	sca := w.exprsOf(st.run.Run)
	w.scalarTaint(sca, sc)
	if st.run.Run == nil {
		return
	}
	shell := w.shellOf(st)
	switch strings.Fields(shell + " bash")[0] {
	case "bash", "sh":
	default:
		w.reportPos(st.run.Run.Pos, fmt.Sprintf("run: script for shell %q is not analysed (only bash and sh are)", shell))
		return
	}
	s, err := parseScript(st.run.Run.Value, sca.exprs, func(name string) string { return w.envTaint(name, sc) })
	if err != nil {
		line, col := w.offsetPos(st.run.Run, 0)
		if pe, ok := err.(interface{ Error() string }); ok {
			w.reportAt(line, col, "run: script does not parse as bash: "+pe.Error())
		}
		return
	}
	st.sh = s
	st.exportTaint = s.exports
	st.outTaint = s.outTaint
	st.outKeys = s.outKeys
	redefined := false
	// Without "fixrail" or a backslash in the text no name can spell
	// fixrail: the walk (which renders every call's words) is skipped.
	if v := st.run.Run.Value; strings.Contains(v, "fixrail") || strings.Contains(v, "\\") {
		syntax.Walk(s.file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.FuncDecl:
				redefined = redefined || n.Name != nil && n.Name.Value == "fixrail"
			case *syntax.CallExpr:
				a := args(n)
				redefined = redefined || len(a) >= 2 && a[0] == "alias" && strings.HasPrefix(a[1], "fixrail=")
			}
			return true
		})
	}
	if redefined {
		// A function or alias named fixrail is not fixrail: nothing it
		// runs would be fenced or staged.
		line, col := w.offsetPos(st.run.Run, 0)
		w.reportAt(line, col, "the script defines a function or alias named fixrail; its fixrail run is not analysed as fixrail")
		return
	}
	for _, c := range s.calls {
		name, rest := cmdName(c)
		if name != "fixrail" || len(rest) == 0 {
			continue
		}
		switch litPrefix(rest[0]) {
		case "run":
			st.fixrailRun = true
		}
	}
}

func sortedInputs(a *actionlint.ExecAction) []*actionlint.Input {
	ins := make([]*actionlint.Input, 0, len(a.Inputs))
	for _, in := range a.Inputs {
		ins = append(ins, in)
	}
	slices.SortFunc(ins, func(x, y *actionlint.Input) int { return cmp.Compare(x.Name.Value, y.Name.Value) })
	return ins
}

// offsetPos maps a byte offset in s's value to line:col in the file. Exact
// for single-line and literal-block (|) scalars, which is where scripts and
// prompts live; other multi-line forms fall back to the scalar's start.
func (w *Workflow) offsetPos(s *actionlint.String, off int) (int, int) {
	if s == nil || s.Pos == nil {
		return 1, 1
	}
	sc := w.scalars[s]
	if sc != nil {
		for _, e := range sc.exprs {
			if e.off == off && e.line > 0 {
				return e.line, e.col
			}
		}
	}
	p := s.Pos
	v := s.Value[:min(off, len(s.Value))]
	k := strings.Count(v, "\n")
	c := off - (strings.LastIndex(v, "\n") + 1)
	if p.Line < 1 || p.Line > len(w.lines) {
		return p.Line, p.Col
	}
	raw := w.lines[p.Line-1]
	ind := byte(0)
	if p.Col-1 < len(raw) && p.Col >= 1 {
		ind = raw[p.Col-1]
	}
	switch {
	case ind == '|':
		ln := p.Line + 1 + k
		if ln > len(w.lines) {
			return p.Line, p.Col
		}
		bi := -1
		for l := p.Line + 1; l <= len(w.lines); l++ {
			if strings.TrimSpace(w.lines[l-1]) != "" {
				bi = indentOf(w.lines[l-1])
				break
			}
		}
		if bi < 0 {
			return p.Line, p.Col
		}
		return ln, bi + c + 1
	case k == 0 && (ind == '"' || ind == '\''):
		return p.Line, p.Col + 1 + c
	case k == 0 && ind != '>':
		return p.Line, p.Col + c
	}
	return p.Line, p.Col
}
