package sensitive

import (
	"strings"
	"testing"
)

func FuzzClassify(f *testing.F) {
	f.Add("src/utils/format.py", "x", uint8(0))
	f.Add("src/AuthService.java", "lib", uint8(1))
	f.Add("../etc/passwd", "", uint8(2))
	f.Add("a//./b", "Ünïcode/İ", uint8(200))
	f.Add("", "\x00", uint8(7))
	p := &Policy{Fixable: []string{"**"}, Evidence: []string{"**"}}
	f.Fuzz(func(t *testing.T, name, other string, pick uint8) {
		v := p.Classify(name)
		if v.Class != Fixable && v.Class != Denied && v.Class != Unknown {
			t.Fatalf("Classify(%q) class %d", name, v.Class)
		}
		if v.Class == Unknown && v.Rule != "" || v.Class != Unknown && v.Rule == "" {
			t.Fatalf("Classify(%q) = %+v: rule does not fit class", name, v)
		}
		// A deny word as a whole segment, in any case, anywhere in a path
		// that is otherwise arbitrary, is never Fixable.
		w := DenyWords[int(pick)%len(DenyWords)]
		if pick&1 == 1 {
			w = strings.ToUpper(w)
		}
		for _, path := range []string{
			w,
			name + "/" + w,
			w + "/" + name,
			name + "/" + w + "/" + other,
		} {
			if got := p.Classify(path); got.Class == Fixable {
				t.Fatalf("Classify(%q) = %+v, want not fixable (deny word %q)", path, got, w)
			}
		}
	})
}

func FuzzImportLines(f *testing.F) {
	f.Add("a.py", "from auth import (x,\n y)\nimport os\n")
	f.Add("a.go", "import (\n\"fmt\"\n")
	f.Add("a.rs", "pub(")
	f.Add("a.ts", "} from")
	f.Add("a.cs", "global using")
	f.Add("a.php", "<?php")
	f.Add("a.c", "#")
	f.Add("a.py", "if True: from x import auth_tokens\n_=0; import y\ntry: import z\n")
	f.Add("a.js", "x(); import {\n a,\n} from 'b'\nimport c\n from 'd'; `${require('e')}`")
	f.Add("a.go", "package p; import (\n\"a\"; b \"c\"\n)\nimport \"\\x61\"")
	f.Add("a.rs", "use a::{\n b,\n};\nfn f() { use c; }")
	p := &Policy{}
	f.Fuzz(func(t *testing.T, name, src string) {
		lines := ImportLines(name, []byte(src))
		for _, l := range lines {
			if l == "" || l != strings.TrimSpace(l) {
				t.Fatalf("ImportLines returned untrimmed or empty line %q", l)
			}
		}
		for _, v := range p.CheckImports(name, []byte(src)) {
			if v.Class != Denied || !strings.HasPrefix(v.Rule, "import:") {
				t.Fatalf("CheckImports verdict %+v", v)
			}
		}
	})
}

// FuzzPythonImportAfterAnything: whatever comes before it, an import of a
// denied module in a compound statement at the end of a Python file is
// judged: by its word, or as unparsed when what came before left a string
// or bracket open.
func FuzzPythonImportAfterAnything(f *testing.F) {
	f.Add("")
	f.Add("x = '''")
	f.Add("f(")
	f.Add("s = 'abc")
	f.Add("# comment \\")
	f.Add("x = 1 \\")
	f.Add("if True: from x import auth_tokens\n_=0; import y\ntry: import z\n")
	p := &Policy{}
	f.Fuzz(func(t *testing.T, src string) {
		for _, tail := range []string{"\nif 1: import auth_x\n", "\n_ = 0; import auth_x\n", "\ntry: from m import auth_x\nexcept E: pass\n"} {
			if v := p.CheckImports("a.py", []byte(src+tail)); len(v) == 0 {
				t.Fatalf("no verdict for %q", src+tail)
			}
		}
	})
}

// FuzzAliasStaysDenied: a denied file's name, changed only in ways NTFS or
// HFS+ ignore when they open it, is still never Fixable.
func FuzzAliasStaysDenied(f *testing.F) {
	f.Add(uint8(0), uint8(3), "\u200c")
	f.Add(uint8(1), uint8(40), ". ")
	f.Add(uint8(2), uint8(0), "\ufeff")
	p := &Policy{Fixable: []string{"**"}, Evidence: []string{"**"}}
	denied := []string{"fixrail.yaml", ".gitattributes", "src/CLAUDE.md", ".github/workflows/ci.yml", "src/password.py", "certs/a.pem"}
	ignorable := []rune{0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x206a, 0x206f, 0xfeff}
	f.Fuzz(func(t *testing.T, which, at uint8, tail string) {
		name := denied[int(which)%len(denied)]
		rs := []rune(name)
		i := int(at) % (len(rs) + 1)
		r := ignorable[int(at)%len(ignorable)]
		name = string(rs[:i]) + string(r) + string(rs[i:])
		// Trailing dots and spaces on the last segment; any other tail
		// byte makes a different name, which the property does not cover.
		name += strings.Map(func(r rune) rune {
			if r == '.' || r == ' ' {
				return r
			}
			return -1
		}, tail)
		if got := p.Classify(name); got.Class == Fixable {
			t.Fatalf("Classify(%q) = %+v, want not fixable", name, got)
		}
	})
}
