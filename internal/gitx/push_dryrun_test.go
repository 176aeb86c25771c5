package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

// TestPushDryRun: the dry run asks the remote for its receive-pack
// advertisement through the push's credential path, and writes nothing:
// no ref on the remote, no pack sent. A credential that reaches the push
// and may write passes; a read-only one (403) and none at all (401) fail
// with git's own error, and neither poisons the Repo.
func TestPushDryRun(t *testing.T) {
	t.Setenv("no_proxy", "*")
	t.Setenv("NO_PROXY", "*")
	const token = "gitx-test-token-not-a-secret"
	ctx := context.Background()
	// The operator's helper answers with GITHUB_TOKEN from the push's
	// environment, as the reference workflow's does.
	t.Setenv("GITHUB_TOKEN", token)
	helper := "!f() { test \"$1\" = get && echo username=x-access-token && echo \"password=$GITHUB_TOKEN\"; }; f"

	for _, tc := range []struct {
		name     string
		readOnly bool
		helper   bool
		wantErr  string // "" for success
	}{
		{name: "writable", helper: true},
		{name: "read-only token", readOnly: true, helper: true, wantErr: "403"},
		{name: "no credential", wantErr: "could not read Username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			global := ""
			if tc.helper {
				global = "[credential]\n\thelper = \"" + strings.ReplaceAll(helper, `"`, `\"`) + "\"\n"
			}
			s := takeSnapshot(t, "", global)
			dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
			bare := filepath.Join(t.TempDir(), "o", "r")
			gittest.Git(t, "", "init", "--quiet", "--bare", "--initial-branch=main", bare)
			gittest.Git(t, dir, "push", "--quiet", bare, "main")
			remote := gittest.ServeHTTP(t, bare, token, tc.readOnly)
			gittest.Git(t, dir, "remote", "add", "origin", remote.URL)
			r, err := s.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Baseline(ctx); err != nil {
				t.Fatal(err)
			}
			sha := gittest.Git(t, dir, "rev-parse", "HEAD")
			err = r.PushDryRun(ctx, sha+":refs/heads/fixrail/x")
			var ge *Error
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("PushDryRun: %v\nserver log: %v", err, remote.Log())
			case tc.wantErr != "" && err == nil:
				t.Fatalf("PushDryRun succeeded, want %q\nserver log: %v", tc.wantErr, remote.Log())
			case tc.wantErr != "" && (!errors.As(err, &ge) || !strings.Contains(ge.Stderr, tc.wantErr)):
				t.Fatalf("PushDryRun: %v, want a git error saying %q", err, tc.wantErr)
			}
			if out, _ := gittest.Run(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/fixrail"); out != "" {
				t.Errorf("the dry run wrote %s", out)
			}
			log := remote.Log()
			if slices.ContainsFunc(log, func(l string) bool { return strings.Contains(l, "POST") }) {
				t.Errorf("the dry run sent a pack: %v", log)
			}
			want := "200 GET /o/r/info/refs?service=git-receive-pack"
			if tc.wantErr == "" && !slices.Contains(log, want) {
				t.Errorf("the advertisement was not asked for with the credential (%q): %v", want, log)
			}
			if perr := r.Poisoned(); perr != nil {
				t.Errorf("the dry run poisoned the Repo: %v", perr)
			}
		})
	}
}

// TestPushDryRunLocal: to a local bare remote the dry run succeeds and
// creates nothing; the refspec rules are Push's.
func TestPushDryRunLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	bare := gittest.NewBare(t)
	gittest.Git(t, dir, "remote", "add", "origin", bare)
	r := baselined(t, dir)
	sha := gittest.Git(t, dir, "rev-parse", "HEAD")
	if err := r.PushDryRun(ctx, sha+":refs/heads/fixrail/x"); err != nil {
		t.Fatal(err)
	}
	if out, _ := gittest.Run(t, bare, "show-ref"); out != "" {
		t.Errorf("the dry run wrote %s", out)
	}
	for _, spec := range []string{"+" + sha + ":refs/heads/fix", "HEAD:refs/heads/fix", sha + ":refs/tags/fix", ":refs/heads/fix"} {
		if err := r.PushDryRun(ctx, spec); err == nil {
			t.Errorf("PushDryRun(%q) was accepted", spec)
		}
	}
	// A remote that is not there fails.
	if err := os.RemoveAll(bare); err != nil {
		t.Fatal(err)
	}
	if err := r.PushDryRun(ctx, sha+":refs/heads/fixrail/x"); err == nil {
		t.Error("PushDryRun to a removed remote succeeded")
	}
}
