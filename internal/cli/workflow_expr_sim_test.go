package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// The simulated runner's expression evaluator: GitHub Actions' ${{ }}
// language, parsed by actionlint's parser (the one fixrail lint uses) and
// evaluated here with the semantics GitHub documents — loose equality
// that coerces to numbers, case-insensitive string comparison and
// property names, && and || yielding an operand. It is strict where
// GitHub is lenient: a context, property or function it does not know, a
// null interpolated into text, and an object dereferenced as text all fail
// instead of becoming "", so a workflow cannot pass the simulation on an
// expression it never evaluated.

// simCtx is the contexts an expression may read (github, secrets, needs,
// matrix, steps, …), as JSON-shaped values.
type simCtx map[string]any

// simEvalExpr evaluates one expression (the text inside ${{ }}).
func simEvalExpr(src string, ctx simCtx) (any, error) {
	lex := actionlint.NewExprLexer(src + "}}")
	node, perr := actionlint.NewExprParser().Parse(lex)
	if perr != nil {
		return nil, fmt.Errorf("expression %q does not parse: %s", src, perr.Message)
	}
	if rest := (src + "}}")[lex.Offset():]; strings.TrimSpace(rest) != "" {
		return nil, fmt.Errorf("expression %q: text after the expression: %q", src, rest)
	}
	return simEval(node, ctx)
}

func simEval(n actionlint.ExprNode, ctx simCtx) (any, error) {
	switch n := n.(type) {
	case *actionlint.NullNode:
		return nil, nil
	case *actionlint.BoolNode:
		return n.Value, nil
	case *actionlint.IntNode:
		return float64(n.Value), nil
	case *actionlint.FloatNode:
		return n.Value, nil
	case *actionlint.StringNode:
		return n.Value, nil
	case *actionlint.VariableNode:
		for k, v := range ctx {
			if strings.EqualFold(k, n.Name) {
				return v, nil
			}
		}
		return nil, fmt.Errorf("context %q is not simulated", n.Name)
	case *actionlint.ObjectDerefNode:
		recv, err := simEval(n.Receiver, ctx)
		if err != nil {
			return nil, err
		}
		return simProperty(recv, n.Property)
	case *actionlint.IndexAccessNode:
		recv, err := simEval(n.Operand, ctx)
		if err != nil {
			return nil, err
		}
		idx, err := simEval(n.Index, ctx)
		if err != nil {
			return nil, err
		}
		switch i := idx.(type) {
		case string:
			return simProperty(recv, i)
		case float64:
			arr, ok := recv.([]any)
			if !ok || i != math.Trunc(i) || i < 0 || int(i) >= len(arr) {
				return nil, fmt.Errorf("index %v of %T (%v) is not simulated", i, recv, recv)
			}
			return arr[int(i)], nil
		}
		return nil, fmt.Errorf("index of type %T is not simulated", idx)
	case *actionlint.NotOpNode:
		v, err := simEval(n.Operand, ctx)
		if err != nil {
			return nil, err
		}
		return !simTruthy(v), nil
	case *actionlint.LogicalOpNode:
		l, err := simEval(n.Left, ctx)
		if err != nil {
			return nil, err
		}
		if (n.Kind == actionlint.LogicalOpNodeKindAnd) != simTruthy(l) {
			return l, nil // && stops at a falsy left, || at a truthy one
		}
		return simEval(n.Right, ctx)
	case *actionlint.CompareOpNode:
		l, err := simEval(n.Left, ctx)
		if err != nil {
			return nil, err
		}
		r, err := simEval(n.Right, ctx)
		if err != nil {
			return nil, err
		}
		return simCompare(n.Kind, l, r)
	case *actionlint.FuncCallNode:
		var args []any
		for _, a := range n.Args {
			v, err := simEval(a, ctx)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		return simCall(n.Callee, args)
	}
	return nil, fmt.Errorf("expression node %T is not simulated", n)
}

// simProperty is recv.name: property names are case-insensitive; a
// missing one fails (GitHub would give null).
func simProperty(recv any, name string) (any, error) {
	obj, ok := recv.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("property %q of %T (%v): not an object", name, recv, recv)
	}
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, nil
		}
	}
	return nil, fmt.Errorf("property %q is not in the simulated context", name)
}

func simTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0 && !math.IsNaN(v)
	case string:
		return v != ""
	}
	return true // objects and arrays
}

