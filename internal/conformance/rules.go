package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rhysd/actionlint"
	"mvdan.cc/sh/v3/syntax"

	"github.com/fixrail/fixrail/internal/policy"
)

// Rules returns every rule in reporting order. The unparseable and
// bad-ignore findings come from the parser and the ignore pass; they are
// listed here so that output formats can describe them.
func Rules() []*Rule { return allRules() }

// RuleByID returns the rule with id, or nil.
func RuleByID(id string) *Rule {
	for _, r := range allRules() {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// allRules is built on first use: the rules' examples are edited copies of
// whole workflows, which every fixrail command would otherwise build at
// start-up (most never lint).
var allRules = sync.OnceValue(func() []*Rule {
	return []*Rule{ruleTitleInFence(), ruleNonce(), ruleGateNames(), ruleCostCap(), ruleNoMerge(), ruleAllowlist(), ruleModeParity(), ruleTemplateInjection(), ruleUnparseable(), ruleBadIgnore()}
})

// forAgents calls f for every direct agent invocation, in file order.
func (w *Workflow) forAgents(f func(a *agent)) {
	for _, j := range w.jobs {
		for _, st := range j.steps {
			for _, a := range st.agents {
				f(a)
			}
		}
	}
}

// --- title-in-fence ---------------------------------------------------

func runTitleInFence(w *Workflow) {
	w.forAgents(func(a *agent) {
		st := a.st
		parts := w.promptParts(a)
		if st.act != nil {
			isPrompt := map[*actionlint.String]promptPart{}
			for _, p := range parts {
				isPrompt[p.s] = p
			}
			for _, in := range sortedInputs(st.act) {
				sc := w.exprsOf(in.Value)
				p, prompt := isPrompt[in.Value]
				for _, e := range sc.exprs {
					if e.taint == "" || prompt && p.fenced(e.off) || strings.Contains(e.taint, callerID) {
						continue
					}
					w.reportAt(e.line, e.col, fmt.Sprintf("%s reaches %s through input %q outside a nonce-fenced block", e.taint, a.kind, in.Name.Value))
				}
			}
		} else if st.sh != nil && len(parts) == 1 {
			p := parts[0]
			for _, u := range st.sh.uses {
				if p.fenced(int(u.off)) || strings.Contains(u.reason, callerID) {
					continue
				}
				line, col := w.offsetPos(st.run.Run, int(u.off))
				w.reportAt(line, col, fmt.Sprintf("%s reaches %s outside a nonce-fenced block", u.reason, a.kind))
			}
		}
		if st.al.Env != nil {
			for _, name := range sortedKeys(st.al.Env.Vars) {
				v := st.al.Env.Vars[name]
				if t := st.envTaint[name]; t != "" && !strings.Contains(t, callerID) && !w.envFencedInScript(st, v.Name.Value) {
					w.reportAt(v.Name.Pos.Line, v.Name.Pos.Col, fmt.Sprintf("%s is handed to %s in env %s, outside any fence (the agent reads it with its tools)", t, a.kind, v.Name.Value))
				}
			}
		}
	})
}

// envFencedInScript: a run: agent step whose script reads the variable only
// inside fences has fenced it.
func (w *Workflow) envFencedInScript(st *step, name string) bool {
	if st.sh == nil || st.run == nil {
		return false
	}
	p := promptPart{s: st.run.Run, sc: w.exprsOf(st.run.Run)}
	p.fences = fences(st.run.Run.Value, p.sc, true)
	read := false
	for _, u := range st.sh.uses {
		if rest := st.sh.src[u.off:]; strings.HasPrefix(rest, "$"+name) || strings.HasPrefix(rest, "${"+name) {
			read = true
			if !p.fenced(int(u.off)) {
				return false
			}
		}
	}
	return read
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// --- nonce-delimiter --------------------------------------------------

func runNonce(w *Workflow) {
	w.forAgents(func(a *agent) {
		parts := w.promptParts(a)
		n := 0
		for _, p := range parts {
			n += len(p.fences)
			for _, f := range p.fences {
				line, col := w.offsetPos(p.s, f.openOff+len(p.s.Value[f.openOff:f.bodyOff])-len(strings.TrimLeft(p.s.Value[f.openOff:f.bodyOff], " \t")))
				if why := w.judgeFence(a, f); why != "" {
					w.reportAt(line, col, fmt.Sprintf("fence marker %s is not a per-run random nonce: %s", f.marker, why))
				}
			}
		}
		if n == 0 {
			line, col := a.pos(w)
			why := "its prompt has no fence"
			if len(parts) == 0 {
				why = "it has no prompt in this workflow (the action or the agent's tools bring the issue text in)"
			}
			w.reportAt(line, col, fmt.Sprintf("%s gets untrusted input with no per-run nonce fence: %s; put the untrusted text between two identical markers that carry a random nonce", a.kind, why))
		}
	})
}

func (w *Workflow) judgeFence(a *agent, f fence) string {
	if len(f.exprs) == 0 && len(f.shellRefs) == 0 {
		return "it is a constant, so a title can close it"
	}
	var why string
	for _, e := range f.exprs {
		if e.taint != "" {
			return "it carries attacker text (" + e.taint + ")"
		}
		r := w.judgeNonceExpr(e, scope{job: a.st.job, step: a.st}, 0)
		if r == "" {
			return ""
		}
		why = r
	}
	for _, name := range f.shellRefs {
		r := w.judgeShellNonce(a.st, name)
		if r == "" {
			return ""
		}
		why = r
	}
	return why
}

// --- gate-names -------------------------------------------------------

// Gates are the phrases the operating prompt must contain outside the
// fence, so the model is told which rails bind it rather than left to
// infer a strategy (seed 000's gate-naming block).
var Gates = []struct {
	Name string
	Re   func() *regexp.Regexp
}{
	// Matched against the lower-cased prompt.
	{"reproduce with a failing test first", lazyRE(`reproduc`)},
	{"stop on sensitive paths", lazyRE(`sensitive|security[- ]review|threat[- ]model`)},
	{"open a draft pull request", lazyRE(`\bdraft\b`)},
	{"never merge", lazyRE(`(never|do not|don't|must not|not)\s+merge`)},
}

func runGateNames(w *Workflow) {
	w.forAgents(func(a *agent) {
		if a.model || !w.mayWrite(a.st.job) {
			return
		}
		var text strings.Builder
		for _, p := range w.promptParts(a) {
			text.WriteString(p.trustedText())
			text.WriteString("\n")
		}
		if strings.TrimSpace(text.String()) == "" {
			return // no operating prompt in the workflow: nonce-delimiter reports it
		}
		var missing []string
		low := strings.ToLower(text.String())
		for _, g := range Gates {
			if !g.Re().MatchString(low) {
				missing = append(missing, g.Name)
			}
		}
		if len(missing) > 0 {
			line, col := a.pos(w)
			w.reportAt(line, col, fmt.Sprintf("the operating prompt of %s (which can write) does not name the gates: %s", a.kind, strings.Join(missing, "; ")))
		}
	})
}

// --- cost-cap ---------------------------------------------------------

func runCostCap(w *Workflow) {
	for _, j := range w.jobs {
		for _, st := range j.steps {
			var who string
			for _, a := range st.agents {
				if !a.model {
					who = a.kind
					break
				}
			}
			if who == "" && st.fixrailRun {
				who = "fixrail run"
			}
			if who == "" {
				continue
			}
			budgets := w.budgetsBefore(st)
			if len(budgets) == 0 {
				line, col := st.al.Pos.Line, st.al.Pos.Col
				w.reportAt(line, col, fmt.Sprintf("no budget precheck runs before %s (a step such as fixrail budget check that fails the job when the budget is exceeded or unreadable)", who))
				continue
			}
			for _, b := range budgets {
				w.checkFailOpen(b)
			}
			w.checkBypass(st, budgets)
		}
	}
}

// budgetsBefore lists budget steps earlier in st's job or in jobs it needs.
func (w *Workflow) budgetsBefore(st *step) []*step {
	var out []*step
	for _, b := range st.job.steps[:st.idx] {
		if b.budget {
			out = append(out, b)
		}
	}
	seen := map[*job]bool{}
	var walk func(j *job)
	walk = func(j *job) {
		for _, n := range j.al.Needs {
			d := w.jobByID[strings.ToLower(n.Value)]
			if d == nil || seen[d] {
				continue
			}
			seen[d] = true
			for _, b := range d.steps {
				if b.budget {
					out = append(out, b)
				}
			}
			walk(d)
		}
	}
	walk(st.job)
	return out
}

func failOpenBool(b *actionlint.Bool) bool {
	return b != nil && (b.Value || b.Expression != nil)
}

func (w *Workflow) checkFailOpen(b *step) {
	if failOpenBool(b.al.ContinueOnError) {
		p := b.al.ContinueOnError.Pos
		w.reportPos(p, "budget step "+quote(b.name())+" has continue-on-error: a failed or unreadable budget lets the agent run")
	}
	if b.al.If != nil && strings.TrimSpace(b.al.If.Value) != "" && !strings.Contains(b.al.If.Value, "success()") {
		// A skipped step does not fail the job: the agent runs unbudgeted.
		w.reportPos(b.al.If.Pos, "budget step "+quote(b.name())+" can be skipped by its if: (a skipped check lets the agent run); condition the job instead")
	}
	if failOpenBool(b.job.al.ContinueOnError) {
		w.reportPos(b.job.al.ContinueOnError.Pos, "job "+b.job.id+" holding the budget step has continue-on-error")
	}
	if b.sh == nil {
		return
	}
	if b.budget && !slices.ContainsFunc(b.sh.calls, func(c *syntax.CallExpr) bool {
		n, _ := cmdName(c)
		return n != "echo" && n != "printf" && n != "true" && n != ":"
	}) {
		line, col := w.offsetPos(b.run.Run, 0)
		w.reportAt(line, col, "budget step "+quote(b.name())+" only prints: it checks nothing and cannot fail")
	}
	report := func(n syntax.Node, msg string) {
		line, col := w.offsetPos(b.run.Run, int(n.Pos().Offset()))
		w.reportAt(line, col, msg)
	}
	syntax.Walk(b.sh.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Exp == nil {
				return true
			}
			switch n.Exp.Op {
			case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
				if n.Exp.Word == nil || isNumberOrEmpty(printNode(n.Exp.Word)) {
					report(n, "budget read defaults to a value ("+printNode(n)+"): an unreadable budget reads as spent-nothing")
				}
			}
		case *syntax.BinaryCmd:
			if n.Op != syntax.OrStmt {
				return true
			}
			if c, ok := n.Y.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				a := args(c)
				if a[0] == "true" || a[0] == ":" || a[0] == "echo" || a[0] == "printf" || a[0] == "exit" && (len(a) == 1 || a[1] == "0") {
					report(n.Y, "budget command is made to succeed when it fails ("+strings.TrimSpace(printNode(n.Y))+" after ||)")
				}
			}
		case *syntax.CallExpr:
			a := args(n)
			if len(a) >= 2 && a[0] == "set" && slices.ContainsFunc(a[1:], func(s string) bool { return strings.HasPrefix(s, "+") && strings.Contains(s, "e") }) {
				report(n, "set +e in the budget step lets a failed budget read pass")
			}
		}
		return true
	})
}

