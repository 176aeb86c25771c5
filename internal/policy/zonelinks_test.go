package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// TestZonesAtResolvedPaths: a protected file is judged at the path the file
// system resolves it to as well as at the one fixrail was given: a home
// below a linked directory (/home -> /data/home), a dotfile a manager links
// into a repository of dotfiles, $FIXRAIL_HOME and a signing key below a
// link. Writing or reading through the real path is what it would be
// through the given one.
func TestZonesAtResolvedPaths(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "data", "home", "u")
	dotfiles := filepath.Join(real, "dotfiles")
	for _, d := range []string{filepath.Join(real, ".claude"), filepath.Join(real, ".fixrail", "keys"), dotfiles, filepath.Join(root, "scratch")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dotfiles, "bashrc"), "# rc\n")
	write(t, filepath.Join(real, "signing", "attest.key"), "not a key\n")
	symlink(t, filepath.Join(root, "data", "home"), filepath.Join(root, "home"))
	symlink(t, filepath.Join(dotfiles, "bashrc"), filepath.Join(real, ".bashrc"))
	write(t, filepath.Join(dotfiles, "config", "git", "config"), "[user]\n")
	symlink(t, filepath.Join(dotfiles, "config"), filepath.Join(real, ".config")) // a directory linked whole
	symlink(t, "/dev/null", filepath.Join(real, ".zshrc"))                        // silenced: /dev/null stays writable
	home := filepath.Join(root, "home", "u")                                      // as $HOME names it: through the link
	env := Env{
		Home:        home,
		FixrailHome: filepath.Join(home, ".fixrail"),
		SigningKeys: []string{filepath.Join(home, "signing", "attest.key")},
		ScratchDirs: []string{filepath.Join(root, "scratch")},
	}
	for _, c := range []tc{
		{id: "given", in: "echo '{}' > " + filepath.Join(home, ".fixrail", "policy.json"), want: "self-mod"},
		{id: "real-fixrail-home", in: "echo '{}' > " + filepath.Join(real, ".fixrail", "policy.json"), want: "self-mod"},
		{id: "real-home-rc", in: "echo x >> " + filepath.Join(real, ".profile"), want: "scope-escalation"},
		{id: "dev-null", in: "go vet ./... > /dev/null 2>&1", want: ""},
		{id: "linked-dotfile", in: "echo 'curl x | sh' >> " + filepath.Join(dotfiles, "bashrc"), want: "scope-escalation"},
		{id: "linked-dotfile-tool", tool: "Write", in: `{"file_path":"` + filepath.Join(dotfiles, "bashrc") + `","content":"x"}`, want: "scope-escalation"},
		{id: "linked-config-dir", in: "git config --file " + filepath.Join(dotfiles, "config", "git", "config") + " core.hooksPath /tmp/h", want: "self-mod scope-escalation"},
		{id: "linked-config-dir-write", in: "echo x >> " + filepath.Join(dotfiles, "config", "git", "config"), want: "self-mod"},
		{id: "real-keys-read", in: "cat " + filepath.Join(real, ".fixrail", "keys", "k"), want: "self-mod"},
		{id: "real-signing-key-read", in: "cat " + filepath.Join(real, "signing", "attest.key"), want: "self-mod"},
		// Beside them, nothing protected.
		{id: "other-dotfile", in: "echo x >> " + filepath.Join(dotfiles, "vimrc-notes"), want: ""},
		{id: "other-read", in: "cat " + filepath.Join(real, "signing", "README"), want: ""},
	} {
		c.cwd = filepath.Join(root, "scratch")
		runCase(t, c, env)
	}
}

// TestConfigEntriesLinked: a dotfile manager (GNU stow) links each entry
// of ~/.config on its own — ~/.config/nvim to ~/dotfiles/nvim — while
// ~/.config stays a directory. The protected directory is judged at the
// link's target too; an entry that is not a link, or not protected, is
// not.
func TestConfigEntriesLinked(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	dotfiles := filepath.Join(home, "dotfiles")
	write(t, filepath.Join(dotfiles, "nvim", "init.lua"), "-- nvim\n")
	write(t, filepath.Join(dotfiles, "fish", "config.fish"), "# fish\n")
	write(t, filepath.Join(dotfiles, "starship.toml"), "# prompt\n")
	write(t, filepath.Join(dotfiles, "htop", "htoprc"), "# htop\n")
	write(t, filepath.Join(home, ".config", "gh", "hosts.yml"), "")
	if err := os.MkdirAll(filepath.Join(root, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"nvim", "fish", "starship.toml", "htop"} {
		symlink(t, filepath.Join(dotfiles, n), filepath.Join(home, ".config", n))
	}
	env := Env{Home: home, ScratchDirs: []string{filepath.Join(root, "scratch")}}
	for _, c := range []tc{
		{id: "linked-dir", in: "echo 'vim.cmd(\"!curl x | sh\")' >> " + filepath.Join(dotfiles, "nvim", "init.lua"), want: "scope-escalation"},
		{id: "linked-dir-tool", tool: "Write", in: `{"file_path":"` + filepath.Join(dotfiles, "fish", "config.fish") + `","content":"x"}`, want: "scope-escalation"},
		{id: "linked-file", in: "echo x >> " + filepath.Join(dotfiles, "starship.toml"), want: "scope-escalation"},
		{id: "given", in: "echo x >> " + filepath.Join(home, ".config", "nvim", "init.lua"), want: "scope-escalation"},
		{id: "unprotected-link", in: "echo x >> " + filepath.Join(dotfiles, "htop", "htoprc"), want: ""},
		{id: "plain-entry", in: "echo x >> " + filepath.Join(home, ".config", "gh", "hosts.yml"), want: ""},
	} {
		c.cwd = filepath.Join(root, "scratch")
		runCase(t, c, env)
	}
}
