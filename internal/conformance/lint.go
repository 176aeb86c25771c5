package conformance

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rhysd/actionlint"
)

// Finding is one rule violation at a place in a workflow file.
type Finding struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	// Snippet is the source line, for humans and for fingerprints.
	Snippet string `json:"snippet,omitempty"`
}

// Rule is one conformance check, in the manner of go/analysis's Analyzer:
// a name, what it asks for, and examples that prove it can fail (Positive
// workflows must produce at least one finding of the rule) and that it is
// not noise (Negative workflows must produce none). The examples run at
// test time.
type Rule struct {
	ID    string
	Title string // one line
	Doc   string
	// SecuritySeverity (0.0-10.0) and Precision feed SARIF consumers.
	SecuritySeverity string
	Precision        string
	Positive         []string
	Negative         []string
	Run              func(w *Workflow)
}

// Unparseable is the id of findings about input the linter could not
// analyse. It cannot be ignored inline: what was not read was not checked.
const Unparseable = "unparseable"

// BadIgnore is the id of an inline ignore without a reason or naming no
// known rule; such an ignore suppresses nothing.
const BadIgnore = "bad-ignore"

// Options changes what Lint reports.
type Options struct {
	// NoIgnores disables inline ignore comments (for audits).
	NoIgnores bool
	// Rules limits the run to these ids (nil: all). Unparseable always runs.
	Rules []string
	// Shell, if set, is shared by the files of one run (see ShellCache).
	Shell *ShellCache
	// LocalAction, if set, reads the local actions (uses: ./dir) a step
	// calls, so template-injection follows attacker text into them. Nil:
	// local actions are not read.
	LocalAction LocalActionReader
}

// Lint checks one workflow file. Findings are sorted by position and
// de-duplicated (a YAML alias reports once per place).
func Lint(path string, src []byte, opt Options) []Finding {
	w := parse(path, src)
	w.shellCache = opt.Shell
	w.localAction = opt.LocalAction
	if w.wf != nil {
		for _, r := range Rules() {
			if opt.Rules != nil && !slices.Contains(opt.Rules, r.ID) {
				continue
			}
			w.rule = r.ID
			r.Run(w)
		}
	}
	fs := w.findings
	if !opt.NoIgnores {
		fs = w.applyIgnores(fs)
	}
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	return slices.CompactFunc(fs, func(a, b Finding) bool { return a == b })
}

func (w *Workflow) reportAt(line, col int, msg string) {
	f := Finding{Rule: w.rule, Message: msg, Path: w.Path, Line: max(line, 1), Column: max(col, 1)}
	if line >= 1 && line <= len(w.lines) {
		f.Snippet = strings.TrimRight(w.lines[line-1], " \t\r")
	}
	w.findings = append(w.findings, f)
}

func (w *Workflow) unparseable(p *actionlint.Pos, msg string) {
	saved := w.rule
	w.rule = Unparseable
	w.reportPos(p, msg)
	w.rule = saved
}

// reportPos reports at an actionlint position (nil: the top of the file).
func (w *Workflow) reportPos(p *actionlint.Pos, msg string) {
	if p == nil {
		w.reportAt(1, 1, msg)
		return
	}
	w.reportAt(p.Line, p.Col, msg)
}

// ignoreRe is "# fixrail-lint: ignore[rule,rule] reason".
var ignoreRe = lazyRE(`#\s*fixrail-lint:\s*ignore\[([^\]]*)\]\s*(.*)$`)

// applyIgnores drops findings covered by an ignore comment on their line
// or on the line above, and reports ignores that lack a reason or name an
// unknown rule (they suppress nothing).
func (w *Workflow) applyIgnores(fs []Finding) []Finding {
	type ign struct {
		rules []string
		ok    bool
	}
	ignores := map[int]ign{}
	known := map[string]bool{}
	for _, r := range Rules() {
		known[r.ID] = true
	}
	w.rule = BadIgnore
	var inText map[int]bool
	for i, l := range w.lines {
		if !strings.Contains(l, "fixrail-lint") {
			continue
		}
		m := ignoreRe().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if inText == nil {
			inText = w.scalarTextLines()
		}
		if inText[i+1] {
			// Inside a multi-line scalar the line is script or prompt text,
			// not a YAML comment: it suppresses nothing.
			w.reportAt(i+1, strings.Index(l, "#")+1, "ignore sits inside a multi-line value (script or prompt text), not in a YAML comment: it suppresses nothing")
			continue
		}
		var rules []string
		ok := strings.TrimSpace(m[2]) != ""
		for _, r := range strings.Split(m[1], ",") {
			r = strings.TrimSpace(r)
			if !known[r] {
				ok = false
				w.reportAt(i+1, strings.Index(l, "#")+1, "ignore names unknown rule "+quote(r)+" (it suppresses nothing)")
			}
			rules = append(rules, r)
		}
		if strings.TrimSpace(m[2]) == "" {
			w.reportAt(i+1, strings.Index(l, "#")+1, "ignore has no reason (it suppresses nothing): write # fixrail-lint: ignore[rule] why this is safe")
		}
		ignores[i+1] = ign{rules, ok}
	}
	fs = append(fs, w.findings[len(fs):]...)
	var out []Finding
	for _, f := range fs {
		if f.Rule != Unparseable && f.Rule != BadIgnore {
			if g, ok := ignores[f.Line]; ok && g.ok && slices.Contains(g.rules, f.Rule) {
				continue
			}
			if g, ok := ignores[f.Line-1]; ok && g.ok && slices.Contains(g.rules, f.Rule) {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// scalarTextLines marks the lines that belong to the text of a multi-line
// scalar (a run: block, a prompt) rather than to the YAML around it.
func (w *Workflow) scalarTextLines() map[int]bool {
	m := map[int]bool{}
	for s := range w.scalars {
		if s == nil || s.Pos == nil || !strings.Contains(s.Value, "\n") || s.Pos.Line < 1 || s.Pos.Line > len(w.lines) {
			continue
		}
		indent := indentOf(w.lines[s.Pos.Line-1])
		for ln := s.Pos.Line + 1; ln <= len(w.lines); ln++ {
			t := w.lines[ln-1]
			if strings.TrimSpace(t) != "" && indentOf(t) <= indent {
				break
			}
			m[ln] = true
		}
	}
	return m
}

func quote(s string) string { return "\"" + s + "\"" }
