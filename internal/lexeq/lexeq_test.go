package lexeq

import (
	"strings"
	"testing"
)

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		name, path, a, b string
		same             bool
	}{
		// Python.
		{"py: a marker comment", "x.py", "def f(x):\n    return x.upper()\n", "def f(x):\n    # FIXRAIL-MARKER\n    return x.upper()  # fixed\n", true},
		{"py: a comment-only line at another indent", "x.py", "if a:\n    b()\nc()\n", "if a:\n    b()\n        # note\nc()\n", true},
		{"py: re-indent keeping blocks", "x.py", "if a:\n    b()\n    c()\n", "if a:\n  b()\n  c()\n", true},
		{"py: a statement moved out of its block", "x.py", "if a:\n    b()\n    c()\n", "if a:\n    b()\nc()\n", false},
		{"py: tabs count to 8", "x.py", "if a:\n\tb()\n        c()\n", "if a:\n\tb()\n\tc()\n", true},
		{"py: a docstring is code", "x.py", "def f():\n    \"\"\"Old.\"\"\"\n", "def f():\n    \"\"\"New.\"\"\"\n", false},
		{"py: # inside a string is not a comment", "x.py", "s = '# a'\n", "s = '# b'\n", false},
		{"py: # inside a triple-quoted string", "x.py", "s = '''\n# a\n'''\n", "s = '''\n# b\n'''\n", false},
		{"py: a string prefix is part of the string", "x.py", "s = r'\\n'\n", "s = '\\n'\n", false},
		{"py: line breaks inside brackets", "x.py", "f(a,\n  b)\n", "f(a, b)\n", true},
		{"py: a continuation is not a new line", "x.py", "x = 1 + \\\n    2\n", "x = 1 + 2\n", true},
		{"py: two statements are not one", "x.py", "x = 1\n+ 2\n", "x = 1 + 2\n", false},
		{"py: a - -b is not a --b's spacing", "x.py", "x = a - -b\n", "x = a --b\n", false},
		{"py: 1.5 and 1 . 5", "x.py", "x = 1.5\n", "x = 1 . 5\n", false},
		{"py: an exponent's sign", "x.py", "x = 1e-5\n", "x = 1e - 5\n", false},
		{"py: CRLF line endings", "x.py", "a = 1\nb = 2\n", "a = 1\r\nb = 2\r\n", true},
		{"py: the coding cookie is code", "x.py", "# -*- coding: latin-1 -*-\nx = 1\n", "# -*- coding: utf-8 -*-\nx = 1\n", false},
		{"py: the shebang is code", "x.py", "#!/usr/bin/python2\nx = 1\n", "#!/usr/bin/python3\nx = 1\n", false},
		{"py: a code change", "x.py", "return text.upper()\n", "return (text or '').upper()\n", false},
		{"py: trailing whitespace and blank lines", "x.py", "a = 1\n\n\nb = 2\n", "a = 1   \n\nb = 2\n\n", true},
		{"py: an f-string's text", "x.py", "s = f'{a} b'\n", "s = f'{a}  b'\n", false},
		// Go.
		{"go: a marker comment", "x.go", "package p\n\nfunc f() int { return 1 }\n", "package p\n\n// marker\nfunc f() int { return 1 /* fixed */ }\n", true},
		{"go: gofmt spacing", "x.go", "package p\nvar x=1+2\n", "package p\n\nvar x = 1 + 2\n", true},
		{"go: a written and an inserted semicolon", "x.go", "package p\nfunc f() { a(); b() }\n", "package p\nfunc f() {\n\ta()\n\tb()\n}\n", true},
		{"go: a directive is code", "x.go", "package p\n\n//go:embed a.txt\nvar s string\n", "package p\n\n//go:embed b.txt\nvar s string\n", false},
		{"go: a build constraint is code", "x.go", "//go:build linux\n\npackage p\n", "//go:build darwin\n\npackage p\n", false},
		{"go: a cgo preamble is code", "x.go", "package p\n\n// #include <a.h>\nimport \"C\"\n", "package p\n\n// #include <b.h>\nimport \"C\"\n", false},
		{"go: a cgo file in an import group", "x.go", "package p\n\nimport (\n\t\"C\"\n)\n\n// x\nvar v int\n", "package p\n\nimport (\n\t\"C\"\n)\n\n// y\nvar v int\n", false},
		{"go: a string that looks like a comment", "x.go", "package p\nvar s = \"// a\"\n", "package p\nvar s = \"// b\"\n", false},
		{"go: a code change", "x.go", "package p\nvar x = 1\n", "package p\nvar x = 2\n", false},
		// JavaScript and TypeScript.
		{"js: a marker comment", "x.js", "function f(x) { return x.toUpperCase(); }\n", "// marker\nfunction f(x) { /* fixed */ return x.toUpperCase(); }\n", true},
		{"ts: a marker comment", "x.ts", "const f = (x: string): string => x;\n", "const f = (x: string): string => x; // marker\n", true},
		{"js: // inside a string", "x.js", "s = '// a';\n", "s = '// b';\n", false},
		{"js: a template's text", "x.js", "s = `a ${x} // b`;\n", "s = `a ${x} // c`;\n", false},
		{"js: a comment inside a template's expression", "x.js", "s = `a ${x} b`;\n", "s = `a ${x /* c */} b`;\n", true},
		{"js: a nested template", "x.js", "s = `a ${`b ${c}`} d`;\n", "s = `a ${`b ${c}`} e`;\n", false},
		{"js: /* inside a regex", "x.js", "r = /a\\/*b/;\nx = 1;\n", "r = /a\\/*b/;\nx = 2;\n", false},
		// Read as a division, the class's "/*" would open a comment
		// reaching the "*/" at the end and hide the change between.
		{"js: a regex after if (...)", "x.js", "if (a) /[/*]/.test(s); y = 1; // */\n", "if (a) /[/*]/.test(s); y = 2; // */\n", false},
		{"js: a regex after return", "x.js", "function f() { return /[/*]/.test(s) + 1; } // */\n", "function f() { return /[/*]/.test(s) + 2; } // */\n", false},
		{"js: division, then a comment", "x.js", "x = (a + b) / 2;\n", "x = (a + b) / 2; // half\n", true},
		{"js: division by a call, then a comment", "x.js", "x = f(a) / 2 / g(b);\n", "x = f(a) / 2 /* c */ / g(b);\n", true},
		{"js: return and a line break", "x.js", "function f() { return x; }\n", "function f() { return\nx; }\n", false},
		{"js: a comment holding a line break after return", "x.js", "function f() { return x; }\n", "function f() { return /*\n*/ x; }\n", false},
		{"js: a - -b and a --b", "x.js", "x = a - -b;\n", "x = a --b;\n", false},
		{"js: non-breaking space is whitespace", "x.js", "x = 1;\n", "x =\u00a01;\n", true},
		{"js: the shebang is code", "x.js", "#!/usr/bin/env node\nx();\n", "#!/usr/bin/env nodejs\nx();\n", false},
		{"ts: a @ts- pragma is code", "x.ts", "x = 1;\n", "// @ts-ignore\nx = 1;\n", false},
		{"ts: a triple-slash directive is code", "x.ts", "/// <reference path=\"a.d.ts\" />\nx = 1;\n", "/// <reference path=\"b.d.ts\" />\nx = 1;\n", false},
		// Other files: only trailing whitespace, blank lines and line endings.
		{"jsx is compared as text", "x.jsx", "<p>// a</p>\n", "<p>// b</p>\n", false},
		{"yaml: trailing whitespace", "x.yaml", "a:\n  b: 1\n", "a:   \n  b: 1\n\n", true},
		{"yaml: indentation is syntax", "x.yaml", "a:\n  b: 1\n", "a:\nb: 1\n", false},
		{"shell: words", "x.sh", "rm -rf /tmp/x\n", "rm -rf / tmp/x\n", false},
		{"a comment in another language is text", "x.c", "int x;\n", "int x; // marker\n", false},
	} {
		if got := Same(tc.path, []byte(tc.a), []byte(tc.b)); got != tc.same {
			t.Errorf("%s: Same = %v, want %v", tc.name, got, tc.same)
		}
	}
}

// TestPythonTokens pins the block structure the tokenizer emits.
func TestPythonTokens(t *testing.T) {
	got := kinds(PythonTokens([]byte("def f():\n    if x:\n        return 1\n    return 2\n")))
	want := "Ident Ident Op Op Op Newline Indent Ident Ident Op Newline Indent Ident Number Newline Dedent Ident Number Newline Dedent"
	if got != want {
		t.Errorf("tokens:\n got %s\nwant %s", got, want)
	}
}

func kinds(toks []Token) string {
	names := map[Kind]string{Ident: "Ident", Number: "Number", String: "String", Op: "Op", Newline: "Newline", Indent: "Indent", Dedent: "Dedent", Comment: "Comment", Other: "Other"}
	var out []string
	for _, t := range toks {
		out = append(out, names[t.Kind])
	}
	return strings.Join(out, " ")
}
