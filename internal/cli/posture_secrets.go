package cli

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fixrail/fixrail/internal/pipeline"
)

// prSecretsCheck is doctor's and scan's posture check on where fixrail's
// branches go: pushed to the base repository itself (no forge.push_to),
// a pull request's workflows run the unreviewed fix as a same-repository
// PR's — with the repository's secrets and a token that may write. It
// reads the base branch's .github/workflows and reports every workflow
// that runs on pull_request and names a secret (or passes them all on
// with secrets: inherit). The agent's code then reaches those secrets in
// CI before anyone has read it; a fork push (forge.push_to) runs it as a
// fork's PR, without them.
func prSecretsCheck(ctx context.Context, setup *pipeline.Setup) check {
	if setup.Config.Forge.PushTo != "" {
		return check{"ci-secrets", "ok", "fixrail pushes to the fork " + setup.Config.Forge.PushTo + " (forge.push_to): its PRs' workflows run as a fork's, without the repository's secrets"}
	}
	hits, err := prSecretWorkflows(ctx, setup)
	if err != nil {
		return check{"ci-secrets", "warn", "the base's workflows could not be read: " + err.Error()}
	}
	if len(hits) == 0 {
		return check{"ci-secrets", "ok", "no workflow on " + setup.Base + " runs on pull_request with a secret"}
	}
	return check{"ci-secrets", "warn", "fixrail pushes its branches to this repository (no forge.push_to), and " + strings.Join(hits, "; ") +
		": the PR's CI runs an unreviewed fix with those secrets; push to a fork (forge.push_to: owner/fork) so it runs as a fork's PR does, without them"}
}

// secretRef is a secret named in a workflow: ${{ secrets.NAME }},
// secrets['NAME'], or secrets: inherit for a called workflow.
var secretRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`secrets\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([^'"]+)['"]\s*\])|secrets\s*:\s*inherit`)
})

// prSecretWorkflows lists, one phrase each, the base's workflows that
// run on pull_request and name a secret other than GITHUB_TOKEN.
func prSecretWorkflows(ctx context.Context, setup *pipeline.Setup) ([]string, error) {
	files, err := setup.Repo.Tracked(ctx, ".github/workflows")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if ext := path.Ext(f); ext != ".yml" && ext != ".yaml" {
			continue
		}
		data, err := setup.Repo.ShowFile(ctx, setup.BaseSHA, f)
		if err != nil {
			continue // tracked in the index, not on the base
		}
		if !onPullRequest(data) {
			continue
		}
		var names []string
		for _, m := range secretRef().FindAllStringSubmatch(string(data), -1) {
			name := m[1] + m[2]
			if m[1] == "" && m[2] == "" {
				name = "inherit (every secret)"
			}
			if name != "GITHUB_TOKEN" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			out = append(out, fmt.Sprintf("%s runs on pull_request with secrets %s", f, strings.Join(names, ", ")))
		}
	}
	return out, nil
}

// onPullRequest reports whether a workflow's on: names pull_request (a
// string, a list or a map key). pull_request_target is another event: it
// runs the base's workflow, not the PR's.
func onPullRequest(data []byte) bool {
	var wf map[string]any
	if yaml.Unmarshal(data, &wf) != nil {
		return false
	}
	// YAML 1.1 readers take a bare on as true; yaml.v3 keeps "on".
	on, ok := wf["on"]
	if !ok {
		on = wf["true"]
	}
	switch v := on.(type) {
	case string:
		return v == "pull_request"
	case []any:
		return slices.Contains(v, any("pull_request"))
	case map[string]any:
		_, ok := v["pull_request"]
		return ok
	}
	return false
}
