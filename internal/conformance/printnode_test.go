package conformance

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestPrintNodeReusedPrinter: printNode's pooled printers print every node
// of a script as a new printer does, though the previous node they printed
// left heredocs, comments and indentation behind.
func TestPrintNodeReusedPrinter(t *testing.T) {
	const script = `# a comment
set -euo pipefail
f() {
  if [ -n "$X" ]; then # trailing
    cat <<EOF | gh issue comment "$N" --body-file -
body ${TITLE} $(date) ${#ARR[@]} ${V//a/b}
EOF
  fi
}
for i in 1 2; do echo "$i" >> "$GITHUB_OUTPUT"; done
case "$A" in a) echo a ;; *) echo b ;; esac
BUDGET=${BUDGET:-0} && test "$(cat spent)" -lt 10 || true
y=("a b" c)
x=$(( 1 + 2 )) cmd --flag="v w" 'single' $'esc\n'
`
	f, err := syntax.NewParser(syntax.KeepComments(true)).Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatal(err)
	}
	var nodes []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.Stmt, syntax.Command, *syntax.Word, syntax.WordPart, *syntax.Assign:
			nodes = append(nodes, n)
		}
		return true
	})
	if len(nodes) < 50 {
		t.Fatalf("only %d nodes", len(nodes))
	}
	for range 2 {
		for _, n := range nodes {
			var want strings.Builder
			syntax.NewPrinter().Print(&want, n)
			if got := printNode(n); got != want.String() {
				t.Errorf("printNode(%T at %s) = %q, a new printer prints %q", n, n.Pos(), got, want.String())
			}
		}
	}
}
