package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestFoldedSpellings: on a Mac a protected file opens under spellings that
// differ from its bytes: case beyond ASCII ("ſ" is "s", U+212A is "k"),
// HFS+'s ignorable code points, and another Unicode normalization of a
// directory above it. Each is the protected file, for the shell and for the
// file tools alike; a name that differs in a letter is not.
func TestFoldedSpellings(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "Jos\u00e9") // composed, as macOS reports $HOME
	repo := filepath.Join(home, "repo")
	scratch := filepath.Join(root, "scratch")
	for _, d := range []string{filepath.Join(home, ".claude"), filepath.Join(repo, ".claude"), filepath.Join(repo, ".git", "hooks"), scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Home: home, ScratchDirs: []string{scratch}}
	decomposed := filepath.Join(root, "Jose\u0301") // the same directory to APFS
	file := func(p string) string {
		b, _ := json.Marshal(map[string]string{"file_path": p, "content": "{}"})
		return string(b)
	}
	for _, c := range []tc{
		{id: "long-s", in: "echo '{}' > .claude/\u017fettings.json", want: "self-mod"},
		{id: "long-s-tool", tool: "Write", in: file(filepath.Join(repo, ".claude", "\u017fettings.local.json")), want: "self-mod"},
		{id: "kelvin", in: "cp x.sh .git/hoo\u212as/pre-commit", want: "scope-escalation"},
		{id: "hfs-joiner", in: "echo '{}' > .cla\u200cude/settings.json", want: "self-mod"},
		{id: "hfs-bom", tool: "Write", in: file(filepath.Join(repo, ".claude", "\ufeffsettings.json")), want: "self-mod"},
		{id: "nfd-home", in: "echo x > " + filepath.Join(decomposed, ".claude", "CLAUDE.md"), want: "self-mod"},
		{id: "nfd-home-tool", tool: "Edit", in: `{"file_path":"` + filepath.Join(decomposed, ".claude", "settings.json") + `","old_string":"a","new_string":"b"}`, want: "self-mod"},
		{id: "upper-nfd-home", in: "echo x > " + filepath.Join(root, "JOSE\u0301", ".CLAUDE", "x"), want: "self-mod"},
		// Another letter is another name everywhere.
		{id: "other-name", in: "echo '{}' > .claude/sattings.json", want: ""},
		{id: "other-home", in: "echo x > " + filepath.Join(root, "Jos\u00e8", ".claude", "x"), want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestFoldedSpellingsInCode: inline code that names the settings in a
// spelling a Mac opens as them writes them there.
func TestFoldedSpellingsInCode(t *testing.T) {
	for _, c := range []tc{
		{id: "code-hfs", in: "python3 -c \"open('x/sett\u200cings.json','w').write('{}')\"", want: "self-mod?"},
		{id: "code-long-s", in: "python3 -c \"open('x/\u017fettings.json','w').write('{}')\"", want: "self-mod?"},
		{id: "code-plain", in: "python3 -c \"open('x/sattings.json','w').write('{}')\"", want: ""},
	} {
		runCase(t, c, Env{})
	}
}

// TestFoldedProgramNames: a Mac finds a program on $PATH by a name its file
// system compares, so "ſudo" runs sudo there and "su\u200cdo" does on HFS+.
func TestFoldedProgramNames(t *testing.T) {
	for _, c := range []tc{
		{id: "prog-long-s", in: "\u017fudo rm -rf /", want: "self-mod destructive scope-escalation"},
		{id: "prog-hfs", in: "su\u200cdo rm -rf /", want: "self-mod destructive scope-escalation"},
		{id: "prog-shell", in: "\u017fh -c 'rm -rf /'", want: "self-mod destructive"},
		{id: "prog-kelvin", in: "\u212Aubectl delete ns prod", want: "destructive"},
		{id: "prog-hfs-git", in: "gi\u200dt push --force", want: "push-force"},
		{id: "prog-other", in: "sadu rm -rf /", want: ""},
	} {
		runCase(t, c, Env{})
	}
}
