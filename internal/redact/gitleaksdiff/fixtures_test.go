package gitleaksdiff

// Reading gitleaks' own rule fixtures offline.
//
// Every rule in gitleaks' cmd/generate/config/rules/*.go builds its true
// positives (tps) and false positives (fps) in Go code and hands them to
// utils.Validate. Those lists are local variables, so they cannot be read
// through the package's API; this file parses the sources from the module
// cache with go/parser and evaluates the few constructions the files use
// with a small interpreter:
//
//   - string literals, +, fmt.Sprintf, strings.Repeat/ToUpper/ToLower/Join,
//     []byte(…)/string(…) conversions, encoding/base64 EncodeToString;
//   - []string and map composite literals, append (spread or not), local
//     and package-level variables, range loops over lists and maps, and
//     calls to the package's own helper functions;
//   - utils.GenerateSampleSecrets/GenerateSampleSecret and the utils
//     pattern helpers (AlphaNumeric, Hex, …), by calling gitleaks' own code;
//   - secrets.NewSecret(regex), by the same generator gitleaks uses
//     (lucasjones/reggen) with a seed fixed per call site and round, so the
//     random fixtures are the same on every run;
//   - newPlausibleSecret (generic.go), natively, with the same retry rule.
//
// Anything else is not guessed: the element (or the whole list, when the
// list itself cannot be built) is recorded as skipped, with its position
// and reason, and counted in the report.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"
	"github.com/zricethezav/gitleaks/v8/config"
)

const (
	pkgSecrets = "github.com/zricethezav/gitleaks/v8/cmd/generate/secrets"
	pkgUtils   = "github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"
	pkgConfig  = "github.com/zricethezav/gitleaks/v8/config"
)

// A skip is a fixture expression that could not be evaluated statically.
type skip struct {
	Pos   string // file:line
	Expr  string // the expression, abridged
	Why   string
	Cases int // fixtures it stands for: 1, or the sample count of a GenerateSampleSecrets call
}

// A list is a []string value with the elements that could not be built.
type list struct {
	items   []string
	skipped []skip
}

// mapv is a map literal, keys in source order (so iteration is
// deterministic).
type mapv struct {
	keys, vals []any
}

// ruleRef is a config.Rule literal; only its RuleID is read.
type ruleRef struct{ id string }

// errVal is a variable whose value could not be built.
type errVal struct{ err *evalError }

type evalError struct {
	pos  token.Pos
	expr string
	why  string
}

func (e *evalError) Error() string { return e.why }

// ruleFixtures is one utils.Validate call: a rule and its fixtures.
type ruleFixtures struct {
	RuleID    string
	File      string
	Func      string
	TPs, FPs  []string
	SkippedTP []skip
	SkippedFP []skip
	PathOnly  bool // utils.ValidateWithPaths: fixtures are file paths, not text
}

// fixtureSet is every rule's fixtures plus what could not be read at all.
type fixtureSet struct {
	Rules []ruleFixtures
	// FuncErrors are rule functions whose execution failed outright.
	FuncErrors []skip
	// NoFixtures are rules whose function validates nothing (upstream
	// "validate TODO").
	NoFixtures []string
}

// sampleCount is the number of strings GenerateSampleSecrets returns.
var sampleCount = len(utils.GenerateSampleSecrets("x", "y"))

type interp struct {
	fset     *token.FileSet
	round    int
	funcs    map[string]*ast.FuncDecl
	funcFile map[string]*ast.File
	pkgVars  map[string]*ast.ValueSpec
	varFile  map[string]*ast.File
	varIdx   map[string]int
	varVals  map[string]any
	imports  map[*ast.File]map[string]string // local name → import path
	calls    map[string]int                  // NewSecret calls per position, for seeds
	depth    int
	found    []ruleFixtures
}

type frame struct {
	vars map[string]any
	file *ast.File
}