func isNumberOrEmpty(s string) bool {
	s = strings.Trim(s, `"' `)
	return strings.Trim(s, "0123456789.") == ""
}

// checkBypass: an agent step or job that runs even when the budget step
// failed, or that is gated by "!= 'true'" on a budget output (an unset
// output reads as under budget).
func (w *Workflow) checkBypass(st *step, budgets []*step) {
	for _, cond := range []*actionlint.String{st.al.If, st.job.al.If} {
		if cond == nil {
			continue
		}
		text := cond.Value
		if !strings.Contains(text, "${{") {
			text = "${{ " + text + " }}"
		}
		lex := actionlint.NewExprLexer(text[strings.Index(text, "${{")+3:])
		node, err := actionlint.NewExprParser().Parse(lex)
		if err != nil {
			w.unparseable(cond.Pos, "if: does not parse: "+err.Message)
			continue
		}
		actionlint.VisitExprNode(node, func(n, _ actionlint.ExprNode, enter bool) {
			if !enter {
				return
			}
			switch n := n.(type) {
			case *actionlint.FuncCallNode:
				switch strings.ToLower(n.Callee) {
				case "always", "failure":
					w.reportPos(cond.Pos, "the agent runs even when the budget precheck failed ("+n.Callee+"() in if:)")
				}
			case *actionlint.NotOpNode:
				if c, ok := n.Operand.(*actionlint.FuncCallNode); ok && strings.EqualFold(c.Callee, "cancelled") {
					w.reportPos(cond.Pos, "the agent runs even when the budget precheck failed (!cancelled() in if:)")
				}
			case *actionlint.CompareOpNode:
				if n.Kind != actionlint.CompareOpNodeKindNotEq {
					return
				}
				for _, side := range []actionlint.ExprNode{n.Left, n.Right} {
					p, _ := pathOf(side)
					if len(p) >= 3 && (p[0] == "steps" && w.isBudgetID(st.job, p[1]) || p[0] == "needs" && w.jobHasBudget(p[1])) && p[2] == "outputs" {
						w.reportPos(cond.Pos, "the agent is gated by != on a budget output: an unset or skipped check reads as under budget (compare == to the admitting value)")
					}
				}
			}
		})
	}
}

