package cli

import (
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

// gitserve BARE [readonly]: serve the bare repository BARE (its path ends
// in owner/name) over git's smart-HTTP backend to the fake GitHub's token
// only, as GitHub serves a private repository, and set $GITURL to its
// address. readonly: the token may fetch, but the push's receive-pack is
// refused 403, as GitHub refuses a token without contents: write.
func cmdGitServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "readonly") {
		ts.Fatalf("usage: gitserve BARE [readonly]")
	}
	tb := &scriptTB{}
	remote := gittest.ServeHTTP(tb, ts.MkAbs(args[0]), githubtest.Token, len(args) == 2)
	ts.Defer(func() {
		for _, c := range tb.cleanups {
			c()
		}
	})
	if len(tb.errs) > 0 {
		ts.Fatalf("gitserve: %s", strings.Join(tb.errs, "\n"))
	}
	ts.Setenv("GITURL", remote.URL)
}
