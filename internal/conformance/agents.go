package conformance

import (
	"path"
	"slices"
	"strings"

	"github.com/rhysd/actionlint"
	"mvdan.cc/sh/v3/syntax"
)

// agent is one direct invocation of a coding agent or a model: an action
// step, or a command inside a run: script. fixrail run is not one: fixrail
// fences, names gates and stages tools itself, and a step that runs both
// fixrail and an agent has the agent judged like any other.
type agent struct {
	st   *step
	kind string
	// model is a single-shot model call without tools: its prompt and
	// output are judged, its tool set and gates are not.
	model bool
	call  *syntax.CallExpr // nil for an action; for a nested script, the outer call
	rest  []*syntax.Word   // the agent's arguments after the program
	allow *allowInfo       // computed once
	parts []promptPart     // computed once
}

// agentActions maps action references (lower-cased, without @ref) to the
// agent they run.
var agentActions = []struct {
	prefix, kind string
	model        bool
}{
	{"anthropics/claude-code-action", "claude-code-action", false},
	{"anthropics/claude-code-base-action", "claude-code-action", false},
	{"openai/codex-action", "codex-action", false},
	{"openai/codex/.github/actions/codex", "codex-action", false},
	{"google-github-actions/run-gemini-cli", "run-gemini-cli", false},
	{"google-gemini/gemini-cli-action", "run-gemini-cli", false},
	{"anomalyco/opencode/github", "opencode", false},
	{"sst/opencode/github", "opencode", false},
	{"ask-bonk/ask-bonk", "opencode", false},
	{"all-hands-ai/openhands-resolver", "openhands", false},
	{"mirrajabi/aider-github-action", "aider", false},
	{"warpdotdev/oz-agent-action", "oz-agent", false},
	{"actions/ai-inference", "ai-inference", true},
	{"openai/chat-completion-action", "chat-completion", true},
	{"github/ai-assessment-comment-labeler", "ai-assessment", true},
}

// agentNamed catches other agent actions by the words in their name.
var agentNamed = lazyRE(`(^|[/-])(claude|codex|gemini-cli|opencode|openhands|aider|cline|goose|devin|cursor-agent|copilot-agent|ai-agent|llm-agent)([/-]|$)`)

// agentCLIs are programs that run an agent, by program or package name.
var agentCLIs = map[string]string{
	"claude": "claude", "@anthropic-ai/claude-code": "claude",
	"codex": "codex", "@openai/codex": "codex",
	"gemini": "gemini", "@google/gemini-cli": "gemini",
	"opencode": "opencode", "opencode-ai": "opencode",
	"aider": "aider", "aider-chat": "aider",
	"cursor-agent": "cursor-agent", "copilot": "copilot", "@github/copilot": "copilot",
	"goose": "goose", "amp": "amp", "@sourcegraph/amp": "amp",
	"cline": "cline", "openhands": "openhands", "qwen": "qwen", "@qwen-code/qwen-code": "qwen",
	"crush": "crush",
}

// notARun are first arguments that manage an agent CLI rather than run it.
var notARun = []string{"--version", "-v", "-V", "--help", "-h", "mcp", "config", "install", "update", "doctor", "login", "logout", "auth", "extensions", "setup-token", "migrate-installer"}

func (w *Workflow) detectAgents(st *step) []*agent {
	var out []*agent
	if st.act != nil {
		for _, a := range agentActions {
			if st.uses == a.prefix || strings.HasPrefix(st.uses, a.prefix+"/") {
				return []*agent{{st: st, kind: a.kind, model: a.model}}
			}
		}
		if !strings.HasPrefix(st.uses, "docker://") && agentNamed().MatchString(st.uses) {
			return []*agent{{st: st, kind: st.uses}}
		}
		return nil
	}
	if st.sh == nil {
		return nil
	}
	for _, c := range st.sh.calls {
		out = append(out, cliAgents(st, c, c, 0)...)
		if len(out) == 0 || out[len(out)-1].call != c {
			if a := computedAgent(st, c); a != nil {
				out = append(out, a)
			}
		}
	}
	return out
}

// agentWord finds an agent CLI named inside a computed command word:
// $(which claude), "$HOME/.local/bin/codex".
var agentWord = lazyRE(`(^|[^A-Za-z0-9_-])(claude|codex|gemini|opencode|aider|cursor-agent|copilot|goose|cline|openhands|qwen)([^A-Za-z0-9_-]|$)`)

// computedAgent: a call whose program is computed rather than literal, and
// whose text or (for $VAR) literal assignment names an agent CLI.
func computedAgent(st *step, c *syntax.CallExpr) *agent {
	if len(c.Args) == 0 || c.Args[0].Lit() != "" {
		return nil
	}
	text := printNode(c.Args[0])
	if len(c.Args[0].Parts) == 1 {
		if pe, ok := c.Args[0].Parts[0].(*syntax.ParamExp); ok && pe.Param != nil {
			text += " " + strings.Join(st.sh.assignText(pe.Param.Value), " ")
		}
	}
	if m := agentWord().FindStringSubmatch(text); m != nil {
		return &agent{st: st, kind: agentCLIs[m[2]], call: c, rest: c.Args[1:]}
	}
	return nil
}