func (w *Workflow) isBudgetID(j *job, id string) bool {
	for _, s := range j.steps {
		if s.id == id && s.budget {
			return true
		}
	}
	return false
}

func (w *Workflow) jobHasBudget(id string) bool {
	j := w.jobByID[id]
	if j == nil {
		return false
	}
	return slices.ContainsFunc(j.steps, func(s *step) bool { return s.budget })
}

// --- no-merge ---------------------------------------------------------

// mergeActions merge, approve or push on the workflow's behalf.
var mergeActions = []string{
	"pascalgn/automerge-action", "peter-evans/enable-pull-request-automerge", "ahmadnassri/action-dependabot-auto-merge",
	"hmarr/auto-approve-action", "ana06/automatic-pull-request-review", "ad-m/github-push-action",
	"stefanzweifel/git-auto-commit-action", "endbug/add-and-commit", "reitermarkus/automerge",
	"juliangruber/merge-pull-request-action", "devmasx/merge-branch", "everlytic/branch-merge", "actions-ecosystem/action-merge",
}

// mayMerge is scriptMerge's prefilter: every one of its alternatives holds
// "erge" or "APPROVE", so a script with neither cannot match, and running
// the expression over a large github-script body (gh-aw lock files inline
// thousands of lines) was the costliest step of no-merge.
// FuzzScriptMergePrefilter holds the two together.
func mayMerge(s string) bool { return strings.Contains(s, "erge") || strings.Contains(s, "APPROVE") }

