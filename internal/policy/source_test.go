package policy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestSourceReusedPrinter: source's pooled printers print every word as a
// new printer does, a word over 200 bytes as "".
func TestSourceReusedPrinter(t *testing.T) {
	script := `cat <<EOF > "$HOME/x"
$(date) ${A:-b}
EOF
git -C "$DIR" push "https://x:${TOKEN}@github.com/$R" "$(git rev-parse HEAD)":refs/heads/main # c
eval "$(printf '%s' "$P")" ` + "`id`" + ` ${#ARR[@]} $'a\tb' "` + strings.Repeat("long ", 50) + `$X"
`
	f, err := syntax.NewParser(syntax.KeepComments(true)).Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatal(err)
	}
	var words []*syntax.Word
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			words = append(words, w)
		}
		return true
	})
	if len(words) < 15 {
		t.Fatalf("only %d words", len(words))
	}
	long := 0
	for range 2 {
		for _, w := range words {
			var b strings.Builder
			syntax.NewPrinter().Print(&b, w)
			want := b.String()
			if len(want) > 200 {
				want = ""
				long++
			}
			if got := source(w); got != want {
				t.Errorf("source(word at %s) = %q, a new printer prints %q", w.Pos(), got, want)
			}
		}
	}
	if long == 0 {
		t.Error("no word over 200 bytes")
	}
}
