package policy

import (
	"path/filepath"
	"testing"
)

// TestStartupCode: files whose contents run later, outside the call — a
// shell's sourced files, an editor's or a multiplexer's start-up, tool
// configuration that names a command run on every use, Python's start-up
// hooks — are scope-escalation to write.
func TestStartupCode(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	site := filepath.Join(home, ".local", "lib", "python3.12", "site-packages")
	for _, c := range []tc{
		{id: "bash-aliases", in: `echo 'alias ls="rm -rf ~"' >> ~/.bash_aliases`, want: "scope-escalation"},
		{id: "bashrc-d", in: "cp x.sh ~/.bashrc.d/", want: "scope-escalation"},
		{id: "vimrc", in: "echo ':!rm -rf ~' >> ~/.vimrc", want: "scope-escalation"},
		{id: "nvim", in: "echo x > ~/.config/nvim/init.lua", want: "scope-escalation"},
		{id: "vim-plugin", in: "cp evil.vim ~/.vim/plugin/", want: "scope-escalation"},
		{id: "tmux", in: "echo 'run-shell x' >> ~/.tmux.conf", want: "scope-escalation"},
		{id: "screen", in: "echo 'screen -t x sh -c y' >> ~/.screenrc", want: "scope-escalation"},
		{id: "xinitrc", in: "echo 'x &' >> ~/.xinitrc", want: "scope-escalation"},
		{id: "emacs", in: "echo x > ~/.emacs.d/init.el", want: "scope-escalation"},
		{id: "aws", in: "printf '[default]\\ncredential_process = x\\n' > ~/.aws/config", want: "scope-escalation"},
		{id: "kube", in: "cp kubeconfig ~/.kube/config", want: "scope-escalation"},
		{id: "docker", in: "echo '{\"credsStore\":\"x\"}' > ~/.docker/config.json", want: "scope-escalation"},
		{id: "gpg-agent", in: "echo 'pinentry-program /tmp/x' >> ~/.gnupg/gpg-agent.conf", want: "scope-escalation"},
		{id: "pypirc", in: "cp pypirc ~/.pypirc", want: "scope-escalation"},
		{id: "gdbinit", in: "echo 'shell rm -rf ~' >> ~/.gdbinit", want: "scope-escalation"},
		{id: "gdb-config", in: "echo x > ~/.config/gdb/gdbinit", want: "scope-escalation"},
		{id: "lldbinit", in: "echo 'platform shell x' > ~/.lldbinit", want: "scope-escalation"},
		{id: "psqlrc", in: "echo '\\! x' >> ~/.psqlrc", want: "scope-escalation"},
		{id: "sqliterc", in: "echo '.shell x' > ~/.sqliterc", want: "scope-escalation"},
		{id: "my-cnf", in: "printf '[mysql]\\npager=x\\n' > ~/.my.cnf", want: "scope-escalation"},
		{id: "irbrc", in: "echo 'system(\"x\")' > ~/.irbrc", want: "scope-escalation"},
		{id: "rprofile", in: "echo 'system(\"x\")' > ~/.Rprofile", want: "scope-escalation"},
		{id: "julia", in: "echo 'run(`x`)' > ~/.julia/config/startup.jl", want: "scope-escalation"},
		{id: "ipython", in: "cp x.py ~/.ipython/profile_default/startup/00.py", want: "scope-escalation"},
		{id: "direnvrc", in: "echo x > ~/.config/direnv/direnvrc", want: "scope-escalation"},
		{id: "pwsh", in: "echo x > ~/.config/powershell/Microsoft.PowerShell_profile.ps1", want: "scope-escalation"},
		{id: "lesskey", in: "printf '#env\\nLESSOPEN=|x %s\\n' > ~/.config/lesskey", want: "scope-escalation"},
		{id: "pth", in: "echo 'import os; os.system(\"x\")' > " + site + "/zz.pth", want: "scope-escalation"},
		{id: "usercustomize", in: "cp x.py " + site + "/usercustomize.py", want: "scope-escalation"},
		{id: "venv-pth", in: "echo 'import x' > .venv/lib/python3.12/site-packages/x.pth", want: "scope-escalation"},
		{id: "site-module", in: "echo x > .venv/lib/python3.12/site-packages/mypkg/__init__.py", want: ""},
		{id: "aws-credentials-read", in: "cat ~/.aws/config", want: ""},
		{id: "kube-other", in: "echo x > ~/.kube/cache/x", want: ""},
		{id: "vim-swap-elsewhere", in: "echo x > notes.vim", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
