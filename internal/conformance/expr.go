package conformance

import (
	"strings"

	"github.com/rhysd/actionlint"
)

// expr is one ${{ }} in a scalar.
type expr struct {
	off, end  int // byte offsets of "${{" and just past "}}" in the value
	line, col int // where "${{" is in the raw file
	node      actionlint.ExprNode
	// flows are the context paths whose value reaches the result;
	// refs are every context path the expression mentions.
	flows, refs [][]string
	taint       string // why the result is attacker-controllable; "" if not
}

// scalar is a parsed *actionlint.String.
type scalar struct {
	s     *actionlint.String
	exprs []*expr
	// bad is set when the scalar could not be analysed (a finding was
	// already reported).
	bad bool
}

// exprsOf finds, parses and locates every ${{ }} in s (see parseExprs).
func (w *Workflow) exprsOf(s *actionlint.String) *scalar {
	if s == nil {
		return &scalar{}
	}
	if sc, ok := w.scalars[s]; ok {
		return sc
	}
	sc := &scalar{s: s}
	w.scalars[s] = sc
	parsed, perr := parseExprs(s.Value)
	if perr != "" {
		w.unparseable(s.Pos, "expression does not parse: "+perr)
		sc.bad = true
		return sc
	}
	for _, e := range parsed {
		e.flows = flowPaths(e.node)
		e.refs = refPaths(e.node)
		sc.exprs = append(sc.exprs, e)
	}
	if len(sc.exprs) == 0 {
		return sc // nothing to locate
	}
	// Re-locate each expression in the raw source: actionlint's positions
	// inside multi-line scalars are those of the scalar, not the text.
	raw := w.rawExprPositions(s.Pos)
	if len(raw) < len(sc.exprs) {
		// More expressions in the decoded value than in the source text: an
		// escape (\u0024{{ in a double-quoted scalar) hides one from review.
		w.unparseable(s.Pos, "the decoded value holds more ${{ }} than the source text shows (an escape hides an expression)")
		sc.bad = true
	}
	for k, e := range sc.exprs {
		if k < len(raw) {
			e.line, e.col = raw[k][0], raw[k][1]
		} else {
			e.line, e.col = s.Pos.Line, s.Pos.Col
		}
	}
	return sc
}

// parseExprs finds and parses every ${{ }} in v, in order. Splitting uses
// the lexer's offset, not the first "}}", so '}}' inside a string literal
// does not end the expression. A parse error returns its message.
func parseExprs(v string) ([]*expr, string) {
	var out []*expr
	for off := 0; ; {
		i := strings.Index(v[off:], "${{")
		if i < 0 {
			return out, ""
		}
		start := off + i
		lex := actionlint.NewExprLexer(v[start+3:])
		node, perr := actionlint.NewExprParser().Parse(lex)
		if perr != nil {
			return nil, perr.Message
		}
		end := start + 3 + lex.Offset()
		out = append(out, &expr{off: start, end: end, node: node})
		off = end
	}
}

// rawExprPositions lists line:col of each "${{" from p to the end of the
// scalar that starts there: the rest of p's line and every following line
// that is blank or indented deeper than p's line.
func (w *Workflow) rawExprPositions(p *actionlint.Pos) [][2]int {
	if p == nil || p.Line < 1 || p.Line > len(w.lines) {
		return nil
	}
	var out [][2]int
	indent := indentOf(w.lines[p.Line-1])
	for ln := p.Line; ln <= len(w.lines); ln++ {
		text := w.lines[ln-1]
		from := 0
		if ln == p.Line {
			from = min(max(p.Col-1, 0), len(text))
		} else if strings.TrimSpace(text) != "" && indentOf(text) <= indent {
			break
		}
		for j := from; ; {
			i := strings.Index(text[j:], "${{")
			if i < 0 {
				break
			}
			out = append(out, [2]int{ln, j + i + 1})
			j += i + 3
		}
	}
	return out
}

func indentOf(s string) int {
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return n // a sequence entry's continuation lines sit deeper than its dash
}

// flowPaths returns the context paths whose value can reach the result of
// n: && passes only its right side, || both, comparisons and predicates
// nothing, and toJSON/format/join/case/fromJSON their arguments.
func flowPaths(n actionlint.ExprNode) [][]string {
	switch n := n.(type) {
	case *actionlint.VariableNode, *actionlint.ObjectDerefNode, *actionlint.ArrayDerefNode, *actionlint.IndexAccessNode:
		p, base := pathOf(n)
		if base != nil {
			// A property of a call result: fromJSON(x).y carries x's taint.
			return flowPaths(base)
		}
		if p == nil {
			return nil
		}
		return [][]string{p}
	case *actionlint.FuncCallNode:
		switch strings.ToLower(n.Callee) {
		case "tojson", "fromjson", "format", "join", "case", "trim":
			var out [][]string
			for _, a := range n.Args {
				out = append(out, flowPaths(a)...)
			}
			return out
		}
		return nil // contains, startsWith, endsWith, hashFiles, success, always, ...
	case *actionlint.LogicalOpNode:
		if n.Kind == actionlint.LogicalOpNodeKindAnd {
			return flowPaths(n.Right)
		}
		return append(flowPaths(n.Left), flowPaths(n.Right)...)
	}
	return nil // literals, comparisons, !
}

// refPaths returns every context path n mentions, wherever it sits.
func refPaths(n actionlint.ExprNode) [][]string {
	var out [][]string
	actionlint.VisitExprNode(n, func(node, parent actionlint.ExprNode, entering bool) {
		if !entering {
			return
		}
		switch node.(type) {
		case *actionlint.VariableNode, *actionlint.ObjectDerefNode, *actionlint.ArrayDerefNode, *actionlint.IndexAccessNode:
		default:
			return
		}
		switch parent := parent.(type) {
		case *actionlint.ObjectDerefNode, *actionlint.ArrayDerefNode:
			return // only the longest path
		case *actionlint.IndexAccessNode:
			if parent.Operand == node {
				return
			}
		}
		if p, _ := pathOf(node); p != nil {
			out = append(out, p)
		}
	})
	return out
}

// pathOf turns a.b['C'].*[0] into [a b c * *], lower-cased (GitHub's
// property lookup is case-insensitive, and actionlint lower-cases only
// identifiers, not string indices). A chain rooted at a call returns the
// call as base.
func pathOf(n actionlint.ExprNode) (path []string, base actionlint.ExprNode) {
	switch n := n.(type) {
	case *actionlint.VariableNode:
		return []string{strings.ToLower(n.Name)}, nil
	case *actionlint.ObjectDerefNode:
		p, b := pathOf(n.Receiver)
		if p == nil {
			return nil, b
		}
		return append(p, strings.ToLower(n.Property)), nil
	case *actionlint.ArrayDerefNode:
		p, b := pathOf(n.Receiver)
		if p == nil {
			return nil, b
		}
		return append(p, "*"), nil
	case *actionlint.IndexAccessNode:
		p, b := pathOf(n.Operand)
		if p == nil {
			return nil, b
		}
		if s, ok := n.Index.(*actionlint.StringNode); ok {
			return append(p, strings.ToLower(s.Value)), nil
		}
		return append(p, "*"), nil
	case *actionlint.FuncCallNode:
		return nil, n
	}
	return nil, nil
}
