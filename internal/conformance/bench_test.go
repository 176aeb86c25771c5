package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLintCorpus lints every corpus workflow once per iteration, with
// one ShellCache per iteration as one fixrail lint run has.
// scripts/bench-lint compares the whole command with actionlint.
func BenchmarkLintCorpus(b *testing.B) {
	dir := "testdata/corpus"
	if d := os.Getenv("FIXRAIL_BENCH_LINT_DIR"); d != "" {
		dir = d // e.g. the generated corpus of scripts/bench-lint
	}
	benchLint(b, readWorkflows(b, filepath.Join(dir, "*.yml"), filepath.Join(dir, "*.yaml")))
}

// readWorkflows reads every file the glob patterns match.
func readWorkflows(tb testing.TB, patterns ...string) [][]byte {
	var srcs [][]byte
	for _, pat := range patterns {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			srcs = append(srcs, data)
		}
	}
	return srcs
}

// BenchmarkLintGenerated lints a generated set shaped like real agent
// workflows (see genWorkflows), so the figure does not depend on files
// outside the repository.
func BenchmarkLintGenerated(b *testing.B) {
	benchLint(b, genWorkflows(40))
}

func benchLint(b *testing.B, srcs [][]byte) {
	var size int
	for _, s := range srcs {
		size += len(s)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		opt := Options{Shell: NewShellCache()}
		for _, s := range srcs {
			Lint("w.yml", s, opt)
		}
	}
}

// genWorkflows builds n workflows with the shape of the shared corpus of
// public agent workflows: a trigger on issues and comments, env blocks
// holding event text, several jobs with multi-line bash (continuations,
// gh and git calls, $GITHUB_OUTPUT writes), an agent action with a prompt
// interpolating the issue, github-script steps, and every fourth one a
// long lock-file-like workflow (a top-level description, concurrency
// queue, the same setup scripts repeated in several jobs, a large inline
// github-script). Deterministic: the same n gives the same bytes.
func genWorkflows(n int) [][]byte {
	setup := `          set -euo pipefail
          mkdir -p /tmp/gh-aw/agent /tmp/gh-aw/safe-outputs
          echo "GH_AW_SAFE_OUTPUTS=/tmp/gh-aw/safe-outputs/outputs.jsonl" >> "$GITHUB_ENV"
          curl -fsSL https://example.invalid/install.sh \
            -o /tmp/install.sh
          bash /tmp/install.sh --version "v0.%d.0" \
            --prefix /usr/local
          for f in /tmp/gh-aw/agent/*.md; do
            if [ -f "$f" ]; then cat "$f" | head -n 20; fi
          done
`
	script := `            const fs = require("fs");
            const body = context.payload.issue ? context.payload.issue.body : "";
            const lines = body.split("\n").filter(l => l.trim() !== "");
            for (const l of lines) { core.info(l.slice(0, 80)); }
            await github.rest.issues.addLabels({ owner: context.repo.owner, repo: context.repo.repo, issue_number: %d, labels: ["triage"] });
`
	var out [][]byte
	for i := range n {
		var b strings.Builder
		lock := i%4 == 3
		if lock {
			fmt.Fprintf(&b, "name: Agentic workflow %d\ndescription: generated lock file %d\n", i, i)
			b.WriteString("concurrency:\n  group: gh-aw-${{ github.workflow }}\n  queue: single\n")
		} else {
			fmt.Fprintf(&b, "name: Agent on issues %d\n", i)
		}
		b.WriteString("on:\n  issues:\n    types: [opened, labeled]\n  issue_comment:\n    types: [created]\n")
		b.WriteString("permissions:\n  contents: read\n  issues: write\n")
		b.WriteString("env:\n  ISSUE_TITLE: ${{ github.event.issue.title }}\n  ISSUE_NUMBER: ${{ github.event.issue.number }}\njobs:\n")
		jobs, reps := 2, 1
		if lock {
			jobs, reps = 6, 25
		}
		for j := range jobs {
			fmt.Fprintf(&b, "  job%d:\n    runs-on: ubuntu-latest\n", j)
			if j > 0 {
				fmt.Fprintf(&b, "    needs: job%d\n", j-1)
			}
			b.WriteString("    outputs:\n      verdict: ${{ steps.decide.outputs.verdict }}\n    steps:\n")
			b.WriteString("      - uses: actions/checkout@v4\n        with:\n          persist-credentials: false\n")
			b.WriteString("      - name: Setup\n        run: |\n")
			fmt.Fprintf(&b, setup, i%3)
			b.WriteString("      - name: Decide\n        id: decide\n        env:\n          BODY: ${{ github.event.issue.body }}\n        run: |\n")
			fmt.Fprintf(&b, "          if echo \"$BODY\" | grep -qi 'bug %d'; then\n            echo \"verdict=bug\" >> \"$GITHUB_OUTPUT\"\n          else\n            echo \"verdict=other\" >> \"$GITHUB_OUTPUT\"\n          fi\n", i)
			b.WriteString("          gh issue view \"$ISSUE_NUMBER\" --json title,body > /tmp/issue.json\n")
			if j == jobs-1 {
				b.WriteString("      - name: Agent\n        uses: anthropics/claude-code-action@v1\n        with:\n          prompt: |\n")
				fmt.Fprintf(&b, "            Fix issue #${{ github.event.issue.number }} (variant %d).\n            Title: ${{ github.event.issue.title }}\n            Reproduce with a failing test first and open a draft pull request. Never merge.\n", i)
				b.WriteString("          claude_args: --allowedTools \"Read,Grep,Bash(git diff:*)\" --max-turns 20\n")
				b.WriteString("      - name: Push\n        run: |\n          git config user.name bot\n          git checkout -b \"fix/${{ github.event.issue.number }}\"\n          git commit -am \"fix\" || true\n          git push origin HEAD\n          gh pr merge --squash --auto\n")
			}
			b.WriteString("      - name: Label\n        uses: actions/github-script@v7\n        with:\n          script: |\n")
			for k := range reps {
				fmt.Fprintf(&b, script, i*100+k)
			}
		}
		out = append(out, []byte(b.String()))
	}
	return out
}

// TestGenWorkflowsLint keeps the benchmark's input real: every generated
// workflow parses and is linted, none is refused as unparseable, and the
// set exercises no-merge and title-in-fence.
func TestGenWorkflowsLint(t *testing.T) {
	seen := map[string]bool{}
	for i, src := range genWorkflows(8) {
		for _, f := range Lint(fmt.Sprintf("g%d.yml", i), src, Options{Shell: NewShellCache()}) {
			if f.Rule == Unparseable {
				t.Fatalf("generated workflow %d: %s:%d: %s\n%s", i, f.Rule, f.Line, f.Message, src)
			}
			seen[f.Rule] = true
		}
	}
	for _, r := range []string{"no-merge", "title-in-fence"} {
		if !seen[r] {
			t.Errorf("generated workflows raise no %s finding: the benchmark no longer exercises it (seen %v)", r, seen)
		}
	}
}
