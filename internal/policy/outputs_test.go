package policy

import "testing"

// TestOutputsJudged: files written through an option or a later operand,
// and trees landed where protected names sit, are judged as writes.
func TestOutputsJudged(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "sort-o", in: "sort -o .claude/settings.json x", want: "self-mod"},
		{id: "sort-compress", in: "sort --compress-program='rm -rf /srv/data' x", want: "destructive"},
		{id: "uniq", in: "uniq x .mcp.json", want: "self-mod"},
		{id: "xxd", in: "xxd -r -cols 16 x .mcp.json", want: "self-mod"},
		{id: "openssl", in: "openssl enc -d -aes256 -in x -out .mcp.json", want: "self-mod"},
		{id: "openssl-keyout", in: "openssl req -x509 -newkey rsa:2048 -keyout .claude/settings.json -out c.pem", want: "self-mod"},
		{id: "ssh-keygen", in: "ssh-keygen -t ed25519 -N '' -f .mcp.json", want: "self-mod"},
		{id: "ed", in: "ed -s .mcp.json", want: "self-mod"},
		{id: "cp-parents", in: "cp --parents a/.claude/settings.json build", want: "self-mod"},
		{id: "git-diff-output", in: "git diff --output=.mcp.json", want: "self-mod"},
		{id: "git-bundle", in: "git bundle create .mcp.json HEAD", want: "self-mod"},
		{id: "git-clone-into", in: "git clone https://example.com/cfg.git .claude", want: "self-mod?"},
		{id: "git-clone-named", in: "git clone https://example.com/x/.claude.git", want: "self-mod?"},
		{id: "git-worktree", in: "git worktree add .claude", want: "self-mod?"},
		{id: "git-submodule", in: "git submodule add https://example.com/hooks.git .git/hooks", want: "scope-escalation"},
		{id: "git-checkout-index", in: "git checkout-index -a --prefix=.claude/", want: "self-mod?"},

		{id: "sort-plain", in: "sort -u -o out.txt x", want: ""},
		{id: "uniq-plain", in: "uniq -c x", want: ""},
		{id: "xxd-plain", in: "xxd -l 64 x", want: ""},
		{id: "openssl-plain", in: "openssl x509 -in c.pem -noout -text", want: ""},
		{id: "ssh-keygen-fingerprint", in: "ssh-keygen -l -f .mcp.json", want: ""},
		{id: "vim-s", in: "vim -s script.vim x.go", want: ""},
		{id: "git-clone", in: "git clone https://github.com/org/repo", want: ""},
		{id: "git-clone-dir", in: "git clone https://github.com/org/repo.git vendor/repo", want: ""},
		{id: "git-log", in: "git log --oneline -5", want: ""},
		{id: "git-worktree-plain", in: "git worktree add ../wt-feature -b feature", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestSplitOutputs: split and csplit write PREFIX plus a generated suffix;
// a prefix that a suffix completes into a protected name (.claude/settings.js
// and "on", a csplit -b format) may write it.
func TestSplitOutputs(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "split-suffix", in: "split -l 1 -a 2 payload .claude/settings.js", want: "self-mod?"},
		{id: "split-additional", in: "split -b 1k --additional-suffix=.json payload .claude/setting", want: "self-mod?"},
		{id: "split-mcp", in: "split -n 400 payload .mcp.js", want: "self-mod?"},
		{id: "csplit-format", in: "csplit -f .claude/settings.js -b '%.0don' payload 1", want: "self-mod?"},
		{id: "csplit-format-dynamic", in: "csplit -f .claude/settings.js -b \"$FMT\" payload 1", want: "self-mod? scope-escalation?"},
		{id: "csplit-format-two", in: "csplit -f .claude/settings.js -b '%d%s' payload 1", want: "self-mod? scope-escalation?"},
		{id: "csplit-format-hex", in: "csplit -f .claude/settings.js -b '%x' payload 1", want: ""}, // hex digits never spell "on"
		// A format whose text cannot end a protected name: digits then .txt.
		{id: "csplit-format-plain", in: "csplit -f part -b '%02d.txt' payload 1", want: ""},
		{id: "csplit-format-plain", in: "csplit -f part -b 'piece-%03d.log' payload 1", want: ""},
		{id: "split-gnu-name", in: "gsplit -l 1 payload .claude/settings.js", want: "self-mod?"},
		{id: "split-filter", in: "split -l 1 --filter='rm -rf /srv/data' payload", want: "destructive"},
		// A protected directory receives every piece, whatever its name.
		{id: "split-into-dir", in: "split -b 1 payload ~/.bashrc.d/part", want: "scope-escalation?"},
		{id: "csplit-into-dir", in: "csplit -f ~/.bashrc.d/part payload 1", want: "scope-escalation?"},
		// A pattern's literal tail: evil.p and "th" make evil.pth.
		{id: "split-pth", in: "split -l 1 payload .venv/lib/python3.12/site-packages/evil.p", want: "scope-escalation?"},
		{id: "split-pth-additional", in: "split -l 1 --additional-suffix=.pth payload .venv/lib/python3.12/site-packages/evil", want: "scope-escalation?"},
		{id: "split-site-module", in: "split -l 1 payload .venv/lib/python3.12/site-packages/evil", want: ""},
		{id: "split-default", in: "split -l 100 big.txt", want: ""},
		{id: "split-numeric", in: "split -d -l 100 big.txt .claude/settings.js", want: ""}, // digits never make "on"
		{id: "split-elsewhere", in: "split -l 100 big.txt parts/chunk-", want: ""},
		{id: "csplit-default", in: "csplit big.txt '/^--$/' '{*}'", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestAwkInPlace: gawk's inplace extension rewrites its file operands; an
// awk program file this command writes first is as unknown as a script.
func TestAwkInPlace(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "include", in: "gawk -i inplace '{print}' .claude/settings.json", want: "self-mod"},
		{id: "include-long", in: "awk --include=inplace.awk '{gsub(/a/,\"b\")}1' ~/.bashrc", want: "scope-escalation"},
		{id: "include-attached", in: "gawk -iinplace -v INPLACE_SUFFIX=.bak 1 .mcp.json", want: "self-mod"},
		{id: "at-include", in: "gawk '@include \"inplace\"; {print}' .claude/settings.json", want: "self-mod"},
		{id: "include-dyn", in: "gawk -i \"$LIB\" 1 .mcp.json", want: "self-mod push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"},
		{id: "written-program", in: "echo 'BEGIN{}' > p.awk && awk -f p.awk", want: allQ},
		{id: "inplace-source", in: "gawk -i inplace '{print}' src/x.go", want: ""},
		{id: "read", in: "awk '{print}' .claude/settings.json", want: ""},
		{id: "program-file", in: "awk -f report.awk data.csv", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestUnknownProgram: a program the hook has no analysis of, given a path
// self-mod protects, may write it (sd, dasel, gpg -o rewrite in place or
// by option); a known reader, a known program's read, or an unprotected
// path passes.
func TestUnknownProgram(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "sd", in: "sd hooks x ~/.claude/settings.json", want: "self-mod?"},
		{id: "dasel", in: "dasel put -f .claude/settings.json -t json -v '{}' '.hooks'", want: "self-mod?"},
		{id: "option-value", in: "gpg --output=.mcp.json -d x.gpg", want: "self-mod?"},
		{id: "npx", in: "npx json -I -f .claude/settings.json -e 'this.hooks={}'", want: "self-mod?"},
		{id: "sqlite", in: "sqlite3 ~/.claude/history.db 'create table t(x)'", want: "self-mod?"},
		{id: "prettier-write", in: "npx prettier --write .claude/settings.json", want: "self-mod"},

		{id: "reader", in: "cat ~/.claude/settings.json", want: ""},
		{id: "jq", in: "jq '.hooks' .claude/settings.json", want: ""},
		{id: "unprotected", in: "sd foo bar src/main.go", want: ""},
		{id: "sqlite-readonly", in: "sqlite3 -readonly ~/.claude/history.db .tables", want: ""},
		{id: "sqlite-plain", in: "sqlite3 app.db 'select 1'", want: ""},
		{id: "prettier-check", in: "npx prettier --check .claude/settings.json", want: ""},
		{id: "other-zone", in: "helm --kubeconfig ~/.kube/config list", want: ""}, // self-mod only
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
