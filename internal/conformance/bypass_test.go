package conformance

import (
	"strings"
	"testing"
)

// TestAgentBypassFlags: every switch that turns an agent CLI's permission
// checks or sandbox off is named in a finding of its own, in a workflow that
// is otherwise conforming (an explicit, read-only tool set). The rule's
// positive example with --dangerously-skip-permissions also lacks an
// allowlist, so it stays positive when the flag check is removed; here the
// flag is the only thing wrong, and the message must say so.
func TestAgentBypassFlags(t *testing.T) {
	const cli = `claude -p --allowedTools "Read,Grep"`
	for _, tc := range []struct{ name, src, want string }{
		{"claude --dangerously-skip-permissions", edit(goodCLI, cli, cli+` --dangerously-skip-permissions`),
			"--dangerously-skip-permissions turns every permission check off"},
		{"claude --permission-mode bypassPermissions", edit(goodCLI, cli, cli+` --permission-mode bypassPermissions`),
			"--permission-mode bypassPermissions turns every permission check off"},
		{"claude --permission-mode=bypassPermissions", edit(goodCLI, cli, cli+` --permission-mode=bypassPermissions`),
			"--permission-mode bypassPermissions turns every permission check off"},
		{"claude action claude_args", edit(goodAgent, "claude_args: --allowedTools Read,Grep,Glob,Write(tests/**)",
			"claude_args: --allowedTools Read,Grep,Glob,Write(tests/**) --dangerously-skip-permissions"),
			"--dangerously-skip-permissions turns every permission check off"},
		{"codex danger-full-access", edit(goodCLI, cli, `codex exec --sandbox danger-full-access`),
			"danger-full-access removes the sandbox or the approval step"},
		{"codex --dangerously-bypass-approvals-and-sandbox", edit(goodCLI, cli, `codex exec --dangerously-bypass-approvals-and-sandbox`),
			"--dangerously-bypass-approvals-and-sandbox removes the sandbox or the approval step"},
		{"codex --yolo", edit(goodCLI, cli, `codex exec --yolo`), "--yolo removes the sandbox or the approval step"},
		{"codex --full-auto", edit(goodCLI, cli, `codex exec --full-auto`), "--full-auto removes the sandbox or the approval step"},
		{"codex action safety-strategy unsafe", codexAction("safety-strategy: unsafe"), "safety-strategy=unsafe removes the sandbox or the approval step"},
		{"gemini --yolo", edit(goodCLI, cli, `gemini --allowed-tools read_file --yolo -p`), "--yolo approves every tool call"},
		{"gemini -y", edit(goodCLI, cli, `gemini --allowed-tools read_file -y -p`), "--yolo approves every tool call"},
		{"gemini --approval-mode=yolo", edit(goodCLI, cli, `gemini --allowed-tools read_file --approval-mode=yolo -p`), "--yolo approves every tool call"},
		{"copilot --allow-all-tools", edit(goodCLI, cli, `copilot --allow-tool read --allow-all-tools -p`), "--allow-all-tools/--allow-all-paths allows every tool"},
		{"copilot --allow-all-paths", edit(goodCLI, cli, `copilot --allow-tool read --allow-all-paths -p`), "--allow-all-tools/--allow-all-paths allows every tool"},
		{"aider --yes-always", edit(goodCLI, cli, `aider --yes-always --message`), "auto-approve flag approves every action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := findingsOf(Lint("w.yml", []byte(tc.src), Options{}), "default-deny-allowlist")
			for _, f := range fs {
				if strings.Contains(f.Message, tc.want) {
					return
				}
			}
			t.Errorf("no default-deny-allowlist finding saying %q; got:\n%s", tc.want, dump(fs))
		})
	}
}

func codexAction(with string) string {
	return `on:
  issues:
    types: [labeled]
permissions:
  contents: read
jobs:
  triage:
    runs-on: ubuntu-latest
    steps:
      - run: fixrail budget check
      - uses: openai/codex-action@v1
        with:
          prompt: Label this issue.
          ` + with + `
`
}