// scriptMerge finds merge, auto-merge and approval calls in github-script.
var scriptMerge = lazyRE(`pulls\.merge\b|\.merge\(\s*\{|mergePullRequest|enablePullRequestAutoMerge|event:\s*['"]APPROVE['"]|repos\.merge\b`)

// lintEnv is the machine policy.Analyze assumes: a GitHub-hosted runner.
var lintEnv = policy.Env{Home: "/home/runner", TmpDir: "/tmp"}

func runNoMerge(w *Workflow) {
	for _, j := range w.jobs {
		for _, st := range j.steps {
			if st.sh != nil {
				w.noMergeScript(st)
			}
			if st.act == nil {
				continue
			}
			for _, m := range mergeActions {
				if st.uses == m || strings.HasPrefix(st.uses, m+"/") {
					w.reportPos(st.act.Uses.Pos, st.uses+" merges, approves or pushes for the workflow")
				}
			}
			if st.uses == "actions/github-script" {
				if s := st.act.Inputs["script"]; s != nil && mayMerge(s.Value.Value) {
					if loc := scriptMerge().FindStringIndex(s.Value.Value); loc != nil {
						line, col := w.offsetPos(s.Value, loc[0])
						w.reportAt(line, col, "github-script merges, enables auto-merge or approves a pull request ("+s.Value.Value[loc[0]:loc[1]]+")")
					}
				}
			}
		}
	}
	w.forAgents(func(a *agent) {
		al := w.allowlist(a)
		for _, g := range al.grantsMerge {
			line, col := al.line, al.col
			w.reportAt(line, col, fmt.Sprintf("%s may merge or push: its allowlist grants %s", a.kind, g))
		}
	})
}

func mergeMatch(m policy.Match) bool {
	switch m.Rule {
	case policy.PushForce, policy.PushProtected:
		// An undecidable push counts; a script that is undecidable for
		// every rule (an unknown command name, an interpreter one-liner)
		// is not by itself a push.
		return !m.Unresolvable || strings.Contains(m.Reason, "push")
	case policy.Publish:
		return strings.Contains(m.Reason, "merge") && (!m.Unresolvable || strings.Contains(m.Reason, "gh pr merge"))
	}
	return false
}

