package conformance

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LocalActionReader reads the metadata file (action.yml or action.yaml) of
// the local action a step names with `uses: ./dir`; ref is the reference
// as written. It returns the file's name for messages and its bytes. An
// error wrapping fs.ErrNotExist means there is no such action: GitHub
// fails the step, so nothing of it runs.
type LocalActionReader func(ref string) (name string, src []byte, err error)

// maxActionDepth bounds local actions calling local actions.
const maxActionDepth = 8

// actionInput is attacker text a caller passes in one input of a local
// action: why it is tainted, and where in the workflow the caller wrote it.
type actionInput struct {
	taint     string
	line, col int
}

// yamlDollarEscape finds a YAML escape that decodes to "$" in a
// double-quoted scalar: it can assemble "${{" the source does not show.
var yamlDollarEscape = lazyRE(`\\(?:x24|u0024|U00000024)`)

// localActionInjection follows attacker text a step passes to a local
// composite action (`uses: ./…` with `with:`) into the action's own steps:
// an input its run: expands, or passes on to a code input or to another
// local action, is template injection in the workflow that calls it.
func (w *Workflow) localActionInjection(st *step) {
	if w.localAction == nil || st.act == nil || st.act.Uses == nil || !strings.HasPrefix(st.act.Uses.Value, "./") {
		return
	}
	in := map[string]actionInput{}
	for k, v := range st.act.Inputs {
		if v == nil {
			continue
		}
		for _, e := range w.exprsOf(v.Value).exprs {
			if e.taint != "" {
				in[strings.ToLower(k)] = actionInput{taint: e.taint, line: e.line, col: e.col}
				break
			}
		}
	}
	line, col := 1, 1
	if p := st.act.Uses.Pos; p != nil {
		line, col = p.Line, p.Col
	}
	w.followAction(st.act.Uses.Value, in, line, col, map[string]bool{})
}

// followAction judges one local action for the inputs its caller taints
// (line, col: the workflow's uses: that leads here).
func (w *Workflow) followAction(ref string, in map[string]actionInput, line, col int, seen map[string]bool) {
	if seen[ref] || len(seen) >= maxActionDepth {
		return
	}
	seen[ref] = true
	name, src, err := w.localAction(ref)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	unread := func(why string) {
		saved := w.rule
		w.rule = Unparseable
		w.reportAt(line, col, "the local action "+ref+" is not analysed: "+why)
		w.rule = saved
	}
	if err != nil {
		unread(err.Error())
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		unread(name + " is not valid YAML: " + err.Error())
		return
	}
	if yamlDollarEscape().Match(src) {
		unread(name + " holds a YAML escape of \"$\", which can assemble an expression the source does not show")
		return
	}
	runs := mapValue(docRoot(&doc), "runs")
	using := mapValue(runs, "using")
	docker := using != nil && strings.EqualFold(using.Value, "docker")
	if !docker && (using == nil || !strings.EqualFold(using.Value, "composite")) {
		return // JavaScript actions are not followed (README: residuals)
	}
	steps := mapValue(runs, "steps")
	if !docker && (steps == nil || steps.Kind != yaml.SequenceNode) {
		return
	}
	// flowTaint says why an expression's value carries attacker text: an
	// input the caller taints, or the caller's event (a composite action
	// runs in the calling workflow's github context).
	flowTaint := func(path []string) (string, *actionInput) {
		switch {
		case len(path) == 0:
		case path[0] == "github":
			return eventTaint(path[1:]), nil
		case path[0] == "inputs" && len(path) == 1:
			for _, a := range in {
				return "the whole inputs context", &a
			}
		case path[0] == "inputs":
			if a, ok := in[strings.ToLower(path[1])]; ok {
				return "inputs." + path[1], &a
			}
		}
		return "", nil
	}
	// sink reports every tainted expression of a scalar that GitHub
	// expands into code (what says where).
	sink := func(v *yaml.Node, what string) {
		flows, perr := scalarFlows(v.Value)
		if perr != "" {
			unread(fmt.Sprintf("%s:%d: expression does not parse: %s", name, v.Line, perr))
			return
		}
		for _, f := range flows {
			t, a := flowTaint(f)
			if t == "" {
				continue
			}
			if a != nil {
				w.reportAt(a.line, a.col, fmt.Sprintf("%s is passed to the local action %s, whose %s (%s:%d) expands %s before it runs; pass it through env: in the action and quote \"$VAR\"", a.taint, ref, what, name, v.Line, t))
			} else {
				w.reportAt(line, col, fmt.Sprintf("%s is expanded into the %s of the local action %s (%s:%d); pass it through env: and quote \"$VAR\"", t, what, ref, name, v.Line))
			}
			return
		}
	}
	if docker {
		code, interp := inlineScriptArg(runs)
		for _, c := range code {
			sink(c, "entrypoint's inline "+interp+" code")
		}
		return
	}
	for _, s := range steps.Content {
		if run := mapValue(s, "run"); run != nil && run.Kind == yaml.ScalarNode {
			sink(run, "run: script")
		}
		uses := mapValue(s, "uses")
		if uses == nil || uses.Kind != yaml.ScalarNode {
			continue
		}
		with := mapValue(s, "with")
		act := strings.ToLower(uses.Value)
		if i := strings.IndexByte(act, '@'); i >= 0 {
			act = act[:i]
		}
		for _, k := range codeSinkInputs[act] {
			if v := mapValue(with, k); v != nil && v.Kind == yaml.ScalarNode {
				sink(v, k+" input of "+act)
			}
		}
		if !strings.HasPrefix(uses.Value, "./") || with == nil || with.Kind != yaml.MappingNode {
			continue
		}
		// A local action calling another: the inputs it passes on carry
		// what they expand, reported at the workflow's uses: or the
		// caller's tainted input.
		next := map[string]actionInput{}
		for i := 0; i+1 < len(with.Content); i += 2 {
			flows, perr := scalarFlows(with.Content[i+1].Value)
			if perr != "" {
				unread(fmt.Sprintf("%s:%d: expression does not parse: %s", name, with.Content[i+1].Line, perr))
				continue
			}
			for _, f := range flows {
				t, a := flowTaint(f)
				if t == "" {
					continue
				}
				at := actionInput{taint: t, line: line, col: col}
				if a != nil {
					at = *a
				}
				next[strings.ToLower(with.Content[i].Value)] = at
				break
			}
		}
		if len(next) > 0 {
			w.followAction(uses.Value, next, line, col, seen)
		}
	}
}