// simNumber is GitHub's coercion to a number for a comparison of
// different types.
func simNumber(v any) float64 {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		return v
	case string:
		if strings.TrimSpace(v) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

func simCompare(kind actionlint.CompareOpNodeKind, l, r any) (bool, error) {
	var c int // -1, 0, 1; 2 when unordered (NaN, objects)
	switch {
	case simIsObject(l) || simIsObject(r):
		if !kind.IsEqualityOp() {
			return false, fmt.Errorf("ordering an object or array is not simulated")
		}
		c = 2
		if fmt.Sprintf("%p", l) == fmt.Sprintf("%p", r) {
			c = 0 // the same instance
		}
	default:
		ls, lok := l.(string)
		rs, rok := r.(string)
		if lok && rok {
			c = strings.Compare(strings.ToLower(ls), strings.ToLower(rs))
		} else {
			a, b := simNumber(l), simNumber(r)
			switch {
			case math.IsNaN(a) || math.IsNaN(b):
				c = 2
			case a < b:
				c = -1
			case a > b:
				c = 1
			}
		}
	}
	switch kind {
	case actionlint.CompareOpNodeKindEq:
		return c == 0, nil
	case actionlint.CompareOpNodeKindNotEq:
		return c != 0, nil
	case actionlint.CompareOpNodeKindLess:
		return c == -1, nil
	case actionlint.CompareOpNodeKindLessEq:
		return c == -1 || c == 0, nil
	case actionlint.CompareOpNodeKindGreater:
		return c == 1, nil
	case actionlint.CompareOpNodeKindGreaterEq:
		return c == 1 || c == 0, nil
	}
	return false, fmt.Errorf("operator %v is not simulated", kind)
}

func simIsObject(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// simString is a value as GitHub writes it into text: a null, an object
// or an array there is not simulated (GitHub writes "" or JSON).
func simString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("a %T (%v) interpolated into text is not simulated", v, v)
}

func simCall(name string, args []any) (any, error) {
	want := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d arguments, not %d", name, n, len(args))
		}
		return nil
	}
	strs := func() ([]string, error) {
		var out []string
		for _, a := range args {
			s, err := simString(a)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, s)
		}
		return out, nil
	}
	switch strings.ToLower(name) {
	case "fromjson":
		if err := want(1); err != nil {
			return nil, err
		}
		s, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("fromJSON of a %T", args[0])
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("fromJSON(%q): %v", s, err)
		}
		return v, nil
	case "tojson":
		if err := want(1); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(args[0], "", "  ")
		return string(b), err
	case "startswith", "endswith", "contains":
		if err := want(2); err != nil {
			return nil, err
		}
		if arr, ok := args[0].([]any); ok && strings.EqualFold(name, "contains") {
			for _, e := range arr {
				if eq, err := simCompare(actionlint.CompareOpNodeKindEq, e, args[1]); err == nil && eq {
					return true, nil
				}
			}
			return false, nil
		}
		s, err := strs()
		if err != nil {
			return nil, err
		}
		a, b := strings.ToLower(s[0]), strings.ToLower(s[1])
		switch strings.ToLower(name) {
		case "startswith":
			return strings.HasPrefix(a, b), nil
		case "endswith":
			return strings.HasSuffix(a, b), nil
		}
		return strings.Contains(a, b), nil
	case "format":
		if len(args) == 0 {
			return nil, fmt.Errorf("format takes a format string")
		}
		s, err := strs()
		if err != nil {
			return nil, err
		}
		out := s[0]
		for i, a := range s[1:] {
			out = strings.ReplaceAll(out, "{"+strconv.Itoa(i)+"}", a)
		}
		if strings.Contains(strings.NewReplacer("{{", "", "}}", "").Replace(out), "{") {
			return nil, fmt.Errorf("format %q: escapes or missing arguments are not simulated", s[0])
		}
		return out, nil
	}
	return nil, fmt.Errorf("function %s is not simulated", name)
}

// simInterpolate fills every ${{ }} of a scalar. The end of each is the
// lexer's, not the first "}}", as in fixrail lint.
func simInterpolate(s string, ctx simCtx) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		lex := actionlint.NewExprLexer(s[i+3:])
		node, perr := actionlint.NewExprParser().Parse(lex)
		if perr != nil {
			return "", fmt.Errorf("expression in %q does not parse: %s", s, perr.Message)
		}
		v, err := simEval(node, ctx)
		if err != nil {
			return "", fmt.Errorf("${{%s}}: %w", strings.TrimSuffix(s[i+3:i+3+lex.Offset()], "}}"), err)
		}
		str, err := simString(v)
		if err != nil {
			return "", fmt.Errorf("${{%s}}: %w", strings.TrimSuffix(s[i+3:i+3+lex.Offset()], "}}"), err)
		}
		b.WriteString(str)
		s = s[i+3+lex.Offset():]
	}
}

