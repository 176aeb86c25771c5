package conformance

import (
	"cmp"
	"strings"
)

// untrustedEvent lists, relative to github.event, the fields an outsider
// writes or picks (anchors-lint §7 tiers A and C). "*" matches one segment,
// "**" the rest of the path. Any prefix of an entry is a whole object that
// contains attacker text (tier B: toJSON(github.event.issue)).
var untrustedEvent = [][]string{
	p("issue.title"), p("issue.body"), p("issue.labels.*.name"), p("issue.labels.*.description"),
	p("issue.user.login"), p("issue.user.name"), p("issue.user.email"),
	p("issue.assignee.login"), p("issue.assignees.*.login"),
	p("issue.milestone.title"), p("issue.milestone.description"),
	p("issue.type.name"), p("issue.type.description"), p("issue.issue_field_values.*.value"),
	p("comment.body"), p("comment.user.login"), p("comment.path"), p("comment.diff_hunk"),
	p("changes.**"), p("label.name"), p("label.description"), p("sender.login"),
	p("review.body"), p("review.user.login"), p("review_comment.body"),
	p("pull_request.title"), p("pull_request.body"), p("pull_request.user.login"),
	p("pull_request.head.ref"), p("pull_request.head.label"), p("pull_request.head.repo.default_branch"),
	p("pull_request.head.repo.description"), p("pull_request.head.repo.homepage"), p("pull_request.head.repo.name"),
	p("discussion.title"), p("discussion.body"), p("discussion.user.login"),
	p("pages.*.page_name"), p("pages.*.title"),
	p("commits.*.message"), p("commits.*.author.**"), p("commits.*.committer.**"),
	p("head_commit.message"), p("head_commit.author.**"), p("head_commit.committer.**"),
	p("workflow_run.display_title"), p("workflow_run.head_branch"), p("workflow_run.head_commit.**"),
	p("workflow_run.head_repository.description"), p("workflow_run.pull_requests.*.head.ref"),
	p("merge_group.head_ref"), p("merge_group.head_commit.**"),
	p("client_payload.**"), p("inputs.**"),
}

func p(s string) []string { return strings.Split(s, ".") }

// matchPattern reports whether path matches pat ("*" one segment, "**" the
// rest), a "*" in path (an array index) matching any segment.
func matchPattern(pat, path []string) bool {
	for i, seg := range pat {
		if seg == "**" {
			return len(path) >= i
		}
		if i >= len(path) {
			return false
		}
		if seg != "*" && path[i] != "*" && seg != path[i] {
			return false
		}
	}
	return len(path) == len(pat)
}

// prefixOf reports whether path is a proper prefix of something pat matches.
func prefixOf(path, pat []string) bool {
	for i, seg := range path {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if pat[i] != "*" && seg != "*" && seg != pat[i] {
			return false
		}
	}
	return len(path) < len(pat)
}

// eventTaint says why github.<rest> is attacker-controllable, or "".
func eventTaint(rest []string) string {
	if len(rest) == 0 {
		return "the whole github context (it holds the event's attacker-written text)"
	}
	if rest[0] == "head_ref" {
		return "github.head_ref (a branch name the PR author picks)"
	}
	if rest[0] != "event" {
		return ""
	}
	ev := rest[1:]
	if len(ev) == 0 {
		return "the whole event payload (it holds attacker-written text)"
	}
	if ev[0] == "inputs" {
		// Only workflow_dispatch fills github.event.inputs (in a called
		// workflow it is the caller's dispatch): sent by someone with write
		// access, not an attacker (see dispatchInput).
		return ""
	}
	for _, pat := range untrustedEvent {
		if matchPattern(pat, ev) {
			return "github." + strings.Join(rest, ".") + " (attacker-controlled)"
		}
	}
	for _, pat := range untrustedEvent {
		if prefixOf(ev, pat) {
			return "github." + strings.Join(rest, ".") + " (a whole object holding attacker-written text)"
		}
	}
	return ""
}

// dispatchInput reports whether inputs.<name> can only come from a
// workflow_dispatch: the workflow cannot be called (no workflow_call
// trigger), or the caller's inputs do not declare it (GitHub refuses an
// undeclared input). Only someone with write access to the repository can
// dispatch a workflow — the same access that edits the workflow itself —
// so what they type is not attacker input. A workflow that relays
// attacker text into another's dispatch (gh workflow run -f title=...) is
// judged where it relays, not here.
func (w *Workflow) dispatchInput(name string) bool {
	return !w.hasCall || !w.callInputs[name]
}

