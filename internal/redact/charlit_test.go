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
	C, B := ReviewCharLiteral, "" // the credential-assignment finding's Review
	cases := []struct{ name, in, review string }{
		{"no language, ';'", "api_key = '" + v + "';\n", C},
		{"no language, blank before ';'", "db_pass = '" + v + "' ;\n", C},
		{"no language, member", "cfg.password = '" + v + "';\n", C},
		{"no ';': not C", "api_key = '" + v + "'\n", B},
		{"double quotes", "api_key = \"" + v + "\";\n", B},
		{"';' then more", "api_key = '" + v + "'; f()\n", C},
		{"php sigil", "$api_key = '" + v + "';\n", B},
		{"js let", "let apiKey = '" + v + "';\n", B},
		{"js var", "  var secret = '" + v + "';\n", B},
		{"js const", "const password = '" + v + "';\n", B},
		{"perl my", "my $password = '" + v + "';\n", B},
		{"sql set", "UPDATE users SET password = '" + v + "';\n", B},
		{"not a declaration word", "outlet api_key = '" + v + "';\n", C},
		{"diff of a .js file", diff("web/config.js", "apiKey = '"+v+"';"), B},
		{"diff of a .php file", diff("app/db.php", "password = '"+v+"';"), B},
		{"diff of a .c file", diff("src/conf.c", "api_key = '"+v+"';"), C},
		{"diff of a .java file", diff("src/A.java", "password = '"+v+"';"), C},
		{"diff of a .md file", diff("docs/setup.md", "api_key = '"+v+"';"), C},
		{"diff -u header with a date", "--- conf.c\t2026-01-01\n+++ conf.js\t2026-01-02\n@@ -1 +1 @@\n+api_key = '" + v + "';\n", B},
		// a file's own text cannot rename the file: an added "++ b/x.c" line
		{"added line reading as a header", diff("web/config.js", "++ b/x.c\n+password = '"+v+"';"), B},
		{"removed and added lines reading as headers", diff("web/config.js", "x = 1;\n--- a/x.c\n+++ b/x.c\n+password = '"+v+"';"), B},
		{"deleted file header", "--- a/x.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-api_key = '" + v + "';\n", C},
		// the language is that of the file the line is in, not the last one in the text
		{"js file then c file", diff("a.js", "x = 1;") + diff("b.cpp", "password = '"+v+"';"), C},
		{"c file then js file", diff("b.cpp", "x = 1;") + diff("a.js", "password = '"+v+"';"), B},
	}
	pcs := make([]precisionCase, len(cases))
	for i, tc := range cases {
		pcs[i] = precisionCase{tc.name, tc.in, block, ruleAssignment}
		if tc.review != "" {
			pcs[i].want = review
		}
	}
	checkPrecision(t, pcs)
	// and for the reason said, over the value, which Redact removes
	e := mustNew(t, Options{})
	for _, tc := range cases {
		fs, err := e.Detect(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(fs, func(f Finding) bool {
			return f.Rule == ruleAssignment && f.Review == tc.review && tc.in[f.Start:f.End] == v
		}) {
			t.Errorf("%s: Detect(%q) = %v, want %s over the value with review %q", tc.name, tc.in, fs, ruleAssignment, tc.review)
		}
		if out, _, err := e.Redact(tc.in); err != nil || strings.Contains(out, v) {
			t.Errorf("%s: Redact = %q, %v: the value is left", tc.name, out, err)
		}
	}
}

// diffFile.at, asked about positions in order, answers what a fresh search
// of the whole prefix does.
func TestDiffFileIncremental(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	parts := []string{"+++ b/a.js\n", "+++ b/b.c\n", "+++ /dev/null\n", "x+++ b/no.go\n", "+ ++\n", "+++ ", "code;\n", "\n", "+++ c.PY\t2026\n",
		"--- a/x\n", "--- a/x\n+++ b/y.rb\n", "@@ -1 +1 @@\n", "@@ "}
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
		if prefix[h:h+4] != "+++ " || !naiveHeader(t, h) {
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

// naiveHeader is fileHeader by splitting the text into lines.
func naiveHeader(t string, h int) bool {
	lines := strings.SplitAfter(t, "\n")
	at := 0
	for i, l := range lines {
		if at == h {
			return i > 0 && strings.HasPrefix(lines[i-1], "--- ") &&
				(i+1 == len(lines) || lines[i+1] == "" || strings.HasPrefix(lines[i+1], "@@ "))
		}
		at += len(l)
	}
	return false
}