// loadFixtures parses dir (gitleaks' cmd/generate/config/rules) and
// evaluates every rule function. round varies the seeds of the random
// fixtures; round 0 is the default.
func loadFixtures(dir string, round int) (*fixtureSet, error) {
	it := &interp{
		fset:     token.NewFileSet(),
		round:    round,
		funcs:    map[string]*ast.FuncDecl{},
		funcFile: map[string]*ast.File{},
		pkgVars:  map[string]*ast.ValueSpec{},
		varFile:  map[string]*ast.File{},
		varIdx:   map[string]int{},
		varVals:  map[string]any{},
		imports:  map[*ast.File]map[string]string{},
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(it.fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		imps := map[string]string{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			local := p[strings.LastIndexByte(p, '/')+1:]
			if im.Name != nil {
				local = im.Name.Name
			}
			imps[local] = p
		}
		it.imports[f] = imps
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					it.funcs[d.Name.Name] = d
					it.funcFile[d.Name.Name] = f
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR && d.Tok != token.CONST {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						it.pkgVars[n.Name] = vs
						it.varFile[n.Name] = f
						it.varIdx[n.Name] = i
					}
				}
			}
		}
	}
	set := &fixtureSet{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !returnsRule(fd) {
				continue
			}
			it.calls = map[string]int{}
			it.found = nil
			fr := &frame{vars: map[string]any{}, file: f}
			ret, _, err := it.execBlock(fr, fd.Body.List)
			for i := range it.found {
				it.found[i].File = filepath.Base(it.fset.Position(fd.Pos()).Filename)
				it.found[i].Func = fd.Name.Name
			}
			set.Rules = append(set.Rules, it.found...)
			if err != nil {
				var ee *evalError
				if !errors.As(err, &ee) {
					return nil, err
				}
				set.FuncErrors = append(set.FuncErrors, it.skipOf(ee, 0))
			} else if len(it.found) == 0 {
				id := fd.Name.Name
				if r, ok := ret.(ruleRef); ok {
					id = r.id
				}
				set.NoFixtures = append(set.NoFixtures, id)
			}
		}
	}
	return set, nil
}

// returnsRule reports a function declared to return *config.Rule.
func returnsRule(fd *ast.FuncDecl) bool {
	if fd.Type.Results == nil || len(fd.Type.Results.List) != 1 {
		return false
	}
	st, ok := fd.Type.Results.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := st.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Rule"
}

func (it *interp) pos(p token.Pos) string {
	ps := it.fset.Position(p)
	return fmt.Sprintf("%s:%d", filepath.Base(ps.Filename), ps.Line)
}

func (it *interp) src(n ast.Node) string {
	ps, pe := it.fset.Position(n.Pos()), it.fset.Position(n.End())
	b, err := os.ReadFile(ps.Filename)
	if err != nil || pe.Offset > len(b) {
		return "?"
	}
	s := strings.Join(strings.Fields(string(b[ps.Offset:pe.Offset])), " ")
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}

func (it *interp) fail(n ast.Node, format string, args ...any) *evalError {
	return &evalError{pos: n.Pos(), expr: it.src(n), why: fmt.Sprintf(format, args...)}
}

func (it *interp) skipOf(e *evalError, cases int) skip {
	if cases == 0 {
		cases = 1
	}
	return skip{Pos: it.pos(e.pos), Expr: e.expr, Why: e.why, Cases: cases}
}

// casesOf estimates how many fixtures an unevaluable list element stands
// for: a GenerateSampleSecrets call yields sampleCount of them.
func casesOf(e ast.Expr) int {
	n := 1
	ast.Inspect(e, func(x ast.Node) bool {
		if sel, ok := x.(*ast.SelectorExpr); ok && sel.Sel.Name == "GenerateSampleSecrets" {
			n = sampleCount
			return false
		}
		return true
	})
	return n
}

// execBlock runs statements; it returns the value of a return statement.
func (it *interp) execBlock(fr *frame, stmts []ast.Stmt) (any, bool, error) {
	for _, st := range stmts {
		v, ret, err := it.exec(fr, st)
		if err != nil || ret {
			return v, ret, err
		}
	}
	return nil, false, nil
}