// callerID marks the taint of a dispatch or call input whose name says it
// is a number or an id (issue_number, pr_id): still code injection in a
// script, but in a prompt it is a reference, not attacker prose, so
// title-in-fence does not report it.
const callerID = "a caller-supplied id"

var idName = lazyRE(`(number|_num|_id|^id|^pr|^issue)$`)

func inputKind(name string) string {
	if idName().MatchString(name) {
		return " (" + callerID + ")"
	}
	return " (a string input from a calling workflow)"
}

// scope is where an expression is evaluated: which job and step, so env and
// step outputs resolve.
type scope struct {
	job  *job
	step *step // nil at job level
}

// pathTaint says why the context path is attacker-controllable in sc.
func (w *Workflow) pathTaint(path []string, sc scope) string {
	if len(path) == 0 {
		return ""
	}
	switch path[0] {
	case "github":
		return eventTaint(path[1:])
	case "inputs":
		if len(path) == 1 {
			if !w.hasCall {
				return ""
			}
			return "the whole inputs context (a calling workflow's inputs)"
		}
		if w.dispatchInput(path[1]) {
			return ""
		}
		if t := w.inputTypes[path[1]]; t == "boolean" || t == "number" || t == "choice" || t == "environment" {
			return ""
		}
		return "inputs." + path[1] + inputKind(path[1])
	case "env":
		if len(path) == 1 {
			return ""
		}
		return w.envTaint(path[1], sc)
	case "steps":
		if len(path) < 3 || path[2] != "outputs" || sc.job == nil {
			return ""
		}
		for _, st := range sc.job.steps {
			if sc.step != nil && st == sc.step {
				break // only earlier steps have outputs
			}
			if st.id != path[1] || st.outTaint == "" {
				continue
			}
			if st.outKeys != nil && len(path) >= 4 && len(st.agents) == 0 {
				// A run: step: only the keys written from attacker text.
				if t := cmp.Or(st.outKeys[path[3]], st.outKeys["*"]); t != "" {
					return "steps." + path[1] + ".outputs." + path[3] + " (" + t + ")"
				}
				continue
			}
			return "steps." + path[1] + ".outputs (" + st.outTaint + ")"
		}
	case "needs":
		if len(path) < 3 || path[2] != "outputs" {
			return ""
		}
		j := w.jobByID[path[1]]
		if j == nil {
			return ""
		}
		if len(path) == 3 {
			for _, t := range j.outTaint {
				return "needs." + path[1] + ".outputs (" + t + ")"
			}
			return ""
		}
		if t := j.outTaint[path[3]]; t != "" {
			return "needs." + path[1] + ".outputs." + path[3] + " (" + t + ")"
		}
	}
	return ""
}

// envTaint says why the environment variable (lower-cased name) holds
// attacker text in sc: set from a tainted expression at workflow, job or
// step level, or written to $GITHUB_ENV by an earlier step from tainted data.
func (w *Workflow) envTaint(name string, sc scope) string {
	name = strings.ToLower(name)
	if sc.step != nil {
		if t, ok := sc.step.envTaint[name]; ok {
			return t // the innermost definition wins, tainted or not
		}
	}
	if sc.job != nil {
		for _, st := range sc.job.steps {
			if sc.step != nil && st == sc.step {
				break
			}
			if t, ok := st.exportTaint[name]; ok && t != "" {
				return t
			}
			if t, ok := st.exportTaint["*"]; ok && t != "" {
				return t
			}
		}
		if t, ok := sc.job.envTaint[name]; ok {
			return t
		}
	}
	return w.envTaint0[name]
}

// taintExpr fills e.taint for scope sc.
func (w *Workflow) taintExpr(e *expr, sc scope) string {
	for _, f := range e.flows {
		if t := w.pathTaint(f, sc); t != "" {
			e.taint = t
			return t
		}
	}
	e.taint = ""
	return ""
}

// scalarTaint evaluates every expression of s in sc and returns the first
// reason, or "".
func (w *Workflow) scalarTaint(sc *scalar, s scope) string {
	first := ""
	for _, e := range sc.exprs {
		if t := w.taintExpr(e, s); t != "" && first == "" {
			first = t
		}
	}
	return first
}
