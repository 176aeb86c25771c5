package policy

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestShellEscapes: a command a program runs from its own command line or
// input (a pager's !, a database client's shell command, a debugger's
// shell and debuggee, a makefile given as text, a script shell) is judged
// as if typed.
func TestShellEscapes(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "conn.sh"), "#!/bin/sh\nrm -rf /srv/data\n")
	const rm = "rm -rf /srv/data"
	all := "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"
	for _, c := range []tc{
		{id: "less", in: "less +'!" + rm + "' x", want: "destructive"},
		{id: "lessopen", in: "LESSOPEN='|" + rm + "; cat %s' less x", want: "destructive"},
		{id: "go-toolexec", in: "go build -toolexec '" + rm + "' ./...", want: "destructive"},
		{id: "go-test-exec", in: "go test -exec='" + rm + "' ./...", want: "destructive"},
		{id: "goflags-exec", in: "GOFLAGS=-exec=./conn.sh go test ./...", want: "destructive"},
		{id: "kube-editor", in: "KUBE_EDITOR='" + rm + "' kubectl edit deploy/web", want: "destructive"},
		{id: "gh-browser", in: "export BROWSER='" + rm + "'; gh pr view 1 --web", want: "destructive"},
		{id: "lessopen-export", in: "export LESSOPEN='||" + rm + " %s'; less x", want: "destructive"},
		{id: "sqlite-shell", in: "sqlite3 db '.shell " + rm + "'", want: "destructive"},
		{id: "sqlite-system", in: "sqlite3 -cmd '.system " + rm + "' db 'select 1'", want: "destructive"},
		{id: "sqlite-output-pipe", in: "sqlite3 db <<'EOF'\n.output |" + rm + "\nselect 1;\nEOF", want: "destructive"},
		{id: "sqlite-output-file", in: "sqlite3 db '.output .mcp.json' 'select 1'", want: "self-mod"},
		{id: "psql", in: `psql -c '\! ` + rm + `'`, want: "destructive"},
		{id: "psql-o", in: "psql -o .mcp.json -c 'select 1'", want: "self-mod"},
		{id: "psql-stdin", in: "psql <<'EOF'\nselect 1 \\g |" + rm + "\nEOF", want: "destructive"},
		{id: "mysql", in: "mysql -e 'system " + rm + "'", want: "destructive"},
		{id: "mysql-tee", in: "mysql --tee=.mcp.json -e 'select 1'", want: "self-mod"},
		{id: "gdb-shell", in: "gdb -batch -ex 'shell " + rm + "'", want: "destructive"},
		{id: "gdb-bang", in: "gdb -batch -ex '!" + rm + "'", want: "destructive"},
		{id: "gdb-args", in: "gdb -batch -ex run --args " + rm, want: "destructive"},
		{id: "gdb-python", in: "gdb -batch -ex 'python import os; os.system(\"x\")'", want: all},
		{id: "lldb", in: "lldb -o 'platform shell " + rm + "'", want: "destructive"},
		{id: "lldb-debuggee", in: "lldb -o run -- " + rm, want: "destructive"},
		{id: "man-P", in: "man -P '" + rm + "' ls", want: "destructive"},
		{id: "man-PAGER", in: "PAGER='" + rm + "' man ls", want: "destructive"},
		// env's NAME=value operands are the program's environment, as
		// prefixes are.
		{id: "env-PAGER", in: "env PAGER='" + rm + "' man ls", want: "destructive"},
		{id: "env-GIT_SSH_COMMAND", in: "env GIT_SSH_COMMAND='" + rm + "' git fetch", want: "destructive"},
		{id: "env-unset", in: "env -u PAGER man ls", want: ""},
		{id: "env-plain", in: "env LANG=C man ls", want: ""},
		// Commands other tools run: git difftool's --extcmd, scp's and
		// sftp's connection program, fd's -x/-X per match.
		{id: "difftool-x", in: "git difftool -y -x '" + rm + "'", want: "destructive"},
		{id: "difftool-extcmd", in: "git difftool --extcmd='" + rm + "' HEAD~", want: "destructive"},
		{id: "scp-S", in: "scp -S ./conn.sh a host:b", want: "egress-other destructive"},
		{id: "sftp-S", in: "sftp -S ./conn.sh host", want: "egress-other destructive"},
		{id: "fd-x", in: "fd -x sh -c '" + rm + "'", want: "destructive"},
		{id: "fd-X", in: "fd -e json . -X sh -c '" + rm + "'", want: "destructive"},
		{id: "fd-exec-placeholder", in: "fdfind settings --exec cp x {}", want: ""},
		// ssh's -o commands, in an ssh command line another program
		// completes with the host, or passed by scp and sftp.
		{id: "ssh-o-rsync-e", in: "rsync -e 'ssh -o ProxyCommand=\"" + rm + "\"' a host:b", want: "egress-other destructive"},
		{id: "ssh-o-git-sshcommand", in: "git -c core.sshCommand='ssh -o ProxyCommand=\"" + rm + "\"' fetch", want: "destructive"},
		{id: "scp-o", in: "scp -o ProxyCommand='" + rm + "' a host:b", want: "egress-other destructive"},
		{id: "sftp-o", in: "sftp -o 'LocalCommand " + rm + "' host", want: "egress-other destructive"},
		// A shell runs code from its environment: bash's PROMPT_COMMAND and
		// prompts when interactive, PS4 when tracing (-x, -o xtrace,
		// SHELLOPTS), functions imported from BASH_FUNC_name%%.
		{id: "prompt-command", in: "PROMPT_COMMAND='" + rm + "' bash -i", want: "destructive"},
		{id: "ps1", in: "PS1='$(" + rm + ")> ' bash -i", want: "destructive"},
		{id: "ps4-x", in: "PS4='$(" + rm + ")' bash -xc true", want: "destructive"},
		{id: "ps4-o-xtrace", in: "PS4='`" + rm + "`' bash -o xtrace -c true", want: "destructive"},
		{id: "ps4-shellopts", in: "SHELLOPTS=xtrace PS4='$(" + rm + ")' bash -c true", want: "destructive"},
		{id: "ps4-exported", in: "export PS4='$(" + rm + ")'; bash -x script.sh", want: "destructive"},
		{id: "bash-func", in: "env 'BASH_FUNC_ls%%=() { " + rm + "; }' bash -c ls", want: "destructive"},
		{id: "ps4-untraced", in: "PS4='$(" + rm + ")' bash -c true", want: ""},
		{id: "ps1-plain", in: `PS1='\u@\h:\w\$ ' bash -i`, want: ""},
		{id: "prompt-command-plain", in: "PROMPT_COMMAND='history -a' bash -i", want: ""},
		// env and sudo take any operand holding "=" as an assignment, so
		// the command is what follows it.
		{id: "env-odd-name", in: "env 'A%=1' bash -c '" + rm + "'", want: "destructive"},
		{id: "sudo-odd-name", in: "sudo 'a b=c' " + rm, want: "destructive scope-escalation"},
		// flock runs -c's command after the lock file too; dtach and
		// abduco run theirs in a session that outlives the call.
		{id: "flock-c-after", in: "flock /tmp/l -c '" + rm + "'", want: "destructive"},
		{id: "dtach-n", in: "dtach -n /tmp/s " + rm, want: "destructive scope-escalation"},
		{id: "dtach-A", in: "dtach -A /tmp/s -z " + rm, want: "destructive"},
		{id: "abduco-n", in: "abduco -n sess " + rm, want: "destructive scope-escalation"},
		// git grep -O<pager> opens the matching files with a command.
		{id: "grep-O", in: "git grep -O'" + rm + "' foo", want: "destructive"},
		{id: "grep-O-clustered", in: "git grep -nO'" + rm + "' foo", want: "destructive"},
		{id: "grep-open-files", in: "git grep --open-files-in-pager='" + rm + "' foo", want: "destructive"},
		{id: "grep-A-then-O", in: "git grep -A 3 -O'" + rm + "' foo", want: "destructive"},
		{id: "grep-pattern", in: "git grep -e -O'" + rm + "' foo", want: ""}, // -e's pattern
		{id: "grep-O-default", in: "git grep -O foo", want: ""},
		{id: "difftool-plain", in: "git difftool -y --tool=vimdiff", want: ""},
		{id: "fd-plain", in: "fd -e go -x gofmt -l", want: ""},
		{id: "make-eval", in: "make --eval='x:; " + rm + "' x", want: "destructive"},
		{id: "make-stdin", in: "make -f - x <<'EOF'\nx:\n\t" + rm + "\nEOF", want: "destructive"},
		{id: "npm-script-shell", in: "npm run test --script-shell='" + rm + "'", want: "destructive"},
		{id: "npm-config-shell", in: "npm config set script-shell /tmp/evil.sh", want: "scope-escalation"},
		{id: "julia", in: "julia -e 'run(`" + rm + "`)'", want: all},
		{id: "tclsh", in: "tclsh <<< 'exec " + rm + "'", want: all},

		{id: "less-plain", in: "less +G x.log", want: ""},
		{id: "sqlite-plain", in: "sqlite3 db 'select count(*) from t' '.tables'", want: ""},
		{id: "psql-plain", in: "psql -c 'select 1' -d app", want: ""},
		{id: "mysql-plain", in: "mysql -e 'show tables' app", want: ""},
		{id: "gdb-bt", in: "gdb -batch -ex bt ./app core", want: ""},
		{id: "man-plain", in: "man -P cat ls", want: ""},
		{id: "make-eval-plain", in: "make --eval='x:; go test ./...' x", want: ""},
		{id: "go-plain", in: "GOFLAGS=-mod=mod go test -race ./...", want: ""},
		{id: "kubectl-edit-plain", in: "kubectl edit deploy/web", want: ""},
		{id: "gh-browse-plain", in: "gh browse", want: ""},
		{id: "make-vars", in: "make --eval='x:; go build -o $@ ./...' x", want: ""},
		// A command word that is a make variable is only known when make runs.
		{id: "make-var-command", in: "make --eval='x:; $(GO) build ./...' x", want: all},
		{id: "npm-config-registry", in: "npm config set registry https://registry.npmjs.org/", want: ""},
		{id: "julia-plain", in: "julia -e 'println(1+1)'", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

func TestMakefileRecipes(t *testing.T) {
	got := makefileRecipes("CC := gcc\n# c\nall: a b ; echo $$HOME $(CC)\n\tgo build -o $@ ./...\n\t@-rm -f x\nx = 1\ny: ;\n")
	want := []string{"echo $HOME ${__fixrail_make__}", "go build -o ${__fixrail_make__} ./...", "rm -f x", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("makefileRecipes = %q, want %q", got, want)
	}
}

// FuzzSQLClientEffects: any client text is read without panicking.
func FuzzSQLClientEffects(f *testing.F) {
	for _, s := range []string{`\! id`, ".shell id", ".output |x", "system id", `select 1 \g |x`, ".backup main f", "tee f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, cl := range []string{"psql", "mysql", "sqlite3"} {
			runs, writes := sqlClientEffects(cl, s)
			if len(runs)+len(writes) > 8*len(s)+8 {
				t.Fatalf("%s %q: more effects than the text can hold", cl, s)
			}
		}
		_ = makefileRecipes(s)
	})
}