// noMergeScript asks the hook's own shell analysis about the script. Each
// ${{ }} reads as a run-time value, so a push whose target comes from the
// event is undecidable, and an undecidable push is reported.
func (w *Workflow) noMergeScript(st *step) {
	if inert(st.sh.file) {
		return
	}
	var hits []policy.Match
	for _, m := range w.shellCache.analyze(st.sh.src) {
		if mergeMatch(m) {
			hits = append(hits, m)
		}
	}
	if len(hits) == 0 {
		return
	}
	// Locate the hits at the top-level statements that show them on their
	// own (the whole script is what decides); one finding per statement.
	reported := false
	for _, top := range st.sh.file.Stmts {
		text := st.sh.src[top.Pos().Offset():top.End().Offset()]
		if inert(&syntax.File{Stmts: []*syntax.Stmt{top}}) {
			continue // only locating: the whole script already decided
		}
		var rules, reasons []string
		for _, m := range w.shellCache.analyze(text) {
			if !mergeMatch(m) || slices.Contains(rules, string(m.Rule)) {
				continue
			}
			rules = append(rules, string(m.Rule))
			r := m.Reason
			if m.Unresolvable {
				r += " (undecidable statically, so it counts)"
			}
			if !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		if len(rules) > 0 {
			line, col := w.offsetPos(st.run.Run, int(top.Pos().Offset()))
			w.reportAt(line, col, strings.Join(rules, ", ")+": "+strings.Join(reasons, "; "))
			reported = true
		}
	}
	if !reported {
		line, col := w.offsetPos(st.run.Run, 0)
		w.reportAt(line, col, string(hits[0].Rule)+": "+hits[0].Reason+" (from the script as a whole)")
	}
}

// inertCommands run no other program, whatever their arguments, so a
// script made only of them cannot push or merge and is not handed to the
// shell analysis (which costs more than the rest of the lint). The name
// must be a plain literal word: quoting, expansion, a function or an alias
// of the same name sends the script to the analysis.
var inertCommands = map[string]bool{
	"echo": true, "printf": true, "cat": true, "test": true, "[": true, "true": true, "false": true,
	":": true, "exit": true, "mkdir": true, "ls": true, "cd": true, "pwd": true, "touch": true,
	"head": true, "tail": true, "wc": true, "sort": true, "uniq": true, "cut": true, "tr": true,
	"grep": true, "jq": true, "date": true, "sleep": true, "basename": true, "dirname": true,
	"base64": true, "sha256sum": true, "tee": true, "export": true, "read": true, "shift": true,
	"set": true, "openssl": true, "uuidgen": true, "xxd": true, "od": true,
}

func inert(f *syntax.File) bool {
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			w := n.Args[0]
			if len(w.Parts) != 1 {
				ok = false
				return false
			}
			l, isLit := w.Parts[0].(*syntax.Lit)
			if !isLit || !inertCommands[l.Value] {
				ok = false
			}
		case *syntax.FuncDecl, *syntax.CoprocClause, *syntax.ProcSubst:
			ok = false
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
				ok = false // ${x@P} runs command substitutions in the value
			}
		}
		return ok
	})
	return ok
}

func analyzeBash(src string) []policy.Match {
	in, _ := json.Marshal(map[string]string{"command": src})
	ms, err := policy.Analyze(policy.Call{Tool: "Bash", Input: in}, lintEnv)
	if err != nil {
		return []policy.Match{{Rule: policy.PushProtected, Reason: "the shell analysis refused the script: " + err.Error(), Unresolvable: true}}
	}
	return ms
}

// --- default-deny-allowlist ------------------------------------------

func runAllowlist(w *Workflow) {
	for _, j := range w.jobs {
		first := true
		for _, st := range j.steps {
			for _, a := range st.agents {
				al := w.allowlist(a)
				line, col := al.line, al.col
				if !al.explicit {
					w.reportAt(line, col, fmt.Sprintf("%s runs without an explicit tool allowlist this linter can read (%s)", a.kind, al.where))
				}
				for _, p := range al.problems {
					w.reportAt(line, col, fmt.Sprintf("%s: %s", a.kind, p))
				}
				if a.model {
					continue
				}
				if first && al.explicit {
					if wt := writeTools(al.items); len(wt) > 0 {
						w.reportAt(line, col, fmt.Sprintf("the first agent invocation of job %s must be read-only plus the test path, but it is allowed %s (stage the write tools into a second invocation)", j.id, strings.Join(wt, ", ")))
					}
				}
				first = false
			}
		}
	}
}

