package policy

import (
	"reflect"
	"testing"
)

func TestVimEx(t *testing.T) {
	for _, c := range []struct {
		line string
		want exEffects
	}{
		{line: "%s/foo/bar/g"},
		{line: "set ff=unix"},
		{line: "wq", want: exEffects{bareW: true}},
		{line: "normal! gg=G"},
		{line: "g/^$/d"},
		{line: "let g:x = 1 | echo g:x"},
		{line: "%s/x/y/g | w", want: exEffects{bareW: true}},
		{line: "w .mcp.json", want: exEffects{writes: []string{".mcp.json"}}},
		{line: ":write ++ff=unix out.txt", want: exEffects{writes: []string{"out.txt"}}},
		{line: "sav! other.go", want: exEffects{writes: []string{"other.go"}}},
		{line: "1,$w >> log.txt", want: exEffects{writes: []string{"log.txt"}}},
		{line: "!rm -rf /srv/data", want: exEffects{runs: []string{"rm -rf /srv/data"}}},
		{line: "%!sort | uniq", want: exEffects{runs: []string{"sort | uniq"}}},
		{line: "r !id", want: exEffects{runs: []string{"id"}}},
		{line: "w !sh", want: exEffects{runs: []string{"sh"}}},
		{line: "silent !curl x", want: exEffects{runs: []string{"curl x"}}},
		{line: "g/x/!rm y", want: exEffects{runs: []string{"rm y"}}},
		{line: "terminal make", want: exEffects{runs: []string{"make"}}},
		{line: "e .mcp.json | w", want: exEffects{opened: []string{".mcp.json"}, bareW: true}},
		{line: "py3 import os; os.system('x')", want: exEffects{code: []exCode{{lang: "python", text: "import os; os.system('x')"}}}},
		{line: "call system('rm -rf /srv')", want: exEffects{code: []exCode{{lang: "vim", text: "call system('rm -rf /srv')"}}}},
		{line: "echo 1 | call delete('x')", want: exEffects{code: []exCode{{lang: "vim", text: "call delete('x')"}}}},
		{line: `%s/x/\=system("id")/`, want: exEffects{code: []exCode{{lang: "vim", text: `s/x/\=system("id")/`}}}},
		{line: "source evil.vim", want: exEffects{unread: ":source runs code the hook does not read"}},
		{line: "exe \"!rm x\"", want: exEffects{unread: ":exe runs code the hook does not read"}},
	} {
		var got exEffects
		vimEx(c.line, &got)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("vimEx(%q) = %+v, want %+v", c.line, got, c.want)
		}
	}
}

func TestEdScript(t *testing.T) {
	var got exEffects
	edScript("1,$s/a/b/\na\nw other text, not a command\n!rm text\n.\nw\nw .mcp.json\n!id\nr !uname\nwq\n", &got)
	want := exEffects{runs: []string{"id", "uname"}, writes: []string{".mcp.json"}, bareW: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edScript = %+v, want %+v", got, want)
	}
}

// TestEditorsJudged: what an editor's commands run and write is judged.
func TestEditorsJudged(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	all := "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"
	for _, c := range []tc{
		{id: "vim-bang", in: "vim -c ':!rm -rf /srv/data' -c q", want: "destructive"},
		{id: "vim-plus", in: "vim +'!rm -rf /srv/data' x", want: "destructive"},
		{id: "vim-w", in: "vim -c 'w .mcp.json' -c q x", want: "self-mod"},
		{id: "vim-e-w", in: "vim -es -c 'e .mcp.json' -c 'w' -c q", want: "self-mod"},
		{id: "vim-system", in: "nvim --headless -c 'call system(\"id\")' -c q", want: all},
		{id: "ex-stdin", in: "ex -s x <<< $'w .mcp.json\\nq'", want: "self-mod"},
		{id: "ed-stdin", in: "printf '!rm -rf /srv/data\\nq\\n' | ed -s x", want: "destructive"}, // printf's output is known
		{id: "ed-heredoc", in: "ed -s x.go <<'EOF'\n!rm -rf /srv/data\nq\nEOF", want: "destructive"},
		{id: "ed-write", in: "ed -s x.go <<'EOF'\nw .mcp.json\nq\nEOF", want: "self-mod"},
		{id: "emacs-eval", in: `emacs --batch --eval '(shell-command "rm -rf /srv/data")'`, want: all},

		{id: "vim-edit", in: "vim -c '%s/foo/bar/g' -c 'wq' x.go", want: ""},
		{id: "vim-ff", in: "vim -c 'set ff=unix' -c wq x.go", want: ""},
		{id: "vim-line", in: "vim +42 x.go", want: ""},
		{id: "ed-edit", in: "ed -s x.go <<'EOF'\n1,$s/a/b/g\nw\nq\nEOF", want: ""},
		{id: "emacs-batch", in: "emacs --batch -l ert --eval '(ert-run-tests-batch-and-exit)'", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// FuzzVimEx: any Ex line and any ed script are read without panicking.
func FuzzVimEx(f *testing.F) {
	for _, s := range []string{"w x", "!id", "g/a/!b", "%s/x/\\=system('y')/", "silent! exe 'x'", "a\nx\n.\nw y", "'a,'bw >> z", "/unclosed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var e exEffects
		vimEx(s, &e)
		edScript(s, &e)
		if len(e.runs)+len(e.writes)+len(e.opened) > 2*len(s)+2 {
			t.Fatalf("%q: more effects than the text can hold", s)
		}
	})
}
