package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPipelineNamesNoFixType: the seam holds in the source, not only at run
// time. No non-test file of package pipeline imports a fix type's leaf
// packages (the cve type's advisory data, manifests and decision) or names
// a fix type in code: a new type is a fixtype.Type value registered where
// the CLI composes, and the pipeline drives it without knowing it. Comments
// may mention types; identifiers and string literals may not.
func TestPipelineNamesNoFixType(t *testing.T) {
	forbiddenImports := []string{"internal/cve", "internal/manifest", "internal/vulndata"}
	// A type's name as a whole word in an identifier or a literal.
	typeWord := regexp.MustCompile(`(?i)(^|[^a-z])(cve|bug|typo)([^a-z]|$)`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbiddenImports {
				if strings.HasSuffix(p, bad) {
					t.Errorf("%s imports %s: a fix type's leaf package", fset.Position(imp.Pos()), p)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var text string
			switch n := n.(type) {
			case *ast.Ident:
				text = n.Name
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					text = n.Value
				}
			default:
				return true
			}
			// Split camelCase so cveGate and BugPlan are caught as words.
			words := regexp.MustCompile(`([a-z0-9])([A-Z])`).ReplaceAllString(text, "$1 $2")
			if typeWord.MatchString(words) {
				t.Errorf("%s names a fix type: %s", fset.Position(n.Pos()), text)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files: the glob did not find the package", checked)
	}
}
