package cli

import (
	"context"
	"os"
	"time"

	ghforge "github.com/fixrail/fixrail/internal/forge/github"
)

// githubRepoArg reports whether doctor's --repo names a GitHub repository
// (owner/name) rather than a directory: it parses as owner/name and no
// such directory exists (write ./owner/name for a directory).
func githubRepoArg(v string) (owner, name string, ok bool) {
	if _, err := os.Stat(v); err == nil {
		return "", "", false
	}
	owner, name, err := ghforge.ParseRepo(v)
	return owner, name, err == nil
}

// githubChecks is doctor's GitHub half: the token (its variable's name,
// never its value), the repository, one read probe per permission a run
// needs, the default branch's protection, whether drafts are possible and
// whether Actions may open PRs. It only reads.
func githubChecks(ctx context.Context, owner, name string, lookup func(string) (string, bool)) []check {
	var out []check
	add := func(n, s, d string) { out = append(out, check{n, s, d}) }
	tok, from, err := ghforge.TokenFromEnv(lookup)
	if err != nil {
		add("github-token", "fail", err.Error())
		return out
	}
	add("github-token", "ok", "from "+from+" (held by fixrail only; never on argv, never given to the agent, tests or builds)")
	f, err := ghforge.New(ghforge.Config{Owner: owner, Repo: name, Token: tok, APIURL: ghforge.APIURLFromEnv(lookup), RequestTimeout: 20 * time.Second, Retries: 1})
	if err != nil {
		add("github-repo", "fail", err.Error())
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	d, err := f.Diagnose(ctx)
	if err != nil && d.DefaultBranch == "" {
		add("github-repo", "fail", err.Error())
		return out
	}
	for _, s := range d.Summary(from == "GITHUB_TOKEN") {
		add(s[0], s[1], s[2])
	}
	if err != nil {
		add("github-rate-limit", "fail", err.Error())
	}
	return out
}
