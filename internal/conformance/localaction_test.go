package conformance

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// TestLocalActionInjection: attacker text a workflow passes to a local
// composite action is followed into the action's steps.
func TestLocalActionInjection(t *testing.T) {
	const composite = "runs:\n  using: composite\n  steps:\n"
	for _, tc := range []struct {
		name    string
		with    string            // the calling step's with: values, one line each
		actions map[string]string // ref -> action.yml
		want    []string          // substrings of the findings, in order; none: clean
	}{
		{
			name:    "tainted input expanded in run",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: echo \"${{ inputs.v }}\"\n"},
			want:    []string{"11:14: github.event.issue.title (attacker-controlled) is passed to the local action ./act, whose run: script (act/action.yml:5) expands inputs.v before it runs"},
		},
		{
			name:    "input name case",
			with:    "Title: ${{ github.event.issue.body }}",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: echo ${{ inputs.title }}\n"},
			want:    []string{"github.event.issue.body (attacker-controlled) is passed to the local action ./act"},
		},
		{
			name:    "whole inputs context",
			with:    "v: ${{ github.event.comment.body }}",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: echo '${{ toJSON(inputs) }}'\n"},
			want:    []string{"expands the whole inputs context"},
		},
		{
			name:    "tainted input through env is clean",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      env:\n        V: ${{ inputs.v }}\n      run: echo \"$V\"\n"},
		},
		{
			name:    "clean input expanded is clean",
			with:    "v: ${{ github.sha }}",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: echo ${{ inputs.v }}\n"},
		},
		{
			name:    "the event expanded in the action",
			with:    "v: x",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: echo ${{ github.event.issue.title }}\n"},
			want:    []string{"9:15: github.event.issue.title (attacker-controlled) is expanded into the run: script of the local action ./act (act/action.yml:5)"},
		},
		{
			name:    "code input of github-script",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": composite + "    - uses: actions/github-script@v7\n      with:\n        script: console.log('${{ inputs.v }}')\n"},
			want:    []string{"whose script input of actions/github-script (act/action.yml:6) expands inputs.v"},
		},
		{
			name: "a local action calling another",
			with: "v: ${{ github.event.issue.title }}",
			actions: map[string]string{
				"./act":   composite + "    - uses: ./inner\n      with:\n        w: pre-${{ inputs.v }}\n",
				"./inner": composite + "    - shell: bash\n      run: echo ${{ inputs.w }}\n",
			},
			want: []string{"github.event.issue.title (attacker-controlled) is passed to the local action ./inner, whose run: script (inner/action.yml:5) expands inputs.w"},
		},
		{
			name:    "a loop ends",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": composite + "    - uses: ./act\n      with:\n        v: ${{ inputs.v }}\n"},
		},
		{
			name:    "a JavaScript action takes inputs as data",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: node20\n  main: index.js\n"},
		},
		{
			name:    "a Docker action whose shell entrypoint runs an input",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: /bin/sh\n  args:\n    - -o\n    - pipefail\n    - -ec\n    - echo ${{ inputs.v }}\n    - ${{ inputs.v }}\n"},
			want:    []string{"github.event.issue.title (attacker-controlled) is passed to the local action ./act, whose entrypoint's inline sh code (act/action.yml:9) expands inputs.v"},
		},
		{
			name:    "busybox sh -c",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: Docker\n  image: docker://busybox\n  entrypoint: busybox\n  args: [sh, -c, 'echo ${{ inputs.v }}']\n"},
			want:    []string{"whose entrypoint's inline busybox code (act/action.yml:5) expands inputs.v"},
		},
		{
			name:    "a Docker action passing an input as a positional argument",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: bash\n  args: [-c, 'echo \"$1\"', sh, '${{ inputs.v }}']\n"},
		},
		{
			name:    "a Docker action running python -c",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: /usr/bin/python3.12\n  args: [-Bc, 'print(\"${{ inputs.v }}\")']\n"},
			want:    []string{"whose entrypoint's inline python code (act/action.yml:5) expands inputs.v"},
		},
		{
			name:    "a Docker action running node --eval",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: node\n  args: [--eval, 'console.log(`${{ inputs.v }}`)']\n"},
			want:    []string{"whose entrypoint's inline node code (act/action.yml:5) expands inputs.v"},
		},
		{
			name:    "perl adds up its -e flags",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: perl\n  args: [-e, 'print 1', -le, 'print \"${{ inputs.v }}\"']\n"},
			want:    []string{"whose entrypoint's inline perl code (act/action.yml:5) expands inputs.v"},
		},
		{
			name:    "pwsh's word parameters are not a cluster",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: pwsh\n  args: [-NonInteractive, -File, run.ps1, '${{ inputs.v }}']\n"},
		},
		{
			name:    "pwsh -Command",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: pwsh\n  args: [-NonInteractive, -Command, 'Write-Host ${{ inputs.v }}']\n"},
			want:    []string{"whose entrypoint's inline pwsh code (act/action.yml:5) expands inputs.v"},
		},
		{
			name:    "a Docker action whose entrypoint is not an interpreter",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: /usr/bin/jq\n  args: [-c, '${{ inputs.v }}']\n"},
		},
		{
			name:    "a Docker action with the image's entrypoint",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  args: [-c, '${{ inputs.v }}']\n"},
		},
		{
			name:    "a Docker action running a script file",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": "runs:\n  using: docker\n  image: Dockerfile\n  entrypoint: sh\n  args: [/run.sh, '${{ inputs.v }}']\n"},
		},
		{
			name: "no such action",
			with: "v: ${{ github.event.issue.title }}",
		},
		{
			name:    "an escape assembles an expression",
			with:    "v: ${{ github.event.issue.title }}",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: \"echo \\u0024{{ inputs.v }}\"\n"},
			want:    []string{"9:15: the local action ./act is not analysed: act/action.yml holds a YAML escape"},
		},
		{
			name:    "not YAML",
			with:    "v: x",
			actions: map[string]string{"./act": "runs: [\n"},
			want:    []string{"the local action ./act is not analysed: act/action.yml is not valid YAML"},
		},
		{
			name:    "an expression that does not parse",
			with:    "v: x",
			actions: map[string]string{"./act": composite + "    - shell: bash\n      run: echo ${{ inputs. }}\n"},
			want:    []string{"the local action ./act is not analysed: act/action.yml:5: expression does not parse"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := "on: issue_comment\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - env:\n          X: y\n        uses: ./act\n        with:\n          " + tc.with + "\n"
			read := func(ref string) (string, []byte, error) {
				src, ok := tc.actions[ref]
				if !ok {
					return "", nil, fmt.Errorf("%s: %w", ref, fs.ErrNotExist)
				}
				return strings.TrimPrefix(ref, "./") + "/action.yml", []byte(src), nil
			}
			fs := Lint("wf.yml", []byte(wf), Options{Rules: []string{"template-injection"}, LocalAction: read})
			var got []string
			for _, f := range fs {
				got = append(got, fmt.Sprintf("%d:%d: %s [%s]", f.Line, f.Column, f.Message, f.Rule))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings:\n%s\nwant %d matching %q", strings.Join(got, "\n"), len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("finding %d = %s\nwant it to hold %q", i, got[i], w)
				}
			}
		})
	}
}