// cliAgents finds agents run by call c: by program name, by an absolute
// path to an agent CLI handed to a driver (node driver.cjs /usr/bin/copilot
// ...), or inside a "bash -c" script among the arguments (sandbox wrappers
// such as awf ... -- bash -c '...'). outer is where findings are placed.
func cliAgents(st *step, c, outer *syntax.CallExpr, depth int) []*agent {
	name, rest := cmdName(c)
	if (name == "python" || name == "python3") && len(rest) >= 2 && litPrefix(rest[0]) == "-m" && strings.HasPrefix(litPrefix(rest[1]), "openhands") {
		name, rest = "openhands", rest[2:]
	}
	if kind, ok := agentCLIs[name]; ok {
		if len(rest) > 0 && slices.Contains(notARun, litPrefix(rest[0])) {
			return nil
		}
		return []*agent{{st: st, kind: kind, call: outer, rest: rest}}
	}
	for i, a := range c.Args {
		t := litPrefix(a)
		if kind, ok := agentCLIs[path.Base(t)]; ok && strings.HasPrefix(t, "/") && i > 0 {
			return []*agent{{st: st, kind: kind, call: outer, rest: c.Args[i+1:]}}
		}
		if t == "-c" && i > 0 && i+1 < len(c.Args) && depth < 4 && slices.Contains([]string{"bash", "sh", "zsh", "dash"}, path.Base(litPrefix(c.Args[i-1]))) {
			inner, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(litPrefix(c.Args[i+1])), "")
			if err != nil {
				continue
			}
			var out []*agent
			syntax.Walk(inner, func(n syntax.Node) bool {
				if ic, ok := n.(*syntax.CallExpr); ok {
					out = append(out, cliAgents(st, ic, outer, depth+1)...)
				}
				return true
			})
			return out
		}
	}
	return nil
}

// input returns an action input by lower-cased name.
func (a *agent) input(name string) *actionlint.String {
	if a.st.act == nil {
		return nil
	}
	if in := a.st.act.Inputs[name]; in != nil {
		return in.Value
	}
	return nil
}

// promptInputs are the action inputs that carry prompt text.
func (a *agent) promptInputs() []*actionlint.Input {
	if a.st.act == nil {
		return nil
	}
	var out []*actionlint.Input
	for _, in := range sortedInputs(a.st.act) {
		n := strings.ToLower(in.Name.Value)
		if strings.Contains(n, "prompt") || strings.Contains(n, "instruction") || n == "message" || n == "task" || n == "query" {
			out = append(out, in)
		}
	}
	return out
}

// pos is where findings about the invocation itself go.
func (a *agent) pos(w *Workflow) (int, int) {
	if a.call != nil && a.st.run != nil {
		return w.offsetPos(a.st.run.Run, int(a.call.Pos().Offset()))
	}
	if a.st.act != nil && a.st.act.Uses != nil && a.st.act.Uses.Pos != nil {
		return a.st.act.Uses.Pos.Line, a.st.act.Uses.Pos.Col
	}
	return a.st.al.Pos.Line, a.st.al.Pos.Col
}

// flagValues returns the values of a long or short flag in the call's
// arguments (--flag v, --flag=v), and whether the flag appears.
func (a *agent) flagValues(names ...string) (vals []string, present bool) {
	for i := 0; i < len(a.rest); i++ {
		t := litPrefix(a.rest[i])
		for _, n := range names {
			switch {
			case t == n:
				present = true
				if i+1 < len(a.rest) && !strings.HasPrefix(litPrefix(a.rest[i+1]), "-") {
					vals = append(vals, litPrefix(a.rest[i+1]))
					i++
				}
			case strings.HasPrefix(t, n+"="):
				present = true
				vals = append(vals, t[len(n)+1:])
			}
		}
	}
	return
}

// hasArg reports whether any argument is one of names.
func (a *agent) hasArg(names ...string) bool {
	for _, r := range a.rest {
		if slices.Contains(names, litPrefix(r)) {
			return true
		}
	}
	return false
}

// isBudgetStep recognises a budget precheck: fixrail budget check, or a
// step whose id or name says budget, quota, cost or spend.
var budgetWord = lazyRE(`(?i)(budget|quota|spend|cost[-_ ]?(cap|check|guard|limit)|credit[-_ ]?(check|guard|cap|limit))`)

func isBudgetStep(st *step) bool {
	if st.sh != nil {
		for _, c := range st.sh.calls {
			name, rest := cmdName(c)
			if name == "fixrail" && len(rest) >= 2 && litPrefix(rest[0]) == "budget" && litPrefix(rest[1]) == "check" {
				return true
			}
		}
	}
	if len(st.agents) > 0 || st.fixrailRun {
		return false
	}
	return budgetWord().MatchString(st.id) || st.al.Name != nil && budgetWord().MatchString(st.al.Name.Value)
}