func (it *interp) exec(fr *frame, st ast.Stmt) (any, bool, error) {
	switch st := st.(type) {
	case *ast.AssignStmt:
		if len(st.Lhs) != len(st.Rhs) {
			return nil, false, it.fail(st, "multi-value assignment")
		}
		for i, l := range st.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok {
				continue // r.Field = …: not a fixture
			}
			v, err := it.eval(fr, st.Rhs[i])
			if err != nil {
				var ee *evalError
				if !errors.As(err, &ee) {
					return nil, false, err
				}
				v = errVal{ee}
			}
			if st.Tok == token.ADD_ASSIGN {
				old, ok1 := fr.vars[id.Name].(string)
				add, ok2 := v.(string)
				if !ok1 || !ok2 {
					v = errVal{it.fail(st, "+= on a non-string")}
				} else {
					v = old + add
				}
			}
			if id.Name != "_" {
				fr.vars[id.Name] = v
			}
		}
	case *ast.DeclStmt:
		gd, ok := st.Decl.(*ast.GenDecl)
		if !ok {
			return nil, false, nil
		}
		for _, s := range gd.Specs {
			vs, ok := s.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, n := range vs.Names {
				var v any = list{}
				if i < len(vs.Values) {
					var err error
					v, err = it.eval(fr, vs.Values[i])
					if err != nil {
						var ee *evalError
						if !errors.As(err, &ee) {
							return nil, false, err
						}
						v = errVal{ee}
					}
				} else if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" {
					v = ""
				}
				fr.vars[n.Name] = v
			}
		}
	case *ast.ExprStmt:
		if _, err := it.eval(fr, st.X); err != nil {
			var ee *evalError
			if !errors.As(err, &ee) {
				return nil, false, err
			}
			// A call whose value is dropped: only Validate calls matter,
			// and those record their own failures.
		}
	case *ast.ReturnStmt:
		if len(st.Results) == 0 {
			return nil, true, nil
		}
		v, err := it.eval(fr, st.Results[0])
		return v, true, err
	case *ast.RangeStmt:
		x, err := it.eval(fr, st.X)
		if err != nil {
			return nil, false, err
		}
		bind := func(e ast.Expr, v any) {
			if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
				fr.vars[id.Name] = v
			}
		}
		run := func(k, v any) (any, bool, error) {
			if st.Key != nil {
				bind(st.Key, k)
			}
			if st.Value != nil {
				bind(st.Value, v)
			}
			return it.execBlock(fr, st.Body.List)
		}
		switch x := x.(type) {
		case list:
			for i, s := range x.items {
				if v, ret, err := run(i, s); err != nil || ret {
					return v, ret, err
				}
			}
		case mapv:
			for i := range x.keys {
				if v, ret, err := run(x.keys[i], x.vals[i]); err != nil || ret {
					return v, ret, err
				}
			}
		default:
			return nil, false, it.fail(st.X, "range over %T", x)
		}
	case *ast.BlockStmt:
		return it.execBlock(fr, st.List)
	case *ast.EmptyStmt:
	default:
		return nil, false, it.fail(st, "statement %T not interpreted", st)
	}
	return nil, false, nil
}

func (it *interp) lookup(fr *frame, id *ast.Ident) (any, error) {
	if v, ok := fr.vars[id.Name]; ok {
		if ev, ok := v.(errVal); ok {
			return nil, ev.err
		}
		return v, nil
	}
	switch id.Name {
	case "nil":
		return list{}, nil
	case "true", "false":
		return id.Name == "true", nil
	}
	if v, ok := it.varVals[id.Name]; ok {
		if ev, ok := v.(errVal); ok {
			return nil, ev.err
		}
		return v, nil
	}
	if vs, ok := it.pkgVars[id.Name]; ok {
		i := it.varIdx[id.Name]
		if i >= len(vs.Values) {
			return nil, it.fail(id, "package variable %s has no value", id.Name)
		}
		v, err := it.eval(&frame{vars: map[string]any{}, file: it.varFile[id.Name]}, vs.Values[i])
		if err != nil {
			var ee *evalError
			if errors.As(err, &ee) {
				it.varVals[id.Name] = errVal{ee}
			}
			return nil, err
		}
		it.varVals[id.Name] = v
		return v, nil
	}
	return nil, it.fail(id, "unknown identifier %s", id.Name)
}

