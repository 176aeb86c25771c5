package cli

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
)

const postureYAML = `runner: {kind: command, command: ["true"]}
test: {command: ["true"], path_glob: "tests/**"}
suite: {command: ["true"]}
paths: {fixable: ["src/**"]}
`

// The posture check names every pull_request workflow that reads a
// secret when fixrail pushes to the repository itself, and is quiet for
// a fork push, for pull_request_target, and for GITHUB_TOKEN alone.
func TestPRSecretsCheck(t *testing.T) {
	wfs := map[string]string{
		".github/workflows/ci.yml":      "on: [push, pull_request]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n        env:\n          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n          GH: ${{ secrets.GITHUB_TOKEN }}\n",
		".github/workflows/deploy.yaml": "on:\n  pull_request:\n    branches: [main]\njobs:\n  d:\n    uses: ./.github/workflows/reusable.yml\n    secrets: inherit\n",
		".github/workflows/target.yml":  "on: pull_request_target\njobs:\n  l:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ secrets.LABELLER }}\n",
		".github/workflows/token.yml":   "on: pull_request\njobs:\n  l:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ secrets['GITHUB_TOKEN'] }}\n",
		".github/workflows/push.yml":    "on: push\njobs:\n  p:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ secrets.DEPLOY_KEY }}\n",
	}
	for _, tc := range []struct {
		name, yaml string
		files      map[string]string
		status     string
		want, not  []string
	}{
		{"base push with secrets", postureYAML, wfs, "warn",
			[]string{".github/workflows/ci.yml runs on pull_request with secrets NPM_TOKEN", ".github/workflows/deploy.yaml runs on pull_request with secrets inherit", "forge.push_to"},
			[]string{"LABELLER", "DEPLOY_KEY", "GITHUB_TOKEN", "token.yml"}},
		{"fork push", postureYAML + "forge: {push_to: bot/fork}\n", wfs, "ok", []string{"bot/fork"}, nil},
		{"no workflows", postureYAML, nil, "ok", []string{"no workflow"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"fixrail.yaml": tc.yaml, "src/a.py": "x = 1\n"}
			for k, v := range tc.files {
				files[k] = v
			}
			dir := gittest.NewRepo(t, files)
			setup, err := pipeline.Prepare(t.Context(), dir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer setup.Close()
			c := prSecretsCheck(t.Context(), setup)
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s: %s", c.Status, tc.status, c.Detail)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("detail lacks %q: %s", w, c.Detail)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(c.Detail, n) {
					t.Errorf("detail names %q: %s", n, c.Detail)
				}
			}
		})
	}
}
