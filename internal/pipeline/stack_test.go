package pipeline_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// TestStackOn: a run may start from a commit that descends from the base
// branch's tip, named by its full id; a commit off the base's history, a
// name, a short id or a missing object is a setup error, and the base is
// left as it was.
func TestStackOn(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": reasonsYAML, "a.txt": "1\n"})
	base := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gittest.Git(t, dir, "checkout", "-q", "-b", "work")
	gittest.WriteFiles(t, dir, map[string]string{"a.txt": "2\n"})
	gittest.Git(t, dir, "commit", "-qam", "on top")
	onTop := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gittest.Git(t, dir, "checkout", "-q", "--orphan", "other")
	gittest.Git(t, dir, "commit", "-qm", "unrelated")
	other := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gittest.Git(t, dir, "checkout", "-q", "work")
	baseBranch := "main"
	if out, err := gittest.Run(t, dir, "rev-parse", "--verify", "-q", "refs/heads/main"); err != nil || strings.TrimSpace(out) != base {
		baseBranch = "master"
	}
	for _, tc := range []struct {
		name, sha string
		ok        bool
	}{
		{"descendant", onTop, true},
		{"the base itself", base, true},
		{"not on the base's history", other, false},
		{"a name", "work", false},
		{"a short id", onTop[:12], false},
		{"no such object", strings.Repeat("e", 40), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := pipeline.Prepare(t.Context(), dir, baseBranch)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.StackOn(t.Context(), tc.sha)
			switch {
			case tc.ok && (err != nil || s.BaseSHA != tc.sha):
				t.Fatalf("StackOn(%s) = %v, BaseSHA %s", tc.sha, err, s.BaseSHA)
			case !tc.ok && (!errors.Is(err, pipeline.ErrSetup) || s.BaseSHA != base):
				t.Fatalf("StackOn(%s) = %v, BaseSHA %s; want ErrSetup and the base kept", tc.sha, err, s.BaseSHA)
			}
			if s.Base != baseBranch {
				t.Fatalf("Base = %s, want the branch kept", s.Base)
			}
		})
	}
}
