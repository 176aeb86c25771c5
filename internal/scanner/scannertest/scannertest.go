// Package scannertest finds the pinned scanners the oracle tests run
// (scripts/install-scanners builds them). A test that needs one and
// cannot find it fails, naming the install command; it never skips
// unless FIXRAIL_SCANNER_TESTS=skip says so knowingly.
package scannertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// InstallHint is the command that builds the scanners.
const InstallHint = "scripts/install-scanners (from the repository root; builds gosec, gitleaks and tfsec from the Go module proxy and installs ESLint with its security plugin from npm, into a cache)"

// Find returns the path of the scanner called name: in $FIXRAIL_SCANNERS,
// in the default cache scripts/install-scanners fills, or on PATH.
func Find(name string) (string, error) {
	var dirs []string
	if d := os.Getenv("FIXRAIL_SCANNERS"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("FIXRAIL_SCANNER_CACHE"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "fixrail", "scanners", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("scanner %s not found (looked in %v and on PATH); build it with %s, or set FIXRAIL_SCANNERS", name, dirs, InstallHint)
}

// NodePrefix returns the Node.js prefix a scanner found at p is installed
// in (scripts/install-scanners links bin/eslint to PREFIX/bin/eslint, and
// PREFIX holds lib/node_modules), or "" for a scanner that is one binary.
func NodePrefix(p string) string {
	l, err := os.Readlink(p)
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(l) {
		l = filepath.Join(filepath.Dir(p), l)
	}
	if root, kind := sandbox.ToolchainRoot(filepath.Dir(l)); kind == "a Node.js prefix" {
		return root
	}
	return ""
}

// Skip reports whether missing scanners may skip their tests.
func Skip() bool { return os.Getenv("FIXRAIL_SCANNER_TESTS") == "skip" }

// Require returns the scanner's path or fails the test.
func Require(tb testing.TB, name string) string {
	tb.Helper()
	p, err := Find(name)
	if err != nil {
		if Skip() {
			tb.Skip(err.Error() + " (FIXRAIL_SCANNER_TESTS=skip)")
		}
		tb.Fatal(err)
	}
	return p
}