func (it *interp) evalString(fr *frame, e ast.Expr) (string, error) {
	v, err := it.eval(fr, e)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", it.fail(e, "want a string, have %T", v)
	}
	return s, nil
}

func (it *interp) evalList(fr *frame, e ast.Expr) (list, error) {
	v, err := it.eval(fr, e)
	if err != nil {
		return list{}, err
	}
	l, ok := v.(list)
	if !ok {
		return list{}, it.fail(e, "want a []string, have %T", v)
	}
	return l, nil
}

// listElem adds one element expression to l, recording it as skipped
// when it cannot be evaluated.
func (it *interp) listElem(fr *frame, l *list, e ast.Expr, spread bool) error {
	v, err := it.eval(fr, e)
	if err != nil {
		var ee *evalError
		if !errors.As(err, &ee) {
			return err
		}
		n := 1
		if spread {
			n = casesOf(e)
		}
		l.skipped = append(l.skipped, it.skipOf(ee, n))
		return nil
	}
	switch v := v.(type) {
	case string:
		if spread {
			return it.fail(e, "spread of a string")
		}
		l.items = append(l.items, v)
	case list:
		if !spread {
			return it.fail(e, "list where an element was expected")
		}
		l.items = append(l.items, v.items...)
		l.skipped = append(l.skipped, v.skipped...)
	default:
		return it.fail(e, "list element of type %T", v)
	}
	return nil
}

func (it *interp) eval(fr *frame, e ast.Expr) (any, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING, token.CHAR:
			s, err := strconv.Unquote(e.Value)
			if err != nil {
				return nil, it.fail(e, "literal: %v", err)
			}
			return s, nil
		case token.INT:
			n, err := strconv.Atoi(e.Value)
			if err != nil {
				return nil, it.fail(e, "literal: %v", err)
			}
			return n, nil
		}
		return nil, it.fail(e, "literal kind %v", e.Kind)
	case *ast.Ident:
		return it.lookup(fr, e)
	case *ast.ParenExpr:
		return it.eval(fr, e.X)
	case *ast.UnaryExpr:
		if e.Op == token.AND { // &r
			return it.eval(fr, e.X)
		}
		return nil, it.fail(e, "operator %v", e.Op)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return nil, it.fail(e, "operator %v", e.Op)
		}
		a, err := it.evalString(fr, e.X)
		if err != nil {
			return nil, err
		}
		b, err := it.evalString(fr, e.Y)
		if err != nil {
			return nil, err
		}
		return a + b, nil
	case *ast.CompositeLit:
		return it.composite(fr, e, e.Type)
	case *ast.CallExpr:
		return it.call(fr, e)
	}
	return nil, it.fail(e, "expression %T not interpreted", e)
}

func isStringType(t ast.Expr) bool {
	id, ok := t.(*ast.Ident)
	return ok && id.Name == "string"
}

func (it *interp) composite(fr *frame, lit *ast.CompositeLit, typ ast.Expr) (any, error) {
	switch t := typ.(type) {
	case *ast.ArrayType:
		if !isStringType(t.Elt) {
			return nil, it.fail(lit, "composite of []%s", it.src(t.Elt))
		}
		var l list
		for _, el := range lit.Elts {
			if err := it.listElem(fr, &l, el, false); err != nil {
				return nil, err
			}
		}
		return l, nil
	case *ast.MapType:
		var m mapv
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				return nil, it.fail(el, "map element without key")
			}
			k, err := it.eval(fr, kv.Key)
			if err != nil {
				return nil, err
			}
			var v any
			if c, ok := kv.Value.(*ast.CompositeLit); ok && c.Type == nil {
				v, err = it.composite(fr, c, t.Value)
			} else {
				v, err = it.eval(fr, kv.Value)
			}
			if err != nil {
				return nil, err
			}
			m.keys = append(m.keys, k)
			m.vals = append(m.vals, v)
		}
		return m, nil
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok && it.imports[fr.file][x.Name] == pkgConfig && t.Sel.Name == "Rule" {
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "RuleID" {
					id, err := it.evalString(fr, kv.Value)
					if err != nil {
						return nil, err
					}
					return ruleRef{id}, nil
				}
			}
			return nil, it.fail(lit, "config.Rule without a RuleID")
		}
	}
	return nil, it.fail(lit, "composite literal of %s", it.src(typ))
}