// inlineCode is, for an interpreter's base name (version suffix
// dropped), the flags whose next argument it runs as code: a cluster of
// single-letter flags holding one of letters (sh -ec, perl -ne), or one
// of long, spelled out (any case).
var inlineCode = map[string]struct {
	letters string
	long    []string
	repeat  bool // several code flags add up (perl -e a -e b)
}{
	"sh": {letters: "c"}, "bash": {letters: "c"}, "dash": {letters: "c"}, "ash": {letters: "c"},
	"zsh": {letters: "c"}, "ksh": {letters: "c"}, "busybox": {letters: "c"},
	"python": {letters: "c"}, "node": {long: []string{"-e", "-p", "--eval", "--print"}},
	"perl": {letters: "eE", repeat: true}, "ruby": {letters: "e", repeat: true}, "php": {letters: "r"},
	// PowerShell's parameters are words (-NonInteractive), not clusters.
	"pwsh": {long: []string{"-c", "-command"}}, "powershell": {long: []string{"-c", "-command"}},
}

// inlineScriptArg is the arguments a Docker action's entrypoint runs as
// code: with `entrypoint: sh` (python3, node, …) and `args: [-c, CODE,
// …]`, GitHub expands CODE's expressions and the interpreter then parses
// it; the arguments after it are only $0, $1 or sys.argv. An entrypoint
// that is not an interpreter, or the image's own, is not judged: what it
// does with its arguments is not in the action's metadata.
func inlineScriptArg(runs *yaml.Node) ([]*yaml.Node, string) {
	ep := mapValue(runs, "entrypoint")
	args := mapValue(runs, "args")
	if ep == nil || ep.Kind != yaml.ScalarNode || args == nil || args.Kind != yaml.SequenceNode {
		return nil, ""
	}
	base := strings.ToLower(path.Base(strings.TrimSpace(ep.Value)))
	base = strings.TrimRight(base, "0123456789.") // python3.12, perl5
	flags, ok := inlineCode[base]
	if !ok {
		return nil, ""
	}
	var code []*yaml.Node
	for i := 0; i < len(args.Content); i++ {
		a := args.Content[i]
		if a.Kind != yaml.ScalarNode {
			break
		}
		v := a.Value
		if flags.letters == "c" && (v == "-o" || v == "+o") {
			i++ // a shell option's name (-o pipefail)
			continue
		}
		if base == "busybox" && i == 0 {
			if v != "sh" && v != "ash" {
				break
			}
			continue
		}
		if !strings.HasPrefix(v, "-") {
			break // a script file or the first operand: no more options
		}
		isCode := slices.Contains(flags.long, strings.ToLower(v))
		if !isCode && flags.letters != "" && !strings.HasPrefix(v, "--") {
			isCode = strings.ContainsAny(v[1:], flags.letters)
		}
		if !isCode {
			continue
		}
		if i+1 >= len(args.Content) || args.Content[i+1].Kind != yaml.ScalarNode {
			break
		}
		code = append(code, args.Content[i+1])
		i++
		if !flags.repeat {
			break // what follows the code is its arguments
		}
	}
	return code, base
}

// scalarFlows is the context paths reaching the value of every ${{ }} in
// v (as exprsOf, for text outside the workflow file), or a parse error.
func scalarFlows(v string) ([][]string, string) {
	parsed, perr := parseExprs(v)
	if perr != "" {
		return nil, perr
	}
	var out [][]string
	for _, e := range parsed {
		out = append(out, flowPaths(e.node)...)
	}
	return out, ""
}

func docRoot(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

// mapValue is key's value in mapping m (following aliases), or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for m != nil && m.Kind == yaml.AliasNode {
		m = m.Alias
	}
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			for v != nil && v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			return v
		}
	}
	return nil
}
