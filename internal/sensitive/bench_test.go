package sensitive

import (
	"fmt"
	"strings"
	"testing"
)

// benchSources are generated files of about 200 kB each, imports first, the
// rest ordinary code with strings, comments and brackets.
func benchSources() map[string][]byte {
	var py, js, goSrc strings.Builder
	goSrc.WriteString("package p\n\nimport (\n")
	for i := range 40 {
		fmt.Fprintf(&py, "import mod%d\nfrom pkg%d import (a,\n    b)\n", i, i)
		fmt.Fprintf(&js, "import { a%d } from './m%d';\n", i, i)
		fmt.Fprintf(&goSrc, "\t\"example.com/m%d\"\n", i)
	}
	goSrc.WriteString(")\n")
	for i := 0; py.Len() < 200<<10; i++ {
		fmt.Fprintf(&py, "def f%d(x):\n    # a comment\n    s = 'text %d'; return [x, {'k': (x, %d)}]\n", i, i, i)
		fmt.Fprintf(&js, "function f%d(x) { // a comment\n  const s = `t ${x}`; return [x, {k: (x + %d)}];\n}\n", i, i)
		fmt.Fprintf(&goSrc, "func f%d(x int) int { // a comment\n\ts := \"text\"; _ = s; return x + %d\n}\n", i, i)
	}
	return map[string][]byte{"a.py": []byte(py.String()), "a.ts": []byte(js.String()), "a.go": []byte(goSrc.String())}
}

func BenchmarkCheckImports(b *testing.B) {
	p := &Policy{}
	for name, src := range benchSources() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				p.CheckImports(name, src)
			}
		})
	}
}