// allowInfo is what the linter can read of one invocation's tool set.
type allowInfo struct {
	explicit    bool
	items       []string
	problems    []string
	grantsMerge []string
	where       string
	line, col   int
}

var generalTools = []string{"git", "gh", "npx", "npm", "pnpm", "yarn", "bun", "node", "python", "python3", "pip", "bash", "sh", "zsh", "curl", "wget", "make", "go", "cargo", "docker", "env", "eval", "sudo", "xargs", "find"}

func (w *Workflow) allowlist(a *agent) allowInfo {
	if a.allow != nil {
		return *a.allow
	}
	ai := w.allowlist0(a)
	a.allow = &ai
	return ai
}

func (w *Workflow) allowlist0(a *agent) allowInfo {
	line, col := a.pos(w)
	ai := allowInfo{line: line, col: col}
	addItems := func(s string, p *actionlint.String) {
		if p != nil && p.Pos != nil {
			ai.line, ai.col = p.Pos.Line, p.Pos.Col
		}
		ai.items = append(ai.items, splitTools(s)...)
		ai.explicit = true
	}
	switch a.kind {
	case "claude-code-action", "claude":
		ai.where = "allowed_tools, or --allowedTools in claude_args"
		var argv []string
		if a.call != nil {
			argv = args(&syntax.CallExpr{Args: a.rest})
		} else {
			if s := a.input("allowed_tools"); s != nil {
				addItems(s.Value, s)
			}
			if s := a.input("claude_args"); s != nil {
				argv = strings.Fields(s.Value)
				ai.line, ai.col = s.Pos.Line, s.Pos.Col
			}
			if s := a.input("settings"); s != nil && strings.Contains(s.Value, `"allow"`) {
				ai.explicit = true
			}
		}
		for i := 0; i < len(argv); i++ {
			t := strings.Trim(argv[i], `"'`)
			switch {
			case t == "--allowedTools" || t == "--allowed-tools":
				for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
					addItems(argv[i+1], nil)
					i++
				}
			case strings.HasPrefix(t, "--allowedTools=") || strings.HasPrefix(t, "--allowed-tools="):
				addItems(t[strings.Index(t, "=")+1:], nil)
			case t == "--dangerously-skip-permissions":
				ai.problems = append(ai.problems, "--dangerously-skip-permissions turns every permission check off")
			case t == "--permission-mode" && i+1 < len(argv) && strings.Trim(argv[i+1], `"'`) == "bypassPermissions",
				t == "--permission-mode=bypassPermissions":
				ai.problems = append(ai.problems, "--permission-mode bypassPermissions turns every permission check off")
			}
		}
	case "codex-action", "codex":
		ai.explicit = true
		var text []string
		if a.call != nil {
			text = args(&syntax.CallExpr{Args: a.rest})
		} else {
			for _, k := range []string{"sandbox", "safety-strategy", "codex-args"} {
				if s := a.input(k); s != nil {
					text = append(text, k+"="+s.Value)
				}
			}
		}
		joined := strings.Join(text, " ")
		for _, bad := range []string{"danger-full-access", "--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto", "safety-strategy=unsafe"} {
			if strings.Contains(joined, bad) {
				ai.problems = append(ai.problems, bad+" removes the sandbox or the approval step")
			}
		}
	case "run-gemini-cli", "gemini":
		ai.where = "tools.core / coreTools in settings, or --allowed-tools"
		if a.call != nil {
			if v, ok := a.flagValues("--allowed-tools"); ok {
				for _, x := range v {
					addItems(x, nil)
				}
			}
			if a.hasArg("--yolo", "-y", "--approval-mode=yolo") {
				ai.problems = append(ai.problems, "--yolo approves every tool call")
			}
		} else if s := a.input("settings"); s != nil {
			if strings.Contains(s.Value, `"coreTools"`) || strings.Contains(s.Value, `"core"`) {
				ai.explicit = true
				ai.line, ai.col = s.Pos.Line, s.Pos.Col
			}
			if strings.Contains(s.Value, "yolo") {
				ai.problems = append(ai.problems, "yolo approval mode approves every tool call")
			}
		}
	case "copilot":
		ai.where = "--allow-tool"
		if v, ok := a.flagValues("--allow-tool"); ok {
			for _, x := range v {
				addItems(x, nil)
			}
		}
		if a.hasArg("--allow-all-tools", "--allow-all-paths", "--yolo") {
			ai.problems = append(ai.problems, "--allow-all-tools/--allow-all-paths allows every tool")
		}
	case "ai-inference", "chat-completion", "ai-assessment":
		ai.explicit = true
		if s := a.input("enable-github-mcp"); s != nil && s.Value != "false" {
			ai.problems = append(ai.problems, "enable-github-mcp gives the model GitHub tools with no allowlist")
		}
	default:
		ai.where = "this agent's tool settings are not in the workflow"
		if a.hasArg("--yes", "--yes-always", "--yolo", "--auto-approve") {
			ai.problems = append(ai.problems, "auto-approve flag approves every action")
		}
	}
	for _, it := range ai.items {
		if wildcardTool(it) {
			ai.problems = append(ai.problems, "allowlist entry "+quote(it)+" is a wildcard")
		}
		if g := mergeGrant(it); g != "" {
			ai.grantsMerge = append(ai.grantsMerge, g)
		}
	}
	return ai
}