// simValue is a scalar that is one whole ${{ }} as the value itself (a
// matrix from fromJSON); any other scalar is interpolated text.
func simValue(s string, ctx simCtx) (any, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "${{") && strings.HasSuffix(t, "}}") && strings.Count(t, "${{") == 1 {
		return simEvalExpr(strings.TrimSuffix(strings.TrimPrefix(t, "${{"), "}}"), ctx)
	}
	return simInterpolate(s, ctx)
}

// simCondition evaluates an if: (with or without ${{ }}) to a boolean.
func simCondition(cond string, ctx simCtx) (bool, error) {
	t := strings.TrimSpace(cond)
	if strings.HasPrefix(t, "${{") && strings.HasSuffix(t, "}}") {
		t = strings.TrimSuffix(strings.TrimPrefix(t, "${{"), "}}")
	}
	v, err := simEvalExpr(t, ctx)
	if err != nil {
		return false, err
	}
	return simTruthy(v), nil
}

func TestSimExpressions(t *testing.T) {
	ctx := simCtx{
		"github":  map[string]any{"event": map[string]any{"label": map[string]any{"name": "FixRail"}, "number": 42.0}, "head_ref": "fixrail/gh-1"},
		"needs":   map[string]any{"scan": map[string]any{"outputs": map[string]any{"matrix": `{"include":[{"finding":"gh-7","number":7}]}`, "empty": `{"include":[]}`}}},
		"matrix":  map[string]any{"finding": "gh-7", "number": 7.0},
		"secrets": map[string]any{"T": "x"},
	}
	for _, tc := range []struct {
		in, want string // want "error: ..." for a refusal
	}{
		{"${{ github.event.label.name }}", "FixRail"},
		{"a-${{ matrix.finding }}-${{ matrix.number }}", "a-gh-7-7"},
		{"${{ github.event.number == '42' }}", "true"},          // coerced to numbers
		{"${{ github.event.label.name == 'fixrail' }}", "true"}, // case-insensitive
		{"${{ needs.scan.outputs.matrix != '{\"include\":[]}' }}", "true"},
		{"${{ needs.scan.outputs.empty != '{\"include\":[]}' }}", "false"},
		{"${{ fromJSON(needs.scan.outputs.matrix).include[0].finding }}", "gh-7"},
		{"${{ startsWith(github.head_ref, 'fixrail/') && 'yes' || 'no' }}", "yes"},
		{"${{ format('{0}/{1}', matrix.finding, 3) }}", "gh-7/3"},
		{"${{ secrets.T }}", "x"},
		{"${{ secrets.NOPE }}", "error: not in the simulated context"},
		{"${{ vars.X }}", "error: context \"vars\" is not simulated"},
		{"${{ hashFiles('x') }}", "error: function hashFiles is not simulated"},
		{"${{ null }}", "error: interpolated into text"},
		{"${{ github.event }}", "error: interpolated into text"},
		{"${{ matrix.finding.x }}", "error: not an object"},
		{"${{ matrix. }}", "error: does not parse"},
	} {
		got, err := simInterpolate(tc.in, ctx)
		if err != nil {
			got = "error: " + err.Error()
		}
		if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
			if err == nil || !strings.Contains(got, want) {
				t.Errorf("%s = %q, want an error saying %q", tc.in, got, want)
			}
		} else if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.in, got, tc.want)
		}
	}
	m, err := simValue("${{ fromJSON(needs.scan.outputs.matrix) }}", ctx)
	if obj, ok := m.(map[string]any); err != nil || !ok || len(obj["include"].([]any)) != 1 {
		t.Errorf("matrix value = %#v, %v", m, err)
	}
	for cond, want := range map[string]bool{
		"github.event.label.name == 'fixrail'":                          true,
		"${{ needs.scan.outputs.empty != '{\"include\":[]}' }}":         false,
		"startsWith(github.head_ref, 'fixrail/')":                       true,
		"!startsWith(github.head_ref, 'fixrail/') || matrix.number > 9": false,
	} {
		if got, err := simCondition(cond, ctx); err != nil || got != want {
			t.Errorf("if: %s = %v, %v; want %v", cond, got, err, want)
		}
	}
}
