package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/fixrail/fixrail/examples"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// demoCVE lays out examples/cve-go under root — the repository from its
// archive, the file:// module proxy, the advisory cache, the alert —
// fills a module cache from the proxy (the offline go mod tidy reads it),
// and runs the alert through the pipeline with the cache as the only
// advisory source.
func demoCVE(ctx context.Context, stdio Stdio, root string, o *demoOpts) error {
	ar, err := copyExample(root, "cve-go")
	if err != nil {
		return err
	}
	repoDir := filepath.Join(root, "repo")
	if err := writeTxtar(ar, repoDir, nil); err != nil {
		return err
	}
	if _, err := gitx.Init(ctx, repoDir, "main", gitx.Identity{Name: "fixrail demo", Email: "demo@localhost"}, "cvedemo: initial import"); err != nil {
		return fmt.Errorf("demo repository: %w", err)
	}
	fmt.Fprintf(stdio.Stderr, "fixrail demo: repository %s (kept; remove it when done)\n", repoDir)

	// The module cache the sandbox mounts read-only: every published
	// release of fakelib the decision may pick, and the installed one (the
	// oracle asks go list -m which version the build uses), from the
	// file:// proxy.
	// Writable (-modcacherw) so the demo directory can be removed.
	modcache := filepath.Join(root, "gomodcache")
	fill := sandbox.Cmd{
		Args: []string{"go", "mod", "download", "example.com/fakelib@v1.0.0", "example.com/fakelib@v1.0.1", "example.com/fakelib@v1.0.2", "example.com/fakelib@v1.1.0"},
		Dir:  root,
		Env: append(sandbox.Environ(os.LookupEnv, "PATH", "HOME", "GOCACHE", "GOROOT"),
			"GOMODCACHE="+modcache, "GOPROXY=file://"+filepath.ToSlash(filepath.Join(root, "goproxy")),
			"GONOSUMDB=example.com", "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GOWORK=off"),
		Timeout: 2 * time.Minute,
	}
	res, err := sandbox.Run(ctx, fill)
	if err != nil {
		return fmt.Errorf("fill the demo's module cache: %w", err)
	}
	if !res.Success() {
		return fmt.Errorf("fill the demo's module cache: go mod download: %s", res.Output())
	}
	// The run finds its toolchain caches from the environment.
	if err := os.Setenv("GOMODCACHE", modcache); err != nil {
		return err
	}
	vs, err := findings.ReadVulnFile(filepath.Join(root, "finding.json"))
	if err != nil {
		return err
	}
	client := vulndata.NewClient(vulndata.NewCache(filepath.Join(root, "cache")))
	client.Offline = true
	return demoRun(ctx, stdio, repoDir, vs[0].Finding(), client, o)
}

// writeTxtar lays ar's files out under dir, each through fill (nil: as
// they are), refusing a name that is not a clean relative path.
func writeTxtar(ar *txtar.Archive, dir string, fill func(rel string, data []byte) []byte) error {
	for _, f := range ar.Files {
		rel, err := pathguard.CleanRel(f.Name)
		if err != nil {
			return fmt.Errorf("repo.txtar: %w", err)
		}
		data := f.Data
		if fill != nil {
			data = fill(rel, data)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyExample copies the bundled example name under root and reads its
// repository archive, root/repo.txtar.
func copyExample(root, name string) (*txtar.Archive, error) {
	sub, err := fs.Sub(examples.FS, name)
	if err != nil {
		return nil, err
	}
	if err := os.CopyFS(root, sub); err != nil {
		return nil, fmt.Errorf("copy example: %w", err)
	}
	return txtar.ParseFile(filepath.Join(root, "repo.txtar"))
}