func splitTools(s string) []string {
	var out []string
	depth := 0
	start := 0
	flush := func(end int) {
		t := strings.Trim(strings.TrimSpace(s[start:end]), `"'`)
		if t != "" {
			out = append(out, t)
		}
	}
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',', '\n':
			if depth <= 0 {
				flush(i)
				start = i + 1
			}
		case ' ':
			if depth <= 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(s))
	return out
}

func bashInner(it string) (string, bool) {
	if it == "Bash" {
		return "", true
	}
	if strings.HasPrefix(it, "Bash(") && strings.HasSuffix(it, ")") {
		return strings.TrimSpace(it[5 : len(it)-1]), true
	}
	return "", false
}

func wildcardTool(it string) bool {
	if it == "*" || it == "Bash" || strings.HasPrefix(it, "mcp__") && (strings.Count(it, "__") < 2 || strings.HasSuffix(it, "*")) {
		return true
	}
	inner, ok := bashInner(it)
	if !ok {
		return false
	}
	if inner == "" || inner == "*" || strings.HasPrefix(inner, ":") {
		return true
	}
	// A general-purpose program with any arguments: Bash(git:*), Bash(gh *).
	f := strings.FieldsFunc(inner, func(r rune) bool { return r == ' ' || r == ':' })
	return len(f) >= 1 && slices.Contains(generalTools, strings.TrimSuffix(f[0], "*")) && (len(f) == 1 || len(f) == 2 && f[1] == "*")
}

func mergeGrant(it string) string {
	if it == "*" || it == "Bash" || it == "Bash(*)" {
		return it + " (any command, including gh pr merge and git push)"
	}
	inner, ok := bashInner(it)
	if ok {
		f := strings.FieldsFunc(inner, func(r rune) bool { return r == ' ' || r == ':' })
		if len(f) > 0 && (f[0] == "gh" || f[0] == "git") && (len(f) == 1 || f[1] == "*") {
			return it + " (includes " + map[string]string{"gh": "gh pr merge", "git": "git push"}[f[0]] + ")"
		}
		if len(f) >= 3 && f[0] == "gh" && f[1] == "pr" && f[2] == "merge" || len(f) >= 2 && f[0] == "git" && f[1] == "push" {
			return it
		}
		return ""
	}
	low := strings.ToLower(it)
	for _, t := range []string{"merge_pull_request", "push_files", "enable_auto_merge"} {
		if strings.HasPrefix(low, "mcp__") && strings.Contains(low, t) {
			return it
		}
	}
	return ""
}

// writeTools lists entries that write outside a test path.
func writeTools(items []string) []string {
	var out []string
	for _, it := range items {
		name, arg, _ := strings.Cut(it, "(")
		switch name {
		case "Write", "Edit", "MultiEdit", "NotebookEdit":
			if arg == "" || !strings.Contains(strings.ToLower(arg), "test") {
				out = append(out, it)
			}
		case "Bash":
			if arg == "" || wildcardTool(it) {
				out = append(out, it)
			}
		}
	}
	return out
}

// --- mode-parity ------------------------------------------------------

var modeName = lazyRE(`(^|[_-])mode($|[_-])`)

