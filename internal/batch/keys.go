package batch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// pathKey is a repository path's key ("file:" or "manifest:") as S7
// compares it: cleaned as pathguard.CleanRel cleans it (relative, no
// "..", nothing that does not print as itself), so "db/./users.go",
// "db//users.go" and "db/users.go" are one key and their runs never
// overlap. A path into .git is no file a run may touch: refused.
func pathKey(kind, p string) (string, error) {
	c, err := pathguard.CleanRel(p)
	if err != nil {
		return "", err
	}
	for _, seg := range strings.Split(c, "/") {
		if strings.EqualFold(seg, ".git") {
			return "", fmt.Errorf("path %q is inside .git", p)
		}
	}
	return kind + ":" + c, nil
}

// vulnKeys are a cve finding's keys as its run will know them: its
// package always (a cve run edits whichever manifests declare the
// package, the hinted one or not, so two findings on one package share a
// key with or without a manifest hint), and the manifest hint as the run
// reads it (findings.VulnOf: cleaned, or only the base name of an
// absolute scanner path).
func vulnKeys(v *findings.Vuln) []string {
	keys := []string{packageKey(v.Ecosystem, v.Package)}
	if v.Manifest != "" {
		if k, err := pathKey("manifest", v.Manifest); err == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// dependabotKey is every Dependabot alert's key in a scan's listing, per
// repository (Chains keys by repository too). A listing's alert item
// names its alert by number only: its package is known to the run, which
// reads the alert from GitHub, and to the listing only inside its title,
// free text that whoever wrote the listing chose. A key made from the
// title would let a listing that lies keep two alerts on one package
// apart; this coarser key keeps every alert of a repository in sequence,
// which costs little: a repository's alerts mostly name the same few
// manifests, whose path locks would serialise their runs anyway.
const dependabotKey = "dependabot-alerts"

// listingLog is the SARIF log a scan's listing names, as the runs will
// read it: a relative name is taken from the listing's directory (scan
// --sarif records an absolute one), links are resolved, and the log must
// lie at or below that directory, outside any .git. A listing is input
// (an artefact another job uploaded, a file anyone could write), so it
// may not send a run to read /etc/passwd, a file a link planted beside
// it points at, or a repository's git directory. Two spellings of one
// log resolve to one path.
func listingLog(listing, log string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(listing))
	if err != nil {
		return "", err
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if strings.ContainsRune(log, 0) {
		return "", fmt.Errorf("the SARIF log %q is no path", log)
	}
	p := log
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	real, err := pathguard.ResolveExisting(p)
	if err != nil {
		return "", fmt.Errorf("the SARIF log %q: %v", log, err)
	}
	rel, err := filepath.Rel(realDir, real)
	if err != nil || real == realDir || !pathguard.Within(realDir, real) {
		return "", fmt.Errorf("the SARIF log %q is not beside the listing: it must lie in %s or below it", log, realDir)
	}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(seg, ".git") {
			return "", fmt.Errorf("the SARIF log %q is inside a .git directory", log)
		}
	}
	if fi, err := os.Stat(real); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the SARIF log %q is not a regular file", log)
	}
	return real, nil
}
