package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// FuzzLint: no input makes the linter panic, hang or report a finding
// without a rule or a position.
func FuzzLint(f *testing.F) {
	f.Add(goodAgent)
	f.Add(goodCLI)
	f.Add(string(ReferenceWorkflow))
	f.Add(string(AlertsWorkflow))
	if files, _ := filepath.Glob("testdata/corpus/*.yml"); len(files) > 0 {
		for _, p := range files[:min(len(files), 20)] {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		done := make(chan []Finding, 1)
		go func() { done <- Lint("f.yml", []byte(src), Options{}) }()
		var fs []Finding
		select {
		case fs = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Lint took over 5s on %q", src)
		}
		for _, x := range fs {
			if x.Rule == "" || x.Line < 1 || x.Column < 1 || x.Message == "" {
				t.Fatalf("malformed finding %+v", x)
			}
		}
	})
}

// FuzzScriptMergePrefilter: whatever scriptMerge matches, mayMerge lets
// through, so skipping the expression when mayMerge is false misses nothing.
func FuzzScriptMergePrefilter(f *testing.F) {
	for _, s := range []string{"github.rest.pulls.merge({", "x.merge( {", "mergePullRequest", "enablePullRequestAutoMerge",
		"event: 'APPROVE'", "event:\t\"APPROVE\"", "repos.merge", "pulls.mergeable", "no match here"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if scriptMerge().MatchString(s) && !mayMerge(s) {
			t.Fatalf("scriptMerge matches %q but mayMerge skips it", s)
		}
	})
}

// payloadReadRE is what readsPayload computes, as the expression it was.
var payloadReadRE = regexp.MustCompile(`context\.payload|\.(title|body|head_ref|head_branch)\b|head\.ref`)

// FuzzReadsPayload: the byte scan and the expression agree on every input.
func FuzzReadsPayload(f *testing.F) {
	for _, s := range []string{"context.payload.issue.body", "issue.title", "x.title_y", "a.body", "a.bodyé", "a.body.x",
		"pr.head.ref", "w.head_branch", "w.head_branches", "..title", ".", "", "title", "x.head_refs", "x.head_ref-1",
		"context .payload", "const t = context.issue.title;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := readsPayload(s), payloadReadRE.MatchString(s); got != want {
			t.Fatalf("readsPayload(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
