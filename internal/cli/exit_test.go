package cli

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/receipt"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// TestExitCode pins the documented table: testscript can only say "non-zero".
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"help", errHelpShown, 0},
		{"draft pr", &terminalError{pipeline.DraftPR}, 0},
		{"halt", &terminalError{pipeline.Halt}, 3},
		{"not repro", &terminalError{pipeline.NotRepro}, 4},
		{"escalate", &terminalError{pipeline.Escalate}, 5},
		{"unknown terminal", &terminalError{"FIFTH"}, 1},
		{"usage", usagef("bad"), 2},
		{"setup", fmt.Errorf("x: %w", pipeline.ErrSetup), 2},
		{"bad report", fmt.Errorf("%w: nope", findings.ErrBadReport), 2},
		{"redact check found", &errFound{2}, 5},
		{"hook blocked", &hookBlocked{}, 2},
		{"receipt chain broken", &errChainBroken{&receipt.Break{Line: 2, Reason: "x"}}, 5},
		{"approve declined", errDeclined, 3},
		{"doctor found a missing precondition", errDoctor, 3},
		{"resolve-version no safe version", resolvecmd.NoSafeVersionError{}, 5},
		{"resolve-version offline miss", &resolvecmd.UnavailableError{Err: &vulndata.MissError{Kind: "osv"}}, 1},
		{"resolve-version usage", resolveUsage(&resolvecmd.UsageError{Msg: "bad"}), 2},
		{"scan could not look", &errServiceUnavailable{errors.New("403")}, 1},
		{"poisoned clone", fmt.Errorf("p1: %w", gitx.ErrPoisoned), 5},
		{"poisoned clone at setup", fmt.Errorf("%w: cannot start a run: %w", pipeline.ErrSetup, gitx.ErrPoisoned), 5},
		{"wrapped exit error wins", fmt.Errorf("refusing: %w", &errChainBroken{&receipt.Break{Line: 1, Reason: "x"}}), 5},
		{"usage wrapping a setup error", fmt.Errorf("%w: %w", usagef("bad"), pipeline.ErrSetup), 2},
		{"internal", errors.New("disk on fire"), 1},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestErrorMessage pins which outcomes Main prints: an error the command
// already showed (a report, findings, the hook protocol) adds nothing.
func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errHelpShown, ""},
		{&terminalError{pipeline.Escalate}, ""},
		{&errFound{3}, ""},
		{resolvecmd.NoSafeVersionError{}, ""},
		{&hookBlocked{}, ""},
		{errDoctor, ""},
		{fmt.Errorf("lint: %w", &errFound{1}), ""},
		{errDeclined, "not approved; nothing was signed"},
		{usagef("bad flag"), "bad flag"},
		{&errChainBroken{&receipt.Break{Line: 2, Reason: "x"}}, "receipt chain broken at " + (&receipt.Break{Line: 2, Reason: "x"}).String()},
		{&resolvecmd.UnavailableError{Err: errors.New("osv unreachable")}, "osv unreachable"},
		{&errServiceUnavailable{errors.New("forge unreachable")}, "forge unreachable"},
		{errors.New("disk on fire"), "disk on fire"},
	} {
		if got := errorMessage(tc.err); got != tc.want {
			t.Errorf("errorMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestErrorTypesSayTheirCode: every error type of this package says its exit
// code and whether it was shown, and no package-level sentinel is a bare
// errors.New — either would fall through exitCode to 1 without anyone
// having decided so.
func TestErrorTypesSayTheirCode(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]map[string]bool{} // type → method names
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				typ := d.Recv.List[0].Type
				if st, ok := typ.(*ast.StarExpr); ok {
					typ = st.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					if methods[id.Name] == nil {
						methods[id.Name] = map[string]bool{}
					}
					methods[id.Name][d.Name.Name] = true
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, spec := range d.Specs {
					for _, v := range spec.(*ast.ValueSpec).Values {
						if c, ok := v.(*ast.CallExpr); ok {
							if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
								if x, ok := sel.X.(*ast.Ident); ok && x.Name == "errors" {
									t.Errorf("%s: a bare errors.New sentinel; give it its code (&codedError{…})", fset.Position(c.Pos()))
								}
							}
						}
					}
				}
			}
		}
	}
	n := 0
	for typ, m := range methods {
		if !m["Error"] {
			continue
		}
		n++
		if !m["ExitCode"] || !m["Shown"] {
			t.Errorf("error type %s lacks ExitCode or Shown: every error of the CLI says its exit code", typ)
		}
	}
	if n < 5 {
		t.Fatalf("found %d error types; the parse is broken", n)
	}
}

// TestResolveExitCodes holds the slim fixrail-resolve's exit codes to this
// table: the two binaries answer resolve-version alike.
func TestResolveExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		slim, here int
	}{
		{"decided", resolvecmd.ExitDecided, exitOK},
		{"no answer", resolvecmd.ExitNoAnswer, exitInternal},
		{"usage", resolvecmd.ExitUsage, exitUsage},
		{"no safe version", resolvecmd.ExitNoSafeVersion, exitFound},
	} {
		if tc.slim != tc.here {
			t.Errorf("%s: resolvecmd says %d, the table %d", tc.name, tc.slim, tc.here)
		}
	}
}
