package redact

import (
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
)

// A single-quoted value ended by ';' is a string or a character literal
// depending on the language: it blocks only where the text says which.
func TestCharLiteralTier(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	v := randomString(r, alnumAlphabet, 20) + "7q"
	diff := func(file, line string) string {
		return "diff --git a/" + file + " b/" + file + "\n--- a/" + file + "\n+++ b/" + file + "\n@@ -1,1 +1,2 @@\n ok\n+" + line + "\n"
	}
	cases := []struct {
		name string
		in   string
		want string // the credential-assignment finding's Review; "" blocks
	}{
		{"no language, ';'", "api_key = '" + v + "';\n", ReviewCharLiteral},
		{"no language, blank before ';'", "db_pass = '" + v + "' ;\n", ReviewCharLiteral},
		{"no language, member", "cfg.password = '" + v + "';\n", ReviewCharLiteral},
		{"no ';': not C", "api_key = '" + v + "'\n", ""},
		{"double quotes", "api_key = \"" + v + "\";\n", ""},
		{"';' then more", "api_key = '" + v + "'; f()\n", ReviewCharLiteral},
		{"php sigil", "$api_key = '" + v + "';\n", ""},
		{"js let", "let apiKey = '" + v + "';\n", ""},
		{"js var", "  var secret = '" + v + "';\n", ""},
		{"js const", "const password = '" + v + "';\n", ""},
		{"perl my", "my $password = '" + v + "';\n", ""},
		{"sql set", "UPDATE users SET password = '" + v + "';\n", ""},
		{"not a declaration word", "outlet api_key = '" + v + "';\n", ReviewCharLiteral},
		{"diff of a .js file", diff("web/config.js", "apiKey = '"+v+"';"), ""},
		{"diff of a .php file", diff("app/db.php", "password = '"+v+"';"), ""},
		{"diff of a .c file", diff("src/conf.c", "api_key = '"+v+"';"), ReviewCharLiteral},
		{"diff of a .java file", diff("src/A.java", "password = '"+v+"';"), ReviewCharLiteral},
		{"diff of a .md file", diff("docs/setup.md", "api_key = '"+v+"';"), ReviewCharLiteral},
		{"diff -u header with a date", "--- conf.c\t2026-01-01\n+++ conf.js\t2026-01-02\n@@ -1 +1 @@\n+api_key = '" + v + "';\n", ""},
		{"deleted file header", "--- a/x.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-api_key = '" + v + "';\n", ReviewCharLiteral},
		// the language is that of the file the line is in, not the last one in the text
		{"js file then c file", diff("a.js", "x = 1;") + diff("b.cpp", "password = '"+v+"';"), ReviewCharLiteral},
		{"c file then js file", diff("b.cpp", "x = 1;") + diff("a.js", "password = '"+v+"';"), ""},
	}
	e := mustNew(t, Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := e.Detect(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(fs, func(f Finding) bool { return f.Rule == ruleAssignment })
			if i < 0 {
				t.Fatalf("Detect(%q) = %v, want a %s finding", tc.in, fs, ruleAssignment)
			}
			if fs[i].Review != tc.want {
				t.Errorf("Detect(%q): %s review %q, want %q", tc.in, ruleAssignment, fs[i].Review, tc.want)
			}
			if tc.in[fs[i].Start:fs[i].End] != v {
				t.Errorf("finding spans %q, want the value", tc.in[fs[i].Start:fs[i].End])
			}
			// Redacted either way: the tier decides only what blocks.
			out, _, err := e.Redact(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, v) {
				t.Errorf("Redact left the value in %q", out)
			}
		})
	}
}

// diffFile.at, asked about positions in order, answers what a fresh search
// of the whole prefix does.
func TestDiffFileIncremental(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	parts := []string{"+++ b/a.js\n", "+++ b/b.c\n", "+++ /dev/null\n", "x+++ b/no.go\n", "+ ++\n", "+++ ", "code;\n", "\n", "+++ c.PY\t2026\n"}
	for n := 0; n < 300; n++ {
		var sb strings.Builder
		for k := r.IntN(12); k >= 0; k-- {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		txt := sb.String()
		var d diffFile
		for p := 0; p <= len(txt); p += 1 + r.IntN(5) {
			ext, ok := d.at(txt, p)
			wext, wok := naiveDiffFile(txt[:p], txt)
			if ext != wext || ok != wok {
				t.Fatalf("at(%q, %d) = %q %v, want %q %v", txt, p, ext, ok, wext, wok)
			}
		}
	}
}

func naiveDiffFile(prefix, t string) (string, bool) {
	ext, seen := "", false
	for h := 0; h+4 <= len(prefix); h++ {
		if prefix[h:h+4] != "+++ " || h > 0 && prefix[h-1] != '\n' {
			continue
		}
		line := t[h+4:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimRight(line, " \t\r")
		if i := strings.IndexByte(line, '\t'); i >= 0 {
			line = line[:i]
		}
		if line == "/dev/null" {
			continue
		}
		ext, seen = strings.ToLower(path.Ext(line)), true
	}
	return ext, seen
}