// base64Encodings are the encoding/base64 variables the fixtures use.
var base64Encodings = map[string]*base64.Encoding{
	"StdEncoding":    base64.StdEncoding,
	"RawStdEncoding": base64.RawStdEncoding,
	"URLEncoding":    base64.URLEncoding,
	"RawURLEncoding": base64.RawURLEncoding,
}

// patternHelpers are utils' regex builders, called for real.
var patternHelpers = map[string]func(string) string{
	"Numeric":                   utils.Numeric,
	"Hex":                       utils.Hex,
	"AlphaNumeric":              utils.AlphaNumeric,
	"AlphaNumericExtendedShort": utils.AlphaNumericExtendedShort,
	"AlphaNumericExtended":      utils.AlphaNumericExtended,
	"AlphaNumericExtendedLong":  utils.AlphaNumericExtendedLong,
}

func (it *interp) args(fr *frame, c *ast.CallExpr) ([]string, error) {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		s, err := it.evalString(fr, a)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (it *interp) call(fr *frame, c *ast.CallExpr) (any, error) {
	switch fn := c.Fun.(type) {
	case *ast.ArrayType: // []byte(x)
		if len(c.Args) == 1 {
			return it.evalString(fr, c.Args[0])
		}
	case *ast.Ident:
		switch fn.Name {
		case "string":
			if len(c.Args) == 1 {
				return it.evalString(fr, c.Args[0])
			}
		case "append":
			if len(c.Args) == 0 {
				break
			}
			base, err := it.evalList(fr, c.Args[0])
			if err != nil {
				return nil, err
			}
			l := list{items: slices.Clone(base.items), skipped: slices.Clone(base.skipped)}
			for i, a := range c.Args[1:] {
				spread := c.Ellipsis.IsValid() && i == len(c.Args)-2
				if err := it.listElem(fr, &l, a, spread); err != nil {
					return nil, err
				}
			}
			return l, nil
		case "newPlausibleSecret":
			if len(c.Args) != 1 {
				break
			}
			re, err := it.evalString(fr, c.Args[0])
			if err != nil {
				return nil, err
			}
			return it.plausibleSecret(c, re)
		default:
			if fd, ok := it.funcs[fn.Name]; ok {
				return it.callLocal(fr, c, fd)
			}
		}
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok {
			switch path := it.imports[fr.file][x.Name]; path {
			case pkgSecrets:
				if fn.Sel.Name == "NewSecret" && len(c.Args) == 1 {
					re, err := it.evalString(fr, c.Args[0])
					if err != nil {
						return nil, err
					}
					return it.newSecret(c, re)
				}
			case pkgUtils:
				return it.callUtils(fr, c, fn.Sel.Name)
			case "fmt":
				if fn.Sel.Name == "Sprintf" && len(c.Args) >= 1 {
					f, err := it.evalString(fr, c.Args[0])
					if err != nil {
						return nil, err
					}
					var args []any
					for _, a := range c.Args[1:] {
						v, err := it.eval(fr, a)
						if err != nil {
							return nil, err
						}
						switch v.(type) {
						case string, int, bool:
						default:
							return nil, it.fail(a, "Sprintf argument of type %T", v)
						}
						args = append(args, v)
					}
					return fmt.Sprintf(f, args...), nil
				}
			case "strings":
				switch fn.Sel.Name {
				case "ToUpper", "ToLower":
					if len(c.Args) == 1 {
						s, err := it.evalString(fr, c.Args[0])
						if err != nil {
							return nil, err
						}
						if fn.Sel.Name == "ToUpper" {
							return strings.ToUpper(s), nil
						}
						return strings.ToLower(s), nil
					}
				case "Repeat":
					if len(c.Args) == 2 {
						s, err := it.evalString(fr, c.Args[0])
						if err != nil {
							return nil, err
						}
						n, err := it.eval(fr, c.Args[1])
						if err != nil {
							return nil, err
						}
						if k, ok := n.(int); ok && k >= 0 && k < 1<<20 {
							return strings.Repeat(s, k), nil
						}
					}
				}
			}
		}
		// base64.<Encoding>.EncodeToString(x)
		if inner, ok := fn.X.(*ast.SelectorExpr); ok && fn.Sel.Name == "EncodeToString" && len(c.Args) == 1 {
			if x, ok := inner.X.(*ast.Ident); ok && it.imports[fr.file][x.Name] == "encoding/base64" {
				if enc := base64Encodings[inner.Sel.Name]; enc != nil {
					s, err := it.evalString(fr, c.Args[0])
					if err != nil {
						return nil, err
					}
					return enc.EncodeToString([]byte(s)), nil
				}
			}
		}
	}
	return nil, it.fail(c, "call not interpreted")
}

func (it *interp) callUtils(fr *frame, c *ast.CallExpr, name string) (any, error) {
	switch name {
	case "Validate", "ValidateWithPaths":
		if len(c.Args) != 3 {
			break
		}
		rv, err := it.eval(fr, c.Args[0])
		if err != nil {
			return nil, err
		}
		r, ok := rv.(ruleRef)
		if !ok {
			return nil, it.fail(c.Args[0], "rule of type %T", rv)
		}
		rf := ruleFixtures{RuleID: r.id}
		if name == "ValidateWithPaths" {
			rf.PathOnly = true
			it.found = append(it.found, rf)
			return r, nil
		}
		side := func(e ast.Expr) ([]string, []skip) {
			l, err := it.evalList(fr, e)
			if err != nil {
				var ee *evalError
				if !errors.As(err, &ee) {
					ee = it.fail(e, "%v", err)
				}
				return nil, []skip{it.skipOf(ee, 1)}
			}
			return l.items, l.skipped
		}
		rf.TPs, rf.SkippedTP = side(c.Args[1])
		rf.FPs, rf.SkippedFP = side(c.Args[2])
		it.found = append(it.found, rf)
		return r, nil
	case "GenerateSampleSecrets":
		a, err := it.args(fr, c)
		if err != nil {
			return nil, err
		}
		if len(a) == 2 {
			out := utils.GenerateSampleSecrets(a[0], a[1])
			slices.Sort(out) // the helper iterates a map
			return list{items: out}, nil
		}
	case "GenerateSampleSecret":
		a, err := it.args(fr, c)
		if err != nil {
			return nil, err
		}
		if len(a) == 2 {
			return utils.GenerateSampleSecret(a[0], a[1]), nil
		}
	case "Hex8_4_4_4_12":
		if len(c.Args) == 0 {
			return utils.Hex8_4_4_4_12(), nil
		}
	default:
		if f := patternHelpers[name]; f != nil {
			a, err := it.args(fr, c)
			if err != nil {
				return nil, err
			}
			if len(a) == 1 {
				return f(a[0]), nil
			}
		}
	}
	return nil, it.fail(c, "utils.%s not interpreted", name)
}

// callLocal interprets a helper function of the rules package.
func (it *interp) callLocal(fr *frame, c *ast.CallExpr, fd *ast.FuncDecl) (any, error) {
	if it.depth > 8 {
		return nil, it.fail(c, "call depth")
	}
	callee := &frame{vars: map[string]any{}, file: it.funcFile[fd.Name.Name]}
	var params []*ast.Ident
	for _, f := range fd.Type.Params.List {
		params = append(params, f.Names...)
	}
	if len(params) != len(c.Args) {
		return nil, it.fail(c, "variadic or mismatched call")
	}
	for i, p := range params {
		v, err := it.eval(fr, c.Args[i])
		if err != nil {
			return nil, err
		}
		callee.vars[p.Name] = v
	}
	it.depth++
	defer func() { it.depth-- }()
	v, ret, err := it.execBlock(callee, fd.Body.List)
	if err != nil {
		return nil, err
	}
	if !ret {
		return nil, it.fail(c, "%s returned nothing", fd.Name.Name)
	}
	return v, nil
}

// newSecret is gitleaks' secrets.NewSecret (reggen, limit 1) with a seed
// fixed by the call site, the number of earlier calls from that site in
// this rule, and the round.
func (it *interp) newSecret(c *ast.CallExpr, regex string) (string, error) {
	g, err := reggen.NewGenerator(regex)
	if err != nil {
		return "", it.fail(c, "NewSecret: %v", err)
	}
	p := it.pos(c.Pos())
	n := it.calls[p]
	it.calls[p] = n + 1
	h := fnv.New64a()
	fmt.Fprintf(h, "%s#%d#%d", p, n, it.round)
	g.SetSeed(int64(h.Sum64() >> 1))
	return g.Generate(1), nil
}

var (
	digit19            = regexp.MustCompile(`[1-9]`)
	plausibleStopwords = &config.Allowlist{StopWords: rules.DefaultStopWords}
)

// plausibleSecret is generic.go's newPlausibleSecret: NewSecret until the
// value holds a digit 1-9 and no stop word.
func (it *interp) plausibleSecret(c *ast.CallExpr, regex string) (string, error) {
	for range 10000 {
		s, err := it.newSecret(c, regex)
		if err != nil {
			return "", err
		}
		if !digit19.MatchString(s) {
			continue
		}
		if ok, _ := plausibleStopwords.ContainsStopWord(s); ok {
			continue
		}
		return s, nil
	}
	return "", it.fail(c, "newPlausibleSecret: no value after 10000 tries")
}

// TestFixtureReader runs the reader on a small rules file written here:
// what it can evaluate it builds, what it cannot it counts as skipped.
func TestFixtureReader(t *testing.T) {
	dir := t.TempDir()
	src := `package rules

import (
	"fmt"

	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/secrets"
	"github.com/zricethezav/gitleaks/v8/config"
)

var shared = []string{"shared-1", "shared-" + "2"}

func Good() *config.Rule {
	r := config.Rule{RuleID: "good"}
	tps := utils.GenerateSampleSecrets("good", "tok_"+secrets.NewSecret(utils.Hex("8")))
	tps = append(tps, fmt.Sprintf("x=%s", "y"), unknownHelper("z"))
	tps = append(tps, shared...)
	fps := []string{"fp", strings.Map(nil, "q")}
	return utils.Validate(r, tps, fps)
}

func Broken() *config.Rule {
	r := config.Rule{RuleID: "broken"}
	tps := mystery()
	return utils.Validate(r, tps, nil)
}

func Todo() *config.Rule {
	r := config.Rule{RuleID: "todo"}
	return &r
}
`
	if err := os.WriteFile(filepath.Join(dir, "r.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := loadFixtures(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ruleFixtures{}
	for _, r := range set.Rules {
		got[r.RuleID] = r
	}
	good := got["good"]
	if len(good.TPs) != sampleCount+1+2 || len(good.SkippedTP) != 1 || len(good.FPs) != 1 || len(good.SkippedFP) != 1 {
		t.Errorf("good: %d tps, %d skipped, %d fps, %d skipped", len(good.TPs), len(good.SkippedTP), len(good.FPs), len(good.SkippedFP))
	}
	if !slices.Contains(good.TPs, "x=y") || !slices.Contains(good.TPs, "shared-2") {
		t.Errorf("good: tps %q", good.TPs)
	}
	if again, _ := loadFixtures(dir, 0); !slices.Equal(again.Rules[0].TPs, good.TPs) {
		t.Error("same round, different random fixtures")
	}
	if other, _ := loadFixtures(dir, 1); slices.Equal(other.Rules[0].TPs, good.TPs) {
		t.Error("another round, same random fixtures")
	}
	if b := got["broken"]; len(b.TPs) != 0 || len(b.SkippedTP) != 1 {
		t.Errorf("broken: %d tps, %d skipped", len(b.TPs), len(b.SkippedTP))
	}
	if !slices.Equal(set.NoFixtures, []string{"todo"}) || len(set.FuncErrors) != 0 {
		t.Errorf("no fixtures %q, function errors %v", set.NoFixtures, set.FuncErrors)
	}
}
