package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// goBuildCacheCheck is doctor's go-build-cache line: where the standard
// library's build cache for this machine's Go and build setting lives
// (root, sandbox.GoStdCacheRoot), whether it is built, and whether runs
// would use it (only sandboxed commands get it). env is the build
// environment the test commands get. ok is false when go is not on PATH:
// there is nothing to say.
func goBuildCacheCheck(ctx context.Context, root, sandboxMode string, usable bool, env []string) (c check, ok bool) {
	if _, err := exec.LookPath("go"); err != nil {
		return c, false
	}
	c.Name = "go-build-cache"
	gc, err := sandbox.LookupGoStdCache(ctx, root, env)
	if err != nil {
		return check{c.Name, "warn", err.Error() + " (each Go command would compile the standard library in its own cache)"}, true
	}
	where := filepath.Join(root, gc.Key)
	switch {
	case sandboxMode == "off" || !usable:
		c.Status, c.Detail = "ok", "not used: test and suite commands do not run sandboxed here, and only a sandboxed command can be given the shared cache without being able to write it; each compiles the standard library in its own cache"
	case gc.Dir == "":
		c.Status, c.Detail = "ok", "not built yet: the first run on a Go module builds it in "+where+" (`go build std` in the sandbox, minutes on a slow machine) and later runs reuse it"
	default:
		files, size := 0, int64(0)
		_ = filepath.WalkDir(gc.Dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					files, size = files+1, size+fi.Size()
				}
			}
			return nil
		})
		c.Status, c.Detail = "ok", fmt.Sprintf("%s (the standard library, %d files, %d MB): linked read-only into each sandboxed Go command's own GOCACHE; remove the directory to rebuild it", gc.Dir, files, size>>20)
	}
	return c, true
}
