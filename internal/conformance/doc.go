// Package conformance owns the workflow lint behind fixrail lint: it
// checks a GitHub Actions workflow that runs an agent on untrusted input
// against the rails fixrail's own pipeline keeps (fenced untrusted text
// with a random nonce, gates named in the prompt, a fail-closed budget
// precheck, no merge, default-deny tool sets, mode parity, no template
// injection), and writes the findings as text, JSON, GitHub annotations or
// SARIF. It also holds the reference workflow fixrail init writes, which
// passes every rule.
//
// # How a workflow is read
//
// actionlint's parser (used as a library, none of its rules) turns the
// YAML into an AST. Every ${{ }} is split with actionlint's expression
// lexer (so '}}' inside a string literal does not end it), parsed, and
// re-located in the raw source, because actionlint's positions inside
// multi-line scalars are those of the scalar; when the decoded value holds
// more expressions than the source text shows (a \u0024 escape), the file
// is unparseable. run: scripts are parsed as bash with mvdan.cc/sh after
// each ${{ }} is replaced by a same-length ${____}, which keeps offsets
// and makes the shell see a run-time value. The no-merge rule hands each
// script to internal/policy's Analyze, the hook's own shell analysis, so
// there is one matcher for pushes and merges.
//
// Attacker-controllable data is followed from the event contexts (and
// whole objects containing them) through expression operators, env:
// blocks, $GITHUB_ENV and $GITHUB_OUTPUT writes, job outputs, shell
// assignments and run-time fetches (gh issue view and friends); the
// outputs of agent and model steps count as attacker-controllable.
//
// # Rules
//
// A rule is a small value (Rule: id, doc, run) in the manner of
// go/analysis's Analyzer, with positive and negative example workflows
// that run as tests. What cannot be analysed is reported as unparseable
// and never passes. Rules read a Workflow; they never change it.
package conformance