func isModeRef(p []string) bool {
	return len(p) >= 2 && modeName().MatchString(p[len(p)-1]) && (p[0] == "inputs" || p[0] == "env" || p[0] == "vars" || p[0] == "matrix" || p[0] == "github")
}

func (w *Workflow) mentionsMode(s *actionlint.String) bool {
	if s == nil {
		return false
	}
	sc := w.exprsOf(s)
	exprs := sc.exprs
	if len(exprs) == 0 && s.Value != "" && !s.Quoted && (strings.Contains(s.Value, ".") || strings.Contains(s.Value, "(")) {
		// A bare if: condition.
		lex := actionlint.NewExprLexer(s.Value + "}}")
		if n, err := actionlint.NewExprParser().Parse(lex); err == nil {
			exprs = []*expr{{refs: refPaths(n)}}
		}
	}
	for _, e := range exprs {
		if slices.ContainsFunc(e.refs, isModeRef) {
			return true
		}
	}
	return false
}

// railStep: a step that holds a budget, an allowlist or a fence.
func railStep(st *step) string {
	switch {
	case st.budget:
		return "the budget precheck"
	case len(st.agents) > 0:
		return "an agent invocation (its allowlist and fence)"
	case st.fixrailRun:
		return "fixrail run (its budget, allowlist and fence)"
	}
	return ""
}

func (w *Workflow) stepMentionsMode(st *step) *actionlint.Pos {
	var ss []*actionlint.String
	if st.run != nil {
		ss = append(ss, st.run.Run)
	}
	if st.act != nil {
		for _, in := range sortedInputs(st.act) {
			ss = append(ss, in.Value)
		}
	}
	if st.al.Env != nil {
		for _, k := range sortedKeys(st.al.Env.Vars) {
			ss = append(ss, st.al.Env.Vars[k].Value)
		}
	}
	for _, s := range ss {
		if w.mentionsMode(s) {
			return s.Pos
		}
	}
	return nil
}

func runModeParity(w *Workflow) {
	count := 0
	for _, j := range w.jobs {
		if w.mentionsMode(j.al.If) {
			for _, st := range j.steps {
				if r := railStep(st); r != "" {
					w.reportPos(j.al.If.Pos, "job "+j.id+" is conditional on the mode and holds "+r+": the modes must share budget, allowlist and fence")
					break
				}
			}
		}
		for _, st := range j.steps {
			if w.mentionsMode(st.al.If) {
				count++
				if count > 1 {
					w.reportPos(st.al.If.Pos, "a second step is conditional on the mode: the modes may differ by exactly one step (the human confirm)")
				}
				if r := railStep(st); r != "" {
					w.reportPos(st.al.If.Pos, "the mode-conditional step is "+r+": the modes must share budget, allowlist and fence")
				}
			}
			if r := railStep(st); r != "" {
				if p := w.stepMentionsMode(st); p != nil {
					w.reportPos(p, r+" depends on the mode: no budget, allowlist or fence setting may")
				}
			}
		}
	}
}

// --- template-injection ----------------------------------------------

// codeSinkInputs are action inputs that are evaluated as code.
var codeSinkInputs = map[string][]string{
	"actions/github-script":             {"script"},
	"amadevus/pwsh-script":              {"script"},
	"jannekem/run-python-script-action": {"script"},
	"cardinalby/js-eval-action":         {"expression"},
	"addnab/docker-run-action":          {"run", "options"},
}

func runTemplateInjection(w *Workflow) {
	for _, j := range w.jobs {
		for _, st := range j.steps {
			if st.run != nil && st.run.Run != nil {
				for _, e := range w.exprsOf(st.run.Run).exprs {
					if e.taint != "" {
						w.reportAt(e.line, e.col, e.taint+" is expanded into the run: script before the shell parses it; pass it through env: and quote \"$VAR\"")
					}
				}
			}
			if st.act == nil {
				continue
			}
			w.localActionInjection(st)
			for _, k := range codeSinkInputs[st.uses] {
				in := st.act.Inputs[k]
				if in == nil {
					continue
				}
				for _, e := range w.exprsOf(in.Value).exprs {
					if e.taint != "" {
						w.reportAt(e.line, e.col, fmt.Sprintf("%s is expanded into the %s input of %s, which runs as code; pass it through env: instead", e.taint, k, st.uses))
					}
				}
			}
		}
	}
}