// TestSQLFiles: a database client's statements read from a file (psql -f,
// sqlite3 .read and -init, mysql's source, a file on standard input) are
// judged as the same statements on its command line.
func TestSQLFiles(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, "drop.sql"), "BEGIN;\nDROP TABLE users;\nCOMMIT;\n")
	write(t, filepath.Join(repo, "escape.sql"), "select 1;\n\\! rm -rf /srv/data\n")
	write(t, filepath.Join(repo, "ok.sql"), "SELECT count(*) FROM users;\n")
	for _, c := range []tc{
		{id: "psql-f", in: "psql -d app -f drop.sql", want: "destructive"},
		{id: "psql-file", in: "psql --file=drop.sql", want: "destructive"},
		{id: "psql-escape", in: "psql -f escape.sql", want: "destructive"},
		{id: "mysql-stdin", in: "mysql app < drop.sql", want: "destructive"},
		{id: "mysql-source", in: "mysql app -e 'source drop.sql'", want: "destructive"},
		{id: "sqlite-stdin", in: "sqlite3 app.db < drop.sql", want: "destructive"},
		{id: "sqlite-read", in: "sqlite3 app.db '.read drop.sql'", want: "destructive"},
		{id: "sqlite-init", in: "sqlite3 -init drop.sql app.db .quit", want: "destructive"},
		{id: "written-first", in: "echo 'select 1' > q.sql && psql -f q.sql", want: "destructive?"},
		{id: "plain", in: "psql -f ok.sql", want: ""},
		{id: "plain-stdin", in: "mysql app < ok.sql", want: ""},
		{id: "missing", in: "psql -f missing.sql", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestSubscriptCode: bash runs the command substitutions in an array
// subscript of a string it takes as a variable's name or as arithmetic,
// though the string was quoted where it was written; and ${x@P} runs those
// in x's value. Checked against bash 5.2: each "push" case below runs its
// substitution there.
func TestSubscriptCode(t *testing.T) {
	const push = "push-force push-protected"
	for _, c := range []tc{
		{id: "arith-var", in: `x='a[$(git push -f origin main)]'; echo $((x))`, want: push},
		{id: "test-eq", in: `x='a[$(git push -f origin main)]'; [[ $x -eq 1 ]]`, want: push},
		{id: "declare-i", in: `declare -i n; n='a[$(git push -f origin main)]'`, want: push},
		{id: "printf-v", in: `printf -v 'a[$(git push -f origin main)]' x`, want: push},
		{id: "read", in: `read 'a[$(git push -f origin main)]' <<< x`, want: push},
		{id: "test-builtin", in: `[ 'a[$(git push -f origin main)]' -eq 1 ]`, want: push},
		{id: "let", in: `let 'a[$(git push -f origin main)]'`, want: push},
		{id: "declare", in: `declare 'a[$(git push -f origin main)]=1'`, want: push},
		{id: "test-clause", in: `[[ 'a[$(git push -f origin main)]' -eq 1 ]]`, want: push},
		{id: "herestring", in: `read x <<< 'a[$(git push -f origin main)]'; echo $((x))`, want: push},
		{id: "backquote", in: "x='a[`git push -f origin main`]'; echo $((x))", want: push},
		{id: "prompt", in: `x='$(git push -f origin main)'; echo "${x@P}"`, want: push},
		{id: "prompt-unknown", in: `read -r x; echo "${x@P}"`, want: allQ},
		{id: "prompt-self", in: `x='${x@P}'; echo "${x@P}"`, want: allQ},

		{id: "escaped", in: `x='a[\$(git push -f origin main)]'; echo $((x))`, want: push},
		{id: "escaped-paren", in: `x='a[$\(git push -f origin main)]'; echo $((x))`, want: push},
		{id: "escaped-printf", in: `printf -v 'a[\\$(git push -f origin main)]' x`, want: push},
		{id: "prompt-escaped", in: `x='\$(git push -f origin main)'; echo "${x@P}"`, want: ""},
		{id: "text", in: `echo 'arr[$(date)]'`, want: ""},
		{id: "regex", in: `grep -E '[$()]' x`, want: ""},
		{id: "sed-class", in: `sed 's/[$(){}]//g' f`, want: ""},
		{id: "awk-array", in: `awk '{ a[$1]++ } END { for (k in a) print k }' f`, want: ""},
		{id: "prompt-known", in: `x='$(date) \u@\h'; echo "${x@P}"`, want: ""},
	} {
		runCase(t, c, tenv)
	}
}

// TestExportedEnv: a variable the script exported before a command is in
// that command's environment, as a VAR=x prefix is: export, declare -x,
// typeset -x, a later export NAME, any assignment after set -a; exported
// in a branch that may not run, it is unknown after it.
func TestExportedEnv(t *testing.T) {
	const rm = "rm -rf /srv/data"
	for _, c := range []tc{
		{id: "export", in: "export GIT_SSH_COMMAND='" + rm + "'; git fetch", want: "destructive"},
		{id: "export-and", in: "export GIT_SSH_COMMAND='" + rm + "' && git fetch", want: "destructive"},
		{id: "export-later", in: "GIT_SSH_COMMAND='" + rm + "'; export GIT_SSH_COMMAND; git fetch", want: "destructive"},
		{id: "declare-x", in: "declare -x GIT_SSH_COMMAND='" + rm + "'; git fetch", want: "destructive"},
		{id: "typeset-x", in: "typeset -x GIT_PAGER='" + rm + "'; git -p log", want: "destructive"},
		{id: "set-a", in: "set -a; GIT_SSH_COMMAND='" + rm + "'; git fetch", want: "destructive"},
		{id: "set-o-allexport", in: "set -o allexport; GIT_SSH_COMMAND='" + rm + "'; git fetch", want: "destructive"},
		{id: "branch", in: "test -f x && export GIT_SSH_COMMAND=\"$(cat cmd)\"; git fetch", want: allQ},
		{id: "wrapped", in: "export GIT_SSH_COMMAND='" + rm + "'; timeout 60 git fetch", want: "destructive"},
		{id: "editor", in: "EDITOR='" + rm + "' git commit", want: "destructive"},
		{id: "visual", in: "export VISUAL='" + rm + "'; git rebase -i HEAD~2", want: "destructive"},
		{id: "npm-env", in: "npm_config_script_shell='" + rm + "' npm run build", want: "destructive"},
		{id: "npm-env-upper", in: "export NPM_CONFIG_SCRIPT_SHELL='" + rm + "'; npm test", want: "destructive"},
		// A program's environment reaches what it runs: a shell, a
		// runner, find -exec.
		{id: "prefix-bash-c", in: "GIT_SSH_COMMAND='" + rm + "' bash -c 'git fetch'", want: "destructive"},
		{id: "export-sh-c", in: "export GIT_SSH_COMMAND='" + rm + "'; sh -c 'cd sub && git fetch'", want: "destructive"},
		{id: "prefix-find-exec", in: "GIT_SSH_COMMAND='" + rm + "' find . -maxdepth 0 -exec git fetch \\;", want: "destructive"},
		{id: "prefix-uv-run", in: "GIT_SSH_COMMAND='" + rm + "' uv run git fetch", want: "destructive"},
		{id: "prefix-watch", in: "GIT_SSH_COMMAND='" + rm + "' watch git fetch", want: "destructive"},
		{id: "prefix-nix-shell", in: "GIT_SSH_COMMAND='" + rm + "' nix-shell --run 'git fetch'", want: "destructive"},
		{id: "prefix-script", in: "GIT_SSH_COMMAND='" + rm + "' script -qc 'git fetch' /dev/null", want: "destructive"},
		{id: "nested-export", in: "bash -c 'export GIT_SSH_COMMAND=\"" + rm + "\"; bash -c \"git fetch\"'", want: "destructive"},
		{id: "prefix-output", in: "GIT_SSH_COMMAND=\"$(cat cmd)\" bash -c 'git fetch'", want: allQ},

		{id: "export-plain", in: "export GOFLAGS=-mod=mod; go test ./...", want: ""},
		{id: "editor-plain", in: "export EDITOR=vim; git commit -m x", want: ""},
		{id: "unexported-other", in: "export X=1; git status", want: ""},
		{id: "prefix-bash-plain", in: "GOFLAGS=-mod=mod bash -c 'go test ./...'", want: ""},
	} {
		runCase(t, c, tenv)
	}
}

// TestDirectoryStack: cd - returns to $OLDPWD, which cd sets; popd to the
// directory pushd left; either unknown makes the working directory unknown.
func TestDirectoryStack(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	claude := filepath.Join(home, ".claude")
	for _, c := range []tc{
		{id: "cd-dash", in: "cd " + claude + " && cd /tmp && cd - && echo '{}' > settings.json", want: "self-mod"},
		{id: "cd-tilde-minus", in: "cd " + claude + "; cd /tmp; cd ~- && echo '{}' > settings.json", want: "self-mod"},
		{id: "oldpwd", in: "OLDPWD=" + claude + "; cd - && echo '{}' > settings.json", want: "self-mod"},
		{id: "popd", in: "pushd " + claude + "; pushd /tmp; popd; echo '{}' > settings.json", want: "self-mod"},
		{id: "pushd-swap", in: "pushd " + claude + "; pushd /tmp; pushd; echo '{}' > settings.json", want: "self-mod"},
		{id: "popd-twice", in: "cd " + claude + "; pushd /tmp; pushd /var; popd; popd; echo '{}' > settings.json", want: "self-mod"},

		{id: "cd-dash-back", in: "cd /tmp && cd - && echo '{}' > settings.json", want: ""}, // back in the repository
		{id: "popd-back", in: "pushd /tmp; popd; echo '{}' > settings.json", want: ""},
		{id: "popd-empty", in: "popd; echo '{}' > settings.json", want: ""}, // bash refuses; still in the repository
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
